"""The journal's verification for auditors: what it last found, and a full run asked for.

Thin views. Nothing here reads the journal: `GET /journal/verify` answers from the recorded runs
(`jackpot.models.Verification`), and `POST` queues a full run that a worker does in the
background (`tables.audit.verification_jobs`), polled like a background export.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.throttling import HeavyReadThrottle
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.journal import JournalVerification, VerificationRun
from jackpot.bodies.render import verification_body
from jackpot.models import Verification, VerificationStatus
from jackpot.selectors import verification_get, verification_runs
from tables.audit.verification_jobs import heartbeat, verification_request

AUDITORS = ("auditor", "admin")


def _body(run: Verification | None) -> VerificationRun | None:
    if run is None:
        return None
    beat = heartbeat(run.pk) if run.status == VerificationStatus.RUNNING else None
    url = reverse("journal-verification", args=[run.pk])
    return verification_body(run, url=url, heartbeat=beat)


class JournalVerifyView(StaffView):
    permission_classes = [require_roles(*AUDITORS)]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="journal_verify",
        responses={200: JournalVerification},
        summary="What the journal's verification last found, and when (auditors)",
    )
    def get(self, request: Request) -> Response:
        runs = verification_runs()
        body = JournalVerification.model_construct(
            latest=_body(runs.latest),
            latest_full=_body(runs.latest_full),
            running=_body(runs.running),
        )
        return Response(body.model_dump(mode="json"))

    @extend_schema(
        operation_id="journal_verify_start",
        request=None,
        responses={202: VerificationRun},
        summary="Start a full verification from the first event, in the background (auditors)",
    )
    def post(self, request: Request) -> Response:
        answer = _body(verification_request(user=self.staff(request)))
        assert answer is not None
        return Response(
            answer.model_dump(mode="json"), status=202, headers={"Location": answer.url}
        )


class JournalVerificationView(StaffView):
    permission_classes = [require_roles(*AUDITORS)]

    @extend_schema(
        operation_id="journal_verification_get",
        responses={200: VerificationRun},
        summary="A verification run: its status, progress and verdict (auditors)",
    )
    def get(self, request: Request, verification: int) -> Response:
        answer = _body(verification_get(verification))
        assert answer is not None
        return Response(answer.model_dump(mode="json"))
