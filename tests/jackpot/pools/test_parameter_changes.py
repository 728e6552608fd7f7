"""A pool's parameters change by two admins (compliance 16, 17, 40): one proposes, another
approves, only with the pool's tables closed for play and only if the pool still holds the values
the proposal saw; every step an audit event, the change recorded with old and new values, both
users and the UTC time. Its increment terms never change (compliance 56): 409 `terms_fixed`,
proposed or approved; new terms come by a replacement (tests/jackpot/pools/test_replacement.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client

from jackpot.approvals import changes as two_person
from jackpot.models import AuditEvent, ChangeKind, ParameterChange, Pool
from jackpot.pools.parameters import TERMS
from tables.models import Table
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db


@pytest.fixture
def admins(django_user_model) -> dict[str, Client]:
    return api_clients(ana="admin", bob="admin", sam="supervisor")


def _propose(client: Client, pool: int, changes: dict, reason: str = "a test"):
    return client.post(
        f"/api/v1/pools/{pool}/changes",
        {"changes": changes, "reason": reason},
        content_type="application/json",
    )


def _decide(client: Client, pool: int, change: int, step: str, body: dict | None = None):
    return client.post(
        f"/api/v1/pools/{pool}/changes/{change}/{step}", body or {}, content_type="application/json"
    )


def _close_tables(admin: Client, pool: int, enabled: bool = False) -> None:
    for table in Table.objects.filter(pool_id=pool):
        response = admin.patch(
            f"/api/v1/tables/{table.pk}", {"enabled": enabled}, content_type="application/json"
        )
        assert response.status_code == 200, response.json()


def test_raising_the_threshold_is_refused_while_a_table_is_open(admins, floor):
    proposed = _propose(admins["ana"], floor.pool_id, {"verification_threshold_cents": 10**9})
    assert proposed.status_code == 201, proposed.json()
    refused = _decide(admins["bob"], floor.pool_id, proposed.json()["id"], "approve")
    assert refused.status_code == 409, refused.json()
    assert refused.json()["error"]["code"] == "pool_tables_open"
    assert Pool.objects.get(pk=floor.pool_id).verification_threshold_cents == 100_000
    assert ParameterChange.objects.get().status == "proposed"
    # So a straight flush still waits for a supervisor.
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "sf", "seats": [uth_seat(1)]})
    award = terminal.post(
        "/rounds/sf/result",
        {
            "board": ["5c", "6c", "7c", "2s", "9h"],
            "dealer": ["Ac", "Qd"],
            "seats": [uth_play(1, "8c 9c")],
        },
    ).json()["awards"][0]
    assert (award["kind"], award["status"]) == ("straight_flush", "pending")


def test_one_admin_cannot_propose_and_approve(admins, floor):
    _close_tables(admins["ana"], floor.pool_id)
    change = _propose(admins["ana"], floor.pool_id, {"verification_threshold_cents": 1}).json()
    refused = _decide(admins["ana"], floor.pool_id, change["id"], "approve")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    assert Pool.objects.get(pk=floor.pool_id).verification_threshold_cents == 100_000
    # Supervisors neither propose nor approve.
    threshold = {"verification_threshold_cents": 7}
    assert _propose(admins["sam"], floor.pool_id, threshold).status_code == 403
    assert _decide(admins["sam"], floor.pool_id, change["id"], "approve").status_code == 403
    # Nor does the database let a proposer's approval in.
    ana = ParameterChange.objects.get().proposed_by
    with pytest.raises(IntegrityError), transaction.atomic():
        ParameterChange.objects.filter(pk=change["id"]).update(status="applied", decided_by=ana)


def test_an_applied_change_records_old_new_both_users_and_the_utc_time(admins, floor):
    _close_tables(admins["ana"], floor.pool_id)
    change = _propose(
        admins["ana"],
        floor.pool_id,
        {"verification_threshold_cents": 250_000, "surveillance_required": False, "name": "Main"},
        reason="the new season",
    ).json()
    assert change["before"] == {
        "verification_threshold_cents": 100_000,
        "surveillance_required": True,
        "name": Pool.objects.get(pk=floor.pool_id).name,
    }
    started = datetime.now(UTC)
    applied = _decide(admins["bob"], floor.pool_id, change["id"], "approve", {"note": "agreed"})
    assert applied.status_code == 200, applied.json()
    body = applied.json()
    assert (body["status"], body["proposed_by"], body["decided_by"]) == ("applied", "ana", "bob")
    assert body["changes"] == {
        "verification_threshold_cents": 250_000,
        "surveillance_required": False,
        "name": "Main",
    }
    decided = datetime.fromisoformat(body["decided_at"])
    assert decided.utcoffset() == timedelta(0) and started <= decided <= datetime.now(UTC)
    pool = Pool.objects.get(pk=floor.pool_id)
    assert (pool.verification_threshold_cents, pool.surveillance_required, pool.name) == (
        250_000,
        False,
        "Main",
    )

    event = AuditEvent.objects.get(kind="pool.changed")
    assert event.chain == f"pool-{floor.pool_id}" and event.actor == "user:bob"
    assert event.payload["before"] == change["before"]
    assert event.payload["after"] == change["changes"]
    assert (event.payload["proposed_by"], event.payload["approved_by"]) == ("ana", "bob")
    assert event.payload["change"] == change["id"]
    assert event.occurred_at == decided
    kinds = list(
        AuditEvent.objects.filter(chain=f"pool-{floor.pool_id}", kind__startswith="pool.change")
        .order_by("sequence")
        .values_list("kind", "actor")
    )
    assert kinds == [("pool.change_proposed", "user:ana"), ("pool.changed", "user:bob")]
    # Decided once.
    again = _decide(admins["ana"], floor.pool_id, change["id"], "reject", {"note": "late"})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "change_wrong_status")


def test_an_approval_after_the_pool_changed_is_refused_as_stale(admins, floor):
    _close_tables(admins["ana"], floor.pool_id)
    older = _propose(admins["ana"], floor.pool_id, {"verification_threshold_cents": 1}).json()
    newer = _propose(admins["ana"], floor.pool_id, {"verification_threshold_cents": 7}).json()
    assert _decide(admins["bob"], floor.pool_id, newer["id"], "approve").status_code == 200
    stale = _decide(admins["bob"], floor.pool_id, older["id"], "approve")
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "change_stale")
    assert Pool.objects.get(pk=floor.pool_id).verification_threshold_cents == 7
    # Values that no longer fit are stale too: a name another pool took meanwhile.
    other = make_floor(uth_tables=0)
    _close_tables(admins["ana"], other.pool_id)
    mine = _propose(admins["ana"], floor.pool_id, {"name": "Salon privé"}).json()
    theirs = _propose(admins["ana"], other.pool_id, {"name": "Salon privé"}).json()
    assert _decide(admins["bob"], other.pool_id, theirs["id"], "approve").status_code == 200
    stale = _decide(admins["bob"], floor.pool_id, mine["id"], "approve")
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "change_stale")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"stake_cents": 1000}, "stake_cents"),
        ({"meter_share_bp": 9500}, "meter_share_bp"),
        ({"reserve_share_bp": 1000}, "reserve_share_bp"),
        ({"seed_cents": 500_000}, "seed_cents"),
        ({"paytable_version": "nope"}, "paytable_version"),
        ({"verification_threshold_cents": 1, "seed_cents": 5}, "seed_cents"),
    ],
)
def test_a_running_pools_terms_are_refused_and_its_threshold_still_changes(
    admins, floor, changes, field
):
    """Compliance 56 (art. 66-2): stake, shares, seed and paytable are not changed while the
    progressive runs, proposed (409 `terms_fixed` naming the field, nothing written) or
    approved (a proposal filed before the rule); the threshold changes as ever."""
    _close_tables(admins["ana"], floor.pool_id)
    terms = {term: getattr(Pool.objects.get(pk=floor.pool_id), term) for term in TERMS}
    events = AuditEvent.objects.count()
    refused = _propose(admins["ana"], floor.pool_id, changes)
    assert refused.status_code == 409, refused.json()
    assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (
        "terms_fixed",
        f"changes.{field}",
    )
    assert "replace" in refused.json()["error"]["message"]
    assert not ParameterChange.objects.exists() and AuditEvent.objects.count() == events

    # A proposal filed before the terms were fixed (the service's own filing, unchecked).
    pool = Pool.objects.get(pk=floor.pool_id)
    filed = two_person.propose(
        kind=ChangeKind.POOL_PARAMETERS,
        pool=pool,
        changes=changes,
        before={name: getattr(pool, name) for name in changes},
        reason="filed last year",
        user=User.objects.get(username="ana"),
    )
    late = _decide(admins["bob"], floor.pool_id, filed.pk, "approve")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "terms_fixed")
    assert ParameterChange.objects.get(pk=filed.pk).status == "proposed"
    assert {t: getattr(Pool.objects.get(pk=floor.pool_id), t) for t in TERMS} == terms

    threshold = _propose(admins["ana"], floor.pool_id, {"verification_threshold_cents": 1})
    assert threshold.status_code == 201, threshold.json()
    applied = _decide(admins["bob"], floor.pool_id, threshold.json()["id"], "approve")
    assert applied.status_code == 200, applied.json()
    assert Pool.objects.get(pk=floor.pool_id).verification_threshold_cents == 1


def test_proposals_are_checked_listed_rejected_and_withdrawn(admins, floor):
    pool = floor.pool_id
    for changes, code, param in (
        ({}, "no_change", "changes"),
        ({"stake_cents": 500}, "no_change", "changes"),  # the same terms change nothing
        ({"name": Pool.objects.get(pk=pool).name}, "no_change", "changes"),
        (
            {"name": Pool.objects.get(pk=make_floor(uth_tables=0).pool_id).name},
            "invalid_change",
            "changes.name",
        ),
        (
            {"verification_threshold_cents": "7"},
            "invalid_request",
            "changes.verification_threshold_cents",
        ),
        ({"counter": 1}, "unknown_field", "changes.counter"),
    ):
        refused = _propose(admins["ana"], pool, changes)
        assert refused.status_code == 400, (changes, refused.json())
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (code, param)
    assert not ParameterChange.objects.exists()

    first = _propose(admins["ana"], pool, {"verification_threshold_cents": 5_000}).json()
    second = _propose(admins["ana"], pool, {"verification_threshold_cents": 6_000}).json()
    third = _propose(admins["ana"], pool, {"verification_threshold_cents": 7_000}).json()
    assert _decide(admins["bob"], pool, first["id"], "reject").status_code == 400  # why?
    rejected = _decide(admins["bob"], pool, first["id"], "reject", {"note": "too low"})
    assert rejected.json()["status"] == "rejected" and rejected.json()["decided_by"] == "bob"
    refused = _decide(admins["bob"], pool, second["id"], "withdraw")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "not_the_proposer")
    withdrawn = _decide(admins["ana"], pool, second["id"], "withdraw")
    assert withdrawn.json()["status"] == "withdrawn"
    missing = _decide(admins["bob"], pool, 999_999, "approve")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "change_not_found")

    listed = admins["bob"].get(f"/api/v1/pools/{pool}/changes").json()
    assert [c["id"] for c in listed["results"]] == [third["id"], second["id"], first["id"]]
    proposed = admins["bob"].get(f"/api/v1/pools/{pool}/changes?status=proposed").json()
    assert [c["id"] for c in proposed["results"]] == [third["id"]]
    assert admins["bob"].get(f"/api/v1/pools/{pool}/changes?status=lost").status_code == 400
    assert admins["sam"].get(f"/api/v1/pools/{pool}/changes").status_code == 403
    assert admins["bob"].get("/api/v1/pools/99999/changes").status_code == 404
    kinds = set(AuditEvent.objects.filter(chain=f"pool-{pool}").values_list("kind", flat=True)) - {
        "pool.created"
    }
    assert kinds == {"pool.change_proposed", "pool.change_rejected", "pool.change_withdrawn"}
