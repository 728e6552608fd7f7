"""A round belongs to the pool its table fed when it opened, at that pool's stake, and settles or
voids against them whatever happens to the table afterwards (domain.md, "The progressive"). A
table with an open round cannot change pool; the club's systems move tables over the API, one
admin proposing, another approving."""

from __future__ import annotations

import pytest
from django.test import Client

from core.errors import Conflict
from jackpot.models import AuditEvent, Award, Pool, Transfer
from jackpot.pools.creation import pool_create
from jackpot.staff.accounts import operator_grant
from tables.audit.verification import verify_full
from tables.bodies.round_requests import parse_open
from tables.models import Game, Round, Table
from tables.rounds import round_open
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
}


def _admin_client(django_user_model, name: str) -> Client:
    return token_client(operator_grant(username=name, role="admin", actor="test"))  # on the journal


@pytest.fixture
def admin(django_user_model) -> Client:
    return _admin_client(django_user_model, "club-admin")


@pytest.fixture
def second(django_user_model) -> Client:
    return _admin_client(django_user_model, "other-admin")


def _patch(client: Client, table: int, body: dict) -> tuple[int, dict]:
    response = client.patch(f"/api/v1/tables/{table}", body, content_type="application/json")
    return response.status_code, response.json()


def _propose(client: Client, table: int, pool: int | None) -> tuple[int, dict]:
    response = client.post(
        f"/api/v1/tables/{table}/moves",
        {"pool": pool, "reason": "the floor changes"},
        content_type="application/json",
    )
    return response.status_code, response.json()


def _move(admin: Client, second: Client, table: int, pool: int | None) -> tuple[int, dict]:
    """One admin proposes the move, the other approves it: the approval's answer."""
    status, proposal = _propose(admin, table, pool)
    assert status == 201, proposal
    response = second.post(
        f"/api/v1/tables/{table}/moves/{proposal['id']}/approve",
        {},
        content_type="application/json",
    )
    return response.status_code, response.json()


def _meters(*pools: int) -> list[int]:
    return [Pool.objects.get(pk=pk).meter_units for pk in pools]


def test_a_round_settles_and_voids_against_its_pool_of_record_after_its_table_moved():
    floor = make_floor()
    other = pool_create(name="B", actor="test").pk
    terminal = floor.uth[0]
    assert (
        terminal.post(
            "/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]}
        ).status_code
        == 201
    )
    # Someone moves the table behind the service's back (the database allows the row change).
    Table.objects.filter(pk=terminal.table_id).update(pool=other)
    meter_b = _meters(other)
    settled = terminal.post("/rounds/r-1/result", ROYAL)
    # One round at a time per table: the second one opens on pool A too, then the table moves.
    Table.objects.filter(pk=terminal.table_id).update(pool=floor.pool_id)
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    assert list(Round.objects.values_list("pool_id", "stake_cents")) == [(floor.pool_id, 500)] * 2
    Table.objects.filter(pk=terminal.table_id).update(pool=other)
    voided = terminal.post("/rounds/r-2/void", {"reason": "misdeal"})

    assert settled.status_code == 200 and voided.status_code == 200
    assert settled.json()["meter"]["pool"] == floor.pool_id
    assert {award.pool_id for award in Award.objects.all()} == {floor.pool_id}
    assert set(Transfer.objects.filter(round__isnull=False).values_list("pool_id", flat=True)) == {
        floor.pool_id
    }
    assert _meters(other) == meter_b  # pool B's meter never moved, its house paid no envy
    assert voided.json()["progressive_refund_cents"] == 500
    # The money is exact; the move made behind the journal's back is named (tables.audit.records).
    assert verify_full().problems == [
        f"table {terminal.table_id}: the row's pool differ from its events"
    ]


def test_a_table_moves_only_closed_and_without_open_rounds(admin, second):
    floor = make_floor()
    other = pool_create(name="B", actor="test").pk
    terminal = floor.uth[0]
    table = terminal.table_id
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})

    assert _move(admin, second, table, other)[1]["error"]["code"] == "table_open"
    assert _patch(admin, table, {"enabled": False})[0] == 200
    status, body = _move(admin, second, table, other)
    assert (status, body["error"]["code"]) == (409, "table_has_open_rounds")
    assert "r-1" in body["error"]["message"]
    status, body = _move(admin, second, table, None)
    assert (status, body["error"]["code"]) == (409, "table_has_open_rounds")
    assert Table.objects.get(pk=table).pool_id == floor.pool_id

    _patch(admin, table, {"enabled": True})
    terminal.post("/rounds/r-1/void", {"reason": "misdeal"})
    _patch(admin, table, {"enabled": False})
    status, body = _move(admin, second, table, other)
    assert status == 200
    assert (body["kind"], body["status"], body["pool"]) == ("table.move", "applied", other)
    assert admin.get(f"/api/v1/tables/{table}").json() == {
        "id": table,
        "name": Table.objects.get(pk=table).name,
        "game": "uth",
        "pool": other,
        "enabled": False,
        "seats": 7,
        "open_rounds": 0,
    }
    assert _patch(admin, table, {"enabled": True})[1]["enabled"] is True
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    assert Round.objects.get(round_id="r-2").pool_id == other
    # The journal of the table's old rounds stays on the old pool, and verifies.
    assert_journal_ok()
    moves = AuditEvent.objects.filter(kind="table.changed", payload__table=table)
    assert [e.payload["after"] for e in moves.order_by("sequence")] == [
        {"enabled": False},
        {"enabled": True},
        {"enabled": False},
        {"pool": other},
        {"enabled": True},
    ]


def test_table_administration_refusals(admin, django_user_model):
    floor = make_floor()
    stud = floor.stud.table_id
    supervisor = token_client(person("sup", "supervisor"))

    assert _patch(supervisor, stud, {"enabled": False})[0] == 403
    assert _patch(admin, 999_999, {"enabled": False})[1]["error"]["code"] == "table_not_found"
    _patch(admin, stud, {"enabled": False})
    assert _propose(admin, stud, floor.pool_id)[1]["error"]["code"] == "pool_not_for_stud"
    assert _propose(admin, stud, 999_999)[1]["error"]["code"] == "pool_not_found"
    assert _patch(admin, stud, {"pool": floor.pool_id})[1]["error"]["code"] == "unknown_field"
    assert _patch(admin, stud, {"enabled": "no"})[1]["error"]["param"] == "enabled"
    assert _patch(admin, stud, {"seats": 3})[1]["error"]["code"] == "unknown_field"
    assert admin.get(f"/api/v1/tables/{stud}").json()["enabled"] is False


def _stale(table_id: int) -> Table:
    """The table as a terminal's authentication read it (with its pool), before a change."""
    return Table.objects.select_related("pool").get(pk=table_id)


def _request():
    return parse_open(
        {"round_id": "r-1", "seats": [uth_seat(1)]},
        game=Game.UTH,
        seats=7,
        progressive_stake_cents=500,
    )


def test_an_open_racing_a_move_is_refused_and_writes_nothing():
    floor = make_floor()
    other = pool_create(name="B", actor="test").pk
    stale = _stale(floor.uth[0].table_id)
    Table.objects.filter(pk=stale.pk).update(pool=other)  # committed after authentication
    before = _meters(floor.pool_id, other)

    with pytest.raises(Conflict) as refused:
        round_open(table=stale, request=_request(), fingerprint="f", actor="test")

    assert refused.value.code == "table_changed"
    assert not Round.objects.exists()
    assert _meters(floor.pool_id, other) == before


def test_an_open_validated_against_a_stake_the_pool_no_longer_has_is_refused():
    floor = make_floor()
    stale = _stale(floor.uth[0].table_id)
    Pool.objects.filter(pk=floor.pool_id).update(stake_cents=600)
    before = _meters(floor.pool_id)

    with pytest.raises(Conflict) as refused:
        round_open(table=stale, request=_request(), fingerprint="f", actor="test")

    assert refused.value.code == "stake_changed"
    assert not Round.objects.exists()
    assert _meters(floor.pool_id) == before
