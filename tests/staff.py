"""Staff accounts for tests, given their roles the way the service gives them.

A role is given by an approved two-person change, whose `staff.changed` event shows the account
after it (`jackpot.staff.accounts`); the journal's verification compares every account with power
with its last such event (`jackpot.staff.records`), so an account given roles behind the journal's
back is reported. `grant_roles` is the approved change's outcome for a test's cast of people: the
groups and that event, in one transaction. (tests/security plays the insider who does without it.)
"""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.test import Client
from django.utils import timezone
from django_otp.oath import TOTP

from core.tokens import seal_totp_key
from jackpot.awards.workflow import award_review
from jackpot.models import SealedTOTPDevice, Verdict
from jackpot.money import ledger
from jackpot.staff.accounts import snapshot, staff_token_issue
from jackpot.staff.roles import role_group
from jackpot.staff.second_factor import ENROLLED, TOTP_NAME


def grant_roles(user: User, *groups: Group) -> User:
    with transaction.atomic():
        before = snapshot(user)
        user.groups.add(*groups)
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind="staff.changed",
            actor="test",
            payload={"user": user.username, "before": before, "after": snapshot(user)},
        )
    return user


def enroll(user: User) -> SealedTOTPDevice:
    """A confirmed TOTP device for `user`, its key sealed as the person's own enrolment makes it
    (`jackpot.staff.second_factor.totp_new_device`), confirmed without spending a code, with the
    journal's `staff.second_factor_enrolled` event that the enrolment writes."""
    with transaction.atomic():
        device = SealedTOTPDevice.objects.create(
            user=user,
            name=TOTP_NAME,
            confirmed=True,
            key=seal_totp_key(user.pk, secrets.token_bytes(20)),
        )
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind=ENROLLED,
            actor=f"user:{user.username}",
            payload={"user": user.username, "user_id": user.pk, "device": "totp"},
        )
    return device


#: The password of the accounts `person` makes (one the password validators accept, for a test
#: that types it as a new one).
PASSWORD = "a long floor password"


def person(name: str, *roles: str, **flags: bool) -> User:
    """An account with `roles`, given as the service gives them (`grant_roles`)."""
    user = User.objects.create_user(username=name, password=PASSWORD, **flags)
    for role in roles:
        grant_roles(user, role_group(role))
    return user


def enrolled(name: str, *roles: str, **flags: bool) -> User:
    """`person` with a confirmed second factor (`enroll`): what the floor's door and a money
    step's fresh code ask of staff when `STAFF_SECOND_FACTOR_REQUIRED` is on."""
    user = person(name, *roles, **flags)
    enroll(user)
    return user


def code_for(device: SealedTOTPDevice, steps_ahead: int = 0) -> str:
    """The code `device`'s authenticator shows now (or `steps_ahead` time steps later)."""
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + steps_ahead * device.step
    return f"{totp.token():0{device.digits}d}"


def wrong_code_for(device: SealedTOTPDevice) -> str:
    """A six-digit code `device` refuses (none of the three its drift window accepts)."""
    right = {code_for(device, ahead) for ahead in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in right)


def code(user: User, steps_ahead: int = 0) -> str:
    """The code `user`'s confirmed device shows now (or `steps_ahead` steps later)."""
    return code_for(SealedTOTPDevice.objects.get(user=user, confirmed=True), steps_ahead)


def wrong_code(user: User) -> str:
    """A code `user`'s confirmed device refuses."""
    return wrong_code_for(SealedTOTPDevice.objects.get(user=user, confirmed=True))


def staff_token(user: User) -> str:
    """A staff token `user` issued for itself: for a client not Django's (a live server's, the
    generated client's), or a header built by the test."""
    return staff_token_issue(user=user, revoke_others=False, actor="test")


def token_client(user: User) -> Client:
    """An API client carrying a staff token `user` issued for itself."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {staff_token(user)}")


def api_clients(**cast: str) -> dict[str, Client]:
    """A cast of people, each an API client with its role: `api_clients(ana="supervisor")`."""
    return {name: token_client(person(name, role)) for name, role in cast.items()}


def signed_in(user: User) -> Client:
    """A browser session of `user` (the sign-in's steps are tests/security/test_second_factor's)."""
    client = Client()
    client.force_login(user)
    return client


#: The surveillance officer `surveilled` records reviews as (made when first needed).
OFFICER = "sam"


def surveilled(award_id: int, *, by: str = OFFICER, referral: str | None = None) -> None:
    """Surveillance's confirmed video review of `award_id`, recorded as the service records it
    (`jackpot.awards.workflow.award_review`): what a jackpot of a pool requiring it needs before its
    approval. `by` is a surveillance officer, made with the role when missing. With `referral`
    (its reason), the review refers the award to a manager instead (`referred`)."""
    officer = User.objects.filter(username=by).first() or person(by, "surveillance")
    now = timezone.now()
    award_review(
        award_id=award_id,
        user=officer,
        camera="table camera",
        footage_from=now - timedelta(minutes=10),
        footage_to=now,
        verdict=Verdict.CONFIRMED if referral is None else Verdict.REFERRED,
        reason=referral,
        note=None,
    )


def referred(award_id: int, *, by: str = OFFICER) -> None:
    """Surveillance refers `award_id` to a manager (`surveilled` with a reason)."""
    surveilled(award_id, by=by, referral="the footage shows the dealer's hand over the deck")
