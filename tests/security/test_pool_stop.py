"""One person holding every privilege cannot stop a pool for good alone (issue 22 item 3,
compliance 36): a superuser with every role proposes a stop in the admin and over the API, and
neither his approval in the admin, nor over the API, nor a row written with him as approver
applies it; nothing moves until a second admin approves. Suspending, a fault's urgency, takes
one admin and moves no money."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from jackpot.models import AuditEvent, ParameterChange, Pool, Transfer
from tables.models import Table
from tests.conftest import make_floor, uth_seat
from tests.staff import person, signed_in, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def root() -> User:
    return person("root", "admin", "auditor", is_staff=True, is_superuser=True)


@pytest.fixture
def bob() -> User:
    return person("bob", "admin", is_staff=True)


def _approve_in_admin(user: User, change: ParameterChange) -> str:
    page = signed_in(user).post(
        "/admin/jackpot/parameterchange/",
        {"action": "approve", "_selected_action": [change.pk]},
        follow=True,
    )
    return page.content.decode()


def test_one_person_with_every_privilege_cannot_stop_a_pool(root, bob):
    floor = make_floor()
    assert (
        floor.uth[0].post("/rounds", {"round_id": "r1", "seats": [uth_seat(1)]}).status_code == 201
    )
    floor.uth[0].post("/rounds/r1/void", {"reason": "misdeal"})
    Table.objects.filter(pool_id=floor.pool_id).update(enabled=False)
    before = Pool.objects.values_list("meter_units", "reserve_units", "status").get(
        pk=floor.pool_id
    )
    transfers = Transfer.objects.count()

    page = signed_in(root).post(
        "/admin/jackpot/pool/",
        {"action": "propose_stop_to_orphan", "_selected_action": [floor.pool_id]},
        follow=True,
    )
    assert "done" in page.content.decode()
    change = ParameterChange.objects.get(kind="pool.stop")
    assert (change.changes, change.proposed_by) == (
        {"to": "orphan", "to_pool": None, "voluntary": False, "effective_at": None},
        root,
    )

    assert "cannot also approve it" in _approve_in_admin(root, change)
    refused = token_client(root).post(
        f"/api/v1/pools/{floor.pool_id}/changes/{change.pk}/approve",
        {},
        content_type="application/json",
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "four_eyes"
    # Nor can the row be marked applied with him as its approver: the database refuses it.
    with pytest.raises(IntegrityError), transaction.atomic():
        ParameterChange.objects.filter(pk=change.pk).update(
            status="applied", decided_by=root, decided_at=timezone.now()
        )
    after = Pool.objects.values_list("meter_units", "reserve_units", "status").get(pk=floor.pool_id)
    assert after == before
    assert Transfer.objects.count() == transfers
    assert not AuditEvent.objects.filter(kind="pool.stopped").exists()

    assert "done" in _approve_in_admin(bob, change)
    stopped = AuditEvent.objects.get(kind="pool.stopped")
    assert (stopped.payload["proposed_by"], stopped.payload["approved_by"]) == ("root", "bob")
    assert Pool.objects.get(pk=floor.pool_id).status == "stopped"


def test_an_admin_suspends_and_resumes_in_the_admin_alone(root):
    floor = make_floor()
    for action, status in (("suspend", "suspended"), ("resume", "active")):
        page = signed_in(root).post(
            "/admin/jackpot/pool/",
            {"action": action, "_selected_action": [floor.pool_id]},
            follow=True,
        )
        assert "done" in page.content.decode()
        assert Pool.objects.get(pk=floor.pool_id).status == status
    events = AuditEvent.objects.filter(kind__in=["pool.suspended", "pool.resumed"]).order_by("pk")
    assert [(e.kind, e.actor, e.payload["reason"]) for e in events] == [
        ("pool.suspended", "user:root", "suspended in the admin by root"),
        ("pool.resumed", "user:root", "resumed in the admin by root"),
    ]
