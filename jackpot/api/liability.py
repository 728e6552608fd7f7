"""A pool's period-end liability for auditors and admins: JSON, CSV or PDF (`?format=`).

A thin view: the figures are `jackpot.reporting.liability`'s, read on the standby when one serves
(`core.replicas.replica_reads`), written by `jackpot.reporting.statements`. `format` is the
statement's, not DRF's renderer override: answers and errors are JSON whatever it says
(`_StatementFormat`).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from core.openapi import query_parameters
from core.replicas import replica_reads
from core.throttling import HeavyReadThrottle
from core.wire import read_query
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.liability import Liability, LiabilityQuery
from jackpot.reporting.liability import liability_statement
from jackpot.reporting.statements import liability_csv, liability_pdf


class _StatementFormat(BaseContentNegotiation):
    """No renderer chosen by `?format=` (DRF's URL_FORMAT_OVERRIDE): it names the statement's."""

    def select_parser(self, request: Any, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class PoolLiabilityView(StaffView):
    permission_classes = [require_roles("auditor", "admin")]
    throttle_classes = [HeavyReadThrottle]
    content_negotiation_class = _StatementFormat

    @extend_schema(
        operation_id="pool_liability",
        parameters=query_parameters(LiabilityQuery),
        responses={
            (200, "application/json"): Liability,
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/pdf"): OpenApiTypes.BINARY,
            400: OpenApiResponse(
                description="`invalid_parameter`: `at` in the future, `at` or `from` before"
                " 1970-01-01T00:00:00Z, `from` later than `at`, or a malformed one (`param`"
                " names it)"
            ),
        },
        summary="What the club owes on a pool at an instant, from the journal alone: meter,"
        " seed, reserve, awards pending and payable, the period's awards, the journal's"
        " position (auditors)",
    )
    def get(self, request: Request, pool: int) -> Response | HttpResponse:
        query = read_query(LiabilityQuery, request.query_params)
        with replica_reads():
            liability = liability_statement(pool, query, now=timezone.now())
        if query.format == "json":
            return Response(liability.model_dump(mode="json"))
        stamp = liability.at.strftime("%Y%m%dT%H%M%SZ")
        name = f"liability-pool-{liability.pool}-{stamp}.{query.format}"
        if query.format == "csv":
            body, media = liability_csv(liability), "text/csv; charset=utf-8"
        else:
            body, media = liability_pdf(liability), "application/pdf"
        response = HttpResponse(body, content_type=media)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
