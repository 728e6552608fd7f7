"""Administration: pools' parameters change by two admins while their tables are closed (a save
in the admin files a proposal), a new pool and a table's move too, every change is an audit event
with before and after, tokens are issued once and revoked, the journal is read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from core.errors import Conflict
from jackpot.models import AccountKind, AuditEvent, ParameterChange, Pool
from jackpot.pools.parameters import TERMS, change_approve, change_propose, pool_create_approve
from jackpot.staff.accounts import operator_grant
from tables.models import Table, Terminal
from tables.pools import POOL_TABLES
from tables.services import table_move_approve, table_move_propose, table_update
from tests.conftest import make_floor

pytestmark = pytest.mark.django_db


def test_parameters_change_by_two_admins_with_the_tables_closed(floor, django_user_model):
    ana, bob = (django_user_model.objects.create(username=name) for name in ("ana", "bob"))
    threshold = change_propose(
        pool_id=floor.pool_id,
        changes={"verification_threshold_cents": 1},
        reason="every award verified",
        user=ana,
    )
    # Nothing changes while a table is open, the threshold included.
    with pytest.raises(Conflict, match="Close them"):
        change_approve(
            pool_id=floor.pool_id, change_id=threshold.pk, user=bob, pool_tables=POOL_TABLES
        )
    assert Pool.objects.get(pk=floor.pool_id).verification_threshold_cents == 100_000

    for table in Table.objects.filter(pool_id=floor.pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    change_approve(pool_id=floor.pool_id, change_id=threshold.pk, user=bob, pool_tables=POOL_TABLES)
    watched = change_propose(
        pool_id=floor.pool_id,
        changes={"surveillance_required": False},
        reason="no camera",
        user=bob,
    )
    change_approve(pool_id=floor.pool_id, change_id=watched.pk, user=ana, pool_tables=POOL_TABLES)
    pool = Pool.objects.get(pk=floor.pool_id)
    assert (pool.surveillance_required, pool.verification_threshold_cents) == (False, 1)
    changes = [
        (e.payload["before"], e.payload["after"], e.payload["proposed_by"], e.actor)
        for e in AuditEvent.objects.filter(kind="pool.changed").order_by("sequence")
    ]
    assert changes == [
        (
            {"verification_threshold_cents": 100_000},
            {"verification_threshold_cents": 1},
            "ana",
            "user:bob",
        ),
        ({"surveillance_required": True}, {"surveillance_required": False}, "bob", "user:ana"),
    ]
    closed = AuditEvent.objects.filter(kind="table.changed").first()
    assert (closed.payload["before"], closed.payload["after"]) == (
        {"enabled": True},
        {"enabled": False},
    )


def test_a_table_changes_pool_only_when_closed(floor, django_user_model):
    ana, bob = (django_user_model.objects.create(username=name) for name in ("ana", "bob"))
    table = floor.uth[0].table_id
    move = table_move_propose(table_id=table, pool=None, reason="unlink it", user=ana)
    with pytest.raises(Conflict, match="close the table"):
        table_move_approve(change_id=move.pk, user=bob)
    assert Table.objects.get(pk=table).pool_id == floor.pool_id
    with pytest.raises(ValueError, match="pool"):
        table_update(table_id=table, changes={"pool": None}, actor="test")


def _admin(django_user_model, name: str):
    """An admin whose role is on the journal (as the operator gives it), so the journal verifies."""
    return operator_grant(username=name, role="admin", actor="test")


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(_admin(django_user_model, "root"))
    return client


def _pool_form(pool: Pool, **changes) -> dict:
    form = {
        "name": pool.name,
        "verification_threshold_cents": pool.verification_threshold_cents,
        "stake_cents": pool.stake_cents,
        "meter_share_bp": pool.meter_share_bp,
        "reserve_share_bp": pool.reserve_share_bp,
        "seed_cents": pool.seed_cents,
        "paytable_version": pool.paytable_version,
        "reason": "a test",
    }
    if pool.surveillance_required:  # a checkbox: posted when ticked, absent otherwise
        form["surveillance_required"] = "on"
    return {**form, **changes}


def test_the_admin_refuses_an_impossible_change_with_the_reason(admin_client, floor):
    pool = Pool.objects.get(pk=floor.pool_id)
    taken = Pool.objects.get(pk=make_floor(uth_tables=0).pool_id).name
    response = admin_client.post(
        f"/admin/jackpot/pool/{pool.pk}/change/", _pool_form(pool, name=taken)
    )
    assert response.status_code == 200  # the form again, with the error
    assert "name: Pool with this Name already exists" in response.content.decode()
    assert not ParameterChange.objects.exists()


def test_the_admin_shows_a_pools_terms_but_never_changes_them(admin_client, floor):
    """Compliance 56: an existing pool's increment terms are read-only in the admin; posted
    anyway, they are ignored (only the threshold is proposed here)."""
    pool = Pool.objects.get(pk=floor.pool_id)
    page = admin_client.get(f"/admin/jackpot/pool/{pool.pk}/change/").content.decode()
    for term in TERMS:
        assert f'name="{term}"' not in page  # shown, not an input
    admin_client.post(
        f"/admin/jackpot/pool/{pool.pk}/change/",
        _pool_form(pool, stake_cents=1000, seed_cents=5, verification_threshold_cents=7),
    )
    assert ParameterChange.objects.get().changes == {"verification_threshold_cents": 7}


def test_saving_a_pool_in_the_admin_files_a_proposal_another_admin_approves(
    admin_client, floor, django_user_model
):
    pool = Pool.objects.get(pk=floor.pool_id)
    response = admin_client.post(
        f"/admin/jackpot/pool/{pool.pk}/change/",
        _pool_form(pool, verification_threshold_cents=250_000),
        follow=True,
    )
    assert response.status_code == 200
    assert "waits for another admin&#x27;s approval" in response.content.decode()
    proposal = ParameterChange.objects.get()
    assert (proposal.changes, proposal.before, proposal.status) == (
        {"verification_threshold_cents": 250_000},
        {"verification_threshold_cents": 100_000},
        "proposed",
    )
    assert Pool.objects.get(pk=pool.pk).verification_threshold_cents == 100_000  # not yet

    approve = {"action": "approve", "_selected_action": [proposal.pk]}
    # The proposer cannot approve it, even with the tables closed.
    for table in Table.objects.filter(pool_id=floor.pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    page = admin_client.post("/admin/jackpot/parameterchange/", approve, follow=True)
    assert "cannot also approve it" in page.content.decode()
    assert ParameterChange.objects.get().status == "proposed"

    other = _admin(django_user_model, "root2")
    second = Client()
    second.force_login(other)
    page = second.post("/admin/jackpot/parameterchange/", approve, follow=True)
    assert f"#{proposal.pk}: done" in page.content.decode()
    assert Pool.objects.get(pk=pool.pk).verification_threshold_cents == 250_000
    applied = ParameterChange.objects.get()
    assert (applied.status, applied.decided_by, applied.proposed_by.username) == (
        "applied",
        other,
        "root",
    )


def _admin_action(admin_client, path: str, action: str, selected: list[int]) -> str:
    response = admin_client.post(
        path, {"action": action, "_selected_action": selected}, follow=True
    )
    return response.content.decode()


def _proposed_by_another_admin(django_user_model, action: str, table: int) -> None:
    """A terminal token takes two admins (tests/security/test_terminal_issue.py): another one
    proposes it here, and the test's admin approves and receives it."""
    proposer = Client()
    proposer.force_login(_admin(django_user_model, "root-proposer"))
    _admin_action(proposer, "/admin/tables/table/", action, [table])


def test_admin_rotates_a_terminal_token_with_an_overlap_then_revokes(
    admin_client, floor, django_user_model
):
    table = floor.uth[0].table_id
    _proposed_by_another_admin(django_user_model, "issue_terminal_token", table)
    text = _admin_action(admin_client, "/admin/tables/table/", "approve_terminal_issue", [table])
    token = text.split(": term_")[1].split("<")[0].split()[0]
    assert not Terminal.objects.filter(token_hash__contains=token).exists()  # only its hash
    # The rotation: the old token keeps working beside the new one until it is revoked.
    live = Terminal.objects.filter(table_id=table, revoked_at__isnull=True)
    assert live.count() == 2
    old = live.order_by("pk").first()
    _admin_action(admin_client, "/admin/tables/terminal/", "revoke", [old.pk])
    assert live.count() == 1
    assert AuditEvent.objects.filter(kind="terminal.revoked").exists()


def test_admin_replaces_a_lost_terminals_token_at_once(admin_client, floor, django_user_model):
    table = floor.uth[0].table_id
    _proposed_by_another_admin(django_user_model, "replace_terminal_tokens", table)
    _admin_action(admin_client, "/admin/tables/table/", "approve_terminal_issue", [table])
    assert Terminal.objects.filter(table_id=table, revoked_at__isnull=True).count() == 1
    assert Terminal.objects.filter(table_id=table, revoked_at__isnull=False).count() == 1


def test_the_journal_is_read_only_in_the_admin(admin_client, floor):
    assert admin_client.get("/admin/jackpot/transfer/").status_code == 200
    assert admin_client.get("/admin/jackpot/transfer/add/").status_code == 403
    assert admin_client.get("/admin/jackpot/auditevent/add/").status_code == 403


def test_staff_changes_are_audited(admin_client, django_user_model):
    user = django_user_model.objects.create(username="ana")
    response = admin_client.post(
        f"/admin/auth/user/{user.pk}/change/",
        {
            "username": "ana",
            "first_name": "Ana",
            "is_active": "on",
            "roles": ["supervisor"],
            "reason": "a new supervisor",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    # Her name at once, by one admin; her role once another admin approves.
    renamed = AuditEvent.objects.filter(kind="staff.changed", payload__user="ana").get()
    assert (renamed.payload["fields"], renamed.payload["after"]["roles"]) == (["first_name"], [])
    proposal = ParameterChange.objects.get(kind="staff.access")
    assert proposal.changes == {"roles": ["supervisor"]}
    assert not User.objects.get(pk=user.pk).groups.exists()

    second = Client()
    second.force_login(_admin(django_user_model, "root2"))
    second.post(
        "/admin/jackpot/parameterchange/",
        {"action": "approve", "_selected_action": [proposal.pk]},
    )
    granted = AuditEvent.objects.filter(kind="staff.changed").last()
    assert granted.payload["before"]["roles"] == [] and granted.payload["after"]["roles"] == [
        "supervisor"
    ]
    assert User.objects.get(pk=user.pk).groups.filter(name="supervisor").exists()


def test_a_pool_added_in_the_admin_gets_its_accounts_and_seed(admin_client, django_user_model):
    response = admin_client.post(
        "/admin/jackpot/pool/add/",
        {
            "name": "Second pool",
            "verification_threshold_cents": 100_000,
            "stake_cents": 500,
            "meter_share_bp": 2000,
            "reserve_share_bp": 800,
            "seed_cents": 250_000,
            "reason": "a second floor",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Pool.objects.filter(name="Second pool").exists()  # proposed, not created
    proposal = ParameterChange.objects.get(kind="pool.create")
    pool_create_approve(change_id=proposal.pk, user=_admin(django_user_model, "root2"))
    pool = Pool.objects.get(name="Second pool")
    assert pool.meter_cents == 250_000 and pool.accounts.count() == len(AccountKind)
    from tests.conftest import assert_journal_ok

    assert assert_journal_ok()["balances"][str(pool.pk)]["meter"] == 250_000
