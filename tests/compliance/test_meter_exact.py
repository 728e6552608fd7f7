"""The meter is exact: requirements 3, 5 and 8 of shared/compliance.md.

- 3: 10,000 contributions posted concurrently by 50 terminals (50 real PostgreSQL connections,
  one per thread) with two jackpots won among them: the meter is then exactly the seed plus every
  contribution's share, less what the jackpots won, plus the seeds their resets put back.
- 5: with shares that give fractions of a cent, after every one of N = 1 ... 100,000
  contributions the meter shown (whole cents) plus the remainder it carries equals the share rate
  times the total wagered, exactly; the journal's whole cents plus the remainders the house holds
  account for every stake.
- 8: two transactions that both read the meter, then both add to it (a barrier between), lose
  neither addition: the counters are written by single SQL statements, never read-modify-write.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction
from django.utils import timezone

from jackpot.models import UNITS_PER_CENT, Award, Pool
from jackpot.money import meter
from tests.conftest import MANY_CONNECTIONS, assert_journal_ok, make_floor, uth_play, uth_seat

U = UNITS_PER_CENT

# --- requirement 3 ------------------------------------------------------------------------------

TERMINALS = 50
CONTRIBUTIONS = 10_000
PER_TERMINAL = CONTRIBUTIONS // TERMINALS  # 200: 28 rounds of 7 stakes, then one of 4
ROYAL_TERMINALS = (7, 31)
# No seat holds a full house or better: a round with no award, which frees the table at once.
NOTHING = {
    "board": ["2c", "7d", "9h", "Jc", "4s"],
    "dealer": ["3d", "8c"],
    "hole": ["Ah Kd", "Qs 5h", "Th 6d", "8s 3h", "5c 6c", "Kc Qd", "Ts 8d"],
}
ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "hole": ["Jh Th", "4s 5d", "6s 7d", "8c 9c", "Tc Jc", "Qc Kc", "As 4d"],
}


def _result(deal: dict, seats: int) -> dict:
    return {
        "board": deal["board"],
        "dealer": deal["dealer"],
        "seats": [uth_play(n, deal["hole"][n - 1], "fold") for n in range(1, seats + 1)],
    }


@MANY_CONNECTIONS
@pytest.mark.django_db(transaction=True)
def test_10000_concurrent_contributions_from_50_terminals_leave_the_meter_exact():
    # Shares that give fractions of a cent (62.5 and 31.25 cents a stake): exactness in units.
    floor = make_floor(TERMINALS, meter_share_bp=1250, reserve_share_bp=625, seed_cents=100_000)
    pool = Pool.objects.get(pk=floor.pool_id)
    start = threading.Barrier(TERMINALS, timeout=120)

    def play(index: int) -> list[int]:
        terminal = floor.uth[index]
        statuses: list[int] = []
        left, number = PER_TERMINAL, 0
        try:
            start.wait()
            while left:
                seats = min(7, left)
                round_id = f"t{index}-r{number}"
                body = {"round_id": round_id, "seats": [uth_seat(n) for n in range(1, seats + 1)]}
                # 50 request threads in one process hold the pool row across the GIL's switches:
                # the lock and statement timeouts refuse some requests, resent as a terminal does.
                terminal.post_as_terminal("/rounds", body, statuses=statuses, patience_s=240)
                # Two terminals win the jackpot halfway through, while the others keep posting.
                royal = index in ROYAL_TERMINALS and number == 14
                result = _result(ROYAL if royal else NOTHING, seats)
                terminal.post_as_terminal(
                    f"/rounds/{round_id}/result", result, statuses=statuses, patience_s=240
                )
                left -= seats
                number += 1
        finally:
            connection.close()
        return statuses

    with ThreadPoolExecutor(max_workers=TERMINALS) as executor:
        results = list(executor.map(play, range(TERMINALS)))
    final = [status for statuses in results for status in statuses if status != 503]
    rounds = -(-PER_TERMINAL // 7)  # 29 a terminal: each opened once and settled once
    assert set(final) == {200, 201} and len(final) == 2 * rounds * TERMINALS, results

    pool.refresh_from_db()
    jackpots = list(
        Award.objects.filter(pool=pool, kind="royal_flush").values_list("amount_cents", flat=True)
    )
    assert len(jackpots) == len(ROYAL_TERMINALS) == pool.hit_count
    # seed + contributions - awards (+ the seed each reset put back), to the 1/10,000 cent.
    expected_units = (
        pool.seed_cents * U
        + CONTRIBUTIONS * pool.stake_cents * pool.meter_share_bp
        - sum(jackpots) * U
        + len(jackpots) * pool.seed_cents * U
    )
    assert pool.meter_units == expected_units
    balances = assert_journal_ok()["balances"][str(pool.pk)]
    assert balances["meter"] == expected_units // U
    assert balances["stakes"] == -CONTRIBUTIONS * pool.stake_cents
    assert balances["awards_pending"] == sum(jackpots)  # jackpots wait; envy is approved at once


# --- requirement 5 ------------------------------------------------------------------------------

SUB_CENT_POOLS = [
    # 1,234 bp of 500 cents is 61.7 cents; 777 bp is 38.85 cents: the remainders cycle slowly.
    pytest.param(1234, 777, 100_000, id="61.7c-38.85c"),
    # 1 bp of 500 cents is 0.05 cent: 20 stakes make one cent of the meter.
    pytest.param(1, 3, 1, id="0.05c-0.15c"),
    # Shares adding to the whole stake: the house's remainders come back as sub_cent_carry.
    pytest.param(3333, 6667, 50_000, id="whole-stake"),
]


def _contributions(pool: Pool, count: int, per_transaction: int = 250):
    """`count` contributions of one stake each through the counters' own path
    (`jackpot.money.meter.add_stakes`, one UPDATE, as a round's open runs it); yields N, the split
    and the counters after each. Committed every `per_transaction` contributions: 100,000 updates of
    one row in one transaction would make PostgreSQL walk every earlier version of the row."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")  # this test's commits need not wait
    for first in range(1, count + 1, per_transaction):
        with transaction.atomic(), connection.cursor() as cursor:
            for n in range(first, min(first + per_transaction, count + 1)):
                split = meter.add_stakes(
                    pool_id=pool.pk, stakes=1, stake_cents=pool.stake_cents, now=now
                )
                assert split is not None
                cursor.execute(
                    "SELECT meter_units, reserve_units FROM jackpot_pool WHERE id = %s", [pool.pk]
                )
                meter_units, reserve_units = cursor.fetchone()
                yield n, split, meter_units, reserve_units


def _check_after(n, seed_cents, stake, bp, totals, split, meter_units, reserve_units):
    """The invariants of requirement 5 after `n` contributions; `totals` the whole cents the
    journal moved so far (meter, reserve, house)."""
    meter_bp, reserve_bp = bp
    wagered = n * stake
    # The meter shown (whole cents) plus the remainder it carries (in 1/10,000 cent) is the seed
    # plus the rate times the total wagered, exactly; likewise the reserve.
    shown, carried = divmod(meter_units, U)
    assert shown * U + carried == seed_cents * U + wagered * meter_bp, n
    assert split.meter_after_cents == shown, n
    assert reserve_units == wagered * reserve_bp, n
    # The journal moves whole cents: the meter's and the reserve's crossed cents, the house the
    # rest; the house's part plus what it holds for the two counters is its exact share.
    totals[0] += split.meter_cents
    totals[1] += split.reserve_cents
    totals[2] += split.house_cents
    assert totals[0] == shown - seed_cents, n
    assert totals[1] == reserve_units // U, n
    assert sum(totals) == wagered, n
    held = carried + reserve_units % U
    assert totals[2] * U == wagered * (10_000 - meter_bp - reserve_bp) + held, n
    assert 0 <= held < 2 * U, n


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("meter_bp", "reserve_bp", "seed_cents"), SUB_CENT_POOLS)
def test_meter_and_its_carried_remainder_are_the_rate_times_the_total_wagered(
    meter_bp, reserve_bp, seed_cents
):
    """On PostgreSQL, through `jackpot.money.meter.add_stakes`: every N up to 10,000 (2,000 for the
    other rates; each is a committed UPDATE, so 100,000 would take minutes here)."""
    floor = make_floor(
        1, meter_share_bp=meter_bp, reserve_share_bp=reserve_bp, seed_cents=seed_cents
    )
    pool = Pool.objects.get(pk=floor.pool_id)
    count = 10_000 if meter_bp == 1234 else 2_000
    totals = [0, 0, 0]
    for n, split, meter_units, reserve_units in _contributions(pool, count):
        _check_after(
            n, seed_cents, pool.stake_cents, (meter_bp, reserve_bp), totals, split,
            meter_units, reserve_units,
        )  # fmt: skip


@pytest.mark.parametrize(("meter_bp", "reserve_bp", "seed_cents"), SUB_CENT_POOLS)
def test_the_split_of_every_contribution_up_to_100000_is_exact(meter_bp, reserve_bp, seed_cents):
    """N = 1 ... 100,000 without the database: the counters move as `add_stakes`' UPDATE moves
    them (stake x share units a stake; the test above proves the UPDATE does), and every split is
    made by the service's own `crossed_cents` and rule (the house gets the rest)."""
    stake = 500
    meter_units, reserve_units = seed_cents * U, 0
    totals = [0, 0, 0]
    for n in range(1, 100_001):
        meter_units += stake * meter_bp
        reserve_units += stake * reserve_bp
        meter_part = meter.crossed_cents(meter_units, stake * meter_bp)
        reserve_part = meter.crossed_cents(reserve_units, stake * reserve_bp)
        split = meter.Split(
            stakes_cents=stake,
            meter_cents=meter_part,
            reserve_cents=reserve_part,
            house_cents=stake - meter_part - reserve_part,
            meter_after_cents=meter_units // U,
            meter_version=n,
        )
        _check_after(
            n, seed_cents, stake, (meter_bp, reserve_bp), totals, split, meter_units,
            reserve_units,
        )  # fmt: skip


# --- requirement 8 ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_interleaved_contributions_lose_no_update():
    """Both transactions read the meter, wait for each other (a barrier), then both add a stake:
    a write computed from the value read would lose one of them; the pool row's UPDATE does not."""
    floor = make_floor(2, meter_share_bp=1250, reserve_share_bp=625, seed_cents=100_000)
    pool = Pool.objects.get(pk=floor.pool_id)
    barrier = threading.Barrier(2, timeout=30)

    def contribute(_: int) -> int:
        try:
            with transaction.atomic():
                read = Pool.objects.get(pk=pool.pk).meter_units  # what a read-modify-write uses
                barrier.wait()
                split = meter.add_stakes(
                    pool_id=pool.pk, stakes=3, stake_cents=pool.stake_cents, now=timezone.now()
                )
                assert split is not None
                return read
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as executor:
        reads = list(executor.map(contribute, range(2)))
    assert reads == [pool.meter_units, pool.meter_units]  # both read the same meter
    pool_after = Pool.objects.get(pk=pool.pk)
    assert pool_after.meter_units == pool.meter_units + 2 * 3 * 500 * 1250
    assert pool_after.reserve_units == pool.reserve_units + 2 * 3 * 500 * 625
    assert pool_after.meter_version == pool.meter_version + 2
