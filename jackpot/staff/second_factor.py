"""The staff's second factor and the credentials they make for themselves: a TOTP device, recovery
codes, the password they choose, and the check of a code at sign-in.

Invariants:
- every function acts for `user` on their own account, never for someone an admin picked;
- at most one confirmed TOTP device: replacing it is a two-admin reset (`jackpot.staff.accounts`);
- whether a person is enrolled is the journal's to say; enrolled without a device is refused and
  a significant event;
- an enrollment needs an activation code from another admin, used once; recovery codes work once;
- the database holds no secret that gives a code (sealed TOTP keys, keyed hashes);
- each change is one transaction with its event on the `admin` chain and the security log, never
  carrying a key, code or password.

Each rule in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import hmac
import re
import secrets
from datetime import UTC, datetime

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_otp import user_has_device
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken

from core.errors import ApiError, Forbidden
from core.tokens import seal_activation_code, seal_recovery_code, seal_totp_key
from jackpot.approvals.presence import PRESENCE_FIELD, Presence, required
from jackpot.models import ActivationCode, AuditEvent, SealedTOTPDevice, StaffSecurity
from jackpot.models.audit import SECOND_FACTOR_KINDS
from jackpot.money import ledger, locks
from jackpot.money.canonical import chain_hash_matches

RECOVERY_CODES = 10
TOTP_NAME = "authenticator"
RECOVERY_NAME = "recovery codes"
#: A TOTP code: six digits (django-otp's default); a recovery code is eight letters and digits.
TOTP_CODE = re.compile(r"[0-9]{6}")

ENROLLED, RESET = SECOND_FACTOR_KINDS  # significant events SE13, SE14
RECOVERY_CODES_ISSUED = "staff.recovery_codes_issued"  # SE15
MISSING = "staff.second_factor_missing"  # SE16
RECOVERY_CODE_USED = "staff.recovery_code_used"
PASSWORD_CHANGED = "staff.password_changed"
PASSWORD_RESET = "staff.password_reset"
ACTIVATION_ISSUED = "staff.activation_code_issued"
#: How long an activation code may be used after it is issued.
ACTIVATION_HOURS = 24
_ACTIVATION_LETTERS = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i to misread


def present(user: User, code: object) -> Presence:
    """Check the code `user` sent with a two-person step, before the step's transaction (so a
    wrong code stays counted by the device): 403 `second_factor_code_required` without one,
    `second_factor_code_wrong` when no confirmed device of theirs accepts it (a TOTP code is
    refused again once used, so the sign-in's code does not do). Where the second factor is
    not required (`make run`'s demo), no code is asked for."""
    if not required():
        return Presence(user.pk)
    if not isinstance(code, str) or not code.strip():
        raise Forbidden(
            "second_factor_code_required",
            "this step is the second person's: send a fresh code of your authenticator (or a "
            "recovery code) with it",
            param=PRESENCE_FIELD,
        )
    if check_code(user, code) is None:
        raise Forbidden(
            "second_factor_code_wrong",
            "this code is not one of your authenticator's now (or it was used already)",
            param=PRESENCE_FIELD,
        )
    return Presence(user.pk)


class AlreadyEnrolled(ValueError):
    """The person has a confirmed TOTP device: only two admins may reset it."""


class SecondFactorMissing(PermissionError):
    """The journal says the person has a second factor and no confirmed device is left: only
    two admins' reset lets them enroll again."""


class ActivationNeeded(PermissionError):
    """No valid activation code stands behind this enrollment (none given, used, expired)."""


def has_code_device(user: User) -> bool:
    """Whether `user` has a confirmed device to give a code from (TOTP or recovery codes)."""
    return bool(user_has_device(user, confirmed=True))


def enrolled(user: User) -> bool:
    """Whether `user` has a confirmed TOTP device."""
    return SealedTOTPDevice.objects.filter(user=user, confirmed=True).exists()


def must_change_password(user: User) -> bool:
    """Whether an admin's reset left `user` a temporary password to replace before anything."""
    return StaffSecurity.objects.filter(user=user, must_change_password=True).exists()


def recovery_codes_left(user: User) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def check_code(user: User, code: str) -> Device | None:
    """The confirmed device of `user` that accepts `code` (a TOTP code or a recovery code), or
    None. A recovery code is used up, and its use audited, in the same transaction."""
    code = "".join(code.split()).lower()
    # A code is tried on the devices of its kind only: a device counts every code it refuses.
    totp = bool(TOTP_CODE.fullmatch(code))
    model: type[Device] = SealedTOTPDevice if totp else StaticDevice
    given = code if totp else seal_recovery_code(user.pk, code)
    with transaction.atomic():
        found = locks.second_factor_devices(model.objects.devices_for_user(user, confirmed=True))
        device = next((each for each in found if each.verify_token(given)), None)
        if isinstance(device, StaticDevice):
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind=RECOVERY_CODE_USED,
                actor=f"user:{user.get_username()}",
                payload={"user": user.get_username(), "left": device.token_set.count()},
            )
    return device


def _written_by_the_service(event: AuditEvent) -> bool:
    """Whether `event`'s link is the journal key's (a row inserted by SQL is not): staff events
    carry no transfers."""
    content = ledger.event_content(event, [])
    return chain_hash_matches(ledger.journal_key(), event.prev_hash, content, event.hash)


def _about(user: User, payload: object) -> bool:
    """Whether an event's payload is about the account `user`: by its id when it names one (an
    earlier account of the same name is another person), else by its name."""
    if not isinstance(payload, dict):
        return False
    if "user_id" in payload:
        return bool(payload["user_id"] == user.pk)
    return bool(payload.get("user") == user.get_username())


def journal_enrolled(user: User) -> bool:
    """Whether the journal says `user` has a second factor: their last `ENROLLED` or `RESET`
    event is an enrollment. Only their events are read (the partial indexes on the payload's
    user and user id), newest first, each checked against the journal's key."""
    events = (
        AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN, kind__in=SECOND_FACTOR_KINDS)
        .filter(Q(payload__user=user.get_username()) | Q(payload__user_id=user.pk))
        .order_by("-sequence")
    )
    for event in events.iterator(chunk_size=20):
        if _about(user, event.payload) and _written_by_the_service(event):
            return event.kind == ENROLLED
    return False


def second_factor_missing(user: User) -> bool:
    """Whether `user` has no confirmed TOTP device though the journal says they enrolled one."""
    return not enrolled(user) and journal_enrolled(user)


@transaction.atomic
def refuse_missing(user: User, *, door: str) -> None:
    """A sign-in of `user` refused because their device is gone from the rows but not from the
    journal: the significant event `MISSING` (whoever gave the password, nothing is enrolled)."""
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=MISSING,
        actor=f"system:sign-in:{door}",
        payload={"user": user.get_username(), "user_id": user.pk, "door": door},
    )


# --- activation codes: a second admin's leave for a first enrollment ----------------------------


def _last_reset_by(user: User) -> tuple[int | None, str] | None:
    """Who last reset `user`'s password, as the journal says: (their id, their actor), or None."""
    resets = AuditEvent.objects.filter(
        chain=ledger.ADMIN_CHAIN, kind=PASSWORD_RESET, payload__user=user.get_username()
    ).order_by("-sequence")
    for event in resets[:20]:
        if _about(user, event.payload) and _written_by_the_service(event):
            by = event.payload.get("by_id")
            return (by if isinstance(by, int) else None), event.actor
    return None


def _resetter(user: User, issuer: User | None) -> bool:
    """Whether `issuer` is the admin who last reset `user`'s password (the operator never is)."""
    if issuer is None:
        return False
    last = _last_reset_by(user)
    if last is None:
        return False
    by_id, actor = last
    return by_id == issuer.pk if by_id is not None else actor == f"user:{issuer.get_username()}"


def _normal(typed: str) -> str:
    return "".join(ch for ch in typed.lower() if ch.isalnum())


def _seal(row_user: int, issuer: int | None, expires: int, code: str) -> str:
    return seal_activation_code(row_user, issuer or 0, str(expires), _normal(code))


@transaction.atomic
def activation_issue(*, subject: User, user: User | None) -> str:
    """An activation code for `subject`'s enrollment, issued by the admin `user` (None: the
    operator, `bootstrap_admin`), returned to be shown once to them; earlier ones of `subject`
    are void. 403 `four_eyes` for the account's owner or the admin who last reset its password;
    400 `no_change` when the journal or the rows say it has a second factor. Audited on
    the `admin` chain (`staff.activation_code_issued`: who, for whom, until when; never the
    code)."""
    account = locks.staff_account(pk=subject.pk)
    if user is not None and user.pk == account.pk:
        raise Forbidden("four_eyes", "an activation code is issued by another admin", param="user")
    if _resetter(account, user):
        raise Forbidden(
            "four_eyes",
            f"you reset {account.username}'s password: another admin issues the activation code",
            param="user",
        )
    if enrolled(account) or journal_enrolled(account):
        raise ApiError(
            "no_change",
            f"{account.username} has a second factor: two admins reset it before a new one",
            param="user",
        )
    code = "".join(secrets.choice(_ACTIVATION_LETTERS) for _ in range(12))
    expires = int(timezone.now().timestamp()) + ACTIVATION_HOURS * 3600
    ActivationCode.objects.filter(user=account).delete()
    now = timezone.now()
    ActivationCode.objects.create(
        user=account,
        issued_by=user,
        code_hash=_seal(account.pk, user.pk if user else None, expires, code),
        issued_at=now,
        expires_at=datetime.fromtimestamp(expires, tz=UTC),
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=ACTIVATION_ISSUED,
        actor=f"user:{user.get_username()}" if user else "system:operator",
        occurred_at=now,
        payload={
            "user": account.username,
            "user_id": account.pk,
            "expires_at": datetime.fromtimestamp(expires, tz=UTC).isoformat(),
        },
    )
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))


def _valid(user: User, row: ActivationCode, code: str | None = None) -> bool:
    """Whether `row` still allows `user`'s enrollment (and is the row of `code`, when given):
    its hash, not expired, its issuer active and neither `user` nor the last who reset their
    password."""
    expires = int(row.expires_at.timestamp())
    if expires <= timezone.now().timestamp() or row.issued_by_id == user.pk:
        return False
    if row.issued_by is not None and not row.issued_by.is_active:
        return False  # an admin deactivated since takes their codes with them
    if code is not None and not hmac.compare_digest(
        row.code_hash, _seal(user.pk, row.issued_by_id, expires, code)
    ):
        return False
    return not _resetter(user, row.issued_by)


def activation_check(user: User, code: str) -> ActivationCode | None:
    """The activation code `user` typed: its row if it allows their enrollment, else None (a
    wrong code, counted by the caller's throttle). Not used up here: the confirmation does."""
    if not _normal(code):
        return None
    found = ActivationCode.objects.filter(user=user).select_related("issued_by")
    return next((row for row in found if _valid(user, row, code)), None)


def _activation(user: User, activation_id: int | None) -> ActivationCode:
    """The activation row this enrollment was allowed by, still valid; ActivationNeeded else."""
    row = (
        ActivationCode.objects.filter(pk=activation_id, user=user)
        .select_related("issued_by")
        .first()
        if activation_id
        else None
    )
    if row is None or not _valid(user, row):
        raise ActivationNeeded(user.get_username())
    return row


def _check_may_enroll(user: User, devices: QuerySet[SealedTOTPDevice]) -> None:
    if devices.filter(confirmed=True).exists():
        raise AlreadyEnrolled(user.get_username())
    if journal_enrolled(user):
        raise SecondFactorMissing(user.get_username())


def totp_new_device(user: User, *, activation_id: int | None) -> SealedTOTPDevice:
    """A new TOTP device for `user` to enroll, with a fresh key (stored sealed), its key to be
    shown in this response only: every other unconfirmed device of theirs is deleted (a key
    shown before is void). AlreadyEnrolled once a device is confirmed; SecondFactorMissing when
    the journal says they have one; ActivationNeeded without a valid activation code."""
    with transaction.atomic():
        devices = locks.second_factor_devices(SealedTOTPDevice.objects.filter(user=user))
        _check_may_enroll(user, devices)
        _activation(user, activation_id)
        devices.filter(confirmed=False).delete()
        key = seal_totp_key(user.pk, secrets.token_bytes(20))
        return SealedTOTPDevice.objects.create(user=user, name=TOTP_NAME, confirmed=False, key=key)


@transaction.atomic
def totp_confirm(
    user: User, code: str, *, device_id: int | None, activation_id: int | None
) -> SealedTOTPDevice | None:
    """Confirm the device `device_id` that `user` was shown with its first code: the device, or
    None for a wrong code (counted by the device) or a device that is not that one any more.
    Uses up the activation code. AlreadyEnrolled, SecondFactorMissing, ActivationNeeded as
    `totp_new_device`."""
    devices = locks.second_factor_devices(SealedTOTPDevice.objects.filter(user=user))
    _check_may_enroll(user, devices)
    activation = _activation(user, activation_id)
    device = devices.filter(confirmed=False, pk=device_id).first() if device_id else None
    if device is None or not device.verify_token("".join(code.split())):
        return None
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    devices.filter(confirmed=False).delete()  # any other key shown is void
    issuer = activation.issued_by
    ActivationCode.objects.filter(user=user).delete()  # used once
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=ENROLLED,
        actor=f"user:{user.get_username()}",
        payload={
            "user": user.get_username(),
            "user_id": user.pk,
            "device": "totp",
            "activated_by": issuer.get_username() if issuer else "operator",
        },
    )
    return device


@transaction.atomic
def recovery_codes_issue(user: User) -> list[str]:
    """`RECOVERY_CODES` new recovery codes for `user`, replacing every older one: shown once."""
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=RECOVERY_NAME, confirmed=True)
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(
        StaticToken(device=device, token=seal_recovery_code(user.pk, code)) for code in codes
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=RECOVERY_CODES_ISSUED,
        actor=f"user:{user.get_username()}",
        payload={"user": user.get_username(), "user_id": user.pk, "count": RECOVERY_CODES},
    )
    return codes


@transaction.atomic
def password_set(user: User, password: str) -> None:
    """`user` chooses a new password: Django's validators, and not the one in use (an admin's
    temporary one); clears the pending change. ValidationError with the validators' messages."""
    if user.check_password(password):
        raise ValidationError(
            "The new password must differ from the current one.", code="password_unchanged"
        )
    validate_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    StaffSecurity.objects.filter(user=user).update(must_change_password=False)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=PASSWORD_CHANGED,
        actor=f"user:{user.get_username()}",
        payload={"user": user.get_username()},
    )
