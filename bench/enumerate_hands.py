"""Enumerate every 5-card and 7-card hand, print the counts per category and the time taken.

Run from the repository root: ``.venv/bin/python bench/enumerate_hands.py``. Exits non-zero if
any count differs from the standard figures.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tables.rules.enumeration import (
    five_card_category_counts,
    seven_card_category_counts,
)
from tables.rules.hands import Category

EXPECTED_FIVE = {
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
EXPECTED_SEVEN = {
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


def report(title: str, counts: dict[Category, int], expected: dict[Category, int]) -> int:
    """Print one table of counts; return the number of categories that differ."""
    print(title)
    wrong = 0
    for category in sorted(Category, reverse=True):
        got, want = counts[category], expected[category]
        mark = "ok" if got == want else f"MISMATCH: expected {want:,}"
        wrong += got != want
        print(f"  {category.label:<16} {got:>12,}  {mark}")
    print(f"  {'total':<16} {sum(counts.values()):>12,}")
    return wrong


def main() -> int:
    start = time.perf_counter()
    five = five_card_category_counts()
    five_time = time.perf_counter() - start
    wrong = report(f"5-card hands ({five_time:.2f} s, incl. table build):", five, EXPECTED_FIVE)

    start = time.perf_counter()
    seven = seven_card_category_counts()
    seven_time = time.perf_counter() - start
    wrong += report(f"7-card hands ({seven_time:.2f} s):", seven, EXPECTED_SEVEN)
    print(f"7-card rate: {sum(seven.values()) / seven_time:,.0f} hands/s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
