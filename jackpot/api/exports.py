"""The payout log exported in the background, for ranges too long for `export.csv` (auditors).

Thin views: the job is written by `jackpot.reporting.export_jobs` and built by a worker; its reads
are in `jackpot.selectors`. The file is streamed from disk, never read whole, with its SHA-256.
"""

from __future__ import annotations

import base64

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.throttling import HeavyReadThrottle
from core.wire import read
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.exports import ExportJobBody, ExportRequest
from jackpot.bodies.render import export_job_body
from jackpot.models import ExportJob
from jackpot.reporting.export_jobs import export_job_create
from jackpot.selectors import export_job_file, export_job_get

AUDITORS = ("auditor", "admin")


def _answer(job: ExportJob) -> ExportJobBody:
    return export_job_body(
        job,
        url=reverse("award-export-job", args=[job.pk]),
        download_url=reverse("award-export-download", args=[job.pk]),
    )


class ExportJobListView(StaffView):
    permission_classes = [require_roles(*AUDITORS)]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="award_export_start",
        request=ExportRequest,
        responses={202: ExportJobBody},
        summary="Start a background export of the payout log (auditors)",
    )
    def post(self, request: Request) -> Response:
        # No body at all (an empty QueryDict) is an empty object: every award. An empty JSON
        # array is not an object, and is refused as such.
        data = request.data
        filters = read(ExportRequest, {} if isinstance(data, dict) and not data else data)
        answer = _answer(export_job_create(user=self.staff(request), filters=filters))
        body = answer.model_dump(mode="json")
        return Response(body, status=202, headers={"Location": answer.url})


class ExportJobView(StaffView):
    permission_classes = [require_roles(*AUDITORS)]

    @extend_schema(
        operation_id="award_export_get",
        responses={200: ExportJobBody},
        summary="A background export: its status, progress, and SHA-256 once done (auditors)",
    )
    def get(self, request: Request, export: int) -> Response:
        return Response(_answer(export_job_get(export)).model_dump(mode="json"))


class ExportJobDownloadView(StaffView):
    permission_classes = [require_roles(*AUDITORS)]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="award_export_download",
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            410: OpenApiResponse(description="Gone: the file was deleted after its retention"),
        },
        summary="A done export's CSV, streamed from its file, with its SHA-256 (auditors)",
    )
    def get(self, request: Request, export: int) -> FileResponse:
        job, path = export_job_file(export)
        response = FileResponse(
            path.open("rb"),
            content_type="text/csv; charset=utf-8",
            as_attachment=True,
            filename=f"awards-export-{job.pk}.csv",
        )
        # The digest the worker computed as it wrote the file, from the job's record: a copy
        # changed on disk since does not match it.
        response["X-Content-SHA256"] = job.sha256
        digest = base64.b64encode(bytes.fromhex(job.sha256)).decode()
        response["Repr-Digest"] = f"sha-256=:{digest}:"  # RFC 9530
        return response
