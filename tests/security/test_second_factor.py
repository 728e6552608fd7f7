"""The staff's second factor, attacked, with STAFF_SECOND_FACTOR_REQUIRED on as in production.

Each test plays an attack through the real doors (the floor's and the admin's login, the steps'
page, the account page, the API) and asserts the refusal and what did not change: award
statuses, tokens, passwords, devices and the audit chain.
"""

from __future__ import annotations

import base64
import logging
import secrets
import time
import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from jackpot.approvals import presence
from jackpot.awards.workflow import award_approve, award_verify
from jackpot.models import AuditEvent, Award, SealedTOTPDevice, StaffSecurity, StaffToken
from jackpot.staff import second_factor
from jackpot.staff.accounts import password_reset
from tests.floor.conftest import play_hit
from tests.staff import (
    PASSWORD,
    code,
    code_for,
    enroll,
    enrolled,
    person,
    surveilled,
    wrong_code,
    wrong_code_for,
)
from tests.winners import PAY

pytestmark = pytest.mark.django_db

STEP = "/floor/login/next/"


@pytest.fixture(autouse=True)
def required(settings):
    """Production's rule, and login counters of this test only: 3 failures a day, since the
    counters' windows are fixed (a minute's ended between two failures of a test and it was
    never stopped)."""
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    settings.THROTTLE_ADMIN_LOGIN = "3/day"
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def password_step(client: Client, name: str, password: str = PASSWORD, door: str = "/floor/login/"):
    return client.post(door, {"username": name, "password": password})


def code_step(client: Client, typed: str):
    return client.post(STEP, {"step": "code", "code": typed})


def signed_in(user: User, steps_ahead: int = 0) -> Client:
    """A session signed in at the floor's door with the password and the current code."""
    client = Client()
    assert password_step(client, user.username)["Location"] == STEP
    assert code_step(client, code(user, steps_ahead))["Location"] == "/floor/awards/"
    return client


def password_only(user: User) -> Client:
    """A session signed in by password alone, some other way than the staff's doors (a door
    forgotten, an old session): what the API must still refuse."""
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def admin_events() -> list[tuple[str, dict]]:
    return list(
        AuditEvent.objects.filter(chain="admin").order_by("sequence").values_list("kind", "payload")
    )


def security(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "jackpot.security"]


def test_a_password_alone_cannot_verify_approve_or_pay(floor):
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "supervisor")
    jackpot, _ = play_hit(floor.uth[0])
    before = AuditEvent.objects.count()

    # A password-only session of a supervisor: every money step is refused, and says why.
    for step, body in (("verify", {"note": "video"}), ("void", {"reason": "misdeal"})):
        refused = password_only(ana).post(
            f"/api/v1/awards/{jackpot['id']}/{step}", body, content_type="application/json"
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "second_factor_required"
    # At the floor's door, the password alone signs no one in: the API does not know the session.
    client = Client()
    assert password_step(client, "ana")["Location"] == STEP
    assert client.get("/api/v1/awards").status_code == 401
    assert client.get("/floor/awards/")["Location"].startswith("/floor/login/")
    assert Award.objects.get(pk=jackpot["id"]).status == "pending"
    assert AuditEvent.objects.count() == before

    # Verified with the code, ana verifies; bob, with his password alone, cannot approve.
    verified = signed_in(ana).post(
        f"/api/v1/awards/{jackpot['id']}/verify", {"note": "video"}, content_type="application/json"
    )
    assert verified.status_code == 200, verified.content
    surveilled(jackpot["id"])
    refused = password_only(bob).post(f"/api/v1/awards/{jackpot['id']}/approve")
    assert refused.json()["error"]["code"] == "second_factor_required"
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    # (the approval's own fresh code is tests/security/test_authority.py's)
    award_approve(award_id=jackpot["id"], user=bob, presence=presence.Presence(bob.pk))
    refused = password_only(bob).post(f"/api/v1/awards/{jackpot['id']}/pay")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "second_factor_required")
    assert Award.objects.get(pk=jackpot["id"]).status == "approved"
    # Even a read: the session is no one's until it gave its code.
    assert password_only(bob).get("/api/v1/awards").status_code == 403
    # A staff token counts as verified: only a verified session can issue one.
    token = signed_in(bob).post("/floor/account/", {"action": "token"}).context["token"]
    paid = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        f"/api/v1/awards/{jackpot['id']}/pay", PAY, content_type="application/json"
    )
    assert paid.status_code == 200 and Award.objects.get(pk=jackpot["id"]).status == "paid"


def test_a_wrong_or_reused_code_is_refused_and_counted(caplog):
    ana = enrolled("ana", "supervisor")
    device = SealedTOTPDevice.objects.get(user=ana)
    client = Client(REMOTE_ADDR="10.7.7.7")
    with caplog.at_level(logging.INFO, logger="jackpot.security"):
        assert password_step(client, "ana")["Location"] == STEP
        wrong = code_step(client, wrong_code(ana))
        assert wrong.status_code == 200 and "_auth_user_id" not in client.session
        assert "Code incorrect ou déjà utilisé." in wrong.content.decode()
        time.sleep(1.1)  # the device's own delay after a failure (django-otp's, 1 s then doubling)
        used = code(ana)
        assert code_step(client, used)["Location"] == "/floor/awards/"
        assert client.post("/floor/logout/").status_code == 302

        # The same code again (seen over a shoulder, replayed): refused, counted.
        assert password_step(client, "ana")["Location"] == STEP
        replayed = code_step(client, used)
        assert replayed.status_code == 200 and "_auth_user_id" not in client.session
        last_t = SealedTOTPDevice.objects.get(pk=device.pk).last_t
        # The third failure reaches the limit: the next code, right as it is, is not checked.
        assert code_step(client, "999999" if used != "999999" else "888888").status_code == 200
        stopped = code_step(client, code(ana, 1))
    assert stopped.status_code == 429 and int(stopped["Retry-After"]) >= 1
    assert "_auth_user_id" not in client.session
    assert SealedTOTPDevice.objects.get(pk=device.pk).last_t == last_t  # that code was never tried
    messages = security(caplog)
    assert messages.count("floor second factor failed user='ana' from=10.7.7.7") == 3
    assert "floor login user='ana' from=10.7.7.7 with second factor" in messages
    assert messages[-1] == (
        "floor second factor refused (too many failed logins) user='ana' from=10.7.7.7"
    )
    # And the password door is closed to that name too, for the window.
    assert password_step(Client(REMOTE_ADDR="10.8.8.8"), "ana").status_code == 429


def test_a_recovery_code_works_once(django_capture_on_commit_callbacks, caplog):
    ana = enrolled("ana", "supervisor")
    codes = second_factor.recovery_codes_issue(ana)
    client = Client()
    assert password_step(client, "ana")["Location"] == STEP
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert code_step(client, codes[3].upper())["Location"] == "/floor/awards/"
    assert client.get("/api/v1/awards").status_code == 200  # a verified session
    assert second_factor.recovery_codes_left(ana) == 9
    kind, payload = admin_events()[-1]
    assert (kind, payload) == ("staff.recovery_code_used", {"user": "ana", "left": 9})
    assert any(m.startswith("staff.recovery_code_used by user:ana") for m in security(caplog))
    assert codes[3] not in str(admin_events()) and codes[3] not in "".join(security(caplog))

    client.post("/floor/logout/")
    assert password_step(client, "ana")["Location"] == STEP
    again = code_step(client, codes[3])
    assert again.status_code == 200 and "_auth_user_id" not in client.session
    assert second_factor.recovery_codes_left(ana) == 9
    assert admin_events()[-1][0] == "staff.recovery_code_used"  # no second use recorded
    assert AuditEvent.objects.filter(kind="staff.recovery_code_used").count() == 1


def test_a_staff_token_is_issued_only_to_oneself_and_only_from_a_verified_session():
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "supervisor")
    events = len(admin_events())

    # bob's password alone (a session some other door made) cannot mint a lasting credential.
    refused = password_only(bob).post("/floor/account/", {"action": "token"})
    assert refused.status_code == 403 and "deuxième facteur" in refused.content.decode()
    refused = password_only(bob).post("/floor/account/", {"action": "recovery_codes"})
    assert refused.status_code == 403
    assert not StaffToken.objects.exists() and second_factor.recovery_codes_left(bob) == 0
    assert len(admin_events()) == events

    # ana, verified, asks for a token naming bob every way a form could: it is hers.
    answer = signed_in(ana).post(
        "/floor/account/?user=bob",
        {"action": "token", "user": bob.pk, "username": "bob", "user_id": bob.pk},
    )
    assert answer.status_code == 200
    token = answer.context["token"]
    assert token.startswith("staff_") and token in answer.content.decode()
    assert list(StaffToken.objects.values_list("user__username", flat=True)) == ["ana"]
    assert not StaffToken.objects.filter(user=bob).exists()
    whose = Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/api/v1/awards")
    assert whose.status_code == 200
    kind, payload = admin_events()[-1]
    assert kind == "staff_token.issued" and payload["user"] == "ana"
    assert token not in str(admin_events())
    # The page never shows it again.
    assert token not in signed_in(ana, 1).get("/floor/account/").content.decode()
    # No one signed in: the login page, nothing issued.
    assert Client().post("/floor/account/", {"action": "token"}).status_code == 302
    assert StaffToken.objects.count() == 1


def test_a_flagged_account_must_change_its_password_before_any_page(
    django_capture_on_commit_callbacks, caplog
):
    carl = enrolled("carl", "supervisor")
    StaffSecurity.objects.create(user=carl, must_change_password=True)
    client = Client()
    assert password_step(client, "carl")["Location"] == STEP
    assert code_step(client, code(carl))["Location"] == STEP  # one more step owed
    page = client.get(STEP)
    assert page.context["step"] == "password"
    for path in ("/floor/awards/", "/floor/account/", "/audit/pools/1/"):
        assert client.get(path)["Location"].startswith("/floor/login/"), path
    assert client.get("/api/v1/awards").status_code == 401
    assert client.get("/admin/")["Location"].startswith("/admin/login/")

    weak = client.post(STEP, {"step": "password", "new_password1": "123", "new_password2": "123"})
    same = client.post(
        STEP, {"step": "password", "new_password1": PASSWORD, "new_password2": PASSWORD}
    )
    for refused in (weak, same):
        assert refused.status_code == 200 and refused.context["step"] == "password"
    assert "_auth_user_id" not in client.session
    carl.refresh_from_db()
    assert carl.check_password(PASSWORD)
    assert StaffSecurity.objects.get(user=carl).must_change_password
    assert not AuditEvent.objects.filter(kind="staff.password_changed").exists()

    chosen = "a new password only carl knows"
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        done = client.post(
            STEP, {"step": "password", "new_password1": chosen, "new_password2": chosen}
        )
    assert done["Location"] == "/floor/awards/"
    assert client.get("/api/v1/awards").status_code == 200
    carl.refresh_from_db()
    assert carl.check_password(chosen) and not carl.check_password(PASSWORD)
    assert not StaffSecurity.objects.get(user=carl).must_change_password
    kind, payload = admin_events()[-1]
    assert (kind, payload) == ("staff.password_changed", {"user": "carl"})
    assert chosen not in "".join(security(caplog))


@pytest.mark.parametrize("door", ["/floor/login/", "/admin/login/"])
def test_an_admin_who_knows_a_colleagues_temporary_password_cannot_pass_their_second_factor(
    floor, door
):
    root = enrolled("root", "admin", is_staff=True, is_superuser=True)
    root_codes = second_factor.recovery_codes_issue(root)
    # bob signs in at both doors (is_staff), so he holds no money role, and root verifies
    # nothing (compliance 52): a supervisor verified the jackpot bob's session would approve.
    bob = enrolled("bob", "auditor", is_staff=True)
    # An admin's reset (jackpot.staff.accounts): a temporary password root knows; bob must change
    # it.
    temporary = password_reset(subject=bob, user=root)
    jackpot, _ = play_hit(floor.uth[0])
    award_verify(award_id=jackpot["id"], user=enrolled("ana", "supervisor"), note="video")
    events = len(admin_events())

    client = Client(REMOTE_ADDR="10.6.6.6")
    accepted = password_step(client, "bob", temporary, door=door)
    assert accepted["Location"] == STEP
    # root types every code he has: his own authenticator's, his own recovery code, guesses.
    for typed in (code(root), root_codes[0], wrong_code(bob)):
        refused = code_step(client, typed)
        assert refused.status_code == 200 and refused.context["step"] == "code"
    # Past the step with bob's password: never (the new password is the step after the code).
    forced = client.post(
        STEP, {"step": "password", "new_password1": "x" * 20, "new_password2": "x" * 20}
    )
    assert forced.status_code == 200 and forced.context["step"] == "code"
    assert "_auth_user_id" not in client.session
    approve = client.post(f"/api/v1/awards/{jackpot['id']}/approve")
    assert approve.status_code == 401
    bob.refresh_from_db()
    assert bob.check_password(temporary)  # root could not choose bob's password either
    assert StaffSecurity.objects.get(user=bob).must_change_password
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    assert not StaffToken.objects.exists()
    assert second_factor.recovery_codes_left(root) == 10  # root's code did not count for bob
    assert len(admin_events()) == events


def test_a_supervisor_without_a_device_enrolls_before_anything(
    django_capture_on_commit_callbacks, caplog
):
    dan = person("dan", "supervisor")
    # Another admin's activation code, which a first enrollment needs (tests/security/
    # test_enrollment.py): dan types it before his key is made.
    activation = second_factor.activation_issue(subject=dan, user=enrolled("ops", "admin"))
    client = Client()
    assert password_step(client, "dan")["Location"] == STEP
    assert client.post(STEP, {"step": "enroll", "activation": activation})["Location"] == STEP
    page = client.get(STEP)
    assert page.context["step"] == "enroll"
    setup = page.context["setup"]
    assert setup["uri"].startswith("otpauth://totp/") and "secret=" in setup["uri"]
    assert client.get("/floor/awards/")["Location"].startswith("/floor/login/")
    assert client.get("/api/v1/awards").status_code == 401
    device = SealedTOTPDevice.objects.get(user=dan, confirmed=False)
    assert setup["key"].replace(" ", "") in setup["uri"]

    refused = client.post(STEP, {"step": "enroll", "code": wrong_code_for(device)})
    assert refused.status_code == 200 and not SealedTOTPDevice.objects.get(pk=device.pk).confirmed
    assert "_auth_user_id" not in client.session

    time.sleep(1.1)  # the device's own delay after a failure
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        done = client.post(STEP, {"step": "enroll", "code": code_for(device)})
    assert done.status_code == 200 and len(done.context["codes"]) == 10
    assert done.context["continue_url"] == "/floor/awards/"
    assert client.get("/api/v1/awards").status_code == 200  # verified by the new device
    assert SealedTOTPDevice.objects.get(pk=device.pk).confirmed
    assert StaticToken.objects.filter(device__user=dan).count() == 10
    kinds = [kind for kind, _ in admin_events()]
    assert kinds[-2:] == ["staff.second_factor_enrolled", "staff.recovery_codes_issued"]
    written = str(admin_events()) + "".join(security(caplog))
    assert device.key not in written and setup["key"].replace(" ", "") not in written
    assert not any(c in written for c in done.context["codes"])
    # Enrolled: the account page shows no key, and a second device cannot be enrolled there.
    account = client.get("/floor/account/")
    assert "setup" not in account.context and "otpauth://" not in account.content.decode()
    again = client.post("/floor/account/", {"action": "enroll", "code": code_for(device, 1)})
    assert again.status_code == 409
    assert SealedTOTPDevice.objects.filter(user=dan).count() == 1


def test_production_requires_the_second_factor_whatever_the_environment(python_subprocess):
    ran = python_subprocess(
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.STAFF_SECOND_FACTOR_REQUIRED)",
        DJANGO_SETTINGS_MODULE="config.settings.production",
        STAFF_SECOND_FACTOR_REQUIRED="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        JOURNAL_HMAC_KEY=secrets.token_urlsafe(48),
        WINNER_IDENTITY_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        ALLOWED_HOSTS="jackpot.club.internal",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True"


def test_the_admins_door_asks_for_the_code_too():
    enrolled("root", "admin", is_staff=True, is_superuser=True)
    client = Client()
    assert client.get("/admin/login/?next=/admin/").status_code == 200
    assert password_step(client, "root", door="/admin/login/?next=/admin/")["Location"] == STEP
    assert client.get("/admin/")["Location"].startswith("/admin/login/")  # not signed in yet
    root = User.objects.get(username="root")
    assert code_step(client, code(root))["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_database_alone_gives_no_code(settings):
    """An insider who reads and writes the database (not SECRET_KEY) takes ana's TOTP key and
    recovery codes from their rows, or puts their own device on ana's account: none of it passes
    ana's second factor, while the same secrets still work for their owner."""
    settings.THROTTLE_ADMIN_LOGIN = "10/day"  # three refusals here, then the owner's sign-in
    ana, mallory = enrolled("ana", "supervisor"), person("mallory", "supervisor")
    codes = second_factor.recovery_codes_issue(ana)
    stored = TOTPDevice.objects.get(user=ana)  # django-otp's own view of the row
    read_off_the_row = TOTP(bytes.fromhex(stored.key), stored.step, stored.t0, stored.digits)
    read_off_the_row.time = time.time()
    client = Client()
    assert password_step(client, "ana")["Location"] == STEP
    refused = code_step(client, f"{read_off_the_row.token():06d}")
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    stored_codes = set(StaticToken.objects.filter(device__user=ana).values_list("token", flat=True))
    assert not stored_codes & set(codes)  # the rows hold no code an owner types
    refused = code_step(client, sorted(stored_codes)[0])
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    assert second_factor.recovery_codes_left(ana) == 10  # nothing used up

    # mallory's own device, moved onto ana's account (ana's removed: one device to try)
    mine = enroll(mallory)
    typed = code_for(mine, steps_ahead=1)
    SealedTOTPDevice.objects.filter(user=ana).delete()
    SealedTOTPDevice.objects.filter(pk=mine.pk).update(user=ana)
    other = Client()
    assert password_step(other, "ana")["Location"] == STEP
    refused = code_step(other, typed)
    assert refused.status_code == 200 and "_auth_user_id" not in other.session
    SealedTOTPDevice.objects.filter(pk=mine.pk).update(user=mallory)
    time.sleep(1.1)  # the device's own delay after the failure (django-otp)
    own = Client()
    assert password_step(own, "mallory")["Location"] == STEP
    assert code_step(own, typed)["Location"] == "/floor/awards/"  # the same code, its owner
