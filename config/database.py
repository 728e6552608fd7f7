"""A deadline on opening a PostgreSQL connection, so that a request fails closed in time.

libpq's `connect_timeout` cannot be set under 2 s (psycopg raises 1 to 2, as libpq does), and it
counts for each address tried; a terminal's patience is 2 s in all (compliance requirement 28).
So a new connection is opened in a helper thread and waited for `DATABASE_CONNECT_DEADLINE_MS`
(1.5 s by default): past it, the request gets psycopg's `ConnectionTimeout` (an OperationalError,
which `config.handlers` answers with 503 `progressive_closed`), and the helper, bounded by
`connect_timeout`, closes whatever it gets late. Statements on an open connection are bounded by
the server (`statement_timeout`, `lock_timeout`) and the kernel (`tcp_user_timeout`): see
`config.settings.base`.

Django's PostgreSQL backend is kept (the settings check its name); its `get_new_connection` is
wrapped once, when the app registry is ready. Connections from pools and SQLite are untouched.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg
from django.apps import AppConfig
from django.conf import settings
from django.db.backends.postgresql.base import DatabaseWrapper
from django.utils.asyncio import async_unsafe

_connect = DatabaseWrapper.get_new_connection


@async_unsafe
def connect_within_deadline(wrapper: DatabaseWrapper, conn_params: dict[str, Any]) -> Any:
    deadline_ms = int(getattr(settings, "DATABASE_CONNECT_DEADLINE_MS", 0))
    if deadline_ms <= 0 or getattr(wrapper, "pool", None) is not None:
        return _connect(wrapper, conn_params)
    lock = threading.Lock()
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def connect() -> None:
        try:
            connection = _connect(wrapper, conn_params)
        except BaseException as error:
            outcome["error"] = error
            connection = None
        with lock:
            abandoned = outcome.get("abandoned", False)
            outcome["connection"] = connection
            done.set()
        if abandoned and connection is not None:
            connection.close()  # the request gave up on it: nobody else will

    threading.Thread(target=connect, name="database-connect", daemon=True).start()
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


def install() -> None:
    if DatabaseWrapper.get_new_connection is _connect:
        DatabaseWrapper.get_new_connection = connect_within_deadline  # type: ignore[method-assign, assignment]


class FailClosedDatabase(AppConfig):
    """Installs the deadline when Django starts (listed first in INSTALLED_APPS)."""

    name = "config"
    label = "config_database"
    verbose_name = "Database deadline"

    def ready(self) -> None:
        install()
