"""A pool's parameter changes for admins: propose, list, approve, reject, withdraw; and its life:
suspend, resume, and the stop and the replacement proposed by one admin (approved as any of its
changes).

Thin: the rules (four eyes, tables closed, a stale proposal) and the audit events are
`jackpot.pools.parameters`'s and `jackpot.pools.lifecycle`'s; the list is
`jackpot.selectors.change_list`'s.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.openapi import query_parameters
from core.wire import read, read_query
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.approvals import changes
from jackpot.bodies.changes import (
    ChangeApproval,
    ChangeProposal,
    ChangeRejection,
    ChangeWithdrawal,
    ParameterChangeBody,
    ParameterChangePage,
    ParameterChangeQuery,
    PoolLife,
    PoolReplaceProposal,
    PoolStatusChange,
    PoolStopProposal,
)
from jackpot.bodies.render import change_body
from jackpot.models import Pool, PoolStatus
from jackpot.pools import lifecycle, parameters, replacement
from jackpot.selectors import change_list, pool_get
from jackpot.staff import second_factor

ADMINS = [require_roles("admin")]


class PoolChangesView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_change_list",
        parameters=query_parameters(ParameterChangeQuery),
        responses={200: ParameterChangePage},
        summary="A pool's parameter changes, newest first (admins)",
    )
    def get(self, request: Request, pool: int) -> Response:
        query = read_query(ParameterChangeQuery, request.query_params)
        return Response(change_list(pool=pool_get(pool), query=query).model_dump(mode="json"))

    @extend_schema(
        operation_id="pool_change_propose",
        request=ChangeProposal,
        responses={201: ParameterChangeBody},
        summary="Propose a change of a pool's parameters; another admin approves it (admins)",
    )
    def post(self, request: Request, pool: int) -> Response:
        proposal = read(ChangeProposal, request.data)
        values = proposal.changes.model_dump(exclude_none=True)
        change = parameters.change_propose(
            pool_id=pool_get(pool).pk,
            changes=values,
            reason=proposal.reason,
            user=self.staff(request),
        )
        return Response(change_body(change).model_dump(mode="json"), status=201)


class PoolChangeApproveView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_change_approve",
        request=ChangeApproval,
        responses={200: ParameterChangeBody},
        summary="Approve and apply a proposed change (parameters, or the pool's stop): another "
        "admin than its proposer, with the pool's tables closed (admins)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        approval = read(ChangeApproval, request.data if request.data else {})
        user = self.staff(request)
        applied = lifecycle.pool_change_approve(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=user,
            note=approval.note or "",
            presence=second_factor.present(user, approval.second_factor_code),
        )
        return Response(change_body(applied).model_dump(mode="json"))


class PoolChangeRejectView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_change_reject",
        request=ChangeRejection,
        responses={200: ParameterChangeBody},
        summary="Reject a proposed change, saying why (admins)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        rejection = read(ChangeRejection, request.data if request.data else {})
        rejected = changes.change_reject(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=self.staff(request),
            note=rejection.note,
        )
        return Response(change_body(rejected).model_dump(mode="json"))


class PoolChangeWithdrawView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_change_withdraw",
        request=ChangeWithdrawal,
        responses={200: ParameterChangeBody},
        summary="Withdraw one's own proposed change (its proposer)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        withdrawal = read(ChangeWithdrawal, request.data if request.data else {})
        withdrawn = changes.change_withdraw(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=self.staff(request),
            note=withdrawal.note or "",
        )
        return Response(change_body(withdrawn).model_dump(mode="json"))


def _life(pool: Pool) -> PoolLife:
    return PoolLife.model_construct(
        pool=pool.pk,
        status=PoolStatus(pool.status),
        reason=pool.status_reason,
        since=pool.status_since,
    )


class PoolSuspendView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_suspend",
        request=PoolStatusChange,
        responses={200: PoolLife},
        summary="Suspend a pool (a technical fault): tables play on without the progressive, "
        "nothing is payable, the sign says suspended (one admin)",
    )
    def post(self, request: Request, pool: int) -> Response:
        asked = read(PoolStatusChange, request.data if request.data else {})
        done = lifecycle.pool_suspend(
            pool_id=pool_get(pool).pk, reason=asked.reason, user=self.staff(request)
        )
        return Response(_life(done).model_dump(mode="json"))


class PoolResumeView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_resume",
        request=PoolStatusChange,
        responses={200: PoolLife},
        summary="Resume a suspended pool: stakes and payments again, no figure changed (one admin)",
    )
    def post(self, request: Request, pool: int) -> Response:
        asked = read(PoolStatusChange, request.data if request.data else {})
        done = lifecycle.pool_resume(
            pool_id=pool_get(pool).pk, reason=asked.reason, user=self.staff(request)
        )
        return Response(_life(done).model_dump(mode="json"))


class PoolStopView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_stop_propose",
        request=PoolStopProposal,
        responses={201: ParameterChangeBody},
        summary="Propose to stop a pool for good, naming where its liability goes; another admin "
        "approves it (POST .../changes/{change}/approve) (admins)",
    )
    def post(self, request: Request, pool: int) -> Response:
        proposal = read(PoolStopProposal, request.data if request.data else {})
        change = lifecycle.pool_stop_propose(
            pool_id=pool_get(pool).pk,
            to=proposal.to,
            to_pool=proposal.to_pool,
            reason=proposal.reason,
            user=self.staff(request),
            voluntary=proposal.voluntary,
            effective_at=proposal.effective_at,
        )
        return Response(change_body(change).model_dump(mode="json"), status=201)


class PoolReplaceView(StaffView):
    permission_classes = ADMINS

    @extend_schema(
        operation_id="pool_replace_propose",
        request=PoolReplaceProposal,
        responses={201: ParameterChangeBody},
        summary="Propose to replace a pool by a new one with new terms (its increment, reserve "
        "and tables move to it); another admin approves it (POST .../changes/{change}/approve) "
        "(admins)",
    )
    def post(self, request: Request, pool: int) -> Response:
        proposal = read(PoolReplaceProposal, request.data if request.data else {})
        change = replacement.pool_replace_propose(
            pool_id=pool_get(pool).pk,
            values=proposal.changes.model_dump(exclude_none=True),
            reason=proposal.reason,
            user=self.staff(request),
        )
        return Response(change_body(change).model_dump(mode="json"), status=201)
