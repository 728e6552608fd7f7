"""The integrity flags over the API: auditors, supervisors and admins read them
(tables.audit.integrity stores them; the pool report shows a pool's latest); and a pool's void watch
(tables.selectors.voids): its
voids by table and shift over the window the check tests, which the auditor's page draws."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.wire import read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from tables.bodies.integrity import IntegrityFlagPage, IntegrityFlagQuery, VoidWatch
from tables.selectors.integrity import integrity_flag_page, void_watch


class IntegrityFlagsView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "supervisor", "admin")]

    @extend_schema(
        operation_id="integrity_flags",
        parameters=query_parameters(IntegrityFlagQuery),
        responses={200: IntegrityFlagPage},
        summary="Award counts the exact odds make improbable, newest first (auditors, supervisors)",
    )
    def get(self, request: Request) -> Response:
        page = integrity_flag_page(read_query(IntegrityFlagQuery, request.query_params))
        return Response(page.model_dump(mode="json"))


class PoolVoidsView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "supervisor", "admin")]

    @extend_schema(
        operation_id="pool_voids",
        responses={200: VoidWatch},
        summary="A pool's voids by table and shift over the void watch's window, and its void"
        " flags (auditors, supervisors)",
    )
    def get(self, request: Request, pool: int) -> Response:
        return Response(void_watch(pool).model_dump(mode="json"))
