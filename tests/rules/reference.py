"""An independent, deliberately slow poker hand evaluator, used only as the tests' oracle.

It shares no code with ``rules``: it reads card *text* ('As', 'Td') itself and values a
five-card hand as a tuple ``(category, tiebreak...)`` built from rank counts, the textbook way,
so that Python's tuple comparison orders hands exactly as the rules do. A hand of 6 or 7 cards
is worth the best of its five-card subsets, found by trying them all.

Categories are numbered as the rules number them: 0 high card ... 8 straight flush,
9 royal flush.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

RANK_ORDER = "23456789TJQKA"
SUIT_LETTERS = "cdhs"
ALL_CARDS = tuple(rank + suit for rank in RANK_ORDER for suit in SUIT_LETTERS)

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH = 0, 1, 2, 3, 4, 5
FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL_FLUSH = 6, 7, 8, 9


def value5(cards: Iterable[str]) -> tuple[int, ...]:
    """(category, tiebreak...) of exactly five distinct cards given as text."""
    hand = list(cards)
    assert len(hand) == 5 and len(set(hand)) == 5, hand
    values = sorted((RANK_ORDER.index(card[0]) + 2 for card in hand), reverse=True)  # 2..14
    is_flush = len({card[1] for card in hand}) == 1

    top_of_straight = 0
    if len(set(values)) == 5:
        if values[0] - values[4] == 4:
            top_of_straight = values[0]
        elif values == [14, 5, 4, 3, 2]:  # the wheel, five-high
            top_of_straight = 5

    # Groups of equal ranks, biggest group first, then higher rank first.
    groups = sorted({(values.count(v), v) for v in values}, reverse=True)
    sizes = [size for size, _ in groups]
    by_group = [value for _, value in groups]

    if top_of_straight and is_flush:
        return (ROYAL_FLUSH,) if top_of_straight == 14 else (STRAIGHT_FLUSH, top_of_straight)
    if sizes == [4, 1]:
        return (QUADS, *by_group)
    if sizes == [3, 2]:
        return (FULL_HOUSE, *by_group)
    if is_flush:
        return (FLUSH, *values)
    if top_of_straight:
        return (STRAIGHT, top_of_straight)
    if sizes == [3, 1, 1]:
        return (TRIPS, *by_group)
    if sizes == [2, 2, 1]:
        return (TWO_PAIR, *by_group)
    if sizes == [2, 1, 1, 1]:
        return (PAIR, *by_group)
    return (HIGH_CARD, *values)


def best_value(cards: Iterable[str]) -> tuple[int, ...]:
    """Value of the best five of 5, 6 or 7 distinct cards given as text."""
    hand = list(cards)
    assert 5 <= len(hand) <= 7 and len(set(hand)) == len(hand), hand
    return max(value5(five) for five in combinations(hand, 5))


def compare(left: Iterable[str], right: Iterable[str]) -> int:
    """-1, 0 or 1 as the left hand loses to, ties or beats the right hand."""
    a, b = best_value(left), best_value(right)
    return (a > b) - (a < b)
