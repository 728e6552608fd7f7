"""Cards: the deck numbering, strict parsing, and the duplicate checks with their exact errors."""

from __future__ import annotations

import doctest
import re

import pytest

from rules import cards as cards_module
from rules import errors as errors_module
from rules.cards import (
    CARD_PATTERN,
    DECK,
    Card,
    Rank,
    Suit,
    ensure_distinct,
    parse_card,
    parse_cards,
)
from rules.errors import RulesError

SYNTAX = "expected a rank 2-9, T, J, Q, K or A followed by a suit c, d, h or s"


def test_deck_holds_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert [card.index for card in DECK] == list(range(52))
    assert list(DECK) == sorted(DECK)  # index order is Card order
    assert [Card.from_index(i) for i in range(52)] == list(DECK)
    assert str(DECK[0]) == "2c" and str(DECK[1]) == "2d" and str(DECK[51]) == "As"


def test_index_formula() -> None:
    # (rank - 2) * 4 + suit position, c=0 d=1 h=2 s=3
    assert parse_card("Td").index == (10 - 2) * 4 + 1
    assert parse_card("7h").index == (7 - 2) * 4 + 2
    assert Card(Rank.ACE, Suit.SPADES).index == 51


@pytest.mark.parametrize("index", [-1, 52, 100])
def test_from_index_rejects_out_of_range(index: int) -> None:
    with pytest.raises(ValueError, match="is not a card index"):
        Card.from_index(index)


def test_every_card_text_round_trips() -> None:
    for card in DECK:
        text = str(card)
        assert parse_card(text) is card
        assert text == card.rank.symbol + card.suit.value


def test_rank_symbols_and_suit_values() -> None:
    assert "".join(rank.symbol for rank in Rank) == "23456789TJQKA"
    assert [rank.value for rank in Rank] == list(range(2, 15))
    assert [suit.value for suit in Suit] == ["c", "d", "h", "s"]
    assert Suit("h") is Suit.HEARTS
    assert f"{Suit.HEARTS}" == "h"


def test_card_ordering_and_equality() -> None:
    assert parse_card("2s") < parse_card("3c")
    assert parse_card("Kc") < parse_card("Kd") < parse_card("Kh") < parse_card("Ks")
    assert Card(Rank.QUEEN, Suit.HEARTS) == parse_card("Qh")
    assert hash(Card(Rank.QUEEN, Suit.HEARTS)) == hash(parse_card("Qh"))
    assert repr(parse_card("Qh")) == "parse_card('Qh')"


def test_cards_are_frozen() -> None:
    card = parse_card("As")
    with pytest.raises(AttributeError):
        card.rank = Rank.KING  # type: ignore[misc]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("1s", "'1s'"),
        ("as", "'as'"),
        ("AS", "'AS'"),
        ("Ax", "'Ax'"),
        ("", "''"),
        ("Asd", "'Asd'"),
        ("10s", "'10s'"),
        (" As", "' As'"),
        ("sA", "'sA'"),
    ],
)
def test_parse_card_rejects_anything_else(value: str, shown: str) -> None:
    with pytest.raises(RulesError) as caught:
        parse_card(value, param="board[2]")
    error = caught.value
    assert error.code == "invalid_card"
    assert error.param == "board[2]"
    assert error.message == f"{shown} is not a card: {SYNTAX}"
    assert str(error) == error.message
    assert isinstance(error, ValueError)


def test_parse_card_default_param() -> None:
    with pytest.raises(RulesError) as caught:
        parse_card("Zz")
    assert caught.value.param == "card"


def test_parse_cards_happy_paths() -> None:
    hole = parse_cards(["As", "Kd"], param="seats[0].cards", count=2)
    assert hole == (parse_card("As"), parse_card("Kd"))
    assert len(parse_cards(("2c", "3c", "4c", "5c", "6c", "7c"), param="h", count=(5, 7))) == 6
    assert parse_cards([], param="h", count=0) == ()


def test_parse_cards_names_the_bad_card_by_its_index() -> None:
    with pytest.raises(RulesError) as caught:
        parse_cards(["As", "Kd", "1x"], param="board", count=(3, 5))
    error = caught.value
    assert (error.code, error.param) == ("invalid_card", "board[2]")
    assert error.message == f"'1x' is not a card: {SYNTAX}"


@pytest.mark.parametrize(
    ("texts", "count", "message"),
    [
        (["As"], 2, "seats[1].cards must hold 2 cards, got 1"),
        (["As", "Kd", "Qh"], 2, "seats[1].cards must hold 2 cards, got 3"),
        ([], 1, "seats[1].cards must hold 1 card, got 0"),
        (["As", "Kd"], (5, 7), "seats[1].cards must hold 5 to 7 cards, got 2"),
    ],
)
def test_parse_cards_wrong_count(
    texts: list[str], count: int | tuple[int, int], message: str
) -> None:
    with pytest.raises(RulesError) as caught:
        parse_cards(texts, param="seats[1].cards", count=count)
    error = caught.value
    assert (error.code, error.param, error.message) == (
        "wrong_card_count",
        "seats[1].cards",
        message,
    )


# Cards that are not texts, and card lists that are not lists, are the wire's: the body readers
# refuse them (tests/tables/test_bodies.py) before the engine sees a card.


def test_parse_cards_duplicate_reports_the_second_occurrence() -> None:
    with pytest.raises(RulesError) as caught:
        parse_cards(["Ah", "Kd", "Qs", "Ah", "2c"], param="board", count=5)
    error = caught.value
    assert (error.code, error.param) == ("duplicate_card", "board[3]")
    assert error.message == "card Ah appears twice: in board[0] and board[3]"


def test_ensure_distinct_across_groups() -> None:
    board = parse_cards(["2c", "3d", "4h", "5s", "6c"], param="board", count=5)
    dealer = parse_cards(["Ah", "Kd"], param="dealer", count=2)
    seat0 = parse_cards(["Qs", "Jh"], param="seats[0].cards", count=2)
    seat1 = parse_cards(["Ah", "Tc"], param="seats[1].cards", count=2)
    ensure_distinct({"board": board, "dealer": dealer, "seats[0].cards": seat0})
    with pytest.raises(RulesError) as caught:
        ensure_distinct(
            {"board": board, "dealer": dealer, "seats[0].cards": seat0, "seats[1].cards": seat1}
        )
    error = caught.value
    assert (error.code, error.param) == ("duplicate_card", "seats[1].cards[0]")
    assert error.message == "card Ah appears twice: in dealer[0] and seats[1].cards[0]"


def test_ensure_distinct_within_one_group_and_empty_groups() -> None:
    ensure_distinct({})
    ensure_distinct({"board": [], "dealer": []})
    card = parse_card("9h")
    with pytest.raises(RulesError) as caught:
        ensure_distinct({"board": [], "dealer": [card, card]})
    assert caught.value.param == "dealer[1]"
    assert caught.value.message == "card 9h appears twice: in dealer[0] and dealer[1]"


def test_rules_error_fields() -> None:
    error = RulesError("invalid_bet", "ante must be positive", param="seats[0].bets.ante")
    assert (error.code, error.message, error.param) == (
        "invalid_bet",
        "ante must be positive",
        "seats[0].bets.ante",
    )
    assert RulesError("invalid_decision", "no").param is None
    assert repr(error) == (
        "RulesError('invalid_bet', 'ante must be positive', param='seats[0].bets.ante')"
    )


@pytest.mark.parametrize("module", [cards_module, errors_module])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted > 0


def test_the_wires_card_pattern_matches_exactly_the_52_cards() -> None:
    texts = {rank + suit for rank in "0123456789TJQKAXtjqka" for suit in "cdhsCDHSx"}
    matching = {text for text in texts if re.fullmatch(CARD_PATTERN, text)}
    assert matching == {str(card) for card in DECK}
    assert len(matching) == 52
