"""A pool's history for auditors: the JSON the auditor's page draws (`/audit/pools/{pool}/`), and
each chart's rows as CSV.

Both read `tables.audit.pool_history` with the same query: a CSV is the chart's rows, its
columns the fields of the row's model (`tables.bodies.history.HISTORY_ROWS`) in their order, its
values as the JSON writes them; so the CSV and the chart never differ by a column or a cent. Text
that a spreadsheet would evaluate (a table named `=HYPERLINK(...)`) is written behind an apostrophe,
as in the payout log (`jackpot.reporting.exports.spreadsheet_safe`).
"""

from __future__ import annotations

import csv
import io

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.replicas import replica_reads
from core.throttling import HeavyReadThrottle
from core.wire import read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.reporting.exports import spreadsheet_safe
from tables.audit.pool_history import pool_history
from tables.bodies.history import HISTORY_ROWS, PoolHistory, PoolHistoryCsvQuery, PoolHistoryQuery

AUDITORS = ("auditor", "admin")


class PoolHistoryView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*AUDITORS)]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="pool_history",
        parameters=query_parameters(PoolHistoryQuery),
        responses={200: PoolHistory},
        summary="A pool's history by club day: meter, stakes, awards against the PAR, jackpots"
        " (auditors)",
    )
    def get(self, request: Request, pool: int) -> Response:
        query = read_query(PoolHistoryQuery, request.query_params)
        with replica_reads():
            history = pool_history(pool, query)
        return Response(history.model_dump(mode="json"))


class PoolHistoryCsvView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*AUDITORS)]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="pool_history_csv",
        parameters=query_parameters(PoolHistoryCsvQuery),
        responses={(200, "text/csv"): OpenApiTypes.STR},
        summary="One chart of a pool's history as CSV: the same rows as the JSON (auditors)",
    )
    def get(self, request: Request, pool: int) -> HttpResponse:
        query = read_query(PoolHistoryCsvQuery, request.query_params)
        with replica_reads():
            history = pool_history(pool, query).model_dump(mode="json")
        columns = list(HISTORY_ROWS[query.chart].model_fields)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(
            {column: spreadsheet_safe(value) for column, value in row.items()}
            for row in history[query.chart.value]
        )
        response = HttpResponse(text.getvalue(), content_type="text/csv; charset=utf-8")
        days = "-".join(day for day in (history["first_day"], history["last_day"]) if day)
        name = f"pool-{pool}-{query.chart.value}{f'-{days}' if days else ''}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
