"""A terminal's round requests: an open (each seat's bets), a result (cards and decisions) or a
void, and the readers that turn them into the frozen domain requests the round lifecycle consumes.

Each body is a strict pydantic model per game (`UthOpen`, `StudOpen`, ...); the schema offers
both games (`OpenBody`, `ResultBody`: anyOf), and the reader validates against the table's own
game, so a Stud table refuses UTH bets naming the field (`seats[0].bets.blind_cents`). The
readers then build `OpenRequest` and `ResultRequest`, whose engine values check the rules (Blind
== Ante, the multiples of each street, ...).

Invariants: what needs the table (its seat count, whether it feeds a pool, the pool's stake) is
checked here, before the engine sees a value; what needs the stored round (the result's seats are
the open's) is checked by `tables.rounds`. Every card of a round is distinct, a Stud draw
included. An error names its place in the body (`param`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field, RootModel

from core.codes import ErrorCode
from core.wire import Body, NonBlank, Refusal, read
from rules.cards import Card, ensure_distinct, parse_card
from rules.errors import RulesError
from rules.stud import StudBets, StudDecision
from rules.uth import Street, UthBets, UthDecision
from tables.bodies.seats import (
    StudBuy,
    StudFold,
    StudRaise,
    StudSeatBets,
    StudSeatPlay,
    UthFold,
    UthPlayFlop,
    UthPlayPreflop,
    UthPlayRiver,
    UthSeatBets,
    UthSeatPlay,
)
from tables.bodies.vocabulary import MAX_REASON, MAXSEATS, SEATS, FiveCards, RoundId, TwoCards
from tables.models import Game


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
