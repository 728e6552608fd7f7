"""The meter for jackpot signs: from Redis after each commit, ETag and 304, never ahead of the
database nor behind it, never another database's, and PostgreSQL when Redis is down."""

from __future__ import annotations

import uuid

import pytest
from django.db.models import F
from django.test import override_settings

from jackpot.models import DatabaseIdentity, Pool
from jackpot.sign import display
from tests.conftest import uth_play, uth_seat

pytestmark = pytest.mark.django_db


def _meter(client, floor, **headers):
    return client.get(f"/api/v1/pools/{floor.pool_id}/meter", **headers)


def _key(floor) -> str:
    return display._key(display._committed(floor.pool_id)[2], floor.pool_id)


def _cached(floor) -> dict:
    return display._redis().hgetall(_key(floor))


def test_the_cache_follows_commits_only(client, floor, django_capture_on_commit_callbacks):
    first = _meter(client, floor)
    assert first.status_code == 200
    assert first.json()["amount_cents"] == 1_000_000
    assert first.json()["last_hit"] is None and first.json()["jackpot_pending"] is False

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    # Not yet committed as far as the cache knows. (No read here: this test's one connection
    # sees its own uncommitted rows, which a sign's reader, in another, never does.)
    assert int(_cached(floor)[b"meter:version"]) == 0
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


def test_redis_down_the_database_answers(client, floor):
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = _meter(client, floor)
    assert response.status_code == 200
    assert response.json()["amount_cents"] == 1_000_000


def test_unknown_pool(client):
    assert client.get("/api/v1/pools/987654/meter").status_code == 404


def test_figures_ahead_of_the_database_are_never_served_and_dropped_at_the_next_change(
    client, floor, django_capture_on_commit_callbacks
):
    # Given Redis holding, under this database's key, versions far ahead of the committed ones.
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
    assert int(_cached(floor)[b"meter:version"]) == 500
    # The sign is answered from PostgreSQL: those versions were never committed here.
    body = _meter(client, floor).json()
    assert body["amount_cents"] == 1_000_000 and body["jackpot_pending"] is False

    # When the pool next changes, its publisher drops them, and the cache holds the truth.
    with django_capture_on_commit_callbacks(execute=True):
        opened = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    body = _meter(client, floor).json()
    assert body["amount_cents"] == opened.json()["meter"]["amount_cents"] < 7_777_700
    assert body["sequence"] == 1 and body["jackpot_pending"] is False
    assert int(_cached(floor)[b"meter:version"]) == 1


def test_redis_rolled_back_to_an_older_snapshot_serves_the_committed_figure(
    client, floor, django_capture_on_commit_callbacks
):
    terminal = floor.uth[0]
    assert _meter(client, floor).json()["amount_cents"] == 1_000_000
    snapshot = _cached(floor)  # Redis as a snapshot taken now holds it
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
    royal = _meter(client, floor).json()
    assert royal["jackpot_pending"] is True
    etag = _meter(client, floor)["ETag"]

    # Redis restored from the older snapshot: the pre-royal meter and "no jackpot pending".
    redis_client = display._redis()
    redis_client.delete(_key(floor))
    redis_client.hset(_key(floor), mapping=snapshot)
    assert _cached(floor) == snapshot

    after = _meter(client, floor)
    assert after.json() == royal  # the committed figures, at the very next read
    assert after["ETag"] == etag
    assert _meter(client, floor, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # And the cache holds the committed figures again.
    assert int(_cached(floor)[b"meter:version"]) == royal["sequence"]


def test_a_database_made_anew_under_a_kept_redis_shows_its_own_figures(client, floor):
    first = _meter(client, floor)
    old_key = _key(floor)
    assert _cached(floor)  # the first database's figures, in Redis

    # The database made anew (its own token, as its migration makes one) with the same pool id
    # and the same versions, but other figures; Redis is kept.
    DatabaseIdentity.objects.filter(pk=1).update(token=uuid.uuid4())
    Pool.objects.filter(pk=floor.pool_id).update(meter_units=F("meter_units") + 4_200 * 10_000)

    second = _meter(client, floor)
    assert second.json()["sequence"] == first.json()["sequence"]  # the same versions...
    assert second.json()["amount_cents"] == 1_004_200  # ...but this database's figures
    assert second["ETag"] != first["ETag"]
    assert _meter(client, floor, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200
    assert _key(floor) != old_key and display._redis().exists(old_key)  # left to expire


def test_a_flushed_database_gets_a_token_at_first_use(client, floor):
    first = _meter(client, floor)["ETag"]
    DatabaseIdentity.objects.all().delete()
    second = _meter(client, floor)
    assert second.status_code == 200 and second["ETag"] != first
    assert DatabaseIdentity.objects.count() == 1


def test_a_late_publisher_does_not_drop_newer_figures(client, floor):
    display._publish(floor.pool_id, "meter", 0, {"late": True})  # version 0, committed long ago
    assert _meter(client, floor).json()["amount_cents"] == 1_000_000
    held = _cached(floor)
    display._publish(floor.pool_id, "meter", 0, {"late": True})
    assert _cached(floor) == held
