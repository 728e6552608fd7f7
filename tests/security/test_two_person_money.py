"""One admin can no longer configure money or power alone (issue 20 items 1 and 4; compliance 17,
36, 47): granting a role, making a superuser, creating staff, resetting a second factor, creating
a pool and moving a table each need a second admin, never the change's subject; and the database
itself refuses an applied change approved by its proposer or its subject.

Each test plays the attack by one admin (a superuser too), asserts the refusal and what did not
change, then shows that a second admin's approval is what applies it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django_otp.plugins.otp_totp.models import TOTPDevice

from core.errors import Forbidden
from jackpot.models import AuditEvent, ParameterChange, Pool
from jackpot.pools.parameters import pool_create_approve
from jackpot.staff import accounts
from tables.models import Table
from tables.services import table_update
from tests.staff import person, signed_in, token_client

pytestmark = pytest.mark.django_db


def changes_applied():
    """The `staff.changed` events of approved changes (not the fixture's grants)."""
    return AuditEvent.objects.filter(kind="staff.changed").exclude(actor="test")


def approve_in_admin(user: User, change: ParameterChange) -> str:
    page = signed_in(user).post(
        "/admin/jackpot/parameterchange/",
        {"action": "approve", "_selected_action": [change.pk]},
        follow=True,
    )
    return page.content.decode()


@pytest.fixture
def root() -> User:
    return person("root", "admin", is_staff=True, is_superuser=True)


@pytest.fixture
def bob() -> User:
    return person("bob", "admin", is_staff=True)


def roles(user: User) -> list[str]:
    return sorted(User.objects.get(pk=user.pk).groups.values_list("name", flat=True))


def test_one_admin_cannot_grant_himself_a_role_nor_make_a_superuser(root, bob):
    # An auditor: a money role never goes with admin or the admin site (compliance 52).
    ana = person("ana", "auditor")
    form = {
        "username": "ana",
        "is_active": "on",
        "roles": ["auditor", "admin"],
        "is_staff": "on",
        "is_superuser": "on",
        "reason": "she runs the floor now",
    }
    page = signed_in(root).post(f"/admin/auth/user/{ana.pk}/change/", form, follow=True)
    assert "waits for another admin" in page.content.decode()
    change = ParameterChange.objects.get(kind="staff.access")
    ana.refresh_from_db()
    assert (roles(ana), ana.is_staff, ana.is_superuser) == (["auditor"], False, False)
    # The proposer cannot approve it, nor can its subject, superuser or admin.
    assert "cannot also approve it" in approve_in_admin(root, change)
    promoted = person("carl", "admin", is_staff=True)
    own = accounts.staff_access_propose(
        subject=promoted, values={"is_superuser": True}, reason="me", user=bob
    )
    with pytest.raises(Forbidden, match="their own account"):
        accounts.staff_change_approve(change_id=own.pk, user=promoted)
    promoted.refresh_from_db()
    ana.refresh_from_db()
    assert not promoted.is_superuser and (roles(ana), ana.is_superuser) == (["auditor"], False)
    assert not AuditEvent.objects.filter(kind="staff.changed").exclude(actor="test").exists()

    assert "done" in approve_in_admin(bob, change)
    ana.refresh_from_db()
    assert (roles(ana), ana.is_staff, ana.is_superuser) == (["admin", "auditor"], True, True)
    event = changes_applied().get()
    assert (event.chain, event.payload["proposed_by"], event.payload["approved_by"]) == (
        "admin",
        "root",
        "bob",
    )
    assert event.payload["before"]["roles"] == ["auditor"]


def test_one_admin_cannot_create_staff(root, bob):
    page = signed_in(root).post(
        "/admin/auth/user/add/",
        {"username": "eve", "roles": ["admin"], "is_staff": "on", "reason": "a new admin"},
        follow=True,
    )
    assert "waits for another admin" in page.content.decode()
    assert not User.objects.filter(username="eve").exists()
    change = ParameterChange.objects.get(kind="staff.create")
    assert "cannot also approve it" in approve_in_admin(root, change)
    assert not User.objects.filter(username="eve").exists()

    assert "done" in approve_in_admin(bob, change)
    eve = User.objects.get(username="eve")
    assert (roles(eve), eve.is_staff, eve.has_usable_password()) == (["admin"], True, False)
    change.refresh_from_db()
    assert (change.subject, change.decided_by) == (eve, bob)


def test_one_admin_cannot_reset_a_colleagues_second_factor(root, bob):
    ana = person("ana", "supervisor")
    device = TOTPDevice.objects.create(user=ana, name="phone", confirmed=True)
    signed_in(root).post(
        "/admin/auth/user/",
        {"action": "reset_second_factor", "_selected_action": [ana.pk]},
        follow=True,
    )
    change = ParameterChange.objects.get(kind="staff.second_factor_reset")
    assert "cannot also approve it" in approve_in_admin(root, change)
    assert TOTPDevice.objects.filter(pk=device.pk).exists()

    assert "done" in approve_in_admin(bob, change)
    assert not TOTPDevice.objects.filter(user=ana).exists()
    event = changes_applied().get()
    before, after = event.payload["before"], event.payload["after"]
    assert (before["second_factors"], after["second_factors"]) == (1, 0)


def test_one_admin_cannot_create_a_pool(root, bob):
    pools = Pool.objects.count()
    page = signed_in(root).post(
        "/admin/jackpot/pool/add/",
        {
            "name": "Side pool",
            "stake_cents": 100,
            "meter_share_bp": 9_000,
            "reserve_share_bp": 1_000,
            "seed_cents": 1,
            "verification_threshold_cents": 100_000_000,
            "reason": "a pool of my own",
        },
        follow=True,
    )
    assert "waits for another admin" in page.content.decode()
    assert Pool.objects.count() == pools
    change = ParameterChange.objects.get(kind="pool.create")
    assert "cannot also approve it" in approve_in_admin(root, change)
    assert Pool.objects.count() == pools
    assert not AuditEvent.objects.filter(kind="pool.created").exists()

    pool_create_approve(change_id=change.pk, user=bob)
    created = Pool.objects.get(name="Side pool")
    assert (created.stake_cents, created.meter_share_bp, created.meter_cents) == (100, 9_000, 1)
    event = AuditEvent.objects.get(kind="pool.created")
    assert (event.actor, event.payload["proposed_by"], event.payload["approved_by"]) == (
        "user:bob",
        "root",
        "bob",
    )


def test_one_admin_cannot_move_a_table(floor, root, bob):
    other = Pool.objects.create(name="Other", meter_changed_at="2026-12-01T00:00:00Z")
    table = floor.uth[0].table_id
    token = {"root": token_client(root), "bob": token_client(bob)}
    # The one admin's own PATCH of the pool is no longer a field of the table.
    patched = token["root"].patch(
        f"/api/v1/tables/{table}", {"pool": other.pk}, content_type="application/json"
    )
    assert patched.status_code == 400
    proposed = token["root"].post(
        f"/api/v1/tables/{table}/moves",
        {"pool": other.pk, "reason": "my pool"},
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.content
    change = proposed.json()["id"]
    approve = f"/api/v1/tables/{table}/moves/{change}/approve"
    refused = token["root"].post(approve, {}, content_type="application/json")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    # Another admin: only once the table is closed for play.
    still_open = token["bob"].post(approve, {}, content_type="application/json")
    assert (still_open.status_code, still_open.json()["error"]["code"]) == (409, "table_open")
    assert Table.objects.get(pk=table).pool_id == floor.pool_id
    assert not AuditEvent.objects.filter(kind="table.changed").exists()

    table_update(table_id=table, changes={"enabled": False}, actor="test")
    done = token["bob"].post(approve, {}, content_type="application/json")
    assert done.status_code == 200, done.content
    assert (done.json()["kind"], done.json()["status"]) == ("table.move", "applied")
    assert Table.objects.get(pk=table).pool_id == other.pk
    moved = AuditEvent.objects.filter(kind="table.changed").last()
    assert (moved.payload["after"], moved.payload["approved_by"]) == ({"pool": other.pk}, "bob")


@pytest.mark.parametrize("approver", ["proposer", "subject"])
def test_the_database_refuses_an_applied_change_approved_by_its_proposer_or_subject(
    root, bob, approver
):
    ana = person("ana", "supervisor")
    change = accounts.staff_access_propose(
        subject=ana, values={"roles": ["admin"]}, reason="x", user=root
    )
    decider = root if approver == "proposer" else ana
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_parameterchange SET status = 'applied', decided_by_id = %s,"
            " decided_at = now() WHERE id = %s",
            [decider.pk, change.pk],
        )
    change.refresh_from_db()
    assert (change.status, change.decided_by_id) == ("proposed", None)
    assert roles(ana) == ["supervisor"]
