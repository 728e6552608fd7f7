"""Export jobs: a payout log asked for over the API and written to a file by a Celery worker.

A job is the record of one request (who asked, the filters of the synchronous export) and of the
file that answers it (path, size, SHA-256). Its life, written by `jackpot.reporting.export_jobs`
only:

    queued -> running -> done -> expired
                      -> failed -> expired

- `queued`: the row is committed and the task `jackpot.build_export` sent (or not: Redis was
  down; `sent_at` says when it was last sent, and beat's sweeper sends it again).
- `running`: a builder holds the claim (`builder`, a fresh token per attempt) and writes
  `rows_written` and `progress_at` after each batch. A builder that stops writing progress for
  EXPORT_STALL_SECONDS is taken to be dead: a later delivery claims the job anew and rebuilds
  the file from scratch; the old builder, should it wake, finds its claim gone and stops.
- `done`: the file is complete under its final name; `expires_at` is when the sweeper deletes it.
- `failed`: the builder met an error (`error`); nothing is served; it expires like a done job.
- `expired`: the file is deleted; the row stays, so the request and the file's SHA-256 stay on
  record.

`up_to_award` is the highest award id when the job was asked for: the export holds the awards
that existed then, however late it is built or rebuilt.
"""

from datetime import datetime
from typing import TypedDict

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from jackpot.models.awards import AwardKind, AwardStatus


class ExportFilters(TypedDict):
    """A job's filters by their names in `AwardFilters` and `ExportRequest`."""

    status: AwardStatus | None
    pool: int | None
    table: int | None
    kind: AwardKind | None
    from_: datetime | None
    to: datetime | None


class ExportStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    EXPIRED = "expired", "Expired (file deleted)"


class ExportJob(models.Model):
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    # The filters of the synchronous export (jackpot.bodies.awards.AwardFilters); null: none.
    filter_pool = models.BigIntegerField(null=True, blank=True)
    filter_table = models.BigIntegerField(null=True, blank=True)
    filter_kind = models.CharField(max_length=20, blank=True, default="")
    filter_status = models.CharField(max_length=10, blank=True, default="")
    filter_from = models.DateTimeField(null=True, blank=True, help_text="included")
    filter_to = models.DateTimeField(null=True, blank=True, help_text="excluded")
    up_to_award = models.BigIntegerField(help_text="The highest award id when it was asked for.")

    status = models.CharField(
        max_length=8, choices=ExportStatus.choices, default=ExportStatus.QUEUED
    )
    rows_written = models.BigIntegerField(default=0)
    rows_total = models.BigIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Builds started (claims).")
    builder = models.UUIDField(null=True, blank=True, help_text="The claim of the build running.")

    file_path = models.CharField(max_length=500, blank=True, default="")
    size_bytes = models.BigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    error = models.TextField(blank=True, default="")

    # Every time of a job is the database's clock (Now()): builders and sweepers on other hosts
    # compare them with that clock only (jackpot.reporting.export_jobs).
    created_at = models.DateTimeField(db_default=Now())
    sent_at = models.DateTimeField(db_default=Now(), help_text="When the build was last sent.")
    started_at = models.DateTimeField(null=True, blank=True)
    progress_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # Not rows_written <= rows_total: an award can come into a status filter between the
            # count and its page (a done job's total is the rows written).
            models.CheckConstraint(
                condition=Q(rows_written__gte=0)
                & (Q(rows_total__isnull=True) | Q(rows_total__gte=0)),
                name="export_progress_counts",
            ),
            # A done job always names its file and the file's digest.
            models.CheckConstraint(
                condition=~Q(status=ExportStatus.DONE)
                | (~Q(file_path="") & Q(sha256__regex=r"^[0-9a-f]{64}$") & Q(size_bytes__gte=0)),
                name="export_done_has_file",
            ),
        ]
        indexes = [models.Index(fields=["status", "sent_at"])]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status})"

    def filters(self) -> ExportFilters:
        """The filters by their names in `AwardFilters` and `ExportRequest` (both take them)."""
        return ExportFilters(
            status=AwardStatus(self.filter_status) if self.filter_status else None,
            pool=self.filter_pool,
            table=self.filter_table,
            kind=AwardKind(self.filter_kind) if self.filter_kind else None,
            from_=self.filter_from,
            to=self.filter_to,
        )
