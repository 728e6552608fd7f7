"""A seat as the wire shows it: its bets and its decision as posted (one shape per game, decisions
as tagged unions of their legal moves), its play (cards and decision), and its settlement as
answered.

Invariants: a decision's union holds a street to its legal multiples, so the reader never sees an
illegal UTH play; a settled seat is the play as posted followed by its settlement (the field
order of `UthSeatSettlement` and `StudSeatSettlement`); the progressive is absent, not null, from
a settlement whose seat did not stake it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from core.codes import ErrorCode
from core.wire import Body, Exact, Refusal
from tables.bodies.vocabulary import (
    BET,
    CardText,
    CategoryName,
    FiveCards,
    OptionalStake,
    RequiredStake,
    SeatNumber,
    TwoCards,
)

# --- bets and decisions -----------------------------------------------------------------------


class UthBetsBody(Body):
    """A UTH seat's bets in cents: Ante and Blind (equal) required, Trips and the progressive
    optional."""

    unknown_code = ErrorCode.INVALID_BET

    ante_cents: RequiredStake
    blind_cents: Annotated[RequiredStake, Field(description="must equal ante_cents")]
    trips_cents: OptionalStake = 0
    progressive_cents: Annotated[
        OptionalStake, Field(description="0, or exactly the pool's stake (500)")
    ] = 0


class StudBetsBody(Body):
    """A Stud seat's bets in cents: Ante required, Bonus optional."""

    unknown_code = ErrorCode.INVALID_BET

    ante_cents: RequiredStake
    bonus_cents: OptionalStake = 0


DECISION = Refusal(ErrorCode.INVALID_DECISION)


class _Decision(Body):
    unknown_code = ErrorCode.INVALID_DECISION


class UthFold(_Decision):
    """Fold: Ante and Blind lose (no street, no multiple: a player who has not played by the
    river folds)."""

    action: Literal["fold"]

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, value: object) -> object:
        # Terminals have always been allowed to send `"street": null` with a fold.
        if isinstance(value, dict) and any(value.get(key, 0) is None for key in _PLAY_FIELDS):
            return {k: v for k, v in value.items() if not (k in _PLAY_FIELDS and v is None)}
        return value


_PLAY_FIELDS = ("street", "multiple")


class UthPlayPreflop(_Decision):
    """Play 3x or 4x the Ante before the flop."""

    action: Literal["play"]
    street: Literal["preflop"]
    multiple: Annotated[Literal[3, 4], Exact]


class UthPlayFlop(_Decision):
    """Play 2x the Ante on the flop."""

    action: Literal["play"]
    street: Literal["flop"]
    multiple: Annotated[Literal[2], Exact]


class UthPlayRiver(_Decision):
    """Play 1x the Ante on the river (turn and river are dealt together)."""

    action: Literal["play"]
    street: Literal["river"]
    multiple: Annotated[Literal[1], Exact]


#: `{"action": "fold"}`, or Play: 3x or 4x the Ante preflop, 2x on the flop, 1x on the river.
UthDecisionBody = Annotated[
    UthFold | Annotated[UthPlayPreflop | UthPlayFlop | UthPlayRiver, Field(discriminator="street")],
    Field(discriminator="action"),
]


class StudFold(_Decision):
    """Fold: Ante and Bonus lose."""

    action: Literal["fold"]


class StudRaise(_Decision):
    """Raise 2x the Ante."""

    action: Literal["raise"]


#: A buy's card: a bad card is `invalid_card`, a missing one an incomplete decision.
BUY_CARD = Refusal(ErrorCode.INVALID_CARD, missing=ErrorCode.INVALID_DECISION)


class StudBuy(_Decision):
    """Buy a card: discard one of the hand's five, draw another (a fee of one Ante, then the
    Raise; the Bonus is forfeited)."""

    action: Literal["buy"]
    discard: Annotated[CardText, BUY_CARD]
    draw: Annotated[CardText, BUY_CARD]


#: `{"action": "fold"}`, `{"action": "raise"}`, or a buy with its discard and draw.
StudDecisionBody = Annotated[StudFold | StudRaise | StudBuy, Field(discriminator="action")]


class _Seat(Body):
    seat: SeatNumber


class UthSeatBets(_Seat):
    bets: Annotated[UthBetsBody, BET]


class StudSeatBets(_Seat):
    bets: Annotated[StudBetsBody, BET]


class UthSeatPlay(_Seat):
    cards: TwoCards
    decision: Annotated[UthDecisionBody, DECISION]


class StudSeatPlay(_Seat):
    cards: FiveCards
    decision: Annotated[StudDecisionBody, DECISION]


class Hand(Body):
    category: CategoryName
    best_five: Annotated[list[CardText], Field(min_length=5, max_length=5)]


class BoxResult(Body):
    stake_cents: int
    net_cents: int


class ProgressiveResult(Body):
    stake_cents: int
    award: Literal[
        "royal_flush", "community_royal", "straight_flush", "four_of_a_kind", "full_house", "none"
    ]
    fixed_cents: int | None = Field(description="null for the jackpot royal: the meter pays it")


BoxText = Literal["ante", "blind", "play", "trips", "raise", "bonus", "purchase"]


class Settlement(Body):
    """One seat settled: both hands, who won, each box's stake and net, the progressive (UTH,
    when staked) and the seat's net in cents (the progressive stake is not a box)."""

    player_hand: Hand
    dealer_hand: Hand
    dealer_qualifies: bool
    outcome: Literal["player", "dealer", "tie", "fold"]
    boxes: dict[BoxText, BoxResult]
    net_cents: int
    # Absent, not null, when the seat did not stake the progressive.
    progressive: ProgressiveResult | None = Field(
        default=None, exclude_if=lambda progressive: progressive is None
    )


# A settled seat is the play as posted (seat, cards, decision: the last base's fields come
# first), then its settlement.
class UthSeatSettlement(Settlement, UthSeatPlay):
    pass


class StudSeatSettlement(Settlement, StudSeatPlay):
    pass
