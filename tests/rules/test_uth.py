"""Ultimate Texas Hold'em settlement: worked examples with exact cents, refusals, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.boxes import MAX_BET_CENTS, Box, BoxName, Outcome
from rules.cards import DECK, Card, Suit, parse_cards
from rules.errors import RulesError
from rules.hands import Category
from rules.progressive import ProgressiveAward
from rules.uth import (
    SeatProgressive,
    Street,
    UthAction,
    UthBets,
    UthDecision,
    UthSettlement,
    settle_uth,
)

ANTE, BLIND, PLAY, TRIPS = BoxName.ANTE, BoxName.BLIND, BoxName.PLAY, BoxName.TRIPS
PREFLOP_4X = UthDecision.play(Street.PREFLOP, 4)
PREFLOP_3X = UthDecision.play(Street.PREFLOP, 3)
FLOP_2X = UthDecision.play(Street.FLOP, 2)
RIVER_1X = UthDecision.play(Street.RIVER, 1)
FOLD = UthDecision.fold()


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split(), param="cards", count=(1, 7))


def settle(
    player: str,
    dealer: str,
    board: str,
    decision: UthDecision = PREFLOP_4X,
    *,
    ante: int = 100,
    trips: int = 0,
    progressive: int = 0,
) -> UthSettlement:
    return settle_uth(
        player=cards(player),
        dealer=cards(dealer),
        board=cards(board),
        bets=UthBets(ante, ante, trips, progressive),
        decision=decision,
    )


def nets(settlement: UthSettlement) -> dict[str, tuple[int, int]]:
    """Each box as (stake, net), by name: the whole money picture in one comparable value."""
    return {str(b.name): (b.stake_cents, b.net_cents) for b in settlement.boxes}


# A rainbow board with no straight or flush possible for two extra cards of these ranks.
DRY = "2h 7c 9d Js 4s"


# --- player beats dealer ----------------------------------------------------------------------


def test_player_wins_qualifying_dealer_with_a_straight_ante_play_and_blind_pay() -> None:
    # Player 8-9-T-J-Q straight; dealer a pair of twos (qualifies).
    s = settle("Qs 8h", "2d 5c", "9c Tc Jd 2h 3s", PREFLOP_4X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, True)
    assert s.player_hand.category == Category.STRAIGHT
    assert s.dealer_hand.category == Category.PAIR
    assert nets(s) == {"ante": (100, 100), "blind": (100, 100), "play": (400, 400)}
    assert s.net_cents == 600
    assert s.total_stake_cents == 600
    assert s.progressive is None


def test_player_wins_below_a_straight_the_blind_pushes() -> None:
    # Pair of aces beats pair of kings: Ante and Play pay, Blind pushes.
    s = settle("Ac Ad", "Kc Kd", DRY, FLOP_2X)
    assert s.outcome == Outcome.PLAYER
    assert nets(s) == {"ante": (100, 100), "blind": (100, 0), "play": (200, 200)}
    assert s.net_cents == 300


def test_dealer_does_not_qualify_player_wins_ante_pushes_play_pays() -> None:
    # Dealer K-Q-J-9-7 high: no pair, does not qualify.
    s = settle("Ac Ad", "Kc Qd", DRY, PREFLOP_3X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, False)
    assert nets(s) == {"ante": (100, 0), "blind": (100, 0), "play": (300, 300)}
    assert s.net_cents == 300


def test_blind_pays_three_to_two_rounded_down_on_an_odd_ante() -> None:
    # Ante 125, heart flush: Blind pays 125 x 3/2 = 187.5 -> 187. Dealer 9-high: no qualify.
    s = settle("Ah Kh", "2c 7d", "Qh Jh 3h 9s 4d", PREFLOP_4X, ante=125)
    assert s.player_hand.category == Category.FLUSH
    assert nets(s) == {"ante": (125, 0), "blind": (125, 187), "play": (500, 500)}
    assert s.net_cents == 687


def test_blind_flush_with_qualifying_dealer() -> None:
    s = settle("Ah Kh", "9c 8c", "Qh Jh 3h 9s 4d", RIVER_1X, ante=125)
    assert s.dealer_qualifies
    assert nets(s) == {"ante": (125, 125), "blind": (125, 187), "play": (125, 125)}


@pytest.mark.parametrize(
    ("player", "dealer", "board", "category", "blind_net"),
    [
        ("Qs 8h", "2d 5c", "9c Tc Jd 2h 3s", Category.STRAIGHT, 100),  # 1:1
        ("Ah Kh", "9c 8c", "Qh Jh 3h 9s 4d", Category.FLUSH, 150),  # 3:2
        ("7c 7d", "Jc 5h", "7h 2c 2d Js 4s", Category.FULL_HOUSE, 300),  # 3:1
        ("7c 7d", "Jc 5h", "7h 7s 2d Js 4s", Category.FOUR_OF_A_KIND, 1_000),  # 10:1
        ("8h 9h", "2d 5c", "Th Jh Qh 2c 3d", Category.STRAIGHT_FLUSH, 5_000),  # 50:1
        ("Ah Kh", "2d 5c", "Qh Jh Th 2c 3d", Category.ROYAL_FLUSH, 50_000),  # 500:1
        ("7c 7d", "2d 5c", "7h 2c 9d Js 4s", Category.THREE_OF_A_KIND, 0),  # push
        ("Ac Jd", "Kc Kd", "Ah 2c 9d Js 4s", Category.TWO_PAIR, 0),  # push
    ],
)
def test_blind_table_on_a_winning_player(
    player: str, dealer: str, board: str, category: Category, blind_net: int
) -> None:
    s = settle(player, dealer, board, RIVER_1X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, True)
    assert s.player_hand.category == category
    assert nets(s) == {"ante": (100, 100), "blind": (100, blind_net), "play": (100, 100)}


# --- dealer beats player ----------------------------------------------------------------------


def test_dealer_wins_qualifying_everything_loses() -> None:
    s = settle("Kc Qd", "Ac Ad", DRY, RIVER_1X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.DEALER, True)
    assert nets(s) == {"ante": (100, -100), "blind": (100, -100), "play": (100, -100)}
    assert s.net_cents == -300


def test_dealer_wins_without_qualifying_only_the_ante_is_returned() -> None:
    # Dealer A-Q-J-9-7 beats player K-J-9-7-4 with no pair: Blind and Play still lose.
    s = settle("Kc 3d", "Ac Qd", DRY, PREFLOP_4X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.DEALER, False)
    assert nets(s) == {"ante": (100, 0), "blind": (100, -100), "play": (400, -400)}
    assert s.net_cents == -500


def test_player_straight_loses_to_a_flush_blind_loses_too() -> None:
    s = settle("8h Qs", "Ac 5c", "9c Tc Jd 2c 3s", FLOP_2X)
    assert s.outcome == Outcome.DEALER
    assert s.player_hand.category == Category.STRAIGHT
    assert nets(s) == {"ante": (100, -100), "blind": (100, -100), "play": (200, -200)}


# --- ties ---------------------------------------------------------------------------------


def test_tie_everything_pushes_and_trips_still_pays() -> None:
    # Both play the broadway straight on the board.
    s = settle("2c 3d", "4h 5h", "As Ks Qd Jc Tc", PREFLOP_4X, trips=50)
    assert s.outcome == Outcome.TIE
    assert nets(s) == {
        "ante": (100, 0),
        "blind": (100, 0),
        "play": (400, 0),
        "trips": (50, 200),  # straight 4:1
    }
    assert s.net_cents == 200


def test_tie_without_a_qualifying_dealer_still_pushes() -> None:
    # Board plays for both: A-K-Q-9-8 high, no pair.
    s = settle("2c 3d", "4h 5h", "As Kd Qd 9c 8c", RIVER_1X)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.TIE, False)
    assert nets(s) == {"ante": (100, 0), "blind": (100, 0), "play": (100, 0)}


def test_suits_never_break_a_tie() -> None:
    s = settle("Ac 5d", "Ah 5s", DRY, RIVER_1X)  # A-J-9-7-5 high each, suits differ
    assert s.outcome == Outcome.TIE
    assert s.net_cents == 0


# --- fold and trips ---------------------------------------------------------------------------


def test_fold_loses_ante_and_blind_play_never_placed() -> None:
    s = settle("Kc 3d", "Ac Qd", DRY, FOLD)
    assert s.outcome == Outcome.FOLD
    assert nets(s) == {"ante": (100, -100), "blind": (100, -100), "play": (0, 0)}
    assert s.net_cents == -200


def test_fold_even_when_the_player_would_have_won() -> None:
    s = settle("Ac Ad", "Kc Qd", DRY, FOLD)
    assert s.outcome == Outcome.FOLD
    assert s.net_cents == -200


def test_trips_pays_on_a_folded_hand() -> None:
    # Three sevens folded: Trips 3:1 on 50 = +150; Ante and Blind lost.
    s = settle("7c 7d", "Ac Ad", "7h 2c 9d Js 4s", FOLD, trips=50)
    assert nets(s) == {
        "ante": (100, -100),
        "blind": (100, -100),
        "play": (0, 0),
        "trips": (50, 150),
    }
    assert s.net_cents == -50


def test_trips_below_three_of_a_kind_loses_even_when_the_player_wins() -> None:
    s = settle("Ac Ad", "Kc Kd", DRY, FLOP_2X, trips=50)
    assert s.box(TRIPS).net_cents == -50
    assert s.net_cents == 300 - 50


def test_trips_pays_whatever_the_dealer_holds() -> None:
    # The dealer's straight flush beats the player's three sevens: Ante, Blind and Play lose,
    # the Trips bet still pays 3:1.
    s = settle("7c 7d", "8h 9h", "7h Th Jh Qh 4s", RIVER_1X, trips=100)
    assert s.outcome == Outcome.DEALER
    assert s.box(TRIPS).net_cents == 300
    assert s.net_cents == -300 + 300


@pytest.mark.parametrize(
    ("player", "board", "trips_net"),
    [
        ("7c 7d", "7h 2c 9d Js 4s", 300),  # three of a kind 3:1
        ("8h Qs", "9c Tc Jd 2h 3s", 400),  # straight 4:1
        ("Ah Kh", "Qh Jh 3h 9s 4d", 700),  # flush 7:1
        ("7c 7d", "7h 2c 2d Js 4s", 800),  # full house 8:1
        ("7c 7d", "7h 7s 2d Js 4s", 3_000),  # four of a kind 30:1
        ("8h 9h", "Th Jh Qh 2c 3d", 4_000),  # straight flush 40:1
        ("Ah Kh", "Qh Jh Th 2c 3d", 5_000),  # royal flush 50:1
        ("Ac Jd", "Ah 2c 9d Js 4s", -100),  # two pair loses
        ("Ac Ad", "2h 7c 9d Js 4s", -100),  # pair loses
        ("Kc Qd", "2h 7c 9d 3s 4s", -100),  # high card loses
    ],
)
def test_trips_table(player: str, board: str, trips_net: int) -> None:
    s = settle(player, "5c 6c", board, FOLD, trips=100)
    assert s.box(TRIPS).net_cents == trips_net


def test_no_trips_box_without_a_trips_stake() -> None:
    s = settle("7c 7d", "Ac Ad", "7h 2c 9d Js 4s", FOLD)
    assert [b.name for b in s.boxes] == [ANTE, BLIND, PLAY]
    with pytest.raises(KeyError):
        s.box(TRIPS)


# --- the progressive in the settlement --------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "board", "award", "fixed"),
    [
        ("Ah Kh", "Qh Jh Th 2c 3d", ProgressiveAward.ROYAL_FLUSH, None),
        ("2c 3d", "As Ks Qs Js Ts", ProgressiveAward.COMMUNITY_ROYAL, 500_000),
        ("9s 2c", "As Ks Qs Js Ts", ProgressiveAward.COMMUNITY_ROYAL, 500_000),
        ("8h 9h", "Th Jh Qh 2c 3d", ProgressiveAward.STRAIGHT_FLUSH, 150_000),
        ("7c 7d", "7h 7s 2d Js 4s", ProgressiveAward.FOUR_OF_A_KIND, 50_000),
        ("7c 7d", "7h 2c 2d Js 4s", ProgressiveAward.FULL_HOUSE, 5_000),
        ("7c 7d", "7h 2c 9d Js 4s", ProgressiveAward.NONE, 0),
    ],
)
def test_progressive_is_reported_but_not_a_box_nor_in_the_net(
    player: str, board: str, award: ProgressiveAward, fixed: int | None
) -> None:
    with_stake = settle(player, "5c 6c", board, FOLD, progressive=500)
    without = settle(player, "5c 6c", board, FOLD)
    assert with_stake.progressive == SeatProgressive(500, award, fixed)
    assert with_stake.boxes == without.boxes
    assert with_stake.net_cents == without.net_cents == -200  # judged after a fold too


def test_progressive_stake_must_be_the_pools() -> None:
    with pytest.raises(RulesError) as caught:
        settle("Ah Kh", "5c 6c", DRY, progressive=400)
    assert (caught.value.code, caught.value.param) == ("invalid_bet", "bets.progressive_cents")
    assert caught.value.message == (
        "progressive_cents must be 0 or the pool's stake of 500 cents, got 400"
    )
    s = settle_uth(
        player=cards("Ah Kh"),
        dealer=cards("5c 6c"),
        board=cards(DRY),
        bets=UthBets(100, 100, 0, 1_000),
        decision=FOLD,
        progressive_stake_cents=1_000,
    )
    assert s.progressive is not None and s.progressive.stake_cents == 1_000


# --- cards ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "dealer", "board", "param", "message"),
    [
        ("Ah", "5c 6c", DRY, "player", "player must hold 2 cards, got 1"),
        ("Ah Kh", "5c 6c 8c", DRY, "dealer", "dealer must hold 2 cards, got 3"),
        ("Ah Kh", "5c 6c", "2h 7c 9d Js", "board", "board must hold 5 cards, got 4"),
    ],
)
def test_wrong_card_counts(player: str, dealer: str, board: str, param: str, message: str) -> None:
    with pytest.raises(RulesError) as caught:
        settle(player, dealer, board)
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "wrong_card_count",
        param,
        message,
    )


def test_a_card_in_two_places_is_refused_not_settled() -> None:
    with pytest.raises(RulesError) as caught:
        settle("Ah Kh", "5c 7c", DRY)
    assert (caught.value.code, caught.value.param) == ("duplicate_card", "board[1]")
    assert caught.value.message == "card 7c appears twice: in dealer[1] and board[1]"


# --- decisions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("street", "multiple"),
    [(Street.PREFLOP, 4), (Street.PREFLOP, 3), (Street.FLOP, 2), (Street.RIVER, 1)],
)
def test_every_legal_play(street: Street, multiple: int) -> None:
    decision = UthDecision(UthAction.PLAY, street, multiple)
    assert decision == UthDecision.play(street, multiple)
    s = settle("Ac Ad", "Kc Kd", DRY, decision)
    assert s.box(PLAY) == Box(PLAY, 100 * multiple, 100 * multiple)


# The wire's decisions (JSON: strings, nulls, unknown fields) are read in tables.bodies and tested
# in tests/tables/test_bodies.py; the engine checks the typed values it is given.
@pytest.mark.parametrize(
    ("street", "multiple", "param", "message"),
    [
        (Street.FLOP, 3, "decision.multiple", "on the flop Play must be 2x the Ante, got 3x"),
        (
            Street.PREFLOP,
            2,
            "decision.multiple",
            "before the flop Play must be 3x or 4x the Ante, got 2x",
        ),
        (Street.RIVER, 2, "decision.multiple", "on the river Play must be 1x the Ante, got 2x"),
        (
            Street.FLOP,
            None,
            "decision.multiple",
            "Play needs a multiple of the Ante: 2x on the flop",
        ),
        (None, 2, "decision.street", "Play needs a street: preflop, flop or river"),
        (Street.FLOP, True, "decision.multiple", "multiple must be an integer, got True"),
    ],
)
def test_illegal_plays_are_refused(
    street: Street | None, multiple: int | None, param: str, message: str
) -> None:
    with pytest.raises(RulesError) as caught:
        UthDecision(UthAction.PLAY, street, multiple)
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_decision",
        param,
        message,
    )


def test_a_fold_takes_no_street_nor_multiple() -> None:
    with pytest.raises(RulesError, match="a fold takes no street"):
        UthDecision(UthAction.FOLD, Street.RIVER)
    with pytest.raises(RulesError, match="a fold takes no multiple"):
        UthDecision(UthAction.FOLD, None, 1)


def test_decision_constructor_checks_too() -> None:
    with pytest.raises(RulesError, match="on the flop Play must be 2x the Ante, got 3x"):
        UthDecision.play(Street.FLOP, 3)


# --- bets -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bets", "param", "message"),
    [
        (
            (100, 50),
            "bets.blind_cents",
            "Blind must equal the Ante: ante_cents is 100, blind_cents is 50",
        ),
        ((0, 0), "bets.ante_cents", "bets.ante_cents must be at least 1, got 0"),
        ((-100, -100), "bets.ante_cents", "bets.ante_cents must be at least 1, got -100"),
        (
            (True, True),
            "bets.ante_cents",
            "bets.ante_cents must be an integer number of cents, got True",
        ),
        ((100, 100, -1), "bets.trips_cents", "bets.trips_cents must be at least 0, got -1"),
        (
            (100, 100, 0, False),
            "bets.progressive_cents",
            "bets.progressive_cents must be an integer number of cents, got False",
        ),
        (
            (MAX_BET_CENTS + 1, MAX_BET_CENTS + 1),
            "bets.ante_cents",
            "bets.ante_cents must be at most 10000000 cents (the table limit), got 10000001",
        ),
    ],
)
def test_illegal_bets_are_refused(bets: tuple[int, ...], param: str, message: str) -> None:
    with pytest.raises(RulesError) as caught:
        UthBets(*bets)
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_bet",
        param,
        message,
    )


def test_bets_constructor_checks_too() -> None:
    with pytest.raises(RulesError, match="Blind must equal the Ante"):
        UthBets(100, 99)
    with pytest.raises(RulesError, match="must be an integer number of cents, got True"):
        UthBets(100, 100, True)


# --- properties -------------------------------------------------------------------------------

DECISIONS = [PREFLOP_4X, PREFLOP_3X, FLOP_2X, RIVER_1X, FOLD]
stakes = st.integers(1, MAX_BET_CENTS)


@st.composite
def deals(draw: st.DrawFn) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
    deck = draw(st.permutations(DECK))
    return tuple(deck[:2]), tuple(deck[2:4]), tuple(deck[4:9])


# No deadline: the first example may pay for building the evaluator's tables (~0.2 s).
@settings(deadline=None)
@given(
    deals(),
    stakes,
    st.integers(0, MAX_BET_CENTS),
    st.sampled_from([0, 500]),
    st.sampled_from(DECISIONS),
)
def test_net_never_below_minus_the_total_stake(
    deal: tuple[tuple[Card, ...], ...],
    ante: int,
    trips: int,
    progressive: int,
    decision: UthDecision,
) -> None:
    player, dealer, board = deal
    bets = UthBets(ante, ante, trips, progressive)
    s = settle_uth(player=player, dealer=dealer, board=board, bets=bets, decision=decision)
    assert type(s.net_cents) is int
    assert all(type(b.net_cents) is int and b.net_cents >= -b.stake_cents for b in s.boxes)
    assert s.net_cents == sum(b.net_cents for b in s.boxes)
    total = 2 * ante + trips + ante * decision.play_multiple
    assert s.total_stake_cents == total
    assert s.net_cents >= -total
    if decision.action == UthAction.FOLD:
        trips_net = s.box(TRIPS).net_cents if trips else 0
        assert s.net_cents == -2 * ante + trips_net
    if not s.dealer_qualifies and s.outcome != Outcome.FOLD:
        assert s.box(ANTE).net_cents == 0


SUIT_PERMUTATIONS = st.permutations(list(Suit))


# No deadline: the first example may pay for building the evaluator's tables (~0.2 s).
@settings(deadline=None)
@given(deals(), SUIT_PERMUTATIONS, st.sampled_from(DECISIONS), st.integers(1, 999))
def test_settlement_is_invariant_under_a_permutation_of_suits(
    deal: tuple[tuple[Card, ...], ...], perm: list[Suit], decision: UthDecision, ante: int
) -> None:
    mapping = dict(zip(Suit, perm, strict=True))

    def relabel(hand: tuple[Card, ...]) -> tuple[Card, ...]:
        return tuple(Card(c.rank, mapping[c.suit]) for c in hand)

    bets = UthBets(ante, ante, 7, 500)
    player, dealer, board = deal
    a = settle_uth(player=player, dealer=dealer, board=board, bets=bets, decision=decision)
    b = settle_uth(
        player=relabel(player),
        dealer=relabel(dealer),
        board=relabel(board),
        bets=bets,
        decision=decision,
    )
    assert (a.boxes, a.net_cents, a.outcome, a.dealer_qualifies, a.progressive) == (
        b.boxes,
        b.net_cents,
        b.outcome,
        b.dealer_qualifies,
        b.progressive,
    )
    assert (a.player_hand.rank, a.dealer_hand.rank) == (b.player_hand.rank, b.dealer_hand.rank)
