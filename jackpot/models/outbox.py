"""The transactional outbox and the webhook deliveries it leads to, written by
`jackpot.notifications.outbox` and `jackpot.notifications.webhooks` only.

- `OutboxMessage`: work that follows a money movement, written by the money's own transaction;
  pending -> done, or -> refused (no authentic journal event vouches for it); `key` is unique,
  so the same work enqueued twice is one message; a relay claims it by one UPDATE with a lease.
- `WebhookDelivery`: one message sent to one URL (unique per message and URL), its delivery id
  the receiver's deduplication key; pending -> delivered, never sent again once delivered.

Each state in full: docs/operations.md, "The modules, in detail".
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
