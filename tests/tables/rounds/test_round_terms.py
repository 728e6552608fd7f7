"""A round records its pool's terms when it opens (stake, progressive paytable version,
verification threshold), as committed under its table's lock, and in its `round.opened` event;
the migration that brought the columns gives older rounds the terms they were settled with."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from jackpot.models import AuditEvent, Pool
from jackpot.pools.parameters import change_approve, change_propose
from rules.paytables import CURRENT
from tables.bodies.round_requests import parse_open
from tables.models import Game, Round, Table
from tables.pools import POOL_TABLES
from tables.rounds import round_open
from tables.services import table_update
from tests.conftest import Floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db

FULL_HOUSE = {
    "board": ["7c", "7d", "7h", "Kd", "2s"],
    "dealer": ["9s", "8d"],
    "seats": [uth_play(1, "Kc Ks")],
}


def _terms(round_id: str) -> tuple:
    found = Round.objects.get(round_id=round_id)
    return found.stake_cents, found.paytable_version, found.verification_threshold_cents


def test_a_round_records_its_pools_terms_and_a_round_without_a_pool_none(floor):
    opened = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert opened.status_code == 201
    stud = {"round_id": "s-1", "seats": [{"seat": 1, "bets": {"ante_cents": 100}}]}
    assert floor.stud.post("/rounds", stud).status_code == 201

    assert _terms("r-1") == (500, CURRENT.progressive.version, 100_000)
    assert _terms("s-1") == (0, "", None)
    events = AuditEvent.objects.filter(kind="round.opened").order_by("chain")
    assert {e.payload["round_id"]: e.payload["terms"] for e in events} == {
        "r-1": {
            "stake_cents": 500,
            "paytable_version": CURRENT.progressive.version,
            "verification_threshold_cents": 100_000,
        },
        "s-1": None,
    }


def test_a_pooled_round_without_its_terms_is_refused_by_the_database(floor):
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    found_pk = Round.objects.get(round_id="r-1").pk
    for changes in ({"paytable_version": ""}, {"verification_threshold_cents": None}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Round.objects.filter(pk=found_pk).update(**changes)
    assert _terms("r-1") == (500, CURRENT.progressive.version, 100_000)


def test_an_open_records_the_terms_committed_since_its_terminal_was_authenticated(floor):
    """The terminal's authentication read the pool before a change of its threshold committed:
    the round records the committed threshold, read under the table's lock."""
    stale = Table.objects.select_related("pool").get(pk=floor.uth[0].table_id)
    Pool.objects.filter(pk=floor.pool_id).update(verification_threshold_cents=4_000)
    request = parse_open(
        {"round_id": "r-1", "seats": [uth_seat(1)]},
        game=Game.UTH,
        seats=7,
        progressive_stake_cents=500,
    )

    round_open(table=stale, request=request, fingerprint="f", actor="test")

    assert stale.pool is not None and stale.pool.verification_threshold_cents == 100_000
    assert _terms("r-1") == (500, CURRENT.progressive.version, 4_000)
    settled = floor.uth[0].post("/rounds/r-1/result", FULL_HOUSE).json()
    assert [(a["kind"], a["status"]) for a in settled["awards"]] == [("full_house", "pending")]


def _threshold_change(floor: Floor, django_user_model, cents: int) -> None:
    ana, bob = (django_user_model.objects.create(username=n) for n in ("ana", "bob"))
    for terminal in floor.uth:
        table_update(table_id=terminal.table_id, changes={"enabled": False}, actor="test")
    change = change_propose(
        pool_id=floor.pool_id,
        changes={"verification_threshold_cents": cents},
        reason="test",
        user=ana,
    )
    change_approve(pool_id=floor.pool_id, change_id=change.pk, user=bob, pool_tables=POOL_TABLES)
    for terminal in floor.uth:
        table_update(table_id=terminal.table_id, changes={"enabled": True}, actor="test")


def test_the_migration_gives_older_rounds_the_terms_they_were_settled_with(
    floor, django_user_model
):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    terminal.post("/rounds/r-1/result", FULL_HOUSE)
    _threshold_change(floor, django_user_model, 200_000)
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    migration = importlib.import_module("tables.migrations.0008_round_terms")
    with connection.cursor() as cursor:
        # As before the migrations after it: no trigger yet keeps a closed round's row final.
        cursor.execute("SET LOCAL session_replication_role = replica")
        # Rows as a database before the migration would hold them: terms not yet recorded (any
        # value: the migration sets them all).
        Round.objects.update(verification_threshold_cents=1, paytable_version="unrecorded")
        migration.terms_of_record(apps, None)
        cursor.execute("SET LOCAL session_replication_role = origin")

    assert _terms("r-1") == (500, CURRENT.progressive.version, 100_000)  # settled before
    assert _terms("r-2") == (500, CURRENT.progressive.version, 200_000)  # opened after
