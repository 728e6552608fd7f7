"""Django admin for the progressive: pools (a change is a proposal another admin approves, with
the pool's tables closed), the proposals, staff accounts and their roles, and read-only views of
awards, transfers and audit events.

Every change goes through a service that writes an audit event with before and after; the
journal and the awards are never edited here (their changes have their own workflow).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from config.errors import ApiError
from jackpot import ledger
from jackpot.changes import (
    POOL_FIELDS,
    change_approve,
    change_propose,
    change_reject,
    check_change,
)
from jackpot.models import AuditEvent, Award, ParameterChange, Pool, Transfer
from jackpot.services import pool_create, staff_token_issue


def actor(request: HttpRequest) -> str:
    return f"user:{request.user.get_username()}"


def _staff(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


class PoolProposalForm(forms.ModelForm):
    """A pool's change form files a proposal: it asks why, and checks the values as the service
    will (`jackpot.changes.check_change`); the pool itself changes only on another admin's
    approval."""

    reason = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why: the change is proposed, and applied only when another admin approves it.",
    )

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        changes = {f: cleaned[f] for f in POOL_FIELDS if f in cleaned}
        try:  # the service's own rule and message; approval checks again under the lock
            check_change(Pool.objects.get(pk=self.instance.pk), changes)
        except ApiError as refusal:
            raise ValidationError(refusal.message) from None
        return cleaned


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    """Pools: created here by one admin (a new pool has no table: it takes and pays nothing);
    changed only through a proposal that another admin approves (`ParameterChangeAdmin`)."""

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
        if obj is None:
            return list(POOL_FIELDS)
        return [*POOL_FIELDS, "reason", *self.readonly_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: Pool | None = None) -> tuple[str, ...]:
        return self.readonly_fields if obj else ()

    def has_delete_permission(self, request: HttpRequest, obj: Pool | None = None) -> bool:
        return False

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is not None:
            kwargs["form"] = PoolProposalForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: Pool, form: Any, change: bool) -> None:
        values = {
            field: form.cleaned_data[field] for field in POOL_FIELDS if field in form.cleaned_data
        }
        if not change:
            values.pop("paytable_version", None)
            created = pool_create(actor=actor(request), **values)
            obj.pk = created.pk
            return
        # Not applied: filed. `obj` carries the form's values and is never saved.
        proposal = change_propose(
            pool_id=obj.pk,
            changes=values,
            reason=form.cleaned_data["reason"],
            user=_staff(request),
        )
        request._pool_proposal = proposal  # type: ignore[attr-defined]

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return None  # nothing changed: the proposal is its own audit event

    def response_change(self, request: HttpRequest, obj: Pool) -> HttpResponse:
        proposal: ParameterChange | None = getattr(request, "_pool_proposal", None)
        if proposal is None:
            return super().response_change(request, obj)
        self.message_user(
            request,
            f"Nothing is changed yet: proposal #{proposal.pk} ({', '.join(proposal.changes)}) "
            "is filed and waits for another admin's approval (Parameter changes).",
            messages.WARNING,
        )
        return HttpResponseRedirect(
            reverse("admin:jackpot_parameterchange_change", args=[proposal.pk])
        )


@admin.register(ParameterChange)
class ParameterChangeAdmin(admin.ModelAdmin):
    """Proposed changes of pools' parameters: approve (another admin than the proposer, the
    pool's tables closed) or reject, through the same service as the API."""

    list_display = (
        "pk",
        "pool",
        "status",
        "changes",
        "before",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "decided_at",
    )
    list_filter = ("status", "pool")
    actions = ["approve", "reject"]
    readonly_fields = (
        "pool",
        "status",
        "changes",
        "before",
        "reason",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "decided_at",
        "decision_note",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # proposals are made on the pool's own page

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None  # the list and its actions; a proposal itself is read-only

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def _decide(self, request: HttpRequest, queryset: QuerySet[ParameterChange], run: Any) -> None:
        for proposal in queryset.order_by("pk"):
            try:
                run(proposal)
            except ApiError as refusal:
                self.message_user(request, f"#{proposal.pk}: {refusal.message}", messages.ERROR)
            else:
                self.message_user(request, f"#{proposal.pk}: done", messages.SUCCESS)

    @admin.action(description="Approve and apply (another admin than the proposer)")
    def approve(self, request: HttpRequest, queryset: QuerySet[ParameterChange]) -> None:
        self._decide(
            request,
            queryset,
            lambda proposal: change_approve(
                pool_id=proposal.pool_id, change_id=proposal.pk, user=_staff(request)
            ),
        )

    @admin.action(description="Reject")
    def reject(self, request: HttpRequest, queryset: QuerySet[ParameterChange]) -> None:
        self._decide(
            request,
            queryset,
            lambda proposal: change_reject(
                pool_id=proposal.pool_id,
                change_id=proposal.pk,
                user=_staff(request),
                note=f"rejected in the admin by {request.user.get_username()}",
            ),
        )


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
