"""A pool's parameters change by two admins (compliance 16, 17, 40): one proposes, another
approves, only with the pool's tables closed for play and only if the pool still holds the values
the proposal saw; every step an audit event, the change recorded with old and new values, both
users and the UTC time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from jackpot.models import AuditEvent, ParameterChange, Pool
from tables.models import Table
from tests.conftest import uth_play, uth_seat
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
    change = _propose(admins["ana"], floor.pool_id, {"stake_cents": 1000}).json()
    refused = _decide(admins["ana"], floor.pool_id, change["id"], "approve")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    assert Pool.objects.get(pk=floor.pool_id).stake_cents == 500
    # Supervisors neither propose nor approve.
    assert _propose(admins["sam"], floor.pool_id, {"stake_cents": 700}).status_code == 403
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
        {"stake_cents": 1000, "seed_cents": 900_000, "name": "Main floor"},
        reason="the new season",
    ).json()
    assert change["before"] == {
        "stake_cents": 500,
        "seed_cents": 1_000_000,
        "name": Pool.objects.get(pk=floor.pool_id).name,
    }
    started = datetime.now(UTC)
    applied = _decide(admins["bob"], floor.pool_id, change["id"], "approve", {"note": "agreed"})
    assert applied.status_code == 200, applied.json()
    body = applied.json()
    assert (body["status"], body["proposed_by"], body["decided_by"]) == ("applied", "ana", "bob")
    assert body["changes"] == {"stake_cents": 1000, "seed_cents": 900_000, "name": "Main floor"}
    decided = datetime.fromisoformat(body["decided_at"])
    assert decided.utcoffset() == timedelta(0) and started <= decided <= datetime.now(UTC)
    pool = Pool.objects.get(pk=floor.pool_id)
    assert (pool.stake_cents, pool.seed_cents, pool.name) == (1000, 900_000, "Main floor")

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
    older = _propose(admins["ana"], floor.pool_id, {"stake_cents": 1000}).json()
    newer = _propose(admins["ana"], floor.pool_id, {"stake_cents": 700}).json()
    assert _decide(admins["bob"], floor.pool_id, newer["id"], "approve").status_code == 200
    stale = _decide(admins["bob"], floor.pool_id, older["id"], "approve")
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "change_stale")
    assert Pool.objects.get(pk=floor.pool_id).stake_cents == 700
    # Values that no longer fit together are stale too: shares over 10,000 once combined.
    meter = _propose(admins["ana"], floor.pool_id, {"meter_share_bp": 9100}).json()
    reserve = _propose(admins["ana"], floor.pool_id, {"reserve_share_bp": 1000}).json()
    assert _decide(admins["bob"], floor.pool_id, reserve["id"], "approve").status_code == 200
    stale = _decide(admins["bob"], floor.pool_id, meter["id"], "approve")
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "change_stale")


def test_a_seed_above_the_meter_waits_until_the_meter_has_reached_it(admins, floor):
    """Compliance 12: the meter is never below its reset. A higher seed is refused while the
    meter is under it, and approved once the meter has grown to it."""
    seats = [uth_seat(seat) for seat in range(1, 8)]
    assert floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": seats}).status_code == 201
    pool = Pool.objects.get(pk=floor.pool_id)
    assert pool.meter_cents > pool.seed_cents  # the stakes raised the meter
    _close_tables(admins["ana"], floor.pool_id)
    # No round of the pool may be open across a change; a void keeps the meter where it is.
    assert floor.uth[0].post("/rounds/r-1/void", {"reason": "misdeal"}).status_code == 200
    above = _propose(admins["ana"], floor.pool_id, {"seed_cents": pool.meter_cents + 1}).json()
    refused = _decide(admins["bob"], floor.pool_id, above["id"], "approve")
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "seed_above_meter")
    assert Pool.objects.get(pk=floor.pool_id).seed_cents == pool.seed_cents
    at = _propose(admins["ana"], floor.pool_id, {"seed_cents": pool.meter_cents}).json()
    assert _decide(admins["bob"], floor.pool_id, at["id"], "approve").status_code == 200
    changed = Pool.objects.get(pk=floor.pool_id)
    assert changed.seed_cents == changed.meter_cents == pool.meter_cents


def test_proposals_are_checked_listed_rejected_and_withdrawn(admins, floor):
    pool = floor.pool_id
    for changes, code, param in (
        ({}, "no_change", "changes"),
        ({"stake_cents": 500}, "no_change", "changes"),
        ({"meter_share_bp": 9500}, "invalid_change", "changes.meter_share_bp"),
        ({"paytable_version": "nope"}, "invalid_change", "changes.paytable_version"),
        ({"stake_cents": "700"}, "invalid_request", "changes.stake_cents"),
        ({"counter": 1}, "unknown_field", "changes.counter"),
    ):
        refused = _propose(admins["ana"], pool, changes)
        assert refused.status_code == 400, (changes, refused.json())
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (code, param)
    assert not ParameterChange.objects.exists()

    first = _propose(admins["ana"], pool, {"seed_cents": 5_000}).json()
    second = _propose(admins["ana"], pool, {"seed_cents": 6_000}).json()
    third = _propose(admins["ana"], pool, {"seed_cents": 7_000}).json()
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
