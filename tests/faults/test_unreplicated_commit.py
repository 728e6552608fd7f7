"""A commit the synchronous standby never confirmed is never acknowledged (config.database).

A private PostgreSQL whose synchronous standby is named but absent (`synchronous_standby_names`),
as a former primary is once its standby has been promoted without it (a split brain): a COMMIT
waits for the standby without end (the statement's limit does not bound a commit's wait). When
the wait is cancelled (`pg_cancel_backend`, as an operator or a script clearing stuck sessions
would), PostgreSQL has committed locally and answers the COMMIT with success and a warning.
psycopg alone acknowledges that commit; the service's backend raises an OperationalError (a 503
`progressive_closed` to a terminal) and closes the connection.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import dj_database_url
import psycopg
import pytest
from django.db import connections
from django.db.utils import OperationalError, load_backend

from config.database.base import DatabaseWrapper
from tests.faults.harness import PrivateCluster

pytestmark = pytest.mark.faults


@pytest.fixture
def standby_gone() -> Iterator[PrivateCluster]:
    # The standby's absence is remembered process-wide for STANDBY_PROBE_S (config.database):
    # each test starts as a process that has not met it yet, whatever ran just before.
    DatabaseWrapper._standby_missing_until = 0.0
    cluster = PrivateCluster()
    try:
        cluster.start()
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
            admin.execute("CREATE TABLE moved (cents integer)")
            # the service's commit probe (jackpot.models.CommitProbe), as its migration makes it
            admin.execute(
                "CREATE TABLE jackpot_commitprobe (backend integer PRIMARY KEY, beats bigint)"
            )
            admin.execute("ALTER SYSTEM SET synchronous_standby_names = 'promoted_elsewhere'")
            admin.execute("SELECT pg_reload_conf()")
        yield cluster
    finally:
        cluster.destroy()
        DatabaseWrapper._standby_missing_until = 0.0


def _cancelled_while_waiting(cluster: PrivateCluster, commit: Callable[[], None]) -> None:
    """Run `commit` while an operator's session cancels it once it waits for the standby;
    re-raise what `commit` raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            commit()
        except BaseException as error:
            raised.append(error)

    committing = threading.Thread(target=run)
    committing.start()
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as operator:
        deadline = time.monotonic() + 30
        while True:
            waiting = operator.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'"
            ).fetchall()
            if waiting:
                break
            assert time.monotonic() < deadline, "the commit never waited for the standby"
            time.sleep(0.01)
        operator.execute("SELECT pg_cancel_backend(%s)", [waiting[0][0]])
    committing.join(30)
    assert not committing.is_alive()
    if raised:
        raise raised[0]


def _wrapper(cluster: PrivateCluster) -> Any:
    """The service's database backend (config.database) on `cluster`, outside Django's list."""
    settings = dj_database_url.parse(cluster.url("postgres"))
    settings["ENGINE"] = "config.database"
    settings = connections.configure_settings({"default": settings})["default"]
    wrapper = load_backend("config.database").DatabaseWrapper(settings, "default")
    wrapper.inc_thread_sharing()  # a commit may run in a thread that gets cancelled
    return wrapper


def _stored(cluster: PrivateCluster) -> list[int]:
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
        return [row[0] for row in admin.execute("SELECT cents FROM moved ORDER BY cents")]


def test_a_commit_whose_wait_for_the_standby_was_cancelled_is_refused(
    standby_gone: PrivateCluster, django_db_blocker
):
    # The hazard: plain psycopg is told its commit succeeded, with only a warning.
    warnings: list[str] = []
    with psycopg.connect(standby_gone.url("postgres")) as plain:
        plain.add_notice_handler(lambda notice: warnings.append(notice.message_primary or ""))
        plain.execute("INSERT INTO moved VALUES (1)")
        _cancelled_while_waiting(standby_gone, plain.commit)
    assert any(w.startswith("canceling wait for synchronous replication") for w in warnings)
    assert _stored(standby_gone) == [1]  # on this server only

    # The service's backend, as Django's outermost atomic block commits.
    wrapper = _wrapper(standby_gone)
    with django_db_blocker.unblock():
        try:
            wrapper.set_autocommit(False)
            with wrapper.cursor() as cursor:
                cursor.execute("INSERT INTO moved VALUES (500)")
            with pytest.raises(OperationalError, match="synchronous standby"):
                _cancelled_while_waiting(standby_gone, wrapper.commit)
            assert wrapper.connection.closed  # the next request connects anew
        finally:
            wrapper.close()
    # PostgreSQL kept it locally (a failover's pg_rewind discards it); no one was told it was.
    assert _stored(standby_gone) == [1, 500]


def test_a_commit_waiting_past_its_limit_is_cancelled_and_refused(
    standby_gone: PrivateCluster, django_db_blocker, settings
):
    # Right after a failover the new primary holds every commit until its standby is back: the
    # service gives up after DATABASE_COMMIT_TIMEOUT_MS and answers (503), the row kept locally.
    settings.DATABASE_COMMIT_TIMEOUT_MS = 300
    wrapper = _wrapper(standby_gone)
    with django_db_blocker.unblock():
        try:
            wrapper.set_autocommit(False)
            with wrapper.cursor() as cursor:
                cursor.execute("INSERT INTO moved VALUES (7)")
            started = time.monotonic()
            with pytest.raises(OperationalError, match="synchronous standby"):
                wrapper.commit()
            waited = time.monotonic() - started
        finally:
            wrapper.close()
    assert 0.3 <= waited < 1.5, waited
    assert _stored(standby_gone) == [7]
    # For a while after, a transaction first commits a lockless probe under the same limit, and
    # is refused before it takes any row lock while the standby is still missing.
    wrapper = _wrapper(standby_gone)
    with django_db_blocker.unblock():
        try:
            # Connected first: the bound is the probe's (its commit limit and the refusal), not a
            # new backend's start, which took 2 s once on a machine running six test processes.
            wrapper.ensure_connection()
            started = time.monotonic()
            with pytest.raises(OperationalError, match="no synchronous standby"):
                wrapper.set_autocommit(False)
            assert time.monotonic() - started < 1.5
        finally:
            wrapper.close()
    # A commit that does not wait is not touched by the timer: the next one, the standby's
    # requirement lifted, commits and answers.
    with psycopg.connect(standby_gone.url("postgres"), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
        admin.execute("SELECT pg_reload_conf()")
    time.sleep(0.2)
    wrapper = _wrapper(standby_gone)
    with django_db_blocker.unblock():
        try:
            wrapper.set_autocommit(False)
            with wrapper.cursor() as cursor:
                cursor.execute("INSERT INTO moved VALUES (8)")
            wrapper.commit()
            time.sleep(0.4)  # past the timer's limit: it must not cancel what runs next
            with wrapper.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(0.1), count(*) FROM moved")
                assert cursor.fetchone()[1] == 2
        finally:
            wrapper.close()
