"""Awards for the people around the progressive: supervisors move them on, auditors read them.

Thin views: the checks and the money are in `jackpot.awards`; reads in `jackpot.selectors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import ApiError
from jackpot import awards
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.api.parameters import TIME_RANGE, query_parameters
from jackpot.exports import award_rows
from jackpot.models import Award
from jackpot.render import award_json
from jackpot.selectors import award_list, awards_filtered

BODIES = {
    "verify": inline_serializer("AwardNote", {"note": serializers.CharField(max_length=500)}),
    "void": inline_serializer("AwardReason", {"reason": serializers.CharField(max_length=500)}),
}


class StaffView(APIView):
    authentication_classes = STAFF_AUTHENTICATION

    def staff(self, request: Request) -> User:
        user = request.user
        assert isinstance(user, User)
        return user


class AwardListView(StaffView):
    permission_classes = [require_roles("supervisor", "auditor", "admin")]

    @extend_schema(
        operation_id="award_list",
        parameters=[
            OpenApiParameter("status", str, description="pending, verified, approved, paid, void"),
            OpenApiParameter("pool", int),
            OpenApiParameter("table", int),
            OpenApiParameter("kind", str),
            OpenApiParameter("limit", int, description="1 to 200 (default 50)"),
            OpenApiParameter("offset", int),
        ],
        responses={200: OpenApiTypes.OBJECT},
        summary="Awards, newest first, filtered (supervisors, auditors)",
    )
    def get(self, request: Request) -> Response:
        return Response(award_list(request.query_params))


class AwardExportView(StaffView):
    permission_classes = [require_roles("auditor", "admin")]

    @extend_schema(
        operation_id="award_export",
        parameters=query_parameters(
            *TIME_RANGE,
            ("pool", "pool id"),
            ("table", "table id"),
            ("kind", "award kind"),
            ("status", "award status"),
        ),
        responses={(200, "text/csv"): OpenApiTypes.STR},
        summary="The payout log as CSV, streamed, ending with a SHA-256 digest (auditors)",
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        rows = award_rows(awards_filtered(request.query_params))
        response = StreamingHttpResponse(rows, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="awards.csv"'
        return response


def _step(name: str, run: Callable[[int, User, dict[str, Any]], Award], roles: tuple[str, ...]):
    class StepView(StaffView):
        permission_classes = [require_roles(*roles)]

        @extend_schema(
            operation_id=f"award_{name}",
            request=BODIES.get(name),
            responses={200: OpenApiTypes.OBJECT},
            summary=f"{name.capitalize()} an award (supervisors)",
        )
        def post(self, request: Request, award: int) -> Response:
            body = request.data if request.data else {}
            if not isinstance(body, dict):
                raise ApiError("invalid_request", "the body must be a JSON object", param=None)
            return Response(award_json(run(award, self.staff(request), body)))

    StepView.__name__ = f"Award{name.capitalize()}View"
    return StepView


SUPERVISORS = ("supervisor", "admin")
AwardVerifyView = _step(
    "verify",
    lambda a, u, b: awards.award_verify(award_id=a, user=u, note=b.get("note")),
    SUPERVISORS,
)
AwardApproveView = _step(
    "approve", lambda a, u, b: awards.award_approve(award_id=a, user=u), SUPERVISORS
)
AwardPayView = _step("pay", lambda a, u, b: awards.award_pay(award_id=a, user=u), SUPERVISORS)
AwardVoidView = _step(
    "void",
    lambda a, u, b: awards.award_void(award_id=a, user=u, reason=b.get("reason")),
    SUPERVISORS,
)
