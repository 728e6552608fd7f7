"""Notices to the authorities and the register of orphans (compliance 57, 58).

Thin: the rules, who may act and the events are `jackpot.pools.notices`'s and
`jackpot.pools.orphans`'s; the reads `jackpot.selectors`'s. Recording a notice sent is for an
admin or a manager: it tells the authority of a decision, it moves no money, so the people who
decide a stop (admins) and those who run the floor (managers) may both; the orphans' recovery is
a money decision (supervisors and managers, never a configurer), as a correction is.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.openapi import query_parameters
from core.wire import read, read_query
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.changes import ChangeApproval, ChangeRejection
from jackpot.bodies.orphans import (
    NoticeBody,
    NoticePage,
    NoticeQuery,
    NoticeSending,
    OrphanRecoveryBody,
    OrphanRecoveryProposal,
    OrphanRegister,
)
from jackpot.pools import notices, orphans
from jackpot.selectors import (
    notice_body,
    notice_list,
    orphan_recovery_body,
    orphan_register,
    pool_get,
)
from jackpot.staff import duties, second_factor

READERS = [require_roles("auditor", "manager", "admin", "supervisor")]
SENDERS = [require_roles("admin", duties.MANAGER)]
DECIDERS = [require_roles(*orphans.PROPOSERS)]
MANAGERS = [require_roles(*orphans.APPROVERS)]


class NoticesView(StaffView):
    permission_classes = READERS

    @extend_schema(
        operation_id="notice_list",
        parameters=query_parameters(NoticeQuery),
        responses={200: NoticePage},
        summary="The notices to the authorities, newest first (auditors, managers, admins, "
        "supervisors)",
    )
    def get(self, request: Request) -> Response:
        query = read_query(NoticeQuery, request.query_params)
        return Response(notice_list(query).model_dump(mode="json"))


class NoticeSentView(StaffView):
    permission_classes = SENDERS

    @extend_schema(
        operation_id="notice_sent",
        request=NoticeSending,
        responses={200: NoticeBody},
        summary="Record a notice sent: when and how (admins, managers)",
    )
    def post(self, request: Request, notice: int) -> Response:
        sending = read(NoticeSending, request.data if request.data else {})
        done = notices.notice_sent(
            notice_id=notice,
            channel=sending.channel,
            reference=sending.reference,
            sent_at=sending.sent_at,
            user=self.staff(request),
        )
        return Response(notice_body(done).model_dump(mode="json"))


class OrphansView(StaffView):
    permission_classes = READERS

    @extend_schema(
        operation_id="orphan_register",
        responses={200: OrphanRegister},
        summary="The register of orphans: each pool stopped to orphans, recovered or final "
        "(auditors, managers, admins, supervisors)",
    )
    def get(self, request: Request) -> Response:
        return Response(orphan_register().model_dump(mode="json"))


class OrphanRecoveryView(StaffView):
    permission_classes = DECIDERS

    @extend_schema(
        operation_id="orphan_recovery_propose",
        request=OrphanRecoveryProposal,
        responses={201: OrphanRecoveryBody},
        summary="Propose to recover a stopped pool's orphans into an active pool's meter; "
        "another manager approves it (supervisors, managers)",
    )
    def post(self, request: Request, pool: int) -> Response:
        proposal = read(OrphanRecoveryProposal, request.data if request.data else {})
        change = orphans.orphans_recover_propose(
            pool_id=pool_get(pool).pk,
            to_pool=proposal.to_pool,
            reason=proposal.reason,
            user=self.staff(request),
        )
        return Response(orphan_recovery_body(change).model_dump(mode="json"), status=201)


class OrphanRecoveryApproveView(StaffView):
    permission_classes = MANAGERS

    @extend_schema(
        operation_id="orphan_recovery_approve",
        request=ChangeApproval,
        responses={200: OrphanRecoveryBody},
        summary="Approve a recovery: a manager other than its proposer, with a fresh code; "
        "the orphans move now (managers)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        approval = read(ChangeApproval, request.data if request.data else {})
        user = self.staff(request)
        applied = orphans.orphans_recover_approve(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=user,
            note=approval.note or "",
            presence=second_factor.present(user, approval.second_factor_code),
        )
        return Response(orphan_recovery_body(applied).model_dump(mode="json"))


class OrphanRecoveryRejectView(StaffView):
    permission_classes = DECIDERS

    @extend_schema(
        operation_id="orphan_recovery_reject",
        request=ChangeRejection,
        responses={200: OrphanRecoveryBody},
        summary="Reject a proposed recovery, saying why (supervisors, managers)",
    )
    def post(self, request: Request, pool: int, change: int) -> Response:
        rejection = read(ChangeRejection, request.data if request.data else {})
        rejected = orphans.orphans_recover_reject(
            pool_id=pool_get(pool).pk,
            change_id=change,
            user=self.staff(request),
            note=rejection.note,
        )
        return Response(orphan_recovery_body(rejected).model_dump(mode="json"))
