"""The public rules API's wire shapes, each declared once (see `core.wire`): the reader and the
schema of evaluate, the two settle operations, the paytables and the progressive's return; and the
paytables as the API shows them (`paytables_of`: the engine keeps the data, the wire its shape)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Annotated, Literal

from pydantic import Field

from core.wire import DIGITS, Body, Query
from jackpot.bodies.pools import ProgressivePaytable, progressive_paytable_of
from rules.par import SHEET_VERSIONS, ParSheet
from rules.paytables import Paytable, PaytableSet
from tables.bodies.seats import (
    DECISION,
    Hand,
    StudBetsBody,
    StudDecisionBody,
    UthBetsBody,
    UthDecisionBody,
)
from tables.bodies.vocabulary import (
    BET,
    CARD_COUNT,
    DISTINCT,
    CardText,
    CategoryName,
    FiveCards,
    TwoCards,
)


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


class ParQuery(Query):
    version: Annotated[
        str | None,
        Field(
            pattern="^(" + "|".join(re.escape(v) for v in SHEET_VERSIONS) + ")$",
            description="One published progressive, Trips or Stud Bonus paytable version "
            "(default: the three in force): " + ", ".join(SHEET_VERSIONS) + ".",
        ),
    ] = None
    jackpot_cents: Annotated[
        int, Field(ge=0, le=10**15 - 1, description="The meter, cents (default 0)."), DIGITS
    ] = 0
    other_bettors: Annotated[int, Field(ge=0, le=6, description="0 to 6 (default 0)."), DIGITS] = 0


class ParLine(Body):
    kind: Annotated[str, Field(description="an award kind or category; `loses`, `none`")]
    combinations: Annotated[int, Field(ge=0)]
    out_of: Annotated[int, Field(ge=1)]
    probability: Ratio
    pays: str
    pays_cents: Annotated[
        int | None, Field(description="per stake, on the progressive's sheet; null on a box's")
    ]
    rtp_contribution: Annotated[Ratio, Field(description="returned per unit staked")]
    share_of_return: Ratio
    on_top: Annotated[bool, Field(description="envy: paid beside the seat's own award")]


ParGame = Literal["uth_progressive", "uth_trips", "stud_bonus"]


class ParSheetBody(Body):
    game: ParGame
    paytable_version: str
    jackpot_cents: int | None
    other_bettors: Annotated[int | None, Field(ge=0, le=6)]
    stake_cents: int | None
    lines: list[ParLine]
    rtp: Ratio
    rtp_percent: Annotated[str, Field(description="4 decimals, rounded down")]
    house_edge: Ratio
    house_edge_percent: Annotated[str, Field(description="4 decimals, rounded up")]


class ParAnswer(Body):
    sheets: list[ParSheetBody]


def _ratio(value: Fraction) -> Ratio:
    return Ratio.model_construct(numerator=value.numerator, denominator=value.denominator)


def par_answer(sheets: Iterable[ParSheet]) -> ParAnswer:
    """The sheets as `GET /api/v1/rules/par` shows them (exact ratios beside the percentages)."""
    return ParAnswer.model_construct(
        sheets=[
            ParSheetBody.model_construct(
                game=sheet.game,
                paytable_version=sheet.paytable_version,
                jackpot_cents=sheet.jackpot_cents,
                other_bettors=sheet.other_bettors,
                stake_cents=sheet.stake_cents,
                lines=[
                    ParLine.model_construct(
                        kind=line.kind,
                        combinations=line.combinations,
                        out_of=line.out_of,
                        probability=_ratio(line.probability),
                        pays=line.pays,
                        pays_cents=line.pays_cents,
                        rtp_contribution=_ratio(line.rtp_contribution),
                        share_of_return=_ratio(line.share_of_return),
                        on_top=line.on_top,
                    )
                    for line in sheet.lines
                ],
                rtp=_ratio(sheet.rtp),
                rtp_percent=sheet.rtp_percent,
                house_edge=_ratio(sheet.house_edge),
                house_edge_percent=sheet.house_edge_percent,
            )
            for sheet in sheets
        ]
    )


__all__ = [
    "BoxPaytable",
    "EvaluateAnswer",
    "EvaluateBody",
    "ParAnswer",
    "ParQuery",
    "Paytables",
    "ProgressiveReturnAnswer",
    "ProgressiveReturnQuery",
    "StudSettleBody",
    "UthSettleBody",
    "par_answer",
    "paytables_of",
]
