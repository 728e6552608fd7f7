"""A proposed change of a pool's parameters: one admin proposes, a different one approves.

Compliance 16, 17 and 40: what a pool pays and takes (stake, shares, seed, paytable), its name and
its verification threshold change only by a `ParameterChange` that another admin approves while
none of the pool's tables is open for play. The row keeps the proposal (the new values, the pool's
values when it was proposed, who, when, why) and its outcome (applied, rejected or withdrawn; who
decided, when, with what note). `jackpot.changes` is its only writer; every step is also an audit
event on the pool's chain.

Invariants: an applied change was decided by someone other than its proposer (a database CHECK,
beside the service's 403 `four_eyes`); a proposal is decided once (its status leaves `proposed`
only once, under the pool row lock).
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class ChangeStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposed, awaiting another admin's approval"
    APPLIED = "applied", "Approved and applied"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn by its proposer"


class ParameterChange(models.Model):
    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="changes")
    changes = models.JSONField(help_text="The fields to change and their new values.")
    before = models.JSONField(help_text="The same fields' values when the change was proposed.")
    reason = models.CharField(max_length=500)
    status = models.CharField(
        max_length=10, choices=ChangeStatus.choices, default=ChangeStatus.PROPOSED
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            # Four eyes, enforced by the database too: an applied change was approved by someone
            # who did not propose it.
            models.CheckConstraint(
                condition=~Q(status="applied")
                | (Q(decided_by__isnull=False) & ~Q(decided_by=F("proposed_by"))),
                name="change_four_eyes",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["proposed", "applied", "rejected", "withdrawn"]),
                name="change_status_known",
            ),
        ]
        indexes = [models.Index(fields=["pool", "status"])]

    def __str__(self) -> str:
        return f"change #{self.pk} of pool {self.pool_id} ({self.status})"
