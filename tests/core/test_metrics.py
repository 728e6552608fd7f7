"""GET /metrics (config.monitoring, core.metrics, jackpot.reporting.gauges): counted exactly, once
per committed transaction, labelled by URL pattern, and refused to addresses the operator did not
allow. In this process (no PROMETHEUS_MULTIPROC_DIR: the process's own registry); the several
processes of gunicorn and a Celery worker are tests/test_observability_processes.py's."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.db import transaction
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from core import metrics
from core.circuit import redis_circuit
from jackpot.models import OutboxMessage, OutboxStatus
from tables.bodies.round_requests import parse_open
from tables.models import Game, Table
from tables.rounds.opening import round_open
from tests.conftest import make_floor, uth_play, uth_seat
from tests.test_fail_closed import database_at

ROYAL_RESULT = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [
        uth_play(1, "Jh Th"),  # the jackpot
        uth_play(2, "2s 2d", "fold"),  # envy for the other progressive bettor
        uth_play(3, "4c 5c", "play", "river", 1),  # no progressive stake
    ],
}
ROUTE = "api/v1/tables/<int:table>/rounds"


def scrape(**meta: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    response = Client().get("/metrics", **meta)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.django_db(transaction=True)  # committed for real: the counters wait for the commit
def test_a_round_through_the_api_counts_its_stakes_awards_and_settlement_exactly():
    floor = make_floor(1)
    terminal, pool = floor.uth[0], str(floor.pool_id)
    before = scrape()

    # When a round is opened with two progressive stakes of 500 and settled with a royal
    seats = [uth_seat(1), uth_seat(2, trips=500), uth_seat(3, progressive=0)]
    assert terminal.post("/rounds", {"round_id": "m-1", "seats": seats}).status_code == 201
    # (its replay moves nothing, and counts nothing)
    assert terminal.post("/rounds", {"round_id": "m-1", "seats": seats}).status_code == 201
    settled = terminal.post("/rounds/m-1/result", ROYAL_RESULT)
    assert settled.status_code == 200, settled.json()
    after = scrape()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # Then every counter moved by exactly what the journal holds
    assert delta("jackpot_progressive_stakes_total", pool=pool) == 2
    assert delta("jackpot_progressive_stakes_cents_total", pool=pool) == 1000
    assert delta("jackpot_rounds_settled_total", game="uth") == 1
    assert delta("jackpot_awards_total", pool=pool, kind="royal_flush") == 1
    assert delta("jackpot_awards_cents_total", pool=pool, kind="royal_flush") == 1_000_200
    assert delta("jackpot_awards_total", pool=pool, kind="envy") == 1
    assert delta("jackpot_awards_cents_total", pool=pool, kind="envy") == 50_000
    assert delta("jackpot_hits_total", pool=pool) == 1
    # the database's figures, read at the scrape: the meter back at its seed, the outbox's backlog
    assert value(after, "jackpot_meter_cents", pool=pool, currency="EUR") == 1_000_000
    pending = OutboxMessage.objects.filter(status=OutboxStatus.PENDING).count()
    assert pending >= 1  # the jackpot's notification (no worker runs here)
    assert value(after, "jackpot_outbox_pending_messages") == pending
    assert value(after, "jackpot_outbox_oldest_pending_age_seconds") >= 0
    assert value(after, "jackpot_metrics_database_error") == 0
    # and the requests by their URL pattern, never their path
    opened = ("jackpot_http_request_duration_seconds_count", ROUTE, "POST", "201")
    name, route, method, status = opened
    assert delta(name, route=route, method=method, status=status) == 2
    result_route = ROUTE + "/<str:round_id>/result"
    assert delta(name, route=result_route, method="POST", status="200") == 1
    routes = {dict(labels).get("route") for (_, labels) in after}
    assert not any(f"/{terminal.table_id}/" in str(route) for route in routes)


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_round_counts_nothing():
    floor = make_floor(1)
    table = Table.objects.get(pk=floor.uth[0].table_id)
    request = parse_open(
        {"round_id": "m-rollback", "seats": [uth_seat(1)]},
        game=Game.UTH,
        seats=7,
        progressive_stake_cents=500,
    )
    before = scrape()

    # When the service takes the stakes, then the transaction around it rolls back
    with pytest.raises(RuntimeError), transaction.atomic():
        round_open(table=table, request=request, fingerprint="f", actor="test")
        raise RuntimeError("rolled back after the stakes were taken")

    # Then nothing was counted
    assert value(scrape(), "jackpot_progressive_stakes_total", pool=str(floor.pool_id)) == value(
        before, "jackpot_progressive_stakes_total", pool=str(floor.pool_id)
    )


@pytest.mark.django_db
def test_unknown_paths_are_one_label_each_whatever_the_path():
    client = Client()
    for n in range(3):
        assert client.get(f"/api/v1/no-such-{n}").status_code == 404
        assert client.get(f"/no-such-page-{n}/").status_code == 404
    samples = scrape()
    routes = {dict(labels).get("route") for (_, labels) in samples}
    assert "^api/" in routes and "<unmatched>" in routes
    assert not any("no-such" in str(route) for route in routes)


@pytest.mark.django_db
def test_metrics_are_refused_to_an_address_the_operator_did_not_allow(settings):
    refused = Client().get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"
    assert b"jackpot_" not in refused.content
    # an operator's network is allowed, and loopback is then refused
    settings.METRICS_ALLOWED_NETS = ["203.0.113.0/24"]
    assert Client().get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 200
    assert Client().get("/metrics").status_code == 403


@pytest.mark.django_db
def test_metrics_are_not_part_of_the_api_schema():
    paths = Client().get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert paths and not any("metrics" in path for path in paths)


def test_the_scrape_answers_without_the_database(transactional_db, black_hole):
    """PostgreSQL unreachable: the counters are served, the database's figures left out, and the
    error gauge says so."""
    make_floor(1)
    assert value(scrape(), "jackpot_metrics_database_error") == 0
    with database_at(black_hole.port):
        samples = scrape()
    assert value(samples, "jackpot_metrics_database_error") == 1
    assert not any(name == "jackpot_meter_cents" for (name, _) in samples)
    assert any(name.startswith("jackpot_http_request_duration_seconds") for (name, _) in samples)


@pytest.mark.django_db(transaction=True)
def test_each_sign_read_is_a_hit_or_a_miss_of_the_cache():
    floor = make_floor(1)
    meter = f"/api/v1/pools/{floor.pool_id}/meter"
    before = scrape()
    for _ in range(3):
        assert Client().get(meter).status_code == 200
    after = scrape()
    hits, misses = (
        value(after, "jackpot_sign_cache_lookups_total", result=result)
        - value(before, "jackpot_sign_cache_lookups_total", result=result)
        for result in ("hit", "miss")
    )
    # the first read may fill the cache; the next ones are served from it
    assert hits + misses == 3 and hits >= 2


def test_the_redis_circuit_is_counted_once_per_opening_and_says_until_when():
    before = value(scrape_here(), "jackpot_redis_circuit_opened_total")
    redis_circuit.failed(ConnectionError("down"))
    redis_circuit.failed(ConnectionError("still down"))  # while open: the same opening
    samples = scrape_here()
    assert value(samples, "jackpot_redis_circuit_opened_total") == before + 1
    until = value(samples, "jackpot_redis_circuit_open_until_timestamp_seconds")
    assert time.time() < until <= time.time() + settings.REDIS_BREAKER_SECONDS


def scrape_here() -> dict:
    """This process's counters, without a request (no database needed)."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for sample in family.samples
    }


@pytest.mark.django_db(transaction=True)
def test_an_open_whose_pool_moved_under_it_is_counted_as_retaking_the_row(monkeypatch):
    from jackpot.money import meter

    floor = make_floor(1)
    terminal, pool = floor.uth[0], str(floor.pool_id)
    before = value(scrape(), "jackpot_pool_row_retaken_total", pool=pool)
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    assert terminal.post("/rounds/r-1/void", {"reason": "misdeal"}).status_code == 200
    assert value(scrape(), "jackpot_pool_row_retaken_total", pool=pool) == before

    expected = meter.expected_stakes

    def another_table_moved_it(**kwargs):
        # As if another table's stakes committed between the read and the UPDATE.
        found = expected(**kwargs)
        return None if found is None else (found[0] + 1, *found[1:])

    monkeypatch.setattr(meter, "expected_stakes", another_table_moved_it)
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    assert value(scrape(), "jackpot_pool_row_retaken_total", pool=pool) == before + 1
