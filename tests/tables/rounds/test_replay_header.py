"""A replayed answer says it is one: `Idempotent-Replayed: true` on the stored first answer of a
round step (open, result, void) retried by round_id or by Idempotency-Key, never on a first
answer nor on a refusal. A terminal that restarted its round numbering learns from it that the
round it "opened" is an old one."""

from __future__ import annotations

import pytest

from tables.models import Round
from tests.conftest import uth_play, uth_seat

pytestmark = pytest.mark.django_db

HEADER = "Idempotent-Replayed"
RESULT = {
    "board": ["2c", "7d", "9h", "Js", "Kc"],
    "dealer": ["3s", "4d"],
    "seats": [uth_play(1, "Ah Qd")],
}


def _open(terminal, round_id="r-1", **headers):
    return terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1)]}, **headers)


def test_a_first_answer_carries_no_replay_header(floor):
    terminal = floor.uth[0]
    opened = _open(terminal)
    settled = terminal.post("/rounds/r-1/result", RESULT)
    _open(terminal, round_id="r-2")
    voided = terminal.post("/rounds/r-2/void", {"reason": "misdeal"})

    assert (opened.status_code, settled.status_code, voided.status_code) == (201, 200, 200)
    assert HEADER not in opened and HEADER not in settled and HEADER not in voided


def test_the_same_open_retried_is_a_replay(floor):
    terminal = floor.uth[0]
    first = _open(terminal)
    again = _open(terminal)

    assert again.status_code == 201 and again.json() == first.json()
    assert again[HEADER] == "true"


def test_the_same_result_retried_is_a_replay(floor):
    terminal = floor.uth[0]
    _open(terminal)
    first = terminal.post("/rounds/r-1/result", RESULT)
    again = terminal.post("/rounds/r-1/result", RESULT)

    assert again.status_code == 200 and again.json() == first.json()
    assert again[HEADER] == "true"


def test_the_same_void_retried_is_a_replay(floor):
    terminal = floor.uth[0]
    _open(terminal)
    first = terminal.post("/rounds/r-1/void", {"reason": "misdeal"})
    again = terminal.post("/rounds/r-1/void", {"reason": "misdeal"})

    assert again.status_code == 200 and again.json() == first.json()
    assert again[HEADER] == "true"


def test_a_retry_by_idempotency_key_is_a_replay(floor):
    terminal = floor.uth[0]
    first = _open(terminal, HTTP_IDEMPOTENCY_KEY="k-1")
    again = _open(terminal, HTTP_IDEMPOTENCY_KEY="k-1")

    assert HEADER not in first
    assert again.status_code == 201 and again.json() == first.json()
    assert again[HEADER] == "true"


def test_a_refused_other_payload_is_no_replay(floor):
    terminal = floor.uth[0]
    _open(terminal, HTTP_IDEMPOTENCY_KEY="k-1")

    by_round_id = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1, ante=1000)]})
    by_key = _open(terminal, round_id="r-2", HTTP_IDEMPOTENCY_KEY="k-1")
    other_result = dict(RESULT, dealer=["8s", "8d"])
    terminal.post("/rounds/r-1/result", RESULT)
    by_result = terminal.post("/rounds/r-1/result", other_result)

    assert [r.status_code for r in (by_round_id, by_key, by_result)] == [409, 409, 409]
    assert all(HEADER not in r for r in (by_round_id, by_key, by_result))
    assert not Round.objects.filter(round_id="r-2").exists()  # and nothing was opened


def test_the_schema_declares_the_header_on_the_three_steps(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    declared = {}
    for operations in schema["paths"].values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if HEADER in response.get("headers", {}):
                    declared[operation["operationId"]] = status
    assert declared == {
        "round_open": "201",
        "round_result": "200",
        "round_void": "200",
        "round_supervisor_void": "200",
    }
