"""The period-end liability's wire shapes, declared once (see `core.wire`): the query string of
`GET /api/v1/pools/{pool}/liability` and its JSON answer, built by `jackpot.reporting.liability` and
written as CSV and PDF by `jackpot.reporting.statements` from the same figures.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.wire import Body, Instant, Moment, Query
from jackpot.bodies.common import Cents, Currency, Id

Count = Annotated[int, Field(ge=0)]


class LiabilityQuery(Query):
    """The instant and the period of a liability statement, and how it is written."""

    at: Annotated[
        Moment | None,
        Field(
            description="ISO 8601 time with its offset, not in the future nor before 1970;"
            " default now"
        ),
    ] = None
    from_: Annotated[
        Moment | None,
        Field(
            alias="from",
            description="ISO 8601 time with its offset, at most `at`, not before 1970,"
            " included; default"
            " midnight of the first day of the month `at` ends in (the month it closes when"
            " `at` is midnight of a 1st), in the club's time zone",
        ),
    ] = None
    format: Annotated[
        Literal["json", "csv", "pdf"], Field(description="json (default), csv or pdf")
    ] = "json"


class AwardFigure(Body):
    """Awards: how many, and their amount in cents."""

    count: Count
    amount_cents: Cents


class CorrectionFigures(Body):
    """The period's documented corrections (`correction` transfers: docs/accounting.md
    "Corrections"), net by account, signed (+ raised, - lowered): the house moved the opposite."""

    count: Count = Field(description="journal events that wrote corrections")
    meter_cents: Cents
    reserve_cents: Cents
    pending_cents: Cents = Field(description="awards pending or verified (`awards_pending`)")
    payable_cents: Cents = Field(description="awards approved (`payable`)")


class LifeFigures(Body):
    """What a stop, a replacement or the register of orphans moved across the owed figure in the
    period (docs/accounting.md "The period-end liability"), each the sum of its codes' transfers,
    never negative: owed at the end = owed at the start + `moved_in` - `seed_back` - `moved_out`
    - `orphans_final` + the period's other entries."""

    seed_back_cents: Cents = Field(
        description="the seed given back to the house (`stop_seed_back`, `replace_seed_back`)"
    )
    moved_out_cents: Cents = Field(
        description="liability moved to another pool (`stop_meter_out`, `stop_reserve_out`, "
        "`orphans_out`)"
    )
    moved_in_cents: Cents = Field(
        description="liability received from another pool (`stop_meter_in`, `stop_reserve_in`, "
        "`orphans_in`)"
    )
    orphans_final_cents: Cents = Field(
        description="orphans made final after their season (`orphans_final`)"
    )


class LiabilityPeriod(Body):
    """What happened to the pool's awards from `start` (included) to `end` (excluded, the
    statement's instant), by the time of the journal's entries."""

    start: Instant
    end: Instant
    granted: AwardFigure = Field(description="awards won (jackpots, fixed awards, envy)")
    jackpots: AwardFigure = Field(description="of which jackpots (`jackpot_hit`)")
    paid: AwardFigure = Field(description="awards paid to players (`award_paid`)")
    voided: AwardFigure = Field(description="awards voided (`award_void_meter`, `_house`)")
    corrections: CorrectionFigures
    life: LifeFigures = Field(
        description="what a stop, a replacement, a recovery or final orphans moved in or out"
    )


class ChainPosition(Body):
    """The last event of one chain at or before the instant: what the figures were read at."""

    chain: str
    sequence: Annotated[int, Field(ge=1)]
    hash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Liability(Body):
    """What the club owes on a pool at an instant, from the journal alone (docs/accounting.md
    "The period-end liability"). Every amount is integer cents of `currency`."""

    pool: Id
    pool_name: str
    currency: Currency
    at: Instant = Field(description="the instant, UTC: every entry at or before it counts")
    meter_cents: Cents = Field(description="the meter account's balance")
    seed_cents: Cents = Field(description="the pool's reset amount in force at the instant")
    meter_above_seed_cents: Cents = Field(
        description="meter - seed: the progressive liability accountants accrue; 0 for a pool "
        "stopped at the instant (its meter is emptied: what players are owed is `orphans_cents`)"
    )
    stopped: bool = Field(description="the pool was stopped for good at the instant")
    orphans_cents: Cents = Field(
        description="the register of orphans' balance (the `orphan` account): owed until "
        "recovered or final"
    )
    reserve_cents: Cents = Field(description="the reserve account's balance")
    pending: AwardFigure = Field(description="awards pending or verified: `awards_pending`")
    payable: AwardFigure = Field(description="awards approved, not yet paid: `payable`")
    owed_cents: Cents = Field(description="meter + reserve + pending + payable + orphans")
    period: LiabilityPeriod
    journal: list[ChainPosition] = Field(description="every chain's position at the instant")
    checkpoint: Id | None = Field(
        description="the verified checkpoint the figures started from (null: the first event)"
    )


#: What a statement is written as, by `LiabilityQuery.format`.
Format = Literal["json", "csv", "pdf"]
