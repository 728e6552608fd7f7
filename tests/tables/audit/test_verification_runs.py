"""A full verification asked for over the API runs on a real Celery worker (over the real Redis),
is polled, stores its checkpoint; a run whose worker died is taken over; Redis down at the POST,
the sweeper sends it."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jackpot.models import AuditEvent, Checkpoint, Verification, VerificationStatus
from tables.audit.reconciliation import reconcile
from tables.audit.verification_jobs import heartbeat, verification_run
from tests.jackpot.tamper import play_rounds
from tests.staff import person, token_client
from tests.workers import wait_for


def _auditor(django_user_model) -> Client:
    return token_client(person("ida", "auditor"))


def test_a_full_verification_asked_for_runs_on_a_real_worker_with_progress(
    celery_worker, django_user_model
):
    play_rounds()
    auditor = _auditor(django_user_model)
    events = AuditEvent.objects.count()
    celery_worker()

    started = auditor.post("/api/v1/journal/verify")
    assert started.status_code == 202
    job = started.json()
    assert job["events_total"] == events

    def finished() -> dict | None:
        body = auditor.get(job["url"]).json()
        return body if body["status"] == "done" else None

    wait_for(finished, within_s=30, what="the worker's verdict")
    done = finished()
    assert (done["ok"], done["full"], done["started_from"]) == (True, True, None)
    assert (done["events_checked"], done["problem_count"]) == (events, 0)
    assert Checkpoint.objects.get(pk=done["checkpoint"]).full
    assert heartbeat(job["id"])["runner"]  # the worker showed its progress as it went
    assert auditor.get("/api/v1/journal/verify").json()["latest_full"] == done


@pytest.mark.django_db
def test_a_run_whose_worker_died_is_taken_over_and_a_live_one_is_left_alone(settings):
    play_rounds()
    job = Verification.objects.create(
        full=True,
        trigger="request",
        status=VerificationStatus.RUNNING,
        created_at=timezone.now(),
        started_at=timezone.now(),
        runner=uuid.uuid4(),
        attempts=1,
    )
    # Running since a moment, no heartbeat yet: alive, left alone.
    assert verification_run(job.pk) is None
    # Its worker was killed long ago (no heartbeat for longer than the stall): run again.
    Verification.objects.filter(pk=job.pk).update(
        started_at=timezone.now() - timedelta(seconds=settings.VERIFICATION_STALL_SECONDS + 1)
    )
    run = verification_run(job.pk)
    assert run is not None and (run.status, run.ok, run.attempts) == ("done", True, 2)
    assert verification_run(job.pk) is None  # done: a late delivery does nothing


@pytest.mark.django_db
def test_the_daily_reconciliation_is_a_full_run_recorded_as_a_job():
    floor = play_rounds()
    reconcile()  # the scheduled run: routine, from no checkpoint yet
    routine = Verification.objects.latest("pk")
    assert (routine.full, routine.trigger, routine.ok) == (False, "reconciliation", True)
    floor.uth[0].post("/rounds/r-2/void", {"reason": "misdeal"})
    report = reconcile(run_key="daily:2026-12-01", daily=True)
    daily = Verification.objects.latest("pk")
    assert report.ok and (daily.full, daily.trigger, daily.status) == (True, "daily", "done")
    assert daily.events_checked == AuditEvent.objects.exclude(chain="checkpoints").count() + 1
    assert Checkpoint.objects.get(pk=daily.checkpoint_id).full
