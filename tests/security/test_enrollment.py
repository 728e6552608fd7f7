"""Compliance 51, issue 37 item 3: a second factor's secret is shown only to its owner, only
when made; an admin who resets a password never completes that account's first sign-in alone.

The insider holds one admin account and SQL as the service's role (`connection.cursor()`), not
SECRET_KEY nor the journal's key. Each test plays the steps through the real doors, with the
second factor required as in production, and asserts the refusal and what was not written.
"""

from __future__ import annotations

import re
import time
import uuid
from base64 import b32decode

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django_otp.oath import TOTP

from core.errors import ApiError, Forbidden
from jackpot.approvals import presence
from jackpot.models import (
    ActivationCode,
    AuditEvent,
    OutboxMessage,
    SealedTOTPDevice,
    StaffSecurity,
)
from jackpot.notifications import significant
from jackpot.staff import second_factor
from jackpot.staff.accounts import (
    password_reset,
    second_factor_reset_propose,
    staff_change_approve,
    staff_create_propose,
)
from tests.security.test_second_factor import STEP
from tests.staff import PASSWORD, enrolled, person, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def required(settings):
    """Production's rule, and login counters of this test only."""
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    settings.THROTTLE_ADMIN_LOGIN = "20/day"
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def shown(key: bytes, steps_ahead: int = 0) -> str:
    totp = TOTP(key, 30, 0, 6)
    totp.time = time.time() + steps_ahead * 30
    return f"{totp.token():06d}"


def key_of(setup: dict[str, str]) -> bytes:
    return b32decode(setup["key"].replace(" ", ""))


def significant_told() -> list[dict]:
    """The significant events' webhooks enqueued so far
    (`jackpot.notifications.significant.follow`)."""
    messages = OutboxMessage.objects.filter(topic="significant_event").order_by("pk")
    return [message.payload for message in messages]


def admin_events() -> list[tuple[str, dict]]:
    return list(
        AuditEvent.objects.filter(chain="admin").order_by("sequence").values_list("kind", "payload")
    )


def password_step(client: Client, name: str, password: str = PASSWORD):
    return client.post("/floor/login/", {"username": name, "password": password})


def step(client: Client, **answer: str):
    return client.post(STEP, answer)


def devices(user: User) -> list[tuple[int, str, bool]]:
    rows = SealedTOTPDevice.objects.filter(user=user).order_by("pk")
    return list(rows.values_list("pk", "key", "confirmed"))


def admins() -> tuple[User, User]:
    return (
        enrolled("root", "admin", is_staff=True),
        enrolled("ops", "admin", is_staff=True),
    )


def activation_from_admin(admin: User, subject: User) -> tuple[str, str]:
    """The Django admin's action by `admin`: the code it shows once ('' if none), its page."""
    page = signed_in(admin).post(
        "/admin/auth/user/",
        {"action": "issue_activation_code", "_selected_action": [subject.pk]},
        follow=True,
    )
    text = page.content.decode()
    shown = re.search(r"activation code ([a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}) ", text)
    return (shown.group(1) if shown else ""), text


def test_sql_cannot_make_the_enrollment_show_a_colleagues_secret(
    django_capture_on_commit_callbacks,
):
    bob = enrolled("bob", "supervisor")
    second_factor.recovery_codes_issue(bob)
    device = SealedTOTPDevice.objects.get(user=bob)
    real_key = device.bin_key
    # The insider, by SQL: bob's devices unconfirmed, his password hash one the insider knows.
    with connection.cursor() as sql:
        sql.execute("SELECT password FROM auth_user WHERE id = %s", [bob.pk])
        (saved,) = sql.fetchone()
        sql.execute("UPDATE otp_totp_totpdevice SET confirmed = false WHERE user_id = %s", [bob.pk])
        sql.execute(
            "UPDATE otp_static_staticdevice SET confirmed = false WHERE user_id = %s", [bob.pk]
        )
        sql.execute(
            "UPDATE auth_user SET password = %s WHERE id = %s",
            [make_password("the insider's password"), bob.pk],
        )
    rows, events = devices(bob), len(admin_events())
    outbox = len(significant_told())

    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        assert password_step(client, "bob", "the insider's password")["Location"] == STEP
    refused = client.get(STEP)
    text = refused.content.decode()
    assert refused.status_code == 403 and "deux administrateurs" in text
    assert "otpauth://" not in text and "totp-key" not in text
    # Nothing more to ask: every answer of the enrollment meets the login page; no key anywhere.
    for answer in ({"step": "enroll", "activation": "abcd-efgh-jkmn"}, {"step": "enroll"}):
        again = client.post(STEP, answer)
        assert again.status_code == 302 and again["Location"].startswith("/floor/login/")
    assert client.get("/floor/account/")["Location"].startswith("/floor/login/")
    assert "_auth_user_id" not in client.session
    # bob's device is as the insider left it: not replaced, not shown, not deleted.
    assert devices(bob) == rows
    # One thing written: the refusal, a significant event (SE16), told by its webhook.
    new = admin_events()[events:]
    assert new == [
        (
            "staff.second_factor_missing",
            {"user": "bob", "user_id": bob.pk, "door": "floor"},
        )
    ]
    assert [told["code"] for told in significant_told()[outbox:]] == ["SE16"]
    assert not ActivationCode.objects.exists()

    # Everything put back: bob signs in with his own device, as before.
    with connection.cursor() as sql:
        sql.execute("UPDATE otp_totp_totpdevice SET confirmed = true WHERE user_id = %s", [bob.pk])
        sql.execute(
            "UPDATE otp_static_staticdevice SET confirmed = true WHERE user_id = %s", [bob.pk]
        )
        sql.execute("UPDATE auth_user SET password = %s WHERE id = %s", [saved, bob.pk])
    own = Client()
    assert password_step(own, "bob")["Location"] == STEP
    assert step(own, step="code", code=shown(real_key))["Location"] == "/floor/awards/"


def test_every_enrollment_view_makes_a_new_key_and_only_the_last_confirms():
    _, ops = admins()
    dan = person("dan", "supervisor")
    activation = second_factor.activation_issue(subject=dan, user=ops)
    client = Client()
    assert password_step(client, "dan")["Location"] == STEP
    first_view = client.get(STEP)
    assert first_view.context["phase"] == "activate" and first_view.context["setup"] is None
    assert not SealedTOTPDevice.objects.filter(user=dan).exists()  # no key before the code
    assert step(client, step="enroll", activation=activation)["Location"] == STEP

    first = client.get(STEP).context["setup"]
    second = client.get(STEP).context["setup"]
    assert first["key"] != second["key"]
    assert len(devices(dan)) == 1  # the first key's device is gone
    # The first key's code: refused, and the refusal shows no key at all.
    wrong = step(client, step="enroll", code=shown(key_of(first)))
    assert wrong.status_code == 200 and wrong.context["setup"] is None
    assert "otpauth://" not in wrong.content.decode()
    assert not SealedTOTPDevice.objects.filter(user=dan, confirmed=True).exists()
    time.sleep(1.1)  # the device's own delay after a failure (django-otp)
    done = step(client, step="enroll", code=shown(key_of(second)))
    assert done.status_code == 200 and len(done.context["codes"]) == 10
    assert client.get("/api/v1/awards").status_code == 200
    (confirmed,) = SealedTOTPDevice.objects.filter(user=dan)
    assert confirmed.confirmed and confirmed.bin_key == key_of(second)


def test_one_admin_who_resets_a_password_cannot_complete_the_first_sign_in():
    root, ops = admins()
    proposal = staff_create_propose(
        values={"username": "eve", "roles": ["supervisor"]}, reason="new colleague", user=root
    )
    staff_change_approve(change_id=proposal.pk, user=ops, presence=presence.Presence(ops.pk))
    eve = User.objects.get(username="eve")
    temporary = password_reset(subject=eve, user=root)

    # root, who reset it, issues no activation code: not in the admin, not by the service.
    code, page = activation_from_admin(root, eve)
    assert code == "" and "another admin issues the activation code" in page
    with pytest.raises(Forbidden):
        second_factor.activation_issue(subject=eve, user=root)
    with pytest.raises(Forbidden):  # nor eve for herself
        second_factor.activation_issue(subject=eve, user=eve)
    assert not ActivationCode.objects.exists()
    events = len(admin_events())

    # root, with the temporary password, goes as far as he can: the activation code, no key.
    client = Client()
    assert password_step(client, "eve", temporary)["Location"] == STEP
    chosen = "a password root chose for eve"
    assert step(client, step="password", new_password1=chosen, new_password2=chosen)[
        "Location"
    ] == (STEP)
    page = client.get(STEP)
    assert page.context["step"] == "enroll" and page.context["phase"] == "activate"
    for guess in ("abcd-efgh-jkmn", "", "root"):
        refused = step(client, step="enroll", activation=guess)
        assert refused.context["phase"] == "activate" and refused.context["setup"] is None
    refused = step(client, step="enroll", code="123456")
    assert refused.context["phase"] == "activate"
    assert "_auth_user_id" not in client.session
    assert not SealedTOTPDevice.objects.filter(user=eve).exists()
    assert [kind for kind, _ in admin_events()[events:]] == ["staff.password_changed"]

    # ops, a second admin, issues the code (shown once, to ops); with it eve enrolls.
    activation, _ = activation_from_admin(ops, eve)
    assert activation and activation not in str(admin_events())
    stored = ActivationCode.objects.get(user=eve)
    assert stored.issued_by == ops and activation.replace("-", "") not in stored.code_hash
    other = Client()  # a second session that also got as far as the key
    assert password_step(other, "eve", chosen)["Location"] == STEP
    assert step(other, step="enroll", activation=activation)["Location"] == STEP
    other_setup = other.get(STEP).context["setup"]
    assert step(client, step="enroll", activation=activation.upper())["Location"] == STEP
    setup = client.get(STEP).context["setup"]
    done = step(client, step="enroll", code=shown(key_of(setup)))
    assert len(done.context["codes"]) == 10
    payload = [e for e in admin_events() if e[0] == "staff.second_factor_enrolled"][-1][1]
    assert payload == {"user": "eve", "user_id": eve.pk, "device": "totp", "activated_by": "ops"}
    # The code worked once: the other session's key is void, and so is the code.
    late = step(other, step="code", code=shown(key_of(other_setup)))
    assert "_auth_user_id" not in other.session and late.status_code == 200
    assert not ActivationCode.objects.exists()

    # Her second factor reset by two admins: the old code does not let her enroll again.
    reset = second_factor_reset_propose(subject=eve, reason="lost phone", user=root)
    staff_change_approve(change_id=reset.pk, user=ops, presence=presence.Presence(ops.pk))
    again = Client()
    assert password_step(again, "eve", chosen)["Location"] == STEP
    refused = step(again, step="enroll", activation=activation)
    assert refused.context["phase"] == "activate"
    assert not SealedTOTPDevice.objects.filter(user=eve).exists()
    # A code issued before ops reset her password too is void: ops may not be both.
    fresh = second_factor.activation_issue(subject=eve, user=ops)
    password_reset(subject=eve, user=ops)
    assert StaffSecurity.objects.get(user=eve).password_reset_by == ops
    assert second_factor.activation_check(eve, fresh) is None


def test_enrollment_reset_and_recovery_codes_are_significant_events(
    django_capture_on_commit_callbacks,
):
    root, ops = admins()
    ana = enrolled("ana", "supervisor")
    assert {significant.BY_KIND[k].code for k in significant.KINDS if k.startswith("staff.")} == {
        "SE13",
        "SE14",
        "SE15",
        "SE16",
    }
    outbox = len(significant_told())
    with django_capture_on_commit_callbacks(execute=True):
        second_factor.recovery_codes_issue(ana)
        reset = second_factor_reset_propose(subject=ana, reason="lost phone", user=root)
        staff_change_approve(change_id=reset.pk, user=ops, presence=presence.Presence(ops.pk))
    assert not second_factor.journal_enrolled(ana)
    with pytest.raises(ApiError):  # root has a second factor: no activation code for him
        second_factor.activation_issue(subject=root, user=ops)
    activation = second_factor.activation_issue(subject=ana, user=ops)
    client = Client()
    assert password_step(client, "ana")["Location"] == STEP
    assert step(client, step="enroll", activation=activation)["Location"] == STEP
    setup = client.get(STEP).context["setup"]
    with django_capture_on_commit_callbacks(execute=True):
        done = step(client, step="enroll", code=shown(key_of(setup)))
    assert len(done.context["codes"]) == 10
    assert second_factor.journal_enrolled(ana)
    told = significant_told()[outbox:]
    assert [(t["code"], t["detail"]["user"]) for t in told] == [
        ("SE15", "ana"),
        ("SE14", "ana"),
        ("SE13", "ana"),
        ("SE15", "ana"),
    ]
    written = str(told)
    assert setup["key"].replace(" ", "") not in written and activation not in written
    assert not any(code in written for code in done.context["codes"])


def forge(kind: str, user: User, sequence: int) -> None:
    """An event of `kind` about `user` inserted by SQL: without the journal's key, no true hash."""
    with connection.cursor() as sql:
        sql.execute(
            "INSERT INTO jackpot_auditevent (chain, sequence, kind, actor, occurred_at, payload,"
            " prev_hash, hash, content_format) VALUES ('admin', %s, %s, 'user:root', now(),"
            " %s, %s, %s, 2)",
            [
                sequence,
                kind,
                f'{{"user": "{user.username}", "user_id": {user.pk}}}',
                "0" * 64,
                "1" * 64,
            ],
        )


def test_a_journal_event_written_by_sql_says_nothing():
    """An enrollment or a reset inserted by SQL (no journal key) neither refuses a person nor
    lets them enroll again: the journal's word is its key's."""
    ana = person("ana", "supervisor")
    forge("staff.second_factor_enrolled", ana, 999998)
    assert not second_factor.journal_enrolled(ana)
    client = Client()
    assert password_step(client, "ana")["Location"] == STEP
    assert client.get(STEP).context["phase"] == "activate"  # not refused, and a code first

    bob = enrolled("bob", "supervisor")
    forge("staff.second_factor_reset", bob, 999999)
    SealedTOTPDevice.objects.filter(user=bob).update(confirmed=False)
    assert second_factor.journal_enrolled(bob)
    refused = Client()
    assert password_step(refused, "bob")["Location"] == STEP
    assert refused.get(STEP).status_code == 403
