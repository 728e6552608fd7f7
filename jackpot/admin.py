"""Django admin for the progressive: pools, the two-person changes, staff accounts and their
roles, and read-only views of awards, transfers and audit events (compliance 17, 36, 40, 47).

Invariants:
- one admin configures nothing that decides money or power alone: a pool's form, its stop, a
  staff account's roles and flags, a new account and a second factor's reset file a proposal
  another admin approves in "Parameter changes"; suspend and resume are one admin's (speed);
- an admin resets a colleague's password (temporary, shown once), never sets it; another admin
  issues the activation code; no staff token is issued here;
- the groups and the second factor devices have no page; every page needs the admin role;
- every change goes through a service that writes an audit event; the journal and the awards
  are never edited here.

Each action in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from core.errors import ApiError, Forbidden
from core.throttling import client_address
from jackpot.api.authentication import has_role
from jackpot.approvals.changes import change_reject
from jackpot.approvals.presence import PRESENCE_FIELD, Presence
from jackpot.models import (
    STAFF_KINDS,
    AuditEvent,
    Award,
    ChangeKind,
    ParameterChange,
    Pool,
    Transfer,
)
from jackpot.pools import lifecycle
from jackpot.pools.parameters import (
    CREATE_FIELDS,
    POOL_FIELDS,
    TERMS,
    change_approve,
    change_propose,
    check_change,
    pool_create_approve,
    pool_create_propose,
)
from jackpot.staff import accounts, duties, second_factor
from jackpot.staff.roles import ROLES

security_log = logging.getLogger("jackpot.security")


def actor(request: HttpRequest) -> str:
    return f"user:{request.user.get_username()}"


def log_denied(request: HttpRequest, why: str) -> None:
    """An authorization denial in the admin, in the security log with who and from where, as the
    API's are (`config.handlers`)."""
    security_log.warning(
        "refused %s %s: %s user=%s from=%s",
        request.method,
        request.path,
        why,
        request.user.get_username(),
        client_address(request) or "?",
    )


def staff_user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


class AdminRoleOnly(admin.ModelAdmin):
    """Pages for holders of the admin role: `is_superuser` opens nothing by itself. What each
    page may do beyond seeing is narrowed by its own class."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return has_role(request.user, "admin")

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, "admin")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return has_role(request.user, "admin")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return has_role(request.user, "admin")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class FilesProposals(AdminRoleOnly):
    """A page whose form files a proposal instead of saving: `save_model` leaves it on the
    request (`request._proposal`), and the answer is the proposal's page. A save the service
    refuses (its rule, checked under its lock: `refused`) wrote nothing, its transaction rolled
    back; the answer is the same form again, with the refusal's message."""

    def refused(self, request: HttpRequest, refusal: ApiError) -> None:
        request._refused = refusal  # type: ignore[attr-defined]
        self.message_user(request, f"Nothing is changed: {refusal.message}", messages.ERROR)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if getattr(request, "_proposal", None) is None:
            super().save_related(request, form, formsets, change)

    def log_addition(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return None  # nothing added: the proposal is its own audit event

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return None  # the services write the audit events

    def _to_proposal(self, request: HttpRequest) -> HttpResponse | None:
        proposal: ParameterChange | None = getattr(request, "_proposal", None)
        if proposal is None:
            return None
        self.message_user(
            request,
            f"Nothing is changed yet: proposal #{proposal.pk} ({', '.join(proposal.changes)}) "
            "is filed and waits for another admin's approval (Parameter changes).",
            messages.WARNING,
        )
        return HttpResponseRedirect(
            reverse("admin:jackpot_parameterchange_change", args=[proposal.pk])
        )

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        return self._to_proposal(request) or super().response_add(request, obj, post_url_continue)

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        if getattr(request, "_refused", None) is not None:
            return HttpResponseRedirect(request.path)
        return self._to_proposal(request) or super().response_change(request, obj)


class ReasonForm(forms.ModelForm):
    reason = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why: the change is proposed, and applied only when another admin approves it.",
    )


class PoolProposalForm(ReasonForm):
    """A pool's change form files a proposal: it asks why, and checks the values as the service
    will (`jackpot.pools.parameters.check_change`); the pool itself changes only on another admin's
    approval."""

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        changes = {f: cleaned[f] for f in POOL_FIELDS if f in cleaned}
        try:  # the service's own rule and message; approval checks again under the lock
            check_change(Pool.objects.get(pk=self.instance.pk), changes)
        except ApiError as refusal:
            raise ValidationError(refusal.message) from None
        return cleaned


@admin.register(Pool)
class PoolAdmin(FilesProposals):
    """Pools: proposed here (a new pool, or a change of one's parameters), created or changed
    only when another admin approves (`ParameterChangeAdmin`)."""

    list_display = (
        "name",
        "currency",
        "stake_cents",
        "meter_share_bp",
        "reserve_share_bp",
        "seed_cents",
        "verification_threshold_cents",
        "paytable_version",
        "status",
        "surveillance_required",
    )
    actions = ["suspend", "resume", "propose_stop_to_orphan"]
    readonly_fields = (
        "status",
        "status_reason",
        "status_since",
        "currency",
        "meter_units",
        "reserve_units",
        "meter_version",
        "hit_count",
        "last_award_number",
        "award_version",
        "created_at",
    )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [*CREATE_FIELDS, "reason"]
        editable = [field for field in POOL_FIELDS if field not in TERMS]
        return [*editable, "reason", *TERMS, *self.readonly_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: Pool | None = None) -> tuple[str, ...]:
        # An existing pool's increment terms never change (compliance 56): a replacement's.
        return (*TERMS, *self.readonly_fields) if obj else ()

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        kwargs["form"] = PoolProposalForm if obj is not None else ReasonForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: Pool, form: Any, change: bool) -> None:
        # Not applied: filed. `obj` carries the form's values and is never saved.
        data = form.cleaned_data
        if not change:
            request._proposal = pool_create_propose(  # type: ignore[attr-defined]
                values={field: data[field] for field in CREATE_FIELDS},
                reason=data["reason"],
                user=staff_user(request),
            )
            return
        request._proposal = change_propose(  # type: ignore[attr-defined]
            pool_id=obj.pk,
            changes={field: data[field] for field in POOL_FIELDS if field in data},
            reason=data["reason"],
            user=staff_user(request),
        )

    def _life(
        self, request: HttpRequest, queryset: QuerySet[Pool], run: Callable[[Pool, str], Any]
    ) -> None:
        """Run a pool's life step on each selected pool, saying who did it in the admin."""
        for pool in queryset.order_by("pk"):
            try:
                run(pool, f"in the admin by {request.user.get_username()}")
            except ApiError as refusal:
                self.message_user(request, f"{pool}: {refusal.message}", messages.ERROR)
            else:
                self.message_user(request, f"{pool}: done", messages.SUCCESS)

    @admin.action(description="Suspend (a technical fault): no progressive stake, nothing paid")
    def suspend(self, request: HttpRequest, queryset: QuerySet[Pool]) -> None:
        user = staff_user(request)
        self._life(
            request,
            queryset,
            lambda pool, who: lifecycle.pool_suspend(
                pool_id=pool.pk, reason=f"suspended {who}", user=user
            ),
        )

    @admin.action(description="Resume a suspended pool")
    def resume(self, request: HttpRequest, queryset: QuerySet[Pool]) -> None:
        user = staff_user(request)
        self._life(
            request,
            queryset,
            lambda pool, who: lifecycle.pool_resume(
                pool_id=pool.pk, reason=f"resumed {who}", user=user
            ),
        )

    @admin.action(
        description="Propose to stop for good, its liability to its orphan account (another "
        "admin approves; to another pool: POST /api/v1/pools/{pool}/stop)"
    )
    def propose_stop_to_orphan(self, request: HttpRequest, queryset: QuerySet[Pool]) -> None:
        user = staff_user(request)
        self._life(
            request,
            queryset,
            lambda pool, who: lifecycle.pool_stop_propose(
                pool_id=pool.pk,
                to="orphan",
                to_pool=None,
                reason=f"proposed {who}",
                user=user,
                voluntary=False,
            ),
        )


class PresenceActionForm(ActionForm):
    """The actions' form, with the approver's fresh code: the second person of a two-person
    step proves presence at that step (`jackpot.staff.second_factor.present`)."""

    second_factor_code = forms.CharField(
        required=False,
        max_length=32,
        label="Your code (to approve)",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "size": 10}),
    )


def presence_of(request: HttpRequest, decide: Callable[[Presence], None]) -> None:
    """Run `decide` with the code the approver sent with the action, checked once for the
    whole action; a refusal is shown and logged, and nothing is decided."""
    try:
        presence = second_factor.present(staff_user(request), request.POST.get(PRESENCE_FIELD))
    except ApiError as refusal:
        log_denied(request, f"{refusal.code}: {refusal.message}")
        messages.error(request, refusal.message)
        return
    decide(presence)


#: How a change of each kind is approved here. A table's move and a terminal token are approved
#: from the tables' list (its actions), where the token is shown to its approver.
APPROVE: dict[str, Callable[[ParameterChange, User, Presence], Any]] = {
    ChangeKind.POOL_PARAMETERS: lambda change, user, presence: change_approve(
        pool_id=int(change.pool_id or 0),
        change_id=change.pk,
        user=user,
        presence=presence,
    ),
    ChangeKind.POOL_CREATE: lambda change, user, presence: pool_create_approve(
        change_id=change.pk, user=user, presence=presence
    ),
    ChangeKind.POOL_STOP: lambda change, user, presence: lifecycle.pool_stop_approve(
        pool_id=int(change.pool_id or 0),
        change_id=change.pk,
        user=user,
        presence=presence,
    ),
    **dict.fromkeys(
        STAFF_KINDS,
        lambda change, user, presence: accounts.staff_change_approve(
            change_id=change.pk, user=user, presence=presence
        ),
    ),
}


@admin.register(ParameterChange)
class ParameterChangeAdmin(AdminRoleOnly):
    """Every two-person change: approve (another admin than the proposer and than the change's
    subject) or reject, through the same services as the API."""

    list_display = (
        "pk",
        "kind",
        "pool",
        "subject",
        "status",
        "changes",
        "before",
        "proposed_by",
        "proposed_at",
        "decided_by",
        "decided_at",
    )
    list_filter = ("kind", "status", "pool")
    actions = ["approve", "reject"]
    action_form = PresenceActionForm
    readonly_fields = (
        "kind",
        "pool",
        "subject",
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
        return False  # proposals are made on the pool's, the table's or the account's page

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The list and its actions; a proposal itself is read-only.
        return obj is None and super().has_change_permission(request)

    def _decide(self, request: HttpRequest, queryset: QuerySet[ParameterChange], run: Any) -> None:
        for proposal in queryset.order_by("pk"):
            try:
                run(proposal)
            except ApiError as refusal:
                if isinstance(refusal, Forbidden):
                    log_denied(request, f"{refusal.code} (#{proposal.pk}: {refusal.message})")
                self.message_user(request, f"#{proposal.pk}: {refusal.message}", messages.ERROR)
            else:
                self.message_user(request, f"#{proposal.pk}: done", messages.SUCCESS)

    @admin.action(description="Approve and apply (another admin than the proposer)")
    def approve(self, request: HttpRequest, queryset: QuerySet[ParameterChange]) -> None:
        def decide(presence: Presence) -> None:
            def run(proposal: ParameterChange) -> None:
                if proposal.kind == ChangeKind.POOL_CORRECTION:
                    raise Forbidden(
                        "permission_denied",
                        "a correction is a money decision: a manager approves it (POST "
                        "/api/v1/pools/{pool}/corrections/{change}/approve), never an admin",
                        param="change",
                    )
                if proposal.kind not in APPROVE:
                    raise ApiError(
                        "invalid_change",
                        "a table's move or terminal token is approved from the tables' list "
                        "(Tables: the action 'Approve the proposed move' or 'Approve the "
                        "proposed terminal tokens')",
                        param="change",
                    )
                APPROVE[proposal.kind](proposal, staff_user(request), presence)

            self._decide(request, queryset, run)

        presence_of(request, decide)

    @admin.action(description="Reject")
    def reject(self, request: HttpRequest, queryset: QuerySet[ParameterChange]) -> None:
        self._decide(
            request,
            queryset,
            lambda proposal: change_reject(
                change_id=proposal.pk,
                user=staff_user(request),
                note=f"rejected in the admin by {request.user.get_username()}",
            ),
        )


class ReadOnlyAdmin(AdminRoleOnly):
    """The journal and the awards are read here, never written."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Award)
class AwardAdmin(ReadOnlyAdmin):
    list_display = (
        "number",
        "pool",
        # The award's own record of its round (not `round`, the tables' row).
        "table_name",
        "round_name",
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


# Roles are fixed groups, and a second factor is its owner's: neither has a page where one admin
# could change it (`jackpot.staff.accounts` changes them, by two admins).
admin.site.unregister(User)
admin.site.unregister(Group)
admin.site.unregister(TOTPDevice)
admin.site.unregister(StaticDevice)


class PowerFields(forms.Form):
    """What gives an account power, as a form asks it: its roles, whether it signs in here."""

    roles = forms.MultipleChoiceField(
        choices=[(role, role) for role in ROLES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    is_staff = forms.BooleanField(required=False, help_text="Signs in to this admin site.")

    def refuse_mixed_duties(self, cleaned: dict[str, Any]) -> None:
        """The service's own rule (`jackpot.staff.duties`), told on the form: an account that
        configures holds no money role."""
        if duties.mixes(
            cleaned.get("roles") or [],
            is_staff=bool(cleaned.get("is_staff")),
            is_superuser=bool(cleaned.get("is_superuser")),
        ):
            raise ValidationError(
                {
                    "roles": "separation of duties: an account with the admin role, is_staff or "
                    f"is_superuser holds no money role ({', '.join(duties.MONEY_ROLES)})"
                }
            )


class StaffCreateForm(PowerFields, ReasonForm):
    """A new account, proposed: its user name, roles and whether it signs in here."""

    class Meta:
        model = User
        fields = ("username",)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        self.refuse_mixed_duties(cleaned)
        return cleaned


class StaffChangeForm(PowerFields, forms.ModelForm):
    """An account: its names, e-mail address and deactivation are saved at once; its roles and
    flags (and a reactivation), when changed, are filed as a proposal, with the reason."""

    is_superuser = forms.BooleanField(required=False, help_text="No role: Django's own flag.")
    reason = forms.CharField(
        max_length=500,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why, when the roles, flags or activity are changed: they are proposed, and "
        "applied only when another admin approves.",
    )

    class Meta:
        model = User
        fields = (*accounts.PLAIN_FIELDS, "username", "is_active")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial.update(
                roles=accounts.roles_of(self.instance),
                is_staff=self.instance.is_staff,
                is_superuser=self.instance.is_superuser,
            )

    def proposed(self) -> dict[str, Any]:
        """The roles and flags the form changes (a reactivation included)."""
        asked = {f: self.cleaned_data[f] for f in ("roles", "is_staff", "is_superuser")}
        asked["roles"] = sorted(asked["roles"])
        # The account as stored: the form's validation has already put its values on `instance`.
        now = accounts.snapshot(User.objects.get(pk=self.instance.pk))
        if self.cleaned_data["is_active"] and not now["is_active"]:
            asked["is_active"] = True
        return {field: value for field, value in asked.items() if now.get(field) != value}

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        proposing = self.instance.pk is not None and not self.errors and self.proposed()
        if proposing and not cleaned.get("reason"):
            raise ValidationError({"reason": "say why: the change is a proposal"})
        if proposing:
            self.refuse_mixed_duties(cleaned)
        return cleaned


@admin.register(User)
class StaffAdmin(FilesProposals, UserAdmin):
    """Staff accounts: roles are the groups supervisor, auditor and admin. Accounts are
    deactivated, never deleted; what gives power is proposed (`jackpot.staff.accounts`)."""

    form = StaffChangeForm
    add_form = StaffCreateForm
    fieldsets = (
        (None, {"fields": ("username", *accounts.PLAIN_FIELDS, "is_active")}),
        ("Proposed to another admin", {"fields": ("roles", "is_staff", "is_superuser", "reason")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"fields": ("username", "roles", "is_staff", "reason")}),)
    readonly_fields = ("last_login", "date_joined")
    list_display = ("username", "first_name", "last_name", "is_active", "is_staff")
    filter_horizontal = ()
    actions = ["reset_password", "issue_activation_code", "reset_second_factor"]

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> Any:
        why = "an admin resets a password (the action 'Reset password'), never sets it"
        log_denied(request, f"password form of user {id}: {why}")
        raise PermissionDenied(why)

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not change:
            values = {"username": data["username"], "roles": data["roles"]}
            values["is_staff"] = data["is_staff"]
            request._proposal = accounts.staff_create_propose(  # type: ignore[attr-defined]
                values=values, reason=data["reason"], user=staff_user(request)
            )
            return
        subject = User.objects.get(pk=obj.pk)
        proposed = form.proposed()
        try:
            accounts.staff_update(
                subject=subject,
                values={f: data[f] for f in (*accounts.PLAIN_FIELDS, "username", "is_active")}
                | ({"is_active": subject.is_active} if "is_active" in proposed else {}),
                actor=actor(request),
            )
        except ApiError as refusal:  # the last admins' deactivation (`too_few_admins`)
            self.refused(request, refusal)
            return
        if proposed:
            request._proposal = accounts.staff_access_propose(  # type: ignore[attr-defined]
                subject=subject, values=proposed, reason=data["reason"], user=staff_user(request)
            )

    @admin.action(
        description="Reset password: a temporary one, shown once, changed at the next sign-in"
    )
    def reset_password(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for account in queryset:
            password = accounts.password_reset(subject=account, user=staff_user(request))
            self.message_user(
                request,
                f"{account.username}: temporary password {password} (hand it over; it must be "
                "changed at the next sign-in, with the second factor; without one, another "
                "admin issues its activation code)",
                messages.WARNING,
            )

    @admin.action(
        description="Issue an activation code for a first sign-in's second factor (shown once; "
        "not by the admin who reset the password)"
    )
    def issue_activation_code(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for account in queryset:
            try:
                code = second_factor.activation_issue(subject=account, user=staff_user(request))
            except ApiError as refusal:
                self.message_user(request, f"{account.username}: {refusal.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"{account.username}: activation code {code} (hand it over yourself; it "
                    f"works once, for {second_factor.ACTIVATION_HOURS} hours, to set up the "
                    "second factor)",
                    messages.WARNING,
                )

    @admin.action(description="Propose a reset of the second factor (another admin approves)")
    def reset_second_factor(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for account in queryset:
            try:
                proposal = accounts.second_factor_reset_propose(
                    subject=account,
                    reason=f"proposed in the admin by {request.user.get_username()}",
                    user=staff_user(request),
                )
            except ApiError as refusal:
                self.message_user(request, f"{account.username}: {refusal.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"{account.username}: proposal #{proposal.pk} waits for another admin",
                    messages.WARNING,
                )
