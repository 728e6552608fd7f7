"""The ledger against an independent model, over random pools and random play.

For random pool parameters (odd basis points, seeds, thresholds) and a random sequence of rounds
(any number of progressive stakes, settled with random cards or a dealt royal, or voided), a
plain-integer model written here predicts the meter and reserve counters, every account balance
and every award; the service must agree after every step, and verify_journal must pass.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jackpot.models import Award, Pool
from tests.conftest import assert_journal_ok, make_floor

U = 10_000
DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
ROYAL = ["Ah", "Kh", "Qh", "Jh", "Th"]


def _deal(rng: random.Random, seats: list[int], royal_seat: int | None) -> dict:
    deck = DECK.copy()
    rng.shuffle(deck)
    if royal_seat is not None:
        # Three royal cards on the board, the other two in the royal seat's hand.
        deck = [card for card in deck if card not in ROYAL]
        board = ["Ah", "Kh", "Qh", *deck[:2]]
        deck = deck[2:]
    else:
        board, deck = deck[:5], deck[5:]
    dealer, deck = deck[:2], deck[2:]
    plays = []
    for seat in seats:
        hole = ["Jh", "Th"] if seat == royal_seat else deck[:2]
        if seat != royal_seat:
            deck = deck[2:]
        plays.append({"seat": seat, "cards": hole, "decision": {"action": "fold"}})
    return {"board": board, "dealer": dealer, "seats": plays}


@pytest.mark.django_db
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    meter_bp=st.integers(min_value=1, max_value=6000),
    reserve_bp=st.integers(min_value=0, max_value=4000),
    seed_cents=st.integers(min_value=1, max_value=300_000),  # a seed is a cent at least
    threshold=st.sampled_from([5_000, 50_000, 100_000, 10**9]),
    play_seed=st.integers(min_value=0, max_value=10**6),
)
def test_the_ledger_matches_an_independent_model(
    meter_bp, reserve_bp, seed_cents, threshold, play_seed
):
    floor = make_floor(
        2,
        meter_share_bp=meter_bp,
        reserve_share_bp=reserve_bp,
        seed_cents=seed_cents,
        verification_threshold_cents=threshold,
    )
    rng = random.Random(play_seed)
    meter_units, reserve_units = seed_cents * U, 0
    house, stakes_account, pending, payable = -seed_cents, 0, 0, 0
    awards_expected = 0

    for number in range(12):
        terminal = rng.choice(floor.uth)
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
        bettors = [seat for seat in seats if rng.random() < 0.8]
        opened = terminal.post(
            "/rounds",
            {
                "round_id": f"m-{number}",
                "seats": [
                    {
                        "seat": seat,
                        "bets": {
                            "ante_cents": 100,
                            "blind_cents": 100,
                            "progressive_cents": 500 if seat in bettors else 0,
                        },
                    }
                    for seat in seats
                ],
            },
        )
        assert opened.status_code == 201, opened.json()
        # The model of a contribution: exact units, whole cents crossed, the house the rest.
        n = len(bettors)
        meter_before, reserve_before = meter_units, reserve_units
        meter_units += n * 500 * meter_bp
        reserve_units += n * 500 * reserve_bp
        meter_cents = meter_units // U - meter_before // U
        reserve_cents = reserve_units // U - reserve_before // U
        house += n * 500 - meter_cents - reserve_cents
        stakes_account -= n * 500

        action = rng.random()
        if action < 0.15:
            terminal.post(f"/rounds/m-{number}/void", {"reason": "misdeal"})
            house -= n * 500
            stakes_account += n * 500
        else:
            royal_seat = rng.choice(bettors) if bettors and action > 0.75 else None
            settled = terminal.post(f"/rounds/m-{number}/result", _deal(rng, seats, royal_seat))
            assert settled.status_code == 200, settled.json()
            for award in settled.json()["awards"]:
                awards_expected += 1
                if award["kind"] == "royal_flush":
                    assert award["amount_cents"] == meter_units // U
                    won = meter_units // U
                    from_reserve = min(seed_cents, reserve_units // U)
                    meter_units += -won * U + seed_cents * U
                    reserve_units -= from_reserve * U
                    house -= seed_cents - from_reserve
                    pending += won
                else:
                    house -= award["amount_cents"]
                    if award["amount_cents"] >= threshold:
                        pending += award["amount_cents"]
                    else:
                        payable += award["amount_cents"]
                assert award["status"] == (
                    "pending"
                    if award["kind"] == "royal_flush" or award["amount_cents"] >= threshold
                    else "approved"
                )

        pool = Pool.objects.get(pk=floor.pool_id)
        assert (pool.meter_units, pool.reserve_units) == (meter_units, reserve_units)
        balances = assert_journal_ok()["balances"][str(floor.pool_id)]
        assert balances == {
            "stakes": stakes_account,
            "meter": meter_units // U,
            "reserve": reserve_units // U,
            "house": house,
            "awards_pending": pending,
            "payable": payable,
            "paid": 0,
            "orphan": 0,
            "moved": 0,
            "forfeit": 0,
        }
    assert Award.objects.filter(pool_id=floor.pool_id).count() == awards_expected
