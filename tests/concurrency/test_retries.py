"""A terminal that retries while its first request is still running: same answer, counted once.

Real concurrent PostgreSQL connections (one per thread) post the very same request at once.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from jackpot.models import AuditEvent, Pool, Transfer
from tables.models import IdempotencyRecord, Round
from tests.conftest import MANY_CONNECTIONS, assert_journal_ok, make_floor, uth_play, uth_seat

COPIES = 8
OPEN = {"round_id": "r-1", "seats": [uth_seat(n) for n in range(1, 8)]}
RESULT = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")]
    + [uth_play(n, f"{r}s {r}d", "fold") for n, r in zip(range(2, 8), "45678T", strict=True)],
}


def _all_at_once(post) -> list:
    """`post()` from COPIES threads at once. A copy waits for the round's row while the first one
    settles; on a busy machine that wait can pass the server's lock timeout, and the copy is
    sent again as a terminal does (`post_as_terminal`)."""
    start = threading.Barrier(COPIES, timeout=30)

    def once(_: int):
        try:
            start.wait()
            response = post()
            return response.status_code, response.json()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=COPIES) as executor:
        return list(executor.map(once, range(COPIES)))


@MANY_CONNECTIONS
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("with_key", [False, True])
def test_the_same_round_posted_many_times_at_once_counts_once(with_key):
    floor = make_floor(1)
    terminal = floor.uth[0]
    headers = {"HTTP_IDEMPOTENCY_KEY": "open-r-1"} if with_key else {}

    opened = _all_at_once(lambda: terminal.post_as_terminal("/rounds", OPEN, headers=headers))
    assert {status for status, _ in opened} == {201}
    assert all(body == opened[0][1] for _, body in opened)

    headers = {"HTTP_IDEMPOTENCY_KEY": "result-r-1"} if with_key else {}
    settled = _all_at_once(
        lambda: terminal.post_as_terminal("/rounds/r-1/result", RESULT, headers=headers)
    )
    assert {status for status, _ in settled} == {200}
    assert all(body == settled[0][1] for _, body in settled)

    assert Round.objects.count() == 1
    pool = Pool.objects.get(pk=floor.pool_id)
    assert pool.hit_count == 1
    # Seven stakes once: the meter won was the seed plus 7 x 100 cents, and it reset once.
    assert settled[0][1]["awards"][0] == {
        **settled[0][1]["awards"][0],
        "kind": "royal_flush",
        "amount_cents": 1_000_700,
    }
    assert Transfer.objects.filter(code="contribution_meter").count() == 1
    assert AuditEvent.objects.filter(kind__startswith="round.").count() == 2
    assert IdempotencyRecord.objects.count() == (2 if with_key else 0)
    assert assert_journal_ok()["balances"][str(floor.pool_id)]["stakes"] == -3500
