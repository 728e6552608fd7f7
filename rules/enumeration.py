"""Exhaustive enumeration of poker hands, vectorized with numpy: the golden counts.

Invariants (the standard figures, checked by ``python manage.py enumerate_hands`` and the tests):

- Over all 2,598,960 five-card hands: royal flush 4, straight flush 36, four of a kind 624,
  full house 3,744, flush 5,108, straight 10,200, three of a kind 54,912, two pair 123,552,
  pair 1,098,240, high card 1,302,540.
- Over all 133,784,560 seven-card hands (best five): royal flush 4,324, straight flush 37,260,
  four of a kind 224,848, full house 3,473,184, flush 4,047,644, straight 6,180,020, three of a
  kind 6,461,620, two pair 31,433,400, pair 58,627,800, high card 23,294,460.

The seven-card enumeration never materializes the hands: the key sums of all five-card
combinations are built once (lexicographic order, so the combinations whose cards all exceed
``b`` form a suffix), then for each pair of lowest cards ``a < b`` the suffix gets the pair's
keys added and its categories counted with ``np.bincount``. Peak memory stays near 200 MB.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numpy.typing import NDArray

from rules import _tables
from rules.batch import categories_batch, rank5_batch
from rules.hands import Category

__all__ = ["combinations_array", "five_card_category_counts", "seven_card_category_counts"]

_DECK_SIZE = 52


def _first_below(size: int, start: int) -> int:
    """How many ``size``-combinations of the deck (lexicographic) start below card ``start``."""
    return comb(_DECK_SIZE, size) - comb(_DECK_SIZE - start, size)


def combinations_array(size: int) -> NDArray[np.uint8]:
    """All ``size``-card combinations of card indices 0..51, in lexicographic order.

    >>> rows = combinations_array(2)
    >>> rows.shape, rows[0].tolist(), rows[-1].tolist()
    ((1326, 2), [0, 1], [50, 51])
    """
    rows = np.arange(_DECK_SIZE, dtype=np.uint8).reshape(-1, 1)
    for width in range(2, size + 1):
        # Combinations of `width` cards starting with card c = c + the (width-1)-combinations
        # of cards above c, which are the suffix of `rows` from _first_below(width - 1, c + 1).
        blocks = []
        for first in range(_DECK_SIZE - width + 1):
            tail = rows[_first_below(width - 1, first + 1) :]
            head = np.full((len(tail), 1), first, dtype=np.uint8)
            blocks.append(np.hstack((head, tail)))
        rows = np.concatenate(blocks)
    return rows


def _counts(histogram: NDArray[np.int64]) -> dict[Category, int]:
    return {category: int(histogram[category]) for category in Category}


def five_card_category_counts() -> dict[Category, int]:
    """Number of five-card hands in each category, over all 2,598,960 of them."""
    ranks = rank5_batch(combinations_array(5))
    return _counts(np.bincount(categories_batch(ranks), minlength=len(Category)))


def _five_card_sums(card_key: NDArray[np.uint32]) -> tuple[NDArray[np.uint32], NDArray[np.uint64]]:
    """Key sums and card masks of all five-card combinations, in lexicographic order.

    The mask has bit ``suit * 13 + rank`` per card, so a suit's 13-bit rank set is a shift away.
    """
    bit = np.array([1 << ((i & 3) * 13 + (i >> 2)) for i in range(_DECK_SIZE)], dtype=np.uint64)
    sums, masks = card_key.copy(), bit.copy()
    for width in range(2, 6):
        sum_blocks, mask_blocks = [], []
        for first in range(_DECK_SIZE - width + 1):
            start = _first_below(width - 1, first + 1)
            sum_blocks.append(sums[start:] + card_key[first])
            mask_blocks.append(masks[start:] | bit[first])
        sums, masks = np.concatenate(sum_blocks), np.concatenate(mask_blocks)
    return sums, masks


def seven_card_category_counts() -> dict[Category, int]:
    """Number of seven-card hands whose best five falls in each category (all 133,784,560)."""
    tables = _tables.get()
    card_key = tables.card_key
    category_by_sum = np.take(tables.category_by_rank, tables.rank7_by_rank_sum)
    flush_category = np.take(tables.category_by_rank, tables.flush_rank)
    sums5, masks5 = _five_card_sums(card_key)
    bit = np.array([1 << ((i & 3) * 13 + (i >> 2)) for i in range(_DECK_SIZE)], dtype=np.uint64)
    histogram = np.zeros(len(Category), dtype=np.int64)
    width = len(Category)
    for low in range(_DECK_SIZE - 6):
        for high in range(low + 1, _DECK_SIZE - 5):
            start = _first_below(5, high + 1)
            keys = sums5[start:] + (card_key[low] + card_key[high])
            categories = np.take(category_by_sum, keys >> _tables.SUIT_SHIFT)
            suits = np.take(tables.flush_suit, keys & _tables.SUIT_MASK)
            flushes = np.flatnonzero(suits >= 0)
            if len(flushes):
                # Count those hands by their flush instead of their non-flush category.
                histogram -= np.bincount(categories[flushes], minlength=width)
                shift = suits[flushes].astype(np.uint64) * np.uint64(13)
                mask = masks5[start:][flushes] | (bit[low] | bit[high])
                suit_ranks = (mask >> shift) & np.uint64(0x1FFF)
                histogram += np.bincount(np.take(flush_category, suit_ranks), minlength=width)
            histogram += np.bincount(categories, minlength=width)
    return _counts(histogram)
