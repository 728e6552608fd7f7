"""A persistent connection's health, told without a round trip (config.database `is_usable`):
Django's own check sends `SELECT 1`, which behind pgbouncer waits for a server connection (during
a failover, pgbouncer's whole query_wait_timeout, before the request's own statement waits it
again)."""

from __future__ import annotations

import os
import time

import dj_database_url
import psycopg
import pytest
from django.db import connections
from django.db.utils import DataError, load_backend


@pytest.fixture
def wrapper(db):
    """A connection of its own to the test database, through the service's backend."""
    opened = load_backend("config.database").DatabaseWrapper(
        dict(connections["default"].settings_dict), "default"
    )
    opened.ensure_connection()
    yield opened
    opened.close()


def _operator_url() -> str:
    url = dj_database_url.parse(os.environ["DATABASE_URL"])
    return f"postgres://{url['USER']}@{url['HOST']}:{url['PORT']}/postgres"


def test_an_idle_connection_is_usable_without_a_statement(wrapper):
    pid = wrapper.connection.info.backend_pid

    def last_statement() -> str:
        with psycopg.connect(_operator_url(), autocommit=True) as operator:
            return operator.execute(
                "SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]
            ).fetchone()[0]

    before = last_statement()
    assert wrapper.is_usable()
    assert last_statement() == before != "SELECT 1"  # nothing reached the server


def test_a_session_the_server_ended_is_not_usable(wrapper):
    pid = wrapper.connection.info.backend_pid
    with psycopg.connect(_operator_url(), autocommit=True) as operator:
        operator.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 5
    while wrapper.is_usable():  # the server's FATAL and its close arrive on the socket
        assert time.monotonic() < deadline, "a terminated session still looks usable"
        time.sleep(0.01)


def test_a_failed_transaction_is_not_usable(wrapper):
    wrapper.set_autocommit(False)
    with pytest.raises(DataError), wrapper.cursor() as cursor:
        cursor.execute("SELECT 1/0")
    assert not wrapper.is_usable()
