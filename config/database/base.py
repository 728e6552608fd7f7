"""Django's PostgreSQL backend with a deadline on opening a connection, so a request fails closed
in time.

libpq's `connect_timeout` cannot be set under 2 s (psycopg raises 1 to 2, as libpq does), and it
counts for each address tried; a terminal's patience is 2 s in all (compliance requirement 28).
So a new connection is opened in a helper thread and waited for `DATABASE_CONNECT_DEADLINE_MS`
(1.5 s by default): past it, the request gets psycopg's `ConnectionTimeout` (an OperationalError,
which `config.handlers` answers with 503 `progressive_closed`), and the helper, bounded by
`connect_timeout`, closes whatever it gets late. Statements on an open connection are bounded by
the server (`statement_timeout`, `lock_timeout`) and the kernel (`tcp_user_timeout`): see
`config.settings.base`. Everything else is Django's backend, unchanged (its vendor stays
"postgresql"); a connection pool's connections are left to the pool.

Behind pgbouncer in transaction pooling (DATABASE_POOLER=transaction) a server connection passes
to another client at every commit, so this backend changes no session state there: the limits
are set with `SET LOCAL` as the first statements of every transaction Django opens (gone at its
commit or rollback), and the maintenance connection's `SET`s are skipped. A statement outside a
transaction runs under the application role's defaults (`ALTER ROLE .. SET`). SET LOCAL takes no
snapshot, so a `SET TRANSACTION ISOLATION LEVEL` may still follow it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from django.utils.asyncio import async_unsafe


class DatabaseWrapper(base.DatabaseWrapper):
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
            return connect(conn_params)
        return _within(deadline_ms, lambda: connect(conn_params))


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
