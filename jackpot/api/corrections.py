"""A pool's documented corrections (compliance 55) for the people who decide money: proposed by
a supervisor or a manager, approved by another manager, rejected, withdrawn; listed for them and
the auditors.

Thin: who may act, the four eyes, the money and the events are `jackpot.pools.corrections`'s;
the list is `jackpot.selectors.correction_list`'s.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from core.openapi import query_parameters
from core.wire import read, read_query
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.changes import ChangeApproval, ChangeRejection, ChangeWithdrawal
from jackpot.bodies.corrections import (
    CorrectionBody,
    CorrectionPage,
    CorrectionProposal,
    CorrectionQuery,
)
from jackpot.bodies.render import correction_body
from jackpot.pools import corrections
from jackpot.selectors import correction_list, pool_get
from jackpot.staff import duties, second_factor

DECIDERS = [require_roles(*corrections.PROPOSERS)]
READERS = [require_roles(*corrections.PROPOSERS, "auditor", "admin")]
MANAGERS = [require_roles(duties.MANAGER)]


class PoolCorrectionsView(StaffView):
    def get_permissions(self) -> list[BasePermission]:
        """Auditors read the list; only the people who decide money propose."""
        return [allowed() for allowed in (READERS if self.request.method == "GET" else DECIDERS)]

    @extend_schema(
        operation_id="pool_correction_list",
        parameters=query_parameters(CorrectionQuery),
        responses={200: CorrectionPage},
        summary="A pool's corrections, newest first (supervisors, managers, auditors, admins)",
    )
    def get(self, request: Request, pool: int) -> Response:
        query = read_query(CorrectionQuery, request.query_params)
        return Response(correction_list(pool=pool_get(pool), query=query).model_dump(mode="json"))

    @extend_schema(
        operation_id="pool_correction_propose",
        request=CorrectionProposal,
        responses={201: CorrectionBody},
        summary="Propose a documented correction of the meter, the reserve or an award's amount "
        "due; another manager approves it (supervisors, managers)",
    )
    def post(self, request: Request, pool: int) -> Response:
        proposal = read(CorrectionProposal, request.data if request.data else {})
        change = corrections.correction_propose(
            pool_id=pool_get(pool).pk,
            target=proposal.target,
            award_id=proposal.award,
            amount_cents=proposal.amount_cents,
            reason=proposal.reason,
            reference=proposal.reference,
            evidence=proposal.evidence,
            user=self.staff(request),
        )
        return Response(correction_body(change).model_dump(mode="json"), status=201)


class PoolCorrectionApproveView(StaffView):
    permission_classes = MANAGERS

    @extend_schema(
        operation_id="pool_correction_approve",
        request=ChangeApproval,
        responses={200: CorrectionBody},
        summary="Approve and apply a proposed correction: a manager other than its proposer, "
        "with a fresh code (managers)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        approval = read(ChangeApproval, request.data if request.data else {})
        user = self.staff(request)
        applied = corrections.correction_approve(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=user,
            note=approval.note or "",
            presence=second_factor.present(user, approval.second_factor_code),
        )
        return Response(correction_body(applied).model_dump(mode="json"))


class PoolCorrectionRejectView(StaffView):
    permission_classes = DECIDERS

    @extend_schema(
        operation_id="pool_correction_reject",
        request=ChangeRejection,
        responses={200: CorrectionBody},
        summary="Reject a proposed correction, saying why (supervisors, managers)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        rejection = read(ChangeRejection, request.data if request.data else {})
        rejected = corrections.correction_reject(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=self.staff(request),
            note=rejection.note,
        )
        return Response(correction_body(rejected).model_dump(mode="json"))


class PoolCorrectionWithdrawView(StaffView):
    permission_classes = DECIDERS

    @extend_schema(
        operation_id="pool_correction_withdraw",
        request=ChangeWithdrawal,
        responses={200: CorrectionBody},
        summary="Withdraw one's own proposed correction (its proposer)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        withdrawal = read(ChangeWithdrawal, request.data if request.data else {})
        withdrawn = corrections.correction_withdraw(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=self.staff(request),
            note=withdrawal.note or "",
        )
        return Response(correction_body(withdrawn).model_dump(mode="json"))
