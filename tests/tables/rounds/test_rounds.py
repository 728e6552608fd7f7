"""The terminal round API on PostgreSQL: open, result, void, replays, and what moves the money."""

from __future__ import annotations

import json

import pytest

from jackpot.models import AuditEvent, Award, Pool, Transfer
from tables.models import IdempotencyRecord, Round
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db

ROYAL_RESULT = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [
        uth_play(1, "Jh Th"),  # royal flush with both hole cards: the jackpot
        uth_play(2, "2s 2d", "fold"),  # trips (2-2-2), folded
        uth_play(3, "4c 5c", "play", "river", 1),
    ],
}


def _open(terminal, round_id="r-1", seats=None, **headers):
    seats = seats or [uth_seat(1), uth_seat(2, trips=500), uth_seat(3, progressive=0)]
    return terminal.post("/rounds", {"round_id": round_id, "seats": seats}, **headers)


def test_open_locks_bets_and_raises_the_meter(floor):
    response = _open(floor.uth[0])

    assert response.status_code == 201
    body = response.json()
    assert body["state"] == "open"
    # Two progressive stakes of 500: 20% to the meter, 8% to the reserve, the rest to the house.
    assert body["progressive"] == {
        "stakes": 2,
        "stake_cents": 500,
        "meter_cents": 200,
        "reserve_cents": 80,
        "house_cents": 720,
    }
    assert body["meter"]["amount_cents"] == 1_000_200
    pool = Pool.objects.get(pk=floor.pool_id)
    assert pool.meter_cents == 1_000_200
    assert assert_journal_ok()["balances"][str(floor.pool_id)] == {
        "stakes": -1000,
        "meter": 1_000_200,
        "reserve": 80,
        "house": -1_000_000 + 720,
        "awards_pending": 0,
        "payable": 0,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }


def test_royal_wins_the_whole_meter_and_envy_goes_to_the_other_bettors(floor):
    terminal = floor.uth[0]
    _open(terminal)
    response = terminal.post("/rounds/r-1/result", ROYAL_RESULT)

    assert response.status_code == 200, response.json()
    body = response.json()
    by_seat = {seat["seat"]: seat for seat in body["seats"]}
    assert by_seat[1]["player_hand"]["category"] == "royal_flush"
    assert by_seat[1]["boxes"]["blind"] == {"stake_cents": 500, "net_cents": 250_000}  # 500:1
    assert by_seat[2]["outcome"] == "fold"
    assert by_seat[2]["boxes"]["trips"] == {"stake_cents": 500, "net_cents": 1500}  # 3:1
    assert [(a["seat"], a["kind"], a["amount_cents"], a["status"]) for a in body["awards"]] == [
        (1, "royal_flush", 1_000_200, "pending"),
        (2, "envy", 50_000, "approved"),  # seat 3 has no progressive stake: no envy
    ]
    # The meter reset to the seed; the reserve (80 cents) paid what it could, the house the rest.
    assert body["meter"]["amount_cents"] == 1_000_000
    codes = list(
        Transfer.objects.filter(round__round_id="r-1")
        .order_by("pk")
        .values_list("code", "amount_cents")
    )
    assert ("jackpot_hit", 1_000_200) in codes
    assert ("reset_reserve", 80) in codes
    assert ("reset_house", 1_000_000 - 80) in codes
    assert ("envy", 50_000) in codes
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert balances["meter"] == 1_000_000
    assert balances["reserve"] == 0
    assert balances["awards_pending"] == 1_000_200
    assert balances["payable"] == 50_000


def test_answers_are_written_as_terminals_have_always_read_them(floor):
    # Built from their models now: the keys in the order they always had, a seat's progressive
    # absent (not null) when the seat did not stake it, times as isoformat() writes them.
    terminal = floor.uth[0]
    opened = json.loads(_open(terminal).content)
    assert list(opened) == [
        "table", "round_id", "state", "opened_at", "seats", "progressive", "meter"
    ]  # fmt: skip
    assert opened["opened_at"].endswith("+00:00") and opened["meter"]["as_of"].endswith("+00:00")
    assert list(opened["seats"][0]["bets"]) == [
        "ante_cents", "blind_cents", "trips_cents", "progressive_cents"
    ]  # fmt: skip
    settled = json.loads(terminal.post("/rounds/r-1/result", ROYAL_RESULT).content)
    assert list(settled) == [
        "table", "round_id", "state", "settled_at", "board", "dealer", "dealer_hand",
        "dealer_qualifies", "seats", "awards", "meter",
    ]  # fmt: skip
    staked, unstaked = settled["seats"][0], settled["seats"][2]
    assert list(staked) == [
        "seat", "cards", "decision", "player_hand", "dealer_hand", "dealer_qualifies",
        "outcome", "boxes", "net_cents", "progressive",
    ]  # fmt: skip
    assert staked["progressive"] == {
        "stake_cents": 500,
        "award": "royal_flush",
        "fixed_cents": None,  # null, not absent: the meter pays the jackpot
    }
    assert "progressive" not in unstaked
    assert staked["decision"] == {"action": "play", "street": "preflop", "multiple": 4}
    assert settled["settled_at"].endswith("+00:00")
    assert list(settled["awards"][0]) == [
        "id",
        "seat",
        "kind",
        "amount_cents",
        "status",
        "sequence",
    ]


def test_replays_return_the_first_answer_and_move_nothing(floor):
    terminal = floor.uth[0]
    first_open = _open(terminal).json()
    first_result = terminal.post("/rounds/r-1/result", ROYAL_RESULT).json()
    counts = (Transfer.objects.count(), AuditEvent.objects.count(), Award.objects.count())

    assert _open(terminal).json() == first_open
    again = terminal.post("/rounds/r-1/result", ROYAL_RESULT)
    assert again.status_code == 200 and again.json() == first_result
    assert (Transfer.objects.count(), AuditEvent.objects.count(), Award.objects.count()) == counts


def test_same_round_id_with_another_payload_is_refused(floor):
    terminal = floor.uth[0]
    _open(terminal)
    meter_before = Pool.objects.get(pk=floor.pool_id).meter_units

    response = _open(terminal, seats=[uth_seat(1, ante=1000)])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "round_id_reused"
    terminal.post("/rounds/r-1/result", ROYAL_RESULT)
    other = dict(ROYAL_RESULT, dealer=["8s", "8d"])
    response = terminal.post("/rounds/r-1/result", other)
    assert response.status_code == 409
    assert Pool.objects.get(pk=floor.pool_id).meter_units == 1_000_000 * 10_000  # after the reset
    assert meter_before == 1_000_200 * 10_000


def test_idempotency_key_is_honoured(floor):
    terminal = floor.uth[0]
    first = _open(terminal, HTTP_IDEMPOTENCY_KEY="k-1")
    again = _open(terminal, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert IdempotencyRecord.objects.count() == 1

    reused = _open(terminal, round_id="r-2", HTTP_IDEMPOTENCY_KEY="k-1")
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert not Round.objects.filter(round_id="r-2").exists()


def test_void_refunds_stakes_but_the_meter_keeps_its_share(floor):
    terminal = floor.uth[0]
    _open(terminal)
    response = terminal.post("/rounds/r-1/void", {"reason": "misdeal"})

    assert response.status_code == 200
    assert response.json()["progressive_refund_cents"] == 1000
    assert Pool.objects.get(pk=floor.pool_id).meter_cents == 1_000_200  # never down but for a hit
    assert terminal.post("/rounds/r-1/void", {"reason": "misdeal"}).json() == response.json()
    refused = terminal.post("/rounds/r-1/result", ROYAL_RESULT)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "round_void"
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert balances["stakes"] == 0


def test_settled_round_cannot_be_voided(floor):
    terminal = floor.uth[0]
    _open(terminal)
    terminal.post("/rounds/r-1/result", ROYAL_RESULT)
    response = terminal.post("/rounds/r-1/void", {"reason": "late"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "round_settled"


def test_community_royal_pays_every_bettor_and_no_envy(floor):
    terminal = floor.uth[0]
    _open(terminal, seats=[uth_seat(1), uth_seat(2), uth_seat(4, progressive=0)])
    response = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["As", "Ks", "Qs", "Js", "Ts"],
            "dealer": ["2c", "3c"],
            "seats": [uth_play(1, "9s 8s"), uth_play(2, "4d 5d", "fold"), uth_play(4, "6h 7h")],
        },
    )
    awards = response.json()["awards"]
    assert [(a["seat"], a["kind"], a["amount_cents"], a["status"]) for a in awards] == [
        (1, "community_royal", 500_000, "pending"),  # at or above the EUR 1,000 threshold
        (2, "community_royal", 500_000, "pending"),
    ]
    assert Pool.objects.get(pk=floor.pool_id).meter_cents == 1_000_100 + 100  # no hit
    assert_journal_ok()


def test_fixed_awards_below_the_threshold_are_approved_at_once(floor):
    terminal = floor.uth[0]
    _open(terminal, seats=[uth_seat(1), uth_seat(2), uth_seat(3)])
    response = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["3c", "4c"],
            "seats": [
                uth_play(1, "7s Ac"),  # four of a kind: EUR 500
                uth_play(2, "Kc Ks"),  # full house: EUR 50
                uth_play(3, "9h 8h", "fold"),  # three of a kind: nothing
            ],
        },
    )
    awards = [
        (a["seat"], a["kind"], a["amount_cents"], a["status"]) for a in response.json()["awards"]
    ]
    assert awards == [
        (1, "four_of_a_kind", 50_000, "approved"),
        (2, "full_house", 5_000, "approved"),
    ]
    assert [a["sequence"] for a in response.json()["awards"]] == [1, 2]
    assert assert_journal_ok()["balances"][str(floor.pool_id)]["payable"] == 55_000


def test_stud_round_settles_without_touching_any_pool(floor):
    terminal = floor.stud
    opened = terminal.post(
        "/rounds",
        {
            "round_id": "s-1",
            "seats": [{"seat": 1, "bets": {"ante_cents": 100, "bonus_cents": 100}}],
        },
    )
    assert opened.status_code == 201, opened.json()
    assert opened.json()["meter"] is None
    response = terminal.post(
        "/rounds/s-1/result",
        {
            "dealer": ["Ac", "Kd", "7h", "4s", "2c"],
            "seats": [
                {
                    "seat": 1,
                    "cards": ["9h", "9d", "5c", "4c", "2h"],
                    "decision": {"action": "raise"},
                }
            ],
        },
    )
    assert response.status_code == 200, response.json()
    seat = response.json()["seats"][0]
    assert seat["boxes"]["ante"]["net_cents"] == 100
    assert seat["boxes"]["raise"] == {"stake_cents": 200, "net_cents": 200}  # a pair pays 1:1
    assert seat["boxes"]["bonus"]["net_cents"] == -100
    assert not Transfer.objects.filter(round__round_id="s-1").exists()
    assert_journal_ok()


def test_meter_after_n_stakes_is_exact_with_sub_cent_shares(db):
    # 1,234 bp of 500 cents is 61.7 cents: the meter keeps the tenths and shows whole cents.
    # Seven tables of the pool: each keeps its round open (one open round per table).
    floor = make_floor(7, meter_share_bp=1234, reserve_share_bp=777, seed_cents=100_000)
    stakes = 0
    for n in range(1, 8):
        terminal = floor.uth[n - 1]
        _open(terminal, round_id=f"r-{n}", seats=[uth_seat(s) for s in range(1, n + 1)])
        stakes += n
        shown = Pool.objects.get(pk=floor.pool_id).meter_cents
        assert shown == 100_000 + stakes * 500 * 1234 // 10_000
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert balances["reserve"] == stakes * 500 * 777 // 10_000
    assert balances["stakes"] == -stakes * 500


def test_shares_adding_to_the_whole_stake_release_the_house_carry(db):
    # The smallest seed, one cent, funded by the house (a seed is at least a cent).
    floor = make_floor(6, meter_share_bp=3333, reserve_share_bp=6667, seed_cents=1)
    for n in range(1, 7):
        _open(floor.uth[n - 1], round_id=f"r-{n}", seats=[uth_seat(1)])
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert balances["meter"] == 1 + 6 * 500 * 3333 // 10_000
    assert balances["reserve"] == 6 * 500 * 6667 // 10_000
    kept = balances["house"] + 1  # the house's part of the stakes, the seed aside
    assert kept == 3000 - (balances["meter"] - 1) - balances["reserve"]
    assert 0 <= kept <= 2
