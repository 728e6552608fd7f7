"""A table's rounds as read back: one round as stored (`RoundDetail`), and the table's rounds listed
newest first (`RoundListQuery`, answered with a `RoundPage` by `tables.selectors.rounds`) so that a
terminal that lost its round id finds the round it left open.

Invariants: a round's state is one of open, settled, void (one enum in the schema wherever it
appears); a summary's `stale` is by the service's clock, never the terminal's.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import Offset
from tables.bodies.round_answers import OpenAnswer, ResultAnswer, VoidAnswer
from tables.bodies.seats import StudSeatBets, UthSeatBets
from tables.bodies.vocabulary import RoundId

#: A round's state on the wire (`tables.models.RoundState`'s values).
RoundStateName = Literal["open", "settled", "void"]


class RoundDetail(Body):
    """A round as stored: its open's answer, and its result's or void's once closed."""

    table: int
    round_id: RoundId
    state: RoundStateName
    opened: OpenAnswer
    closed: ResultAnswer | VoidAnswer | None


class RoundListQuery(Query):
    """A table's rounds, newest first: `state=open` finds the round a terminal left open."""

    state: Annotated[RoundStateName | None, Field(description="only rounds in this state")] = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class RoundSummary(Body):
    """A round as a terminal recovering after a crash needs it: its id and state, when it
    opened by the service's clock, and the bets it locked."""

    round_id: RoundId
    state: RoundStateName
    opened_at: Instant
    closed_at: Instant | None
    age_seconds: Annotated[
        int, Field(ge=0, description="whole seconds since it opened, by the service's clock")
    ]
    stale: bool = Field(
        description="open for ROUND_STALE_AFTER_SECONDS or longer (`stale_after_seconds`): its "
        "result is not coming; void it, or have a supervisor void it"
    )
    seats: list[UthSeatBets | StudSeatBets]
    progressive_stakes: Annotated[int, Field(ge=0, description="seats that staked it")]
    progressive_cents: Annotated[
        int, Field(ge=0, description="what they staked; a void refunds it in full")
    ]


class RoundPage(Body):
    table: int
    stale_after_seconds: Annotated[int, Field(ge=1)]
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Annotated[int, Field(ge=0)]
    results: list[RoundSummary]
