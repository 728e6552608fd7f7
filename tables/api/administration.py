"""Table administration for the club's systems (admins): read a table, open or close it for play;
propose to link it to a pool, move it or unlink it, and approve (another admin), reject or
withdraw that proposal. Thin: the refusals (403 `four_eyes`, 409 while the table is open for play
or has open rounds) are `tables.services`'s and `jackpot.pools.parameters`'s.

Terminal tokens, for the same systems: list a table's tokens (never the token, its prefix);
propose one beside the current ones (the rotation: the old one works until revoked, so no terminal
is cut off mid-round) or in their place (a lost terminal), which another admin approves: the token
is made then and is in the approver's answer only (the proposer never sees it; 403 `four_eyes`
for the proposer's approval); reject or withdraw a proposal; revoke a token (one admin: it only
takes power away).

And the supervisors' void of a stuck round (its terminal crashed, its result never came): the
terminal's own void (`tables.rounds.round_void`) run as `user:<name>`, so the refund, the audit
event and the stored answer are the same, and the terminal's void afterwards is a replay. A
supervisor's or a manager's, never an account that configures (403 `separation_of_duties`,
`jackpot.staff.duties`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.wire import read
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.api.awards import StaffView
from jackpot.approvals import changes
from jackpot.bodies.changes import (
    ChangeApproval,
    ChangeRejection,
    ChangeWithdrawal,
    ParameterChangeBody,
)
from jackpot.bodies.render import change_body
from jackpot.models import ChangeKind, ParameterChange
from jackpot.money.canonical import fingerprint
from jackpot.selectors import pool_get
from jackpot.staff import duties, second_factor
from tables.api.views import ROUND_ID_PATH, rendered, replayed_header
from tables.bodies.administration import (
    TableAnswer,
    TableChange,
    TableMoveProposal,
    TerminalAnswer,
    TerminalIssue,
    TerminalIssued,
    TerminalList,
)
from tables.bodies.round_answers import VoidAnswer
from tables.bodies.round_requests import VoidBody, parse_void
from tables.bodies.vocabulary import round_id_of
from tables.models import Game, Round, RoundState, Table, Terminal
from tables.rounds import round_void
from tables.services import (
    table_move_approve,
    table_move_propose,
    table_update,
    terminal_issue_approve,
    terminal_issue_propose,
    terminal_revoke,
)


def _table_answer(table: Table) -> TableAnswer:
    return TableAnswer.model_construct(
        id=table.pk,
        name=table.name,
        game="uth" if table.game == Game.UTH else "stud",
        pool=table.pool_id,
        enabled=table.enabled,
        seats=table.seats,
        open_rounds=Round.objects.filter(table=table, state=RoundState.OPEN).count(),
    )


class TableView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_detail",
        responses={200: TableAnswer},
        summary="A table: its game, the pool it feeds, open for play or not, its open rounds",
    )
    def get(self, request: Request, table: int) -> Response:
        return Response(_table_answer(_table(table)).model_dump(mode="json"))

    @extend_schema(
        operation_id="table_change",
        request=TableChange,
        responses={200: TableAnswer},
        summary="Open or close a table for play (admins)",
        description="The pool a table feeds changes by a proposal another admin approves "
        "(`POST /api/v1/tables/{table}/moves`).",
    )
    def patch(self, request: Request, table: int) -> Response:
        change = read(TableChange, request.data)
        values: dict[str, object] = {} if change.enabled is None else {"enabled": change.enabled}
        updated = table_update(
            table_id=table, changes=values, actor=f"user:{request.user.get_username()}"
        )
        return Response(_table_answer(updated).model_dump(mode="json"))


class TableMovesView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_move_propose",
        request=TableMoveProposal,
        responses={201: ParameterChangeBody},
        summary="Propose to link a table to a pool, move it or unlink it (admins); another admin "
        "approves",
    )
    def post(self, request: Request, table: int) -> Response:
        proposal = read(TableMoveProposal, request.data)
        change = table_move_propose(
            table_id=_table(table).pk,
            pool=None if proposal.pool is None else pool_get(proposal.pool),
            reason=proposal.reason,
            user=self.staff(request),
        )
        return Response(change_body(change).model_dump(mode="json"), status=201)


def _move(table: int, change: int) -> int:
    """The change's id, if it is a move of `table` (404 `change_not_found` otherwise)."""
    found = ParameterChange.objects.filter(
        pk=change, kind=ChangeKind.TABLE_MOVE, changes__table=_table(table).pk
    )
    if not found.exists():
        raise NotFound("change_not_found", f"table {table} has no move {change}", param="change")
    return change


class TableMoveApproveView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_move_approve",
        request=ChangeApproval,
        responses={200: ParameterChangeBody},
        summary="Approve and apply a table's move: another admin than its proposer, with the "
        "table closed and no round open (admins)",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        approval = read(ChangeApproval, request.data if request.data else {})
        user = self.staff(request)
        applied = table_move_approve(
            change_id=_move(table, change),
            user=user,
            note=approval.note or "",
            presence=second_factor.present(user, approval.second_factor_code),
        )
        return Response(change_body(applied).model_dump(mode="json"))


class TableMoveRejectView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_move_reject",
        request=ChangeRejection,
        responses={200: ParameterChangeBody},
        summary="Reject a table's proposed move, saying why (admins)",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        rejection = read(ChangeRejection, request.data if request.data else {})
        rejected = changes.change_reject(
            change_id=_move(table, change), user=self.staff(request), note=rejection.note
        )
        return Response(change_body(rejected).model_dump(mode="json"))


class TableMoveWithdrawView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_move_withdraw",
        request=ChangeWithdrawal,
        responses={200: ParameterChangeBody},
        summary="Withdraw one's own proposed move of a table (its proposer)",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        withdrawal = read(ChangeWithdrawal, request.data if request.data else {})
        withdrawn = changes.change_withdraw(
            change_id=_move(table, change), user=self.staff(request), note=withdrawal.note or ""
        )
        return Response(change_body(withdrawn).model_dump(mode="json"))


def _table(table: int) -> Table:
    found = Table.objects.filter(pk=table).first()
    if found is None:
        raise NotFound("table_not_found", f"no table {table}", param="table")
    return found


def _terminal_answer(terminal: Terminal) -> TerminalAnswer:
    return TerminalAnswer.model_construct(
        id=terminal.pk,
        table=terminal.table_id,
        name=terminal.name,
        prefix=terminal.prefix,
        created_at=terminal.created_at,
        revoked_at=terminal.revoked_at,
    )


class TerminalsView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="terminal_list",
        responses={200: TerminalList},
        summary="A table's terminal tokens, newest first (admins): prefixes, never the tokens",
    )
    def get(self, request: Request, table: int) -> Response:
        found = _table(table)
        terminals = Terminal.objects.filter(table=found).order_by("-created_at", "-pk")
        answer = TerminalList.model_construct(
            terminals=[_terminal_answer(terminal) for terminal in terminals]
        )
        return Response(answer.model_dump(mode="json"))

    @extend_schema(
        operation_id="terminal_issue_propose",
        request=TerminalIssue,
        responses={201: ParameterChangeBody},
        summary="Propose a terminal token (admins): beside the current ones, or in their place; "
        "another admin approves and receives it",
        description="Nothing is issued yet: the answer is the proposal (`kind` "
        "`terminal.issue`). Another admin approves it "
        "(`POST /api/v1/tables/{table}/terminals/issues/{change}/approve`) and gets the token, "
        "once. Rotation: `revoke_others` false, install the token on the terminal, let it switch "
        "between two rounds, then revoke the old one. `revoke_others` true revokes the table's "
        "other tokens when the proposal is approved.",
    )
    def post(self, request: Request, table: int) -> Response:
        issue = read(TerminalIssue, request.data)
        change = terminal_issue_propose(
            table_id=_table(table).pk,
            name=issue.name.strip(),
            revoke_others=issue.revoke_others,
            reason=issue.reason,
            user=self.staff(request),
        )
        return Response(change_body(change).model_dump(mode="json"), status=201)


def _issue(table: int, change: int) -> int:
    """The change's id, if it is a terminal token proposed for `table` (404 `change_not_found`
    otherwise)."""
    found = ParameterChange.objects.filter(
        pk=change, kind=ChangeKind.TERMINAL_ISSUE, changes__table=_table(table).pk
    )
    if not found.exists():
        raise NotFound(
            "change_not_found",
            f"table {table} has no terminal token proposal {change}",
            param="change",
        )
    return change


class TerminalIssueApproveView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="terminal_issue_approve",
        request=ChangeApproval,
        responses={201: TerminalIssued},
        summary="Approve a proposed terminal token: another admin than its proposer, who gets "
        "the token, once (admins)",
        description="The token is in this answer only, for the approver who installs it at the "
        "table; only its SHA-256 is stored. Its `terminal.issued` event (significant event "
        "SE17) names both people.",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        approval = read(ChangeApproval, request.data if request.data else {})
        user = self.staff(request)
        approved = terminal_issue_approve(
            change_id=_issue(table, change),
            user=user,
            note=approval.note or "",
            presence=second_factor.present(user, approval.second_factor_code),
        )
        answer = TerminalIssued.model_construct(
            **dict(_terminal_answer(approved.issued.terminal)),
            token=approved.issued.token,
            change=approved.change.pk,
        )
        return Response(answer.model_dump(mode="json"), status=201)


class TerminalIssueRejectView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="terminal_issue_reject",
        request=ChangeRejection,
        responses={200: ParameterChangeBody},
        summary="Reject a proposed terminal token, saying why (admins)",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        rejection = read(ChangeRejection, request.data if request.data else {})
        rejected = changes.change_reject(
            change_id=_issue(table, change), user=self.staff(request), note=rejection.note
        )
        return Response(change_body(rejected).model_dump(mode="json"))


class TerminalIssueWithdrawView(StaffView):
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="terminal_issue_withdraw",
        request=ChangeWithdrawal,
        responses={200: ParameterChangeBody},
        summary="Withdraw one's own proposed terminal token (its proposer)",
    )
    def post(self, request: Request, table: int, change: int) -> Response:
        withdrawal = read(ChangeWithdrawal, request.data if request.data else {})
        withdrawn = changes.change_withdraw(
            change_id=_issue(table, change), user=self.staff(request), note=withdrawal.note or ""
        )
        return Response(change_body(withdrawn).model_dump(mode="json"))


class TerminalRevokeView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="terminal_revoke",
        request=None,
        responses={200: TerminalAnswer},
        summary="Revoke a terminal token (admins): from now on it is a 401; again, a no-op",
    )
    def post(self, request: Request, table: int, terminal: int) -> Response:
        revoked = terminal_revoke(
            table_id=_table(table).pk,
            terminal_id=terminal,
            actor=f"user:{request.user.get_username()}",
        )
        return Response(_terminal_answer(revoked).model_dump(mode="json"))


class RoundSupervisorVoidView(StaffView):
    # A refund is a money decision: a supervisor's or a manager's, never an account that
    # configures (compliance 52, `jackpot.staff.duties`).
    permission_classes = [require_roles(*duties.MONEY_ROLES)]

    @extend_schema(
        operation_id="round_supervisor_void",
        parameters=[ROUND_ID_PATH, replayed_header(200)],
        request=VoidBody,
        responses={200: VoidAnswer},
        summary="Void a stuck open round, with a reason (supervisors, managers): its stakes are "
        "refunded",
        description="The terminal's void, run for a supervisor (the audit event's actor is "
        "`user:<name>`), on an open or a closed table. A void of the round afterwards, the "
        "terminal's or another supervisor's, gets this stored answer with "
        "`Idempotent-Replayed: true`; a settled round is a 409 `round_settled`.",
    )
    def post(self, request: Request, table: int, round_id: str) -> Response:
        found = Table.objects.select_related("pool").filter(pk=table).first()
        if found is None:
            raise NotFound("table_not_found", f"no table {table}", param="table")
        round_id_of(round_id)
        reason = parse_void(request.data)
        duties.refuse_configurer(self.staff(request), doing=f"void round {round_id}")
        result = round_void(
            table=found,
            round_id=round_id,
            reason=reason,
            fingerprint=fingerprint(request.data),
            actor=f"user:{request.user.get_username()}",
            by_supervisor=True,
        )
        return rendered(result)
