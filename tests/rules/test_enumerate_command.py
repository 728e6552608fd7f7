"""`manage.py enumerate_hands`: prints the counts and fails loudly when one is off.

The real enumeration runs in ``--five`` mode (2,598,960 hands, well under a second); the seven-card
mode's table and checks are exercised with the published counts standing in for the enumeration,
and for real only under the ``slow`` marker. No database is touched.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from rules import enumeration
from rules.hands import Category
from tables.management.commands.enumerate_hands import PUBLISHED_FIVE, PUBLISHED_SEVEN, Command

FIVE_ROWS = [
    ("royal flush", "4"),
    ("straight flush", "36"),
    ("four of a kind", "624"),
    ("full house", "3,744"),
    ("flush", "5,108"),
    ("straight", "10,200"),
    ("three of a kind", "54,912"),
    ("two pair", "123,552"),
    ("pair", "1,098,240"),
    ("high card", "1,302,540"),
]
SEVEN_ROWS = [
    ("royal flush", "4,324"),
    ("straight flush", "37,260"),
    ("four of a kind", "224,848"),
    ("full house", "3,473,184"),
    ("flush", "4,047,644"),
    ("straight", "6,180,020"),
    ("three of a kind", "6,461,620"),
    ("two pair", "31,433,400"),
    ("pair", "58,627,800"),
    ("high card", "23,294,460"),
]


def run(*args: str) -> list[str]:
    out = io.StringIO()
    call_command("enumerate_hands", *args, stdout=out)
    return out.getvalue().splitlines()


def rows(lines: list[str]) -> list[tuple[str, str, str]]:
    """(category, count, published) of the 10 category rows and the total, in printed order."""
    assert lines[1].split() == ["category", "count", "published"]
    return [(line[:16].strip(), *line[16:].split()[:2]) for line in lines[2:13]]  # type: ignore[misc]


def test_five_card_mode_counts_every_hand_and_matches_the_books():
    lines = run("--five")
    assert lines[0] == "All 2,598,960 five-card hands, by category"
    table = rows(lines)
    assert table[:10] == [(name, count, count) for name, count in FIVE_ROWS]
    assert table[10] == ("total", "2,598,960", "2,598,960")
    assert lines[-2].startswith("time: ") and lines[-2].endswith(" s")
    assert lines[-1] == "OK: every count matches the published figures"
    assert "MISMATCH" not in "\n".join(lines)


def test_seven_card_mode_prints_the_seven_card_table(monkeypatch):
    monkeypatch.setattr(enumeration, "seven_card_category_counts", lambda: dict(PUBLISHED_SEVEN))
    lines = run()
    assert lines[0] == "All 133,784,560 seven-card hands, by the category of their best five"
    table = rows(lines)
    assert table[:10] == [(name, count, count) for name, count in SEVEN_ROWS]
    assert table[10] == ("total", "133,784,560", "133,784,560")


@pytest.mark.parametrize(
    ("five", "counts", "named"),
    [
        (True, {**PUBLISHED_FIVE, Category.FLUSH: 5_107, Category.HIGH_CARD: 1_302_541}, "flush"),
        (True, {c: n for c, n in PUBLISHED_FIVE.items() if c != Category.PAIR}, "pair"),
        (False, {**PUBLISHED_SEVEN, Category.ROYAL_FLUSH: 4_323}, "royal_flush"),
    ],
)
def test_any_difference_fails_the_command(monkeypatch, five, counts, named):
    function = "five_card_category_counts" if five else "seven_card_category_counts"
    monkeypatch.setattr(enumeration, function, lambda: counts)
    out = io.StringIO()
    with pytest.raises(CommandError, match=f"counts differ from the published figures: .*{named}"):
        call_command("enumerate_hands", *(["--five"] if five else []), stdout=out)
    # The whole table is printed first, the wrong rows marked.
    assert "MISMATCH" in out.getvalue()
    assert "time: " in out.getvalue()


def test_a_difference_is_a_non_zero_exit_status(monkeypatch, capsys):
    wrong = {**PUBLISHED_FIVE, Category.STRAIGHT: 10_201}
    monkeypatch.setattr(enumeration, "five_card_category_counts", lambda: wrong)
    with pytest.raises(SystemExit) as exit_:
        Command().run_from_argv(["manage.py", "enumerate_hands", "--five"])
    assert exit_.value.code == 1
    assert "counts differ from the published figures: straight" in capsys.readouterr().err


@pytest.mark.slow
def test_seven_card_mode_for_real():
    table = rows(run())
    assert table[:10] == [(name, count, count) for name, count in SEVEN_ROWS]
    assert table[10] == ("total", "133,784,560", "133,784,560")
