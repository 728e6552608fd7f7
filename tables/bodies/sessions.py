"""The club's sessions on the wire (`tables.club`, docs/api.md 4.8): the list, one session with
its snapshot and its drop counts, and the two counts' bodies.

Invariant: a count's amount is shown only once it is confirmed, so the second person counts
blind.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import Cents, Id, Offset, SecondFactorCode

CountedCents = Annotated[
    int, Field(ge=0, le=2**62, description="What the drop box holds for the progressive, cents")
]


class SessionQuery(Query):
    from_: Annotated[
        date | None, Field(alias="from", description="the first club day (YYYY-MM-DD), included")
    ] = None
    to: Annotated[date | None, Field(description="the last club day (YYYY-MM-DD), included")] = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class SessionSummary(Body):
    """A session: its number, the club day it opened on, who opened and closed it and how."""

    id: Id
    number: int
    club_day: date
    status: str = Field(description="open or closed")
    opened_at: Instant
    opened_by: str
    closed_at: Instant | None
    closed_by: str = Field(description="user:<name>, system:club_day, or empty while open")
    closed_how: str = Field(description="supervisor or club_day; empty while open")


class SessionPage(Body):
    count: int
    limit: int
    offset: int
    results: list[SessionSummary]


class SessionTableLine(Body):
    """Register model 8: what a table withheld for a pool in the session, from the journal."""

    table: Id
    pool: Id
    rounds: int
    stakes: int
    stakes_cents: Cents
    meter_cents: Cents
    reserve_cents: Cents
    house_cents: Cents
    voided: int = Field(description="rounds voided in the session with a progressive refund")
    voided_cents: Cents
    withheld_cents: Cents = Field(description="stakes_cents - voided_cents")


class SessionPoolLine(Body):
    """Register model 8 ter: what the pool's sign displayed at the close."""

    pool: Id
    status: str
    displayed_cents: Cents
    meter_version: int
    corrections: int
    corrections_cents: Cents


class DropCountBody(Body):
    """A table's drop box for the session: expected from the snapshot; the count's amount and
    difference once a second person confirmed it blind."""

    table: Id
    expected_cents: Cents
    counted: bool
    counted_by: str
    counted_at: Instant | None
    confirmed: bool
    confirmed_by: str
    confirmed_at: Instant | None
    counted_cents: Cents | None = Field(description="null until confirmed (a blind count)")
    difference_cents: Cents | None = Field(description="counted - expected, once confirmed")


class SessionBody(SessionSummary):
    """A session with its snapshot (empty while open) and its drop boxes."""

    tables: list[SessionTableLine]
    pools: list[SessionPoolLine]
    drops: list[DropCountBody]


class DropCountEntry(Body):
    """The first person's count (or their recount before it is confirmed)."""

    counted_cents: CountedCents


class DropCountConfirmation(Body):
    """The second person's blind count, with a fresh second-factor code."""

    counted_cents: CountedCents
    second_factor_code: SecondFactorCode | None = None
