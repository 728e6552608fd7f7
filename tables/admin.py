"""Django admin for tables and their terminals.

Tables are opened and closed for play here (a pool's money parameters can change only while
all its tables are closed); a table's seats change only with no round open at it (the form
says so, and nothing is changed). A table is created without a pool; the pool it feeds changes by a
proposal (its form's pool, with a reason) that another admin approves here (the action "Approve
the proposed move"), applied only while the table is closed and has no open round
(`tables.services.table_move_approve`). Every page needs the admin role (`AdminRoleOnly`).
A terminal token is a two-person change (`terminal.issue`): one admin proposes it by an action
(beside the current tokens, the rotation: revoke the old one once the terminal uses the new; or in
their place, for a lost terminal), another approves it by the action "Approve the proposed
terminal tokens", and only then is it made, shown once to that approver in the confirmation
message, stored only as its hash. The proposer's approval is refused (`four_eyes`) and logged.
Revoking a token is one admin's action. Every change is an audit event with before and after.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from core.errors import ApiError, Conflict
from jackpot.admin import (
    AdminRoleOnly,
    FilesProposals,
    PresenceActionForm,
    actor,
    log_denied,
    presence_of,
    staff_user,
)
from jackpot.approvals.presence import Presence
from jackpot.models import ChangeKind, ChangeStatus, ParameterChange
from tables.models import Game, Table, Terminal
from tables.services import (
    TABLE_FIELDS,
    table_create,
    table_move_approve,
    table_move_propose,
    table_update,
    terminal_issue_approve,
    terminal_issue_propose,
    terminal_revoke,
)


class TableForm(forms.ModelForm):
    reason = forms.CharField(
        max_length=500,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why, when the pool changes: the move is proposed, and applied only when "
        "another admin approves it with the table closed.",
    )

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        moved = "pool" in self.changed_data and self.instance.pk is not None
        if moved and not cleaned.get("reason"):
            raise ValidationError({"reason": "say why: the move is a proposal"})
        return cleaned


@admin.register(Table)
class TableAdmin(FilesProposals):
    form = TableForm
    list_display = ("name", "game", "pool", "seats", "enabled")
    list_filter = ("game", "enabled", "pool")
    actions = [
        "approve_move",
        "issue_terminal_token",
        "replace_terminal_tokens",
        "approve_terminal_issue",
    ]
    action_form = PresenceActionForm

    def get_fields(self, request: HttpRequest, obj: Table | None = None) -> Any:
        if obj is None:
            return ["name", "game", "seats", "enabled", "created_at"]
        return ["name", "game", "pool", "reason", "seats", "enabled", "created_at"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Table | None = None
    ) -> tuple[str, ...]:
        return ("game", "created_at") if obj else ("created_at",)

    def save_model(self, request: HttpRequest, obj: Table, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not change:
            created = table_create(
                name=data["name"],
                game=Game(data["game"]),
                pool=None,
                seats=data["seats"],
                actor=actor(request),
            )
            obj.pk = created.pk
            return
        try:
            table_update(
                table_id=obj.pk,
                changes={field: data[field] for field in TABLE_FIELDS if field in data},
                actor=actor(request),
            )
        except Conflict as refusal:  # its seats, with a round open
            self.refused(request, refusal)
            return
        if "pool" in form.changed_data:
            request._proposal = table_move_propose(  # type: ignore[attr-defined]
                table_id=obj.pk, pool=data["pool"], reason=data["reason"], user=staff_user(request)
            )

    def _approve(
        self,
        request: HttpRequest,
        queryset: Any,
        kind: ChangeKind,
        approve: Callable[[int, User, Presence], str],
    ) -> None:
        """Approve each proposal of `kind` of the selected tables, with the approver's code
        checked once for the action; `approve` applies one and says what to show."""

        def decide(presence: Presence) -> None:
            for table in queryset:
                proposals = ParameterChange.objects.filter(
                    kind=kind, status=ChangeStatus.PROPOSED, changes__table=table.pk
                )
                for proposal in proposals.order_by("pk"):
                    try:
                        done = approve(proposal.pk, staff_user(request), presence)
                    except ApiError as refusal:
                        if refusal.status_code == 403:
                            log_denied(
                                request, f"{refusal.code} (#{proposal.pk}: {refusal.message})"
                            )
                        self.message_user(
                            request, f"#{proposal.pk}: {refusal.message}", messages.ERROR
                        )
                    else:
                        self.message_user(request, f"{table.name}: {done}", messages.WARNING)

        presence_of(request, decide)

    @admin.action(description="Approve the proposed move (another admin than the proposer)")
    def approve_move(self, request: HttpRequest, queryset: Any) -> None:
        def move(change: int, user: User, presence: Presence) -> str:
            table_move_approve(change_id=change, user=user, presence=presence)
            return f"moved (#{change})"

        self._approve(request, queryset, ChangeKind.TABLE_MOVE, move)

    @admin.action(
        description="Propose a new terminal token beside the current ones (rotation; another "
        "admin approves)"
    )
    def issue_terminal_token(self, request: HttpRequest, queryset: Any) -> None:
        """The rotation: the old token keeps working until revoked (Terminals), so the terminal
        switches between two rounds and is never cut off mid-round."""
        self._propose(request, queryset, revoke_others=False)

    @admin.action(
        description="Propose a terminal token that revokes the table's others (lost terminal; "
        "another admin approves)"
    )
    def replace_terminal_tokens(self, request: HttpRequest, queryset: Any) -> None:
        self._propose(request, queryset, revoke_others=True)

    def _propose(self, request: HttpRequest, queryset: Any, *, revoke_others: bool) -> None:
        why = "a lost terminal replaced" if revoke_others else "a rotation"
        for table in queryset:
            proposal = terminal_issue_propose(
                table_id=table.pk,
                name="terminal",
                revoke_others=revoke_others,
                reason=f"{why}, proposed in the admin",
                user=staff_user(request),
            )
            self.message_user(
                request,
                f"{table.name}: no token yet; proposal #{proposal.pk} waits for another admin's "
                "approval (the action 'Approve the proposed terminal tokens')",
                messages.WARNING,
            )

    @admin.action(
        description="Approve the proposed terminal tokens (another admin than the proposer; "
        "the token is shown to you once)"
    )
    def approve_terminal_issue(self, request: HttpRequest, queryset: Any) -> None:
        def issue(change: int, user: User, presence: Presence) -> str:
            approved = terminal_issue_approve(change_id=change, user=user, presence=presence)
            return approved.issued.token

        self._approve(request, queryset, ChangeKind.TERMINAL_ISSUE, issue)


@admin.register(Terminal)
class TerminalAdmin(AdminRoleOnly):
    list_display = ("table", "name", "prefix", "created_at", "revoked_at")
    list_filter = ("table",)
    readonly_fields = ("table", "name", "prefix", "created_at", "revoked_at")
    exclude = ("token_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # issued from the table, with the token shown once

    @admin.action(description="Revoke these terminals' tokens")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        for terminal in queryset:
            terminal_revoke(
                table_id=terminal.table_id, terminal_id=terminal.pk, actor=actor(request)
            )
        self.message_user(request, f"{queryset.count()} terminal token(s) revoked")
