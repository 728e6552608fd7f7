"""Django admin for the progressive: pools (money parameters locked while tables are open),
staff accounts and their roles, and read-only views of awards, transfers and audit events.

Every change goes through a service that writes an audit event with before and after; the
journal and the awards are never edited here (their changes have their own workflow).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from jackpot import ledger
from jackpot.models import AuditEvent, Award, Pool, Transfer
from jackpot.services import (
    POOL_FIELDS,
    PoolChangeRefused,
    check_pool_change,
    pool_create,
    pool_update,
    staff_token_issue,
)


def actor(request: HttpRequest) -> str:
    return f"user:{request.user.get_username()}"


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "currency",
        "stake_cents",
        "meter_share_bp",
        "reserve_share_bp",
        "seed_cents",
        "verification_threshold_cents",
        "paytable_version",
    )
    readonly_fields = (
        "currency",
        "meter_units",
        "reserve_units",
        "meter_version",
        "hit_count",
        "award_sequence",
        "award_version",
        "created_at",
    )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [*POOL_FIELDS, *(self.readonly_fields if obj else ())]

    def get_readonly_fields(self, request: HttpRequest, obj: Pool | None = None) -> tuple[str, ...]:
        return self.readonly_fields if obj else ()

    def has_delete_permission(self, request: HttpRequest, obj: Pool | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Pool, form: Any, change: bool) -> None:
        values = {
            field: form.cleaned_data[field] for field in POOL_FIELDS if field in form.cleaned_data
        }
        if not change:
            values.pop("paytable_version", None)
            created = pool_create(actor=actor(request), **values)
            obj.pk = created.pk
            return
        pool_update(pool_id=obj.pk, changes=values, actor=actor(request))

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        if obj is None:
            return form
        pool_id = obj.pk

        class Checked(form):  # type: ignore[misc, valid-type]
            def clean(self) -> dict[str, Any]:
                cleaned: dict[str, Any] = super().clean()
                changes = {f: cleaned[f] for f in POOL_FIELDS if f in cleaned}
                try:  # the service's own rule and message; it checks again under the lock
                    check_pool_change(Pool.objects.get(pk=pool_id), changes)
                except PoolChangeRefused as refusal:
                    raise ValidationError(str(refusal)) from None
                return cleaned

        return Checked


class ReadOnlyAdmin(admin.ModelAdmin):
    """The journal and the awards are read here, never written."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Award)
class AwardAdmin(ReadOnlyAdmin):
    list_display = (
        "sequence",
        "pool",
        "round",
        "seat",
        "kind",
        "amount_cents",
        "status",
        "created_at",
    )
    list_filter = ("status", "kind", "pool")


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ("pk", "pool", "code", "debit", "credit", "amount_cents", "round", "created_at")
    list_filter = ("code", "pool")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("chain", "sequence", "kind", "actor", "occurred_at", "hash")
    list_filter = ("kind", "chain")


admin.site.unregister(User)


@admin.register(User)
class StaffAdmin(UserAdmin):
    """Staff accounts: roles are the groups supervisor, auditor and admin. Changes are audited
    (before and after); accounts are deactivated, never deleted."""

    actions = ["issue_api_token"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def _snapshot(self, user: User | None) -> dict[str, Any]:
        if user is None or user.pk is None:
            return {}
        return {
            "username": user.username,
            "is_active": user.is_active,
            "is_staff": user.is_staff,
            "is_superuser": user.is_superuser,
            "roles": sorted(user.groups.values_list("name", flat=True)),
        }

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        request._staff_before = self._snapshot(User.objects.filter(pk=obj.pk).first())  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        after = self._snapshot(form.instance)
        before = getattr(request, "_staff_before", {})
        if before != after:
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind="staff.changed",
                actor=actor(request),
                payload={"user": form.instance.username, "before": before, "after": after},
            )

    @admin.action(description="Issue a new API token (revokes the previous ones; shown once)")
    def issue_api_token(self, request: HttpRequest, queryset: Any) -> None:
        for user in queryset:
            token = staff_token_issue(user=user, revoke_others=True, actor=actor(request))
            self.message_user(request, f"{user.username}: {token}", messages.WARNING)
