"""Corrections racing many rounds' stakes on the same pool, on real PostgreSQL connections (one per
thread): the meter ends exactly at its seed plus every stake's share plus every correction, to
the unit, and the journal balances (jackpot.pools.corrections, jackpot.money.meter.correct: one
relative UPDATE under the pool row, never a value read earlier written back)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import connection

from jackpot.models import UNITS_PER_CENT, AuditEvent, Pool
from jackpot.pools import corrections
from tests.conftest import MANY_CONNECTIONS, assert_journal_ok, make_floor, uth_seat
from tests.staff import person

TABLES = 6
ROUNDS = 4
CORRECTIONS = (2_500, -700, 1_000, -300)


def _play(terminal, table: int) -> list[int]:
    statuses: list[int] = []
    try:
        for n in range(ROUNDS):
            round_id = f"t{table}-r{n}"
            seats = [uth_seat(seat) for seat in range(1, 4)]
            opened = terminal.post_as_terminal("/rounds", {"round_id": round_id, "seats": seats})
            statuses.append(opened.status_code)
            voided = terminal.post_as_terminal(f"/rounds/{round_id}/void", {"reason": "misdeal"})
            statuses.append(voided.status_code)
    finally:
        connection.close()
    return statuses


def _approve(pool_id: int, change_id: int, manager_id: int) -> None:
    try:
        user = User.objects.get(pk=manager_id)
        corrections.correction_approve(pool_id=pool_id, change_id=change_id, user=user)
    finally:
        connection.close()


@MANY_CONNECTIONS
@pytest.mark.django_db(transaction=True)
def test_corrections_racing_stakes_end_at_the_exact_meter():
    floor = make_floor(TABLES)
    sue, max_user = person("sue", "supervisor"), person("max", "manager")
    pool = Pool.objects.get(pk=floor.pool_id)
    start_units, stake, share = pool.meter_units, pool.stake_cents, pool.meter_share_bp
    proposed = [
        corrections.correction_propose(
            pool_id=floor.pool_id,
            target="meter",
            award_id=None,
            amount_cents=amount,
            reason="meter board fault",
            reference=f"ANJ-{n}",
            evidence=f"ticket {n}",
            user=sue,
        )
        for n, amount in enumerate(CORRECTIONS)
    ]

    with ThreadPoolExecutor(max_workers=TABLES + len(proposed)) as executor:
        plays = [executor.submit(_play, terminal, n) for n, terminal in enumerate(floor.uth)]
        approvals = [
            executor.submit(_approve, floor.pool_id, change.pk, max_user.pk) for change in proposed
        ]
        for approval in approvals:
            approval.result(timeout=300)
        statuses = [status for play in plays for status in play.result(timeout=300)]

    assert set(statuses) == {200, 201}, statuses
    stakes = TABLES * ROUNDS * 3
    expected = start_units + stakes * stake * share + sum(CORRECTIONS) * UNITS_PER_CENT
    assert Pool.objects.get(pk=floor.pool_id).meter_units == expected
    events = AuditEvent.objects.filter(kind="pool.corrected").order_by("sequence")
    assert sorted(e.payload["amount_cents"] for e in events) == sorted(CORRECTIONS)
    assert_journal_ok()
