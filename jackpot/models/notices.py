"""Notices to the authorities (compliance 57) and the register of orphans (compliance 58).

A `Notice` is what the rules say must be told: a suspension or an involuntary stop to the police
des jeux without delay, a voluntary stop to the minister 15 days before it takes effect. Its row
is made with the event that calls for it; who sent it, when and how is recorded by a person
(`sent_event`), and its overdue significant event once (`overdue_event`).

An `OrphanEntry` is one stopped pool's line in the register of orphans: what its players
contributed and did not win, owed until recovered into another pool or final after its season.

Invariants: the rows are a convenience the service's role can write; what counts is the
authentic journal event each row points to (`*_event`), which `jackpot.audit.notices` compares
with the row. A notice is sent once, and overdue once; an entry is recovered or final, once.
"""

from django.db import models
from django.db.models import Q


class Addressee(models.TextChoices):
    POLICE = "police", "Police des jeux (service central des courses et jeux)"
    MINISTER = "minister", "Minister of the interior"


class NoticeCause(models.TextChoices):
    SUSPENSION = "suspension", "A progressive suspended (a technical fault)"
    INVOLUNTARY_STOP = "involuntary_stop", "A progressive stopped by a fault"
    VOLUNTARY_STOP = "voluntary_stop", "A progressive stopped by the club's decision"


class Notice(models.Model):
    # Indexed by (pool, created_at), which leads with it.
    pool = models.ForeignKey(
        "jackpot.Pool", on_delete=models.PROTECT, related_name="notices", db_index=False
    )
    change = models.ForeignKey(
        "jackpot.ParameterChange",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The stop the notice announces (none for a suspension).",
    )
    cause = models.CharField(max_length=20, choices=NoticeCause.choices)
    addressee = models.CharField(max_length=10, choices=Addressee.choices)
    text = models.TextField()
    created_at = models.DateTimeField()
    deadline = models.DateTimeField(help_text="Sent at the latest by then.")
    made_event = models.ForeignKey(
        "jackpot.AuditEvent", on_delete=models.PROTECT, related_name="+", null=True
    )
    sent_at = models.DateTimeField(null=True, blank=True)
    sent_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    channel = models.CharField(max_length=20, blank=True, default="")
    reference = models.CharField(max_length=100, blank=True, default="")
    sent_event = models.ForeignKey(
        "jackpot.AuditEvent", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    overdue_event = models.ForeignKey(
        "jackpot.AuditEvent", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(addressee__in=["police", "minister"]), name="notice_addressee_known"
            ),
            models.CheckConstraint(
                condition=Q(sent_at__isnull=True) | Q(sent_event__isnull=False),
                name="notice_sent_recorded",
            ),
        ]
        indexes = [
            # The overdue sweep reads only the notices still unsent and not yet reported: its
            # cost is theirs, never the notices' history.
            models.Index(
                fields=["deadline"],
                condition=Q(sent_event__isnull=True, overdue_event__isnull=True),
                name="notice_unsent_deadline",
            ),
            models.Index(fields=["pool", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"notice #{self.pk} to {self.addressee} ({self.cause}, pool {self.pool_id})"


class OrphanEntry(models.Model):
    pool = models.OneToOneField(
        "jackpot.Pool", on_delete=models.PROTECT, related_name="orphans", primary_key=True
    )
    change = models.ForeignKey(
        "jackpot.ParameterChange", on_delete=models.PROTECT, related_name="+"
    )
    stopped_at = models.DateTimeField()
    orphans_cents = models.BigIntegerField(help_text="Entered in the register, cents.")
    deadline = models.DateTimeField(help_text="Recoverable before this instant, final after.")
    stopped_event = models.ForeignKey(
        "jackpot.AuditEvent", on_delete=models.PROTECT, related_name="+"
    )
    recovered_at = models.DateTimeField(null=True, blank=True)
    recovered_into = models.ForeignKey(
        "jackpot.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    recovery = models.ForeignKey(
        "jackpot.ParameterChange", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    final_at = models.DateTimeField(null=True, blank=True)
    closed_event = models.ForeignKey(
        "jackpot.AuditEvent", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(orphans_cents__gte=0), name="orphans_not_negative"),
            models.CheckConstraint(
                condition=Q(recovered_at__isnull=True) | Q(final_at__isnull=True),
                name="orphans_recovered_or_final",
            ),
        ]
        indexes = [
            models.Index(
                fields=["deadline"],
                condition=Q(recovered_at__isnull=True, final_at__isnull=True),
                name="orphans_open_deadline",
            ),
        ]

    def __str__(self) -> str:
        return f"orphans of pool {self.pool_id}: {self.orphans_cents} cents"
