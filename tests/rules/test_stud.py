"""Stud Poker settlement: worked examples with exact cents, refusals, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.boxes import MAX_BET_CENTS, BoxName, Outcome
from rules.cards import DECK, Card, Suit, parse_card, parse_cards
from rules.errors import RulesError
from rules.hands import Category
from rules.stud import StudAction, StudBets, StudDecision, StudSettlement, settle_stud

RAISE = StudDecision.raise_bet()
FOLD = StudDecision.fold()


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split(), param="cards", count=(1, 5))


def buy(discard: str, draw: str) -> StudDecision:
    return StudDecision.buy(parse_card(discard), parse_card(draw))


def settle(
    player: str, dealer: str, decision: StudDecision = RAISE, *, ante: int = 100, bonus: int = 0
) -> StudSettlement:
    return settle_stud(
        player=cards(player), dealer=cards(dealer), bets=StudBets(ante, bonus), decision=decision
    )


def nets(settlement: StudSettlement) -> dict[str, tuple[int, int]]:
    """Each box as (stake, net), by name."""
    return {str(b.name): (b.stake_cents, b.net_cents) for b in settlement.boxes}


DEALER_AK = "Ad Kc 8s 6d 2d"  # Ace-King high: qualifies, exactly at the threshold
DEALER_AQ = "Ad Qc 8s 6d 2d"  # Ace-Queen high: does not qualify


# --- fold -------------------------------------------------------------------------------------


def test_fold_loses_ante_and_bonus() -> None:
    s = settle("9h 9s 5c 4s 3h", DEALER_AK, FOLD, bonus=25)
    assert s.outcome == Outcome.FOLD
    assert nets(s) == {"ante": (100, -100), "raise": (0, 0), "bonus": (25, -25)}
    assert s.net_cents == -125


def test_fold_of_a_hand_that_would_have_won_the_bonus_still_loses_it() -> None:
    s = settle("3h 5h 9h Jh Qh", DEALER_AQ, FOLD, bonus=10)
    assert s.box(BoxName.BONUS).net_cents == -10


# --- dealer qualification ---------------------------------------------------------------------


def test_dealer_ace_queen_does_not_qualify_ante_pays_raise_returned() -> None:
    # Even a player with nothing (K-J high) is paid the Ante when the dealer does not qualify.
    s = settle("Kh Js 7c 4s 3h", DEALER_AQ)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, False)
    assert nets(s) == {"ante": (100, 100), "raise": (200, 0)}
    assert s.net_cents == 100


def test_dealer_ace_king_qualifies() -> None:
    s = settle("9h 9s 5c 4s 3h", DEALER_AK)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, True)
    assert nets(s) == {"ante": (100, 100), "raise": (200, 200)}  # pair 1:1


def test_a_pair_always_qualifies_the_dealer() -> None:
    s = settle("9h 9s 5c 4s 3h", "2c 2h 8s 6d 4d")
    assert s.dealer_qualifies and s.dealer_hand.category == Category.PAIR


def test_high_card_player_loses_to_a_qualifying_dealer_even_with_a_better_high_card() -> None:
    # Player A-K-Q-7-3 beats dealer A-K-8-6-2 on kickers, but with no pair never wins.
    s = settle("Ah Ks Qc 7s 3h", DEALER_AK)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.DEALER, True)
    assert nets(s) == {"ante": (100, -100), "raise": (200, -200)}
    assert s.net_cents == -300


def test_high_card_player_equal_to_an_ace_king_dealer_loses_not_ties() -> None:
    s = settle("Ah Ks 8c 6s 2h", DEALER_AK)
    assert s.outcome == Outcome.DEALER
    assert s.net_cents == -300


# --- raise: win / lose / tie ------------------------------------------------------------------


def test_dealer_better_hand_both_lose() -> None:
    s = settle("Qh Qs 5c 4s 3h", "Kh Kd 8s 6d 2d")
    assert s.outcome == Outcome.DEALER
    assert nets(s) == {"ante": (100, -100), "raise": (200, -200)}


def test_equal_hands_push() -> None:
    s = settle("Qh Qs 5c 4s 3h", "Qc Qd 5h 4c 3d")
    assert s.outcome == Outcome.TIE
    assert nets(s) == {"ante": (100, 0), "raise": (200, 0)}
    assert s.net_cents == 0


@pytest.mark.parametrize(
    ("player", "category", "raise_net", "bonus_net"),
    [
        ("9h 9s 5c 4s 3h", Category.PAIR, 200, -10),  # 1:1; no bonus below a flush
        ("9h 9s 5c 5h 3h", Category.TWO_PAIR, 400, -10),  # 2:1
        ("9h 9s 9c 5h 3h", Category.THREE_OF_A_KIND, 600, -10),  # 3:1
        ("9h Ts Jc Qh 8c", Category.STRAIGHT, 800, -10),  # 4:1
        ("3h 5h 9h Jh Qh", Category.FLUSH, 1_000, 1_000),  # 5:1, bonus 100:1
        ("9h 9s 9c 5h 5c", Category.FULL_HOUSE, 1_400, 1_500),  # 7:1, bonus 150:1
        ("9h 9s 9c 9d 5h", Category.FOUR_OF_A_KIND, 4_000, 10_000),  # 20:1, bonus 1000:1
        ("5h 6h 7h 8h 9h", Category.STRAIGHT_FLUSH, 10_000, 20_000),  # 50:1, bonus 2000:1
        ("Th Jh Qh Kh Ah", Category.ROYAL_FLUSH, 20_000, 50_000),  # 100:1, bonus 5000:1
    ],
)
def test_raise_and_bonus_tables_against_a_qualifying_dealer(
    player: str, category: Category, raise_net: int, bonus_net: int
) -> None:
    s = settle(player, DEALER_AK, ante=100, bonus=10)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, True)
    assert s.player_hand.category == category
    assert nets(s) == {"ante": (100, 100), "raise": (200, raise_net), "bonus": (10, bonus_net)}
    assert s.net_cents == 100 + raise_net + bonus_net


# --- bonus conditions -------------------------------------------------------------------------


def test_bonus_pays_when_the_dealer_does_not_qualify() -> None:
    s = settle("3h 5h 9h Jh Qh", DEALER_AQ, bonus=10)
    assert (s.outcome, s.dealer_qualifies) == (Outcome.PLAYER, False)
    assert nets(s) == {"ante": (100, 100), "raise": (200, 0), "bonus": (10, 1_000)}


def test_flush_beaten_by_the_dealers_better_flush_loses_the_bonus() -> None:
    s = settle("3h 5h 9h Jh Qh", "2c 5c 9c Jc Kc", bonus=10)
    assert s.outcome == Outcome.DEALER
    assert nets(s) == {"ante": (100, -100), "raise": (200, -200), "bonus": (10, -10)}


def test_flush_tying_the_dealers_flush_loses_the_bonus() -> None:
    # It must BEAT the dealer's hand; equal flushes push Ante and Raise but lose the Bonus.
    s = settle("3h 5h 9h Jh Qh", "3c 5c 9c Jc Qc", bonus=10)
    assert s.outcome == Outcome.TIE
    assert nets(s) == {"ante": (100, 0), "raise": (200, 0), "bonus": (10, -10)}


def test_buying_forfeits_the_bonus_even_with_a_flush() -> None:
    # Discard 2c, draw Qh: a heart flush that beats the dealer. Fee lost, Bonus forfeited.
    s = settle("3h 5h 9h Jh 2c", DEALER_AK, buy("2c", "Qh"), bonus=10)
    assert s.player_hand.category == Category.FLUSH
    assert nets(s) == {
        "ante": (100, 100),
        "raise": (200, 1_000),
        "bonus": (10, -10),
        "purchase": (100, -100),
    }
    assert s.net_cents == 990


# --- card purchase ----------------------------------------------------------------------------


def test_purchase_fee_is_lost_when_the_player_wins() -> None:
    # Discard 3h for 9d: pair of nines beats Ace-King.
    s = settle("9h 9s 5c 4s 3h", DEALER_AK, buy("3h", "9d"))
    assert s.player_hand.category == Category.THREE_OF_A_KIND
    assert nets(s) == {"ante": (100, 100), "raise": (200, 600), "purchase": (100, -100)}


def test_purchase_fee_is_lost_when_the_player_loses() -> None:
    s = settle("Qh Qs 5c 4s 3h", "Kh Kd 8s 6d 2d", buy("3h", "7c"))
    assert s.outcome == Outcome.DEALER
    assert nets(s) == {"ante": (100, -100), "raise": (200, -200), "purchase": (100, -100)}
    assert s.net_cents == -400


def test_purchase_fee_is_lost_when_the_dealer_does_not_qualify() -> None:
    s = settle("Kh Js 7c 4s 3h", DEALER_AQ, buy("3h", "2s"))
    assert s.outcome == Outcome.PLAYER
    assert nets(s) == {"ante": (100, 100), "raise": (200, 0), "purchase": (100, -100)}
    assert s.net_cents == 0


def test_the_final_hand_replaces_the_discard() -> None:
    s = settle("9h 9s 5c 4s 3h", DEALER_AK, buy("9s", "Kh"))
    assert s.player_hand.category == Category.HIGH_CARD  # the pair was broken
    assert sorted(str(c) for c in s.player_hand.best_five) == ["3h", "4s", "5c", "9h", "Kh"]
    assert s.outcome == Outcome.DEALER


def test_discard_not_in_the_hand_is_refused() -> None:
    with pytest.raises(RulesError) as caught:
        settle("9h 9s 5c 4s 3h", DEALER_AK, buy("Ts", "Kh"))
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_decision",
        "decision.discard",
        "cannot discard Ts: it is not in the player's hand",
    )


@pytest.mark.parametrize(
    ("draw", "where"),
    [("5c", "player[2]"), ("3h", "player[4]"), ("Kc", "dealer[1]")],  # 3h is the discard itself
)
def test_draw_of_a_card_already_dealt_is_a_duplicate(draw: str, where: str) -> None:
    with pytest.raises(RulesError) as caught:
        settle("9h 9s 5c 4s 3h", DEALER_AK, buy("3h", draw))
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "duplicate_card",
        "decision.draw",
        f"card {draw} cannot be drawn: it is already dealt, in {where}",
    )


# --- cards ------------------------------------------------------------------------------------


def test_wrong_counts_and_duplicates() -> None:
    with pytest.raises(RulesError) as caught:
        settle("9h 9s 5c 4s", DEALER_AK)
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "wrong_card_count",
        "player",
        "player must hold 5 cards, got 4",
    )
    with pytest.raises(RulesError) as caught:
        settle("9h 9s 5c 4s 2d", DEALER_AK)
    assert (caught.value.code, caught.value.param) == ("duplicate_card", "dealer[4]")


# --- decisions and bets -----------------------------------------------------------------------


# The wire's decisions and bets (JSON) are read in tables.bodies and tested in
# tests/tables/test_bodies.py; the engine checks the typed values it is given.
@pytest.mark.parametrize(
    ("action", "discard", "draw", "param", "message"),
    [
        (StudAction.BUY, "7c", None, "decision.draw", "a buy needs a draw card"),
        (StudAction.BUY, None, "7c", "decision.discard", "a buy needs a discard card"),
        (StudAction.RAISE, "7c", None, "decision.discard", "only a buy takes a discard"),
        (StudAction.FOLD, None, "7c", "decision.draw", "only a buy takes a draw"),
    ],
)
def test_illegal_decisions_are_refused(
    action: StudAction, discard: str | None, draw: str | None, param: str, message: str
) -> None:
    with pytest.raises(RulesError) as caught:
        StudDecision(
            action,
            parse_card(discard) if discard else None,
            parse_card(draw) if draw else None,
        )
    assert (caught.value.code, caught.value.param, caught.value.message) == (
        "invalid_decision",
        param,
        message,
    )


def test_bets_are_checked() -> None:
    assert StudBets(500) == StudBets(500, 0)
    for bets, param, message in [
        ((0,), "bets.ante_cents", "bets.ante_cents must be at least 1, got 0"),
        ((100, -1), "bets.bonus_cents", "bets.bonus_cents must be at least 0, got -1"),
        (
            (100, True),
            "bets.bonus_cents",
            "bets.bonus_cents must be an integer number of cents, got True",
        ),
    ]:
        with pytest.raises(RulesError) as caught:
            StudBets(*bets)
        assert (caught.value.code, caught.value.param, caught.value.message) == (
            "invalid_bet",
            param,
            message,
        )


# --- properties -------------------------------------------------------------------------------


@st.composite
def stud_rounds(draw: st.DrawFn) -> tuple[tuple[Card, ...], tuple[Card, ...], StudDecision]:
    deck = draw(st.permutations(DECK))
    player, dealer = tuple(deck[:5]), tuple(deck[5:10])
    kind = draw(st.sampled_from(list(StudAction)))
    if kind == StudAction.BUY:
        decision = StudDecision.buy(draw(st.sampled_from(player)), deck[10])
    else:
        decision = StudDecision(kind)
    return player, dealer, decision


# No deadline: the first example may pay for building the evaluator's tables (~0.2 s).
@settings(deadline=None)
@given(stud_rounds(), st.integers(1, MAX_BET_CENTS), st.integers(0, MAX_BET_CENTS))
def test_net_never_below_minus_the_total_stake(
    round_: tuple[tuple[Card, ...], tuple[Card, ...], StudDecision], ante: int, bonus: int
) -> None:
    player, dealer, decision = round_
    s = settle_stud(player=player, dealer=dealer, bets=StudBets(ante, bonus), decision=decision)
    assert type(s.net_cents) is int
    assert all(type(b.net_cents) is int and b.net_cents >= -b.stake_cents for b in s.boxes)
    assert s.net_cents == sum(b.net_cents for b in s.boxes)
    assert s.net_cents >= -s.total_stake_cents
    if decision.action == StudAction.FOLD:
        assert s.net_cents == -(ante + bonus)
    if decision.action == StudAction.BUY:
        assert s.box(BoxName.PURCHASE).net_cents == -ante
        if bonus:
            assert s.box(BoxName.BONUS).net_cents == -bonus
    if decision.raises and not s.dealer_qualifies:
        assert (s.box(BoxName.ANTE).net_cents, s.box(BoxName.RAISE).net_cents) == (ante, 0)


# No deadline: the first example may pay for building the evaluator's tables (~0.2 s).
@settings(deadline=None)
@given(stud_rounds(), st.permutations(list(Suit)), st.integers(1, 999), st.integers(0, 99))
def test_settlement_is_invariant_under_a_permutation_of_suits(
    round_: tuple[tuple[Card, ...], tuple[Card, ...], StudDecision],
    perm: list[Suit],
    ante: int,
    bonus: int,
) -> None:
    mapping = dict(zip(Suit, perm, strict=True))

    def relabel(card: Card) -> Card:
        return Card(card.rank, mapping[card.suit])

    player, dealer, decision = round_
    relabelled = decision
    if decision.discard is not None and decision.draw is not None:
        relabelled = StudDecision.buy(relabel(decision.discard), relabel(decision.draw))
    bets = StudBets(ante, bonus)
    a = settle_stud(player=player, dealer=dealer, bets=bets, decision=decision)
    b = settle_stud(
        player=tuple(map(relabel, player)),
        dealer=tuple(map(relabel, dealer)),
        bets=bets,
        decision=relabelled,
    )
    assert (a.boxes, a.net_cents, a.outcome, a.dealer_qualifies) == (
        b.boxes,
        b.net_cents,
        b.outcome,
        b.dealer_qualifies,
    )
    assert (a.player_hand.rank, a.dealer_hand.rank) == (b.player_hand.rank, b.dealer_hand.rank)
