"""The progressive: awards on the 7-card hand, envy, and the exact return of the bet."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from itertools import combinations
from math import comb, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.cards import DECK, Card, Rank, Suit, parse_cards
from rules.errors import RulesError
from rules.hands import Category, evaluate
from rules.paytables import CURRENT, ProgressiveSchedule
from rules.progressive import (
    AWARD_DEALS,
    SEVEN_CARD_COUNTS,
    TOTAL_DEALS,
    ProgressiveAward,
    envy_seats,
    fixed_award_cents,
    progressive_award,
    progressive_return,
)

A = ProgressiveAward
TABLE = CURRENT.progressive


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split(), param="cards", count=(1, 7))


def award(hole: str, board: str) -> ProgressiveAward:
    return progressive_award(hole=cards(hole), board=cards(board))


# --- awards -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hole", "board", "expected"),
    [
        # Royal using both hole cards: the jackpot.
        ("Ah Kh", "Qh Jh Th 2c 3d", A.ROYAL_FLUSH),
        # Royal using one hole card (4 royal cards on the board): still the jackpot.
        ("Ah 2c", "Kh Qh Jh Th 3d", A.ROYAL_FLUSH),
        # The board alone is a royal: community royal, whatever the hole cards.
        ("2c 3d", "As Ks Qs Js Ts", A.COMMUNITY_ROYAL),
        # Board royal + a hole card that makes a (lower) straight flush: still community royal.
        ("9s 2c", "As Ks Qs Js Ts", A.COMMUNITY_ROYAL),
        ("8h 9h", "Th Jh Qh 2c 3d", A.STRAIGHT_FLUSH),
        ("Ah 2h", "3h 4h 5h Kc Kd", A.STRAIGHT_FLUSH),  # the wheel is a straight flush
        ("7c 7d", "7h 7s 2d Js 4s", A.FOUR_OF_A_KIND),
        ("7c 7d", "7h 2c 2d Js 4s", A.FULL_HOUSE),
        # Only the best award: quads and a full house at once pays the quads.
        ("7c 7d", "7h 7s Jd Js 4s", A.FOUR_OF_A_KIND),
        ("Ah Kh", "Qh Jh 3h 9s 4d", A.NONE),  # flush: no award
        ("7c 7d", "7h 2c 9d Js 4s", A.NONE),  # three of a kind: no award
    ],
)
def test_award_on_the_seven_card_hand(hole: str, board: str, expected: ProgressiveAward) -> None:
    assert award(hole, board) == expected


def test_award_refuses_wrong_counts_and_duplicates() -> None:
    with pytest.raises(RulesError) as caught:
        award("Ah", "Qh Jh Th 2c 3d")
    assert (caught.value.code, caught.value.param) == ("wrong_card_count", "hole")
    assert caught.value.message == "hole must hold 2 cards, got 1"
    with pytest.raises(RulesError) as caught:
        award("Ah Kh", "Qh Jh Th 2c")
    assert (caught.value.code, caught.value.param) == ("wrong_card_count", "board")
    with pytest.raises(RulesError) as caught:
        award("Ah Kh", "Qh Jh Ah 2c 3d")
    assert (caught.value.code, caught.value.param) == ("duplicate_card", "board[2]")


@pytest.mark.parametrize(
    ("which", "cents"),
    [
        (A.ROYAL_FLUSH, None),  # its amount is the meter
        (A.COMMUNITY_ROYAL, 500_000),
        (A.STRAIGHT_FLUSH, 150_000),
        (A.FOUR_OF_A_KIND, 50_000),
        (A.FULL_HOUSE, 5_000),
        (A.NONE, 0),
    ],
)
def test_fixed_award_cents(which: ProgressiveAward, cents: int | None) -> None:
    assert fixed_award_cents(which, TABLE) == cents


# --- envy -------------------------------------------------------------------------------------


def test_envy_goes_to_every_other_bettor_of_a_jackpot_royal() -> None:
    awards = {1: A.ROYAL_FLUSH, 3: A.FULL_HOUSE, 4: A.NONE}
    # Seat 6 staked but its award was not passed: a bettor is owed envy all the same.
    assert envy_seats(awards, bettors=[1, 3, 4, 6]) == frozenset({3, 4, 6})


def test_envy_is_not_paid_to_a_seat_without_a_progressive_stake() -> None:
    assert envy_seats({2: A.ROYAL_FLUSH}, bettors=[2, 5]) == frozenset({5})


def test_community_royal_pays_no_envy() -> None:
    awards = dict.fromkeys([1, 2, 3], A.COMMUNITY_ROYAL)
    assert envy_seats(awards, bettors=[1, 2, 3]) == frozenset()


def test_no_jackpot_no_envy_and_a_lone_winner_gets_none() -> None:
    assert envy_seats({1: A.STRAIGHT_FLUSH}, bettors=[1, 2]) == frozenset()
    assert envy_seats({1: A.ROYAL_FLUSH}, bettors=[1]) == frozenset()


def test_envy_refuses_impossible_input() -> None:
    with pytest.raises(ValueError, match="two jackpot royals in one round is impossible"):
        envy_seats({1: A.ROYAL_FLUSH, 2: A.ROYAL_FLUSH}, bettors=[1, 2])
    with pytest.raises(ValueError, match="without a progressive stake"):
        envy_seats({1: A.ROYAL_FLUSH}, bettors=[2])


def _royal(suit: Suit) -> tuple[Card, ...]:
    return tuple(
        Card(rank, suit) for rank in (Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE)
    )


def test_two_jackpot_royals_at_one_table_are_impossible() -> None:
    """For every way the board can hold 3 or 4 cards of a royal (the only boards on which a hole
    card can complete one), list every hole pair that wins the jackpot: any two of them share a
    card, so no two seats (who hold distinct cards) can both win in the same round."""
    royal = _royal(Suit.SPADES)
    fillers = cards("2c 3d")
    for size in (3, 4):
        for on_board in combinations(royal, size):
            board = (*on_board, *fillers[: 5 - size])
            rest = [c for c in DECK if c not in board]
            winners = [
                hole
                for hole in combinations(rest, 2)
                if progressive_award(hole=hole, board=board) == A.ROYAL_FLUSH
            ]
            assert winners, board  # the royal can be completed...
            for first, second in combinations(winners, 2):
                assert set(first) & set(second), (board, first, second)  # ...by one seat only


# No deadline: the first example may pay for building the evaluator's tables (~0.2 s).
@settings(deadline=None)
@given(st.permutations(DECK), st.sampled_from(list(Suit)), st.integers(3, 4))
def test_no_two_seats_both_win_the_jackpot(deck: list[Card], suit: Suit, size: int) -> None:
    """Random boards rich in one royal, random disjoint hole pairs for 7 seats."""
    royal = _royal(suit)
    board = [*royal[:size], *[c for c in deck if c not in royal][: 5 - size]]
    missing = [c for c in royal if c not in board]
    rest = [c for c in deck if c not in board and c not in missing]
    # Seat 0 gets the missing royal cards (a sure jackpot); six more seats get the rest.
    holes = [(*missing, *rest[: 2 - len(missing)])]
    rest = rest[2 - len(missing) :]
    holes += [tuple(rest[2 * i : 2 * i + 2]) for i in range(6)]
    awards = {seat: progressive_award(hole=hole, board=board) for seat, hole in enumerate(holes)}
    assert awards[0] == A.ROYAL_FLUSH
    assert [seat for seat, a in awards.items() if a == A.ROYAL_FLUSH] == [0]
    assert envy_seats(awards, bettors=range(7)) == frozenset(range(1, 7))


# --- the counts behind the return -------------------------------------------------------------

# Published counts of 7-card sets by best hand (of C(52, 7) = 133,784,560).
PUBLISHED_SEVEN_CARD = {
    Category.ROYAL_FLUSH: 4_324,
    Category.STRAIGHT_FLUSH: 37_260,
    Category.FOUR_OF_A_KIND: 224_848,
    Category.FULL_HOUSE: 3_473_184,
}


def test_seven_card_counts_match_the_published_ones() -> None:
    assert dict(SEVEN_CARD_COUNTS) == PUBLISHED_SEVEN_CARD


def test_deal_counts() -> None:
    assert TOTAL_DEALS == 1_326 * 2_118_760 == 2_809_475_760
    assert dict(AWARD_DEALS) == {
        A.COMMUNITY_ROYAL: 4_324,  # 4 royals on the board x C(47, 2) hole pairs
        A.ROYAL_FLUSH: 86_480,  # 21 splits x 4,324 royal sets - the 4,324 community ones
        A.STRAIGHT_FLUSH: 21 * 37_260,
        A.FOUR_OF_A_KIND: 21 * 224_848,
        A.FULL_HOUSE: 21 * 3_473_184,
        A.NONE: 2_809_475_760 - 4_324 - 86_480 - 21 * (37_260 + 224_848 + 3_473_184),
    }


def _rank_patterns(ranks_left: int, cards_left: int) -> Iterator[tuple[int, ...]]:
    """Every way to give 0..4 cards to each of ``ranks_left`` ranks, ``cards_left`` in all."""
    if ranks_left == 0:
        if cards_left == 0:
            yield ()
        return
    for here in range(min(4, cards_left) + 1):
        for tail in _rank_patterns(ranks_left - 1, cards_left - here):
            yield (here, *tail)


def test_full_house_and_quads_counts_by_enumerating_rank_patterns() -> None:
    """Independent of the closed forms: a full house or quads needs three cards of a rank, and
    with at most 4 distinct ranks no suit can hold 5 cards, so the category depends only on the
    rank pattern; each pattern is evaluated once and weighted by its suit choices."""
    counts = {Category.FULL_HOUSE: 0, Category.FOUR_OF_A_KIND: 0}
    for pattern in _rank_patterns(13, 7):
        if max(pattern) < 3:
            continue
        hand, next_suit = [], 0
        for rank, copies in zip(Rank, pattern, strict=True):
            for _ in range(copies):  # spread suits round-robin: no flush in the evaluated hand
                hand.append(Card(rank, list(Suit)[next_suit % 4]))
                next_suit += 1
        category = evaluate(hand).category
        if category in counts:
            counts[category] += prod(comb(4, m) for m in pattern)
    assert counts[Category.FULL_HOUSE] == SEVEN_CARD_COUNTS[Category.FULL_HOUSE] == 3_473_184
    assert counts[Category.FOUR_OF_A_KIND] == SEVEN_CARD_COUNTS[Category.FOUR_OF_A_KIND]


def test_straight_flush_and_royal_counts_by_enumerating_suited_cards() -> None:
    """Independent of the closed forms: a straight flush lives in the 5-7 cards of one suit; any
    off-suit cards (from the 39) cannot change a straight flush's best hand."""
    counts = {Category.STRAIGHT_FLUSH: 0, Category.ROYAL_FLUSH: 0}
    for suited in (5, 6, 7):
        for ranks in combinations(Rank, suited):
            category = evaluate([Card(rank, Suit.HEARTS) for rank in ranks]).category
            if category in counts:
                counts[category] += 4 * comb(39, 7 - suited)  # 4 suits
    assert counts == {
        Category.STRAIGHT_FLUSH: SEVEN_CARD_COUNTS[Category.STRAIGHT_FLUSH],
        Category.ROYAL_FLUSH: SEVEN_CARD_COUNTS[Category.ROYAL_FLUSH],
    }


def test_splits_of_a_royal_set_one_community_twenty_jackpots() -> None:
    """The deal counts take 21 (hole, board) splits per 7-card set; for a royal set exactly one
    split (both non-royal cards in the hole) is the community royal."""
    seven = cards("As Ks Qs Js Ts 2c 9s")
    tally = {a: 0 for a in A}
    for hole in combinations(seven, 2):
        board = [c for c in seven if c not in hole]
        tally[progressive_award(hole=hole, board=board)] += 1
    assert tally[A.COMMUNITY_ROYAL] == 1
    assert tally[A.ROYAL_FLUSH] == 20


def test_splits_of_a_straight_flush_set_all_pay_the_straight_flush() -> None:
    seven = cards("9h Th Jh Qh Kh Ac Ad")
    awards = {
        progressive_award(hole=hole, board=[c for c in seven if c not in hole])
        for hole in combinations(seven, 2)
    }
    assert awards == {A.STRAIGHT_FLUSH}


# --- the return of the bet --------------------------------------------------------------------


def test_return_at_a_meter_of_eur_100000_worked_by_hand() -> None:
    # Expected award per bet, in cents, over the 2,809,475,760 deals:
    #   jackpot         86,480 x 10,000,000 =   864,800,000,000
    #   community        4,324 x    500,000 =     2,162,000,000
    #   straight flush 782,460 x    150,000 =   117,369,000,000
    #   quads        4,721,808 x     50,000 =   236,090,400,000
    #   full house  72,936,864 x      5,000 =   364,684,320,000
    #   envy: 2 others x 86,480 x 50,000    =     8,648,000,000
    #   total                               = 1,593,753,720,000
    # 1,593,753,720,000 / 2,809,475,760 = 567.2779... cents; / 500 = 1.1345559...
    result = progressive_return(
        jackpot_cents=10_000_000, other_bettors=2, paytable=TABLE, stake_cents=500
    )
    expected = Fraction(1_593_753_720_000, 2_809_475_760)
    assert result.expected_return_cents == expected
    assert result.rtp == expected / 500
    # 1,593,753,720,000 x 10,000 // (2,809,475,760 x 500) = 11,345 basis points (113.45%),
    # and x 1,000,000 // ... = 1,134,555 millionths -> "113.4555" (rounded down, not to ...56).
    assert 1_593_753_720_000 * 10_000 // (2_809_475_760 * 500) == 11_345
    assert result.rtp_bp == 11_345
    assert result.rtp_percent == "113.4555"
    assert result.envy_probability == Fraction(2 * 86_480, 2_809_475_760)
    assert result.probabilities[A.ROYAL_FLUSH] == Fraction(86_480, 2_809_475_760)
    assert sum(result.probabilities.values()) == 1
    assert (result.jackpot_cents, result.other_bettors, result.stake_cents) == (10_000_000, 2, 500)
    assert result.paytable_version == "uth-progressive/2026-1"


def test_return_with_an_empty_meter_is_the_fixed_awards_only() -> None:
    # (2,162,000,000 + 117,369,000,000 + 236,090,400,000 + 364,684,320,000) / 2,809,475,760
    # = 720,305,720,000 / 2,809,475,760 = 256.38... cents per 500: 5,127 bp.
    result = progressive_return(jackpot_cents=0, other_bettors=0, paytable=TABLE)
    assert result.expected_return_cents == Fraction(720_305_720_000, 2_809_475_760)
    assert result.rtp_bp == 5_127
    assert result.rtp_percent.startswith("51.27")


@pytest.mark.parametrize("others", range(7))
@pytest.mark.parametrize("bp", [10_000, 5_000, 3_333])
def test_break_even_meter_is_the_smallest_that_returns_the_stake(others: int, bp: int) -> None:
    table = ProgressiveSchedule(version="test", jackpot_percent_bp=bp)
    result = progressive_return(jackpot_cents=0, other_bettors=others, paytable=table)
    meter = result.break_even_jackpot_cents
    assert meter is not None and meter > 0
    at = progressive_return(jackpot_cents=meter, other_bettors=others, paytable=table)
    below = progressive_return(jackpot_cents=meter - 1, other_bettors=others, paytable=table)
    assert at.expected_return_cents >= 500 > below.expected_return_cents
    assert at.rtp >= 1 > below.rtp


def test_break_even_for_the_current_table_alone_at_the_table() -> None:
    # (500 - 720,305,720,000 / 2,809,475,760) x 2,809,475,760 / 86,480
    # = (1,404,737,880,000 - 720,305,720,000) / 86,480 = 684,432,160,000 / 86,480
    # = 7,914,340.42... -> 7,914,341 cents (EUR 79,143.41).
    result = progressive_return(jackpot_cents=0, other_bettors=0, paytable=TABLE)
    assert result.break_even_jackpot_cents == 7_914_341


def test_break_even_edge_cases() -> None:
    generous = ProgressiveSchedule(version="g", full_house_cents=10_000_000)
    assert progressive_return(jackpot_cents=0, other_bettors=0, paytable=generous).rtp > 1
    assert (
        progressive_return(
            jackpot_cents=0, other_bettors=0, paytable=generous
        ).break_even_jackpot_cents
        == 0
    )
    no_share = ProgressiveSchedule(version="n", jackpot_percent_bp=0)
    result = progressive_return(jackpot_cents=10**12, other_bettors=0, paytable=no_share)
    assert result.break_even_jackpot_cents is None


def test_return_never_uses_floats() -> None:
    result = progressive_return(jackpot_cents=12_345_678, other_bettors=6, paytable=TABLE)
    assert type(result.rtp) is Fraction and type(result.expected_return_cents) is Fraction
    assert all(type(p) is Fraction for p in result.probabilities.values())
    assert type(result.rtp_bp) is int and type(result.break_even_jackpot_cents) is int


@pytest.mark.parametrize(
    ("kwargs", "param", "message"),
    [
        ({"jackpot_cents": -1}, "jackpot_cents", "jackpot_cents must be at least 0, got -1"),
        ({"jackpot_cents": 1.0}, "jackpot_cents", "jackpot_cents must be an integer, got 1.0"),
        ({"jackpot_cents": True}, "jackpot_cents", "jackpot_cents must be an integer, got True"),
        ({"other_bettors": 7}, "other_bettors", "other_bettors must be between 0 and 6, got 7"),
        ({"other_bettors": -1}, "other_bettors", "other_bettors must be between 0 and 6, got -1"),
        ({"stake_cents": 0}, "stake_cents", "stake_cents must be at least 1, got 0"),
    ],
)
def test_return_refuses_bad_parameters(kwargs: dict[str, object], param: str, message: str) -> None:
    arguments: dict[str, object] = {"jackpot_cents": 0, "other_bettors": 0, **kwargs}
    with pytest.raises(RulesError) as caught:
        progressive_return(paytable=TABLE, **arguments)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_parameter",
        param,
        message,
    )
