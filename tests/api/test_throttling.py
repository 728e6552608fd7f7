"""Throttles count per client on Redis, answer 429 past the limit, and let money through when
Redis is down (Redis is a cache, never the truth)."""

from __future__ import annotations

import uuid

import pytest
from django.test import override_settings

from tests.conftest import uth_seat

pytestmark = pytest.mark.django_db

RATES = {"anon": "3/min", "rules": "3/min", "terminal": "2/min"}


@pytest.fixture
def tight(settings, throttle_clock):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": RATES}
    # A fresh prefix: counters of an earlier run in the same minute must not count here.
    prefix = f"test-{uuid.uuid4().hex}"
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": prefix}}


def test_terminal_throttle_is_per_terminal(floor, tight):
    first, second = floor.uth
    statuses = [
        first.post("/rounds", {"round_id": "r-0", "seats": [uth_seat(1)]}).status_code,
        first.post("/rounds/r-0/void", {"reason": "misdeal"}).status_code,
        first.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code,
    ]
    assert statuses == [201, 200, 429]
    limited = first.post("/rounds", {"round_id": "r-9", "seats": [uth_seat(1)]})
    assert limited.json()["error"]["type"] == "rate_limit"
    assert int(limited["Retry-After"]) >= 1
    # Another terminal has its own budget.
    assert second.post("/rounds", {"round_id": "x-1", "seats": [uth_seat(1)]}).status_code == 201


def test_public_meter_throttle_per_address(client, floor, tight):
    url = f"/api/v1/pools/{floor.pool_id}/meter"
    assert [client.get(url).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert client.get(url, REMOTE_ADDR="10.9.9.9").status_code == 200


def test_money_moves_when_redis_is_down(floor, tight):
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        terminal = floor.uth[0]
        for n in range(4):  # over the limit, but nothing can count: let through
            response = terminal.post("/rounds", {"round_id": f"d-{n}", "seats": [uth_seat(1)]})
            assert response.status_code == 201
            voided = terminal.post(f"/rounds/d-{n}/void", {"reason": "misdeal"})
            assert voided.status_code == 200


def test_a_forged_forwarded_for_header_does_not_reset_the_budget(client, floor, tight):
    url = f"/api/v1/pools/{floor.pool_id}/meter"
    assert [client.get(url).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert client.get(url, HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 429
