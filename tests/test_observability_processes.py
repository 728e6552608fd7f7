"""Metrics and request ids across real processes: gunicorn with two workers
(deploy/gunicorn.conf.py, production settings, LOG_FORMAT=json, PROMETHEUS_MULTIPROC_DIR) and a
real Celery worker with its own metrics directory, which the web's /metrics adds
(METRICS_EXTRA_DIRS).

- one request id, sent as nginx sends it, comes back in the response, is on the JSON lines the
  request wrote (Django's and gunicorn's access line), and on the line of the Celery task the
  request caused (the relay of the jackpot's notification), in the worker's own log file;
- the counters of every worker process are added up, those of killed workers included: after
  both workers are replaced, /metrics (answered by a new worker that served none of them) still
  counts every earlier request, and the Celery worker's task runs.
About 15 s: a gunicorn start (its self-check) and a worker start.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import uuid
from typing import Any

from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from jackpot.models import OutboxMessage, OutboxStatus
from tests.conftest import make_floor, uth_play, uth_seat
from tests.faults.harness import Web
from tests.test_production import HOST, operator_env
from tests.workers import _test_database_url, wait_for

ROUTE = "api/v1/tables/<int:table>/rounds"
ROYAL_RESULT = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
}


def _request(
    port: int, method: str, path: str, body: object = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        sent = {"Host": HOST, "X-Forwarded-Proto": "https", **headers}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        connection.request(method, path, payload, sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _json_lines(text: str) -> list[dict[str, Any]]:
    lines = []
    for line in text.splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def _samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    status, _, body = _request(port, "GET", "/metrics")
    assert status == 200, body
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def _value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_one_request_id_from_the_proxy_to_the_task_and_metrics_added_up_across_processes(
    transactional_db, celery_worker, tmp_path
):
    floor = make_floor(1)
    terminal = floor.uth[0]
    web_dir, worker_dir = tmp_path / "metrics-web", tmp_path / "metrics-worker"
    env = operator_env(
        DATABASE_URL=_test_database_url(),
        LOG_FORMAT="json",
        PROMETHEUS_MULTIPROC_DIR=str(web_dir),
        METRICS_EXTRA_DIRS=str(worker_dir),
        CELERY_QUEUE=settings.CELERY_TASK_DEFAULT_QUEUE,  # the test run's, the worker's
    )
    worker = celery_worker(LOG_FORMAT="json", PROMETHEUS_MULTIPROC_DIR=str(worker_dir))
    web = Web(env, tmp_path / "gunicorn.log", workers=2)
    web.start()
    try:
        auth = {
            "Authorization": f"Bearer {terminal.token}",
            # the terminals' TLS listener's verdict (env.example: TERMINAL_CLIENT_CERTIFICATES)
            "X-Client-Verify": "SUCCESS",
            "X-Client-Subject": f"CN=table-{terminal.table_id}",
        }
        rounds = f"/api/v1/tables/{terminal.table_id}/rounds"
        seats = [uth_seat(1), uth_seat(2)]
        # Given a round opened, and its result sent with the proxy's request id
        status, _, _ = _request(
            web.port, "POST", rounds, {"round_id": "o-1", "seats": seats}, **auth
        )
        assert status == 201
        traced = f"nginx-{uuid.uuid4().hex}"
        status, headers, body = _request(
            web.port,
            "POST",
            f"{rounds}/o-1/result",
            ROYAL_RESULT,
            **auth,
            **{"X-Request-ID": traced},
        )
        # Then the answer carries it back
        assert status == 200, body
        assert headers["X-Request-ID"] == traced
        # and the notification the royal wrote keeps it, and the worker relays it under that id
        message = OutboxMessage.objects.get(key__startswith="award:", request_id=traced)
        wait_for(
            lambda: OutboxMessage.objects.get(pk=message.pk).status == OutboxStatus.DONE,
            within_s=60,
            what="the jackpot's notification relayed by the worker",
        )
        task_lines = [
            line for line in _json_lines(worker.output()) if line.get("request_id") == traced
        ]
        assert any(f"outbox {message.pk}" in line["message"] for line in task_lines), task_lines
        assert all({"time", "level", "logger", "message"} <= set(line) for line in task_lines)
        assert task_lines[0]["time"].endswith("Z")

        # A malformed id is replaced, and a refusal's Django line carries the id it was given
        status, headers, _ = _request(web.port, "GET", rounds, **{"X-Request-ID": "a b"})
        assert status == 401 and len(headers["X-Request-ID"]) == 32
        refused = headers["X-Request-ID"]
        web_lines = _json_lines(web.log.read_text(errors="replace"))
        access = [line for line in web_lines if line["logger"] == "gunicorn.access"]
        assert any(
            line.get("request_id") == traced and line["status"] == 200 and line["method"] == "POST"
            for line in access
        ), access[-5:]

        def refusal_logged() -> bool:
            # gunicorn writes its access line after the answer is sent: read until it is there
            lines = _json_lines(web.log.read_text(errors="replace"))
            found = {line["logger"] for line in lines if line.get("request_id") == refused}
            return {"jackpot.security", "gunicorn.access"} <= found

        wait_for(refusal_logged, within_s=60, what="the refusal's security and access lines")

        # When both gunicorn workers are killed and replaced by new ones
        before = _value(
            _samples(web.port),
            "jackpot_http_request_duration_seconds_count",
            route=ROUTE,
            method="POST",
            status="201",
        )
        assert before == 1
        for victim in web.wait_workers(2):
            os.kill(victim, signal.SIGKILL)
        wait_for(lambda: len(set(web.workers())) == 2, within_s=30, what="two new workers")
        status, _, _ = _request(
            web.port, "POST", rounds, {"round_id": "o-2", "seats": seats}, **auth
        )
        assert status == 201
        samples = _samples(web.port)
        # Then every request is still counted, by both generations of workers
        assert (
            _value(
                samples,
                "jackpot_http_request_duration_seconds_count",
                route=ROUTE,
                method="POST",
                status="201",
            )
            == 2
        )
        assert _value(samples, "jackpot_progressive_stakes_total", pool=str(floor.pool_id)) == 4
        assert _value(samples, "jackpot_hits_total", pool=str(floor.pool_id)) == 1
        # and the Celery worker's task runs, from its own directory
        assert _value(samples, "jackpot_celery_task_runs_total", task="jackpot.relay_outbox") >= 1
    finally:
        web.stop()
