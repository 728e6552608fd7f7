"""Vectorized hand ranking with numpy: many hands at once, same ranks as the scalar path.

Invariants:

- ``rank7_batch(hands)[i] == rank7(*hands[i])`` for every row of 7 distinct card indices, and
  ``rank5_batch(hands)[i] == rank_of(cards of hands[i])`` for rows of 5: the same tables
  (``rules._tables``) drive both paths.
- Ranks come back as ``uint16`` (1..7462), categories as ``uint8`` (``Category`` values):
  compact on purpose; cast before subtracting ranks.
- Rows are validated for shape and index range (0..51), not for distinctness: a row that
  repeats a card gets a meaningless rank (checking would cost more than ranking).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rules import _tables

__all__ = ["categories_batch", "rank5_batch", "rank7_batch"]

# Rows per block: keeps every temporary (a few arrays of this length) inside the CPU caches.
_BLOCK = 1 << 15


def _as_hands(hands: ArrayLike, width: int) -> NDArray[np.integer]:
    array = np.asarray(hands)
    if array.ndim != 2 or array.shape[1] != width or array.dtype.kind not in "iu":
        raise ValueError(
            f"hands must be an integer array of shape (N, {width}), got {array.dtype} {array.shape}"
        )
    if array.size and (int(array.min()) < 0 or int(array.max()) > 51):
        raise ValueError("hands must hold card indices 0..51")
    return array


def _suit_bits(tables: _tables.Tables) -> NDArray[np.uint16]:
    """``[suit * 52 + card]`` -> the card's rank bit if the card is of ``suit``, else 0."""
    index = np.arange(52)
    bits = np.zeros((4, 52), dtype=np.uint16)
    for suit in range(4):
        bits[suit] = np.where(index & 3 == suit, 1 << (index >> 2), 0)
    return bits.ravel()


def rank7_batch(hands: ArrayLike) -> NDArray[np.uint16]:
    """Ranks (1..7462) of an (N, 7) array of card indices, as ``rank7`` gives them.

    >>> import numpy as np
    >>> rank7_batch(np.array([[51, 47, 43, 39, 35, 0, 1], [51, 0, 5, 10, 15, 28, 37]])).tolist()
    [7462, 5854]
    """
    rows = _as_hands(hands, 7)
    tables = _tables.get()
    card_key, flush_suit = tables.card_key, tables.flush_suit
    rank_by_sum, flush_rank = tables.rank7_by_rank_sum, tables.flush_rank
    suit_bits = _suit_bits(tables)
    out = np.empty(len(rows), dtype=np.uint16)
    for start in range(0, len(rows), _BLOCK):
        # Column-major copy: each column is then a contiguous run for np.take.
        block = np.ascontiguousarray(rows[start : start + _BLOCK].T, dtype=np.intp)
        key = np.take(card_key, block[0])
        for column in block[1:]:
            key += np.take(card_key, column)
        ranks = np.take(rank_by_sum, key >> _tables.SUIT_SHIFT)
        suit = np.take(flush_suit, key & _tables.SUIT_MASK)
        flushes = np.flatnonzero(suit >= 0)
        if len(flushes):
            # About 3% of random hands: OR the flush suit's rank bits of the seven cards.
            base = suit[flushes].astype(np.intp) * 52
            bits = np.zeros(len(flushes), dtype=np.uint16)
            for column in block:
                bits |= np.take(suit_bits, base + column[flushes])
            ranks[flushes] = np.take(flush_rank, bits)
        out[start : start + len(ranks)] = ranks
    return out


def rank5_batch(hands: ArrayLike) -> NDArray[np.uint16]:
    """Ranks (1..7462) of an (N, 5) array of card indices, as ``rank_of`` gives them.

    >>> import numpy as np
    >>> rank5_batch(np.array([[51, 47, 43, 39, 35], [20, 13, 10, 7, 0]])).tolist()
    [7462, 1]
    """
    rows = _as_hands(hands, 5)
    tables = _tables.get()
    rank_key = (tables.card_key >> _tables.SUIT_SHIFT).astype(np.int64)
    out = np.empty(len(rows), dtype=np.uint16)
    for start in range(0, len(rows), _BLOCK):
        block = np.ascontiguousarray(rows[start : start + _BLOCK].T, dtype=np.intp)
        total = np.take(rank_key, block[0])
        for column in block[1:]:
            total += np.take(rank_key, column)
        # Only 6,175 distinct non-flush sums: a sorted search beats a 6.5M-entry table.
        ranks = np.take(tables.rank5_values, np.searchsorted(tables.rank5_sums, total))
        suit = block[0] & 3
        flush = np.ones(len(ranks), dtype=bool)
        for column in block[1:]:
            flush &= column & 3 == suit
        flushes = np.flatnonzero(flush)
        if len(flushes):
            bits = np.zeros(len(flushes), dtype=np.int64)
            for column in block:
                bits |= 1 << (column[flushes] >> 2)
            ranks[flushes] = np.take(tables.flush_rank, bits)
        out[start : start + len(ranks)] = ranks
    return out


def categories_batch(ranks: ArrayLike) -> NDArray[np.uint8]:
    """Category numbers (``Category`` values 0..9) of an array of ranks (1..7462).

    >>> categories_batch([1, 1278, 7462]).tolist()
    [0, 1, 9]
    """
    values = np.asarray(ranks)
    if values.dtype.kind not in "iu":
        raise ValueError(f"ranks must be integers, got {values.dtype}")
    if values.size and (int(values.min()) < 1 or int(values.max()) > 7462):
        raise ValueError("ranks must lie in 1..7462")
    return np.take(_tables.get().category_by_rank, values)
