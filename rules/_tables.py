"""Private: construction of the hand evaluator's lookup tables, in memory, with numpy.

Design: the "key sum" evaluator of SKPokerEval by Kenneth Shackleton
(https://github.com/kennethshackleton/SKPokerEval). Every card gets an integer key
``(rank_key << SUIT_SHIFT) + suit_key``; the sum of a hand's seven keys carries, in its low
``SUIT_SHIFT`` bits, the sum of the suit keys (which says whether a suit holds five or more of
the cards, and which one) and, above them, the sum of the rank keys (which identifies the
multiset of ranks). Two table lookups then give the hand's rank.

Invariants, all checked by :func:`build` itself (it raises ``RuntimeError`` otherwise):

- ``RANK_KEYS`` give distinct sums for all 49,205 multisets of 7 ranks holding at most 4 of
  any rank (hence also for multisets of 5 and of 6, which extend to 7 with an unused rank).
  They are the greedy minimal sequence: each key is the smallest that keeps all sums
  distinct (re-derived for this project; it is the same sequence SKPokerEval publishes).
- ``SUIT_KEYS`` make the sum of the suit keys of any 7 cards determine whether some suit
  holds 5 or more of them, and which; their sums stay below ``1 << SUIT_SHIFT``.
- Ranks run from 1 (7-5-4-3-2 offsuit) to 7,462 (royal flush) over the standard 7,462
  equivalence classes of five-card hands; a higher rank is a better hand and equal ranks tie.

Nothing here is cached on disk (the rules engine does no I/O): the build runs once per
process, on first use, in well under a second.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RANK_KEYS",
    "SUIT_KEYS",
    "SUIT_MASK",
    "SUIT_SHIFT",
    "Tables",
    "build",
    "get",
]

# Rank keys for 2, 3, ..., A (see the module docstring).
RANK_KEYS: tuple[int, ...] = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
)  # fmt: skip
# Suit keys for c, d, h, s: found by exhaustive search as the set with the smallest maximum;
# 7 * 32 = 224 < 256, so the suit sum fits in 8 bits (SKPokerEval uses 0, 1, 8, 57: 9 bits).
SUIT_KEYS: tuple[int, ...] = (0, 1, 25, 32)
SUIT_SHIFT = 8
SUIT_MASK = (1 << SUIT_SHIFT) - 1

_CLASS_COUNT = 7462
_HIGH_CARD, _PAIR, _TWO_PAIR, _TRIPS, _STRAIGHT, _FLUSH = 0, 1, 2, 3, 4, 5
_FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH, _ROYAL_FLUSH = 6, 7, 8, 9
_ACE = 12  # rank numbers here are 0 (deuce) .. 12 (ace)

U8 = NDArray[np.uint8]
I8 = NDArray[np.int8]
U16 = NDArray[np.uint16]
U32 = NDArray[np.uint32]
I64 = NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class Tables:
    """All lookup tables, as compact numpy arrays (the scalar evaluator converts what it needs).

    - ``card_key[i]``: key of card index ``i`` (``(RANK_KEYS[r] << SUIT_SHIFT) + SUIT_KEYS[s]``).
    - ``flush_suit[suit_sum]``: the suit (0..3) holding 5+ of 7 cards, or -1.
    - ``rank7_by_rank_sum[rank_sum]``: rank of the best 5 of 7 cards ignoring flushes (0 where
      no 7-card rank multiset has that sum).
    - ``rank5_sums``/``rank5_values``, ``rank6_sums``/``rank6_values``: the same for 5 and 6
      cards, as sorted sums with the matching ranks (few enough for a dict or searchsorted).
    - ``flush_rank[bits]``: for a 13-bit set of ranks of one suit holding 5+ bits, the rank of
      the best flush or straight flush among them (0 for fewer than 5 bits).
    - ``category_by_rank[rank]``: category number 0..9 of each rank 1..7462 (index 0 unused).
    """

    card_key: U32
    flush_suit: I8
    rank7_by_rank_sum: U16
    rank5_sums: I64
    rank5_values: U16
    rank6_sums: I64
    rank6_values: U16
    flush_rank: U16
    category_by_rank: U8


def _strength(ranks: tuple[int, ...], flush: bool) -> tuple[int, ...]:
    """Category and tiebreak of five ranks (0..12): tuples compare like the hands do."""
    counts = [0] * 13
    for rank in ranks:
        counts[rank] += 1
    # Dealer order: bigger groups first, then higher ranks (e.g. trips before the pair).
    order = tuple(sorted(ranks, key=lambda rank: (counts[rank], rank), reverse=True))
    shape = sorted((count for count in counts if count), reverse=True)
    straight_top = -1
    if len(shape) == 5:
        if order[0] - order[4] == 4:
            straight_top = order[0]
        elif order == (_ACE, 3, 2, 1, 0):  # the wheel: the ace plays low, 5-high
            straight_top = 3
    if straight_top >= 0 and flush:
        return (_ROYAL_FLUSH if straight_top == _ACE else _STRAIGHT_FLUSH, straight_top)
    if shape[0] == 4:
        return (_QUADS, *order)
    if shape[:2] == [3, 2]:
        return (_FULL_HOUSE, *order)
    if flush:
        return (_FLUSH, *order)
    if straight_top >= 0:
        return (_STRAIGHT, straight_top)
    if shape[0] == 3:
        return (_TRIPS, *order)
    if shape[:2] == [2, 2]:
        return (_TWO_PAIR, *order)
    if shape[0] == 2:
        return (_PAIR, *order)
    return (_HIGH_CARD, *order)


def _rank_multisets(size: int) -> I64:
    """All multisets of ``size`` ranks (0..12) with at most 4 of a rank, as sorted rows."""
    # Stars and bars: a multiset sorted ascending r0 <= r1 <= ... maps one-to-one to the
    # strictly increasing r0 < r1 + 1 < r2 + 2 ..., i.e. to a combination of range(12 + size).
    combos = np.array(list(combinations(range(12 + size), size)), dtype=np.int64)
    rows = combos - np.arange(size, dtype=np.int64)
    # Sorted rows: five equal ranks show as rows[:, i] == rows[:, i + 4].
    too_many = np.zeros(len(rows), dtype=bool)
    for i in range(size - 4):
        too_many |= rows[:, i] == rows[:, i + 4]
    return rows[~too_many]


def _best_of(rows: I64, sums5: I64, values5: U16, keys: I64) -> U16:
    """Best non-flush rank of each multiset row, over all its 5-card sub-multisets."""
    best = np.zeros(len(rows), dtype=np.uint16)
    for five in combinations(range(rows.shape[1]), 5):
        sums = keys[rows[:, list(five)]].sum(axis=1)
        found = values5[np.searchsorted(sums5, sums)]
        np.maximum(best, found, out=best)
    return best


def build() -> Tables:
    """Build every table.

    About 0.15 s here; ~16 MB of numpy arrays, 15.6 MB of it the 7-card rank table indexed by
    rank-key sum.
    """
    keys = np.array(RANK_KEYS, dtype=np.int64)

    # 1. Rank the 7,462 classes of five-card hands: non-flush rank multisets and flush sets.
    multisets5 = _rank_multisets(5)
    flush_sets = np.array(list(combinations(range(13), 5)), dtype=np.int64)
    strengths = [_strength(tuple(row), False) for row in multisets5.tolist()]
    strengths += [_strength(tuple(row), True) for row in flush_sets.tolist()]
    order = sorted(range(len(strengths)), key=strengths.__getitem__)
    class_rank = np.empty(len(strengths), dtype=np.uint16)
    rank = 0
    category_by_rank = np.zeros(_CLASS_COUNT + 1, dtype=np.uint8)
    previous: tuple[int, ...] | None = None
    for position in order:
        if strengths[position] != previous:
            rank += 1
            previous = strengths[position]
            category_by_rank[rank] = previous[0]
        class_rank[position] = rank
    if rank != _CLASS_COUNT:
        raise RuntimeError(f"found {rank} hand classes instead of {_CLASS_COUNT}")

    # 2. Non-flush ranks by rank-key sum, for 5, 6 and 7 cards.
    sums5 = keys[multisets5].sum(axis=1)
    by_sum = np.argsort(sums5)
    sums5, values5 = sums5[by_sum], class_rank[: len(multisets5)][by_sum]
    multisets6, multisets7 = _rank_multisets(6), _rank_multisets(7)
    sums6, sums7 = keys[multisets6].sum(axis=1), keys[multisets7].sum(axis=1)
    for size, sums in ((5, sums5), (6, sums6), (7, sums7)):
        if len(np.unique(sums)) != len(sums):
            raise RuntimeError(f"rank keys give equal sums for two {size}-card rank multisets")
    values6 = _best_of(multisets6, sums5, values5, keys)
    by_sum6 = np.argsort(sums6)
    values7 = _best_of(multisets7, sums5, values5, keys)
    rank7_by_rank_sum = np.zeros(int(sums7.max()) + 1, dtype=np.uint16)
    rank7_by_rank_sum[sums7] = values7

    # 3. Flushes: 5-bit sets from the class ranks, 6- and 7-bit sets as the best 5-bit subset.
    flush_rank = np.zeros(1 << 13, dtype=np.uint16)
    flush_bits = (1 << flush_sets).sum(axis=1)
    flush_rank[flush_bits] = class_rank[len(multisets5) :]
    masks = np.arange(1 << 13, dtype=np.int64)
    popcount = np.zeros(1 << 13, dtype=np.int64)
    for bit in range(13):
        popcount += (masks >> bit) & 1
    for size in (6, 7):
        level = masks[popcount == size]
        for bit in range(13):
            has = level[(level >> bit) & 1 == 1]
            np.maximum.at(flush_rank, has, flush_rank[has ^ (1 << bit)])

    # 4. Suits: which suit (if any) holds 5+ of 7 cards, for every suit-key sum of 7 cards.
    flush_suit = np.full(SUIT_MASK + 1, -1, dtype=np.int8)
    seen: dict[int, int] = {}
    for c in range(8):
        for d in range(8 - c):
            for h in range(8 - c - d):
                counts = (c, d, h, 7 - c - d - h)
                suit_sum = sum(n * k for n, k in zip(counts, SUIT_KEYS, strict=True))
                suit = next((s for s, n in enumerate(counts) if n >= 5), -1)
                if seen.setdefault(suit_sum, suit) != suit or suit_sum > SUIT_MASK:
                    raise RuntimeError(f"suit keys cannot tell flushes apart at {counts}")
                flush_suit[suit_sum] = suit

    card_key = np.array(
        [(RANK_KEYS[i >> 2] << SUIT_SHIFT) + SUIT_KEYS[i & 3] for i in range(52)],
        dtype=np.uint32,
    )
    return Tables(
        card_key=card_key,
        flush_suit=flush_suit,
        rank7_by_rank_sum=rank7_by_rank_sum,
        rank5_sums=sums5,
        rank5_values=values5,
        rank6_sums=sums6[by_sum6],
        rank6_values=values6[by_sum6],
        flush_rank=flush_rank,
        category_by_rank=category_by_rank,
    )


_lock = threading.Lock()
_built: list[Tables] = []


def get() -> Tables:
    """The process-wide tables, built on first call (thread-safe: built once)."""
    if not _built:
        with _lock:
            if not _built:
                _built.append(build())
    return _built[0]
