"""Who may do what: staff accounts, their roles and flags, changed by two admins; a password reset
by one, which forces a new password at the next sign-in (compliance 47: no one acts as another
person, nor as two people).

Invariants:
- creating an account, a role or flag granted or revoked, a reactivation and a second factor's
  reset are two-person changes (`jackpot.approvals.changes`, kinds `staff.*`), never approved by
  the account's owner; deactivating, renaming: one admin;
- an admin never sets a colleague's password: a reset sets a random temporary one, to change at
  the next sign-in; a staff token is issued to its owner only;
- no change leaves an account both configuring and deciding money (400 `invalid_change`, and
  the database at commit); the first two admins are the operator's (`bootstrap_admin`).

Each rule in full, and the locks: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django_otp import devices_for_user

from core.errors import ApiError, Conflict
from core.tokens import issue_token
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import STAFF_KINDS, ChangeKind, ParameterChange, StaffSecurity, StaffToken
from jackpot.money import ledger, locks
from jackpot.staff import authority, duties, second_factor
from jackpot.staff.records import POWERS
from jackpot.staff.roles import ROLES, role_group

#: What a `staff.access` change may set; `is_active` only to True (a reactivation).
ACCESS_FIELDS = ("roles", "is_staff", "is_superuser", "is_active")
#: What a new account is proposed with.
CREATE_FIELDS = ("username", "roles", "is_staff")
#: The fields one admin changes alone (`staff_update`): they give no power.
PLAIN_FIELDS = ("first_name", "last_name", "email")


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def roles_of(user: User) -> list[str]:
    return sorted(user.groups.filter(name__in=ROLES).values_list("name", flat=True))


def snapshot(user: User | None) -> dict[str, Any]:
    """An account as its audit events show it: what it may do, never a credential. Its id ties
    its names to it (`jackpot.staff.records.Names`); events written before issue 37 lack it."""
    if user is None or user.pk is None:
        return {}
    return {
        "id": user.pk,
        "username": user.username,
        "is_active": user.is_active,
        "is_staff": user.is_staff,
        "is_superuser": user.is_superuser,
        "roles": roles_of(user),
        "second_factors": len(list(devices_for_user(user, confirmed=None))),
    }


def unexplained_refused(account: User) -> None:
    """409 `account_unexplained` when `account`'s powers are not the journal's: an event shows
    the account as its rows hold it, so it would certify powers no event gave (the rows are
    set right again by a two-person change, from the journal's values)."""
    if not authority.explained(account):
        raise Conflict(
            "account_unexplained",
            f"{account.username}'s roles or flags are not the ones the journal gave them: no "
            "change is recorded over them (the journal's verification names the difference)",
            param="user",
        )


def _invalid(field: str, message: str) -> ApiError:
    return ApiError("invalid_change", message, param=f"changes.{field}")


def _check_roles(roles: object) -> list[str]:
    if not isinstance(roles, list | tuple) or not all(isinstance(r, str) for r in roles):
        raise _invalid("roles", "roles is a list of role names")
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise _invalid("roles", f"unknown roles {', '.join(unknown)}: the roles are {ROLES}")
    return sorted(set(roles))


def _refuse_mixed(after: Mapping[str, Any], changed: Mapping[str, Any]) -> None:
    """400 `invalid_change` when the account `after` a change would both configure and decide
    money (`jackpot.staff.duties`; the database's constraint triggers refuse it at commit too)."""
    if duties.mixes(after["roles"], is_staff=after["is_staff"], is_superuser=after["is_superuser"]):
        field = "roles" if "roles" in changed else next(iter(sorted(changed)), "roles")
        raise _invalid(
            field,
            "separation of duties: an account that configures (the admin role, is_staff, "
            f"is_superuser) holds no money role ({', '.join(duties.MONEY_ROLES)}); it would "
            f"have roles {', '.join(after['roles']) or 'none'}, is_staff {after['is_staff']}, "
            f"is_superuser {after['is_superuser']}",
        )


def _check_flags(values: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """`values` limited to `fields`, each of its type; 400 `invalid_change` naming the field."""
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise _invalid(unknown[0], f"not one of {', '.join(fields)}: {', '.join(unknown)}")
    checked: dict[str, Any] = {}
    for field, value in values.items():
        if field == "roles":
            checked[field] = _check_roles(value)
        elif field == "username":
            if not isinstance(value, str) or not value:
                raise _invalid(field, "a user name is a non-empty string")
            try:
                UnicodeUsernameValidator()(value)
            except ValidationError as invalid:
                raise _invalid(field, " ".join(invalid.messages)) from None
            checked[field] = value
        elif type(value) is not bool:
            raise _invalid(field, f"{field} is true or false")
        else:
            checked[field] = value
    return checked


def staff_create_propose(*, values: Mapping[str, Any], reason: str, user: User) -> ParameterChange:
    """Propose a new staff account: its user name, roles and whether it signs in to the admin
    site. Another admin creates it; it has no usable password until an admin resets one."""
    account = _check_flags(values, CREATE_FIELDS)
    if "username" not in account:
        raise _invalid("username", "a new account needs a user name")
    if User.objects.filter(username=account["username"]).exists():
        raise _invalid("username", f"the user name {account['username']!r} is taken")
    account = {"roles": [], "is_staff": False, **account}
    _refuse_mixed({**account, "is_superuser": False}, account)
    return changes.propose(
        kind=ChangeKind.STAFF_CREATE, changes=account, before={}, reason=reason, user=user
    )


def _current(subject: User, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The account's `fields` as the journal gives them (a proposal is filed against what was
    approved, never against rows written behind the journal's back)."""
    now = {**snapshot(subject), **authority.journal_view(subject)}
    return {field: now[field] for field in fields}


def staff_access_propose(
    *, subject: User, values: Mapping[str, Any], reason: str, user: User
) -> ParameterChange:
    """Propose new roles or flags for `subject`, or its reactivation (`is_active` true; taking an
    account's power away is `staff_update`'s). Only what differs is filed (400 `no_change`)."""
    checked = _check_flags(values, ACCESS_FIELDS)
    if checked.get("is_active") is False:
        raise _invalid("is_active", "deactivating an account is one admin's act, not a proposal")
    before = _current(subject, checked)
    changed = {field: value for field, value in checked.items() if before[field] != value}
    if not changed:
        raise ApiError("no_change", f"{subject.username} already has these values", param="changes")
    _refuse_mixed({**snapshot(subject), **changed}, changed)
    return changes.propose(
        kind=ChangeKind.STAFF_ACCESS,
        subject=subject,
        changes=changed,
        before={field: before[field] for field in changed},
        reason=reason,
        user=user,
    )


def second_factor_reset_propose(*, subject: User, reason: str, user: User) -> ParameterChange:
    """Propose to delete `subject`'s second factor devices (a lost phone): approved, the owner
    enrols a new one at the next sign-in."""
    devices = snapshot(subject)["second_factors"]
    if not devices:
        raise ApiError("no_change", f"{subject.username} has no second factor", param="changes")
    return changes.propose(
        kind=ChangeKind.STAFF_SECOND_FACTOR_RESET,
        subject=subject,
        changes={"second_factors": 0},
        before={"second_factors": devices},
        reason=reason,
        user=user,
    )


def _stale(change: ParameterChange, why: str) -> Conflict:
    return Conflict(
        "change_stale",
        f"{why} since change {change.pk} was proposed: reject it and propose again",
        param="change",
    )


def _set_roles(account: User, roles: list[str]) -> None:
    account.groups.remove(*account.groups.filter(name__in=ROLES))
    account.groups.add(*(role_group(role) for role in roles))


def _set_powers(account: User, powers: Mapping[str, Any]) -> None:
    """Give `account` exactly `powers` (`POWERS`: its flags and roles)."""
    _set_roles(account, powers["roles"])
    flags = ["is_active", "is_staff", "is_superuser"]
    for field in flags:
        setattr(account, field, powers[field])
    account.save(update_fields=flags)


@transaction.atomic
def staff_change_approve(
    *, change_id: int, user: User, note: str = "", presence: Presence | None = None
) -> ParameterChange:
    """A second admin, not the account's owner, approves a staff change: applied now, if the
    account still is as the proposal saw it (409 `change_stale` otherwise)."""
    change = changes.proposed(change_id, kinds=STAFF_KINDS)
    changes.four_eyes(change, user, presence=presence)
    values = change.changes
    duties.defer_checks()  # roles, then flags: checked as the change leaves the account
    if change.kind == ChangeKind.STAFF_CREATE:
        if User.objects.filter(username=values["username"]).exists():
            raise _stale(change, f"the user name {values['username']!r} was taken")
        account = User(username=values["username"], is_staff=values["is_staff"])
        account.set_unusable_password()
        account.save()
        before: dict[str, Any] = {}
    else:
        account = locks.staff_account(pk=int(change.subject_id or 0))
        before = {**snapshot(account), **authority.journal_view(account)}
        if {field: before[field] for field in change.before} != change.before:
            raise _stale(change, f"{account.username}'s account changed")
    if change.kind == ChangeKind.STAFF_CREATE:
        _set_roles(account, values["roles"])
    elif change.kind == ChangeKind.STAFF_ACCESS:
        # Every power is set, from the journal's values and the change's: the event below then
        # shows what this approval made, never rows someone wrote behind the journal's back.
        _set_powers(account, {field: before[field] for field in POWERS} | dict(values))
    else:
        _set_powers(account, {field: before[field] for field in POWERS})
    if change.kind == ChangeKind.STAFF_SECOND_FACTOR_RESET:
        devices = list(devices_for_user(account, confirmed=None))
        for device in devices:
            device.delete()
        # The journal's word that the account has no second factor now (significant event SE14):
        # what lets it enroll again (`jackpot.staff.second_factor.journal_enrolled`).
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind=second_factor.RESET,
            actor=_actor(user),
            payload={
                "user": account.username,
                "user_id": account.pk,
                "change": change.pk,
                "devices": len(devices),
            },
        )
    if change.kind == ChangeKind.STAFF_CREATE:
        change.subject = account
        change.save(update_fields=["subject"])
    # The account as this change leaves it: another change applied since the proposal may have
    # made the mix (the transaction rolls back with the refusal).
    _refuse_mixed(snapshot(account), values)
    now = timezone.now()
    facts = changes.applied(change, user, note, now)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff.changed",
        actor=_actor(user),
        occurred_at=now,
        payload={
            "user": account.username,
            "before": before,
            "after": snapshot(account),
            "kind": change.kind,
            **facts,
        },
    )
    return change


@transaction.atomic
def staff_update(*, subject: User, values: Mapping[str, Any], actor: str) -> User:
    """One admin's changes of an account: its names and e-mail address, or its deactivation
    (which only takes power away: its tokens and sessions stop working). Whatever gives power is
    a proposal (`staff_access_propose`).

    The club keeps two active admins, the fewest that can approve a change: the deactivation of
    an admin that would leave fewer is refused (409 `too_few_admins`), else one admin could shut
    every other out. Counted under the admin role's group row (`locks.role_group_row`, taken
    after the account's), so two deactivations at once count each other's."""
    unknown = sorted(set(values) - {*PLAIN_FIELDS, "username", "is_active"})
    if unknown:
        raise ValueError(f"not one admin's change: {', '.join(unknown)}")
    account = locks.staff_account(pk=subject.pk)
    before = snapshot(account)
    changed = [field for field, value in values.items() if getattr(account, field) != value]
    if "is_active" in changed and values["is_active"]:
        raise ValueError("reactivating an account is a proposal another admin approves")
    # The journal's roles: an account given the admin role behind its back is no admin.
    if "is_active" in changed and "admin" in authority.journal_view(account)["roles"]:
        admins = role_group("admin")
        locks.role_group_row(admins)
        others = User.objects.filter(groups=admins, is_active=True).exclude(pk=account.pk)
        # Only admins the journal explains count: rows written behind its back are no one.
        left = sum(1 for other in others if authority.explained(other))
        if left < BOOTSTRAP_ADMINS:
            raise Conflict(
                "too_few_admins",
                f"the club keeps at least {BOOTSTRAP_ADMINS} active admins, the fewest that can "
                f"approve a change: deactivating {account.username} would leave {left}",
                param="is_active",
            )
    if not changed:
        return account
    if "is_active" in changed:
        # A deactivation takes power away whatever the rows say: the account keeps the
        # journal's other powers, inactive (a reactivation then gives back only those).
        _set_powers(account, {**authority.journal_view(account), "is_active": False})
    else:
        unexplained_refused(account)
    for field in changed:
        setattr(account, field, values[field])
    account.save(update_fields=changed)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff.changed",
        actor=actor,
        payload={
            "user": account.username,
            "before": before,
            "after": snapshot(account),
            "fields": sorted(changed),
        },
    )
    return account


def _temporary_password(account: User, user: User | None) -> str:
    """A random password for `account` that must be changed at its next sign-in."""
    password = secrets.token_urlsafe(12)
    account.set_password(password)
    account.save(update_fields=["password"])
    StaffSecurity.objects.update_or_create(
        user=account,
        defaults={
            "must_change_password": True,
            "password_reset_at": timezone.now(),
            "password_reset_by": user,
        },
    )
    return password


@transaction.atomic
def password_reset(*, subject: User, user: User) -> str:
    """An admin resets a colleague's password: a random temporary one, returned to be shown once
    and handed over, that the colleague must change at the next sign-in. Audited on the `admin`
    chain (`staff.password_reset`: who, whose; never the password)."""
    account = locks.staff_account(pk=subject.pk)
    password = _temporary_password(account, user)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=second_factor.PASSWORD_RESET,
        actor=_actor(user),
        # The ids: who may issue the account's activation code is decided by them, not by names.
        payload={
            "user": account.username,
            "user_id": account.pk,
            "by_id": user.pk,
            "must_change_password": True,
        },
    )
    return password


@transaction.atomic
def operator_grant(*, username: str, role: str, actor: str) -> User:
    """The operator's demo people (`seed_demo`, run by who holds the database): `username` gets
    exactly `role` (and the admin site if it is `admin`), no superuser flag, audited as
    `staff.changed` with the account before and after. No admin page or API calls this."""
    account, _ = locks.staff_account_or_new(username=username)
    before = snapshot(account)
    duties.defer_checks()  # roles, then flags: checked as they end
    _set_roles(account, [role])
    account.is_active, account.is_staff, account.is_superuser = True, role == "admin", False
    account.save(update_fields=["is_active", "is_staff", "is_superuser"])
    after = snapshot(account)
    if after != before:
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind="staff.changed",
            actor=actor,
            payload={"user": username, "before": before, "after": after},
        )
    return account


#: How many active admins the operator may make alone: two, the fewest that can approve.
BOOTSTRAP_ADMINS = 2


class BootstrapRefused(Exception):
    """The install already has its admins: the next ones are two-person changes."""


@transaction.atomic
def bootstrap_admin(*, username: str, actor: str) -> str:
    """The operator makes one of a fresh install's first two admins (active, `is_staff`, the
    admin role) with a temporary password to change at the first sign-in, returned to be shown
    once. BootstrapRefused once two active admins exist. Audited as `staff.bootstrapped`."""
    admins = role_group("admin")
    locks.role_group_row(admins)
    holders = User.objects.filter(groups=admins, is_active=True)
    if holders.count() >= BOOTSTRAP_ADMINS:
        raise BootstrapRefused(
            f"this install has its admins ({', '.join(sorted(h.username for h in holders))}): "
            "a new one is proposed by one admin and approved by another"
        )
    account, created = User.objects.get_or_create(username=username)
    if not created:
        unexplained_refused(account)
    before = {} if created else snapshot(account)
    if duties.mixes([*before.get("roles", []), "admin"], is_staff=True, is_superuser=False):
        raise BootstrapRefused(
            f"{username} holds a money role: an admin configures and decides no money "
            "(separation of duties)"
        )
    account.is_active = account.is_staff = True
    account.save(update_fields=["is_active", "is_staff"])
    account.groups.add(admins)
    password = _temporary_password(account, None)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff.bootstrapped",
        actor=actor,
        payload={"user": account.username, "before": before, "after": snapshot(account)},
    )
    return password


@transaction.atomic
def staff_token_issue(*, user: User, revoke_others: bool, actor: str) -> str:
    """Issue an API token for a staff account; returns the raw token (shown once). Only for the
    account's owner: the signed-in person's own page, or the demo's people (`seed_demo`). It
    expires STAFF_TOKEN_DAYS later, as its event says."""
    now = timezone.now()
    if revoke_others:
        StaffToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=now)
    token = issue_token("staff")
    expires_at = now + timedelta(days=settings.STAFF_TOKEN_DAYS)
    row = StaffToken.objects.create(
        user=user, token_hash=token.token_hash, prefix=token.prefix, expires_at=expires_at
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff_token.issued",
        actor=actor,
        occurred_at=now,
        payload={
            "user": user.get_username(),
            # Whose, by id too: a request's check of the token holds across renames
            # (`jackpot.staff.authority.token_explained`).
            "user_id": user.pk,
            # The row and its SHA-256, as stored: the journal then covers whose token it is
            # (`jackpot.staff.records`); the token itself is never recoverable from them.
            "token": row.pk,
            "token_hash": token.token_hash,
            "prefix": token.prefix,
            "expires_at": expires_at.isoformat(),
            "revoked_others": revoke_others,
        },
    )
    return token.raw
