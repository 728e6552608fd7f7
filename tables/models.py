"""Tables, their terminals, and the rounds the terminals post.

Invariants: a table has 1 to 7 seats; only an Ultimate Texas Hold'em table feeds a pool;
`(table, round_id)` is unique, which makes a terminal's retry of a round safe; a seat's bets are
non-negative cents and never change after the round opens (bets lock before the cards are dealt);
a round records the pool its table fed when it opened (its pool of record) and that pool's terms
then: the stake, the progressive paytable's version and the verification threshold (CHECKs: a
pooled round has all three, a round without a pool none); it settles or voids with them whatever
happens to the table or the pool afterwards, and while it is open its pool's parameters do not
change (`jackpot.changes`, told by `tables.pools`, with the index `round_open_per_pool`); a table
has at most one open round at a time (a partial unique index: a table deals one hand at a time,
and two terminals' opens racing cannot both pass it, whatever locks they hold); a pool's history
day (`HistoryDay`) is the journal's figures of that club day up to the fold's cursor
(`HistoryCursor`), one row per pool and day, recomputable from the journal at any time.
"""

from django.db import models
from django.db.models import Q


class Game(models.TextChoices):
    UTH = "uth", "Ultimate Texas Hold'em"
    STUD = "stud", "Stud Poker"


class Table(models.Model):
    name = models.CharField(max_length=80, unique=True)
    game = models.CharField(max_length=4, choices=Game.choices)
    pool = models.ForeignKey(
        "jackpot.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )  # no reverse accessor: the progressive does not read the tables' rows (tables.pools)
    seats = models.PositiveSmallIntegerField(default=7)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(seats__gte=1, seats__lte=7), name="table_seats"),
            models.CheckConstraint(
                condition=Q(game=Game.UTH) | Q(pool__isnull=True), name="table_pool_only_uth"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Terminal(models.Model):
    """A table's terminal; it authenticates with a bearer token stored as its SHA-256."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="terminals")
    name = models.CharField(max_length=80)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.table} / {self.name}"


class RoundState(models.TextChoices):
    OPEN = "open", "Open: bets locked"
    SETTLED = "settled", "Settled"
    VOID = "void", "Void"


#: The partial unique index that keeps a table to one open round.
ONE_OPEN_ROUND = "round_one_open_per_table"


class Round(models.Model):
    # No index of its own: round_unique_per_table and the indexes below lead with the table.
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="rounds", db_index=False
    )
    round_id = models.CharField(max_length=64, help_text="The terminal's id for the round.")
    pool = models.ForeignKey(
        "jackpot.Pool",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",  # the progressive does not read the tables' rows (tables.pools)
        help_text="The pool of record: the one the table fed when the round opened.",
    )
    stake_cents = models.BigIntegerField(
        default=0, help_text="The pool's progressive stake when the round opened (0: no pool)."
    )
    paytable_version = models.CharField(
        max_length=40,
        blank=True,
        default="",
        help_text="The pool's progressive paytable when the round opened ('': no pool).",
    )
    verification_threshold_cents = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="The pool's verification threshold when the round opened (null: no pool).",
    )
    state = models.CharField(max_length=8, choices=RoundState.choices, default=RoundState.OPEN)
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    # The fingerprint (SHA-256 of the canonical request) and the first answer of each step, so a
    # retry gets the same answer and a different payload under the same id is refused.
    open_fingerprint = models.CharField(max_length=64)
    open_response = models.JSONField()
    close_fingerprint = models.CharField(max_length=64, blank=True, default="")
    close_response = models.JSONField(null=True, blank=True)
    result = models.JSONField(
        null=True,
        blank=True,
        help_text="What the terminal dealt: board, dealer, seats' cards and decisions.",
    )
    void_reason = models.CharField(max_length=200, blank=True, default="")
    closed_by = models.CharField(
        max_length=120,
        blank=True,
        default="",
        help_text="Who settled or voided it: terminal:<id>, or user:<name> (a supervisor's void).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "round_id"], name="round_unique_per_table"),
            # One hand at a time per table (docs/api.md 2.10): the second open waits on the first
            # one's uncommitted row in this index, then fails, so no count under a lock is needed.
            models.UniqueConstraint(
                fields=["table"],
                condition=Q(state=RoundState.OPEN),
                name=ONE_OPEN_ROUND,
            ),
            models.CheckConstraint(
                condition=Q(pool__isnull=True, stake_cents=0)
                | Q(pool__isnull=False, stake_cents__gt=0),
                name="round_stake_of_its_pool",
            ),
            models.CheckConstraint(
                condition=Q(
                    pool__isnull=True,
                    paytable_version="",
                    verification_threshold_cents__isnull=True,
                )
                | (
                    # isnull=False too: NULL >= 0 is NULL, which a CHECK lets through.
                    Q(
                        pool__isnull=False,
                        verification_threshold_cents__isnull=False,
                        verification_threshold_cents__gte=0,
                    )
                    & ~Q(paytable_version="")
                ),
                name="round_terms_of_its_pool",
            ),
        ]
        indexes = [
            models.Index(fields=["opened_at"]),
            # A pool's open rounds, which hold back a change of its parameters (tables.pools).
            models.Index(
                fields=["pool"], condition=Q(state=RoundState.OPEN), name="round_open_per_pool"
            ),
            # A table's rounds listed by state, newest first (GET /tables/{table}/rounds).
            models.Index(fields=["table", "state", "-opened_at"], name="round_table_state_opened"),
        ]

    def __str__(self) -> str:
        return f"{self.table_id}/{self.round_id}"


class RoundSeat(models.Model):
    """One seat's bets, locked at open and never changed (the result lives on the round)."""

    # No index of its own: round_seat_unique leads with the round.
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="seats", db_index=False)
    seat = models.PositiveSmallIntegerField()
    ante_cents = models.BigIntegerField()
    blind_cents = models.BigIntegerField(default=0)
    trips_cents = models.BigIntegerField(default=0)
    bonus_cents = models.BigIntegerField(default=0)
    progressive_cents = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "seat"], name="round_seat_unique"),
            models.CheckConstraint(condition=Q(seat__gte=1, seat__lte=7), name="round_seat_range"),
            models.CheckConstraint(
                condition=Q(
                    ante_cents__gt=0,
                    blind_cents__gte=0,
                    trips_cents__gte=0,
                    bonus_cents__gte=0,
                    progressive_cents__gte=0,
                ),
                name="round_seat_bets_nonneg",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.round_id} seat {self.seat}"


class IdempotencyRecord(models.Model):
    """The first answer to a request sent with an Idempotency-Key, replayed on a retry."""

    # No index of its own: idempotency_key_per_table leads with the table.
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="idempotency_keys", db_index=False
    )
    key = models.CharField(max_length=128)
    fingerprint = models.CharField(max_length=64)
    # The HTTP status of the first answer, as written before round steps returned typed results
    # (none since: the key's fingerprint covers the path, so the step, hence the status, is the
    # replaying request's own). Kept for the records written then; never read.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "key"], name="idempotency_key_per_table"),
        ]

    def __str__(self) -> str:
        return f"{self.table_id}:{self.key}"


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
