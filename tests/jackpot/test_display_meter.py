"""The meter for jackpot signs: from Redis after each commit, ETag and 304, never ahead of the
database, and PostgreSQL when Redis is down."""

from __future__ import annotations

import pytest
from django.test import override_settings

from jackpot import display
from tests.conftest import uth_play, uth_seat

pytestmark = pytest.mark.django_db


def _meter(client, floor, **headers):
    return client.get(f"/api/v1/pools/{floor.pool_id}/meter", **headers)


def _cached(floor) -> dict:
    return display._redis().hgetall(display._key(floor.pool_id))


def test_the_cache_follows_commits_only(client, floor, django_capture_on_commit_callbacks):
    first = _meter(client, floor)
    assert first.status_code == 200
    assert first.json()["amount_cents"] == 1_000_000
    assert first.json()["last_hit"] is None and first.json()["jackpot_pending"] is False

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    # Not yet committed as far as the cache knows: the sign still shows the old meter.
    assert int(_cached(floor)[b"meter:version"]) == 0
    assert _meter(client, floor).json()["amount_cents"] == 1_000_000
    for callback in callbacks:
        callback()
    assert int(_cached(floor)[b"meter:version"]) == 1
    assert _meter(client, floor).json()["amount_cents"] == 1_000_200


def test_etag_and_304(client, floor, django_capture_on_commit_callbacks):
    response = _meter(client, floor)
    etag = response["ETag"]
    unchanged = _meter(client, floor, HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304 and unchanged["ETag"] == etag
    with django_capture_on_commit_callbacks(execute=True):
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    changed = _meter(client, floor, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag


def test_a_hit_shows_the_winner_and_the_pending_jackpot(
    client, floor, django_capture_on_commit_callbacks
):
    terminal = floor.uth[0]
    with django_capture_on_commit_callbacks(execute=True):
        terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
        terminal.post(
            "/rounds/r-1/result",
            {
                "board": ["Ah", "Kh", "Qh", "2c", "3d"],
                "dealer": ["9s", "9d"],
                "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
            },
        )
    body = _meter(client, floor).json()
    assert body["amount_cents"] == 1_000_000  # reset to the seed
    assert body["jackpot_pending"] is True
    assert body["last_hit"]["kind"] == "royal_flush"
    assert body["last_hit"]["amount_cents"] == 1_000_200
    assert body["last_hit"]["table"].startswith("UTH")
    # Seat 2 won the envy bonus too; a sign lists the hands that won, not what rode on them.
    assert body["recent_hits"] == [body["last_hit"]]
    assert body["pending_jackpot"] == body["last_hit"]


def test_redis_down_the_database_answers(client, floor, monkeypatch):
    # The client and its script are made afresh for the dead address, and both are put back.
    monkeypatch.setattr(display, "_client", None)
    monkeypatch.setattr(display, "_publish_script", None)
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = _meter(client, floor)
    assert response.status_code == 200
    assert response.json()["amount_cents"] == 1_000_000


def test_unknown_pool(client):
    assert client.get("/api/v1/pools/987654/meter").status_code == 404


def test_figures_kept_across_a_database_restore_are_dropped_at_the_next_change(
    client, floor, django_capture_on_commit_callbacks
):
    # Given Redis holding figures from another life of the database: versions far ahead.
    stale_meter = {
        "pool": floor.pool_id,
        "amount_cents": 7_777_700,
        "currency": "EUR",
        "sequence": 500,
        "as_of": None,
    }
    display._publish(floor.pool_id, "meter", 500, stale_meter)
    display._publish(
        floor.pool_id,
        "awards",
        90,
        {"last_hit": None, "recent_hits": [], "jackpot_pending": True, "pending_jackpot": None},
    )
    assert _meter(client, floor).json()["amount_cents"] == 7_777_700  # what a restore leaves

    # When the pool next changes, its publisher finds a version this database never committed.
    with django_capture_on_commit_callbacks(execute=True):
        opened = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})

    # Then the sign shows the database's figures again, and the cache holds them.
    body = _meter(client, floor).json()
    assert body["amount_cents"] == opened.json()["meter"]["amount_cents"] < 7_777_700
    assert body["sequence"] == 1 and body["jackpot_pending"] is False
    assert int(_cached(floor)[b"meter:version"]) == 1


def test_a_late_publisher_does_not_drop_newer_figures(client, floor):
    display._publish(floor.pool_id, "meter", 0, {"late": True})  # version 0, committed long ago
    assert _meter(client, floor).json()["amount_cents"] == 1_000_000
    held = _cached(floor)
    display._publish(floor.pool_id, "meter", 0, {"late": True})
    assert _cached(floor) == held
