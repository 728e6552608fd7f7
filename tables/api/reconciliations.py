"""The reconciliation reports over the API: auditors, supervisors and admins read them
(tables.audit.reconciliation stores them on beat's schedule; the pool report shows the latest's
status)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.wire import read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.bodies.pools import PoolReport
from jackpot.selectors import pool_get
from tables.audit.verification import pool_report
from tables.bodies.reconciliation import ReconciliationBody, ReconciliationPage, ReconciliationQuery
from tables.selectors.reconciliation import reconciliation_get, reconciliation_page

READERS = ("auditor", "supervisor", "admin")


class ReconciliationsView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*READERS)]

    @extend_schema(
        operation_id="reconciliations",
        parameters=query_parameters(ReconciliationQuery),
        responses={200: ReconciliationPage},
        summary="Scheduled reconciliation reports, newest first (auditors, supervisors)",
    )
    def get(self, request: Request) -> Response:
        page = reconciliation_page(read_query(ReconciliationQuery, request.query_params))
        return Response(page.model_dump(mode="json"))


class ReconciliationView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*READERS)]

    @extend_schema(
        operation_id="reconciliation_get",
        responses={200: ReconciliationBody},
        summary="One reconciliation report: figures per pool and every problem (auditors)",
    )
    def get(self, request: Request, reconciliation: int) -> Response:
        return Response(reconciliation_get(reconciliation).model_dump(mode="json"))


class PoolReportView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "supervisor", "admin")]

    @extend_schema(
        operation_id="pool_report",
        responses={200: PoolReport},
        summary="A pool's reconciliation: balances, stakes, awards by kind, hits, meter identity",
    )
    def get(self, request: Request, pool: int) -> Response:
        return Response(pool_report(pool_get(pool)).model_dump(mode="json"))
