"""The request id (core.request_id) and the log lines that carry it (core.logs), in process;
across gunicorn, Django and a real Celery worker: tests/test_observability_processes.py."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from django.test import Client

from core import dispatch, request_id
from core.logs import JsonFormatter, TextFormatter

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("nginx-0f3a.b_c", True),
        ("x" * 128, True),
        ("x" * 129, False),  # too long: replaced, never cut
        ("a b", False),
        ("id\nforged-line", False),
        ("", False),
    ],
)
def test_a_well_formed_id_is_kept_and_anything_else_replaced(sent, kept):
    answered = Client().get("/healthz", HTTP_X_REQUEST_ID=sent)["X-Request-ID"]
    if kept:
        assert answered == sent
    else:
        assert answered != sent and len(answered) == 32 and int(answered, 16) >= 0


def test_without_a_header_each_request_gets_its_own():
    client = Client()
    first, second = (client.get("/healthz")["X-Request-ID"] for _ in range(2))
    assert first != second
    assert request_id.current() is None  # and none is left behind once the response is done


def test_django_s_own_lines_after_the_view_carry_the_id(caplog):
    # "Not Found" is logged by Django's handler after the middleware returned
    Client().get("/api/v1/no-such-thing", HTTP_X_REQUEST_ID="trace-404")
    not_found = [record for record in caplog.records if record.name == "django.request"]
    assert [record.request_id for record in not_found] == ["trace-404"]
    assert "[trace-404] Not Found" in TextFormatter().format(not_found[0])


def test_a_task_sent_for_a_request_carries_its_id_in_its_headers():
    with request_id.bound("trace-task"):
        assert dispatch._headers() == {request_id.TASK_HEADER: "trace-task"}
    assert dispatch._headers() == {}


def _record(message: str, *args: object, exc_info: object = None) -> logging.LogRecord:
    return logging.LogRecord("jackpot.test", logging.ERROR, __file__, 1, message, args, exc_info)  # type: ignore[arg-type]


def test_a_json_line_is_one_line_with_its_fields_and_its_traceback_inside():
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        failure = sys.exc_info()
    with request_id.bound("trace-json"):
        line = JsonFormatter().format(_record("two\nlines %s", "forged", exc_info=failure))
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "two\nlines forged"
    assert parsed["level"] == "ERROR" and parsed["logger"] == "jackpot.test"
    assert parsed["request_id"] == "trace-json"
    assert parsed["time"].endswith("Z") and "T" in parsed["time"]
    assert "ValueError: bad" in parsed["exception"]
    # outside a request, no request_id at all
    assert "request_id" not in json.loads(JsonFormatter().format(_record("quiet")))


def test_the_text_line_names_the_request_or_a_dash():
    with request_id.bound("trace-text"):
        assert " jackpot.test [trace-text] hello" in TextFormatter().format(_record("hello"))
    assert " jackpot.test [-] hello" in TextFormatter().format(_record("hello"))
