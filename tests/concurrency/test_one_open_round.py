"""One open round per table holds against opens racing on real PostgreSQL connections.

The open share-locks its table's row, so a count of open rounds under that lock would let two
racing opens both see none. The partial unique index on the table's open round does not: the
second open's INSERT waits on the first one's uncommitted row, then fails once it commits.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from jackpot.models import AuditEvent, Pool
from tables.models import Round
from tests.conftest import MANY_CONNECTIONS, Terminal, assert_journal_ok, make_floor, uth_seat

pytestmark = pytest.mark.django_db(transaction=True)


def _post_open(terminal: Terminal, round_id: str) -> tuple[int, dict]:
    try:
        opening = {"round_id": round_id, "seats": [uth_seat(1)]}
        response = terminal.post_as_terminal("/rounds", opening)
        return response.status_code, response.json()
    finally:
        connection.close()


def _waiting_on_a_lock(count: int, timeout: float = 10.0) -> None:
    """Wait until `count` other sessions of this database wait on a lock. (Asked on the holder's
    connection, in its transaction: the statistics' snapshot is cleared before each look.)"""
    deadline = time.monotonic() + timeout
    with connections["default"].cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0] >= count:
                return
            time.sleep(0.02)
            cursor.execute(
                "SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity"
                " WHERE datname = current_database()"
            )
            seen = cursor.fetchall()
    raise AssertionError(f"{count} sessions never waited on a lock: {seen}")


def test_the_second_of_two_racing_opens_waits_for_the_first_and_is_refused():
    floor = make_floor(1)
    terminal = floor.uth[0]
    meter = Pool.objects.get(pk=floor.pool_id).meter_units
    with ThreadPoolExecutor(max_workers=2) as executor:
        # A third connection holds the pool row: the first open stops there, its round row
        # written and not committed (jackpot.money.locks: the round row before the pool row).
        with connections["default"].cursor() as holder:
            holder.execute("BEGIN")
            try:
                holder.execute(
                    "SELECT 1 FROM jackpot_pool WHERE id = %s FOR UPDATE", [floor.pool_id]
                )
                first = executor.submit(_post_open, terminal, "r-1")
                _waiting_on_a_lock(1)
                second = executor.submit(_post_open, terminal, "r-2")
                _waiting_on_a_lock(2)  # the second waits on the first's row in the unique index
            finally:
                holder.execute("COMMIT")
        opened, refused = first.result(timeout=30), second.result(timeout=30)

    assert opened[0] == 201
    assert refused[0] == 409
    assert refused[1]["error"]["code"] == "round_in_progress"
    assert "'r-1'" in refused[1]["error"]["message"]
    assert list(Round.objects.values_list("round_id", "state")) == [("r-1", "open")]
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
    assert Pool.objects.get(pk=floor.pool_id).meter_units == meter + 500 * 2000  # one stake
    assert_journal_ok()


@MANY_CONNECTIONS
def test_many_opens_at_once_at_one_table_open_one_round():
    floor = make_floor(1)
    terminal = floor.uth[0]
    copies = 8
    start = threading.Barrier(copies, timeout=30)

    def race(number: int) -> tuple[int, dict]:
        start.wait()
        return _post_open(terminal, f"r-{number}")

    with ThreadPoolExecutor(max_workers=copies) as executor:
        answers = list(executor.map(race, range(copies)))

    statuses = sorted(status for status, _ in answers)
    assert statuses == [201] + [409] * (copies - 1)
    assert {body["error"]["code"] for status, body in answers if status == 409} == {
        "round_in_progress"
    }
    assert Round.objects.filter(state="open").count() == 1
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
    assert assert_journal_ok()["balances"][str(floor.pool_id)]["stakes"] == -500
