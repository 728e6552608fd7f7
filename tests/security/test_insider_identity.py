"""No one acts as another person (issue 20 item 1; compliance 47), attacked by an insider who
holds every privilege the admin site gives: a superuser with the admin role.

Each test plays the attack, asserts the refusal, and asserts what did not change: tokens,
passwords, roles, awards, pools and the audit chain.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from jackpot.models import AuditEvent, Award, ParameterChange, Pool, StaffSecurity, StaffToken
from jackpot.staff.accounts import staff_token_issue
from tests.staff import PASSWORD, person, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def root() -> User:
    """The insider: a superuser who also holds the admin role."""
    return person("root", "admin", is_staff=True, is_superuser=True)


def test_a_superuser_cannot_get_a_token_for_a_colleague(root):
    ana = person("ana", "supervisor")
    events = AuditEvent.objects.count()
    page = signed_in(root).post(
        "/admin/auth/user/",
        {"action": "issue_api_token", "_selected_action": [ana.pk]},
        follow=True,
    )
    assert page.status_code == 200
    assert "ana: staff_" not in page.content.decode()  # no token shown
    assert not StaffToken.objects.exists()
    assert AuditEvent.objects.count() == events
    # Nor a view that sets the colleague's password (to sign in as them and issue one there).
    form = signed_in(root).get(f"/admin/auth/user/{ana.pk}/password/")
    assert form.status_code == 403
    posted = signed_in(root).post(
        f"/admin/auth/user/{ana.pk}/password/",
        {"password1": "mine now 12345", "password2": "mine now 12345"},
    )
    assert posted.status_code == 403
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)


def test_an_admins_password_reset_of_a_colleague_is_audited_and_forces_a_change(root):
    ana = person("ana", "supervisor")
    token = staff_token_issue(user=ana, revoke_others=False, actor="test")
    page = signed_in(root).post(
        "/admin/auth/user/",
        {"action": "reset_password", "_selected_action": [ana.pk]},
        follow=True,
    )
    text = page.content.decode()
    temporary = text.split("temporary password ")[1].split(" ")[0]
    ana.refresh_from_db()
    assert ana.check_password(temporary) and not ana.check_password(PASSWORD)
    security = StaffSecurity.objects.get(user=ana)
    assert security.must_change_password and security.password_reset_by == root
    event = AuditEvent.objects.get(kind="staff.password_reset")
    assert (event.chain, event.actor, event.payload["user"]) == ("admin", "user:root", "ana")
    assert temporary not in str(event.payload)  # never the password
    # What did not change: her roles and her token.
    assert list(ana.groups.values_list("name", flat=True)) == ["supervisor"]
    assert token.startswith(StaffToken.objects.get(user=ana, revoked_at__isnull=True).prefix)


def test_a_superuser_without_a_role_holds_no_money_role(floor):
    bare = person("bare", is_staff=True, is_superuser=True)
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {staff_token_issue(user=bare, revoke_others=False, actor='t')}"
    )
    proposer = person("ana", "admin")
    proposal = ParameterChange.objects.create(
        pool_id=floor.pool_id,
        changes={"stake_cents": 1000},
        before={"stake_cents": 500},
        reason="test",
        proposed_by=proposer,
        proposed_at="2026-12-01T00:00:00Z",
    )
    events = AuditEvent.objects.count()
    refused = [
        client.post(f"/api/v1/pools/{floor.pool_id}/changes/{proposal.pk}/approve", {}),
        client.post("/api/v1/awards/1/approve", {}, content_type="application/json"),
        client.post("/api/v1/awards/1/verify", {"note": "x"}, content_type="application/json"),
        client.get("/api/v1/journal"),
        client.post("/api/v1/journal/verify"),
    ]
    assert [r.status_code for r in refused] == [403] * 5
    assert ParameterChange.objects.get().status == "proposed"
    assert Pool.objects.get(pk=floor.pool_id).stake_cents == 500
    assert not Award.objects.exists()
    assert AuditEvent.objects.count() == events
    # And the admin site shows a superuser without the admin role nothing.
    site = signed_in(bare)
    assert site.get("/admin/jackpot/pool/").status_code == 403
    assert site.get("/admin/auth/user/").status_code == 403


def test_the_admin_role_alone_opens_the_admin(floor):
    admin = person("adele", "admin", is_staff=True)
    site = signed_in(admin)
    for page in ("/admin/jackpot/pool/", "/admin/jackpot/parameterchange/", "/admin/auth/user/"):
        assert site.get(page).status_code == 200, page
    assert site.get("/admin/tables/table/").status_code == 200
    assert site.get(f"/admin/jackpot/pool/{floor.pool_id}/change/").status_code == 200


def test_groups_and_second_factor_devices_have_no_page_in_the_admin(root):
    ana = person("ana", "supervisor")
    device = TOTPDevice.objects.create(user=ana, name="phone", confirmed=True)
    site = signed_in(root)
    assert site.get("/admin/auth/group/").status_code == 404
    assert site.post("/admin/auth/group/add/", {"name": "admin"}).status_code == 404
    assert site.get("/admin/otp_totp/totpdevice/").status_code == 404
    assert site.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {}).status_code == 404
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    assert sorted(ana.groups.values_list("name", flat=True)) == ["supervisor"]


def test_the_operator_makes_only_the_first_two_admins():
    from jackpot.staff.accounts import BootstrapRefused, bootstrap_admin

    first = bootstrap_admin(username="ops1", actor="system:bootstrap_admin")
    bootstrap_admin(username="ops2", actor="system:bootstrap_admin")
    ops1 = User.objects.get(username="ops1")
    assert ops1.check_password(first) and StaffSecurity.objects.get(user=ops1).must_change_password
    events = AuditEvent.objects.count()
    with pytest.raises(BootstrapRefused, match="ops1, ops2"):
        bootstrap_admin(username="ops3", actor="system:bootstrap_admin")
    assert not User.objects.filter(username="ops3").exists()
    assert AuditEvent.objects.count() == events
    assert AuditEvent.objects.filter(kind="staff.bootstrapped").count() == 2


def test_an_admin_site_refusal_is_in_the_security_log(root, caplog):
    ana = person("ana", "supervisor")
    with caplog.at_level("WARNING", logger="jackpot.security"):
        assert signed_in(root).get(f"/admin/auth/user/{ana.pk}/password/").status_code == 403
    [line] = [r.getMessage() for r in caplog.records if r.name == "jackpot.security"]
    assert "refused GET" in line and "user=root" in line and "from=127.0.0.1" in line
