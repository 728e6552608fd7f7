"""The worked example of docs/accounting.md, step by step, through the terminal API.

One pool, two linked Ultimate Texas Hold'em tables (A and B), four rounds. After every step the
test asserts every account of the pool, the pool's hot counters (meter and reserve in 1/10,000
cent), the transfers the step wrote and the award rows, against figures worked out BY HAND (the
arithmetic is in the comments). docs/accounting.md, "Worked example", shows the same figures: this
test is its proof, so a change to either must change both.

The pool: stake 500 cents; 1,250 bp (12.5%) to the meter = 62.5 cents a stake = 625,000 units;
625 bp (6.25%) to the reserve = 31.25 cents = 312,500 units; the house keeps the rest, 406.25
cents. Seed 100,000 cents (EUR 1,000). Verification threshold: the default 100,000 cents.
"""

from __future__ import annotations

from itertools import pairwise

import pytest

from jackpot.models import AuditEvent, Award, Pool, Transfer
from tables.audit.verification import verify_full
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db

U = 10_000  # units of 1/10,000 cent in a cent


def _balances(pool_id: int) -> dict[str, int]:
    """Every account of the pool as verify_journal recomputes it (the journal also verifies)."""
    return assert_journal_ok()["balances"][str(pool_id)]


def _counters(pool_id: int) -> tuple[int, int, int]:
    """(meter shown in cents, meter in units, reserve in units) as the pool row holds them."""
    pool = Pool.objects.get(pk=pool_id)
    return pool.meter_cents, pool.meter_units, pool.reserve_units


def _last_transfer() -> int:
    return Transfer.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _transfers_after(pk: int) -> list[tuple[str, str, str, int]]:
    """The transfers written since transfer `pk`: (code, debit account, credit account, cents)."""
    return [
        (t.code, t.debit.kind, t.credit.kind, t.amount_cents)
        for t in Transfer.objects.filter(pk__gt=pk).select_related("debit", "credit").order_by("pk")
    ]


def _awards(pool_id: int) -> list[tuple[int, str, int, str, int, str]]:
    """The pool's award rows: (number, round_id, seat, kind, cents, status)."""
    return [
        (a.number, a.round.round_id, a.seat, a.kind, a.amount_cents, a.status)
        for a in Award.objects.filter(pool_id=pool_id).select_related("round").order_by("number")
    ]


def test_worked_example_every_account_after_every_step():
    # --- Step 0: the pool is created; the house funds the seed -----------------------------
    floor = make_floor(2, meter_share_bp=1250, reserve_share_bp=625, seed_cents=100_000)
    pool_id = floor.pool_id
    table_a, table_b = floor.uth

    assert _transfers_after(0) == [("pool_seed", "house", "meter", 100_000)]
    assert _counters(pool_id) == (100_000, 100_000 * U, 0)
    assert _balances(pool_id) == {
        "stakes": 0,
        "meter": 100_000,
        "reserve": 0,
        "house": -100_000,
        "awards_pending": 0,
        "payable": 0,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 1: round R1 opens at table A with 3 progressive stakes -------------------------
    before = _last_transfer()
    opened = table_a.post(
        "/rounds", {"round_id": "R1", "seats": [uth_seat(1), uth_seat(2), uth_seat(3)]}
    )
    assert opened.status_code == 201, opened.json()

    # meter:   100,000 + 3 x 62.5  = 100,187.5 cents -> crosses 187 whole cents
    # reserve:       0 + 3 x 31.25 =      93.75 cents -> crosses 93
    # house:   3 x 500 - 187 - 93  = 1,220 (its exact share is 3 x 406.25 = 1,218.75: it holds
    #          the meter's 0.5 and the reserve's 0.75 cent until they make whole cents)
    assert opened.json()["progressive"] == {
        "stakes": 3,
        "stake_cents": 500,
        "meter_cents": 187,
        "reserve_cents": 93,
        "house_cents": 1220,
    }
    assert opened.json()["meter"]["amount_cents"] == 100_187
    assert _transfers_after(before) == [
        ("contribution_meter", "stakes", "meter", 187),
        ("contribution_reserve", "stakes", "reserve", 93),
        ("contribution_house", "stakes", "house", 1220),
    ]
    # units: 1,000,000,000 + 3 x 625,000 = 1,001,875,000; reserve 3 x 312,500 = 937,500
    assert _counters(pool_id) == (100_187, 1_001_875_000, 937_500)
    assert _balances(pool_id) == {
        "stakes": -1500,  # 3 x 500
        "meter": 100_187,  # 100,000 + 187
        "reserve": 93,
        "house": -98_780,  # -100,000 + 1,220
        "awards_pending": 0,
        "payable": 0,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 2: round R2 opens at table B with 2 progressive stakes -------------------------
    before = _last_transfer()
    opened = table_b.post("/rounds", {"round_id": "R2", "seats": [uth_seat(1), uth_seat(2)]})
    assert opened.status_code == 201, opened.json()

    # meter:   100,187.5 + 2 x 62.5  = 100,312.5 -> crosses 100,312 - 100,187 = 125
    # reserve:     93.75 + 2 x 31.25 =     156.25 -> crosses 156 - 93 = 63
    # house:   2 x 500 - 125 - 63 = 812
    assert opened.json()["progressive"] == {
        "stakes": 2,
        "stake_cents": 500,
        "meter_cents": 125,
        "reserve_cents": 63,
        "house_cents": 812,
    }
    assert _transfers_after(before) == [
        ("contribution_meter", "stakes", "meter", 125),
        ("contribution_reserve", "stakes", "reserve", 63),
        ("contribution_house", "stakes", "house", 812),
    ]
    # 5 stakes since the pool was created: 100,000 + 5 x 500 x 1,250 // 10,000 = 100,312
    assert _counters(pool_id) == (100_312, 1_003_125_000, 1_562_500)
    assert _balances(pool_id) == {
        "stakes": -2500,  # -1,500 - 1,000
        "meter": 100_312,  # 100,187 + 125
        "reserve": 156,  # 93 + 63
        "house": -97_968,  # -98,780 + 812
        "awards_pending": 0,
        "payable": 0,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 3: R1 settles: a full house and a four of a kind, both under the threshold -----
    before = _last_transfer()
    settled = table_a.post(
        "/rounds/R1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["3c", "4c"],
            "seats": [
                uth_play(1, "Kc Ks"),  # 7-7-7-K-K: full house, EUR 50
                uth_play(2, "7s Ac"),  # 7-7-7-7: four of a kind, EUR 500
                uth_play(3, "9h 8h", "fold"),  # three sevens: no award
            ],
        },
    )
    assert settled.status_code == 200, settled.json()

    # Fixed awards are paid by the house; under 100,000 cents they are approved at once (payable).
    assert _transfers_after(before) == [
        ("fixed_award", "house", "payable", 5_000),
        ("fixed_award", "house", "payable", 50_000),
    ]
    assert _counters(pool_id) == (100_312, 1_003_125_000, 1_562_500)  # the meter is not touched
    assert _balances(pool_id) == {
        "stakes": -2500,
        "meter": 100_312,
        "reserve": 156,
        "house": -152_968,  # -97,968 - 5,000 - 50,000
        "awards_pending": 0,
        "payable": 55_000,  # 5,000 + 50,000
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }
    assert _awards(pool_id) == [
        (1, "R1", 1, "full_house", 5_000, "approved"),
        (2, "R1", 2, "four_of_a_kind", 50_000, "approved"),
    ]

    # --- Step 4: R2 settles: seat 1 hits the jackpot royal, seat 2 gets envy ------------------
    before = _last_transfer()
    settled = table_b.post(
        "/rounds/R2/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [
                uth_play(1, "Jh Th"),  # royal flush with both hole cards: the jackpot
                uth_play(2, "2s 2d", "fold"),  # three twos: no award of its own, but envy
            ],
        },
    )
    assert settled.status_code == 200, settled.json()

    # The hit wins the meter in whole cents: 1,003,125,000 units // 10,000 = 100,312 cents; the
    # 5,000 units (0.5 cent) left stay on the meter counter. The reset to the 100,000 seed takes
    # the reserve's whole cents (1,562,500 // 10,000 = 156; 2,500 units = 0.25 cent stay) and the
    # house funds the shortfall, 100,000 - 156 = 99,844. Envy, EUR 500, is paid by the house.
    assert _transfers_after(before) == [
        ("jackpot_hit", "meter", "awards_pending", 100_312),
        ("reset_reserve", "reserve", "meter", 156),
        ("reset_house", "house", "meter", 99_844),
        ("envy", "house", "payable", 50_000),
    ]
    assert settled.json()["meter"]["amount_cents"] == 100_000
    # meter: 1,003,125,000 - 100,312 x U + 100,000 x U = 1,000,005,000 (100,000.5 cents)
    # reserve: 1,562,500 - 156 x U = 2,500 (0.25 cent)
    assert _counters(pool_id) == (100_000, 1_000_005_000, 2_500)
    assert _balances(pool_id) == {
        "stakes": -2500,
        "meter": 100_000,  # 100,312 - 100,312 + 156 + 99,844
        "reserve": 0,  # 156 - 156
        "house": -302_812,  # -152,968 - 99,844 - 50,000
        "awards_pending": 100_312,  # the jackpot waits for a supervisor
        "payable": 105_000,  # 55,000 + 50,000
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }
    assert _awards(pool_id)[2:] == [
        (3, "R2", 1, "royal_flush", 100_312, "pending"),
        (4, "R2", 2, "envy", 50_000, "approved"),
    ]

    # --- Step 5: R3 opens at table A with 1 stake: the half cent left by the hit makes a cent --
    before = _last_transfer()
    opened = table_a.post("/rounds", {"round_id": "R3", "seats": [uth_seat(4)]})
    assert opened.status_code == 201, opened.json()

    # meter:   100,000.5 + 62.5  = 100,063.0 -> crosses 63 (not 62: the hit's 0.5 cent joins in)
    # reserve:      0.25 + 31.25 =     31.5  -> crosses 31
    # house:   500 - 63 - 31 = 406 (exact share 406.25: it now holds only the reserve's 0.5)
    assert opened.json()["progressive"]["meter_cents"] == 63
    assert opened.json()["progressive"]["reserve_cents"] == 31
    assert opened.json()["progressive"]["house_cents"] == 406
    assert _transfers_after(before) == [
        ("contribution_meter", "stakes", "meter", 63),
        ("contribution_reserve", "stakes", "reserve", 31),
        ("contribution_house", "stakes", "house", 406),
    ]
    assert _counters(pool_id) == (100_063, 1_000_630_000, 315_000)
    assert _balances(pool_id) == {
        "stakes": -3000,  # -2,500 - 500
        "meter": 100_063,
        "reserve": 31,
        "house": -302_406,  # -302,812 + 406
        "awards_pending": 100_312,
        "payable": 105_000,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 6: R3 is voided (misdeal): the house refunds the stake, the meter keeps its share -
    before = _last_transfer()
    voided = table_a.post("/rounds/R3/void", {"reason": "misdeal"})
    assert voided.status_code == 200, voided.json()
    assert voided.json()["progressive_refund_cents"] == 500

    assert _transfers_after(before) == [("void_refund", "house", "stakes", 500)]
    assert _counters(pool_id) == (100_063, 1_000_630_000, 315_000)  # nothing goes down
    assert _balances(pool_id) == {
        "stakes": -2500,  # -3,000 + 500: R3's stake no longer counts
        "meter": 100_063,
        "reserve": 31,
        "house": -302_906,  # -302,406 - 500
        "awards_pending": 100_312,
        "payable": 105_000,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 7: R4 opens at table B with 3 stakes (seat 4 plays without the progressive) -----
    before = _last_transfer()
    opened = table_b.post(
        "/rounds",
        {
            "round_id": "R4",
            "seats": [uth_seat(1), uth_seat(2), uth_seat(3), uth_seat(4, progressive=0)],
        },
    )
    assert opened.status_code == 201, opened.json()

    # meter:   100,063.0 + 3 x 62.5  = 100,250.5 -> crosses 100,250 - 100,063 = 187
    # reserve:     31.5  + 3 x 31.25 =     125.25 -> crosses 125 - 31 = 94
    # house:   1,500 - 187 - 94 = 1,219
    assert opened.json()["progressive"] == {
        "stakes": 3,
        "stake_cents": 500,
        "meter_cents": 187,
        "reserve_cents": 94,
        "house_cents": 1219,
    }
    assert _transfers_after(before) == [
        ("contribution_meter", "stakes", "meter", 187),
        ("contribution_reserve", "stakes", "reserve", 94),
        ("contribution_house", "stakes", "house", 1219),
    ]
    # 4 stakes since the reset, plus the 0.5 cent the hit left: 100,000 + (5,000 + 4 x 625,000)
    # // 10,000 = 100,250 (the voided stake counts: the meter kept its share)
    assert _counters(pool_id) == (100_250, 1_002_505_000, 1_252_500)
    assert _balances(pool_id) == {
        "stakes": -4000,  # -2,500 - 1,500
        "meter": 100_250,
        "reserve": 125,
        "house": -301_687,  # -302,906 + 1,219
        "awards_pending": 100_312,
        "payable": 105_000,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }

    # --- Step 8: R4 settles with a royal flush on the board: the community royal ---------------
    before = _last_transfer()
    settled = table_b.post(
        "/rounds/R4/result",
        {
            "board": ["As", "Ks", "Qs", "Js", "Ts"],
            "dealer": ["2c", "3c"],
            "seats": [
                uth_play(1, "9s 8s"),
                uth_play(2, "4d 5d", "fold"),  # folded: still judged on its 7 cards
                uth_play(3, "6h 7h"),
                uth_play(4, "8c 8d"),  # no progressive stake: no award
            ],
        },
    )
    assert settled.status_code == 200, settled.json()

    # EUR 5,000 to each of the 3 bettors, paid by the house; at or above the threshold, so
    # pending; no envy for a community royal; the meter does not move.
    assert _transfers_after(before) == [
        ("fixed_award", "house", "awards_pending", 500_000),
        ("fixed_award", "house", "awards_pending", 500_000),
        ("fixed_award", "house", "awards_pending", 500_000),
    ]
    assert _counters(pool_id) == (100_250, 1_002_505_000, 1_252_500)
    assert _balances(pool_id) == {
        "stakes": -4000,
        "meter": 100_250,
        "reserve": 125,
        "house": -1_801_687,  # -301,687 - 3 x 500,000
        "awards_pending": 1_600_312,  # 100,312 + 1,500,000
        "payable": 105_000,
        "paid": 0,
        "orphan": 0,
        "moved": 0,
        "forfeit": 0,
    }
    assert _awards(pool_id) == [
        (1, "R1", 1, "full_house", 5_000, "approved"),
        (2, "R1", 2, "four_of_a_kind", 50_000, "approved"),
        (3, "R2", 1, "royal_flush", 100_312, "pending"),
        (4, "R2", 2, "envy", 50_000, "approved"),
        (5, "R4", 1, "community_royal", 500_000, "pending"),
        (6, "R4", 2, "community_royal", 500_000, "pending"),
        (7, "R4", 3, "community_royal", 500_000, "pending"),
    ]

    # --- The audit chains: the pool's own, and one per table, each linked by hash -------------
    def chain(key: str) -> list[AuditEvent]:
        return list(AuditEvent.objects.filter(chain=key).order_by("sequence"))

    pool_events = chain(f"pool-{pool_id}")
    a_events = chain(f"table-{table_a.table_id}")
    b_events = chain(f"table-{table_b.table_id}")
    assert [(e.sequence, e.kind) for e in pool_events] == [(1, "pool.created")]
    assert [(e.sequence, e.kind, e.payload["round_id"]) for e in a_events] == [
        (1, "round.opened", "R1"),
        (2, "round.settled", "R1"),
        (3, "round.opened", "R3"),
        (4, "round.voided", "R3"),
    ]
    assert [(e.sequence, e.kind, e.payload["round_id"]) for e in b_events] == [
        (1, "round.opened", "R2"),
        (2, "round.settled", "R2"),
        (3, "round.opened", "R4"),
        (4, "round.settled", "R4"),
    ]
    # The meter's changes across both tables, in the order the pool row lock gave them.
    versions = [
        (e.payload["round_id"], e.kind, e.payload["meter_version"])
        for e in a_events + b_events
        if e.payload.get("meter_version") is not None
    ]
    assert sorted(versions, key=lambda v: v[2]) == [
        ("R1", "round.opened", 1),
        ("R2", "round.opened", 2),
        ("R2", "round.settled", 3),  # the jackpot hit and its reset
        ("R3", "round.opened", 4),
        ("R4", "round.opened", 5),
    ]
    for events in (pool_events, a_events, b_events):
        assert events[0].prev_hash == "0" * 64
        assert all(later.prev_hash == earlier.hash for earlier, later in pairwise(events))
    report = verify_full()
    assert report.ok and report.chains == 4  # the pool's, table A's, table B's and `admin`
    assert report.transfers == 1 + 3 + 3 + 2 + 4 + 3 + 1 + 3 + 3  # = 23, every step above
