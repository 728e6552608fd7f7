"""The public rules API: worked requests with their exact answers, and bad input refused.

Nothing here touches the database (no ``django_db`` mark: pytest-django would fail any query).
The rules views are throttled per client address through the cache (Redis), so every test gets a
client with its own random address: runs of the suite never share a throttle window.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from math import ceil, comb
from typing import Any

import pytest
from django.test import Client

from rules.paytables import CURRENT, PAYTABLES, PROGRESSIVE_PAYTABLES, Paytable, PaytableSet
from rules.progressive import progressive_return
from tables.api.rules_bodies import ParAnswer, paytables_of
from tables.api.urls import urlpatterns

RULES = "/api/v1/rules"


@pytest.fixture
def api() -> Client:
    return Client(
        REMOTE_ADDR=f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(256)}"
    )


def post(api: Client, path: str, body: Any) -> Any:
    return api.post(f"{RULES}/{path}", json.dumps(body), content_type="application/json")


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.content
    return response.json()


def error(response: Any, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "code", "message", "param"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


def test_every_rules_url_is_covered_here():
    # If a rules endpoint is added, this file must learn about it.
    routes = {str(p.pattern) for p in urlpatterns if str(p.pattern).startswith("rules/")}
    assert routes == {
        "rules/evaluate",
        "rules/uth/settle",
        "rules/stud/settle",
        "rules/paytables",
        "rules/progressive/return",
        "rules/par",
    }


# --- POST /rules/evaluate ---------------------------------------------------------------------
#
# Ranks run 1 (7-5-4-3-2 offsuit) .. 7,462 (royal flush) over the 7,462 classes of five-card hands;
# the class counts per category (1277 high card, 2860 pair, 858 two pair, 858 trips, 10 straights,
# 1277 flushes, 156 full houses, 156 quads, 9 straight flushes, 1 royal) fix the ranks at the edges
# of each band, so the exact ranks below are derived, not copied from the output.


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (
            "As Ks Qs Js Ts",
            {"category": "royal_flush", "best_five": "As Ks Qs Js Ts", "rank": 7462},
        ),
        # A king-high straight flush is the best below the royal.
        (
            "9d Kd Qd Jd Td",
            {"category": "straight_flush", "best_five": "Kd Qd Jd Td 9d", "rank": 7461},
        ),
        # The steel wheel: the ace plays low, the lowest straight flush.
        (
            "As 2s 3s 4s 5s",
            {"category": "straight_flush", "best_five": "5s 4s 3s 2s As", "rank": 7453},
        ),
        (
            "Ac Ad Ah As Kc",
            {"category": "four_of_a_kind", "best_five": "As Ah Ad Ac Kc", "rank": 7452},
        ),
        (
            "2c 2d 2h 2s 3c",
            {"category": "four_of_a_kind", "best_five": "2s 2h 2d 2c 3c", "rank": 7297},
        ),
        ("Ac Ad Ah Ks Kc", {"category": "full_house", "best_five": "Ah Ad Ac Ks Kc", "rank": 7296}),
        ("As Ks Qs Js 9s", {"category": "flush", "best_five": "As Ks Qs Js 9s", "rank": 7140}),
        ("Ah Kd Qc Js Ts", {"category": "straight", "best_five": "Ah Kd Qc Js Ts", "rank": 5863}),
        # Seven cards: the wheel (5-high straight) beats the pair of kings.
        (
            "Ah 2c 3d Kd 4s 5h Kh",
            {"category": "straight", "best_five": "5h 4s 3d 2c Ah", "rank": 5854},
        ),
        ("Ac Ad Kh Qs Jc", {"category": "pair", "best_five": "Ad Ac Kh Qs Jc", "rank": 4137}),
        ("Ah Kd Qc Js 9s", {"category": "high_card", "best_five": "Ah Kd Qc Js 9s", "rank": 1277}),
        # No wrap-around: Q-K-A-2-3 is ace-high.
        ("Qs Kd Ah 2c 3d", {"category": "high_card", "best_five": "Ah Kd Qs 3d 2c", "rank": None}),
        ("7c 5d 4h 3s 2c", {"category": "high_card", "best_five": "7c 5d 4h 3s 2c", "rank": 1}),
        # Six cards: the best five, the lowest card left out.
        (
            "Kh Kd 9s 9c As 2d",
            {"category": "two_pair", "best_five": "Kh Kd 9s 9c As", "rank": None},
        ),
    ],
)
def test_evaluate_answers_category_best_five_and_rank(api, cards, expected):
    body = ok(post(api, "evaluate", {"cards": cards.split()}))
    assert set(body) == {"category", "best_five", "rank"}
    assert body["category"] == expected["category"]
    assert body["best_five"] == expected["best_five"].split()
    if expected["rank"] is not None:
        assert body["rank"] == expected["rank"]
    assert type(body["rank"]) is int and 1 <= body["rank"] <= 7462


def rank(api: Client, cards: str) -> int:
    return ok(post(api, "evaluate", {"cards": cards.split()}))["rank"]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        # Same pair, the kicker decides.
        ("Kh Kd As 7c 5d 3h 2s", "Ks Kc Qd 7h 5c 3d 2h"),
        # A flush beats a straight.
        ("2h 6h 9h Jh Kh 3c 4d", "9c Td Jh Qs Kc 2d 3h"),
        # The 6-high straight beats the wheel.
        ("2c 3d 4h 5s 6c", "Ac 2d 3h 4s 5c"),
        # Two pair: the second pair decides, then the kicker.
        ("Ah Ad 9s 9c 4h", "As Ac 8s 8c Kh"),
        ("Ah Ad 9s 9c 5h", "As Ac 9h 9d 4c"),
        # Full house: the trips decide before the pair.
        ("3c 3d 3h 2s 2c", "2d 2h 2s As Ac"),
    ],
)
def test_rank_orders_two_hands(api, better, worse):
    assert rank(api, better) > rank(api, worse)


def test_equal_best_fives_are_a_tie_whatever_the_suits(api):
    first = ok(post(api, "evaluate", {"cards": ["As", "Kd", "Qh", "Jc", "9s", "3d", "2c"]}))
    second = ok(post(api, "evaluate", {"cards": ["Ah", "Kc", "Qd", "Js", "9h", "3c", "2d"]}))
    assert first["rank"] == second["rank"]
    assert first["category"] == second["category"] == "high_card"
    # Seven cards whose best five is the board: the two extra cards do not count.
    assert rank(api, "Ac Kd Qh Js 9c 2d 3h") == rank(api, "Ac Kd Qh Js 9c 4d 5h")


# --- POST /rules/uth/settle -------------------------------------------------------------------


def uth(
    player: str,
    dealer: str,
    board: str,
    *,
    ante: int = 500,
    trips: int | None = None,
    progressive: int | None = None,
    decision: dict[str, Any] | None = None,
) -> dict[str, Any]:
    bets: dict[str, Any] = {"ante_cents": ante, "blind_cents": ante}
    if trips is not None:
        bets["trips_cents"] = trips
    if progressive is not None:
        bets["progressive_cents"] = progressive
    return {
        "player": player.split(),
        "dealer": dealer.split(),
        "board": board.split(),
        "bets": bets,
        "decision": decision or {"action": "play", "street": "preflop", "multiple": 4},
    }


def hand(category: str, best_five: str) -> dict[str, Any]:
    return {"category": category, "best_five": best_five.split()}


def box(stake: int, net: int) -> dict[str, int]:
    return {"stake_cents": stake, "net_cents": net}


def test_uth_player_wins_with_every_box_and_blind_rounded_down(api):
    # Given a flush against a pair of nines, with Ante/Blind 125, Trips 100, the progressive,
    # and Play 4x before the flop
    body = uth("Ah Kh", "9c 7d", "Qh Jh 3h 9s 4d", ante=125, trips=100, progressive=500)
    # Then every box is settled: Ante 1:1, Blind 3:2 on 125 = 187.5 rounded down to 187,
    # Play 1:1 on 500, Trips 7:1 on the flush; the progressive stake is no box and no net.
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("flush", "Ah Kh Qh Jh 3h"),
        "dealer_hand": hand("pair", "9s 9c Qh Jh 7d"),
        "dealer_qualifies": True,
        "outcome": "player",
        "boxes": {
            "ante": box(125, 125),
            "blind": box(125, 187),
            "play": box(500, 500),
            "trips": box(100, 700),
        },
        "net_cents": 1512,
        "progressive": {"stake_cents": 500, "award": "none", "fixed_cents": 0},
    }


def test_uth_jackpot_royal_pays_every_box_and_the_meter(api):
    # A royal with both hole cards, Play 2x on the flop.
    body = uth(
        "Ah Kh",
        "9s 9d",
        "Qh Jh Th 2c 3d",
        trips=500,
        progressive=500,
        decision={"action": "play", "street": "flop", "multiple": 2},
    )
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("royal_flush", "Ah Kh Qh Jh Th"),
        "dealer_hand": hand("pair", "9s 9d Qh Jh Th"),
        "dealer_qualifies": True,
        "outcome": "player",
        "boxes": {
            "ante": box(500, 500),
            "blind": box(500, 250_000),  # 500:1
            "play": box(1000, 1000),
            "trips": box(500, 25_000),  # 50:1
        },
        "net_cents": 276_500,
        # The jackpot is the meter at the hit: no fixed amount.
        "progressive": {"stake_cents": 500, "award": "royal_flush", "fixed_cents": None},
    }


def test_uth_community_royal_is_a_tie_and_a_fixed_award(api):
    # The board alone is a royal: everyone holds it, the hand ties, Trips pays 50:1, and the
    # progressive pays the fixed community royal, not the meter.
    body = uth(
        "2c 3d",
        "9s 9d",
        "Ah Kh Qh Jh Th",
        trips=500,
        progressive=500,
        decision={"action": "play", "street": "river", "multiple": 1},
    )
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("royal_flush", "Ah Kh Qh Jh Th"),
        "dealer_hand": hand("royal_flush", "Ah Kh Qh Jh Th"),
        "dealer_qualifies": True,
        "outcome": "tie",
        "boxes": {
            "ante": box(500, 0),
            "blind": box(500, 0),
            "play": box(500, 0),
            "trips": box(500, 25_000),
        },
        "net_cents": 25_000,
        "progressive": {"stake_cents": 500, "award": "community_royal", "fixed_cents": 500_000},
    }


def test_uth_royal_with_one_hole_card_is_the_jackpot_not_the_community_royal(api):
    body = uth("Th 3d", "9s 9d", "Ah Kh Qh Jh 2c", progressive=500)
    settled = ok(post(api, "uth/settle", body))
    assert settled["player_hand"] == hand("royal_flush", "Ah Kh Qh Jh Th")
    assert settled["progressive"] == {
        "stake_cents": 500,
        "award": "royal_flush",
        "fixed_cents": None,
    }


def test_uth_fold_loses_ante_and_blind_but_trips_and_progressive_still_pay(api):
    body = uth(
        "7s 3c", "Ac Ad", "7c 7d 7h Ks 2d", trips=100, progressive=500, decision={"action": "fold"}
    )
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("four_of_a_kind", "7s 7h 7d 7c Ks"),
        "dealer_hand": hand("full_house", "7h 7d 7c Ad Ac"),
        "dealer_qualifies": True,
        "outcome": "fold",
        "boxes": {
            "ante": box(500, -500),
            "blind": box(500, -500),
            "play": box(0, 0),  # never placed
            "trips": box(100, 3000),  # 30:1
        },
        "net_cents": 2000,
        "progressive": {"stake_cents": 500, "award": "four_of_a_kind", "fixed_cents": 50_000},
    }


def test_uth_dealer_not_qualifying_still_beats_blind_and_play(api):
    body = uth(
        "3c 4h",
        "Ac 8s",
        "2c 5d 9h Js Kd",
        ante=100,
        decision={"action": "play", "street": "river", "multiple": 1},
    )
    # No Trips and no progressive staked: no trips box, no progressive section.
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("high_card", "Kd Js 9h 5d 4h"),
        "dealer_hand": hand("high_card", "Ac Kd Js 9h 8s"),
        "dealer_qualifies": False,
        "outcome": "dealer",
        "boxes": {"ante": box(100, 0), "blind": box(100, -100), "play": box(100, -100)},
        "net_cents": -200,
    }


def test_uth_player_wins_below_a_straight_the_blind_pushes(api):
    body = uth(
        "Ac As",
        "Qh Qd",
        "Kc Kd 5h 8s 2c",
        ante=200,
        decision={"action": "play", "street": "preflop", "multiple": 3},
    )
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("two_pair", "As Ac Kd Kc 8s"),
        "dealer_hand": hand("two_pair", "Kd Kc Qh Qd 8s"),
        "dealer_qualifies": True,
        "outcome": "player",
        "boxes": {"ante": box(200, 200), "blind": box(200, 0), "play": box(600, 600)},
        "net_cents": 800,
    }


def test_uth_tie_pushes_ante_blind_and_play(api):
    body = uth("2c 3d", "4h 5c", "As Ks Qd Jc 9h", ante=100)
    assert ok(post(api, "uth/settle", body)) == {
        "player_hand": hand("high_card", "As Ks Qd Jc 9h"),
        "dealer_hand": hand("high_card", "As Ks Qd Jc 9h"),
        "dealer_qualifies": False,
        "outcome": "tie",
        "boxes": {"ante": box(100, 0), "blind": box(100, 0), "play": box(400, 0)},
        "net_cents": 0,
    }


@pytest.mark.parametrize(
    ("player", "board", "award", "fixed"),
    [
        ("8h 9h", "Th Jh Qh 2c 3d", "straight_flush", 150_000),
        ("Ah 2h", "3h 4h 5h Kc Kd", "straight_flush", 150_000),  # the wheel
        ("7c 7d", "7h 2c 2d Js 4s", "full_house", 5000),
        # Quads and a full house at once: only the best award.
        ("7c 7d", "7h 7s Jd Js 4s", "four_of_a_kind", 50_000),
        ("Ac Kd", "Ah Ad 2c 9s 4h", "none", 0),  # trips pay no progressive award
    ],
)
def test_uth_progressive_pays_only_the_best_award(api, player, board, award, fixed):
    body = uth(player, "8c 8s", board, progressive=500)
    settled = ok(post(api, "uth/settle", body))
    assert settled["progressive"] == {"stake_cents": 500, "award": award, "fixed_cents": fixed}
    assert "progressive" not in settled["boxes"]


# --- POST /rules/stud/settle ------------------------------------------------------------------


def stud(
    player: str, dealer: str, decision: dict[str, Any], *, ante: int = 100, bonus: int | None = None
) -> dict[str, Any]:
    bets: dict[str, Any] = {"ante_cents": ante}
    if bonus is not None:
        bets["bonus_cents"] = bonus
    return {"player": player.split(), "dealer": dealer.split(), "bets": bets, "decision": decision}


RAISE = {"action": "raise"}


def test_stud_buy_a_card_raise_pays_bonus_forfeited_fee_kept(api):
    # Given a pair of nines against a dealer with Ace-King (qualifies), Ante 100 and Bonus 100,
    # when the player gives back 2h and buys 9c
    body = stud(
        "9h 9d 5c 4s 2h",
        "Ac Kd Jh 8s 3c",
        {"action": "buy", "discard": "2h", "draw": "9c"},
        bonus=100,
    )
    # Then the final hand is trips: Ante 1:1, Raise (2x Ante) 3:1, the Bonus is forfeited by the
    # buy, and the fee (= the Ante) is kept by the house.
    assert ok(post(api, "stud/settle", body)) == {
        "player_hand": hand("three_of_a_kind", "9h 9d 9c 5c 4s"),
        "dealer_hand": hand("high_card", "Ac Kd Jh 8s 3c"),
        "dealer_qualifies": True,
        "outcome": "player",
        "boxes": {
            "ante": box(100, 100),
            "raise": box(200, 600),
            "bonus": box(100, -100),
            "purchase": box(100, -100),
        },
        "net_cents": 500,
    }


def test_stud_buy_against_a_dealer_who_does_not_qualify_can_net_zero(api):
    body = stud(
        "9h 9d 5c 4s 2h", "Ac Qd Jh 8s 3c", {"action": "buy", "discard": "2h", "draw": "9c"}
    )
    assert ok(post(api, "stud/settle", body)) == {
        "player_hand": hand("three_of_a_kind", "9h 9d 9c 5c 4s"),
        "dealer_hand": hand("high_card", "Ac Qd Jh 8s 3c"),
        "dealer_qualifies": False,
        "outcome": "player",
        "boxes": {"ante": box(100, 100), "raise": box(200, 0), "purchase": box(100, -100)},
        "net_cents": 0,
    }


def test_stud_raise_with_a_flush_pays_raise_and_bonus(api):
    body = stud("2h 5h 8h Jh Kh", "Ac Kd 9s 7c 3d", RAISE, bonus=100)
    assert ok(post(api, "stud/settle", body)) == {
        "player_hand": hand("flush", "Kh Jh 8h 5h 2h"),
        "dealer_hand": hand("high_card", "Ac Kd 9s 7c 3d"),
        "dealer_qualifies": True,
        "outcome": "player",
        "boxes": {"ante": box(100, 100), "raise": box(200, 1000), "bonus": box(100, 10_000)},
        "net_cents": 11_100,
    }


def test_stud_bonus_pays_even_when_the_dealer_does_not_qualify(api):
    body = stud("2h 5h 8h Jh Kh", "Ac Qd 9s 7c 3d", RAISE, bonus=100)
    assert ok(post(api, "stud/settle", body)) == {
        "player_hand": hand("flush", "Kh Jh 8h 5h 2h"),
        "dealer_hand": hand("high_card", "Ac Qd 9s 7c 3d"),
        "dealer_qualifies": False,
        "outcome": "player",
        "boxes": {"ante": box(100, 100), "raise": box(200, 0), "bonus": box(100, 10_000)},
        "net_cents": 10_100,
    }


def test_stud_bonus_needs_a_hand_that_beats_the_dealer_equal_flushes_lose_it(api):
    # Equal flushes (suits never break ties): Ante and Raise push, the Bonus is lost.
    equal = ok(post(api, "stud/settle", stud("2h 5h 8h Jh Kh", "2s 5s 8s Js Ks", RAISE, bonus=100)))
    assert (equal["outcome"], equal["boxes"], equal["net_cents"]) == (
        "tie",
        {"ante": box(100, 0), "raise": box(200, 0), "bonus": box(100, -100)},
        -100,
    )
    # One kicker better: Ante 1:1, Raise 5:1, Bonus 100:1.
    better = ok(
        post(api, "stud/settle", stud("3h 5h 8h Jh Kh", "2s 5s 8s Js Ks", RAISE, bonus=100))
    )
    assert better["boxes"]["bonus"] == box(100, 10_000)


def test_stud_no_pair_never_beats_a_qualifying_dealer(api):
    # The player's A-K-Q beats the dealer's A-K-8, but Ace-King is only the dealer's threshold.
    body = stud("Ac Kh Qd 7s 4c", "As Kd 8h 6c 3s", RAISE)
    assert ok(post(api, "stud/settle", body)) == {
        "player_hand": hand("high_card", "Ac Kh Qd 7s 4c"),
        "dealer_hand": hand("high_card", "As Kd 8h 6c 3s"),
        "dealer_qualifies": True,
        "outcome": "dealer",
        "boxes": {"ante": box(100, -100), "raise": box(200, -200)},
        "net_cents": -300,
    }


def test_stud_equal_hands_push_and_fold_loses_ante_and_bonus(api):
    tie = ok(post(api, "stud/settle", stud("Qh Qd 9c 5s 3h", "Qs Qc 9d 5h 3c", RAISE)))
    assert (tie["outcome"], tie["boxes"], tie["net_cents"]) == (
        "tie",
        {"ante": box(100, 0), "raise": box(200, 0)},
        0,
    )
    fold = ok(
        post(
            api,
            "stud/settle",
            stud("Qh Qd 9c 5s 3h", "Qs Qc 9d 5h 3c", {"action": "fold"}, bonus=50),
        )
    )
    assert (fold["outcome"], fold["boxes"], fold["net_cents"]) == (
        "fold",
        {"ante": box(100, -100), "raise": box(0, 0), "bonus": box(50, -50)},
        -150,
    )


# --- GET /rules/paytables ---------------------------------------------------------------------


def odds(*rows: tuple[str, int, int]) -> list[dict[str, Any]]:
    return [
        {
            "category": category,
            "pays": f"{numerator}:{denominator}",
            "numerator": numerator,
            "denominator": denominator,
        }
        for category, numerator, denominator in rows
    ]


def test_paytables_list_every_table_in_force_with_its_version(api):
    body = ok(api.get(f"{RULES}/paytables"))
    # Every table in force, named and versioned as the settlements use them.
    assert set(body) == set(CURRENT.versions())
    assert {name: table["version"] for name, table in body.items()} == CURRENT.versions()
    assert all(
        table["version"] in PAYTABLES for name, table in body.items() if name != "progressive"
    )
    assert body["progressive"]["version"] in PROGRESSIVE_PAYTABLES
    # The figures of domain.md, weakest category first.
    assert body["uth_blind"] == {
        "name": "uth_blind",
        "version": "uth-blind/2026-1",
        "odds": odds(
            ("straight", 1, 1),
            ("flush", 3, 2),
            ("full_house", 3, 1),
            ("four_of_a_kind", 10, 1),
            ("straight_flush", 50, 1),
            ("royal_flush", 500, 1),
        ),
    }
    assert body["uth_trips"] == {
        "name": "uth_trips",
        "version": "uth-trips/2026-1",
        "odds": odds(
            ("three_of_a_kind", 3, 1),
            ("straight", 4, 1),
            ("flush", 7, 1),
            ("full_house", 8, 1),
            ("four_of_a_kind", 30, 1),
            ("straight_flush", 40, 1),
            ("royal_flush", 50, 1),
        ),
    }
    assert body["stud_raise"] == {
        "name": "stud_raise",
        "version": "stud-raise/2026-1",
        "odds": odds(
            ("pair", 1, 1),
            ("two_pair", 2, 1),
            ("three_of_a_kind", 3, 1),
            ("straight", 4, 1),
            ("flush", 5, 1),
            ("full_house", 7, 1),
            ("four_of_a_kind", 20, 1),
            ("straight_flush", 50, 1),
            ("royal_flush", 100, 1),
        ),
    }
    assert body["stud_bonus"] == {
        "name": "stud_bonus",
        "version": "stud-bonus/2026-1",
        "odds": odds(
            ("flush", 100, 1),
            ("full_house", 150, 1),
            ("four_of_a_kind", 1000, 1),
            ("straight_flush", 2000, 1),
            ("royal_flush", 5000, 1),
        ),
    }
    assert body["progressive"] == {
        "name": "uth_progressive",
        "version": "uth-progressive/2026-1",
        "awards": [
            {"award": "royal_flush", "jackpot_percent_bp": 10_000, "amount_cents": None},
            {"award": "community_royal", "amount_cents": 500_000},
            {"award": "straight_flush", "amount_cents": 150_000},
            {"award": "four_of_a_kind", "amount_cents": 50_000},
            {"award": "full_house", "amount_cents": 5000},
        ],
        "envy_cents": 50_000,
    }


def test_paytables_of_is_plain_json_and_exact() -> None:
    rendered = paytables_of(CURRENT).model_dump(mode="json")
    assert json.loads(json.dumps(rendered)) == rendered
    assert rendered["uth_blind"] == {
        "name": "uth_blind",
        "version": "uth-blind/2026-1",
        "odds": [
            {"category": "straight", "pays": "1:1", "numerator": 1, "denominator": 1},
            {"category": "flush", "pays": "3:2", "numerator": 3, "denominator": 2},
            {"category": "full_house", "pays": "3:1", "numerator": 3, "denominator": 1},
            {"category": "four_of_a_kind", "pays": "10:1", "numerator": 10, "denominator": 1},
            {"category": "straight_flush", "pays": "50:1", "numerator": 50, "denominator": 1},
            {"category": "royal_flush", "pays": "500:1", "numerator": 500, "denominator": 1},
        ],
    }
    assert rendered["progressive"] == {
        "name": "uth_progressive",
        "version": "uth-progressive/2026-1",
        "awards": [
            {"award": "royal_flush", "jackpot_percent_bp": 10_000, "amount_cents": None},
            {"award": "community_royal", "amount_cents": 500_000},
            {"award": "straight_flush", "amount_cents": 150_000},
            {"award": "four_of_a_kind", "amount_cents": 50_000},
            {"award": "full_house", "amount_cents": 5_000},
        ],
        "envy_cents": 50_000,
    }
    assert list(rendered) == ["uth_blind", "uth_trips", "stud_raise", "stud_bonus", "progressive"]


def test_paytables_of_lists_categories_weakest_first_whatever_the_source_order() -> None:
    reversed_odds = dict(reversed(list(CURRENT.stud_raise.odds.items())))
    table = Paytable("stud_raise", "stud-raise/test", reversed_odds)
    rendered = paytables_of(PaytableSet(stud_raise=table)).model_dump(mode="json")["stud_raise"]
    assert [row["category"] for row in rendered["odds"]][:2] == ["pair", "two_pair"]


# --- GET /rules/progressive/return ------------------------------------------------------------
#
# Derived here from first principles and the published seven-card counts, independently of
# rules.progressive: one seat's (hole, board) deals are C(52, 2) x C(50, 5); each 7-card
# set is dealt as C(7, 2) = 21 (hole, board) splits; of a royal's 21 splits exactly one has the
# royal all on the board (the community royal), the other 20 are jackpot royals.

TOTAL_DEALS = comb(52, 2) * comb(50, 5)
ROYAL_7, STRAIGHT_FLUSH_7, FOUR_OF_A_KIND_7, FULL_HOUSE_7 = 4_324, 37_260, 224_848, 3_473_184
DEALS = {
    "royal_flush": 20 * ROYAL_7,
    "community_royal": ROYAL_7,
    "straight_flush": 21 * STRAIGHT_FLUSH_7,
    "four_of_a_kind": 21 * FOUR_OF_A_KIND_7,
    "full_house": 21 * FULL_HOUSE_7,
}
DEALS["none"] = TOTAL_DEALS - sum(DEALS.values())
FIXED_CENTS = {"community_royal": 500_000, "straight_flush": 150_000, "four_of_a_kind": 50_000}
FIXED_CENTS["full_house"] = 5000
ENVY_CENTS, STAKE_CENTS = 50_000, 500
P = {award: Fraction(deals, TOTAL_DEALS) for award, deals in DEALS.items()}


def expected_return(jackpot_cents: int, other_bettors: int) -> Fraction:
    fixed = sum((P[award] * cents for award, cents in FIXED_CENTS.items()), start=Fraction(0))
    envy = other_bettors * P["royal_flush"] * ENVY_CENTS
    return fixed + envy + P["royal_flush"] * jackpot_cents


def fraction(value: Fraction) -> dict[str, int]:
    return {"numerator": value.numerator, "denominator": value.denominator}


def test_the_published_probabilities_are_exact():
    assert TOTAL_DEALS == 2_809_475_760
    assert P["royal_flush"] == Fraction(1, 32_487)
    assert P["community_royal"] == Fraction(1, 649_740)
    assert P["straight_flush"] == Fraction(81, 290_836)
    assert P["four_of_a_kind"] == Fraction(1, 595)
    assert P["full_house"] == Fraction(726, 27_965)


@pytest.mark.parametrize(
    "jackpot_cents", [0, 1, 1_000_000, 7_914_341, 25_000_000, 999_999_999_999_999]
)
@pytest.mark.parametrize("other_bettors", [None, 0, 1, 6])
def test_progressive_return_is_exact(api, jackpot_cents, other_bettors):
    query = f"jackpot_cents={jackpot_cents}"
    if other_bettors is not None:
        query += f"&other_bettors={other_bettors}"
    body = ok(api.get(f"{RULES}/progressive/return?{query}"))

    others = other_bettors or 0
    expected = expected_return(jackpot_cents, others)
    rtp = expected / STAKE_CENTS
    break_even = ceil((STAKE_CENTS - expected_return(0, others)) / P["royal_flush"])
    assert body == {
        "paytable_version": "uth-progressive/2026-1",
        "jackpot_cents": jackpot_cents,
        "other_bettors": others,
        "stake_cents": 500,
        "probabilities": {award: fraction(p) for award, p in P.items()},
        "envy_probability": fraction(others * P["royal_flush"]),
        "expected_return": fraction(expected),
        "expected_return_cents": expected.numerator // expected.denominator,  # rounded down
        "rtp": fraction(rtp),
        "rtp_bp": int(rtp * 10_000),  # rounded down (rtp >= 0)
        "rtp_percent": f"{int(rtp * 1_000_000) // 10_000}.{int(rtp * 1_000_000) % 10_000:04d}",
        "break_even_jackpot_cents": break_even,
    }
    # The break-even meter is the pure function's, and it is the smallest whole-cent meter
    # whose expected return covers the stake.
    pure = progressive_return(
        jackpot_cents=jackpot_cents, other_bettors=others, paytable=CURRENT.progressive
    )
    assert pure.break_even_jackpot_cents == break_even
    at = progressive_return(
        jackpot_cents=break_even, other_bettors=others, paytable=CURRENT.progressive
    )
    below = progressive_return(
        jackpot_cents=break_even - 1, other_bettors=others, paytable=CURRENT.progressive
    )
    assert at.expected_return_cents >= STAKE_CENTS > below.expected_return_cents


def test_progressive_return_at_the_demo_seed(api):
    # The demo pool's seed (EUR 10,000), alone at the table: 57.43%; break-even EUR 79,143.41.
    body = ok(api.get(f"{RULES}/progressive/return?jackpot_cents=1000000"))
    assert body["expected_return"] == {"numerator": 33_728_500, "denominator": 117_453}
    assert body["expected_return_cents"] == 287  # 33,728,500 / 117,453 = 287.17 cents
    assert (body["rtp_bp"], body["rtp_percent"]) == (5743, "57.4331")
    assert body["break_even_jackpot_cents"] == 7_914_341
    # Each other bettor brings envy worth exactly EUR 500 of meter.
    full = ok(api.get(f"{RULES}/progressive/return?jackpot_cents=1000000&other_bettors=6"))
    assert (full["rtp_bp"], full["rtp_percent"]) == (5928, "59.2800")
    assert full["break_even_jackpot_cents"] == 7_914_341 - 6 * ENVY_CENTS
    # At break-even the return reaches 100%.
    even = ok(api.get(f"{RULES}/progressive/return?jackpot_cents=7914341"))
    assert even["rtp_bp"] == 10_000


# --- bad input --------------------------------------------------------------------------------

U = uth("Ah Kh", "9c 7d", "Qh Jh 3h 9s 4d", trips=100, progressive=500)
S = stud("9h 9d 5c 4s 2h", "Ac Kd Jh 8s 3c", RAISE, bonus=100)


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


def bets(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, "bets": {**base["bets"], **changes}}


BAD_POSTS = [
    # (path, body, code, param)
    # evaluate: cards
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js", "1s"]}, "invalid_card", "cards[4]"),
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js", "10s"]}, "invalid_card", "cards[4]"),
    ("evaluate", {"cards": ["as", "Ks", "Qs", "Js", "Ts"]}, "invalid_card", "cards[0]"),
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js", 5]}, "invalid_card", "cards[4]"),
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js", "As"]}, "duplicate_card", "cards[4]"),
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js"]}, "wrong_card_count", "cards"),
    (
        "evaluate",
        {"cards": ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s"]},
        "wrong_card_count",
        "cards",
    ),
    ("evaluate", {"cards": "As Ks Qs Js Ts"}, "invalid_card", "cards"),
    ("evaluate", {}, "invalid_card", "cards"),
    ("evaluate", {"cards": ["As", "Ks", "Qs", "Js", "Ts"], "seat": 1}, "unknown_field", "seat"),
    ("evaluate", [], "invalid_request", None),
    ("evaluate", None, "invalid_request", None),
    # uth: cards
    ("uth/settle", with_(U, player=["Ah", "Kx"]), "invalid_card", "player[1]"),
    ("uth/settle", with_(U, dealer=["9c", "7D"]), "invalid_card", "dealer[1]"),
    ("uth/settle", with_(U, board=["Qh", "Jh", "3h", "9s", "4"]), "invalid_card", "board[4]"),
    ("uth/settle", with_(U, dealer=["Ah", "7d"]), "duplicate_card", "dealer[0]"),
    ("uth/settle", with_(U, board=["Qh", "Jh", "3h", "9s", "Kh"]), "duplicate_card", "board[4]"),
    ("uth/settle", with_(U, board=["Qh", "Jh", "3h", "9s", "7d"]), "duplicate_card", "board[4]"),
    ("uth/settle", with_(U, player=["Ah"]), "wrong_card_count", "player"),
    ("uth/settle", with_(U, player=["Ah", "Kh", "2c"]), "wrong_card_count", "player"),
    ("uth/settle", with_(U, dealer=[]), "wrong_card_count", "dealer"),
    ("uth/settle", with_(U, board=["Qh", "Jh", "3h", "9s"]), "wrong_card_count", "board"),
    # uth: bets
    ("uth/settle", bets(U, ante_cents=125.0, blind_cents=125.0), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, ante_cents=500, blind_cents=1.5), "invalid_bet", "bets.blind_cents"),
    ("uth/settle", bets(U, ante_cents="500", blind_cents="500"), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, ante_cents=True, blind_cents=True), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, trips_cents=False), "invalid_bet", "bets.trips_cents"),
    ("uth/settle", bets(U, trips_cents="100"), "invalid_bet", "bets.trips_cents"),
    ("uth/settle", bets(U, progressive_cents=5.0), "invalid_bet", "bets.progressive_cents"),
    ("uth/settle", bets(U, progressive_cents=400), "invalid_bet", "bets.progressive_cents"),
    ("uth/settle", bets(U, ante_cents=-500, blind_cents=-500), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, ante_cents=0, blind_cents=0), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, trips_cents=-1), "invalid_bet", "bets.trips_cents"),
    ("uth/settle", bets(U, ante_cents=10**8, blind_cents=10**8), "invalid_bet", "bets.ante_cents"),
    ("uth/settle", bets(U, ante_cents=500, blind_cents=400), "invalid_bet", "bets.blind_cents"),
    ("uth/settle", bets(U, blind_cents=None), "invalid_bet", "bets.blind_cents"),
    ("uth/settle", bets(U, play_cents=500), "invalid_bet", "bets.play_cents"),
    ("uth/settle", with_(U, bets=[500, 500]), "invalid_bet", "bets"),
    # uth: decision
    (
        "uth/settle",
        with_(U, decision={"action": "play", "street": "flop", "multiple": 3}),
        "invalid_decision",
        "decision.multiple",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "play", "street": "preflop", "multiple": 2}),
        "invalid_decision",
        "decision.multiple",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "play", "street": "river", "multiple": 2}),
        "invalid_decision",
        "decision.multiple",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "play", "street": "flop", "multiple": 2.0}),
        "invalid_decision",
        "decision.multiple",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "play", "street": "turn", "multiple": 1}),
        "invalid_decision",
        "decision.street",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "play", "multiple": 4}),
        "invalid_decision",
        "decision.street",
    ),
    (
        "uth/settle",
        with_(U, decision={"action": "fold", "street": "flop"}),
        "invalid_decision",
        "decision.street",
    ),
    ("uth/settle", with_(U, decision={"action": "raise"}), "invalid_decision", "decision.action"),
    ("uth/settle", with_(U, decision={"action": "fold", "x": 1}), "invalid_decision", "decision.x"),
    ("uth/settle", with_(U, decision="fold"), "invalid_decision", "decision"),
    # uth: the body
    ("uth/settle", with_(U, seat=1), "unknown_field", "seat"),
    ("uth/settle", {k: v for k, v in U.items() if k != "board"}, "invalid_card", "board"),
    ("uth/settle", [U], "invalid_request", None),
    # stud: cards
    ("stud/settle", with_(S, player=["9h", "9d", "5c", "4s", "2x"]), "invalid_card", "player[4]"),
    ("stud/settle", with_(S, dealer=["Ac", "Kd", "Jh", "8s", "9h"]), "duplicate_card", "dealer[4]"),
    ("stud/settle", with_(S, player=["9h", "9d", "5c", "4s", "9h"]), "duplicate_card", "player[4]"),
    ("stud/settle", with_(S, player=["9h", "9d", "5c", "4s"]), "wrong_card_count", "player"),
    (
        "stud/settle",
        with_(S, dealer=["Ac", "Kd", "Jh", "8s", "3c", "2c"]),
        "wrong_card_count",
        "dealer",
    ),
    # stud: bets
    ("stud/settle", bets(S, ante_cents=100.0), "invalid_bet", "bets.ante_cents"),
    ("stud/settle", bets(S, ante_cents="100"), "invalid_bet", "bets.ante_cents"),
    ("stud/settle", bets(S, ante_cents=True), "invalid_bet", "bets.ante_cents"),
    ("stud/settle", bets(S, ante_cents=-100), "invalid_bet", "bets.ante_cents"),
    ("stud/settle", bets(S, ante_cents=None), "invalid_bet", "bets.ante_cents"),
    ("stud/settle", bets(S, bonus_cents=0.5), "invalid_bet", "bets.bonus_cents"),
    ("stud/settle", bets(S, bonus_cents=False), "invalid_bet", "bets.bonus_cents"),
    ("stud/settle", bets(S, bonus_cents="100"), "invalid_bet", "bets.bonus_cents"),
    ("stud/settle", bets(S, bonus_cents=-1), "invalid_bet", "bets.bonus_cents"),
    ("stud/settle", bets(S, blind_cents=100), "invalid_bet", "bets.blind_cents"),
    # stud: decision
    (
        "stud/settle",
        with_(S, decision={"action": "buy", "discard": "2h", "draw": "Ac"}),
        "duplicate_card",
        "decision.draw",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "buy", "discard": "2h", "draw": "2h"}),
        "duplicate_card",
        "decision.draw",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "buy", "discard": "Kh", "draw": "9c"}),
        "invalid_decision",
        "decision.discard",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "buy", "discard": "2h", "draw": "1x"}),
        "invalid_card",
        "decision.draw",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "buy", "discard": "2h"}),
        "invalid_decision",
        "decision.draw",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "raise", "draw": "9c"}),
        "invalid_decision",
        "decision.draw",
    ),
    (
        "stud/settle",
        with_(S, decision={"action": "play", "street": "flop", "multiple": 2}),
        "invalid_decision",
        "decision.street",
    ),
    ("stud/settle", with_(S, decision={"action": "check"}), "invalid_decision", "decision.action"),
    ("stud/settle", with_(S, decision={}), "invalid_decision", "decision.action"),
    # stud: the body
    ("stud/settle", with_(S, board=[]), "unknown_field", "board"),
    ("stud/settle", "raise", "invalid_request", None),
]


@pytest.mark.parametrize(("path", "body", "code", "param"), BAD_POSTS)
def test_bad_posts_are_refused_naming_the_field(api, path, body, code, param):
    refused = error(post(api, path, body))
    assert (refused["type"], refused["code"], refused["param"]) == ("invalid_request", code, param)


POST_PATHS = ["evaluate", "uth/settle", "stud/settle"]


@pytest.mark.parametrize("path", POST_PATHS)
@pytest.mark.parametrize(
    "raw",
    ["{", '{"cards": ["As",]}', '{"cards": NaN}', '{"a": 1e999999}', "[" * 20_000, "\ufeff{}"],
)
def test_malformed_json_is_a_400(api, path, raw):
    response = api.post(f"{RULES}/{path}", raw, content_type="application/json")
    refused = error(response)
    assert (refused["code"], refused["param"]) == ("malformed_json", None)


@pytest.mark.parametrize("path", POST_PATHS)
def test_only_json_is_accepted(api, path):
    response = api.post(f"{RULES}/{path}", "cards=As", content_type="text/plain")
    assert error(response, 415)["code"] == "unsupported_media_type"
    form = api.post(f"{RULES}/{path}", {"cards": "As"})  # multipart
    assert error(form, 415)["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "evaluate"),
        ("get", "uth/settle"),
        ("get", "stud/settle"),
        ("post", "paytables"),
        ("post", "progressive/return"),
        ("delete", "paytables"),
        ("post", "par"),
    ],
)
def test_wrong_method_is_a_405(api, method, path):
    response = getattr(api, method)(f"{RULES}/{path}")
    assert error(response, 405)["code"] == "method_not_allowed"


BAD_QUERIES = [
    # (query, param)
    ("", "jackpot_cents"),
    ("other_bettors=1", "jackpot_cents"),
    ("jackpot_cents=", "jackpot_cents"),
    ("jackpot_cents=-1", "jackpot_cents"),
    ("jackpot_cents=abc", "jackpot_cents"),
    ("jackpot_cents=1.5", "jackpot_cents"),
    ("jackpot_cents=1e6", "jackpot_cents"),
    ("jackpot_cents=+5", "jackpot_cents"),
    ("jackpot_cents=%205", "jackpot_cents"),
    ("jackpot_cents=0x10", "jackpot_cents"),
    ("jackpot_cents=true", "jackpot_cents"),
    ("jackpot_cents=1000000000000000", "jackpot_cents"),  # 16 digits: beyond any meter
    ("jackpot_cents=100&other_bettors=", "other_bettors"),
    ("jackpot_cents=100&other_bettors=-1", "other_bettors"),
    ("jackpot_cents=100&other_bettors=7", "other_bettors"),
    ("jackpot_cents=100&other_bettors=two", "other_bettors"),
    ("jackpot_cents=100&other_bettors=1.0", "other_bettors"),
]


@pytest.mark.parametrize(("query", "param"), BAD_QUERIES)
def test_bad_query_parameters_are_refused_naming_the_parameter(api, query, param):
    refused = error(api.get(f"{RULES}/progressive/return?{query}"))
    assert (refused["code"], refused["param"]) == ("invalid_parameter", param)


@pytest.mark.parametrize("digits", ["%C2%B2", "%D9%A1%D9%A2"])  # '²', '١٢'
def test_unicode_digits_in_a_query_are_refused(api, digits):
    refused = error(api.get(f"{RULES}/progressive/return?jackpot_cents={digits}"))
    assert (refused["code"], refused["param"]) == ("invalid_parameter", "jackpot_cents")


# --- GET /rules/par ---------------------------------------------------------------------------


def test_par_sheets_in_force(api):
    body = ok(api.get(f"{RULES}/par?jackpot_cents=1000000&other_bettors=6"))
    ParAnswer.model_validate(body)
    assert [(s["game"], s["paytable_version"]) for s in body["sheets"]] == [
        ("uth_progressive", "uth-progressive/2026-1"),
        ("uth_trips", "uth-trips/2026-1"),
        ("stud_bonus", "stud-bonus/2026-1"),
    ]
    progressive, trips, stud = body["sheets"]
    # The progressive's return is the return endpoint's, to the fraction.
    returned = ok(api.get(f"{RULES}/progressive/return?jackpot_cents=1000000&other_bettors=6"))
    assert progressive["rtp"] == returned["rtp"]
    assert progressive["rtp_percent"] == returned["rtp_percent"] == "59.2800"
    assert (progressive["jackpot_cents"], progressive["other_bettors"]) == (1_000_000, 6)
    envy = progressive["lines"][1]
    assert envy == {
        "kind": "envy",
        "combinations": 6 * 86_480,
        "out_of": comb(52, 2) * comb(50, 5),
        "probability": fraction(Fraction(6 * 86_480, comb(52, 2) * comb(50, 5))),
        "pays": "EUR 500 per jackpot hit by another bettor",
        "pays_cents": 50_000,
        "rtp_contribution": fraction(Fraction(6 * 86_480, comb(52, 2) * comb(50, 5)) * 100),
        "share_of_return": envy["share_of_return"],
        "on_top": True,
    }
    assert (trips["rtp_percent"], trips["house_edge_percent"]) == ("96.5020", "3.4980")
    assert trips["rtp"] == {"numerator": 6_455_243, "denominator": 6_689_228}
    assert trips["jackpot_cents"] is trips["other_bettors"] is trips["stake_cents"] is None
    assert [line["kind"] for line in stud["lines"]] == [
        "royal_flush",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "flush",
        "loses",
    ]
    assert stud["lines"][0]["combinations"] == 4 * (comb(47, 5) - 3)
    assert stud["lines"][0]["out_of"] == comb(52, 5) * comb(47, 5)


def test_par_sheet_of_one_version_defaults_to_meter_zero(api):
    body = ok(api.get(f"{RULES}/par?version=uth-progressive/2026-1"))
    (sheet,) = body["sheets"]
    assert (sheet["jackpot_cents"], sheet["other_bettors"]) == (0, 0)
    assert sheet["lines"][0]["rtp_contribution"] == {"numerator": 0, "denominator": 1}
    (trips,) = ok(api.get(f"{RULES}/par?version=uth-trips/2026-1"))["sheets"]
    assert trips["game"] == "uth_trips"


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("version=uth-blind/2026-1", "version"),
        ("version=stud-raise/2026-1", "version"),
        ("version=unknown", "version"),
        ("version=", "version"),
        ("jackpot_cents=-1", "jackpot_cents"),
        ("other_bettors=7", "other_bettors"),
        ("other_bettors=x", "other_bettors"),
    ],
)
def test_par_refuses_bad_queries_naming_the_parameter(api, query, param):
    refused = error(api.get(f"{RULES}/par?{query}"))
    assert (refused["code"], refused["param"]) == ("invalid_parameter", param)
