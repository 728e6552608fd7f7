"""Shared fixtures. The suite runs on the real PostgreSQL and Redis named by DATABASE_URL and
REDIS_URL (make test sets them); pytest-django creates and drops the test database."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import config.celery  # noqa: F401  (the Celery app tasks are sent with, as every entry point)
from core import throttling

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.workers"]  # the `celery_worker` fixture: a real worker in a subprocess


# Under pytest-xdist (`make test` runs `--dist loadgroup`), tests are dealt one by one to the
# processes, except a module whose fixtures are module-scoped, kept whole on one process (dealt one
# test at a time, every process that got one of its tests would build the fixture again):
# - each module of the drills (tests/cluster, tests/faults): a topology, a PostgreSQL pair, a
#   private cluster, on free ports and directories of its own, so two drills' modules may run at
#   once on two processes;
# - each module of tests/browser (its browser);
# - the other modules with a costly module-scoped fixture say so themselves
#   (`pytestmark = pytest.mark.xdist_group(<the module>)`).
WHOLE_MODULES = tuple(ROOT / "tests" / name for name in ("cluster", "faults", "browser"))
#: The tests that open many connections to the suite's PostgreSQL at once (50, 32, 8, 8: one per
#: thread) run one after another on one process: PostgreSQL's default max_connections is 100, which
#: the four processes' own connections, the servers and workers the suite starts on the test
#: database, and two of these at once went past (a CI run: "sorry, too many clients already").
MANY_CONNECTIONS = pytest.mark.xdist_group("many-database-connections")


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups to deal the tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(directory in item.path.parents for directory in WHOLE_MODULES):
            item.add_marker(pytest.mark.xdist_group(str(item.path.relative_to(ROOT))))


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter at the repo root with extra environment variables."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def python_subprocess():
    return run_python


@pytest.fixture
def throttle_clock(monkeypatch):
    """The throttles' clock (`core.throttling`: fixed windows) stopped one second into a window of
    an hour or less, so that the requests a test counts all fall in one window: a window that ended
    between a test's third failed login and its fourth login once let the fourth through."""
    stopped = float(int(time.time()) // 3600 * 3600 + 1)
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: stopped))


@pytest.fixture(autouse=True, scope="session")
def _flush_without_the_requests_statement_limit():
    """The flush after each transactional test (pytest-django's TRUNCATE of every table) runs
    without the statement limit the service's connections carry (DATABASE_STATEMENT_TIMEOUT_MS,
    1.5 s): it is the suite's housekeeping, not a request, and on a busy machine it once took
    longer (a CI run failed at a browser test's teardown). Waits for locks keep their limit."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    flush = DatabaseOperations.execute_sql_flush

    def unbounded(self: DatabaseOperations, sql_list: list[str]) -> None:
        flush(self, ["SET LOCAL statement_timeout = 0", *sql_list])

    DatabaseOperations.execute_sql_flush = unbounded  # type: ignore[method-assign]
    yield
    DatabaseOperations.execute_sql_flush = flush  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _display_identity_read_anew():
    """Each test's publisher of the sign's figures reads the database's identity anew
    (jackpot.sign.display caches it per connection): a test that changed the identity inside its
    transaction rolls back, and the connection, kept for the next test, would still hold it.
    In production the identity changes only with a restore or a database made anew, which close
    the connections."""
    from django.db import connection

    with contextlib.suppress(AttributeError):
        del connection._display_identity
    yield


@pytest.fixture(autouse=True)
def _redis_circuit_closed():
    """Each test starts and ends with Redis asked again: a test that made it fail must not make
    the next one skip it (core.circuit)."""
    from core.circuit import redis_circuit

    redis_circuit.close()
    yield
    redis_circuit.close()


@pytest.fixture
def black_hole():
    """An address that takes TCP connections and never answers: a listening socket that is
    never accepted from. `black_hole.full()` fills its queue, so that later connections are not
    even accepted (their SYN goes unanswered)."""
    import socket

    class BlackHole:
        def __init__(self) -> None:
            self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.socket.bind(("127.0.0.1", 0))
            self.socket.listen(0)
            self.port = self.socket.getsockname()[1]
            self.fillers: list[socket.socket] = []

        def full(self) -> BlackHole:
            for _ in range(2):  # a backlog of 0 still queues one; the next SYN is dropped
                filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                filler.settimeout(0.2)
                with contextlib.suppress(OSError):
                    filler.connect(("127.0.0.1", self.port))
                self.fillers.append(filler)
            return self

        def close(self) -> None:
            for each in [*self.fillers, self.socket]:
                each.close()

    hole = BlackHole()
    yield hole
    hole.close()


# --- the floor: pools, tables and terminals made through the services -----------------------

from dataclasses import dataclass  # noqa: E402

from django.test import Client  # noqa: E402


@dataclass
class Terminal:
    table_id: int
    token: str

    def client(self) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {self.token}")

    def post(self, path: str, body: object, **headers: str):
        return self.client().post(
            f"/api/v1/tables/{self.table_id}{path}",
            body,
            content_type="application/json",
            **headers,
        )

    def post_as_terminal(
        self,
        path: str,
        body: object,
        *,
        statuses: list[int] | None = None,
        patience_s: float = 120.0,
        headers: dict[str, str] | None = None,
    ):
        """`post`, resent as docs/api.md 2.11 tells a terminal: a 503 `progressive_closed` recorded
        nothing, so the same request goes again after a pause of 0.1 s, doubling up to 2 s, with
        a random part. Tests that race many request threads of one process need it: a thread
        holding a row waits for the GIL, more so on a busy machine, and the requests waiting on
        that row can outlive the lock or statement timeout. `statuses` collects every answer's
        status; after `patience_s` the last answer is returned, whatever it is."""
        pause, deadline = 0.1, time.monotonic() + patience_s
        while True:
            answer = self.post(path, body, **(headers or {}))
            if statuses is not None:
                statuses.append(answer.status_code)
            if answer.status_code != 503 or time.monotonic() > deadline:
                return answer
            # The service's own refusal, never another 503 (a proxy's, a crash's).
            assert answer.json()["error"]["code"] == "progressive_closed", answer.content
            time.sleep(pause * random.uniform(0.5, 1.0))
            pause = min(2 * pause, 2.0)


@dataclass
class Floor:
    pool_id: int
    uth: list[Terminal]
    stud: Terminal


_pool_numbers = itertools.count(1)


def make_floor(uth_tables: int = 2, **pool_options: int) -> Floor:
    from jackpot.pools.creation import pool_create
    from tables.models import Game
    from tables.services import operator_terminal_issue, table_create

    pool = pool_create(name=f"Pool {next(_pool_numbers)}", actor="test", **pool_options)
    terminals = []
    for number in range(1, uth_tables + 1):
        table = table_create(name=f"UTH {pool.pk}-{number}", game=Game.UTH, pool=pool, actor="test")
        token = operator_terminal_issue(
            table=table, name="t", revoke_others=False, actor="test"
        ).token
        terminals.append(Terminal(table.pk, token))
    stud = table_create(name=f"Stud {pool.pk}", game=Game.STUD, pool=None, actor="test")
    stud_token = operator_terminal_issue(
        table=stud, name="t", revoke_others=False, actor="test"
    ).token
    return Floor(pool.pk, terminals, Terminal(stud.pk, stud_token))


@pytest.fixture
def floor(db) -> Floor:
    return make_floor()


def uth_seat(seat: int, *, ante: int = 500, trips: int = 0, progressive: int = 500) -> dict:
    bets = {"ante_cents": ante, "blind_cents": ante, "progressive_cents": progressive}
    if trips:
        bets["trips_cents"] = trips
    return {"seat": seat, "bets": bets}


def uth_play(
    seat: int, cards: str, action: str = "play", street: str = "preflop", multiple: int = 4
) -> dict:
    decision = (
        {"action": "fold"}
        if action == "fold"
        else {"action": "play", "street": street, "multiple": multiple}
    )
    return {"seat": seat, "cards": cards.split(), "decision": decision}


def assert_journal_ok() -> dict:
    from tables.audit.verification import verify_full

    report = verify_full()
    assert report.ok, report.problems
    return report.as_body().model_dump(mode="json")


@pytest.fixture
def live_service(transactional_db):
    """The service on a real port for this test only; `live_service.stop()` takes it down."""
    from tests.live import LiveServer

    server = LiveServer()
    yield server
    server.stop()
