"""Paytables as data: the published tables, rounding and the registry (how the API shows them is
tested with the rules API, tests/api/test_rules_api.py)."""

from __future__ import annotations

import doctest
import importlib
from dataclasses import FrozenInstanceError

import pytest

from rules.boxes import MAX_BET_CENTS, Box, BoxName, check_stake_cents
from rules.errors import RulesError
from rules.hands import Category
from rules.paytables import (
    CURRENT,
    PAYTABLES,
    PROGRESSIVE_PAYTABLES,
    Payout,
    Paytable,
    PaytableSet,
    ProgressiveSchedule,
    get_paytable,
    get_progressive_paytable,
)


def _as_pairs(table: Paytable) -> dict[str, tuple[int, int]]:
    return {c.label: (o.numerator, o.denominator) for c, o in table.odds.items()}


# --- the published tables, word for word from domain.md ---------------------------------------


def test_uth_blind_table_is_domain_md() -> None:
    assert _as_pairs(CURRENT.uth_blind) == {
        "straight": (1, 1),
        "flush": (3, 2),
        "full_house": (3, 1),
        "four_of_a_kind": (10, 1),
        "straight_flush": (50, 1),
        "royal_flush": (500, 1),
    }


def test_uth_trips_table_is_domain_md() -> None:
    assert _as_pairs(CURRENT.uth_trips) == {
        "three_of_a_kind": (3, 1),
        "straight": (4, 1),
        "flush": (7, 1),
        "full_house": (8, 1),
        "four_of_a_kind": (30, 1),
        "straight_flush": (40, 1),
        "royal_flush": (50, 1),
    }


def test_stud_raise_table_is_domain_md() -> None:
    assert _as_pairs(CURRENT.stud_raise) == {
        "pair": (1, 1),
        "two_pair": (2, 1),
        "three_of_a_kind": (3, 1),
        "straight": (4, 1),
        "flush": (5, 1),
        "full_house": (7, 1),
        "four_of_a_kind": (20, 1),
        "straight_flush": (50, 1),
        "royal_flush": (100, 1),
    }


def test_stud_bonus_table_is_domain_md() -> None:
    assert _as_pairs(CURRENT.stud_bonus) == {
        "flush": (100, 1),
        "full_house": (150, 1),
        "four_of_a_kind": (1000, 1),
        "straight_flush": (2000, 1),
        "royal_flush": (5000, 1),
    }


def test_progressive_table_is_domain_md() -> None:
    table = CURRENT.progressive
    assert table.jackpot_percent_bp == 10_000  # 100% of the meter
    assert table.community_royal_cents == 500_000  # EUR 5,000
    assert table.straight_flush_cents == 150_000  # EUR 1,500
    assert table.four_of_a_kind_cents == 50_000  # EUR 500
    assert table.full_house_cents == 5_000  # EUR 50
    assert table.envy_cents == 50_000  # EUR 500


# --- odds and rounding ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("odds", "stake", "win"),
    [
        (Payout(3, 2), 125, 187),  # 187.5 rounded down
        (Payout(3, 2), 1, 1),  # 1.5 -> 1
        (Payout(3, 2), 100, 150),
        (Payout(1), 7, 7),
        (Payout(500), 100, 50_000),
        (Payout(3, 2), MAX_BET_CENTS + 1, 15_000_001),  # big ints stay exact
    ],
)
def test_odds_win_is_rounded_down_to_the_cent(odds: Payout, stake: int, win: int) -> None:
    assert odds.win_cents(stake) == win


def test_odds_render_as_n_colon_d() -> None:
    assert [str(Payout(3, 2)), str(Payout(1)), str(Payout(5000))] == ["3:2", "1:1", "5000:1"]


@pytest.mark.parametrize(("n", "d"), [(6, 4), (0, 1), (1, 0), (-1, 1), (True, 1), (1.5, 1)])
def test_odds_refuse_non_positive_non_int_or_unreduced_terms(n: object, d: object) -> None:
    with pytest.raises(ValueError, match="odds"):
        Payout(n, d)  # type: ignore[arg-type]


# --- registry, versions, immutability ---------------------------------------------------------


def test_registry_is_keyed_by_version_and_current_tables_are_registered() -> None:
    assert all(version == table.version for version, table in PAYTABLES.items())
    assert CURRENT.versions() == {
        "uth_blind": "uth-blind/2026-1",
        "uth_trips": "uth-trips/2026-1",
        "stud_raise": "stud-raise/2026-1",
        "stud_bonus": "stud-bonus/2026-1",
        "progressive": "uth-progressive/2026-1",
    }
    for box, version in CURRENT.versions().items():
        if box == "progressive":
            assert get_progressive_paytable(version) is CURRENT.progressive
        else:
            assert get_paytable(version) is getattr(CURRENT, box)
    assert PROGRESSIVE_PAYTABLES["uth-progressive/2026-1"] is CURRENT.progressive


def test_unknown_version_is_an_invalid_parameter() -> None:
    with pytest.raises(RulesError) as caught:
        get_progressive_paytable("uth-progressive/1999-1", param="paytable_version")
    assert caught.value.code == "invalid_parameter"
    assert caught.value.param == "paytable_version"
    assert caught.value.message == (
        "unknown progressive paytable version 'uth-progressive/1999-1'; "
        "known: uth-progressive/2026-1"
    )
    with pytest.raises(RulesError, match="unknown paytable version 'nope'"):
        get_paytable("nope")


def test_tables_are_immutable() -> None:
    with pytest.raises(TypeError):
        CURRENT.uth_blind.odds[Category.PAIR] = Payout(1)  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        CURRENT.progressive.envy_cents = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        PAYTABLES["x"] = CURRENT.uth_blind  # type: ignore[index]


def test_a_table_copy_does_not_follow_later_edits_of_its_source_dict() -> None:
    source = {Category.STRAIGHT: Payout(1)}
    table = Paytable("x", "x/1", source)
    source[Category.FLUSH] = Payout(2)
    assert list(table.odds) == [Category.STRAIGHT]


def test_paytable_set_refuses_a_table_in_the_wrong_slot() -> None:
    with pytest.raises(ValueError, match="uth_blind must be a 'uth_blind' paytable"):
        PaytableSet(uth_blind=CURRENT.uth_trips)


def test_paytable_set_refuses_a_blind_table_paying_below_a_straight() -> None:
    odds = {**CURRENT.uth_blind.odds, Category.PAIR: Payout(1)}
    with pytest.raises(ValueError, match="must pay on exactly"):
        PaytableSet(uth_blind=Paytable("uth_blind", "uth-blind/test", odds))


def test_progressive_table_refuses_bad_amounts() -> None:
    with pytest.raises(ValueError, match="jackpot_percent_bp"):
        ProgressiveSchedule(version="x", jackpot_percent_bp=10_001)
    with pytest.raises(ValueError, match="envy_cents"):
        ProgressiveSchedule(version="x", envy_cents=-1)


def test_jackpot_share_is_rounded_down() -> None:
    half = ProgressiveSchedule(version="x", jackpot_percent_bp=5_000)
    assert half.jackpot_award_cents(1_000_001) == 500_000
    assert CURRENT.progressive.jackpot_award_cents(1_234_567) == 1_234_567


# --- stakes and boxes -------------------------------------------------------------------------


# JSON's strings, floats and nulls for a stake are the wire's (tests/tables/test_bodies.py); the
# engine checks the ints it is given, and refuses a bool, which Python counts as an int.
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "bets.ante_cents must be an integer number of cents, got True"),
        (0, "bets.ante_cents must be at least 1, got 0"),
        (-5, "bets.ante_cents must be at least 1, got -5"),
        (
            MAX_BET_CENTS + 1,
            "bets.ante_cents must be at most 10000000 cents (the table limit), got 10000001",
        ),
    ],
)
def test_check_stake_cents_refuses(value: int, message: str) -> None:
    with pytest.raises(RulesError) as caught:
        check_stake_cents(value, param="bets.ante_cents", minimum=1)
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_bet",
        "bets.ante_cents",
        message,
    )


def test_check_stake_cents_accepts_the_bounds() -> None:
    check_stake_cents(1, param="p", minimum=1)
    check_stake_cents(MAX_BET_CENTS, param="p", minimum=1)
    check_stake_cents(0, param="p", minimum=0)


def test_box_cannot_lose_more_than_its_stake() -> None:
    assert Box.lose(BoxName.ANTE, 100).return_cents == 0
    assert Box.push(BoxName.ANTE, 100).return_cents == 100
    assert Box.win(BoxName.BLIND, 125, Payout(3, 2)).return_cents == 312
    with pytest.raises(ValueError, match="cannot lose more than its stake"):
        Box(BoxName.ANTE, 100, -101)


# --- the examples in the docstrings are tests too ----------------------------------------------


@pytest.mark.parametrize("module", ["paytables", "boxes", "progressive", "uth", "stud"])
def test_docstring_examples(module: str) -> None:
    imported = importlib.import_module(f"rules.{module}")
    failures, attempted = doctest.testmod(imported, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failures == 0
