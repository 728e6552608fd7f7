"""Django admin for tables and their terminals.

Tables are opened and closed for play here (a pool's money parameters can change only while
all its tables are closed). Terminal tokens are issued and revoked by actions; a new token is
shown once, in the confirmation message, and stored only as its hash. Issuing beside the current
tokens is the rotation (revoke the old one once the terminal uses the new); replacing them all at
once is for a lost terminal. Every change is an
audit event with before and after.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from jackpot.admin import actor
from tables.models import Game, Table, Terminal
from tables.services import (
    TABLE_FIELDS,
    table_create,
    table_update,
    terminal_revoke,
    terminal_token_issue,
)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "pool", "seats", "enabled")
    list_filter = ("game", "enabled", "pool")
    actions = ["issue_terminal_token", "replace_terminal_tokens"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Table | None = None
    ) -> tuple[str, ...]:
        return ("game", "created_at") if obj else ("created_at",)

    def has_delete_permission(self, request: HttpRequest, obj: Table | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Table, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not change:
            created = table_create(
                name=data["name"],
                game=Game(data["game"]),
                pool=data.get("pool"),
                seats=data["seats"],
                actor=actor(request),
            )
            obj.pk = created.pk
            return
        table_update(
            table_id=obj.pk,
            changes={field: data[field] for field in TABLE_FIELDS if field in data},
            actor=actor(request),
        )

    @admin.action(
        description="Issue a new terminal token beside the current ones (rotation; shown once)"
    )
    def issue_terminal_token(self, request: HttpRequest, queryset: Any) -> None:
        """The rotation: the old token keeps working until revoked (Terminals), so the terminal
        switches between two rounds and is never cut off mid-round."""
        self._issue(request, queryset, revoke_others=False)

    @admin.action(
        description="Issue a terminal token and revoke the table's others now (lost terminal)"
    )
    def replace_terminal_tokens(self, request: HttpRequest, queryset: Any) -> None:
        self._issue(request, queryset, revoke_others=True)

    def _issue(self, request: HttpRequest, queryset: Any, *, revoke_others: bool) -> None:
        for table in queryset:
            issued = terminal_token_issue(
                table=table, name="terminal", revoke_others=revoke_others, actor=actor(request)
            )
            self.message_user(request, f"{table.name}: {issued.token}", messages.WARNING)


@admin.register(Terminal)
class TerminalAdmin(admin.ModelAdmin):
    list_display = ("table", "name", "prefix", "created_at", "revoked_at")
    list_filter = ("table",)
    readonly_fields = ("table", "name", "prefix", "created_at", "revoked_at")
    exclude = ("token_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # issued from the table, with the token shown once

    def has_delete_permission(self, request: HttpRequest, obj: Terminal | None = None) -> bool:
        return False

    @admin.action(description="Revoke these terminals' tokens")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        for terminal in queryset:
            terminal_revoke(
                table_id=terminal.table_id, terminal_id=terminal.pk, actor=actor(request)
            )
        self.message_user(request, f"{queryset.count()} terminal token(s) revoked")
