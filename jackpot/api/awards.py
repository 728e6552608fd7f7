"""Awards for the people around the progressive: supervisors and managers move them on (never
an admin: `jackpot.staff.duties`), auditors read them.

Thin views: the checks and the money are in `jackpot.awards.workflow`; reads in `jackpot.selectors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApiError
from core.openapi import IF_NONE_MATCH, query_parameters
from core.replicas import on_replica, replica_reads
from core.throttling import HeavyReadThrottle
from core.wire import Body, read, read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.approvals.presence import Presence
from jackpot.awards import surveillance, winners, workflow
from jackpot.bodies.awards import (
    AwardApproval,
    AwardBody,
    AwardFilters,
    AwardListQuery,
    AwardNote,
    AwardPage,
    AwardPayment,
    AwardReason,
    AwardReferral,
    AwardReview,
    RegisterQuery,
    WinnerRecord,
)
from jackpot.bodies.common import SecondPersonCode
from jackpot.bodies.render import award_body
from jackpot.models import Award, AwardStatus
from jackpot.reporting import register
from jackpot.reporting.exports import award_rows, awards_filtered, sync_range_check
from jackpot.selectors import award_list, award_list_etag
from jackpot.staff import duties, second_factor

B = TypeVar("B", bound=Body)


class StaffView(APIView):
    authentication_classes = STAFF_AUTHENTICATION

    def staff(self, request: Request) -> User:
        user = request.user
        assert isinstance(user, User)
        return user


class AwardListView(StaffView):
    permission_classes = [
        require_roles("supervisor", "auditor", "admin", surveillance.ROLE, duties.MANAGER)
    ]

    @extend_schema(
        operation_id="award_list",
        parameters=[*query_parameters(AwardListQuery), IF_NONE_MATCH],
        responses={200: AwardPage, 304: None},
        summary="Awards, newest first, filtered (supervisors, auditors)",
        description="Send the last ETag in If-None-Match: a list in which no award has changed "
        "since gets 304 (a page polling the queue costs the server next to nothing).",
    )
    def get(self, request: Request) -> Response:
        query = read_query(AwardListQuery, request.query_params)
        etag = award_list_etag(query)
        if etag in request.headers.get("If-None-Match", ""):
            return Response(status=304, headers={"ETag": etag})
        page = award_list(query)
        return Response(page.model_dump(mode="json"), headers={"ETag": etag})


class AwardExportView(StaffView):
    permission_classes = [require_roles("auditor", "admin")]
    throttle_classes = [HeavyReadThrottle]

    @extend_schema(
        operation_id="award_export",
        parameters=query_parameters(AwardFilters),
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            400: OpenApiResponse(
                description="Invalid request: a filter (`param`), or `range_too_large`: from and"
                " to are needed, at most EXPORT_SYNC_MAX_DAYS (31) days apart; a longer range"
                " is a background export, POST /api/v1/awards/exports"
            ),
        },
        summary="The payout log of at most a month as CSV, streamed, ending with a SHA-256"
        " digest (auditors)",
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        filters = read_query(AwardFilters, request.query_params)
        sync_range_check(filters)  # before a byte is streamed
        rows = on_replica(award_rows(awards_filtered(filters)))
        response = StreamingHttpResponse(rows, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="awards.csv"'
        return response


def _step(
    name: str,
    body: type[B],
    run: Callable[[int, User, B, Presence | None], Award],
    roles: tuple[str, ...],
    *,
    operation_id: str | None = None,
    summary: str | None = None,
) -> type[StaffView]:
    class StepView(StaffView):
        permission_classes = [require_roles(*roles)]

        @extend_schema(
            operation_id=operation_id or f"award_{name}",
            request=body,
            responses={200: AwardBody},
            summary=summary or f"{name.capitalize()} an award (supervisors)",
        )
        def post(self, request: Request, award: int) -> Response:
            # No body at all is an empty object.
            step = read(body, request.data if request.data else {})
            user = self.staff(request)
            # A two-person step's second person proves presence before the step's transaction.
            presence = (
                second_factor.present(user, step.second_factor_code)
                if isinstance(step, SecondPersonCode)
                else None
            )
            award_answer = award_body(run(award, user, step, presence))
            return Response(award_answer.model_dump(mode="json"))

    StepView.__name__ = f"Award{(operation_id or name).title().replace('_', '')}View"
    return StepView


#: Who takes an award's money steps: a supervisor or a manager, never an admin (compliance 52:
#: an account that configures is refused by `jackpot.awards.workflow` too, whatever roles it holds).
SUPERVISORS = duties.MONEY_ROLES
AwardReviewView = _step(
    "review",
    AwardReview,
    lambda a, u, b, p: workflow.award_review(
        award_id=a,
        user=u,
        camera=b.camera,
        footage_from=b.from_,
        footage_to=b.to,
        verdict=b.verdict,
        reason=b.reason,
        note=b.note,
    )[0],
    (surveillance.ROLE,),
    summary="Record surveillance's video review of an award (surveillance): confirmed, or "
    "referred with a reason (approval and payment wait for a manager's decision)",
)
AwardReferralView = _step(
    "referral",
    AwardReferral,
    lambda a, u, b, p: workflow.award_referral_decide(
        award_id=a, user=u, outcome=b.decision, reason=b.reason, presence=p
    ),
    (duties.MANAGER,),
    operation_id="award_referral_decide",
    summary="Decide surveillance's referral of an award (a manager, not its reviewer): clear "
    "it, or void (for a jackpot, its void is requested)",
)
AwardVerifyView = _step(
    "verify",
    AwardNote,
    lambda a, u, b, p: workflow.award_verify(award_id=a, user=u, note=b.note),
    SUPERVISORS,
)
AwardApproveView = _step(
    "approve",
    AwardApproval,
    lambda a, u, b, p: workflow.award_approve(award_id=a, user=u, note=b.note, presence=p),
    SUPERVISORS,
    summary="Approve an award's payment, with an optional note (a second supervisor)",
)
AwardPayView = _step(
    "pay",
    AwardPayment,
    lambda a, u, b, p: workflow.award_pay(
        award_id=a,
        user=u,
        method=b.method,
        reference=b.reference,
        note=b.note,
        winner=b.winner,
    ),
    SUPERVISORS,
    summary="Record an award's payment: method, reference, note, and the winner's identity "
    "at or above WINNER_IDENTIFICATION_THRESHOLD_CENTS (supervisors)",
)


class AwardWinnerView(StaffView):
    """The identity of an award's winner, decrypted: auditors and admins alone."""

    permission_classes = [require_roles("auditor", "admin")]

    @extend_schema(
        operation_id="award_winner",
        responses={
            200: WinnerRecord,
            404: OpenApiResponse(
                description="`winner_not_identified`: the payment recorded no identity (or the "
                "award is not paid); `award_not_found` is not told apart"
            ),
        },
        summary="The identity of an award's winner, as the register keeps it (auditors, admins)",
        description="404 `winner_not_identified` when the payment recorded no identity.",
    )
    def get(self, request: Request, award: int) -> Response:
        found = winners.identity_of(award, reader=f"user:{self.staff(request).get_username()}")
        return Response(found.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


class AwardRegisterView(StaffView):
    """The register of the awards paid in a period, with the winners' names (auditors)."""

    permission_classes = [require_roles("auditor", "admin")]
    throttle_classes = [HeavyReadThrottle]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `format` is the register's own parameter (csv or pdf), not DRF's renderer override,
        # which would answer 404 for a format no renderer has; errors are JSON all the same.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="award_register",
        parameters=query_parameters(RegisterQuery),
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/pdf"): OpenApiTypes.BINARY,
            400: OpenApiResponse(
                description="`invalid_parameter`: from or to missing or without an offset, to "
                "not after from, a format other than csv or pdf"
            ),
        },
        summary="The register of the awards paid in [from, to), with the winners' names, as "
        "CSV or PDF (auditors, admins)",
    )
    def get(self, request: Request) -> HttpResponse | StreamingHttpResponse:
        query = read_query(RegisterQuery, request.query_params)
        if query.to <= query.from_:
            raise ApiError("invalid_parameter", "to must be after from", param="to")
        start, end = query.from_, query.to
        reader = f"user:{self.staff(request).get_username()}"
        name = f"register-{start:%Y%m%d}-{end:%Y%m%d}"
        response: HttpResponse | StreamingHttpResponse
        if query.format == "pdf":
            with replica_reads():
                rows = register.register_rows(start, end, reader=reader)
                pdf = register.register_pdf(rows, start, end)
            response = HttpResponse(pdf, content_type="application/pdf")
        else:
            # Read on the standby when the response is streamed, like the payout log.
            lines = on_replica(
                register.register_csv(register.register_rows(start, end, reader=reader))
                for _ in (1,)
            )
            response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}.{query.format}"'
        response["Cache-Control"] = "no-store"
        return response


AwardVoidConfirmView = _step(
    "confirm the void of",
    SecondPersonCode,
    lambda a, u, b, p: workflow.award_void_confirm(award_id=a, user=u, presence=p),
    SUPERVISORS,
    operation_id="award_void_confirm",
    summary="Confirm a jackpot's requested void (a second supervisor): the money moves back",
)
AwardVoidCancelView = _step(
    "cancel the void of",
    AwardReason,
    lambda a, u, b, p: workflow.award_void_cancel(award_id=a, user=u, reason=b.reason),
    SUPERVISORS,
    operation_id="award_void_cancel",
    summary="Cancel a jackpot's requested void, with a reason: nothing moves",
)


class AwardVoidView(StaffView):
    """A fixed award or envy is void at once (200); a jackpot's void is only requested (202
    Accepted: the award, marked `void_requested_by`, awaits a second supervisor's
    `/void/confirm`)."""

    permission_classes = [require_roles(*SUPERVISORS)]

    @extend_schema(
        operation_id="award_void",
        request=AwardReason,
        responses={200: AwardBody, 202: AwardBody},
        summary="Void an award (supervisors); for a jackpot, request its void (202)",
        description="A fixed award or envy: void at once, back to the house (200). A jackpot: "
        "the void is requested (202 Accepted), the award keeps its status and its money, shows "
        "`void_requested_by`, `void_requested_at` and `void_request_reason`, and waits for a "
        "different supervisor's `POST .../void/confirm` (or `.../void/cancel`).",
    )
    def post(self, request: Request, award: int) -> Response:
        step = read(AwardReason, request.data if request.data else {})
        found = workflow.award_void(award_id=award, user=self.staff(request), reason=step.reason)
        done = found.status == AwardStatus.VOID
        return Response(award_body(found).model_dump(mode="json"), status=200 if done else 202)
