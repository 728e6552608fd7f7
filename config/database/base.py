"""Django's PostgreSQL backend with a deadline on opening a connection, so a request fails closed
in time.

libpq's `connect_timeout` cannot be set under 2 s (psycopg raises 1 to 2, as libpq does), and it
counts for each address tried; a terminal's patience is 2 s in all (compliance requirement 28).
So a new connection is opened in a helper thread and waited for `DATABASE_CONNECT_DEADLINE_MS`
(1.5 s by default): past it, the request gets psycopg's `ConnectionTimeout` (an OperationalError,
which `config.handlers` answers with 503 `progressive_closed`), and the helper, bounded by
`connect_timeout`, closes whatever it gets late. Statements on an open connection are bounded by
the server (`statement_timeout`, `lock_timeout`) and the kernel (`tcp_user_timeout`): see
`config.settings.databases`. Everything else is Django's backend, unchanged (its vendor stays
"postgresql"); a connection pool's connections are left to the pool.

Behind pgbouncer in transaction pooling (DATABASE_POOLER=transaction) a server connection passes
to another client at every commit, so this backend changes no session state there: the limits
are set with `SET LOCAL` as the first statements of every transaction Django opens (gone at its
commit or rollback), and the maintenance connection's `SET`s are skipped. A statement outside a
transaction runs under the application role's defaults (`ALTER ROLE .. SET`). SET LOCAL takes no
snapshot, so a `SET TRANSACTION ISOLATION LEVEL` may still follow it.

Under synchronous replication (Patroni's strict synchronous mode, docs/operations.md "High
availability") a COMMIT returns once the standby has the transaction. A former primary whose
standby has left it (isolated in a split brain) makes its commits wait without end: the
statement's limit does not bound that wait, so the request fails on the terminal's side and its
resend waits on the first one's locks, a 503 either way. When the wait is cancelled
(`pg_cancel_backend`: an operator, a script clearing stuck sessions), PostgreSQL has already
committed locally and answers the COMMIT with success and a warning, "canceling wait for
synchronous replication": a commit that may exist on that server alone, which a failover's
pg_rewind discards. Such a commit is never acknowledged: the warning is caught as it arrives (a
notice handler on every connection), the commit raises `NotReplicated` (an OperationalError: the
request answers 503 `progressive_closed`, the terminal resends) and the connection, which leads
to the wrong server, is closed. This holds for Django's transactions (every money movement is
one); a lone autocommit statement is not covered.

The same cancellation bounds a commit's wait (DATABASE_COMMIT_TIMEOUT_MS; 0, the default, none):
right after a failover, strict synchronous mode holds every commit of the new primary until the
former one has rejoined as its standby (seconds), and a terminal must hear 503
`progressive_closed` within its patience, not wait (compliance requirement 28). Past the limit
the commit is cancelled (psycopg's `cancel()`, by the process's watchdog thread:
`config.database.deadlines`): the wait ends as above, with
`NotReplicated`, and the transaction, committed locally, reaches the standby when it is back;
the terminal's resend is then replayed (tables.rounds.replay, once the standby has it too).
For STANDBY_PROBE_S after such a cancel, each transaction of the process first commits a probe
(a write of its own row) under the same limit (`_probe_standby`): while the standby is missing,
requests fail in a fifth of a second instead of queueing on the pool's row behind commits that
wait.
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
