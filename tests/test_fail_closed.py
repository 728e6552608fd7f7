"""Failing closed (compliance requirement 28): with PostgreSQL unreachable or stuck, terminals and
signs get 503 `progressive_closed` within 2 s, nothing is half-written, and a Redis that does not
answer costs one timeout, not one per request (core.circuit).

PostgreSQL and Redis themselves are never stopped here: the test's own connection is pointed at a
black hole (a local socket that takes connections and never answers), or a row lock is held.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import Client, override_settings

from config.settings import databases as production
from core import circuit
from jackpot.models import Pool, Transfer
from tables.models import Round
from tests.conftest import uth_seat

PATIENCE_S = 2.0  # a terminal's, and the requirement's


@contextlib.contextmanager
def database_at(port: int):
    """This thread's database connection, made anew to 127.0.0.1:`port` with production's
    deadlines on connecting (the suite's are longer: config.settings.test), then put back."""
    saved = {key: connection.settings_dict[key] for key in ("HOST", "PORT")}
    options = connection.settings_dict["OPTIONS"]
    saved_timeout = options["connect_timeout"]
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(port))
    options["connect_timeout"] = production.DATABASE_CONNECT_TIMEOUT
    try:
        with override_settings(
            DATABASE_CONNECT_DEADLINE_MS=production.DATABASE_CONNECT_DEADLINE_MS
        ):
            yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)
        options["connect_timeout"] = saved_timeout


def _closed(response, started: float, why: str = "its database cannot be reached") -> float:
    elapsed = time.monotonic() - started
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "progressive_closed"
    assert why in response.json()["error"]["message"]
    assert response.json()["error"]["type"] == "api_error"
    assert int(response["Retry-After"]) >= 1
    assert "Traceback" not in response.content.decode()
    return elapsed


@pytest.mark.parametrize("kind", ["accepts", "full"])
def test_a_terminals_open_against_an_unreachable_database_is_closed_within_2s(
    transactional_db, floor, black_hole, kind
):
    if kind == "full":
        black_hole.full()
    terminal = floor.uth[0]
    with database_at(black_hole.port):
        started = time.monotonic()
        response = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
        elapsed = _closed(response, started)
    assert elapsed < PATIENCE_S, f"{elapsed:.2f} s"
    assert not Round.objects.exists()


def test_a_write_a_standby_refuses_is_the_closed_progressive(transactional_db, floor):
    # In the second before HAProxy's check sees a switchover, a connection may reach the node
    # that just became the standby: its refusal ("read-only transaction") is the outage, a 503.
    with connection.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = on")  # as a hot standby is
    try:
        started = time.monotonic()
        response = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
        _closed(response, started)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")
    assert not Round.objects.exists()


def test_the_meter_against_an_unreachable_database_is_closed_not_cached(
    transactional_db, client, floor, black_hole
):
    url = f"/api/v1/pools/{floor.pool_id}/meter"
    assert client.get(url).status_code == 200  # the figure is now in Redis
    with database_at(black_hole.port):
        started = time.monotonic()
        elapsed = _closed(client.get(url), started)
    assert elapsed < PATIENCE_S, f"{elapsed:.2f} s"


def test_the_sign_page_too_is_a_503_not_a_500(transactional_db, floor, black_hole):
    browser = Client(raise_request_exception=False)
    with database_at(black_hole.port):
        response = browser.get(f"/display/{floor.pool_id}/")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "progressive_closed"


def test_the_server_bounds_statements_and_lock_waits(db):
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        (statement,) = cursor.fetchone()
        cursor.execute("SHOW lock_timeout")
        (lock,) = cursor.fetchone()
    assert statement == "1500ms" and lock == "1s"


def test_a_round_stuck_on_a_lock_is_refused_whole_and_can_be_retried(transactional_db, floor):
    pool_before = Pool.objects.get(pk=floor.pool_id)
    transfers_before = Transfer.objects.count()
    locked, release = threading.Event(), threading.Event()

    def hold_the_pool_row() -> None:
        try:
            with transaction.atomic():
                Pool.objects.select_for_update().get(pk=floor.pool_id)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_pool_row)
    holder.start()
    try:
        assert locked.wait(5)
        terminal = floor.uth[0]
        started = time.monotonic()
        response = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
        # The server was reached and said its lock deadline passed: not an outage.
        elapsed = _closed(response, started, why="its database did not answer in time")
        assert elapsed < PATIENCE_S, f"{elapsed:.2f} s"
    finally:
        release.set()
        holder.join()

    # Nothing of the round was written: no round, no transfer, the meter as it was.
    assert not Round.objects.exists()
    assert Transfer.objects.count() == transfers_before
    pool = Pool.objects.get(pk=floor.pool_id)
    assert (pool.meter_units, pool.meter_version) == (
        pool_before.meter_units,
        pool_before.meter_version,
    )
    # And the terminal's retry of the same round goes through.
    retried = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert retried.status_code == 201, retried.content


@pytest.mark.parametrize("kind", ["accepts", "full"])
def test_a_black_holed_redis_costs_one_timeout_not_one_per_request(
    db, client, floor, black_hole, kind
):
    if kind == "full":
        black_hole.full()
    url = f"/api/v1/pools/{floor.pool_id}/meter"
    reads = 20
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{black_hole.port}/0"):
        started = time.monotonic()
        answers = [client.get(url) for _ in range(reads)]
        elapsed = time.monotonic() - started
    assert [answer.status_code for answer in answers] == [200] * reads
    assert {answer.json()["amount_cents"] for answer in answers} == {1_000_000}  # PostgreSQL's
    # One failed call opens the circuit; waiting on Redis at each read would take 20 x 0.25 s.
    assert elapsed < reads * circuit.TIMEOUT / 4, f"{elapsed:.2f} s"
    assert circuit.redis_circuit.open


def test_the_circuit_tries_redis_again_after_its_period(settings):
    settings.REDIS_BREAKER_SECONDS = 0.2
    assert circuit.redis_client() is not None
    circuit.redis_circuit.failed(OSError("test"))
    assert circuit.redis_client() is None
    time.sleep(0.25)
    assert circuit.redis_client() is not None
