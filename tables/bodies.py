"""The round API's wire shapes, each declared once (see `config.wire`), and their readers.

A terminal posts an open (each seat's bets), then a result (cards and decisions), or a void.
Each body is a strict pydantic model per game (`UthOpen`, `StudOpen`, ...); the schema offers
both games (`OpenBody`, `ResultBody`: anyOf), and the reader validates against the table's own
game, so a Stud table refuses UTH bets naming the field (`seats[0].bets.blind_cents`). The
readers then build the frozen domain requests the round lifecycle consumes (`OpenRequest`,
`ResultRequest`), whose engine values check the rules (Blind == Ante, the multiples of each
street, ...). What needs the table (its seat count, whether it feeds a pool, the pool's stake)
is checked here; what needs the stored round (the result's seats are the open's) is checked by
`tables.rounds`.

The answers (`OpenAnswer`, `ResultAnswer`, `VoidAnswer`) are built from these models by
`tables.rounds.answers` (hands, settlements and decisions by `tables.render`) and stored as their
JSON; `RoundDetail` puts the stored answers of a round together. A table's rounds are listed
(`RoundListQuery`, answered with a `RoundPage` by `tables.selectors`) so that a terminal that
lost its round id finds the round it left open; a supervisor's void of a stuck round takes the
terminal's `VoidBody`. A pool's history for auditors (`PoolHistory`, read by
`tables.selectors.pool_history`) is made of one row model per chart (`HISTORY_ROWS`), whose
fields are also the columns of that chart's CSV.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, RootModel, ValidationInfo, field_validator, model_validator

from config.codes import ErrorCode
from config.wire import DIGITS, Body, Exact, Instant, NonBlank, Query, Refusal, read
from jackpot.bodies import Award as AwardRecord
from jackpot.bodies import (
    Cents,
    IntegrityFlag,
    Meter,
    Note,
    Offset,
    ReconciliationStatus,
    VoidSignal,
)
from jackpot.models import AccountKind, AwardKind, AwardStatus
from tables.models import Game
from tables.rules.boxes import MAX_BET_CENTS
from tables.rules.cards import Card, ensure_distinct, parse_card
from tables.rules.errors import RulesError
from tables.rules.stud import StudBets, StudDecision
from tables.rules.uth import Street, UthBets, UthDecision

ROUND_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$"
_ROUND_ID = re.compile(ROUND_ID_PATTERN)
MAXSEATS = 7
MAX_REASON = 200

# --- the vocabulary ---------------------------------------------------------------------------

RoundId = Annotated[
    str,
    Field(
        pattern=ROUND_ID_PATTERN,
        description="1 to 64 characters: letters, digits and . _ : - (a letter or digit first)",
    ),
    Refusal(ErrorCode.INVALID_ROUND_ID),
]
SeatNumber = Annotated[int, Field(ge=1, le=MAXSEATS), Refusal(ErrorCode.INVALID_SEAT)]
CardText = Annotated[
    str,
    Field(pattern=r"^[2-9TJQKA][cdhs]$", description="rank 2-9 T J Q K A, then suit c d h s"),
    Refusal(ErrorCode.INVALID_CARD),
]
CARD_COUNT = Refusal(
    ErrorCode.INVALID_CARD,
    too_short=ErrorCode.WRONG_CARD_COUNT,
    too_long=ErrorCode.WRONG_CARD_COUNT,
)
#: No card twice in one list (uniqueItems; the reader's `duplicate_card` names the second).
DISTINCT = Field(json_schema_extra={"uniqueItems": True})
TwoCards = Annotated[list[CardText], Field(min_length=2, max_length=2), DISTINCT, CARD_COUNT]
FiveCards = Annotated[list[CardText], Field(min_length=5, max_length=5), DISTINCT, CARD_COUNT]
BET = Refusal(ErrorCode.INVALID_BET)
RequiredStake = Annotated[int, Field(ge=1, le=MAX_BET_CENTS), BET]
OptionalStake = Annotated[int, Field(ge=0, le=MAX_BET_CENTS), BET]
SEATS = Refusal(ErrorCode.INVALID_REQUEST, too_long=ErrorCode.TOO_MANY_SEATS)
CategoryName = Literal[
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "royal_flush",
]

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


# --- requests ---------------------------------------------------------------------------------


class _Seat(Body):
    seat: SeatNumber


class UthSeatBets(_Seat):
    bets: Annotated[UthBetsBody, BET]


class StudSeatBets(_Seat):
    bets: Annotated[StudBetsBody, BET]


class UthOpen(Body):
    """Open a round at an Ultimate Texas Hold'em table."""

    round_id: RoundId
    seats: Annotated[list[UthSeatBets], Field(min_length=1, max_length=MAXSEATS), SEATS]


class StudOpen(Body):
    """Open a round at a Stud Poker table."""

    round_id: RoundId
    seats: Annotated[list[StudSeatBets], Field(min_length=1, max_length=MAXSEATS), SEATS]


class OpenBody(RootModel[UthOpen | StudOpen]):
    """An open: the table's game decides which shape it must have."""

    model_config = ConfigDict(strict=True, frozen=True)


class UthSeatPlay(_Seat):
    cards: TwoCards
    decision: Annotated[UthDecisionBody, DECISION]


class StudSeatPlay(_Seat):
    cards: FiveCards
    decision: Annotated[StudDecisionBody, DECISION]


class UthResult(Body):
    """An Ultimate Texas Hold'em round's cards: the board, the dealer's 2, each seat's 2."""

    board: FiveCards
    dealer: TwoCards
    seats: Annotated[list[UthSeatPlay], Field(min_length=1, max_length=MAXSEATS), SEATS]


class StudResult(Body):
    """A Stud Poker round's cards: the dealer's 5, each seat's 5 (no board)."""

    dealer: FiveCards
    seats: Annotated[list[StudSeatPlay], Field(min_length=1, max_length=MAXSEATS), SEATS]


class ResultBody(RootModel[UthResult | StudResult]):
    """A result: the table's game decides which shape it must have."""

    model_config = ConfigDict(strict=True, frozen=True)


class VoidBody(Body):
    reason: Annotated[NonBlank, Field(max_length=MAX_REASON), Refusal(ErrorCode.INVALID_REASON)]


# --- answers ----------------------------------------------------------------------------------


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


BoxName = Literal["ante", "blind", "play", "trips", "raise", "bonus", "purchase"]


class Settlement(Body):
    """One seat settled: both hands, who won, each box's stake and net, the progressive (UTH,
    when staked) and the seat's net in cents (the progressive stake is not a box)."""

    player_hand: Hand
    dealer_hand: Hand
    dealer_qualifies: bool
    outcome: Literal["player", "dealer", "tie", "fold"]
    boxes: dict[BoxName, BoxResult]
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


class RoundAward(Body):
    """An award the round won (its way to payment: `jackpot.bodies.Award`)."""

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


class TableChange(Body):
    """What one admin may change of a table: whether it is open for play (null: as it is). The
    pool it feeds changes by a proposal another admin approves (`TableMoveProposal`)."""

    enabled: bool | None = None


class TableMoveProposal(Body):
    """A proposal to link the table to `pool`, move it there, or unlink it (null), and why.
    Another admin approves it, while the table is closed and has no open round."""

    pool: Annotated[int, Field(ge=1)] | None
    reason: Note


class TableAnswer(Body):
    """A table as its administration sees it."""

    id: int
    name: str
    game: Literal["uth", "stud"]
    pool: int | None
    enabled: bool
    seats: Annotated[int, Field(ge=1, le=7)]
    open_rounds: Annotated[int, Field(ge=0, description="rounds opened and not yet closed")]


class TerminalIssue(Body):
    """A new token for a terminal of the table. Left false, `revoke_others` is the rotation: the
    table's other tokens keep working until each is revoked, so the terminal switches between two
    rounds. True revokes them now: a lost or compromised terminal."""

    name: Annotated[NonBlank, Field(max_length=80), Refusal(ErrorCode.INVALID_TEXT)]
    revoke_others: bool = False


class TerminalAnswer(Body):
    """One of a table's terminal tokens, as stored: never the token itself, only its prefix."""

    id: int
    table: int
    name: str
    prefix: Annotated[str, Field(description="the token's first characters, to tell tokens apart")]
    created_at: Instant
    revoked_at: Annotated[Instant | None, Field(description="null: the token works")]


class TerminalList(Body):
    """A table's terminal tokens, newest first."""

    terminals: list[TerminalAnswer]


class TerminalIssued(TerminalAnswer):
    """A token just issued: `token` is shown this once (only its SHA-256 is stored)."""

    token: Annotated[str, Field(description="the bearer token; shown once, never again")]


class RoundDetail(Body):
    """A round as stored: its open's answer, and its result's or void's once closed."""

    table: int
    round_id: RoundId
    state: Literal["open", "settled", "void"]
    opened: OpenAnswer
    closed: ResultAnswer | VoidAnswer | None


RoundStateName = Literal["open", "settled", "void"]


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


__all__ = [
    "AwardRecord",
    "OpenAnswer",
    "OpenBody",
    "OpenRequest",
    "ResultAnswer",
    "ResultBody",
    "ResultRequest",
    "RoundDetail",
    "RoundListQuery",
    "RoundPage",
    "RoundSummary",
    "SeatBets",
    "SeatPlay",
    "TableAnswer",
    "TableChange",
    "VoidAnswer",
    "VoidBody",
    "parse_open",
    "parse_result",
    "parse_void",
    "round_id_of",
]

# --- the domain requests, and the readers that build them -------------------------------------


@dataclass(frozen=True, slots=True)
class SeatBets:
    seat: int
    bets: UthBets | StudBets


@dataclass(frozen=True, slots=True)
class OpenRequest:
    round_id: str
    seats: tuple[SeatBets, ...]


@dataclass(frozen=True, slots=True)
class SeatPlay:
    seat: int
    cards: tuple[Card, ...]
    decision: UthDecision | StudDecision


@dataclass(frozen=True, slots=True)
class ResultRequest:
    board: tuple[Card, ...]  # empty for Stud Poker
    dealer: tuple[Card, ...]
    seats: tuple[SeatPlay, ...]


def _anchored(error: RulesError, prefix: str) -> RulesError:
    """An engine value's error (param `bets.blind_cents`) under its place in the body."""
    field = (error.param or "").partition(".")[2]
    return RulesError(error.code, error.message, param=f"{prefix}.{field}" if field else prefix)


def _check_seats(numbers: list[int], *, seats: int) -> None:
    if len(numbers) > seats:
        raise RulesError(
            "too_many_seats", f"this table has {seats} seats, got {len(numbers)}", param="seats"
        )
    seen: set[int] = set()
    for index, number in enumerate(numbers):
        if number > seats:
            raise RulesError(
                "invalid_seat",
                f"seat must be an integer from 1 to {seats}, got {number}",
                param=f"seats[{index}].seat",
            )
        if number in seen:
            raise RulesError(
                "duplicate_seat", f"seat {number} appears twice", param=f"seats[{index}].seat"
            )
        seen.add(number)


def round_id_of(value: object, *, param: str = "round_id") -> str:
    """A round id from a path: the same pattern as the bodies' `round_id`."""
    if not isinstance(value, str) or not _ROUND_ID.fullmatch(value):
        raise RulesError(
            "invalid_round_id",
            "round_id must be 1 to 64 characters: letters, digits and . _ : - "
            f"(starting with a letter or digit), got {value!r}",
            param=param,
        )
    return value


def parse_open(
    body: object, *, game: Game, seats: int, progressive_stake_cents: int | None
) -> OpenRequest:
    """Read an open: `{"round_id", "seats": [{"seat", "bets": {...}}]}` of the table's game.

    `progressive_stake_cents` is the pool's stake, or None when the table feeds no pool (then no
    progressive bet is accepted).
    """
    parsed: list[SeatBets] = []
    if game == Game.UTH:
        uth = read(UthOpen, body)
        _check_seats([entry.seat for entry in uth.seats], seats=seats)
        for index, entry in enumerate(uth.seats):
            param = f"seats[{index}].bets"
            wire = entry.bets
            if wire.progressive_cents and progressive_stake_cents is None:
                raise RulesError(
                    "invalid_bet",
                    "this table is linked to no progressive pool",
                    param=f"{param}.progressive_cents",
                )
            if wire.progressive_cents not in (0, progressive_stake_cents):
                raise RulesError(
                    "invalid_bet",
                    f"progressive_cents must be 0 or the pool's stake of "
                    f"{progressive_stake_cents} cents, got {wire.progressive_cents}",
                    param=f"{param}.progressive_cents",
                )
            try:
                bets: UthBets | StudBets = UthBets(
                    wire.ante_cents, wire.blind_cents, wire.trips_cents, wire.progressive_cents
                )
            except RulesError as error:
                raise _anchored(error, param) from None
            parsed.append(SeatBets(entry.seat, bets))
        return OpenRequest(round_id=uth.round_id, seats=tuple(parsed))
    stud = read(StudOpen, body)
    _check_seats([entry.seat for entry in stud.seats], seats=seats)
    for index, stud_seat in enumerate(stud.seats):
        try:
            bets = StudBets(stud_seat.bets.ante_cents, stud_seat.bets.bonus_cents)
        except RulesError as error:
            raise _anchored(error, f"seats[{index}].bets") from None
        parsed.append(SeatBets(stud_seat.seat, bets))
    return OpenRequest(round_id=stud.round_id, seats=tuple(parsed))


def _cards(texts: list[str]) -> tuple[Card, ...]:
    return tuple(parse_card(text) for text in texts)  # the pattern has checked each text


def uth_decision_of(wire: UthFold | UthPlayPreflop | UthPlayFlop | UthPlayRiver) -> UthDecision:
    """The engine's decision (the body's union has already held the street to its multiples)."""
    if isinstance(wire, UthFold):
        return UthDecision.fold()
    return UthDecision.play(Street(wire.street), wire.multiple)


def stud_decision_of(wire: StudFold | StudRaise | StudBuy) -> StudDecision:
    if isinstance(wire, StudBuy):
        return StudDecision.buy(parse_card(wire.discard), parse_card(wire.draw))
    return StudDecision.fold() if isinstance(wire, StudFold) else StudDecision.raise_bet()


def parse_result(body: object, *, game: Game, seats: int) -> ResultRequest:
    """Read a result. UTH: `{"board": [5], "dealer": [2], "seats": [{"seat", "cards": [2],
    "decision"}]}`; Stud: `{"dealer": [5], "seats": [{"seat", "cards": [5], "decision"}]}`.
    Every card of the round must be distinct, a Stud draw card included."""
    plays: list[SeatPlay] = []
    groups: dict[str, tuple[Card, ...]] = {}
    board: tuple[Card, ...] = ()
    if game == Game.UTH:
        uth = read(UthResult, body)
        board, dealer = _cards(uth.board), _cards(uth.dealer)
        groups.update(board=board, dealer=dealer)
        _check_seats([play.seat for play in uth.seats], seats=seats)
        for index, uth_play in enumerate(uth.seats):
            cards = _cards(uth_play.cards)
            groups[f"seats[{index}].cards"] = cards
            decision: UthDecision | StudDecision = uth_decision_of(uth_play.decision)
            plays.append(SeatPlay(uth_play.seat, cards, decision))
    else:
        stud = read(StudResult, body)
        dealer = _cards(stud.dealer)
        groups.update(dealer=dealer)
        _check_seats([play.seat for play in stud.seats], seats=seats)
        for index, stud_play in enumerate(stud.seats):
            cards = _cards(stud_play.cards)
            groups[f"seats[{index}].cards"] = cards
            decision = stud_decision_of(stud_play.decision)
            if decision.draw is not None:
                groups[f"seats[{index}].decision.draw"] = (decision.draw,)
            plays.append(SeatPlay(stud_play.seat, cards, decision))
    ensure_distinct(groups)
    return ResultRequest(board=board, dealer=dealer, seats=tuple(plays))


def parse_void(body: object) -> str:
    """A void's reason, trimmed."""
    return read(VoidBody, body).reason.strip()


# --- integrity flags ----------------------------------------------------------------------------


class IntegrityFlagQuery(Query):
    pool: Annotated[int | None, Field(ge=1, le=2**62), DIGITS] = None
    table: Annotated[int | None, Field(ge=1, le=2**62), DIGITS] = None
    kind: AwardKind | VoidSignal | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class IntegrityFlagPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Annotated[int, Field(ge=0)]
    results: list[IntegrityFlag]


# --- the void watch (tables.voids) --------------------------------------------------------------


class VoidShift(Body):
    """A shift of the window: the `index`-th (from 0, at midnight) of the club day `day`, from
    `start` to `end` (the current shift ends in the future); the pool's decided rounds opened in
    it and their voids."""

    day: date
    index: Annotated[int, Field(ge=0, le=23)]
    start: Instant
    end: Instant
    rounds: Annotated[int, Field(ge=0)]
    voids: Annotated[int, Field(ge=0)]


class VoidCell(Body):
    """A table's figures in one shift (or over the window): its decided rounds, their voids, the
    stakes those voids refunded (count and cents), and the voids expected at the shift's rate
    over all of the pool's tables (n x V / N, summed over the shifts for the window; 2 decimals,
    for reading: the flags carry the exact figure). `flag`: the latest integrity flag stored for
    this table and shift (or window), null if none."""

    rounds: Annotated[int, Field(ge=0)]
    voids: Annotated[int, Field(ge=0)]
    refunded_stakes: Annotated[int, Field(ge=0)]
    refunded_cents: Annotated[Cents, Field(ge=0)]
    expected: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]{2}$")]
    flag: Annotated[int | None, Field(ge=1)]


class VoidTable(Body):
    """A table of the pool with decided rounds in the window: its figures over the window, and in
    each shift (`shifts`, in the order of the watch's `shifts`: null where it had no round)."""

    table: Annotated[int, Field(ge=1)]
    table_name: str
    window: VoidCell
    shifts: list[VoidCell | None]


class VoidWatch(Body):
    """A pool's voids by table and by shift over the void watch's window (the last
    `INTEGRITY_VOID_SHIFTS` shifts of `shift_hours`, the current one included, in `time_zone`),
    as the integrity check reads them, and the pool's latest void flags."""

    pool: Annotated[int, Field(ge=1)]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    time_zone: str
    shift_hours: Annotated[int, Field(ge=1, le=24)]
    min_rounds: Annotated[int, Field(ge=1, description="fewer decided rounds: not tested")]
    window_from: Instant
    window_to: Instant
    shifts: list[VoidShift]
    tables: list[VoidTable]
    flags: list[IntegrityFlag]


# --- reconciliation reports (tables.reconciliation) ---------------------------------------------


class ReconciliationQuery(Query):
    ok: Annotated[bool | None, Field(description="true: only ok runs; false: only failed")] = None
    daily: Annotated[
        bool | None, Field(description="true: only the daily reports; false: the periodic ones")
    ] = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class ReconciliationPool(Body):
    """A pool's figures as the run found them: `expected_units` is the meter identity's
    (the pool report's `meter_identity`); `identity` is `not_applicable` for a pool whose stake
    or meter share was changed (the identity assumes they never were)."""

    pool: int
    meter_cents: int
    meter_units: int
    expected_units: int
    identity: Literal["holds", "broken", "not_applicable"]
    balances: dict[AccountKind, int]


class ReconciliationBroken(Body):
    chain: str
    sequence: int | None


class Reconciliation(Body):
    """One reconciliation run's report: every pool recomputed from the journal, the chains (and
    their anchors) verified, each pool's meter identity checked. `problems` are the first 100,
    in the order found; `problem_count` counts them all; `first_broken` is the first chain that
    did not verify and the sequence where it broke."""

    id: Annotated[int, Field(ge=1)]
    ok: bool
    daily: bool
    run_key: str | None = Field(
        description="periodic:<task id> or daily:<UTC date> for a scheduled run; null by hand"
    )
    started_at: Instant
    finished_at: Instant
    chains: Annotated[int, Field(ge=0)]
    events: Annotated[int, Field(ge=0)]
    transfers: Annotated[int, Field(ge=0)]
    pool_count: Annotated[int, Field(ge=0)]
    anchors: Annotated[int, Field(ge=0, description="anchor files checked (JOURNAL_ANCHOR_DIR)")]
    first_broken: ReconciliationBroken | None
    problem_count: Annotated[int, Field(ge=0)]
    problems: list[str] = Field(max_length=100)
    pools: list[ReconciliationPool]


class ReconciliationPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Annotated[int, Field(ge=0)]
    results: list[Reconciliation]


# --- a pool's history for auditors (tables.selectors.pool_history) ------------------------------


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


class PoolHistory(Body):
    """A pool's story for auditors over a range of club days (`first_day`, `last_day` as asked;
    null: from the start, to today): the meter, the stakes, awards observed beside expected, the
    jackpots and their resets, and the latest reconciliation (its status, and this pool's figures
    in it: null when the pool was not in that run)."""

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
    reconciliation: ReconciliationStatus | None
    reconciled: ReconciliationPool | None


#: Each chart's rows, as its CSV's columns.
HISTORY_ROWS: dict[HistoryChart, type[Body]] = {
    HistoryChart.METER: MeterDay,
    HistoryChart.STAKES: StakeDay,
    HistoryChart.AWARDS: AwardFrequency,
    HistoryChart.HITS: HistoryHit,
}
