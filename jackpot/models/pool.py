"""A pool: one shared jackpot fed by its linked tables, and its money parameters.

Invariants (CHECK constraints): the stake is positive; the seed is at least one cent (a jackpot
wins the whole meter, which a hit resets to the seed and only a hit lowers, so no jackpot is ever
0 cents); meter and reserve shares are basis points that add up to at most 10,000 (the house keeps
the rest); the hot counters never go negative; the status is one of `PoolStatus`.

The status (`jackpot.pools.lifecycle`, compliance 36): `active` takes stakes and pays awards;
`suspended` (a technical fault, one admin) takes no progressive stake and makes nothing payable
until resumed; `stopped` (decommissioned, two admins) takes no stake ever again, its meter and
reserve moved out by journal entries. It changes only by a single `UPDATE` under the pool row
lock (`jackpot.money.meter.set_status`, `stop_counters`), never from `stopped`.
"""

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from rules.paytables import CURRENT as CURRENT_PAYTABLES

# The meter and the reserve keep sub-cent precision: a share of `stake_cents * share_bp / 10_000`
# cents is exactly `stake_cents * share_bp` units, so no fraction of a cent is ever dropped.
UNITS_PER_CENT = 10_000


class PoolStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUSPENDED = "suspended", "Suspended (a technical fault): no progressive stake, nothing payable"
    STOPPED = "stopped", "Stopped for good: its liability moved out"


class Pool(models.Model):
    name = models.CharField(max_length=80, unique=True)
    currency = models.CharField(max_length=3, default="EUR")
    stake_cents = models.PositiveIntegerField(
        default=500, help_text="The progressive stake, cents."
    )
    meter_share_bp = models.PositiveIntegerField(
        default=2000, help_text="Share of each stake that raises the meter, basis points."
    )
    reserve_share_bp = models.PositiveIntegerField(
        default=800, help_text="Share of each stake that feeds the reset reserve, basis points."
    )
    seed_cents = models.PositiveBigIntegerField(
        default=1_000_000,
        validators=[MinValueValidator(1)],
        help_text="The meter's value after a reset, cents (one at least).",
    )
    verification_threshold_cents = models.PositiveBigIntegerField(
        default=100_000, help_text="Awards at or above this wait for a supervisor, cents."
    )
    surveillance_required = models.BooleanField(
        default=True,
        help_text="A jackpot is approved only after surveillance confirmed it on video.",
    )
    paytable_version = models.CharField(
        max_length=40, default=CURRENT_PAYTABLES.progressive.version
    )

    # Hot state, written only by jackpot.money.meter with single-statement updates under the row
    # lock.
    meter_units = models.BigIntegerField(default=0, help_text="Meter in 1/10,000 cent.")
    reserve_units = models.BigIntegerField(default=0, help_text="Reserve in 1/10,000 cent.")
    meter_version = models.BigIntegerField(default=0, help_text="Bumped by every meter change.")
    meter_changed_at = models.DateTimeField(null=True, blank=True)
    hit_count = models.BigIntegerField(default=0, help_text="Jackpot hits so far, in order.")
    last_award_number = models.BigIntegerField(default=0, help_text="The last award's number.")
    award_version = models.BigIntegerField(
        default=0, help_text="Bumped by every change to the pool's awards (for displays)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # The pool's life (jackpot.pools.lifecycle): what it is, why and since when.
    status = models.CharField(
        max_length=10, choices=PoolStatus.choices, default=PoolStatus.ACTIVE, db_default="active"
    )
    status_reason = models.CharField(max_length=500, blank=True, default="", db_default="")
    status_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(stake_cents__gt=0), name="pool_stake_positive"),
            models.CheckConstraint(
                condition=Q(seed_cents__gte=1),
                name="pool_seed_positive",
                violation_error_message="The seed must be at least 1 cent.",
            ),
            models.CheckConstraint(
                condition=Q(meter_share_bp__lte=10_000 - F("reserve_share_bp")),
                name="pool_shares_at_most_whole",
            ),
            models.CheckConstraint(condition=Q(meter_units__gte=0), name="pool_meter_nonneg"),
            models.CheckConstraint(condition=Q(reserve_units__gte=0), name="pool_reserve_nonneg"),
            models.CheckConstraint(
                condition=Q(status__in=["active", "suspended", "stopped"]),
                name="pool_status_known",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def meter_cents(self) -> int:
        """What the sign shows and a hit pays: the meter rounded down to the cent."""
        return self.meter_units // UNITS_PER_CENT

    @property
    def house_share_bp(self) -> int:
        return 10_000 - self.meter_share_bp - self.reserve_share_bp
