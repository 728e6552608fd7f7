"""A pool's configuration and report, and its progressive paytable (`progressive_paytable_of`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from core.wire import Body, Instant
from jackpot.bodies.common import Cents, Currency, Id
from jackpot.models import AccountKind, AwardKind, AwardStatus
from rules import paytables as rules


class ProgressiveAwardLine(Body):
    award: Literal[
        "royal_flush", "community_royal", "straight_flush", "four_of_a_kind", "full_house"
    ]
    # Only the jackpot's line has a share of the meter; the others leave the key out.
    jackpot_percent_bp: Annotated[int, Field(ge=0, le=10_000)] | None = Field(
        default=None, exclude_if=lambda share: share is None
    )
    amount_cents: Cents | None = Field(description="null for the jackpot: its amount is the meter")


class ProgressivePaytable(Body):
    name: Literal["uth_progressive"]
    version: str
    awards: list[ProgressiveAwardLine]
    envy_cents: Cents


def progressive_paytable_of(table: rules.ProgressiveSchedule) -> ProgressivePaytable:
    """The engine's progressive table as the wire shows it, best award first: the jackpot royal
    with its share of the meter and `amount_cents: null`, the others a fixed amount."""
    line = ProgressiveAwardLine.model_construct
    return ProgressivePaytable.model_construct(
        name="uth_progressive",
        version=table.version,
        awards=[
            line(
                award="royal_flush",
                jackpot_percent_bp=table.jackpot_percent_bp,
                amount_cents=None,
            ),
            line(award="community_royal", amount_cents=table.community_royal_cents),
            line(award="straight_flush", amount_cents=table.straight_flush_cents),
            line(award="four_of_a_kind", amount_cents=table.four_of_a_kind_cents),
            line(award="full_house", amount_cents=table.full_house_cents),
        ],
        envy_cents=table.envy_cents,
    )


class PoolConfiguration(Body):
    """What regulators want posted: the stake, its split (basis points), the seed, the paytable."""

    id: Id
    name: str
    currency: Currency
    stake_cents: Cents
    meter_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    reserve_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    house_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    seed_cents: Cents
    verification_threshold_cents: Cents
    surveillance_required: bool = Field(
        description="a jackpot is approved only after surveillance confirmed it on video"
    )
    paytable: ProgressivePaytable
    tables: list[Id]


class StakeTotals(Body):
    count: Annotated[int, Field(ge=0)]
    in_cents: Cents
    refunded_cents: Cents


class AwardTotal(Body):
    count: Annotated[int, Field(ge=0)]
    amount_cents: Cents


class ReportHit(Body):
    award: Id
    table: str
    round: str
    seat: int
    amount_cents: Cents
    status: AwardStatus
    at: Instant


class MeterIdentity(Body):
    formula: str
    expected_units: int
    meter_units: int
    holds: bool


class StaleRound(Body):
    """A round of the pool open for too long: its result is not coming."""

    table: Annotated[Id, Field(description="the table's id (a supervisor's void names it)")]
    table_name: str
    round_id: str
    opened_at: Instant
    age_seconds: Annotated[int, Field(ge=0)]
    progressive_cents: Annotated[Cents, Field(ge=0, description="what a void refunds")]


class OpenRounds(Body):
    """The pool's rounds still open (their stakes are in the meter), and the stale ones: open
    for `stale_after_seconds` or longer (the setting ROUND_STALE_AFTER_SECONDS)."""

    count: Annotated[int, Field(ge=0)]
    stale_after_seconds: Annotated[int, Field(ge=1)]
    stale_count: Annotated[int, Field(ge=0)]
    oldest_stale: list[StaleRound] = Field(max_length=10, description="oldest first")


#: The void watch's flags (tables.selectors.voids): a table's voids in one shift, or over the
# window's.
VoidSignal = Literal["voids_in_shift", "voids_in_window"]


class IntegrityFlagBody(Body):
    """An award count that fair deals make improbable, at a table (or in the whole pool: `table`
    null), over a window: `observed` of the `rounds` (settled, with a progressive stake) paid
    at least one award of `kind` where `expected` (exact, "n/d") were expected; `tail` bounds
    P(count >= observed) from above, `adjusted` is Holm's over the `family` of tests of that
    check, below `alpha`. Stored by the integrity check (tables.audit.integrity); the tables own
    them, the pool report shows them. A void flag (`kind` a `VoidSignal`) is a table's voids:
    `observed` of its `rounds` (decided: settled or voided) were voided where the other tables'
    rate made `expected` likely, `seats` the stakes those voids refunded, `awards` 0."""

    model_config = ConfigDict(title="IntegrityFlag")  # its name in the schema (core.openapi)

    id: Id
    pool: Id
    table: Id | None
    table_name: str | None
    kind: AwardKind | VoidSignal
    window_from: Instant
    window_to: Instant
    rounds: Annotated[int, Field(ge=0)]
    seats: Annotated[int, Field(ge=0)]
    observed: Annotated[int, Field(ge=0)]
    awards: Annotated[int, Field(ge=0)]
    expected: Annotated[str, Field(pattern=r"^[0-9]+/[0-9]+$")]
    tail: str
    adjusted: str
    family: Annotated[int, Field(ge=1)]
    alpha: str
    checked_at: Instant


class ReconciliationStatus(Body):
    """The latest scheduled reconciliation (tables.audit.reconciliation) as the pool report shows
    it:
    the whole report is `GET /api/v1/reconciliations/{id}`. Null before the first run."""

    id: Id
    ok: bool
    daily: bool
    finished_at: Instant
    problem_count: Annotated[int, Field(ge=0)]
    first_problem: str | None


class PoolReport(Body):
    """A pool's reconciliation: balances, stakes, awards by kind, the last hits, the identity,
    the rounds still open, the latest integrity flags, the latest scheduled reconciliation."""

    pool: Id
    currency: Currency
    meter_cents: Cents
    seed_cents: Annotated[int, Field(ge=1, description="the reset: the meter after a hit")]
    reserve_cents: Cents
    house_cents: Cents
    balances: dict[AccountKind, Cents]
    stakes: StakeTotals
    awards_by_kind: dict[AwardKind, AwardTotal]
    hit_count: Annotated[int, Field(ge=0)]
    last_hits: list[ReportHit]
    meter_identity: MeterIdentity
    open_rounds: OpenRounds
    integrity_flags: list[IntegrityFlagBody] = Field(max_length=25, description="newest first")
    reconciliation: ReconciliationStatus | None
