"""core.dispatch: tasks are sent after commit only, never make a request wait on a broker that
is down, and run in-process when there is no broker (the embedded default)."""

from __future__ import annotations

import pytest
from celery import current_app
from django.conf import settings
from django.db import transaction

from core.circuit import redis_circuit, redis_client
from core.dispatch import send, send_after_commit
from tests.conftest import run_python

QUEUE = settings.CELERY_TASK_DEFAULT_QUEUE


def _queued() -> int:
    return int(redis_client().llen(QUEUE))


@pytest.fixture
def empty_queue():
    redis_client().delete(QUEUE)
    yield
    redis_client().delete(QUEUE)


@pytest.mark.django_db(transaction=True)
def test_a_task_is_sent_only_once_its_transaction_commits(empty_queue):
    with transaction.atomic():
        send_after_commit("jackpot.refresh_displays")
        assert _queued() == 0  # not before the commit
    assert _queued() == 1
    try:
        with transaction.atomic():
            send_after_commit("jackpot.refresh_displays")
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    assert _queued() == 1  # the rolled-back one was never sent


@pytest.mark.parametrize("broker", ["refused", "black_hole"])
def test_a_broker_that_is_down_costs_a_request_well_under_a_second(broker, black_hole):
    """One attempt with fail-fast timeouts, then none while the circuit is open. Timed warm: the
    process's first send also loads Celery's transport, which on a busy machine alone takes
    over a second; the attempt timed is the one after the circuit closes again."""
    port = 1 if broker == "refused" else black_hole.full().port
    probe = run_python(
        "import time, django; django.setup(); import config.celery\n"
        "from core.circuit import redis_circuit\n"
        "from core.dispatch import send\n"
        "first = send('jackpot.refresh_displays')\n"
        "start = time.monotonic(); skipped = send('jackpot.refresh_displays')\n"
        "middle = time.monotonic(); redis_circuit.close()\n"
        "again = send('jackpot.refresh_displays')\n"
        "print(first, skipped, again, middle - start, time.monotonic() - middle)",
        REDIS_URL=f"redis://127.0.0.1:{port}/0",
        DJANGO_SETTINGS_MODULE="config.settings.test",
    )
    first, skipped, again, skipped_s, again_s = probe.stdout.split()
    assert (first, skipped, again) == ("False", "False", "False"), probe.stderr[-2000:]
    assert float(skipped_s) < 0.05  # Redis is skipped while its circuit is open
    assert float(again_s) < 1.0  # one attempt, fail-fast timeouts (0.25 s), no retry


@pytest.mark.django_db
def test_without_a_broker_the_task_runs_here(settings):
    current_app.conf.task_always_eager = True
    try:
        assert send("jackpot.refresh_displays") is True
    finally:
        current_app.conf.task_always_eager = False


def test_an_open_circuit_sends_nothing(empty_queue):
    redis_circuit.failed(RuntimeError("Redis went away a moment ago"))
    assert send("jackpot.refresh_displays") is False
    redis_circuit.close()
    assert _queued() == 0
