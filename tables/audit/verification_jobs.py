"""Verification runs: each routine run recorded, and full runs as background jobs with progress.

- `run_routine(trigger)`: a routine verification (`tables.audit.verification.verify_routine`), its
  checkpoint stored when it passed and new, and its record (`jackpot.models.Verification`,
  `done`); the start-up gate calls it (the reconciliation records its own run with `record`).
- `verification_request(user)`: a full verification asked for (`POST /api/v1/journal/verify`):
  a `queued` job, sent to a worker once committed (`tables.verify_journal`); never waits on
  Redis: with Redis down the job stays queued and the sweeper (`verification_sweep`, beat) sends
  it again.
- `begin(trigger)`: a full run starting now in the caller's process (the daily reconciliation,
  already on a worker), recorded as a running job with its progress like one asked for.
- `verification_run(job_id)`: a worker's run of a job, from the first event, in one read-only
  snapshot. The claim (`runner`, a fresh token per attempt) goes with a heartbeat in the cache
  after each batch (`events_checked` so far): the snapshot's transaction cannot write progress
  to its own rows, and progress is no money. A run whose heartbeat is older than
  VERIFICATION_STALL_SECONDS is taken to be dead (its worker was killed; the task's redelivery
  or the sweeper runs it again from the start); the old runner, should it wake, finds its claim
  gone and writes nothing. Safe to run any number of times.
The verdict is written once, by the run holding the claim; the checkpoint it passed with too.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from core.dispatch import send, send_after_commit
from core.replicas import replica_reads
from jackpot.audit.verification import Progress, VerificationReport
from jackpot.models import AuditChain, Verification, VerificationStatus, VerificationTrigger
from jackpot.money import locks
from tables.audit.verification import keep_checkpoint, verify_full, verify_routine

logger = logging.getLogger(__name__)

RUN_TASK = "tables.verify_journal"
#: Seconds between two heartbeats of a run at most (a batch takes far less).
_BEAT_EVERY = 2.0


def _heartbeat_key(job_id: int) -> str:
    return f"verification:{job_id}:heartbeat"


def heartbeat(job_id: int) -> dict[str, Any] | None:
    """A running job's last heartbeat (`events`, `transfers`, `at`, `runner`), or None."""
    try:
        found = cache.get(_heartbeat_key(job_id))
    except Exception:  # the cache is down: progress unknown, nothing else changes
        return None
    return found if isinstance(found, dict) else None


def _beat(job_id: int, runner: uuid.UUID, events: int, transfers: int) -> None:
    try:
        cache.set(
            _heartbeat_key(job_id),
            {"events": events, "transfers": transfers, "at": time.time(), "runner": str(runner)},
            timeout=settings.VERIFICATION_STALL_SECONDS * 2,
        )
    except Exception:  # the cache is down: the run goes on without showing its progress
        logger.warning("verification %s: progress not shown (the cache is down)", job_id)


def record(
    report: VerificationReport,
    *,
    trigger: VerificationTrigger,
    started: datetime,
) -> Verification:
    """Record a finished run (routine or full, run in the caller's process)."""
    return Verification.objects.create(
        full=report.full,
        trigger=trigger,
        status=VerificationStatus.DONE,
        created_at=started,
        started_at=started,
        finished_at=timezone.now(),
        attempts=1,
        **_verdict(report),
    )


def _verdict(report: VerificationReport) -> dict[str, Any]:
    return {
        "events_checked": report.events,
        "transfers_checked": report.transfers,
        "chains": report.chains,
        "started_from_id": report.started_from,
        "checkpoint_id": report.checkpoint,
        "ok": report.ok,
        "broken_chain": report.broken_chain or "",
        "broken_sequence": report.broken_sequence,
        "problem_count": len(report.problems),
        "problems": report.problems[: Verification.PROBLEMS_KEPT],
    }


def run_routine(trigger: VerificationTrigger) -> VerificationReport:
    """A routine verification, its checkpoint and its record (the module's docstring)."""
    started = timezone.now()
    report = verify_routine()
    keep_checkpoint(report)
    record(report, trigger=trigger, started=started)
    return report


def _events_total() -> int:
    """About how many events a full run reads: every chain's head position."""
    return sum(AuditChain.objects.values_list("sequence", flat=True))


def verification_request(
    *, user: User | None, trigger: VerificationTrigger = VerificationTrigger.REQUEST
) -> Verification:
    """Queue a full verification and ask a worker to run it once the row is committed."""
    with transaction.atomic():
        job = Verification.objects.create(
            full=True,
            trigger=trigger,
            requested_by=user,
            created_at=timezone.now(),
            events_total=_events_total(),
        )
        send_after_commit(RUN_TASK, job.pk)
    logger.info("full verification %s asked for (%s)", job.pk, trigger)
    return job


def _stalled(job: Verification) -> bool:
    stall = settings.VERIFICATION_STALL_SECONDS
    beat = heartbeat(job.pk)
    if beat is not None:
        return bool(time.time() - float(beat["at"]) > stall)
    return job.started_at is None or timezone.now() - job.started_at > timedelta(seconds=stall)


@dataclass(frozen=True)
class Claim:
    """A full run under way: its job, and the token that says this run holds it."""

    job_id: int
    runner: uuid.UUID

    def progress(self) -> Progress:
        """A heartbeat in the cache at most every `_BEAT_EVERY` seconds (the walk's callback)."""
        _beat(self.job_id, self.runner, 0, 0)
        last = [time.monotonic()]

        def beat(events: int, transfers: int) -> None:
            if time.monotonic() - last[0] >= _BEAT_EVERY:
                last[0] = time.monotonic()
                _beat(self.job_id, self.runner, events, transfers)

        return beat

    def _mine(self) -> QuerySet[Verification]:
        return Verification.objects.filter(
            pk=self.job_id, runner=self.runner, status=VerificationStatus.RUNNING
        )

    def failed(self, error: Exception) -> None:
        logger.error("full verification %s could not run: %s", self.job_id, error)
        self._mine().update(
            status=VerificationStatus.FAILED,
            finished_at=timezone.now(),
            error=f"{type(error).__name__}: {error}"[:2000],
        )

    def finish(self, report: VerificationReport) -> bool:
        """Store the checkpoint and the verdict, if this run still holds the job; False: it
        was taken over, and this run's verdict is dropped."""
        with transaction.atomic():
            if not locks.verification_jobs(self._mine()).exists():
                logger.info("full verification %s: taken over; verdict dropped", self.job_id)
                return False
            keep_checkpoint(report)
            self._mine().update(
                status=VerificationStatus.DONE, finished_at=timezone.now(), **_verdict(report)
            )
        if not report.ok:
            logger.error("full verification %s FAILED: %s", self.job_id, report.problems[0])
        return True


def begin(trigger: VerificationTrigger) -> Claim:
    """A full run that starts now in this process (the daily reconciliation's): its job,
    running, held by the caller."""
    runner = uuid.uuid4()
    now = timezone.now()
    job = Verification.objects.create(
        full=True,
        trigger=trigger,
        status=VerificationStatus.RUNNING,
        created_at=now,
        started_at=now,
        runner=runner,
        attempts=1,
        events_total=_events_total(),
    )
    return Claim(job.pk, runner)


def verification_run(job_id: int) -> Verification | None:
    """Run a queued job, or take over one whose runner died; None: left alone (finished, or
    its runner is alive), or taken over while it ran."""
    job = Verification.objects.filter(pk=job_id, full=True).first()
    if job is None or job.status in (VerificationStatus.DONE, VerificationStatus.FAILED):
        return None
    if job.status == VerificationStatus.RUNNING and not _stalled(job):
        return None
    claim = Claim(job_id, uuid.uuid4())
    claimed = Verification.objects.filter(
        pk=job_id, status=job.status, runner=job.runner, attempts=job.attempts
    ).update(
        status=VerificationStatus.RUNNING,
        runner=claim.runner,
        attempts=F("attempts") + 1,
        started_at=timezone.now(),
    )
    if not claimed:  # another delivery claimed it first
        return None
    try:
        with replica_reads():  # the walk reads; the verdict and checkpoint are written after
            report = verify_full(progress=claim.progress())
    except Exception as error:
        claim.failed(error)
        return Verification.objects.get(pk=job_id)
    return Verification.objects.get(pk=job_id) if claim.finish(report) else None


def verification_sweep() -> list[int]:
    """Send again the jobs Redis never got (queued for a minute) and those whose runner died
    (beat). Returns their ids."""
    waiting = Verification.objects.filter(
        Q(status=VerificationStatus.QUEUED, created_at__lt=timezone.now() - timedelta(seconds=60))
        | Q(status=VerificationStatus.RUNNING),
        full=True,
    )
    resent = []
    for job in waiting:
        due = job.status == VerificationStatus.QUEUED or _stalled(job)
        if due and send(RUN_TASK, job.pk):
            resent.append(job.pk)
    return resent
