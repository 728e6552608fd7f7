"""A two-person change: one admin proposes, a different one approves (compliance 16, 17, 36, 40,
47). Each `kind` is something one admin must not do alone: `pool.parameters`, `pool.create`,
`pool.stop`, `table.move`, `staff.create`, `staff.access`, `staff.second_factor_reset`,
`terminal.issue`; and `pool.correction`, a money decision of two people who are not admins
(compliance 55). The row keeps the proposal and its outcome; `jackpot.approvals.changes` writes
it, each kind's module applies it, and every step is also an audit event.

Invariants, each a database CHECK beside the service's refusal:
- an applied change was decided by someone other than its proposer and its subject (403
  `four_eyes`, CHECK `change_four_eyes`);
- a proposal is decided once, under its row lock.

Each kind in full: docs/operations.md, "The modules, in detail".
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class ChangeStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposed, awaiting another admin's approval"
    APPLIED = "applied", "Approved and applied"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn by its proposer"


class ChangeKind(models.TextChoices):
    POOL_PARAMETERS = "pool.parameters", "A pool's parameters"
    POOL_CREATE = "pool.create", "A new pool"
    POOL_STOP = "pool.stop", "A pool stopped for good, its liability moved (its disposition)"
    TABLE_MOVE = "table.move", "A table linked to a pool, moved or unlinked"
    STAFF_CREATE = "staff.create", "A new staff account"
    STAFF_ACCESS = "staff.access", "A staff account's roles, flags or reactivation"
    STAFF_SECOND_FACTOR_RESET = "staff.second_factor_reset", "A staff member's second factor reset"
    TERMINAL_ISSUE = "terminal.issue", "A terminal token issued for a table"
    POOL_CORRECTION = (
        "pool.correction",
        "A documented correction of a pool's meter, reserve or an award's amount",
    )
    POOL_REPLACE = (
        "pool.replace",
        "A pool replaced by a new one with new terms: its increment and its tables moved",
    )
    POOL_ORPHANS_RECOVER = (
        "pool.orphans_recover",
        "A stopped pool's orphans recovered into an active pool's meter",
    )


#: The kinds whose subject is a staff account.
STAFF_KINDS = (
    ChangeKind.STAFF_CREATE,
    ChangeKind.STAFF_ACCESS,
    ChangeKind.STAFF_SECOND_FACTOR_RESET,
)


class ParameterChange(models.Model):
    kind = models.CharField(
        max_length=32, choices=ChangeKind.choices, default=ChangeKind.POOL_PARAMETERS
    )
    pool = models.ForeignKey(
        "jackpot.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="changes"
    )
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The staff account a staff change is about.",
    )
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
            # who neither proposed it nor is its subject.
            models.CheckConstraint(
                condition=~Q(status="applied")
                | (
                    Q(decided_by__isnull=False)
                    & ~Q(decided_by=F("proposed_by"))
                    & (Q(subject__isnull=True) | ~Q(decided_by=F("subject")))
                ),
                name="change_four_eyes",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=[kind.value for kind in ChangeKind]),
                name="change_kind_known",
            ),
            # A pool's parameters name their pool; a staff change other than a creation names its
            # subject from the start, a creation once applied.
            models.CheckConstraint(
                condition=~Q(
                    kind__in=[
                        ChangeKind.POOL_PARAMETERS,
                        ChangeKind.POOL_STOP,
                        ChangeKind.POOL_CORRECTION,
                        ChangeKind.POOL_REPLACE,
                        ChangeKind.POOL_ORPHANS_RECOVER,
                    ]
                )
                | Q(pool__isnull=False),
                name="change_parameters_pool",
            ),
            models.CheckConstraint(
                condition=Q(subject__isnull=False)
                | (
                    ~Q(kind__in=[ChangeKind.STAFF_ACCESS, ChangeKind.STAFF_SECOND_FACTOR_RESET])
                    & ~Q(kind=ChangeKind.STAFF_CREATE, status="applied")
                ),
                name="change_staff_subject",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["proposed", "applied", "rejected", "withdrawn"]),
                name="change_status_known",
            ),
        ]
        indexes = [
            models.Index(fields=["pool", "status"]),
            models.Index(fields=["kind", "status"]),
        ]

    def __str__(self) -> str:
        return f"change #{self.pk}, {self.kind} ({self.status})"
