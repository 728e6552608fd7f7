"""The wire readers of a seat's cards, bets and decision (tables.bodies through core.wire).

These cases were the engine's JSON parsers' (`from_mapping`, `parse_uth_decision`,
`parse_stud_decision`, `parse_stake_cents`, `parse_cards` on non-lists) before the engine took
typed values only: the same inputs, refused with the same codes at the same params. The rules
the engine keeps (Blind == Ante, a discard from the hand) are checked after the read, as the
API does. Messages are pydantic's, written by `core.wire`: each names the field at fault.

No database: the readers are pure functions of the body.
"""

from __future__ import annotations

from typing import Annotated

import pytest

from core.errors import ApiError
from core.wire import Body, read
from rules.boxes import MAX_BET_CENTS
from rules.cards import parse_card
from rules.errors import RulesError
from rules.stud import StudBets, StudDecision
from rules.uth import Street, UthBets, UthDecision
from tables.bodies.round_requests import parse_result, stud_decision_of, uth_decision_of
from tables.bodies.seats import (
    DECISION,
    StudBetsBody,
    StudDecisionBody,
    UthBetsBody,
    UthDecisionBody,
)
from tables.bodies.vocabulary import BET, FiveCards, TwoCards
from tables.models import Game


class UthPlay(Body):
    decision: Annotated[UthDecisionBody, DECISION]


class StudPlay(Body):
    decision: Annotated[StudDecisionBody, DECISION]


class UthStakes(Body):
    bets: Annotated[UthBetsBody, BET]


class StudStakes(Body):
    bets: Annotated[StudBetsBody, BET]


class Deal(Body):
    board: FiveCards
    player: TwoCards


def refused(model: type[Body], body: object) -> tuple[str, str | None, str]:
    with pytest.raises(ApiError) as caught:
        read(model, body)
    return caught.value.code, caught.value.param, caught.value.message


def uth_bets(raw: object) -> UthBets:
    """As the round's reader does: the wire's shape, then the engine's rules."""
    bets = read(UthStakes, {"bets": raw}).bets
    return UthBets(bets.ante_cents, bets.blind_cents, bets.trips_cents, bets.progressive_cents)


# --- UTH decisions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "decision"),
    [
        (
            {"action": "play", "street": "preflop", "multiple": 4},
            UthDecision.play(Street.PREFLOP, 4),
        ),
        (
            {"action": "play", "street": "preflop", "multiple": 3},
            UthDecision.play(Street.PREFLOP, 3),
        ),
        ({"action": "play", "street": "flop", "multiple": 2}, UthDecision.play(Street.FLOP, 2)),
        ({"action": "play", "street": "river", "multiple": 1}, UthDecision.play(Street.RIVER, 1)),
        ({"action": "fold"}, UthDecision.fold()),
        ({"action": "fold", "street": None}, UthDecision.fold()),  # as terminals always could
        ({"action": "fold", "street": None, "multiple": None}, UthDecision.fold()),
    ],
)
def test_every_legal_uth_decision(raw: dict[str, object], decision: UthDecision) -> None:
    assert uth_decision_of(read(UthPlay, {"decision": raw}).decision) == decision


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"action": "play", "street": "flop", "multiple": 3}, "decision.multiple"),
        ({"action": "play", "street": "preflop", "multiple": 1}, "decision.multiple"),
        ({"action": "play", "street": "preflop", "multiple": 2}, "decision.multiple"),
        ({"action": "play", "street": "river", "multiple": 2}, "decision.multiple"),
        ({"action": "play", "street": "flop"}, "decision.multiple"),
        ({"action": "play", "multiple": 2}, "decision.street"),
        ({"action": "play", "street": "turn", "multiple": 1}, "decision.street"),
        ({"action": "play", "street": "PREFLOP", "multiple": 4}, "decision.street"),
        ({"action": "play", "street": "flop", "multiple": True}, "decision.multiple"),
        ({"action": "play", "street": "flop", "multiple": 2.0}, "decision.multiple"),
        ({"action": "play", "street": "flop", "multiple": "2"}, "decision.multiple"),
        ({"action": "check"}, "decision.action"),
        ({"action": 1}, "decision.action"),
        ({}, "decision.action"),
        ({"action": "fold", "street": "river"}, "decision.street"),
        ({"action": "fold", "multiple": 1}, "decision.multiple"),
        ({"action": "fold", "amount": 1}, "decision.amount"),
        ({"action": "check", "amount": 1}, "decision.amount"),  # the unknown field first
        ("fold", "decision"),
    ],
)
def test_illegal_uth_decisions_are_refused(raw: object, param: str) -> None:
    code, at, message = refused(UthPlay, {"decision": raw})
    assert (code, at) == ("invalid_decision", param)
    assert param.rpartition(".")[2] in message


def test_a_seats_decision_is_named_by_its_place() -> None:
    seat = {"seat": 4, "cards": ["2c", "3c"], "decision": {"action": "play", "street": "flop"}}
    body = {"board": ["Ah", "Kh", "Qh", "Jh", "9c"], "dealer": ["4d", "5d"], "seats": [seat]}
    with pytest.raises(ApiError) as caught:
        parse_result(body, game=Game.UTH, seats=7)
    assert (caught.value.code, caught.value.param) == (
        "invalid_decision",
        "seats[0].decision.multiple",
    )


# --- Stud decisions ---------------------------------------------------------------------------


def test_every_legal_stud_decision() -> None:
    def decided(raw: dict[str, object]) -> StudDecision:
        return stud_decision_of(read(StudPlay, {"decision": raw}).decision)

    assert decided({"action": "fold"}) == StudDecision.fold()
    assert decided({"action": "raise"}) == StudDecision.raise_bet()
    assert decided({"action": "buy", "discard": "7c", "draw": "Kd"}) == StudDecision.buy(
        parse_card("7c"), parse_card("Kd")
    )


@pytest.mark.parametrize(
    ("raw", "code", "param"),
    [
        ({"action": "buy", "discard": "7c"}, "invalid_decision", "decision.draw"),
        ({"action": "buy", "draw": "7c"}, "invalid_decision", "decision.discard"),
        ({"action": "raise", "discard": "7c"}, "invalid_decision", "decision.discard"),
        ({"action": "buy", "discard": "7x", "draw": "Kd"}, "invalid_card", "decision.discard"),
        ({"action": "buy", "discard": "7c", "draw": 7}, "invalid_card", "decision.draw"),
        ({"action": "call"}, "invalid_decision", "decision.action"),
        ({}, "invalid_decision", "decision.action"),
        ({"action": "raise", "amount": 200}, "invalid_decision", "decision.amount"),
        (["raise"], "invalid_decision", "decision"),
    ],
)
def test_illegal_stud_decisions_are_refused(raw: object, code: str, param: str) -> None:
    assert refused(StudPlay, {"decision": raw})[:2] == (code, param)


def test_a_stud_seats_decision_is_named_by_its_place() -> None:
    raising = {"seat": 1, "cards": ["2s", "3s", "4s", "5s", "7s"], "decision": {"action": "raise"}}
    buying = {
        "seat": 2,
        "cards": ["2c", "3c", "4c", "5c", "7d"],
        "decision": {"action": "buy", "discard": "7d"},
    }
    body = {"dealer": ["Ah", "Kh", "Qh", "Jh", "9c"], "seats": [raising, buying]}
    with pytest.raises(ApiError) as caught:
        parse_result(body, game=Game.STUD, seats=7)
    assert (caught.value.code, caught.value.param) == ("invalid_decision", "seats[1].decision.draw")


# --- bets -------------------------------------------------------------------------------------


def test_uth_bets_read() -> None:
    raw = {"ante_cents": 500, "blind_cents": 500, "trips_cents": 100, "progressive_cents": 500}
    assert uth_bets(raw) == UthBets(500, 500, 100, 500)
    assert uth_bets({"ante_cents": 500, "blind_cents": 500}) == UthBets(500, 500)


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"ante_cents": 100, "blind_cents": 50}, "bets.blind_cents"),  # the engine's rule
        ({"ante_cents": 0, "blind_cents": 0}, "bets.ante_cents"),
        ({"ante_cents": -100, "blind_cents": -100}, "bets.ante_cents"),
        ({"ante_cents": True, "blind_cents": True}, "bets.ante_cents"),
        ({"ante_cents": 100.0, "blind_cents": 100}, "bets.ante_cents"),
        ({"ante_cents": "100", "blind_cents": 100}, "bets.ante_cents"),
        ({"ante_cents": None, "blind_cents": 100}, "bets.ante_cents"),
        ({"blind_cents": 100}, "bets.ante_cents"),
        ({"ante_cents": 100}, "bets.blind_cents"),
        ({"ante_cents": 100, "blind_cents": 100, "trips_cents": -1}, "bets.trips_cents"),
        ({"ante_cents": 100, "blind_cents": 100, "trips_cents": 0.5}, "bets.trips_cents"),
        (
            {"ante_cents": 100, "blind_cents": 100, "progressive_cents": False},
            "bets.progressive_cents",
        ),
        ({"ante_cents": MAX_BET_CENTS + 1, "blind_cents": MAX_BET_CENTS + 1}, "bets.ante_cents"),
        ({"ante_cents": 100, "blind_cents": 100, "play_cents": 400}, "bets.play_cents"),
        ([100, 100], "bets"),
    ],
)
def test_illegal_uth_bets_are_refused(raw: object, param: str) -> None:
    with pytest.raises((ApiError, RulesError)) as caught:
        uth_bets(raw)
    assert (caught.value.code, caught.value.param) == ("invalid_bet", param)  # type: ignore[union-attr]


def test_the_bounds_of_a_stake_are_accepted() -> None:
    assert uth_bets({"ante_cents": 1, "blind_cents": 1}) == UthBets(1, 1)
    top = {"ante_cents": MAX_BET_CENTS, "blind_cents": MAX_BET_CENTS, "trips_cents": MAX_BET_CENTS}
    assert uth_bets(top) == UthBets(MAX_BET_CENTS, MAX_BET_CENTS, MAX_BET_CENTS)
    assert uth_bets({"ante_cents": 1, "blind_cents": 1, "trips_cents": 0}).trips_cents == 0


def test_stud_bets_read_and_refused() -> None:
    def stud_bets(raw: object) -> StudBets:
        bets = read(StudStakes, {"bets": raw}).bets
        return StudBets(bets.ante_cents, bets.bonus_cents)

    assert stud_bets({"ante_cents": 500}) == StudBets(500, 0)
    assert stud_bets({"ante_cents": 500, "bonus_cents": 100}) == StudBets(500, 100)
    for raw, param in [
        ({"ante_cents": 0}, "bets.ante_cents"),
        ({}, "bets.ante_cents"),
        ({"ante_cents": 1.5}, "bets.ante_cents"),
        ({"ante_cents": 100, "bonus_cents": -1}, "bets.bonus_cents"),
        ({"ante_cents": 100, "raise_cents": 200}, "bets.raise_cents"),
    ]:
        assert refused(StudStakes, {"bets": raw})[:2] == ("invalid_bet", param), raw


# --- cards ------------------------------------------------------------------------------------

BOARD = ["Ah", "Kh", "Qh", "Jh", "9c"]


@pytest.mark.parametrize("board", ["AsKd", "As", None, 5, {"a": "As"}, [["As"]] * 5])
def test_cards_must_be_a_list_of_texts(board: object) -> None:
    code, param, _ = refused(Deal, {"board": board, "player": ["2c", "3c"]})
    assert code == "invalid_card"
    assert param == ("board[0]" if isinstance(board, list) else "board")


@pytest.mark.parametrize("card", [10, None, ["As"], "as", "10s", " As"])
def test_a_card_that_is_not_a_card_text_is_named(card: object) -> None:
    assert refused(Deal, {"board": BOARD, "player": ["2c", card]})[:2] == (
        "invalid_card",
        "player[1]",
    )


@pytest.mark.parametrize(
    ("player", "code"), [(["2c"], "wrong_card_count"), ([], "wrong_card_count")]
)
def test_a_wrong_count_is_its_own_code(player: list[str], code: str) -> None:
    assert refused(Deal, {"board": BOARD, "player": player})[:2] == (code, "player")
