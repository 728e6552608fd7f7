"""Checkpoints of the journal's verification, and the verification runs that made them.

A `Checkpoint` is what a verification that passed knew at the end: per chain the position and
head hash it verified up to, and every figure the checks carry forward from there (each pool's
account balances and transfer totals by code, the award and pool projections still open, the
stakes of the rounds; `jackpot.audit.checkpoints` says exactly what). It is written once, never
changed (the database refuses UPDATE and DELETE, as for the journal) and it is keyed: the
`journal.checkpoint` event that announces it on the `checkpoints` chain carries its SHA-256, and
that event's link is an HMAC under the journal's key. A row written or edited by someone without
the key matches no event; the event's chain is anchored outside the database like every chain.

A `Verification` is one run of the journal's check, and a job for a full one asked for over the
API: `queued -> running -> done` (its verdict in `ok` and `problems`) or `failed` (the check
itself broke, `error`). Routine runs (the start-up gate, the scheduled reconciliation) are
recorded `done` when they finish; a full run is queued first and run by a worker, with its
progress (`events_checked` of about `events_total`).
"""

from django.conf import settings
from django.db import models


class Checkpoint(models.Model):
    created_at = models.DateTimeField()
    full = models.BooleanField(help_text="Made by a verification from the first event.")
    state = models.JSONField(help_text="What the checks carry forward (jackpot.audit.checkpoints).")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the canonical state.")

    def __str__(self) -> str:
        return f"checkpoint {self.pk} ({'full' if self.full else 'routine'}) at {self.created_at}"


class VerificationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed (the check itself broke)"


class VerificationTrigger(models.TextChoices):
    STARTUP = "startup", "The start-up gate (manage.py selfcheck)"
    RECONCILIATION = "reconciliation", "A scheduled reconciliation"
    DAILY = "daily", "The daily full verification"
    REQUEST = "request", "Asked for over the API"
    COMMAND = "command", "manage.py verify_journal"


class Verification(models.Model):
    PROBLEMS_KEPT = 100

    full = models.BooleanField()
    trigger = models.CharField(max_length=16, choices=VerificationTrigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(
        max_length=8, choices=VerificationStatus.choices, default=VerificationStatus.QUEUED
    )
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    progress_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Runs started (claims).")
    runner = models.UUIDField(null=True, blank=True, help_text="The claim of the run going on.")
    events_total = models.BigIntegerField(null=True, blank=True, help_text="About, at the start.")
    events_checked = models.BigIntegerField(default=0)
    transfers_checked = models.BigIntegerField(default=0)
    chains = models.PositiveIntegerField(default=0)
    started_from = models.ForeignKey(
        Checkpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    checkpoint = models.ForeignKey(
        Checkpoint,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The checkpoint this run stored (it passed).",
    )
    ok = models.BooleanField(null=True, blank=True)
    broken_chain = models.CharField(max_length=80, blank=True, default="")
    broken_sequence = models.BigIntegerField(null=True, blank=True)
    problem_count = models.PositiveIntegerField(default=0)
    problems = models.JSONField(default=list)
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["status", "-id"], name="verification_status")]

    def __str__(self) -> str:
        return f"verification {self.pk} ({'full' if self.full else 'routine'}) {self.status}"
