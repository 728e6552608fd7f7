"""The tables' checks: integrity flags, reconciliations, and the pools' history days."""

from django.db import models

from tables.models.tables import Table


class IntegrityFlag(models.Model):
    """An improbable count of one award kind at a table (or in a whole pool, `table` null) over a
    window, as `tables.audit.integrity.check_integrity` found it (docs/operations.md, "Integrity
    flags"). Written once per (scope, kind, window start, rounds, observed): a check run again
    over the same rounds stores nothing new. Never edited.

    `rounds`: the window's settled rounds with a progressive stake; `observed`: those with at
    least one award of `kind`; `expected`: the exact mean of that count ("n/d"), `tail`: an upper
    bound of P(count >= observed) if the deals are fair, `adjusted`: the Holm-adjusted tail over
    the `family` of tests of that run, below `alpha` (all exact, as text: they can be 1e-300).
    """

    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(
        Table, null=True, blank=True, on_delete=models.PROTECT, related_name="integrity_flags"
    )
    kind = models.CharField(max_length=20)
    window_from = models.DateTimeField()
    window_to = models.DateTimeField()
    rounds = models.BigIntegerField()
    seats = models.BigIntegerField(help_text="Progressive stakes of those rounds.")
    observed = models.BigIntegerField(help_text="Rounds with at least one award of the kind.")
    awards = models.BigIntegerField(help_text="Awards of the kind (a round can pay several).")
    expected = models.CharField(max_length=200, help_text="Exact mean of `observed`, n/d.")
    tail = models.CharField(max_length=40, help_text="Upper bound of the tail, rounded up.")
    adjusted = models.CharField(max_length=40, help_text="Holm-adjusted tail, rounded up.")
    family = models.PositiveIntegerField(help_text="Tests (scopes x kinds) of the run.")
    alpha = models.CharField(max_length=40)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "table", "kind", "window_from", "rounds", "observed"],
                name="integrity_flag_once",
                nulls_distinct=False,
            ),
        ]
        indexes = [models.Index(fields=["pool", "-checked_at"], name="integrity_flag_pool")]

    def __str__(self) -> str:
        return f"{self.pool_id}/{self.table_id or 'pool'} {self.kind} at {self.checked_at}"


class Reconciliation(models.Model):
    """One reconciliation run's report (`tables.audit.reconciliation.reconcile`, docs/operations.md
    "Reconciliation"): every pool recomputed from the journal, the chains verified (and their
    anchors, when JOURNAL_ANCHOR_DIR is set), each pool's meter identity checked.

    Written once, whole, when the run has finished (a run killed half-way leaves no row), and
    never edited. `run_key` makes a scheduled run's report unique: a task delivered twice (its
    worker killed, Redis's redelivery) finds the report already there and stores nothing more;
    runs started by hand have none. `problems` are the first `PROBLEMS_KEPT` problems, in the
    order found; `problem_count` counts them all. `pools`: per pool, its figures (meter, the
    meter identity's expected units, balances), as the run found them.
    """

    PROBLEMS_KEPT = 100

    run_key = models.CharField(max_length=120, unique=True, null=True, blank=True)
    daily = models.BooleanField(default=False)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    ok = models.BooleanField()
    chains = models.PositiveIntegerField(default=0)
    events = models.BigIntegerField(default=0)
    transfers = models.BigIntegerField(default=0)
    pool_count = models.PositiveIntegerField(default=0)
    anchors = models.PositiveIntegerField(
        default=0, help_text="Anchor files checked (JOURNAL_ANCHOR_DIR)."
    )
    broken_chain = models.CharField(max_length=80, blank=True, default="", help_text="'': none.")
    broken_sequence = models.BigIntegerField(null=True, blank=True)
    problem_count = models.PositiveIntegerField(default=0)
    problems = models.JSONField(default=list)
    pools = models.JSONField(default=list)

    class Meta:
        indexes = [models.Index(fields=["ok", "daily", "-id"], name="reconciliation_filter")]

    def __str__(self) -> str:
        return f"reconciliation {self.pk} {'ok' if self.ok else 'FAILED'} at {self.finished_at}"


class HistoryDay(models.Model):
    """A pool's figures of one club day (the date in settings.TIME_ZONE) for its history
    (`tables.audit.pool_history`), kept by the fold (`tables.audit.history.fold_history`) from
    the audit events as the journal grows, so a year's history reads a year of rows, not a year of
    rounds.

    Not append-only: the fold adds each new event's effect to its day's row (UPDATE), and a void
    changes the day the round opened or the award was won. Never deleted. Every figure is whole
    cents or a count; `settled` maps a number of staked seats (as text: a JSON key) to the rounds
    settled that day with that many, `awards` an award kind to [observed, voided, cents of the
    non-void] by the day the award was won. `meter_moves`: the transfers to or from the pool's
    meter that day (a day with moves summing to 0 is still a day the meter moved).
    `tables.audit.history.history_problems` recomputes all of it from the journal.
    """

    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="+")
    day = models.DateField()
    meter_moves = models.BigIntegerField(default=0)
    meter_change_cents = models.BigIntegerField(default=0)
    stakes_count = models.BigIntegerField(default=0)
    stakes_cents = models.BigIntegerField(default=0)
    refunded_count = models.BigIntegerField(default=0)
    refunded_cents = models.BigIntegerField(default=0)
    settled = models.JSONField(default=dict)
    awards = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "day"], name="history_day_unique")]

    def __str__(self) -> str:
        return f"pool {self.pool_id} on {self.day}"


class HistoryCursor(models.Model):
    """How far the fold has read each audit chain: every event of `chain` up to `sequence` is in
    the `HistoryDay` rows. A chain's events commit in sequence order (its head row is locked by
    each writer), so no event at or below the cursor can still be on its way; a global id
    watermark could skip one committing late. Moved only by the fold, in the transaction that
    writes the day rows it covers."""

    chain = models.CharField(max_length=40, primary_key=True)
    sequence = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.chain} @ {self.sequence}"
