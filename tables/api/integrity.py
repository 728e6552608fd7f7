"""The integrity flags over the API: auditors, supervisors and admins read them (tables.integrity
stores them; the pool report shows a pool's latest)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import query_parameters
from config.wire import read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from tables import bodies
from tables.selectors import integrity_flag_page


class IntegrityFlagsView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "supervisor", "admin")]

    @extend_schema(
        operation_id="integrity_flags",
        parameters=query_parameters(bodies.IntegrityFlagQuery),
        responses={200: bodies.IntegrityFlagPage},
        summary="Award counts the exact odds make improbable, newest first (auditors, supervisors)",
    )
    def get(self, request: Request) -> Response:
        page = integrity_flag_page(read_query(bodies.IntegrityFlagQuery, request.query_params))
        return Response(page.model_dump(mode="json"))
