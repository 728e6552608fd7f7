"""The staff's heavy reads are throttled per person, and the OpenAPI schema is built once per
process (core.throttling.HeavyReadThrottle, config.schema.SchemaView; issue 20, item 9).

A heavy read (the journal's verification, a pool's history and its CSV, a pool's liability
statement, the payout log's exports, the schema) can hold a sync worker for seconds: each person
has `heavy_read` of them a window, counted after authentication, shared by all those views; a
terminal's rounds and the staff's light reads have budgets of their own. The schema, anyone's
to read, counts per address.
"""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from config import schema
from tests.conftest import uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db

HEAVY = [
    ("get", "/api/v1/journal/verify"),
    ("post", "/api/v1/journal/verify"),
    ("get", "/api/v1/pools/{pool}/history"),
    ("get", "/api/v1/pools/{pool}/history.csv?chart=meter"),
    ("get", "/api/v1/pools/{pool}/liability?format=pdf"),
    ("get", "/api/v1/awards/export.csv?from=2026-01-01&to=2026-01-02"),
    ("post", "/api/v1/awards/exports"),
    ("get", "/api/v1/awards/exports/1/download"),
]


@pytest.fixture
def tight(settings):
    # A day's window: the windows are fixed, and a minute's could end between two requests.
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "heavy_read": "2/day"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    # A fresh prefix: counters of an earlier run in the same minute must not count here.
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


@pytest.fixture
def auditors(django_user_model) -> dict[str, Client]:
    return api_clients(ida="auditor", eve="auditor")


def _call(client: Client, method: str, path: str, pool: int) -> int:
    url = path.format(pool=pool)
    if method == "post":
        return client.post(url, {}, content_type="application/json").status_code
    return client.get(url).status_code


def test_every_heavy_read_shares_one_budget_per_person(floor, auditors, tight):
    ida, eve = auditors["ida"], auditors["eve"]
    assert [ida.get("/api/v1/journal/verify").status_code for _ in range(2)] == [200, 200]
    limited = ida.get("/api/v1/journal/verify")
    assert limited.status_code == 429
    assert limited.json()["error"]["type"] == "rate_limit"
    assert limited.json()["error"]["code"] == "throttled"
    assert int(limited["Retry-After"]) >= 1
    # Spent on one heavy read, the budget is spent on all of them...
    for method, path in HEAVY:
        assert _call(ida, method, path, floor.pool_id) == 429, (method, path)
    # ... and on nothing else: a light read of the same person, a terminal's round.
    assert ida.get("/api/v1/awards").status_code == 200
    opened = floor.uth[0].post("/rounds", {"round_id": "h-1", "seats": [uth_seat(1)]})
    assert opened.status_code == 201
    # Per person, not per address: a colleague at the same address has a budget of her own.
    assert eve.get("/api/v1/journal/verify").status_code == 200


def test_a_request_without_credentials_is_refused_before_it_counts(floor, auditors, tight):
    anonymous = Client()
    for _ in range(3):
        assert anonymous.get(f"/api/v1/pools/{floor.pool_id}/history").status_code == 401
    assert auditors["ida"].get(f"/api/v1/pools/{floor.pool_id}/history").status_code == 200


def test_the_schema_is_throttled_per_address(tight):
    client = Client()
    assert [client.get("/api/schema/").status_code for _ in range(2)] == [200, 200]
    limited = client.get("/api/schema/")
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "throttled"
    assert client.get("/api/schema/", REMOTE_ADDR="10.9.9.9").status_code == 200


@pytest.fixture
def builds(monkeypatch) -> list[int]:
    """The schema's builds from now on, with this process's cache emptied first."""
    monkeypatch.setattr(schema, "_RENDERED", {})
    counted: list[int] = []
    build = SchemaGenerator.get_schema

    def counting(self, *args, **kwargs):
        counted.append(1)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    return counted


def test_the_schema_is_built_once_per_process_and_renderer(builds):
    client = Client()
    first = client.get("/api/schema/")
    second = client.get("/api/schema/")
    assert first.status_code == second.status_code == 200
    assert len(builds) == 1
    assert first.content == second.content
    yaml_type = "application/vnd.oai.openapi; charset=utf-8"
    assert first["Content-Type"] == second["Content-Type"] == yaml_type
    assert first["Content-Disposition"] == 'inline; filename="Progressive jackpot service.yaml"'
    # JSON is another rendering (one more build), then served from memory too; a client's
    # media-type parameters do not make another one.
    as_json = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    again = client.get("/api/schema/", HTTP_ACCEPT="application/json; indent=1")
    assert as_json["Content-Type"] == again["Content-Type"] == "application/json"
    assert as_json.content == again.content and as_json.json()["openapi"].startswith("3.")
    assert len(builds) == 2
    # What a client may put in the query cannot grow the cache: an unknown language, a version.
    for query in ("?lang=xx", "?version=2", "?lang=zz&version=3"):
        response = client.get(f"/api/schema/{query}")
        assert response.status_code == 200 and response.content == first.content, query
    assert len(builds) == 2
    assert set(schema._RENDERED) == {
        ("application/vnd.oai.openapi", None),
        ("application/json", None),
    }
    # The schema does not describe itself (as drf-spectacular's own view).
    assert "/api/schema/" not in as_json.json()["paths"]
