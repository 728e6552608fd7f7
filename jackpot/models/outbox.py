"""The transactional outbox and the webhook deliveries it leads to.

An `OutboxMessage` is work that follows a money movement (a big win to announce), written by the
money's own transaction (`jackpot.notifications.outbox.enqueue`: one INSERT) and relayed to Celery
after the commit. Its life, written by `jackpot.notifications.outbox` only:

    pending -> done
            -> refused

- `pending`: committed; the relay task was sent after the commit (or not: Redis was down). The
  sweeper sends it again once `next_attempt_at` is past and no relay holds it (`claimed_until`).
  A relay claims it by one UPDATE (a fresh `claim` token, `attempts` + 1, a lease until
  `claimed_until`); a relay killed mid-task leaves the lease to run out.
- `done`: its work is finished (every delivery acknowledged); never relayed again.
- `refused`: no authentic journal event vouches for it as its row stands (`last_error` says
  why, `done_at` when; `jackpot.audit.outbox_journal`): nothing was signed; never relayed again.

`key` is unique: the same work enqueued twice (a replayed round, a second sweep) is one message.

A `WebhookDelivery` is one message sent to one URL (unique per message and URL), with its own
delivery id (`delivery_id`, the receiver's deduplication key), attempts, backoff and outcome:

    pending -> delivered

- `pending`: not yet acknowledged by a 2xx: `attempts` so far, `last_status` (the HTTP status,
  null when no answer came) and `last_error`, and `next_attempt_at` (exponential backoff).
- `delivered`: a 2xx was recorded (`delivered_at`); the claim's UPDATE never takes it again, so
  it is never sent again.
"""

import uuid

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now


class OutboxStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    REFUSED = "refused", "Refused"


class OutboxMessage(models.Model):
    key = models.CharField(max_length=200, unique=True, help_text="The work's own name: once.")
    topic = models.CharField(max_length=64)
    payload = models.JSONField()
    status = models.CharField(
        max_length=8, choices=OutboxStatus.choices, default=OutboxStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0, help_text="Relays that claimed it.")
    claim = models.UUIDField(null=True, blank=True, help_text="The claim of the relay running.")
    last_error = models.TextField(blank=True, default="")
    # Every time is the database's clock (Now()), so relays and sweepers on other hosts compare
    # only with that clock.
    created_at = models.DateTimeField(db_default=Now())
    next_attempt_at = models.DateTimeField(help_text="When the sweeper may send it again.")
    claimed_until = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # The request (or task) that wrote it (core.request_id): its relay's log lines name it.
    request_id = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status=OutboxStatus.PENDING) | Q(done_at__isnull=False),
                name="outbox_done_has_time",
            ),
        ]
        # The sweeper's question: pending and due. Partial: done messages are most of them.
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="outbox_pending_due",
                condition=Q(status=OutboxStatus.PENDING),
            )
        ]

    def __str__(self) -> str:
        return f"outbox {self.pk} {self.topic} ({self.status})"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"


class WebhookDelivery(models.Model):
    message = models.ForeignKey(OutboxMessage, on_delete=models.PROTECT, related_name="deliveries")
    url = models.CharField(max_length=500)
    delivery_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    status = models.CharField(
        max_length=9, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0, help_text="Requests sent (claims).")
    claim = models.UUIDField(null=True, blank=True, help_text="The claim of the send running.")
    last_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The last answer's HTTP status; null: no answer."
    )
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(db_default=Now())
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(db_default=Now())
    claimed_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message", "url"], name="delivery_once_per_url"),
            models.CheckConstraint(
                condition=Q(status=DeliveryStatus.PENDING)
                | (Q(delivered_at__isnull=False) & Q(last_status__gte=200, last_status__lt=300)),
                name="delivery_delivered_has_2xx",
            ),
        ]
        indexes = [models.Index(fields=["status", "-id"], name="delivery_status_newest")]

    def __str__(self) -> str:
        return f"delivery {self.delivery_id} to {self.url} ({self.status})"
