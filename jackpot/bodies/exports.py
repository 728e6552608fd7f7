"""A background export's request and job (`jackpot.reporting.export_jobs`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from core.wire import Body, Instant, TimeText
from jackpot.bodies.common import ENUM_TEXT, Id
from jackpot.models import AwardKind, AwardStatus, ExportStatus

FilterId = Annotated[int, Field(ge=0, le=2**62)]  # as in the query string (QueryId)


class ExportRequest(Body):
    """The filters of a background export, as a JSON object: those of `export.csv` (on when the
    award was won; all optional)."""

    model_config = ConfigDict(serialize_by_alias=True)  # `from` in answers too

    status: Annotated[AwardStatus, ENUM_TEXT] | None = None
    pool: FilterId | None = None
    table: FilterId | None = None
    kind: Annotated[AwardKind, ENUM_TEXT] | None = None
    from_: Annotated[TimeText | None, Field(alias="from", description="ISO 8601, included")] = None
    to: Annotated[TimeText | None, Field(description="ISO 8601 time, excluded")] = None


class ExportJobBody(Body):
    """A background export: its request, its progress, and its file once done."""

    model_config = ConfigDict(title="ExportJob")  # its name in the schema (core.openapi)

    id: Id
    status: ExportStatus
    filters: ExportRequest
    requested_by: str
    rows_written: Annotated[int, Field(ge=0)]
    rows_total: Annotated[int, Field(ge=0)] | None = Field(
        description="the awards to write, known once a worker has started"
    )
    size_bytes: Annotated[int, Field(ge=0)] | None = Field(description="the file's, once done")
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = Field(
        description="the SHA-256 of the whole file, once done (the download's X-Content-SHA256)"
    )
    error: str | None = Field(description="why it failed")
    created_at: Instant
    started_at: Instant | None
    finished_at: Instant | None
    expires_at: Instant | None = Field(description="when the file is deleted")
    url: str = Field(description="this job (poll it)")
    download_url: str | None = Field(description="the file, once done")
