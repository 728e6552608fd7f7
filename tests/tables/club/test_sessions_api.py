"""The sessions' API through the test client (docs/api.md 4.8): who may do what, bad input as a
4xx naming the field, the count blind until confirmed."""

from __future__ import annotations

import pytest

from tables.models import ClubSession, DropCount
from tests.conftest import make_floor
from tests.staff import person, token_client
from tests.tables.club.story import play

pytestmark = pytest.mark.django_db
JSON = "application/json"


def _error(response, status: int, code: str, param: str | None = None) -> None:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code, error
    if param is not None:
        assert error["param"] == param, error


def test_a_session_through_the_api():
    ana, bob = token_client(person("ana", "supervisor")), token_client(person("bob", "manager"))
    ida = token_client(person("ida", "auditor"))
    adam = token_client(person("adam", "admin"))
    floor = make_floor(1)
    table = floor.uth[0].table_id

    _error(ida.post("/api/v1/sessions", {}, content_type=JSON), 403, "permission_denied")
    _error(adam.post("/api/v1/sessions", {}, content_type=JSON), 403, "permission_denied")
    _error(ana.post("/api/v1/sessions", {"x": 1}, content_type=JSON), 400, "unknown_field", "x")
    opened = ana.post("/api/v1/sessions", content_type=JSON)
    assert opened.status_code == 201, opened.content
    session = opened.json()["id"]
    assert opened.json()["status"] == "open" and opened.json()["tables"] == []
    _error(bob.post("/api/v1/sessions", content_type=JSON), 409, "session_open")
    play(floor.uth[0], "a1", 3)
    count = f"/api/v1/sessions/{session}/tables/{table}/count"
    _error(ana.post(count, {"counted_cents": 1500}, content_type=JSON), 409, "session_not_closed")

    closed = bob.post(f"/api/v1/sessions/{session}/close", content_type=JSON)
    assert closed.status_code == 200, closed.content
    body = closed.json()
    assert body["closed_by"] == "user:bob" and body["closed_how"] == "supervisor"
    assert [line["withheld_cents"] for line in body["tables"]] == [1500]
    assert body["drops"][0]["expected_cents"] == 1500 and not body["drops"][0]["counted"]

    for bad, param in (
        ({"counted_cents": -1}, "counted_cents"),
        ({"counted_cents": "9"}, "counted_cents"),
        ({}, "counted_cents"),
    ):
        _error(ana.post(count, bad, content_type=JSON), 400, "invalid_request", param)
    _error(
        ana.post(
            f"/api/v1/sessions/{session}/tables/99999/count",
            {"counted_cents": 1},
            content_type=JSON,
        ),
        404,
        "table_not_found",
    )
    _error(
        ana.post(
            f"/api/v1/sessions/99999/tables/{table}/count", {"counted_cents": 1}, content_type=JSON
        ),
        404,
        "session_not_found",
    )
    counted = ana.post(count, {"counted_cents": 1400}, content_type=JSON)
    assert counted.status_code == 200, counted.content
    drop = counted.json()["drops"][0]
    assert drop["counted"] and drop["counted_cents"] is None  # blind for the second person
    confirm = f"{count}/confirm"
    _error(ana.post(confirm, {"counted_cents": 1400}, content_type=JSON), 403, "four_eyes")
    _error(
        bob.post(confirm, {"counted_cents": 1500}, content_type=JSON),
        409,
        "count_disagrees",
        "counted_cents",
    )
    confirmed = bob.post(confirm, {"counted_cents": 1400}, content_type=JSON)
    assert confirmed.status_code == 200, confirmed.content
    drop = confirmed.json()["drops"][0]
    assert (drop["counted_cents"], drop["difference_cents"], drop["confirmed_by"]) == (
        1400,
        -100,
        "user:bob",
    )
    assert DropCount.objects.get().difference_cents == -100

    listed = ida.get("/api/v1/sessions", {"from": str(ClubSession.objects.get().club_day)})
    assert listed.status_code == 200 and listed.json()["count"] == 1
    _error(ida.get("/api/v1/sessions", {"from": "yesterday"}), 400, "invalid_parameter", "from")
    assert ida.get(f"/api/v1/sessions/{session}").json()["drops"][0]["difference_cents"] == -100
    _error(ida.get("/api/v1/sessions/99999"), 404, "session_not_found")
