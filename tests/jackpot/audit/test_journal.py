"""The journal is append-only (the database refuses changes) and tamper-evident (verify finds
a change made behind the database's back)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client

from jackpot.models import AuditEvent, Transfer
from tables.audit.verification_jobs import verification_run
from tests.conftest import uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(floor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["3c", "4c"],
            "seats": [uth_play(1, "7s Ac"), uth_play(2, "Kc Ks")],
        },
    )
    return floor


@pytest.mark.parametrize(
    ("model", "change"), [(Transfer, {"amount_cents": 1}), (AuditEvent, {"actor": "x"})]
)
def test_database_refuses_update_and_delete(played, model, change):
    row = model.objects.order_by("pk").last()
    table = model._meta.db_table
    for statement in (
        f"UPDATE {table} SET id = id WHERE id = %s",
        f"DELETE FROM {table} WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [row.pk])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        model.objects.filter(pk=row.pk).update(**change)
    assert model.objects.filter(pk=row.pk).exclude(**change).exists()


def _tamper(sql: str, params: list) -> None:
    """Change a row the way only a superuser going around the triggers could."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_verify_journal_ok_then_finds_an_altered_transfer(played):
    out = StringIO()
    call_command("verify_journal", stdout=out)
    assert out.getvalue().startswith("OK:")

    award_transfer = Transfer.objects.filter(code="fixed_award").order_by("pk").first()
    event = award_transfer.event
    _tamper(
        "UPDATE jackpot_transfer SET amount_cents = amount_cents + 1 WHERE id = %s",
        [award_transfer.pk],
    )

    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_journal", stdout=out)
    assert (
        out.getvalue().splitlines()[0] == f"BROKEN at chain {event.chain} sequence {event.sequence}"
    )


def test_verify_journal_finds_an_altered_event_and_a_deleted_one(played):
    events = list(
        AuditEvent.objects.filter(chain=f"table-{played.uth[0].table_id}").order_by("sequence")
    )
    _tamper("UPDATE jackpot_auditevent SET actor = 'someone else' WHERE id = %s", [events[1].pk])
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_journal", stdout=out)
    assert f"sequence {events[1].sequence}" in out.getvalue().splitlines()[0]


def test_verify_journal_finds_a_missing_event(played):
    events = list(
        AuditEvent.objects.filter(chain=f"table-{played.uth[0].table_id}").order_by("sequence")
    )
    victim = events[-2]
    _tamper("DELETE FROM jackpot_transfer WHERE event_id = %s", [victim.pk])
    _tamper("DELETE FROM jackpot_auditevent WHERE id = %s", [victim.pk])
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_journal", stdout=out)
    assert f"sequence {victim.sequence}" in out.getvalue().splitlines()[0]


def test_journal_verify_api_is_for_auditors(played, django_user_model):
    auditor = token_client(person("a", "auditor"))
    supervisor = token_client(person("s", "supervisor"))
    assert auditor.get("/api/v1/journal/verify").json() == {
        "latest": None,
        "latest_full": None,
        "running": None,
    }
    for client, status in ((supervisor, 403), (Client(), 401)):
        assert client.get("/api/v1/journal/verify").status_code == status
        assert client.post("/api/v1/journal/verify").status_code == status
    assert (
        Client(HTTP_AUTHORIZATION="Bearer staff_nope").get("/api/v1/journal/verify").status_code
        == 401
    )

    def verified() -> dict:
        started = auditor.post("/api/v1/journal/verify")
        assert started.status_code == 202
        assert auditor.get("/api/v1/journal/verify").json()["running"] == started.json()
        verification_run(started.json()["id"])  # the worker's task, here in-process
        return auditor.get("/api/v1/journal/verify").json()["latest"]

    assert verified()["ok"] is True
    _tamper(
        "UPDATE jackpot_auditevent SET payload = '{}' WHERE chain = %s AND sequence = 2",
        [f"table-{played.uth[0].table_id}"],
    )
    body = verified()
    assert body["ok"] is False
    assert body["first_broken"] == {"chain": f"table-{played.uth[0].table_id}", "sequence": 2}


def test_verify_journal_finds_events_cut_off_the_end(played):
    last = (
        AuditEvent.objects.filter(chain=f"table-{played.uth[0].table_id}")
        .order_by("sequence")
        .last()
    )
    _tamper("DELETE FROM jackpot_transfer WHERE event_id = %s", [last.pk])
    _tamper("DELETE FROM jackpot_auditevent WHERE id = %s", [last.pk])
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_journal", stdout=out)
    assert "head row does not match" in out.getvalue()
