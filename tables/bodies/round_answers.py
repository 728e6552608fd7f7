"""What a round's requests answer: an open (the seats' bets, the progressive's split, the meter), a
result (the hands, each seat settled, the awards won) and a void.

Built from these models by `tables.rounds.answers` (hands, settlements and decisions by
`tables.bodies.render`) and stored as their JSON, so a replay answers the same bytes.

Invariant: amounts are whole cents; an award here is only its way to payment's start
(`jackpot.bodies.awards.AwardBody` follows it from there).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.wire import Body, Instant
from jackpot.bodies.meter import Meter
from jackpot.models import AwardKind, AwardStatus
from tables.bodies.seats import (
    Hand,
    StudSeatBets,
    StudSeatSettlement,
    UthSeatBets,
    UthSeatSettlement,
)
from tables.bodies.vocabulary import CardText, RoundId, SeatNumber


class Contribution(Body):
    """How the round's progressive stakes were split, in cents."""

    stakes: Annotated[int, Field(ge=0)]
    stake_cents: int
    meter_cents: int
    reserve_cents: int
    house_cents: int


class OpenAnswer(Body):
    table: int
    round_id: RoundId
    state: Literal["open"]
    opened_at: Instant
    seats: list[UthSeatBets | StudSeatBets]
    progressive: Contribution | None
    meter: Meter | None


class RoundAward(Body):
    """An award the round won (its way to payment: the schema's `Award` of the same `id`)."""

    id: int
    seat: SeatNumber
    kind: AwardKind
    amount_cents: int
    status: AwardStatus
    sequence: int


class ResultAnswer(Body):
    table: int
    round_id: RoundId
    state: Literal["settled"]
    settled_at: Instant
    board: Annotated[list[CardText], Field(max_length=5, description="empty for Stud Poker")]
    dealer: Annotated[list[CardText], Field(min_length=2, max_length=5)]
    dealer_hand: Hand
    dealer_qualifies: bool
    seats: list[UthSeatSettlement | StudSeatSettlement]
    awards: list[RoundAward]
    meter: Meter | None


class VoidAnswer(Body):
    table: int
    round_id: RoundId
    state: Literal["void"]
    voided_at: Instant
    reason: str
    progressive_refund_cents: int
    meter: Meter | None
