"""A progressive replaced (compliance 56, issue 40 item 1): new terms start a new pool by a
two-person change; the old one stops, its increment (meter less its seed) and reserve move to the
new pool to the cent, its seed back to the house, its tables with them. Each refusal asserts what
was not written."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from jackpot.models import AuditEvent, ParameterChange, Pool, Transfer
from tables.audit.verification import verify_full
from tables.models import Table
from tests.conftest import Floor, assert_journal_ok, uth_play, uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db

U = 10_000
NEW = {
    "name": "Salon 2027",
    "stake_cents": 500,
    "meter_share_bp": 2_500,
    "reserve_share_bp": 500,
    "seed_cents": 500_000,
}
NOTHING = {
    "board": ["2c", "7d", "9h", "Js", "3c"],
    "dealer": ["4d", "5s"],
    "seats": [uth_play(1, "Ah Kd"), uth_play(2, "8s 8h", "fold"), uth_play(3, "Qc Td")],
}


@pytest.fixture
def admins(django_user_model) -> dict[str, Client]:
    return api_clients(ana="admin", bob="admin")


def _post(client: Client, path: str, body: dict | None = None):
    return client.post(f"/api/v1{path}", body or {}, content_type="application/json")


def _set_tables(admin: Client, pool: int, *, enabled: bool) -> None:
    for table in Table.objects.filter(pool_id=pool):
        answer = admin.patch(
            f"/api/v1/tables/{table.pk}", {"enabled": enabled}, content_type="application/json"
        )
        assert answer.status_code == 200, answer.json()


def _play(floor: Floor, round_id: str = "r-1") -> None:
    seats = [uth_seat(1), uth_seat(2), uth_seat(3)]
    opened = floor.uth[0].post("/rounds", {"round_id": round_id, "seats": seats})
    assert opened.status_code == 201, opened.json()
    settled = floor.uth[0].post(f"/rounds/{round_id}/result", NOTHING)
    assert settled.status_code == 200 and settled.json()["awards"] == [], settled.json()


def _written() -> tuple[int, int, int]:
    return Pool.objects.count(), Transfer.objects.count(), AuditEvent.objects.count()


def _propose(admins: dict[str, Client], pool: int, terms: dict | None = None) -> dict:
    proposed = _post(
        admins["ana"], f"/pools/{pool}/replace", {"changes": terms or NEW, "reason": "2027 terms"}
    )
    assert proposed.status_code == 201, proposed.json()
    return proposed.json()


def test_a_replacement_moves_every_cent_and_every_table(admins, floor: Floor):
    _play(floor)
    old = Pool.objects.get(pk=floor.pool_id)
    # 3 stakes of 500 at 2,000 bp: 300 cents on the meter; at 800 bp: 120 on the reserve.
    assert (old.meter_units, old.reserve_units) == (1_000_300 * U, 120 * U)
    _set_tables(admins["ana"], floor.pool_id, enabled=False)
    change = _propose(admins, floor.pool_id)
    assert change["kind"] == "pool.replace"
    assert change["before"] == {
        "status": "active",
        "stake_cents": 500,
        "meter_share_bp": 2_000,
        "reserve_share_bp": 800,
        "seed_cents": 1_000_000,
        "paytable_version": old.paytable_version,
    }
    path = f"/pools/{floor.pool_id}/changes/{change['id']}/approve"

    # The proposer cannot approve: 403, nothing written.
    written = _written()
    own = _post(admins["ana"], path)
    assert (own.status_code, own.json()["error"]["code"]) == (403, "four_eyes")
    assert _written() == written

    approved = _post(admins["bob"], path, {"note": "agreed"})
    assert approved.status_code == 200, approved.json()
    assert approved.json()["status"] == "applied"
    new = Pool.objects.exclude(pk=old.pk).get()
    old.refresh_from_db()
    assert (old.status, old.status_reason) == ("stopped", f"replaced by pool {new.pk}")
    assert {k: getattr(new, k) for k in NEW} == NEW
    assert (new.status, new.currency, new.verification_threshold_cents) == (
        "active",
        "EUR",
        100_000,
    )
    # The increment (1,000,300 - 1,000,000 = 300) on the new seed; the reserve whole.
    assert (new.meter_units, new.reserve_units) == ((500_000 + 300) * U, 120 * U)
    assert (old.meter_units, old.reserve_units) == (0, 0)  # no sub-cent here
    # Every table moved, each by its own `table.changed` naming the change.
    assert set(Table.objects.filter(pool_id=new.pk).values_list("pk", flat=True)) == {
        t.table_id for t in floor.uth
    }
    assert not Table.objects.filter(pool_id=old.pk).exists()
    moves = AuditEvent.objects.filter(kind="table.changed", payload__change=change["id"])
    assert sorted(e.payload["table"] for e in moves) == sorted(t.table_id for t in floor.uth)
    assert all(e.payload["after"] == {"pool": new.pk} for e in moves)

    created = AuditEvent.objects.get(kind="pool.created", payload__pool=new.pk)
    assert (created.payload["replaces"], created.payload["change"]) == (old.pk, change["id"])
    assert (created.payload["proposed_by"], created.payload["approved_by"]) == ("ana", "bob")
    stopped = AuditEvent.objects.get(kind="pool.stopped")
    assert stopped.payload["replaced_by"] == new.pk
    assert stopped.payload["moved"] == {"meter_cents": 300, "reserve_cents": 120}
    assert stopped.payload["seed_back_cents"] == 1_000_000

    balances = assert_journal_ok()["balances"]
    was, now = balances[str(old.pk)], balances[str(new.pk)]
    assert (was["meter"], was["reserve"], was["moved"]) == (0, 0, 420)
    assert (now["meter"], now["reserve"], now["moved"]) == (500_300, 120, -420)
    assert sum(was.values()) == sum(now.values()) == 0

    # The old pool takes no stake: no table is linked to it again.
    relinked = _post(
        admins["ana"], f"/tables/{floor.uth[0].table_id}/moves", {"pool": old.pk, "reason": "x"}
    )
    assert (relinked.status_code, relinked.json()["error"]["code"]) == (409, "pool_stopped")
    again = _post(admins["ana"], f"/pools/{old.pk}/replace", {"changes": NEW, "reason": "x"})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "pool_stopped")
    # The new pool's first round, at the moved table, on its terms: 3 x 500 x 2,500 bp.
    _set_tables(admins["ana"], new.pk, enabled=True)
    _play(floor, "r-2")
    new.refresh_from_db()
    assert (new.meter_units, new.reserve_units) == ((500_300 + 375) * U, (120 + 75) * U)
    assert Pool.objects.get(pk=old.pk).meter_units == 0
    assert_journal_ok()


def test_a_replacement_is_refused_with_a_round_open_or_an_award_unpaid(admins, floor: Floor):
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "sf", "seats": [uth_seat(1)]}).status_code == 201
    _set_tables(admins["ana"], floor.pool_id, enabled=False)
    change = _propose(admins, floor.pool_id)
    path = f"/pools/{floor.pool_id}/changes/{change['id']}/approve"
    written = _written()
    refused = _post(admins["bob"], path)
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "pool_round_open")
    straight_flush = {
        "board": ["5c", "6c", "7c", "2s", "9h"],
        "dealer": ["Ac", "Qd"],
        "seats": [uth_play(1, "8c 9c")],
    }
    assert terminal.post("/rounds/sf/result", straight_flush).status_code == 200
    written = _written()
    unpaid = _post(admins["bob"], path)
    assert (unpaid.status_code, unpaid.json()["error"]["code"]) == (409, "pool_awards_unpaid")
    assert _written() == written
    assert ParameterChange.objects.get(pk=change["id"]).status == "proposed"
    assert Pool.objects.get(pk=floor.pool_id).status == "active"


def test_a_replacement_names_new_terms_and_a_free_name(admins, floor: Floor):
    pool = Pool.objects.get(pk=floor.pool_id)
    for terms, status, code, param in (
        ({"name": "Same"}, 400, "no_change", "changes"),
        ({**NEW, "meter_share_bp": 9_600}, 400, "invalid_change", "changes.meter_share_bp"),
        ({**NEW, "paytable_version": "nope"}, 400, "invalid_change", "changes.paytable_version"),
        ({**NEW, "name": pool.name}, 400, "invalid_change", "changes.name"),
        ({"stake_cents": 700}, 400, "invalid_request", "changes.name"),
    ):
        refused = _post(
            admins["ana"], f"/pools/{pool.pk}/replace", {"changes": terms, "reason": "x"}
        )
        assert refused.status_code == status, (terms, refused.json())
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (code, param)
    assert not ParameterChange.objects.exists()
    # Withdrawn and rejected as any pool change.
    first, second = _propose(admins, pool.pk), _propose(admins, pool.pk)
    withdrawn = _post(admins["ana"], f"/pools/{pool.pk}/changes/{first['id']}/withdraw")
    assert withdrawn.json()["status"] == "withdrawn"
    rejected = _post(
        admins["bob"], f"/pools/{pool.pk}/changes/{second['id']}/reject", {"note": "not yet"}
    )
    assert rejected.json()["status"] == "rejected"
    assert Pool.objects.count() == 1


def test_verification_passes_after_a_replacement_and_names_an_sql_edit_of_the_new_terms(
    admins, floor: Floor
):
    _play(floor)
    _set_tables(admins["ana"], floor.pool_id, enabled=False)
    change = _propose(admins, floor.pool_id)
    approved = _post(admins["bob"], f"/pools/{floor.pool_id}/changes/{change['id']}/approve")
    assert approved.status_code == 200, approved.json()
    assert verify_full().problems == []
    new = Pool.objects.exclude(pk=floor.pool_id).get()
    with connection.cursor() as cursor:  # an insider with SQL, without the journal's key
        cursor.execute("UPDATE jackpot_pool SET meter_share_bp = 3000 WHERE id = %s", [new.pk])
    problems = verify_full().problems
    assert any(p.startswith(f"pool {new.pk}: meter_share_bp is 3000") for p in problems), problems
