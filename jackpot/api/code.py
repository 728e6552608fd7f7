"""Which code runs, for auditors (compliance 59): both digests and the gate's last check, read
by `jackpot.audit.code`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.audit.code import code_status
from jackpot.bodies.code import CodeDigest


class CodeDigestView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "admin", "manager")]

    @extend_schema(
        operation_id="code_digest",
        responses={200: CodeDigest},
        summary="The approved and the installed code's digests, and the gate's last check "
        "(auditors, admins, managers)",
        description="The installed digest is computed once per process over its files "
        "(`manage.py code_digest --manifest`); the last check is the newest `code.verified` or "
        "`code.mismatch` (SE21) event the start-up gate recorded in the journal.",
    )
    def get(self, request: Request) -> Response:
        return Response(code_status().model_dump(mode="json"))
