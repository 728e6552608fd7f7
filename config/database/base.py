"""Django's PostgreSQL backend with a deadline on opening a connection, so a request fails closed
in time (a terminal waits 2 s in all: compliance 28).

Invariants:
- a new connection is opened in a helper thread and waited for `DATABASE_CONNECT_DEADLINE_MS`:
  past it, psycopg's `ConnectionTimeout` (503 `progressive_closed`);
- behind pgbouncer in transaction pooling no session state changes: the limits are `SET LOCAL`
  at the start of every transaction;
- a commit the standby has not acknowledged (its wait cancelled, or past
  `DATABASE_COMMIT_TIMEOUT_MS`) is never reported as committed: `NotReplicated` (503), and the
  connection is closed; after such a cancel, transactions first commit a probe for
  `STANDBY_PROBE_S`.

Why, and what is not covered: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.db.backends.postgresql import base
from django.utils.asyncio import async_unsafe

from config.database.deadlines import cancelled_after
from jackpot.money.rows import COMMIT_PROBE

# The start of PostgreSQL's warning (src/backend/replication/syncrep.c), for a cancelled wait and
# for a session ended during it (servers run with English messages: lc_messages C, initdb's).
UNREPLICATED = "canceling wait for synchronous replication"
# A transaction that failed (or a connection lost mid-command) runs no statement until rollback.
_UNUSABLE = (psycopg.pq.TransactionStatus.INERROR, psycopg.pq.TransactionStatus.UNKNOWN)
# How long after a cancelled wait a transaction first probes for the standby (`_probe_standby`).
STANDBY_PROBE_S = 2.0


class NotReplicated(psycopg.OperationalError):
    """A commit the synchronous standby may not have (the module's docstring)."""


class DatabaseWrapper(base.DatabaseWrapper):
    _unreplicated = False
    # Until when (monotonic) this process believes the primary has no synchronous standby: a
    # commit's wait was cancelled (the module's docstring). Shared by the process's connections.
    _standby_missing_until = 0.0

    def _commit(self) -> None:
        self._unreplicated = False
        with cancelled_after(self.connection, _commit_limit_ms()):
            super()._commit()  # type: ignore[misc]  # Django has it; the stubs do not declare it
        if self._unreplicated:
            self._unreplicated = False
            self._standby_missing()
            self.connection.close()  # Django's rollback then fails and closes the rest
            with self.wrap_database_errors:
                raise NotReplicated(
                    "the commit's wait for the synchronous standby was cancelled: it may be"
                    " on this server only"
                )

    def _standby_missing(self) -> None:
        DatabaseWrapper._standby_missing_until = time.monotonic() + STANDBY_PROBE_S

    def _probe_standby(self) -> None:
        """While the standby was lately missing, a transaction on the primary starts only once a
        commit of its own reaches it: one write of this backend's own row
        (jackpot.money.rows.COMMIT_PROBE: no other transaction waits on it), bounded like any
        commit, before the transaction takes a row lock. Without it, every round queued on the
        pool's row behind commits that each waited their whole limit, and the last was answered past
        a terminal's patience. NotReplicated when the standby is still missing. (The standby's
        own alias, core.replicas, takes no write and is never probed.)"""
        limit_ms = _commit_limit_ms()
        if (
            limit_ms <= 0
            or self.alias != DEFAULT_DB_ALIAS
            or time.monotonic() >= DatabaseWrapper._standby_missing_until
        ):
            return
        self.ensure_connection()
        self._unreplicated = False
        with self.wrap_database_errors, cancelled_after(self.connection, limit_ms):
            self.connection.execute(COMMIT_PROBE)  # autocommit: a commit of its own
        if self._unreplicated:
            self._unreplicated = False
            self._standby_missing()
            with self.wrap_database_errors:
                raise NotReplicated("no synchronous standby: the progressive is closed")
        DatabaseWrapper._standby_missing_until = 0.0  # back

    def is_usable(self) -> bool:
        """Whether a persistent connection may serve the next request (CONN_HEALTH_CHECKS), told
        without a round trip: it is open and nothing waits to be read on it. A server that ended
        the session (a restart, pgbouncer's or PostgreSQL's, a backend killed) has sent its
        error and closed, which leaves the socket readable. Django's own check sends `SELECT 1`,
        which behind pgbouncer waits for a server connection: during a failover it waited
        pgbouncer's whole query_wait_timeout, and the request's first statement then waited it
        again, past a terminal's patience. A server gone without a word is found by the
        request's first statement (tcp_user_timeout), which then answers 503."""
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.info.transaction_status in _UNUSABLE:  # Django's SELECT 1 would fail
            return False
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError, psycopg.Error):
            return False
        return not readable

    def _notice(self, diagnostic: psycopg.errors.Diagnostic) -> None:
        if (diagnostic.message_primary or "").startswith(UNREPLICATED):
            self._unreplicated = True

    @contextmanager
    def _nodb_cursor(self) -> Iterator[Any]:
        """The maintenance connection (creating or dropping a database, as the test runner
        does): not a request, so the requests' statement and lock timeouts do not bound it."""
        with super()._nodb_cursor() as cursor:
            if not _pooled():  # a session SET would stay with pgbouncer's server connection
                cursor.execute("SET statement_timeout = 0")
                cursor.execute("SET lock_timeout = 0")
            yield cursor

    def set_autocommit(
        self, autocommit: bool, force_begin_transaction_with_broken_autocommit: bool = False
    ) -> None:
        """Leaving autocommit opens a transaction (Django's outermost `atomic`): behind a
        transaction pooler, its first statements are this process's limits, local to it."""
        if not autocommit:
            self._probe_standby()
        super().set_autocommit(autocommit, force_begin_transaction_with_broken_autocommit)
        if not autocommit and _pooled():
            statement_ms = int(settings.DATABASE_STATEMENT_TIMEOUT_MS)
            lock_ms = int(settings.DATABASE_LOCK_TIMEOUT_MS)
            with self.wrap_database_errors, self.connection.cursor() as cursor:
                # One round trip (two statements, no parameters: the simple protocol), after the
                # BEGIN psycopg sends first. Integers from the settings, never input.
                cursor.execute(
                    f"SET LOCAL statement_timeout = {statement_ms};"
                    f" SET LOCAL lock_timeout = {lock_ms}"
                )

    @async_unsafe
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        deadline_ms = int(getattr(settings, "DATABASE_CONNECT_DEADLINE_MS", 0))
        connect = super().get_new_connection
        if deadline_ms <= 0 or getattr(self, "pool", None) is not None:
            connection = connect(conn_params)
        else:
            connection = _within(deadline_ms, lambda: connect(conn_params))
        connection.add_notice_handler(self._notice)
        return connection


def _commit_limit_ms() -> int:
    return int(getattr(settings, "DATABASE_COMMIT_TIMEOUT_MS", 0))


def _pooled() -> bool:
    return getattr(settings, "DATABASE_POOLER", "") == "transaction"


def _within(deadline_ms: int, connect: Any) -> Any:
    """`connect()`'s connection if it comes within `deadline_ms`; else `ConnectionTimeout`, and
    the connection that comes late is closed by the helper that opened it."""
    lock = threading.Lock()
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            connection = connect()
        except BaseException as error:
            outcome["error"] = error
            connection = None
        with lock:
            abandoned = outcome.get("abandoned", False)
            outcome["connection"] = connection
            done.set()
        if abandoned and connection is not None:
            connection.close()  # the request gave up on it: nobody else will

    threading.Thread(target=run, name="database-connect", daemon=True).start()
    done.wait(deadline_ms / 1000)
    with lock:
        if not done.is_set():
            outcome["abandoned"] = True
            raise psycopg.errors.ConnectionTimeout(
                f"no database connection within {deadline_ms} ms"
            )
    if "error" in outcome:
        raise outcome["error"]
    return outcome["connection"]
