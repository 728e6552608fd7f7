"""The club's session registers (compliance 54; arrêté of 14 May 2007, art. 66-2 and 66-3): model 8,
the progressive stakes withheld per session and table, and model 8 ter, the amount each pool's
sign displayed at each session's end. Read by `tables.club.registers`.

Invariants: a range is of club days, `from` and `to` included, `to` not before `from` and at
most MAX_DAYS apart; amounts are integer cents; a session total and the range's total are the
sums of the lines they cover, each drop box counted once.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from core.wire import Body, Instant, Query
from jackpot.bodies.common import Cents

#: The longest range a register is read for, in club days (a leap year).
MAX_DAYS = 366

RegisterFormat = Literal["json", "csv", "pdf"]
RegisterLanguage = Literal["fr", "en"]


class SessionRegisterQuery(Query):
    """A register's club days (both included), its format and, for the PDF, its language."""

    from_: Annotated[date, Field(alias="from", description="the first club day (YYYY-MM-DD)")]
    to: Annotated[
        date,
        Field(
            description=f"the last club day (YYYY-MM-DD), included; not before from, at most "
            f"{MAX_DAYS} days in all"
        ),
    ]
    format: Annotated[RegisterFormat, Field(description="json (default), csv or pdf")] = "json"
    lang: Annotated[
        RegisterLanguage, Field(description="the PDF's language: fr (default) or en")
    ] = "fr"

    @field_validator("to")
    @classmethod
    def _a_range(cls, to: date, info: ValidationInfo) -> date:
        first = info.data.get("from_")
        if first is None:
            return to
        if to < first:
            raise ValueError(f"must not be before from ({first.isoformat()})")
        if (to - first).days >= MAX_DAYS:
            raise ValueError(f"must be at most {MAX_DAYS} club days from from, both included")
        return to


class DropCountLine(Body):
    """A table's drop box as counted for the session: by one person, confirmed by another (the
    difference, counted minus expected, is set with the confirmation)."""

    counted_cents: Cents
    expected_cents: Cents
    difference_cents: int | None = Field(description="null until confirmed")
    counted_by: str
    confirmed_by: str = Field(description="empty until confirmed")


class WithheldLine(Body):
    """One line of model 8: what a table withheld for a pool during a session, and its drop box's
    count (on the table's first line of the session; null when not counted yet). A table counted
    without a stake in the session has a line of zeros and no pool."""

    table: int
    table_name: str
    pool: int | None
    pool_name: str
    currency: str
    rounds: int
    stakes: int
    stakes_cents: Cents
    meter_cents: Cents
    reserve_cents: Cents
    house_cents: Cents
    voided: int
    voided_cents: Cents
    withheld_cents: Cents
    drop_count: DropCountLine | None


class WithheldTotal(Body):
    """The sums of model 8's lines; the drop boxes' figures over the confirmed counts only."""

    rounds: int
    stakes: int
    stakes_cents: Cents
    meter_cents: Cents
    reserve_cents: Cents
    house_cents: Cents
    voided: int
    voided_cents: Cents
    withheld_cents: Cents
    boxes: int = Field(description="tables with a line")
    boxes_confirmed: int = Field(description="of them, counted and confirmed")
    counted_cents: Cents = Field(description="the confirmed counts' sum")
    difference_cents: int = Field(description="the confirmed counts' differences' sum")


class WithheldSession(Body):
    session: int = Field(description="the session's number")
    club_day: date
    closed_at: Instant
    lines: list[WithheldLine]
    total: WithheldTotal


class WithheldRegister(Body):
    """Register model 8 for a range of club days: each closed session, oldest first."""

    club: str
    first_day: date
    last_day: date
    sessions: list[WithheldSession]
    total: WithheldTotal


class DisplayedLine(Body):
    """One line of model 8 ter: the amount a pool's sign displayed at a session's end, the
    meter's corrections during the session, and the change since the pool's previous session
    (null for its first)."""

    pool: int
    pool_name: str
    currency: str
    status: str
    displayed_cents: Cents
    corrections: int
    corrections_cents: int
    change_cents: int | None


class DisplayedSession(Body):
    session: int = Field(description="the session's number")
    club_day: date
    closed_at: Instant
    lines: list[DisplayedLine]


class DisplayedTotal(Body):
    """A pool over the range: its sessions, corrections, the sum of its changes and the amount
    displayed at the end of its last session."""

    pool: int
    pool_name: str
    currency: str
    sessions: int
    corrections: int
    corrections_cents: int
    change_cents: int
    last_displayed_cents: Cents


class DisplayedRegister(Body):
    """Register model 8 ter for a range of club days: each closed session, oldest first."""

    club: str
    first_day: date
    last_day: date
    sessions: list[DisplayedSession]
    totals: list[DisplayedTotal]
