"""enumerate_hands: count every poker hand by category and check the counts against the books.

``python manage.py enumerate_hands`` evaluates all C(52, 7) = 133,784,560 seven-card hands (their
best five) with :func:`rules.enumeration.seven_card_category_counts`; ``--five`` counts the
C(52, 5) = 2,598,960 five-card hands instead (well under a second). It prints one row per
category, strongest first, with the published figure, the total and the time taken (the
evaluator's lookup tables are built on first use, inside the timed call), and exits with status 1
if any count or the total differs from the published figures. No database is touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from math import comb
from types import MappingProxyType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rules import enumeration
from rules.hands import Category

# The standard figures (any combinatorics reference). The tests keep their own copy on purpose:
# an oracle should not come from the code it checks.
PUBLISHED_FIVE: Mapping[Category, int] = MappingProxyType(
    {
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
)
PUBLISHED_SEVEN: Mapping[Category, int] = MappingProxyType(
    {
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
)

_WIDTH = 15  # "133,784,560" and headers fit


class Command(BaseCommand):
    help = (
        "Count all 133,784,560 seven-card hands (or, with --five, all 2,598,960 five-card hands) "
        "by category; exit 1 if any count differs from the published figures."
    )
    # Pure computation: nothing for Django's system checks to guard.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--five",
            action="store_true",
            help="count the 2,598,960 five-card hands instead (fast)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        size = 5 if options["five"] else 7
        count: Callable[[], Mapping[Category, int]]
        if size == 5:
            count, published = enumeration.five_card_category_counts, PUBLISHED_FIVE
        else:
            count, published = enumeration.seven_card_category_counts, PUBLISHED_SEVEN

        start = time.perf_counter()
        counts = count()
        elapsed = time.perf_counter() - start

        self.stdout.write(
            f"All {comb(52, 7):,} seven-card hands, by the category of their best five"
            if size == 7
            else f"All {comb(52, 5):,} five-card hands, by category"
        )
        self.stdout.write(f"{'category':<16} {'count':>{_WIDTH}} {'published':>{_WIDTH}}")
        wrong = []
        for category in sorted(Category, reverse=True):
            got, want = counts.get(category), published[category]
            shown = "missing" if got is None else f"{got:,}"
            mark = "" if got == want else "  MISMATCH"
            if got != want:
                wrong.append(category.label)
            label = category.label.replace("_", " ")
            self.stdout.write(f"{label:<16} {shown:>{_WIDTH}} {want:>{_WIDTH},}{mark}")
        total, want_total = sum(counts.values()), comb(52, size)
        mark = "" if total == want_total else "  MISMATCH"
        self.stdout.write(f"{'total':<16} {total:>{_WIDTH},} {want_total:>{_WIDTH},}{mark}")
        self.stdout.write(f"time: {elapsed:.2f} s")

        if wrong or total != want_total:
            what = ", ".join(wrong) if wrong else "the total"
            raise CommandError(f"counts differ from the published figures: {what}")
        self.stdout.write("OK: every count matches the published figures")
