"""Background exports of the payout log: asked for by the web (`export_job_create`, the task sent
after commit), built by a worker (`export_job_build`, with `jackpot.reporting.exports`' writer,
into EXPORT_DIR), swept by beat (`export_jobs_sweep`).

Invariants:
- Redis never holds the only trace of a job: the sweeper resends a job never sent;
- a build is claimed by one UPDATE (a stalled one taken over after EXPORT_STALL_SECONDS); done,
  failed and expired jobs are never rebuilt;
- each claim writes its own temporary file; only the claim's holder, under the job's row lock,
  renames it to the one final name as it marks the job done: never a half file or two files;
- a file is served only while its job is done, and deleted before the job is marked expired.

The reasons: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, Q
from django.db.models.functions import Now

from core.dispatch import send, send_after_commit
from core.replicas import replica_reads
from jackpot.bodies.awards import AwardFilters
from jackpot.bodies.exports import ExportRequest
from jackpot.models import ExportJob, ExportStatus
from jackpot.money import locks
from jackpot.reporting.exports import (
    PayoutLog,
    award_pages,
    awards_filtered,
    export_file,
    export_file_name,
    highest_award_id,
)

logger = logging.getLogger(__name__)

BUILD_TASK = "jackpot.build_export"
ERROR_CHARACTERS = 2000  # of an error kept on the job


class Built(StrEnum):
    """What one delivery of the build task did."""

    DONE = "done"  # this delivery wrote the file and marked the job done
    LEFT_ALONE = "left_alone"  # finished already, or its builder is alive, or no such job
    TAKEN_OVER = "taken_over"  # another delivery claimed the job while this one wrote
    FAILED = "failed"  # an error, recorded on the job


def _part_path(job_id: int, token: uuid.UUID) -> Path:
    return Path(settings.EXPORT_DIR) / f".awards-export-{job_id}-{token.hex}.part"


def _remove_parts(job_id: int) -> None:
    """The temporary files of the job's earlier attempts (a builder that died left its own)."""
    directory = Path(settings.EXPORT_DIR)
    for part in directory.glob(f".awards-export-{job_id}-*.part"):
        part.unlink(missing_ok=True)


def _ago(seconds: int) -> ExpressionWrapper:
    """The database's clock `seconds` ago: every time a job holds is the database's (`Now()`),
    so builders and the sweeper on other hosts never compare their own clocks with it."""
    return ExpressionWrapper(Now() - timedelta(seconds=seconds), output_field=DateTimeField())


def _in(hours: int) -> ExpressionWrapper:
    return ExpressionWrapper(Now() + timedelta(hours=hours), output_field=DateTimeField())


# --- asking ------------------------------------------------------------------------------------


def export_job_create(*, user: User, filters: ExportRequest) -> ExportJob:
    """Record the job and ask a worker to build it once the row is committed. Never waits on
    Redis: with Redis down the job stays queued and the sweeper sends it."""
    with transaction.atomic():
        job = ExportJob.objects.create(
            requested_by=user,
            filter_pool=filters.pool,
            filter_table=filters.table,
            filter_kind=filters.kind or "",
            filter_status=filters.status or "",
            filter_from=filters.from_,
            filter_to=filters.to,
            up_to_award=highest_award_id(),
        )
        # The database's times, read before the commit: after it, a worker may already have
        # taken the job, and the answer would be its `running` rather than the job as asked.
        job.refresh_from_db()
        send_after_commit(BUILD_TASK, job.pk)
    logger.info("export %s asked for by %s", job.pk, user.get_username())
    return job


# --- building ----------------------------------------------------------------------------------


def export_job_build(*, job_id: int) -> Built:
    """Build the job's file if no one else is, or finished, doing it (see the module's
    invariants); safe to run any number of times, at once or one after the other."""
    token = uuid.uuid4()
    claimed = (
        ExportJob.objects.filter(pk=job_id)
        .filter(
            Q(status=ExportStatus.QUEUED)
            | Q(status=ExportStatus.RUNNING, progress_at__lt=_ago(settings.EXPORT_STALL_SECONDS))
        )
        .update(
            status=ExportStatus.RUNNING,
            builder=token,
            attempts=F("attempts") + 1,
            started_at=Now(),
            progress_at=Now(),
            rows_written=0,
            rows_total=None,
        )
    )
    if not claimed:
        logger.info("export %s left alone: finished, or its builder is alive", job_id)
        return Built.LEFT_ALONE
    job = ExportJob.objects.get(pk=job_id)
    part = _part_path(job_id, token)
    try:
        Path(settings.EXPORT_DIR).mkdir(parents=True, exist_ok=True)
        _remove_parts(job_id)
        return _build(job, token, part)
    except Exception as error:
        with contextlib.suppress(OSError):  # the error may be the directory itself
            part.unlink(missing_ok=True)
        logger.exception("export %s failed", job_id)
        ExportJob.objects.filter(pk=job_id, builder=token, status=ExportStatus.RUNNING).update(
            status=ExportStatus.FAILED,
            error=f"{type(error).__name__}: {error}"[:ERROR_CHARACTERS],
            finished_at=Now(),
            expires_at=_in(settings.EXPORT_RETENTION_HOURS),
        )
        return Built.FAILED


def _progress(job_id: int, token: uuid.UUID, **counts: int) -> bool:
    """Write progress if this build still holds the claim; False: it was taken over."""
    return bool(
        ExportJob.objects.filter(pk=job_id, builder=token, status=ExportStatus.RUNNING).update(
            progress_at=Now(), **counts
        )
    )


def _build(job: ExportJob, token: uuid.UUID, part: Path) -> Built:
    with replica_reads():  # the rows; the progress and the finish are written to the primary
        return _write(job, token, part)


def _write(job: ExportJob, token: uuid.UUID, part: Path) -> Built:
    awards = awards_filtered(AwardFilters.model_construct(**job.filters()))
    total = awards.filter(pk__lte=job.up_to_award).count()
    if not _progress(job.pk, token, rows_total=total):
        return Built.TAKEN_OVER
    log = PayoutLog()
    digest = hashlib.sha256()  # of the whole file, as `sha256sum` gives it
    written = 0
    with part.open("xb") as file:  # "x": a part is this claim's own, never shared

        def put(text: str) -> None:
            data = text.encode()
            file.write(data)
            digest.update(data)

        put(log.header())
        pages = award_pages(awards, up_to=job.up_to_award, page_size=settings.EXPORT_BATCH_SIZE)
        for page in pages:
            put(log.rows(page))
            written += len(page)
            if not _progress(job.pk, token, rows_written=written):
                part.unlink(missing_ok=True)
                logger.warning("export %s: another delivery took it over; stopped", job.pk)
                return Built.TAKEN_OVER
        put(log.digest_line())
        file.flush()
        os.fsync(file.fileno())
    return _finish(job, token, part, written=written, sha256=digest.hexdigest())


def _finish(job: ExportJob, token: uuid.UUID, part: Path, *, written: int, sha256: str) -> Built:
    """Put the file under its final name and mark the job done, both under the job's row lock
    and only while this build holds the claim."""
    final = export_file(job.pk)
    with transaction.atomic():
        held = locks.export_jobs(
            ExportJob.objects.filter(pk=job.pk, builder=token, status=ExportStatus.RUNNING)
        ).exists()
        if not held:
            part.unlink(missing_ok=True)
            return Built.TAKEN_OVER
        os.replace(part, final)  # atomic: the final name is the whole file or the former one
        _sync_directory(final.parent)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.DONE,
            file_path=str(final),
            size_bytes=final.stat().st_size,
            sha256=sha256,
            rows_written=written,
            rows_total=written,
            progress_at=Now(),
            finished_at=Now(),
            expires_at=_in(settings.EXPORT_RETENTION_HOURS),
        )
    logger.info("export %s done: %s rows", job.pk, written)
    return Built.DONE


def _sync_directory(directory: Path) -> None:
    """The rename itself on disk, not only the file's bytes."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# --- sweeping ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Swept:
    resent: list[int] = field(default_factory=list)  # queued too long, or builder dead
    expired: list[int] = field(default_factory=list)  # past retention: file deleted


def export_jobs_sweep() -> Swept:
    """Send again the jobs still queued after EXPORT_RESEND_AFTER_SECONDS and the running ones
    whose builder wrote nothing for EXPORT_STALL_SECONDS (each at most once per such period:
    `sent_at`); delete the files past their retention and mark their jobs expired."""
    swept = Swept()
    resend = settings.EXPORT_RESEND_AFTER_SECONDS
    stall = settings.EXPORT_STALL_SECONDS
    waiting = Q(status=ExportStatus.QUEUED, sent_at__lt=_ago(resend)) | Q(
        status=ExportStatus.RUNNING,
        progress_at__lt=_ago(stall),
        sent_at__lt=_ago(stall),
    )
    for job_id in ExportJob.objects.filter(waiting).order_by("pk").values_list("pk", flat=True):
        # The UPDATE is the claim to send: two sweepers never both send one job in a period.
        if ExportJob.objects.filter(waiting, pk=job_id).update(sent_at=Now()):
            send(BUILD_TASK, job_id)
            swept.resent.append(job_id)
    finished = (ExportStatus.DONE, ExportStatus.FAILED)
    past = ExportJob.objects.filter(status__in=finished, expires_at__lte=Now()).order_by("pk")
    for job_id in past.values_list("pk", flat=True):
        # The file first: a job never says expired while its file is still on disk. Its name
        # from its id, never from its row; unlink removes a link planted there, not its target.
        (Path(settings.EXPORT_DIR) / export_file_name(job_id)).unlink(missing_ok=True)
        _remove_parts(job_id)
        if ExportJob.objects.filter(pk=job_id, status__in=finished).update(
            status=ExportStatus.EXPIRED
        ):
            swept.expired.append(job_id)
    if swept.resent or swept.expired:
        logger.info("exports swept: sent again %s, expired %s", swept.resent, swept.expired)
    return swept
