"""A pool's history for auditors (`tables.audit.pool_history`): one row model per chart
(`HISTORY_ROWS`), whose fields are also the columns of that chart's CSV, and the page that puts
them together with the latest reconciliation.

Invariants: days are club days in the service's TIME_ZONE; a range's `to` is never before its
`from`; every chart of `HistoryChart` has its row model in HISTORY_ROWS.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from core.wire import Body, Instant, Query
from jackpot.bodies.common import Cents
from jackpot.bodies.pools import ReconciliationStatus
from jackpot.models import AwardKind, AwardStatus
from tables.bodies.reconciliation import ReconciliationPool

# --- a pool's history for auditors (tables.audit.pool_history) ------------------------------


class HistoryChart(StrEnum):
    """The charts of a pool's history; each is downloadable as CSV (`history.csv?chart=`)."""

    METER = "meter"
    STAKES = "stakes"
    AWARDS = "awards"
    HITS = "hits"


ClubDay = Annotated[date, Field(description="a club day (YYYY-MM-DD) in the service's TIME_ZONE")]


class PoolHistoryQuery(Query):
    from_: Annotated[
        date | None, Field(alias="from", description="the first club day (YYYY-MM-DD), included")
    ] = None
    to: Annotated[
        date | None, Field(description="the last club day (YYYY-MM-DD), included; not before from")
    ] = None

    @field_validator("to")
    @classmethod
    def _not_before_from(cls, to: date | None, info: ValidationInfo) -> date | None:
        first = info.data.get("from_")
        if to is not None and first is not None and to < first:
            raise ValueError(f"must not be before from ({first.isoformat()})")
        return to


class PoolHistoryCsvQuery(PoolHistoryQuery):
    chart: Annotated[HistoryChart, Field(description="which chart's data")]


class MeterDay(Body):
    """The meter at the end of a club day on which it moved: the `meter` account of the journal
    (whole cents, what the sign showed), and the day's net movement (negative: a jackpot won)."""

    day: ClubDay
    closing_cents: Cents
    change_cents: int
    corrections_cents: int = Field(
        description="of the day's change, the meter's documented corrections (net, signed)"
    )


class StakeDay(Body):
    """The progressive stakes of the rounds opened on a club day, and of those the part refunded
    because their round was voided."""

    day: ClubDay
    count: Annotated[int, Field(ge=1)]
    stakes_cents: Cents
    refunded_count: Annotated[int, Field(ge=0)]
    refunded_cents: Cents


class AwardFrequency(Body):
    """An award kind over the settled rounds of the range: how many were won (`observed`, voided
    ones included: they still show what was dealt; `voided` of them), what the live ones paid,
    and the exact expected number from the PAR sheet's probabilities and each round's staked
    seats (`expected`, "n/d"; `expected_decimal` rounded to 4 decimals for reading), and that
    per stake (`expected_rate`, "n/d")."""

    kind: AwardKind
    observed: Annotated[int, Field(ge=0)]
    voided: Annotated[int, Field(ge=0)]
    amount_cents: Cents
    expected: Annotated[str, Field(pattern=r"^[0-9]+/[0-9]+$")]
    expected_decimal: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]{4}$")]
    expected_rate: Annotated[str, Field(pattern=r"^[0-9]+/[0-9]+$")]


class HistoryHit(Body):
    """A jackpot won in the range, and the reset it paid: the meter back to the seed, from the
    reserve and, where it was short, from the house (null: the hit's journal has no reset)."""

    award: Annotated[int, Field(ge=1)]
    at: Instant
    day: ClubDay
    table: str
    round: str
    seat: Annotated[int, Field(ge=1, le=7)]
    amount_cents: Cents
    status: AwardStatus
    reset_reserve_cents: Cents
    reset_house_cents: Cents


class HistoryCorrection(Body):
    """A documented correction approved in the range (`pool.corrected`, docs/accounting.md
    "Corrections"): what it corrected and by how much (signed), why, the regulator's reference,
    who approved it, and the meter and reserve after it."""

    change: Annotated[int, Field(ge=1)]
    at: Instant
    day: ClubDay
    target: Annotated[str, Field(description="meter, reserve or award")]
    award: Annotated[int, Field(ge=1)] | None
    amount_cents: int
    reason: str
    reference: str
    proposed_by: str
    approved_by: str
    meter_after_cents: Cents
    reserve_after_cents: Cents


class PoolHistory(Body):
    """A pool's story for auditors over a range of club days (`first_day`, `last_day` as asked;
    null: from the start, to today): the meter, the stakes, awards observed beside expected, the
    jackpots and their resets, the documented corrections, and the latest reconciliation (its
    status, and this pool's figures in it: null when the pool was not in that run)."""

    pool: Annotated[int, Field(ge=1)]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    time_zone: Annotated[str, Field(description="the zone of the club days")]
    first_day: date | None
    last_day: date | None
    settled_rounds: Annotated[int, Field(ge=0, description="settled rounds with a stake")]
    settled_stakes: Annotated[int, Field(ge=0, description="their stakes: awards' denominator")]
    meter: list[MeterDay]
    stakes: list[StakeDay]
    awards: list[AwardFrequency]
    hits: list[HistoryHit]
    corrections: list[HistoryCorrection]
    reconciliation: ReconciliationStatus | None
    reconciled: ReconciliationPool | None


#: Each chart's rows, as its CSV's columns.
HISTORY_ROWS: dict[HistoryChart, type[Body]] = {
    HistoryChart.METER: MeterDay,
    HistoryChart.STAKES: StakeDay,
    HistoryChart.AWARDS: AwardFrequency,
    HistoryChart.HITS: HistoryHit,
}
