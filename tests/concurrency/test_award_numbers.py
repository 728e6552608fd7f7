"""A round's awards, its event and their notifications are written before the pool row is taken,
unless a seat won the jackpot: the statement that takes the row takes the award numbers and
writes the awards (`jackpot.money.movements.grant_awards_last`). On real PostgreSQL connections:
the row is held for that statement and the COMMIT alone, a number another round took in
between is never taken twice, and every award still has a number of its own, in commit order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core import metrics
from jackpot.models import Award, AwardKind, OutboxMessage
from jackpot.money import meter
from tests.concurrency.test_lock_order import _in_order, _lock_of
from tests.conftest import Terminal, assert_journal_ok, make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db(transaction=True)

# Four nines for seat 1: a fixed award, no jackpot.
QUADS = {
    "board": ["9h", "9c", "2d", "5s", "Kd"],
    "dealer": ["3c", "4c"],
    "seats": [uth_play(1, "9s 9d")],
}


def _settle(terminal: Terminal, round_id: str) -> tuple[int, dict]:
    try:
        opening = {"round_id": round_id, "seats": [uth_seat(1)]}
        opened = terminal.post_as_terminal("/rounds", opening)
        assert opened.status_code == 201, opened.json()
        settled = terminal.post_as_terminal(f"/rounds/{round_id}/result", QUADS)
        return settled.status_code, settled.json()
    finally:
        connection.close()


def _retaken(pool_id: int) -> float:
    name = "jackpot_pool_row_retaken_total"
    return metrics.REGISTRY.get_sample_value(name, {"pool": str(pool_id)}) or 0.0


def test_a_settle_that_grants_awards_takes_the_pool_row_last(settings):
    settings.NOTIFY_AWARD_CENTS = 1  # every award a big win: its message is written too
    floor = make_floor(1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    with CaptureQueriesContext(connection) as queries:
        settled = terminal.post("/rounds/r-1/result", QUADS)
    assert settled.status_code == 200, settled.json()
    statements = [query["sql"] for query in queries.captured_queries]
    takes_the_row = [at for at, sql in enumerate(statements) if _lock_of(sql) is not None]
    pool = [at for at in takes_the_row if "jackpot_pool" in statements[at]]
    assert len(pool) == 1, statements
    at = pool[0]
    # The numbers and the awards in one statement, then the COMMIT: the event, its transfers,
    # the round's answer and the outbox's message were all written before it.
    assert "INSERT INTO jackpot_award" in statements[at], statements[at]
    assert statements[at + 1] == "COMMIT", statements[at:]
    assert any("INSERT INTO jackpot_outboxmessage" in sql for sql in statements[:at])
    assert _in_order([_lock_of(statements[i]) for i in takes_the_row])  # type: ignore[misc]
    (award,) = settled.json()["awards"]
    assert award["kind"] == "four_of_a_kind"
    stored = Award.objects.get()
    assert (stored.pk, stored.number) == (award["id"], 1)
    assert OutboxMessage.objects.filter(key=f"award:{stored.pk}").exists()
    assert_journal_ok()


def test_numbers_another_round_took_in_between_are_not_taken_twice(monkeypatch, settings):
    """Table 2's award commits after table 1 read the pool's last number and before it takes
    the row: table 1's guess is stale, its event and message are rolled back, and its award is
    granted with the row held first, with the next number."""
    settings.NOTIFY_AWARD_CENTS = 1
    floor = make_floor(2)
    first, second = floor.uth
    assert first.post("/rounds", {"round_id": "a-1", "seats": [uth_seat(1)]}).status_code == 201
    real = meter.last_award_number
    reads: list[int] = []

    def last_award_number(*, pool_id: int) -> int:
        reads.append(pool_id)
        guessed = real(pool_id=pool_id)
        if len(reads) == 1:
            with ThreadPoolExecutor(max_workers=1) as executor:
                status, body = executor.submit(_settle, second, "b-1").result(timeout=60)
            assert status == 200, body
        return guessed

    monkeypatch.setattr(meter, "last_award_number", last_award_number)
    retaken = _retaken(floor.pool_id)

    settled = first.post("/rounds/a-1/result", QUADS)

    assert settled.status_code == 200, settled.json()
    assert _retaken(floor.pool_id) == retaken + 1
    numbers = dict(Award.objects.values_list("round__round_id", "number"))
    assert numbers == {"b-1": 1, "a-1": 2}
    assert settled.json()["awards"][0]["id"] == Award.objects.get(round__round_id="a-1").pk
    assert OutboxMessage.objects.filter(key__startswith="award:").count() == 2  # one each
    assert_journal_ok()


def test_many_tables_granting_awards_at_once_number_them_once_each():
    floor = make_floor(8)

    def four_rounds(terminal: Terminal) -> list[tuple[int, dict]]:
        return [_settle(terminal, f"r-{n}") for n in range(4)]

    with ThreadPoolExecutor(max_workers=8) as executor:
        done = [played for rounds in executor.map(four_rounds, floor.uth) for played in rounds]
    assert all(status == 200 for status, _ in done), done
    awards = list(Award.objects.filter(kind=AwardKind.FOUR_OF_A_KIND).order_by("number"))
    assert [award.number for award in awards] == list(range(1, 33))
    answered = sorted(body["awards"][0]["id"] for _, body in done)
    assert sorted(award.pk for award in awards) == answered
    assert_journal_ok()
