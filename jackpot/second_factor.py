"""The staff's second factor and the credentials they make for themselves: a TOTP device
(django-otp's `otp_totp`), recovery codes (`otp_static`), the password they choose, and the
check of a code at sign-in.

Invariants:
- Every function acts for the person named `user` on their own account: the callers pass the
  signed-in person (`request.user`) or the person whose password the sign-in just checked,
  never someone an admin picked. Nothing here makes a credential for somebody else.
- A person has at most one confirmed TOTP device. Enrolling is refused once one is confirmed:
  replacing it is resetting their second factor, a staff change that takes two admins
  (`jackpot.staff`), never the owner alone (a stolen session must not swap the device).
- Recovery codes: `RECOVERY_CODES` of them, shown once; issuing new ones deletes every older
  one; a code works once (django-otp deletes it when it matches).
- A code is checked against the person's confirmed devices under django-otp's own rules: a TOTP
  code is refused again once used (its time step is recorded), and each device counts its
  failures (it refuses for a growing delay after them); the sign-in also throttles by name and
  address (`config.admin_login`).
- The database never holds a secret that gives a code: a TOTP key is stored sealed for its owner
  (`SealedTOTPDevice`, the only class codes are checked and devices made with), a recovery code
  as a keyed hash bound to its owner (`jackpot.tokens`); someone who reads, copies or writes the
  rows without SECRET_KEY cannot sign in as the owner (tests/security/test_second_factor.py).
- Each change (a device confirmed, recovery codes issued, a recovery code used, a password set)
  is one transaction with its audit event on the `admin` chain, also written to the security log
  (`jackpot.ledger.SECURITY_KINDS`). No event carries a key, a code or a password.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django_otp import user_has_device
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken

from core.errors import Forbidden
from jackpot import ledger, locks
from jackpot.models import SealedTOTPDevice, StaffSecurity
from jackpot.tokens import seal_recovery_code, seal_totp_key

RECOVERY_CODES = 10
TOTP_NAME = "authenticator"
RECOVERY_NAME = "recovery codes"
#: A TOTP code: six digits (django-otp's default); a recovery code is eight letters and digits.
TOTP_CODE = re.compile(r"[0-9]{6}")

ENROLLED = "staff.second_factor_enrolled"
RECOVERY_CODES_ISSUED = "staff.recovery_codes_issued"
RECOVERY_CODE_USED = "staff.recovery_code_used"
PASSWORD_CHANGED = "staff.password_changed"
#: The body field, and the form field, a two-person step's code travels in.
PRESENCE_FIELD = "second_factor_code"


@dataclass(frozen=True)
class Presence:
    """A fresh second-factor code `user_id` gave with this request (`present`): what the second
    person of a two-person step shows (approve an award or a jackpot's void, decide a
    referral, approve a change). A session or a staff token never stands in for it."""

    user_id: int


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


def presence_refused(user: User, presence: Presence | None) -> None:
    """The two-person step's own check that its caller asked `user` for a code (`present`):
    403 `second_factor_code_required` otherwise, where the second factor is required."""
    if required() and (presence is None or presence.user_id != user.pk):
        raise Forbidden(
            "second_factor_code_required",
            "this step is the second person's: it needs a fresh code of their second factor",
            param=PRESENCE_FIELD,
        )


class AlreadyEnrolled(ValueError):
    """The person has a confirmed TOTP device: only two admins may reset it."""


def required() -> bool:
    """Whether staff must sign in with a second factor (`STAFF_SECOND_FACTOR_REQUIRED`: always
    in production, off for `make run`'s demo unless asked for)."""
    return bool(settings.STAFF_SECOND_FACTOR_REQUIRED)


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


def totp_enrollment(user: User) -> SealedTOTPDevice:
    """The TOTP device `user` is enrolling: the unconfirmed one, or a new one with a fresh key
    (stored sealed). AlreadyEnrolled once a device is confirmed."""
    with transaction.atomic():
        devices = locks.second_factor_devices(SealedTOTPDevice.objects.filter(user=user))
        if devices.filter(confirmed=True).exists():
            raise AlreadyEnrolled(user.get_username())
        device = devices.filter(confirmed=False).order_by("pk").first()
        if device is None:
            key = seal_totp_key(user.pk, secrets.token_bytes(20))
            device = SealedTOTPDevice.objects.create(
                user=user, name=TOTP_NAME, confirmed=False, key=key
            )
    return device


@transaction.atomic
def totp_confirm(user: User, code: str) -> SealedTOTPDevice | None:
    """Confirm the device `user` is enrolling with its first code: the device, or None for a
    wrong code (counted by the device). AlreadyEnrolled once a device is confirmed."""
    devices = locks.second_factor_devices(SealedTOTPDevice.objects.filter(user=user))
    if devices.filter(confirmed=True).exists():
        raise AlreadyEnrolled(user.get_username())
    device = devices.filter(confirmed=False).order_by("pk").first()
    if device is None or not device.verify_token("".join(code.split())):
        return None
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    devices.filter(confirmed=False).delete()  # any other key shown is void
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=ENROLLED,
        actor=f"user:{user.get_username()}",
        payload={"user": user.get_username(), "device": "totp"},
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
        payload={"user": user.get_username(), "count": RECOVERY_CODES},
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
