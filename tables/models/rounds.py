"""Rounds: their bets locked at the open, their result, the answers stored for a retry."""

from django.db import models
from django.db.models import Q

from tables.models.tables import Table


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
