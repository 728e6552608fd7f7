"""PAR sheets: every figure against an independent computation.

- the progressive's deal counts against the numpy enumeration of all C(52, 7) hands (one run,
  shared by the module: about a second) and the sheet's return against progressive_return;
- Trips against the published 7-card counts (this file's own copy) and the same enumeration;
- the Stud Bonus's checked-in counts against a brute force over all C(47, 5) dealer hands for a
  sample of player hands (rank5_batch), and in full (slow) against their recomputation.
No database.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from rules.batch import categories_batch, rank5_batch
from rules.enumeration import (
    combinations_array,
    five_card_category_counts,
    seven_card_category_counts,
)
from rules.errors import RulesError
from rules.hands import Category
from rules.par import (
    STUD_BONUS_BEATEN,
    par_sheets,
    percent,
    progressive_sheet,
    stud_bonus_beaten_counts,
    stud_bonus_sheet,
    trips_sheet,
)
from rules.paytables import CURRENT, PAYTABLES, Payout, Paytable, ProgressiveSchedule
from rules.progressive import ProgressiveAward, progressive_return

# One process builds this module's fixtures (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("tests/rules/test_par.py")

PUBLISHED_SEVEN = {
    Category.ROYAL_FLUSH: 4_324,
    Category.STRAIGHT_FLUSH: 37_260,
    Category.FOUR_OF_A_KIND: 224_848,
    Category.FULL_HOUSE: 3_473_184,
    Category.FLUSH: 4_047_644,
    Category.STRAIGHT: 6_180_020,
    Category.THREE_OF_A_KIND: 6_461_620,
}
DEALS = comb(52, 2) * comb(50, 5)
PAIRS = comb(52, 5) * comb(47, 5)


@pytest.fixture(scope="module")
def seven_card_counts() -> dict[Category, int]:
    return seven_card_category_counts()


def lines(sheet):
    return {line.kind: line for line in sheet.lines}


# --- the progressive --------------------------------------------------------------------------


def test_progressive_deal_counts_from_the_seven_card_enumeration(seven_card_counts):
    """Each 7-card set is 21 (hole, board) deals; of a royal set's 21, exactly one (both other
    cards in the hole) is the community royal: 4 board royals (the five-card enumeration's) x
    C(47, 2) hole pairs."""
    board_royals = five_card_category_counts()[Category.ROYAL_FLUSH]
    community = board_royals * comb(47, 2)
    sheet = lines(progressive_sheet(CURRENT.progressive, jackpot_cents=0, other_bettors=0))
    assert sheet["royal_flush"].combinations == 21 * seven_card_counts[Category.ROYAL_FLUSH] - (
        community
    )
    assert sheet["community_royal"].combinations == community
    for award, category in [
        ("straight_flush", Category.STRAIGHT_FLUSH),
        ("four_of_a_kind", Category.FOUR_OF_A_KIND),
        ("full_house", Category.FULL_HOUSE),
    ]:
        assert sheet[award].combinations == 21 * seven_card_counts[category]
    paying = sum(sheet[k].combinations for k in sheet if k not in ("none", "envy"))
    assert sheet["none"].combinations == DEALS - paying
    assert {line.out_of for line in sheet.values()} == {DEALS}


@pytest.mark.parametrize("other_bettors", range(7))
@pytest.mark.parametrize("jackpot_cents", [0, 1_000_000, 7_914_341, 123_456_789])
def test_progressive_sheet_agrees_with_progressive_return(jackpot_cents, other_bettors):
    table = CURRENT.progressive
    sheet = progressive_sheet(table, jackpot_cents=jackpot_cents, other_bettors=other_bettors)
    exact = progressive_return(
        jackpot_cents=jackpot_cents, other_bettors=other_bettors, paytable=table
    )
    assert sheet.rtp == exact.rtp
    assert sheet.house_edge == 1 - exact.rtp
    assert sheet.rtp_percent == exact.rtp_percent
    by_kind = lines(sheet)
    assert [line.kind for line in sheet.lines] == [
        "royal_flush",
        "envy",
        "community_royal",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "none",
    ]
    for award in ProgressiveAward:
        assert by_kind[str(award)].probability == exact.probabilities[award]
    assert by_kind["envy"].probability == exact.envy_probability
    assert by_kind["envy"].combinations == other_bettors * by_kind["royal_flush"].combinations
    assert by_kind["envy"].on_top and not by_kind["royal_flush"].on_top
    assert by_kind["royal_flush"].pays_cents == jackpot_cents
    # Per stake: contribution = probability x amount / stake; they add up to the return, and
    # the own awards' probabilities (envy is on top of them) to 1.
    for line in sheet.lines:
        assert line.rtp_contribution == line.probability * Fraction(line.pays_cents, 500)
    assert sum(line.rtp_contribution for line in sheet.lines) == sheet.rtp
    assert sum(line.probability for line in sheet.lines if not line.on_top) == 1
    if sheet.rtp:
        assert sum(line.share_of_return for line in sheet.lines) == 1


def test_progressive_sheet_pays_the_paytables_amounts():
    table = ProgressiveSchedule(
        version="test/half", jackpot_percent_bp=5_050, envy_cents=10_000, full_house_cents=0
    )
    by_kind = lines(progressive_sheet(table, jackpot_cents=1_000_001, other_bettors=2))
    assert by_kind["royal_flush"].pays == "50.50% of the meter"
    assert by_kind["royal_flush"].pays_cents == 505_000  # 1,000,001 x 50.5%, rounded down
    assert by_kind["envy"].pays_cents == 10_000
    assert (by_kind["full_house"].pays, by_kind["full_house"].rtp_contribution) == ("nothing", 0)
    assert by_kind["community_royal"].pays == "EUR 5,000"


def test_progressive_sheet_refuses_bad_parameters():
    with pytest.raises(RulesError) as caught:
        progressive_sheet(CURRENT.progressive, jackpot_cents=0, other_bettors=7)
    assert (caught.value.code, caught.value.param) == ("invalid_parameter", "other_bettors")


# --- Trips ------------------------------------------------------------------------------------


def test_trips_counts_are_the_published_and_enumerated_ones(seven_card_counts):
    sheet = lines(trips_sheet(CURRENT.uth_trips))
    for category, published in PUBLISHED_SEVEN.items():
        assert sheet[category.label].combinations == published == seven_card_counts[category]
        assert sheet[category.label].out_of == comb(52, 7)
    below = sum(seven_card_counts[c] for c in Category if c < Category.THREE_OF_A_KIND)
    assert sheet["loses"].combinations == below


def test_trips_return_is_the_known_figure():
    """3-4-7-8-30-40-50 to 1 is the common Trips table: house edge 3.50% (rounded)."""
    sheet = trips_sheet(CURRENT.uth_trips)
    expected = sum(
        Fraction(PUBLISHED_SEVEN[c], comb(52, 7)) * (1 + odds)
        for c, odds in [
            (Category.ROYAL_FLUSH, 50),
            (Category.STRAIGHT_FLUSH, 40),
            (Category.FOUR_OF_A_KIND, 30),
            (Category.FULL_HOUSE, 8),
            (Category.FLUSH, 7),
            (Category.STRAIGHT, 4),
            (Category.THREE_OF_A_KIND, 3),
        ]
    )
    assert sheet.rtp == expected == Fraction(6_455_243, 6_689_228)
    assert (sheet.rtp_percent, sheet.house_edge_percent) == ("96.5020", "3.4980")
    assert [line.pays for line in sheet.lines][:2] == ["50:1", "40:1"]
    assert sum(line.probability for line in sheet.lines) == 1


def test_fractional_odds_return_stake_plus_win():
    odds = dict(CURRENT.uth_trips.odds)
    odds[Category.THREE_OF_A_KIND] = Payout(5, 2)
    table = Paytable(name="uth_trips", version="test/trips", odds=odds)
    assert lines(trips_sheet(table))["three_of_a_kind"].rtp_contribution == Fraction(
        6_461_620, comb(52, 7)
    ) * Fraction(7, 2)


def test_a_sheet_needs_its_boxs_paytable():
    with pytest.raises(RulesError) as caught:
        trips_sheet(CURRENT.stud_bonus)
    assert (caught.value.code, caught.value.param) == ("invalid_parameter", "version")


# --- the Stud Bonus ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def player_hands() -> dict[Category, np.ndarray]:
    """Every flush-or-better five, by category, in the table's (lexicographic) order."""
    hands = combinations_array(5)
    categories = categories_batch(rank5_batch(hands))
    return {c: hands[categories == c] for c in Category if c >= Category.FLUSH}


@pytest.fixture(scope="module")
def fives_of_47() -> np.ndarray:
    """All C(47, 5) fives of positions 0..46 (indices into the 47 cards left)."""
    fives = combinations_array(5)
    return fives[fives.max(axis=1) < 47].astype(np.intp)


def brute_force_beaten(hand: np.ndarray, fives_of_47: np.ndarray) -> int:
    """Dealer fives from the 47 other cards ranking strictly below ``hand``: all C(47, 5)."""
    rest = np.setdiff1d(np.arange(52), hand)
    assert len(rest) == 47 and len(fives_of_47) == comb(47, 5)
    player_rank = int(rank5_batch(hand.reshape(1, 5))[0])
    return int((rank5_batch(rest[fives_of_47]) < player_rank).sum())


def test_stud_bonus_table_shape(player_hands):
    sizes = {c: len(v) for c, v in STUD_BONUS_BEATEN.items()}
    assert sizes == {
        Category.FLUSH: 5_108,
        Category.FULL_HOUSE: 3_744,
        Category.FOUR_OF_A_KIND: 624,
        Category.STRAIGHT_FLUSH: 36,
        Category.ROYAL_FLUSH: 4,
    }
    assert sizes == {c: len(v) for c, v in player_hands.items()}
    # A royal beats every dealer five but the 3 other royals (a tie: no Bonus).
    assert STUD_BONUS_BEATEN[Category.ROYAL_FLUSH] == (comb(47, 5) - 3,) * 4


# Positions in each category's list: the first and last, and a few in between (ties with the
# same ranks in other suits, wheels, the weakest flush).
SAMPLE = {
    Category.FLUSH: [0, 1, 777, 2_500, 5_107],
    Category.FULL_HOUSE: [0, 1_234, 3_743],
    Category.FOUR_OF_A_KIND: [0, 311, 623],
    Category.STRAIGHT_FLUSH: [0, 35],
}


@pytest.mark.parametrize(("category", "position"), [(c, p) for c, ps in SAMPLE.items() for p in ps])
def test_stud_bonus_counts_against_a_brute_force(player_hands, fives_of_47, category, position):
    hand = player_hands[category][position]
    assert STUD_BONUS_BEATEN[category][position] == brute_force_beaten(hand, fives_of_47)


def test_stud_bonus_sheet_from_the_counts():
    sheet = stud_bonus_sheet(CURRENT.stud_bonus)
    by_kind = lines(sheet)
    for category, counts in STUD_BONUS_BEATEN.items():
        assert by_kind[category.label].combinations == sum(counts)
        assert by_kind[category.label].out_of == PAIRS
    assert by_kind["royal_flush"].combinations == 4 * (comb(47, 5) - 3)
    expected = sum(
        Fraction(sum(STUD_BONUS_BEATEN[c]), PAIRS) * (1 + CURRENT.stud_bonus.odds[c].numerator)
        for c in STUD_BONUS_BEATEN
    )
    assert sheet.rtp == expected
    assert sum(line.probability for line in sheet.lines) == 1
    assert (sheet.rtp_percent, sheet.house_edge_percent) == ("69.0906", "30.9094")


@pytest.mark.slow
def test_stud_bonus_table_recomputed_in_full():
    assert stud_bonus_beaten_counts() == dict(STUD_BONUS_BEATEN)


# --- choosing sheets --------------------------------------------------------------------------


def test_par_sheets_in_force_and_by_version():
    games = [s.game for s in par_sheets(version=None, jackpot_cents=0, other_bettors=0)]
    assert games == ["uth_progressive", "uth_trips", "stud_bonus"]
    (one,) = par_sheets(version="uth-trips/2026-1", jackpot_cents=0, other_bettors=0)
    assert one.paytable_version == "uth-trips/2026-1"
    (one,) = par_sheets(version="stud-bonus/2026-1", jackpot_cents=0, other_bettors=0)
    assert one.game == "stud_bonus"
    (one,) = par_sheets(version="uth-progressive/2026-1", jackpot_cents=5, other_bettors=3)
    assert (one.jackpot_cents, one.other_bettors, one.stake_cents) == (5, 3, 500)


@pytest.mark.parametrize("version", ["uth-blind/2026-1", "stud-raise/2026-1", "nope"])
def test_par_sheets_refuses_versions_without_a_sheet(version):
    assert version in PAYTABLES or version == "nope"
    with pytest.raises(RulesError) as caught:
        par_sheets(version=version, jackpot_cents=0, other_bettors=0)
    assert (caught.value.code, caught.value.param) == ("invalid_parameter", "version")
    assert "stud-bonus/2026-1, uth-progressive/2026-1, uth-trips/2026-1" in caught.value.message


@pytest.mark.parametrize(
    ("value", "up", "text"),
    [
        (Fraction(1, 3), False, "33.3333"),
        (Fraction(1, 3), True, "33.3334"),
        (Fraction(-1, 3), True, "-33.3333"),
        (Fraction(-1, 3), False, "-33.3334"),
        (Fraction(0), True, "0.0000"),
    ],
)
def test_percent_rounds_as_asked(value, up, text):
    assert percent(value, up=up) == text
