"""The public rules API's wire shapes, each declared once (see `config.wire`): the reader and the
schema of evaluate, the two settle operations, the paytables and the progressive's return; and the
paytables as the API shows them (`paytables_of`: the engine keeps the data, the wire its shape)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from config.wire import DIGITS, Body, Query
from jackpot.bodies import ProgressivePaytable, progressive_paytable_of
from tables.bodies import (
    BET,
    CARD_COUNT,
    DECISION,
    DISTINCT,
    CardText,
    CategoryName,
    FiveCards,
    StudBetsBody,
    StudDecisionBody,
    TwoCards,
    UthBetsBody,
    UthDecisionBody,
)
from tables.bodies import Hand as Hand
from tables.bodies import Settlement as Settlement
from tables.rules.paytables import Paytable, PaytableSet


class EvaluateBody(Body):
    cards: Annotated[list[CardText], Field(min_length=5, max_length=7), DISTINCT, CARD_COUNT]


class EvaluateAnswer(Hand):
    rank: Annotated[int, Field(ge=0, description="orders hands: the higher the better")]


class UthSettleBody(Body):
    player: TwoCards
    dealer: TwoCards
    board: FiveCards
    bets: Annotated[UthBetsBody, BET]
    decision: Annotated[UthDecisionBody, DECISION]


class StudSettleBody(Body):
    player: FiveCards
    dealer: FiveCards
    bets: Annotated[StudBetsBody, BET]
    decision: Annotated[StudDecisionBody, DECISION]


class Odds(Body):
    category: CategoryName
    pays: Annotated[str, Field(pattern=r"^[0-9]+:[0-9]+$")]
    numerator: Annotated[int, Field(ge=1)]
    denominator: Annotated[int, Field(ge=1)]


class BoxPaytable(Body):
    name: str
    version: str
    odds: list[Odds]


class Paytables(Body):
    uth_blind: BoxPaytable
    uth_trips: BoxPaytable
    stud_raise: BoxPaytable
    stud_bonus: BoxPaytable
    progressive: ProgressivePaytable


def _box_paytable(table: Paytable) -> BoxPaytable:
    return BoxPaytable.model_construct(
        name=table.name,
        version=table.version,
        odds=[
            Odds.model_construct(
                category=category.label,
                pays=str(odds),
                numerator=odds.numerator,
                denominator=odds.denominator,
            )
            for category, odds in table.odds.items()
        ],
    )


def paytables_of(paytables: PaytableSet) -> Paytables:
    """The tables of `paytables` as `GET /api/v1/rules/paytables` shows them: each box's paying
    categories weakest first (`{"category": "flush", "pays": "3:2", "numerator": 3,
    "denominator": 2}`), the progressive best award first (`progressive_paytable_of`)."""
    return Paytables.model_construct(
        uth_blind=_box_paytable(paytables.uth_blind),
        uth_trips=_box_paytable(paytables.uth_trips),
        stud_raise=_box_paytable(paytables.stud_raise),
        stud_bonus=_box_paytable(paytables.stud_bonus),
        progressive=progressive_paytable_of(paytables.progressive),
    )


class Ratio(Body):
    """An exact fraction."""

    numerator: int
    denominator: Annotated[int, Field(ge=1)]


ProgressiveAwardName = Literal[
    "royal_flush", "community_royal", "straight_flush", "four_of_a_kind", "full_house", "none"
]


class ProgressiveReturnQuery(Query):
    jackpot_cents: Annotated[
        int, Field(ge=0, le=10**15 - 1, description="The meter, cents."), DIGITS
    ]
    other_bettors: Annotated[int, Field(ge=0, le=6, description="0 to 6 (default 0)."), DIGITS] = 0


class ProgressiveReturnAnswer(Body):
    paytable_version: str
    jackpot_cents: int
    other_bettors: Annotated[int, Field(ge=0, le=6)]
    stake_cents: int
    probabilities: dict[ProgressiveAwardName, Ratio]
    envy_probability: Ratio
    expected_return: Annotated[Ratio, Field(description="per stake, in cents, exact")]
    expected_return_cents: Annotated[int, Field(description="the same, rounded down to the cent")]
    rtp: Ratio
    rtp_bp: int
    rtp_percent: str
    break_even_jackpot_cents: int | None


__all__ = [
    "BoxPaytable",
    "EvaluateAnswer",
    "EvaluateBody",
    "Paytables",
    "ProgressiveReturnAnswer",
    "ProgressiveReturnQuery",
    "Settlement",
    "StudSettleBody",
    "UthSettleBody",
    "paytables_of",
]
