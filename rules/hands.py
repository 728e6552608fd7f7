"""Poker hand values: the best five of 5, 6 or 7 cards, as a category and an exact rank.

Invariants:

- A hand's ``rank`` is an integer from 1 (7-5-4-3-2 offsuit, the worst five) to 7,462 (royal
  flush) over the standard 7,462 equivalence classes of five-card hands: a higher rank is a
  better hand and equal ranks are exact ties. Suits never break ties.
- Categories split the rank scale into contiguous bands (``category_of``): a higher category
  always means a higher rank. ``ROYAL_FLUSH`` is only the ace-high straight flush (rank 7,462).
- A-2-3-4-5 is the lowest straight and straight flush (the ace plays low, the hand is 5-high);
  there is no wrap-around: Q-K-A-2-3 is not a straight.
- A hand of 6 or 7 cards is worth its best five; ``HandValue.best_five`` are five of the input
  cards with exactly the hand's rank, in the order a dealer reads them.

Speed: :func:`rank7` is the hot path (card indices, no validation): a table-driven key-sum
evaluator (see ``rules._tables``). Its tables are built in memory on the first call of
any evaluating function in the process (about 0.2 s, ~65 MB for the Python lists); importing
this module builds nothing and does not import numpy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations
from typing import Final

from rules.cards import DECK, Card
from rules.errors import RulesError

__all__ = ["RANK_COUNT", "Category", "HandValue", "category_of", "evaluate", "rank7", "rank_of"]


class Category(IntEnum):
    """Hand categories, weakest first."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def label(self) -> str:
        """The category's name in lower snake case, as the API and paytables spell it.

        >>> Category.THREE_OF_A_KIND.label
        'three_of_a_kind'
        """
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class HandValue:
    """The value of a hand: its category, the five cards that make it, and its rank."""

    category: Category
    best_five: tuple[Card, ...]
    rank: int


# Lowest rank of each category; the numbers of distinct classes per category are
# 1277, 2860, 858, 858, 10, 1277, 156, 156, 9 and 1 (7,462 in all).
_CATEGORY_FIRST_RANK = (1, 1278, 4138, 4996, 5854, 5864, 7141, 7297, 7453, 7462)
RANK_COUNT = 7462
"""Number of distinct hand values: ranks run from 1 to RANK_COUNT."""
_BAND_ENDS = (*_CATEGORY_FIRST_RANK[1:], RANK_COUNT + 1)
# Indexed by rank; slot 0 (no hand has rank 0) only pads the tuple.
_CATEGORY_BY_RANK: tuple[Category, ...] = (
    Category.HIGH_CARD,
    *(
        category
        for category, first, end in zip(Category, _CATEGORY_FIRST_RANK, _BAND_ENDS, strict=True)
        for _ in range(end - first)
    ),
)


def category_of(rank: int) -> Category:
    """The category of a hand rank (1..7462).

    >>> category_of(1), category_of(7462)
    (<Category.HIGH_CARD: 0>, <Category.ROYAL_FLUSH: 9>)
    """
    if not 1 <= rank <= RANK_COUNT:
        raise ValueError(f"{rank!r} is not a hand rank: expected 1..{RANK_COUNT}")
    return _CATEGORY_BY_RANK[rank]


# --- Lookup tables -----------------------------------------------------------------------
# These containers are created empty at import and filled in place on first use, so that
# rank7 can bind them as default arguments (fast local access) without building at import.
# Built by _ensure_tables(); every field is read-only afterwards.
_CARD_KEY: list[int] = []  # card index -> (rank key << SUIT_SHIFT) + suit key
_FLUSH_BITS: list[tuple[int, ...] | None] = []  # 7-card suit-key sum -> flush suit's bits
_RANK7: list[int] = []  # 7-card rank-key sum -> best non-flush rank
_FLUSH_RANK: list[int] = []  # 13-bit ranks of one suit -> best flush rank (0 if < 5 bits)
_RANK_KEY: list[int] = []  # card index -> rank key (for 5 and 6 cards)
_RANK5: dict[int, int] = {}  # 5-card rank-key sum -> non-flush rank
_RANK6: dict[int, int] = {}  # 6-card rank-key sum -> best non-flush rank
_SUIT_MASK = 0xFF  # checked against rules._tables at build
_SUIT_SHIFT = 8
_build_lock = threading.Lock()


def _ensure_tables() -> None:
    """Fill the lookup tables (once per process; safe to call from several threads)."""
    if _CARD_KEY:
        return
    with _build_lock:
        if _CARD_KEY:
            return
        # Imported here, not at the top: it imports numpy, which plain imports must not pay.
        from rules import _tables

        tables = _tables.get()
        if (_tables.SUIT_SHIFT, _tables.SUIT_MASK) != (_SUIT_SHIFT, _SUIT_MASK):
            raise RuntimeError("hands.py and _tables.py disagree on the key layout")
        categories = tables.category_by_rank.tolist()
        if tuple(Category(c) for c in categories) != _CATEGORY_BY_RANK:
            raise RuntimeError("the built rank scale disagrees with the category bands")
        # Bits of each card in a given suit's 13-bit rank set (0 for cards of other suits).
        suit_bits = [
            tuple(1 << (index >> 2) if index & 3 == suit else 0 for index in range(52))
            for suit in range(4)
        ]
        _FLUSH_BITS.extend(None if s < 0 else suit_bits[s] for s in tables.flush_suit.tolist())
        # tolist() of the sparse table makes ~49k int objects; the empty slots share 0.
        _RANK7.extend(tables.rank7_by_rank_sum.tolist())
        _FLUSH_RANK.extend(tables.flush_rank.tolist())
        _RANK_KEY.extend(_tables.RANK_KEYS[index >> 2] for index in range(52))
        _RANK5.update(zip(tables.rank5_sums.tolist(), tables.rank5_values.tolist(), strict=True))
        _RANK6.update(zip(tables.rank6_sums.tolist(), tables.rank6_values.tolist(), strict=True))
        # Last: a non-empty _CARD_KEY is the "built" flag read without the lock.
        _CARD_KEY.extend(tables.card_key.tolist())


def _rank7(
    a: int,
    b: int,
    c: int,
    d: int,
    e: int,
    f: int,
    g: int,
    _key: list[int] = _CARD_KEY,
    _flush_bits: list[tuple[int, ...] | None] = _FLUSH_BITS,
    _rank: list[int] = _RANK7,
    _flush_rank: list[int] = _FLUSH_RANK,
) -> int:
    """Rank (1..7462) of the best five of seven distinct card indices (0..51).

    The hot path: no validation (distinct valid indices are the caller's duty; an index
    above 51 raises IndexError, a negative one wraps around like a list index). Idea from
    SKPokerEval (Kenneth Shackleton): one sum of card keys identifies the rank multiset and
    whether a suit holds 5+ cards; a flush is then read from that suit's 13-bit rank set.

    >>> rank7(51, 47, 43, 39, 35, 0, 1)  # As Ks Qs Js Ts 2c 2d: a royal flush
    7462
    """
    try:
        k = _key[a] + _key[b] + _key[c] + _key[d] + _key[e] + _key[f] + _key[g]
    except IndexError:
        # Python 3.11+ try blocks cost nothing until they raise: this runs when the tables
        # are still empty (first call in the process), then once more for a bad index,
        # which now raises IndexError from the filled table.
        _ensure_tables()
        k = _key[a] + _key[b] + _key[c] + _key[d] + _key[e] + _key[f] + _key[g]
    bits = _flush_bits[k & 0xFF]
    if bits is None:
        return _rank[k >> 8]
    return _flush_rank[bits[a] | bits[b] | bits[c] | bits[d] | bits[e] | bits[f] | bits[g]]


# The public name has exactly seven parameters for type checkers, so that calls such as
# rank7(*indices) type-check; the table parameters above are an implementation detail.
rank7: Final[Callable[[int, int, int, int, int, int, int], int]] = _rank7


def _rank_indices(indices: Sequence[int]) -> int:
    """Rank of 5, 6 or 7 distinct card indices (already validated)."""
    if len(indices) == 7:
        a, b, c, d, e, f, g = indices
        return rank7(a, b, c, d, e, f, g)
    _ensure_tables()
    rank_key = _RANK_KEY
    total = 0
    suits = [0, 0, 0, 0]
    for index in indices:
        total += rank_key[index]
        suits[index & 3] |= 1 << (index >> 2)
    rank = (_RANK5 if len(indices) == 5 else _RANK6)[total]
    # With 5 or 6 cards a flush (5+ of one suit) always beats the best non-flush hand.
    for bits in suits:
        flush = _FLUSH_RANK[bits]
        if flush > rank:
            rank = flush
    return rank


def _validated_indices(cards: Sequence[Card]) -> list[int]:
    if not 5 <= len(cards) <= 7:
        raise RulesError(
            "wrong_card_count",
            f"a hand must hold 5 to 7 cards, got {len(cards)}",
            param="cards",
        )
    indices: list[int] = []
    for position, card in enumerate(cards):
        if not isinstance(card, Card):
            raise RulesError("invalid_card", f"{card!r} is not a Card", param=f"cards[{position}]")
        index = card.index
        if index in indices:
            first = indices.index(index)
            raise RulesError(
                "duplicate_card",
                f"card {card} appears twice: in cards[{first}] and cards[{position}]",
                param=f"cards[{position}]",
            )
        indices.append(index)
    return indices


def rank_of(cards: Sequence[Card]) -> int:
    """Rank (1..7462) of the best five of 5, 6 or 7 distinct cards.

    >>> from rules.cards import parse_cards
    >>> rank_of(parse_cards(["As", "Ks", "Qs", "Js", "Ts"], param="cards", count=5))
    7462
    """
    return _rank_indices(_validated_indices(cards))


def _dealer_order(five: Sequence[Card], category: Category) -> tuple[Card, ...]:
    """Order five cards as a dealer reads them.

    Bigger groups first, then higher ranks; a straight from its top card down (the wheel as
    5-4-3-2-A); cards of equal rank by suit, spades first (s, h, d, c).
    """
    counts: dict[int, int] = {}
    for card in five:
        counts[card.rank] = counts.get(card.rank, 0) + 1
    wheel = category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH) and 5 in counts
    ace = 14

    def reading_key(card: Card) -> tuple[int, int, int]:
        plays_as = 1 if wheel and card.rank == ace else int(card.rank)
        return (counts[card.rank], plays_as, card.index)

    return tuple(sorted(five, key=reading_key, reverse=True))


def evaluate(cards: Sequence[Card]) -> HandValue:
    """The value of the best five of 5, 6 or 7 distinct cards.

    >>> from rules.cards import parse_cards
    >>> value = evaluate(parse_cards(["Ah", "2c", "3d", "Kd", "4s", "5h", "Kh"], param="cards",
    ...                              count=7))
    >>> value.category.label, [str(card) for card in value.best_five]
    ('straight', ['5h', '4s', '3d', '2c', 'Ah'])
    """
    indices = _validated_indices(cards)
    rank = _rank_indices(indices)
    category = _CATEGORY_BY_RANK[rank]
    if len(indices) == 5:
        five: Sequence[int] = indices
    else:
        # Highest cards first, so among equal fives (e.g. two kickers of one rank) the
        # choice is the same whatever the input order.
        ordered = sorted(indices, reverse=True)
        five = next(c for c in combinations(ordered, 5) if _rank_indices(c) == rank)
    best = _dealer_order([DECK[index] for index in five], category)
    return HandValue(category=category, best_five=best, rank=rank)
