"""Vectorized ranking and the full enumerations: same ranks as the scalar path, input checks,
and the golden seven-card counts."""

from __future__ import annotations

import doctest
from itertools import combinations

import numpy as np
import pytest

from rules import _tables, batch, enumeration
from rules.batch import categories_batch, rank5_batch, rank7_batch
from rules.cards import DECK
from rules.enumeration import combinations_array, seven_card_category_counts
from rules.hands import Category, category_of, rank7, rank_of

SEVEN_CARD_COUNTS = {
    Category.ROYAL_FLUSH: 4_324,
    Category.STRAIGHT_FLUSH: 37_260,
    Category.FOUR_OF_A_KIND: 224_848,
    Category.FULL_HOUSE: 3_473_184,
    Category.FLUSH: 4_047_644,
    Category.STRAIGHT: 6_180_020,
    Category.THREE_OF_A_KIND: 6_461_620,
    Category.TWO_PAIR: 31_433_400,
    Category.PAIR: 58_627_800,
    Category.HIGH_CARD: 23_294_460,
}


def test_seven_card_category_counts() -> None:
    assert sum(SEVEN_CARD_COUNTS.values()) == 133_784_560
    assert seven_card_category_counts() == SEVEN_CARD_COUNTS


def sample_from(cards: list[int], count: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((count, len(cards))), axis=1)[:, :size]
    return np.asarray(cards)[order]


def test_rank7_batch_on_flush_rich_hands() -> None:
    # Hearts and spades only: about half the hands hold a flush, many a straight flush.
    two_suits = [index for index in range(52) if index & 3 >= 2]
    rows = sample_from(two_suits, 50_000, 7, seed=1)
    ranks = rank7_batch(rows)
    assert ranks.tolist() == [rank7(*row) for row in rows.tolist()]
    categories = categories_batch(ranks)
    assert (categories >= Category.FLUSH).mean() > 0.3
    assert (categories == Category.STRAIGHT_FLUSH).any()


def test_rank5_batch_on_flush_rich_hands() -> None:
    one_suit_and_some = [index for index in range(52) if index & 3 == 0 or index < 12]
    rows = sample_from(one_suit_and_some, 20_000, 5, seed=2)
    assert rank5_batch(rows).tolist() == [rank_of([DECK[i] for i in row]) for row in rows]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_any_integer_dtype_and_layout(dtype: type[np.integer]) -> None:
    rows = sample_from(list(range(52)), 3_000, 7, seed=3)
    expected = [rank7(*row) for row in rows.tolist()]
    assert rank7_batch(rows.astype(dtype)).tolist() == expected
    assert rank7_batch(np.asfortranarray(rows.astype(dtype))).tolist() == expected
    wide = np.zeros((len(rows), 9), dtype=dtype)
    wide[:, 1:8] = rows
    assert rank7_batch(wide[:, 1:8]).tolist() == expected  # a non-contiguous view
    assert rank7_batch(rows.tolist()).tolist() == expected  # plain lists too


def test_output_types_and_empty_input() -> None:
    ranks = rank7_batch(np.empty((0, 7), dtype=np.int64))
    assert ranks.dtype == np.uint16 and ranks.shape == (0,)
    assert rank5_batch(np.empty((0, 5), dtype=np.uint8)).shape == (0,)
    assert categories_batch(np.empty(0, dtype=np.uint16)).dtype == np.uint8
    royal = rank7_batch([[51, 47, 43, 39, 35, 0, 1]])
    assert royal.dtype == np.uint16 and royal.tolist() == [7462]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (np.zeros((3, 6), dtype=np.int64), r"shape \(N, 7\)"),
        (np.zeros(7, dtype=np.int64), r"shape \(N, 7\)"),
        (np.zeros((2, 7), dtype=np.float64), r"integer array"),
        (np.full((2, 7), 52), r"card indices 0..51"),
        (np.full((2, 7), -1), r"card indices 0..51"),
    ],
)
def test_rank7_batch_rejects_bad_arrays(rows: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rank7_batch(rows)


def test_rank5_batch_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match=r"shape \(N, 5\)"):
        rank5_batch(np.zeros((1, 7), dtype=np.int64))


def test_categories_batch() -> None:
    ranks = np.arange(1, 7463)
    assert categories_batch(ranks).tolist() == [category_of(int(r)) for r in ranks]
    for bad in ([0], [7463], [1.5]):
        with pytest.raises(ValueError, match="ranks must"):
            categories_batch(bad)


def test_combinations_array_is_lexicographic() -> None:
    for size in (1, 2, 3):
        assert combinations_array(size).tolist() == [
            list(combo) for combo in combinations(range(52), size)
        ]


def test_tables_are_built_once_and_compact() -> None:
    tables = _tables.get()
    assert _tables.get() is tables
    assert tables.rank7_by_rank_sum.dtype == np.uint16
    total = sum(
        getattr(tables, name).nbytes
        for name in (
            "card_key",
            "flush_suit",
            "rank7_by_rank_sum",
            "rank5_sums",
            "rank5_values",
            "rank6_sums",
            "rank6_values",
            "flush_rank",
            "category_by_rank",
        )
    )
    assert total < 20_000_000


@pytest.mark.parametrize("module", [batch, enumeration])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted > 0
