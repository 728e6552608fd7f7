"""A statement's deadline (config.database.deadlines), on real connections: the one past its
deadline is cancelled, one that ended in time never is (nor what its connection runs next), and
a forked process, which inherits no thread, keeps deadlines too."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

import dj_database_url
import psycopg
import pytest

from config.database import deadlines


def _url() -> str:
    url = dj_database_url.parse(os.environ["DATABASE_URL"])
    return f"postgres://{url['USER']}@{url['HOST']}:{url['PORT']}/postgres"


def _sleep(connection: psycopg.Connection, seconds: float) -> None:
    connection.execute("SELECT pg_sleep(%s)", [seconds])


def test_a_statement_past_its_deadline_is_cancelled_and_the_next_one_is_not():
    with psycopg.connect(_url(), autocommit=True) as connection:
        with (
            pytest.raises(psycopg.errors.QueryCanceled),
            deadlines.cancelled_after(connection, 200),
        ):
            _sleep(connection, 60)
        # The deadline is spent: the connection's next statement runs to its end.
        _sleep(connection, 0.4)
        assert connection.execute("SELECT 1").fetchone() == (1,)


def test_a_deadline_withdrawn_in_time_never_cancels_what_follows():
    with psycopg.connect(_url(), autocommit=True) as connection:
        with deadlines.cancelled_after(connection, 300):
            _sleep(connection, 0)
        # Past the withdrawn deadline, with a statement running: nothing cancels it.
        _sleep(connection, 0.8)


def test_each_connection_is_cancelled_at_its_own_deadline_only():
    outcomes: dict[str, str] = {}

    def run(name: str, limit_ms: int, seconds: float) -> None:
        with psycopg.connect(_url(), autocommit=True) as connection:
            try:
                with deadlines.cancelled_after(connection, limit_ms):
                    _sleep(connection, seconds)
                outcomes[name] = "done"
            except psycopg.errors.QueryCanceled:
                outcomes[name] = "cancelled"

    threads = [
        threading.Thread(target=run, args=("short", 200, 60)),
        threading.Thread(target=run, args=("long", 60_000, 0.8)),
        threading.Thread(target=run, args=("none", 0, 0.8)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert outcomes == {"short": "cancelled", "long": "done", "none": "done"}


class _Unreachable:
    """A connection whose server went away: its cancel, which opens a connection of its own,
    fails (as during a failover)."""

    def cancel(self) -> None:
        raise psycopg.OperationalError("connection refused")


def test_a_cancel_that_fails_leaves_the_other_deadlines_kept():
    with deadlines.cancelled_after(_Unreachable(), 100):  # type: ignore[arg-type]
        time.sleep(0.5)  # due meanwhile: its cancel fails
    with (
        psycopg.connect(_url(), autocommit=True) as connection,
        pytest.raises(psycopg.errors.QueryCanceled),
        deadlines.cancelled_after(connection, 300),
    ):
        _sleep(connection, 60)


def _in_child(url: str, answer) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        try:
            with deadlines.cancelled_after(connection, 200):
                _sleep(connection, 60)
            answer.put("done")
        except psycopg.errors.QueryCanceled:
            answer.put("cancelled")


def test_a_forked_process_keeps_deadlines_of_its_own():
    # The parent's watchdog thread exists (started by a deadline), and the child has none.
    with (
        psycopg.connect(_url(), autocommit=True) as connection,
        deadlines.cancelled_after(connection, 60_000),
    ):
        _sleep(connection, 0)
    fork = multiprocessing.get_context("fork")
    answer = fork.Queue()
    child = fork.Process(target=_in_child, args=(_url(), answer))
    child.start()
    try:
        assert answer.get(timeout=120) == "cancelled"
    finally:
        child.join(timeout=30)
