"""The session registers for auditors, managers and supervisors: model 8 (the stakes withheld)
and model 8 ter (the amounts displayed) for a range of club days, as JSON, CSV or PDF.

Thin views: the rows, the CSV and the PDF are `tables.club.registers`'; read on the replica.
Whoever configures (the admin role) reads neither: the registers are the money's people's.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.replicas import replica_reads
from core.throttling import HeavyReadThrottle
from core.wire import Body, read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from tables.bodies.registers import (
    MAX_DAYS,
    DisplayedRegister,
    SessionRegisterQuery,
    WithheldRegister,
)
from tables.club import registers

READERS = ("auditor", "manager", "supervisor")

_REFUSED = OpenApiResponse(
    description=f"`invalid_parameter` naming it: from or to missing or not a date (YYYY-MM-DD), "
    f"to before from or more than {MAX_DAYS} club days after it, a format other than json, csv "
    "or pdf, a lang other than fr or en"
)


class _RegisterView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*READERS)]
    throttle_classes = [HeavyReadThrottle]

    #: The register's name in its downloads' file names.
    name: str

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `format` is the register's own parameter (json, csv or pdf), not DRF's renderer
        # override, which would answer 404 for a format no renderer has.
        return super().perform_content_negotiation(request, force=True)

    def content(self, query: SessionRegisterQuery) -> str | bytes:
        """The register in the query's format."""
        raise NotImplementedError

    def get(self, request: Request) -> HttpResponse:
        query = read_query(SessionRegisterQuery, request.query_params)
        with replica_reads():
            content = self.content(query)
        response = HttpResponse(content, content_type=CONTENT_TYPES[query.format])
        if query.format != "json":
            suffix = "" if query.format == "csv" else f"-{query.lang}"
            file = f"{self.name}-{query.from_:%Y%m%d}-{query.to:%Y%m%d}{suffix}.{query.format}"
            response["Content-Disposition"] = f'attachment; filename="{file}"'
        response["Cache-Control"] = "no-store"
        return response


CONTENT_TYPES = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "pdf": "application/pdf",
}


def _responses(body: type[Body]) -> dict[Any, Any]:
    return {
        200: body,
        (200, "text/csv"): OpenApiTypes.STR,
        (200, "application/pdf"): OpenApiTypes.BINARY,
        400: _REFUSED,
    }


class WithheldRegisterView(_RegisterView):
    """Register model 8: the progressive stakes withheld per closed session and table."""

    name = "register-8-withheld"

    def content(self, query: SessionRegisterQuery) -> str | bytes:
        register = registers.withheld_register(query.from_, query.to)
        if query.format == "csv":
            return registers.withheld_csv(register)
        if query.format == "pdf":
            return registers.withheld_pdf(register, query.lang)
        return register.model_dump_json()

    @extend_schema(
        operation_id="register_withheld",
        parameters=query_parameters(SessionRegisterQuery),
        responses=_responses(WithheldRegister),
        summary="Register model 8: the stakes withheld per session and table, with the drop "
        "counts, for a range of club days, as JSON, CSV or PDF (auditors, managers, supervisors)",
    )
    def get(self, request: Request) -> HttpResponse:
        return super().get(request)


class DisplayedRegisterView(_RegisterView):
    """Register model 8 ter: the amount each pool's sign displayed at each session's end."""

    name = "register-8ter-displayed"

    def content(self, query: SessionRegisterQuery) -> str | bytes:
        register = registers.displayed_register(query.from_, query.to)
        if query.format == "csv":
            return registers.displayed_csv(register)
        if query.format == "pdf":
            return registers.displayed_pdf(register, query.lang)
        return register.model_dump_json()

    @extend_schema(
        operation_id="register_displayed",
        parameters=query_parameters(SessionRegisterQuery),
        responses=_responses(DisplayedRegister),
        summary="Register model 8 ter: the amount displayed per session and pool, for a range "
        "of club days, as JSON, CSV or PDF (auditors, managers, supervisors)",
    )
    def get(self, request: Request) -> HttpResponse:
        return super().get(request)
