"""Awards only where they are owed: requirements 20 and 23.

- 20: two jackpot royals in one hand need one card twice (a royal using a hole card takes at
  least three board cards of its suit, and a board of five holds three of one suit once); the
  service refuses such a result loudly (400 naming the card) and pays nothing, not twice.
- 23: a seat that did not stake the progressive in the round wins nothing from it, not even with
  a jackpot royal in its hand: no award, no hit, no envy for the others, the meter untouched.

(Requirements 21 and 25 are proved by tests/tables/rounds/test_rounds.py, see docs/compliance.md.)
"""

from __future__ import annotations

import pytest

from jackpot.models import AuditEvent, Award, Pool, Transfer
from tables.models import Round
from tests.conftest import assert_journal_ok, uth_play, uth_seat

pytestmark = pytest.mark.django_db


def _state(pool_id: int) -> tuple:
    pool = Pool.objects.get(pk=pool_id)
    return (
        pool.meter_units,
        pool.hit_count,
        Award.objects.count(),
        Transfer.objects.count(),
        AuditEvent.objects.count(),
    )


def test_two_jackpot_royals_in_one_hand_are_refused_not_paid_twice(floor):
    terminal = floor.uth[0]
    seats = [uth_seat(1), uth_seat(2), uth_seat(3)]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": seats}).status_code == 201
    before = _state(floor.pool_id)
    two_royals = {
        "board": ["Ah", "Kh", "Qh", "2c", "3d"],
        "dealer": ["9s", "9d"],
        "seats": [uth_play(1, "Jh Th"), uth_play(2, "Jh Th"), uth_play(3, "4c 5c", "fold")],
    }
    response = terminal.post("/rounds/r-1/result", two_royals)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "duplicate_card" and "Jh" in error["message"], error
    assert _state(floor.pool_id) == before  # nothing paid, the meter as it was
    assert Round.objects.get(round_id="r-1").state == "open"  # still to settle, correctly
    one_royal = dict(
        two_royals,
        seats=[two_royals["seats"][0], uth_play(2, "6s 7s"), uth_play(3, "4c 5c", "fold")],
    )
    settled = terminal.post("/rounds/r-1/result", one_royal)
    assert settled.status_code == 200
    kinds = [award["kind"] for award in settled.json()["awards"]]
    assert kinds.count("royal_flush") == 1
    assert Pool.objects.get(pk=floor.pool_id).hit_count == 1
    assert_journal_ok()


def test_a_seat_without_a_progressive_stake_wins_nothing_even_with_the_royal(floor):
    terminal = floor.uth[0]
    seats = [uth_seat(1, progressive=0), uth_seat(2), uth_seat(3)]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": seats}).status_code == 201
    meter_units, hits, awards, _, _ = _state(floor.pool_id)
    response = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            # Seat 1 holds the jackpot royal but staked nothing; seats 2 and 3 staked and hold
            # nothing the paytable pays.
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "6s 7s", "fold"), uth_play(3, "4c 8c")],
        },
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["awards"] == []  # no jackpot, so no envy either
    seat_one = next(seat for seat in body["seats"] if seat["seat"] == 1)
    assert seat_one["player_hand"]["category"] == "royal_flush"
    assert "progressive" not in seat_one
    pool = Pool.objects.get(pk=floor.pool_id)
    assert (pool.meter_units, pool.hit_count, Award.objects.count()) == (meter_units, hits, awards)
    assert not Transfer.objects.filter(code__in=["jackpot_hit", "envy", "fixed_award"]).exists()
    assert_journal_ok()
