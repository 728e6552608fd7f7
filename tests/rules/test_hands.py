"""Hand values: golden counts over all five-card hands, the independent reference, worked
examples, properties (hypothesis) and bad input."""

from __future__ import annotations

import doctest
import random
import subprocess
import sys
from collections.abc import Sequence
from itertools import combinations, pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from rules import hands as hands_module
from rules.batch import categories_batch, rank5_batch, rank7_batch
from rules.cards import DECK, Card, parse_card, parse_cards
from rules.enumeration import combinations_array, five_card_category_counts
from rules.errors import RulesError
from rules.hands import RANK_COUNT, Category, HandValue, category_of, evaluate, rank7, rank_of
from tests.rules import reference

# One process builds this module's fixtures (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("tests/rules/test_hands.py")

FIVE_CARD_COUNTS = {
    Category.ROYAL_FLUSH: 4,
    Category.STRAIGHT_FLUSH: 36,
    Category.FOUR_OF_A_KIND: 624,
    Category.FULL_HOUSE: 3_744,
    Category.FLUSH: 5_108,
    Category.STRAIGHT: 10_200,
    Category.THREE_OF_A_KIND: 54_912,
    Category.TWO_PAIR: 123_552,
    Category.PAIR: 1_098_240,
    Category.HIGH_CARD: 1_302_540,
}
DISTINCT_RANKS_PER_CATEGORY = [1277, 2860, 858, 858, 10, 1277, 156, 156, 9, 1]


def hand(text: str) -> tuple[Card, ...]:
    """'As Ks Qs Js Ts' -> cards."""
    return parse_cards(text.split(), param="cards", count=(5, 7))


def texts(cards: Sequence[Card]) -> list[str]:
    return [str(card) for card in cards]


def sign(number: int) -> int:
    return (number > 0) - (number < 0)


# --- Exhaustive five-card checks ----------------------------------------------------------


@pytest.fixture(scope="module")
def all_fives() -> tuple[NDArray[np.uint8], NDArray[np.uint16]]:
    rows = combinations_array(5)
    return rows, rank5_batch(rows)


def test_five_card_category_counts() -> None:
    assert five_card_category_counts() == FIVE_CARD_COUNTS
    assert sum(FIVE_CARD_COUNTS.values()) == 2_598_960


def test_all_five_card_hands_give_exactly_7462_ranks(
    all_fives: tuple[NDArray[np.uint8], NDArray[np.uint16]],
) -> None:
    rows, ranks = all_fives
    assert rows.shape == (2_598_960, 5)
    assert np.array_equal(np.unique(ranks), np.arange(1, RANK_COUNT + 1))
    histogram = np.bincount(categories_batch(ranks), minlength=10)
    assert {Category(c): int(n) for c, n in enumerate(histogram)} == FIVE_CARD_COUNTS
    categories_of_ranks = categories_batch(np.arange(1, RANK_COUNT + 1))
    assert np.bincount(categories_of_ranks).tolist() == DISTINCT_RANKS_PER_CATEGORY


def test_five_card_ranks_match_the_reference_on_every_hand(
    all_fives: tuple[NDArray[np.uint8], NDArray[np.uint16]],
) -> None:
    """Every 5-card hand's rank is a function of (its ranks, flush or not), and over those
    7,462 classes the rank orders exactly as the reference does."""
    rows, ranks = all_fives
    card_ranks = (rows >> 2).astype(np.int64)  # rows are ascending, so ranks are sorted
    suits = rows & 3
    flush = (suits == suits[:, :1]).all(axis=1)
    shape_code = (card_ranks * 13 ** np.arange(5)).sum(axis=1) * 2 + flush
    codes, first = np.unique(shape_code, return_index=True)
    assert len(codes) == RANK_COUNT
    # Same class => same rank: the (class, rank) pairs are as many as the classes.
    assert len(np.unique(shape_code * 8192 + ranks)) == RANK_COUNT
    # One representative per class: ranks strictly increase with the reference value.
    representatives = sorted(
        (int(ranks[i]), reference.value5(texts([DECK[c] for c in rows[i]]))) for i in first
    )
    values = [value for _, value in representatives]
    assert [rank for rank, _ in representatives] == list(range(1, RANK_COUNT + 1))
    assert all(low < high for low, high in pairwise(values))
    for rank, value in representatives:
        assert category_of(rank) == Category(value[0])


# --- Scalar path against batch path -------------------------------------------------------


def random_hands(count: int, size: int, seed: int) -> NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :size]


def test_rank7_agrees_with_batch_on_a_big_sample() -> None:
    rows = random_hands(200_000, 7, seed=7)
    assert [rank7(*row) for row in rows.tolist()] == rank7_batch(rows).tolist()


def test_rank_of_five_cards_agrees_with_batch() -> None:
    rows = random_hands(30_000, 5, seed=5)
    scalar = [rank_of([DECK[i] for i in row]) for row in rows.tolist()]
    assert scalar == rank5_batch(rows).tolist()


def test_rank_of_six_cards_is_the_best_five() -> None:
    rows = random_hands(20_000, 6, seed=6)
    subsets = np.stack([rank5_batch(rows[:, list(five)]) for five in combinations(range(6), 5)])
    scalar = [rank_of([DECK[i] for i in row]) for row in rows.tolist()]
    assert scalar == subsets.max(axis=0).tolist()


def test_seven_card_sample_orders_like_the_reference() -> None:
    """Same rank <=> same reference value, and sorting by rank sorts the reference values."""
    rows = random_hands(4_000, 7, seed=77).tolist()
    pairs = sorted(
        (rank7(*row), reference.best_value(texts([DECK[i] for i in row]))) for row in rows
    )
    for (rank_a, value_a), (rank_b, value_b) in pairwise(pairs):
        assert (rank_a == rank_b) == (value_a == value_b)
        assert value_a <= value_b


# --- Properties ---------------------------------------------------------------------------

ALL_CARDS = list(DECK)


@st.composite
def card_sets(draw: st.DrawFn, size: int = 7) -> list[Card]:
    """Distinct cards; half the time drawn from a pool rich in straights, flushes and sets."""
    if draw(st.booleans()):
        return draw(st.lists(st.sampled_from(ALL_CARDS), min_size=size, max_size=size, unique=True))
    low = draw(st.integers(min_value=1, max_value=10))  # 1: the window A-2-3-4-5
    window = {14 if rank == 1 else rank for rank in range(low, low + 5)}
    suit = draw(st.sampled_from("cdhs"))
    pool = [card for card in DECK if card.rank in window or card.suit == suit]
    return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size, unique=True))


@settings(max_examples=400, deadline=None)
@given(card_sets(), card_sets())
def test_ordering_matches_the_reference(left: list[Card], right: list[Card]) -> None:
    ours = sign(rank_of(left) - rank_of(right))
    assert ours == reference.compare(texts(left), texts(right))


@settings(max_examples=400, deadline=None)
@given(card_sets())
def test_best_of_seven_is_the_best_of_its_21_fives(cards: list[Card]) -> None:
    best = max(rank_of(five) for five in combinations(cards, 5))
    assert rank7(*(card.index for card in cards)) == best == rank_of(cards)
    assert category_of(best) == Category(reference.best_value(texts(cards))[0])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([5, 6, 7]).flatmap(card_sets))
def test_best_five_is_a_subset_with_the_same_rank(cards: list[Card]) -> None:
    value = evaluate(cards)
    assert isinstance(value, HandValue)
    assert len(value.best_five) == 5
    assert set(value.best_five) <= set(cards)
    assert value.rank == rank_of(cards) == rank_of(value.best_five)
    assert value.category == category_of(value.rank)
    assert evaluate(value.best_five) == value


@settings(max_examples=300, deadline=None)
@given(card_sets(), st.permutations("cdhs"), st.randoms(use_true_random=False))
def test_invariant_under_suit_relabelling_and_card_order(
    cards: list[Card], suits: list[str], shuffler: random.Random
) -> None:
    relabel = dict(zip("cdhs", suits, strict=True))
    renamed = [parse_card(card.rank.symbol + relabel[card.suit.value]) for card in cards]
    assert rank_of(renamed) == rank_of(cards)
    shuffled = list(cards)
    shuffler.shuffle(shuffled)
    assert evaluate(shuffled) == evaluate(cards)


@settings(max_examples=300, deadline=None)
@given(card_sets(), card_sets())
def test_a_higher_category_means_a_higher_rank(left: list[Card], right: list[Card]) -> None:
    a, b = evaluate(left), evaluate(right)
    if a.category > b.category:
        assert a.rank > b.rank
    if a.rank >= b.rank:
        assert a.category >= b.category


def test_category_bands() -> None:
    firsts = [1, 1278, 4138, 4996, 5854, 5864, 7141, 7297, 7453, 7462]
    for category, first in zip(Category, firsts, strict=True):
        assert category_of(first) == category
        if first > 1:
            assert category_of(first - 1) == Category(category - 1)
    for bad in (0, -1, 7463):
        with pytest.raises(ValueError, match="is not a hand rank"):
            category_of(bad)


def test_category_labels() -> None:
    assert [category.label for category in Category] == [
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


# --- Worked examples ----------------------------------------------------------------------


def test_the_wheel_is_the_lowest_straight() -> None:
    wheel = evaluate(hand("Ah 2c 3d 4s 5h"))
    six_high = evaluate(hand("2c 3d 4s 5h 6c"))
    assert wheel.category == six_high.category == Category.STRAIGHT
    assert wheel.rank == 5854  # the first straight
    assert wheel.rank < six_high.rank
    assert texts(wheel.best_five) == ["5h", "4s", "3d", "2c", "Ah"]
    assert texts(six_high.best_five) == ["6c", "5h", "4s", "3d", "2c"]
    # Trips lose to the wheel, the wheel loses to any other straight.
    assert rank_of(hand("Ah Ad As Kc Qd")) < wheel.rank


def test_steel_wheel_is_the_lowest_straight_flush() -> None:
    steel = evaluate(hand("5h 4h 3h 2h Ah Kh Ks"))
    assert steel.category == Category.STRAIGHT_FLUSH
    assert steel.rank == 7453
    assert texts(steel.best_five) == ["5h", "4h", "3h", "2h", "Ah"]
    assert steel.rank < rank_of(hand("6d 5d 4d 3d 2d"))
    assert steel.rank > rank_of(hand("As Ah Ad Ac Kd"))  # beats the best four of a kind


def test_no_wrap_around_straight() -> None:
    value = evaluate(hand("Qs Kd Ah 2c 3d"))
    assert value.category == Category.HIGH_CARD
    assert texts(value.best_five) == ["Ah", "Kd", "Qs", "3d", "2c"]
    assert evaluate(hand("Jh Qs Kd Ah 2c 3d 8h")).category == Category.HIGH_CARD
    assert evaluate(hand("Qh Kh Ah 2h 3h")).category == Category.FLUSH


def test_royal_flush_beats_a_king_high_straight_flush() -> None:
    royal = evaluate(hand("As Ks Qs Js Ts"))
    king_high = evaluate(hand("Kh Qh Jh Th 9h"))
    assert royal.category == Category.ROYAL_FLUSH and royal.rank == 7462
    assert king_high.category == Category.STRAIGHT_FLUSH and king_high.rank == 7461
    # Seven cards holding both: the royal plays.
    assert evaluate(hand("As Ks Qs Js Ts 9s 8s")).category == Category.ROYAL_FLUSH


def test_kickers_decide() -> None:
    assert rank_of(hand("Ac Ad Kh Qs Jc")) > rank_of(hand("As Ah Kd Qc Tc"))
    assert rank_of(hand("Kc Kd 7h 7s 9c")) > rank_of(hand("Kh Ks 7c 7d 8c"))
    assert rank_of(hand("9c 9d 9h As 2c")) > rank_of(hand("9c 9d 9h Ks Qc"))
    assert rank_of(hand("Ac Kd 9h 7s 3c")) > rank_of(hand("Ah Kh 9d 7c 2s"))
    # A kicker beyond the best five does not count.
    assert rank_of(hand("Ac Ad Kh Qs Jc 3d 2h")) == rank_of(hand("As Ah Kd Qc Js 4d 5c"))


def test_equal_best_fives_with_different_suits_tie() -> None:
    assert rank_of(hand("Ac Kd 9h 7s 3c")) == rank_of(hand("Ah Ks 9d 7c 3d"))
    board = "2c 7d 9h Js Qc"
    # Both players' best five are board + an ace and a king-kicker pair combination.
    assert rank_of(hand(f"{board} Ad Kh")) == rank_of(hand(f"{board} Ah Kd"))
    # The board plays for both: tie.
    board = "Ts Js Qd Kc Ah"
    assert rank_of(hand(f"{board} 2c 3d")) == rank_of(hand(f"{board} 4h 5c"))


def test_best_five_reading_order() -> None:
    def read(text: str) -> list[str]:
        return texts(evaluate(hand(text)).best_five)

    assert read("9h 2c 9s 9d Ts 9c 3d") == ["9s", "9h", "9d", "9c", "Ts"]
    assert read("Kd 2c Kh As Ks Ad 3c") == ["Ks", "Kh", "Kd", "As", "Ad"]
    assert read("Ah Ad Ac Kc Kd Ks 2c") == ["Ah", "Ad", "Ac", "Ks", "Kd"]  # AAA over KKK
    assert read("5c 5d Qh Qs 2c 2d Ah") == ["Qs", "Qh", "5d", "5c", "Ah"]  # third pair idle
    assert read("Kc Kd Qh Qs 5c 5d Ah") == ["Kd", "Kc", "Qs", "Qh", "Ah"]
    assert read("Kc Kd Qh Qs 5c 5d 2h") == ["Kd", "Kc", "Qs", "Qh", "5d"]
    assert read("9c Tc Jd Qh Ks 2c 3d") == ["Ks", "Qh", "Jd", "Tc", "9c"]
    assert read("2h 9h Kh 4h 7h Th 3c") == ["Kh", "Th", "9h", "7h", "4h"]
    assert read("7c 7d 7h 2s 9c Kd 4h") == ["7h", "7d", "7c", "Kd", "9c"]


def test_seven_card_combinations() -> None:
    # Flush and straight together: the flush plays.
    assert evaluate(hand("4h 5h 6c 7h 8d 2h Kh")).category == Category.FLUSH
    # Two sets make a full house; quads with a set take the best kicker.
    assert evaluate(hand("Ah Ad Ac Kc Kd Ks 2c")).category == Category.FULL_HOUSE
    assert texts(evaluate(hand("8c 8d 8h 8s Kc Kd Ks")).best_five)[-1] == "Ks"
    # Six suited cards: the top five suited cards; a straight flush hiding in a flush.
    assert texts(evaluate(hand("2h 4h 6h 8h Th Qh 3c")).best_five) == [
        "Qh", "Th", "8h", "6h", "4h"
    ]  # fmt: skip
    assert evaluate(hand("2h 3h 4h 5h 6h 9h Jh")).category == Category.STRAIGHT_FLUSH


def test_rank_scale_end_points() -> None:
    assert rank_of(hand("7c 5d 4h 3s 2c")) == 1
    assert rank_of(hand("7c 5c 4c 3c 2c")) == 5864  # the lowest flush
    assert rank_of(hand("2c 2d 3h 4s 5c")) == 1278  # the lowest pair
    assert rank_of(hand("Ac Ad Ah As Kd")) == 7452  # the best four of a kind
    assert rank_of(hand("Ac Kd Qh Js 9c")) == 1277  # the best high card


def test_first_use_from_several_threads_builds_once() -> None:
    script = (
        "import threading\n"
        "import rules.hands as hands\n"
        "import rules._tables as tables\n"
        "results = []\n"
        "def work():\n"
        "    results.append(hands.rank7(51, 47, 43, 39, 35, 0, 1))\n"
        "threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "for thread in threads: thread.start()\n"
        "for thread in threads: thread.join()\n"
        "print(results == [7462] * 8, len(tables._built), len(hands._RANK7) > 7_000_000)\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "1", "True"], result.stderr


# --- Bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 4, 8, 52])
def test_wrong_number_of_cards(count: int) -> None:
    cards = list(DECK[:count])
    for function in (evaluate, rank_of):
        with pytest.raises(RulesError) as caught:
            function(cards)
        error = caught.value
        assert (error.code, error.param) == ("wrong_card_count", "cards")
        assert error.message == f"a hand must hold 5 to 7 cards, got {count}"


def test_duplicate_cards() -> None:
    cards = [*hand("As Kd Qh Jc Ts 9d"), parse_card("Kd")]
    for function in (evaluate, rank_of):
        with pytest.raises(RulesError) as caught:
            function(cards)
        error = caught.value
        assert (error.code, error.param) == ("duplicate_card", "cards[6]")
        assert error.message == "card Kd appears twice: in cards[1] and cards[6]"


def test_rank7_index_above_51_raises() -> None:
    with pytest.raises(IndexError):
        rank7(52, 0, 1, 2, 3, 4, 5)


def test_non_cards() -> None:
    cards: list[object] = [*parse_cards(["As", "Kd", "Qh", "Jc"], param="cards", count=4), "Ts"]
    with pytest.raises(RulesError) as caught:
        evaluate(cards)  # type: ignore[arg-type]
    error = caught.value
    assert (error.code, error.param, error.message) == (
        "invalid_card",
        "cards[4]",
        "'Ts' is not a Card",
    )


def test_doctests() -> None:
    result = doctest.testmod(hands_module)
    assert result.failed == 0
    assert result.attempted > 0
