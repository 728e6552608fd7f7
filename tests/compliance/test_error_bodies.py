"""Error responses carry no stack trace, SQL or secret: requirement 43.

A real database error (a column the service's SQL names is gone, in this test's transaction only)
on the round path, on the public meter and on the sign's page, and a body the parser cannot read:
each answer is the one error shape with a generic message, and none of it is the database's text,
a traceback, the settings' secret or the database's address. DEBUG is off under the test
settings as in production (`tests/test_production.py` proves production refuses DEBUG on).
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.conftest import uth_seat

pytestmark = pytest.mark.django_db

# What must never reach a client: the database's words, Python's, and the configuration's.
LEAKS = (
    "Traceback",
    'File "',
    "psycopg",
    "ProgrammingError",
    "UndefinedColumn",
    "does not exist",
    "SELECT",
    "INSERT",
    "UPDATE",
    "jackpot_",
    "tables_",
    "LINE 1",
    "site-packages",
)


def _no_leak(response) -> dict:
    text = response.content.decode()
    for leak in LEAKS:
        assert leak not in text, (leak, text[:500])
    assert settings.SECRET_KEY not in text
    database = connection.settings_dict
    for value in (database["NAME"], database.get("PASSWORD") or None):
        if value:
            assert value not in text, text[:500]
    return response.json()["error"]


def _break(table: str, column: str) -> None:
    """A real database error for every statement naming `column` (rolled back with the test)."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} RENAME COLUMN {column} TO {column}_gone")


def test_debug_is_off():
    assert settings.DEBUG is False


def test_a_database_error_on_the_round_path_is_a_generic_500(floor):
    _break("jackpot_transfer", "amount_cents")
    response = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert response.status_code == 500
    error = _no_leak(response)
    assert (error["type"], error["code"]) == ("api_error", "internal_error")
    assert error["message"] == "Internal error; it has been logged."


def test_a_database_error_on_the_public_meter_is_a_generic_500(floor):
    _break("jackpot_pool", "meter_units")
    response = Client().get(f"/api/v1/pools/{floor.pool_id}/meter")
    assert response.status_code == 500
    assert _no_leak(response)["code"] == "internal_error"


def test_a_database_error_outside_the_api_is_a_generic_500_too(floor):
    with connection.cursor() as cursor:  # the sign's page asks whether the pool exists
        cursor.execute("ALTER TABLE jackpot_pool RENAME TO jackpot_pool_gone")
    client = Client(raise_request_exception=False)
    response = client.get(f"/display/{floor.pool_id}/")
    assert response.status_code == 500
    assert _no_leak(response)["code"] == "internal_error"


def test_bodies_the_service_cannot_read_name_the_problem_not_the_parser(floor):
    terminal = floor.uth[0]
    for raw in (b'{"round_id": "r-1", "seats": [', b"\xff\xfe", b'{"round_id": 1e999999}'):
        response = terminal.client().post(
            f"/api/v1/tables/{terminal.table_id}/rounds", raw, content_type="application/json"
        )
        assert response.status_code == 400, response.content
        _no_leak(response)
