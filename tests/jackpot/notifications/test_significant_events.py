"""Significant events (jackpot.notifications.significant, tables.watch; docs/operations.md
"Significant events"): each recorded on the journal under its stable code, listed by `GET
/api/v1/events`, counted in /metrics and sent by the signed webhook `significant_event`, once per
event and only once its transaction commits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from core import metrics
from jackpot.models import AuditEvent, OutboxMessage
from jackpot.money import ledger
from jackpot.notifications import significant
from jackpot.pools import lifecycle
from jackpot.pools.parameters import change_approve, change_propose
from tables.models import Round
from tables.pools import POOL_TABLES
from tables.services import table_update
from tables.watch import note_database_life, watch
from tests.conftest import assert_journal_ok, make_floor, uth_seat
from tests.floor.conftest import play_hit
from tests.jackpot.tamper import superuser_sql
from tests.staff import person, referred, signed_in, token_client

#: The codes are a contract with the regulator and the receivers: a code never changes meaning.
#: A new event takes a new code; this list only ever grows.
STABLE = {
    "SE01": "terminal.silent",
    "SE02": "reconciliation.failed",
    "SE03": "reconciliation.recovered",
    "SE04": "pool.changed",
    "SE05": "table.changed",
    "SE06": "pool.suspended",
    "SE07": "pool.resumed",
    "SE08": "pool.stopped",
    "SE09": "database.restored",
    "SE10": "integrity.void_rate",
    "SE11": "integrity.award_rate",
    "SE12": "award.referred",
    "SE13": "staff.second_factor_enrolled",
    "SE14": "staff.second_factor_reset",
    "SE15": "staff.recovery_codes_issued",
    "SE16": "staff.second_factor_missing",
    "SE17": "terminal.issued",
    "SE18": "integrity.award_odds",
    "SE19": "session.drop_difference",
    "SE20": "pool.corrected",
    # The code proved (compliance 59).
    "SE21": "code.mismatch",
    # The progressive's life (compliance 57, 58).
    "SE22": "notice.overdue",
    "SE23": "orphans.final",
}


def test_the_codes_are_stable_and_one_to_one():
    assert {event.code.value: event.kind for event in significant.CATALOGUE} == STABLE
    assert len({event.name for event in significant.CATALOGUE}) == len(STABLE)


def _staff(role: str) -> Client:
    return token_client(person(f"{role}-events", role))


def _events(kind: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=kind).order_by("occurred_at", "pk"))


def _counted(code: str) -> float:
    return (
        metrics.REGISTRY.get_sample_value("jackpot_significant_events_total", {"code": code}) or 0.0
    )


@pytest.mark.django_db
def test_a_silent_terminal_is_one_event_per_silence(django_capture_on_commit_callbacks, settings):
    settings.TERMINAL_SILENT_SECONDS = 600
    floor = make_floor(uth_tables=2)
    busy, quiet = floor.uth
    assert busy.post("/rounds", {"round_id": "b-1", "seats": [uth_seat(1)]}).status_code == 201
    opened = Round.objects.get(table_id=busy.table_id).opened_at
    table_update(table_id=floor.stud.table_id, changes={"enabled": False}, actor="test")
    counted = _counted("SE01")

    # Before the limit: nothing. Past it: every open table that was silent, once.
    assert watch(now=opened + timedelta(seconds=599)).silent_tables == []
    later = opened + timedelta(seconds=601)
    with django_capture_on_commit_callbacks(execute=True):
        assert sorted(watch(now=later).silent_tables) == sorted([busy.table_id, quiet.table_id])
    assert watch(now=later + timedelta(hours=1)).silent_tables == []  # the same silences
    (event,) = [e for e in _events("terminal.silent") if e.payload["table"] == busy.table_id]
    assert event.chain == ledger.ADMIN_CHAIN and event.actor == "system:watch"
    assert event.occurred_at == later
    assert event.payload["silent_since"] == opened.isoformat()
    assert event.payload["pool"] == floor.pool_id
    assert _counted("SE01") == counted + 2

    # Its webhook: the catalogue's object, keyed by the event's place in the journal.
    message = OutboxMessage.objects.get(key=f"event:admin:{event.sequence}")
    assert message.topic == "significant_event"
    assert message.payload["code"] == "SE01" and message.payload["table"] == busy.table_id
    assert message.payload["occurred_at"] == later.isoformat()

    # The terminal plays again, then falls silent again: a second silence, a second event.
    assert busy.post("/rounds/b-1/void", {"reason": "misdeal"}).status_code == 200
    voided = Round.objects.get(table_id=busy.table_id).closed_at
    assert watch(now=voided + timedelta(seconds=601)).silent_tables == [busy.table_id]
    assert len([e for e in _events("terminal.silent") if e.payload["table"] == busy.table_id]) == 2
    assert_journal_ok()


@pytest.mark.django_db
def test_a_table_opened_for_play_again_is_not_silent_until_the_limit(settings):
    settings.TERMINAL_SILENT_SECONDS = 600
    floor = make_floor(uth_tables=1)
    table = floor.uth[0].table_id
    table_update(table_id=table, changes={"enabled": False}, actor="test")
    table_update(table_id=floor.stud.table_id, changes={"enabled": False}, actor="test")
    assert watch(now=timezone.now() + timedelta(days=2)).silent_tables == []  # closed tables
    table_update(table_id=table, changes={"enabled": True}, actor="test")
    reopened = _events("table.changed")[-1].occurred_at
    assert watch(now=reopened + timedelta(seconds=300)).silent_tables == []
    assert watch(now=reopened + timedelta(seconds=700)).silent_tables == [table]


@pytest.mark.django_db
def test_the_list_filters_by_code_table_pool_and_time_for_staff_only(settings):
    settings.TERMINAL_SILENT_SECONDS = 600
    floor = make_floor(uth_tables=1)
    table = floor.uth[0].table_id
    later = timezone.now() + timedelta(hours=1)
    watch(now=later)
    table_update(table_id=table, changes={"name": "UTH renamed"}, actor="test")
    auditor = _staff("auditor")

    answer = auditor.get("/api/v1/events", {"table": table})
    assert answer.status_code == 200, answer.content
    page = answer.json()
    assert [row["code"] for row in page["results"]] == ["SE01", "SE05"]  # newest first
    silent = page["results"][0]
    assert silent["name"] == "terminal_silent" and silent["kind"] == "terminal.silent"
    assert (silent["table"], silent["pool"]) == (table, floor.pool_id)
    assert silent["occurred_at"] == later.isoformat()
    assert silent["detail"]["limit_seconds"] == 600

    assert [r["code"] for r in auditor.get("/api/v1/events", {"code": "SE05"}).json()["results"]]
    until = (later - timedelta(minutes=1)).isoformat()
    assert {r["code"] for r in auditor.get("/api/v1/events", {"to": until}).json()["results"]} == {
        "SE05"
    }
    by_pool = auditor.get("/api/v1/events", {"pool": floor.pool_id}).json()["results"]
    assert {r["code"] for r in by_pool} == {"SE01"}
    refused = auditor.get("/api/v1/events", {"code": "SE99"})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "code"
    assert floor.uth[0].client().get("/api/v1/events").status_code in (401, 403)
    assert Client().get("/api/v1/events").status_code in (401, 403)


@pytest.mark.django_db
def test_an_approved_parameter_change_is_significant(django_capture_on_commit_callbacks):
    floor = make_floor(uth_tables=1)
    table_update(table_id=floor.uth[0].table_id, changes={"enabled": False}, actor="test")
    proposer, approver = person("proposer-se", "admin"), person("approver-se", "admin")
    change = change_propose(
        pool_id=floor.pool_id,
        changes={"verification_threshold_cents": 50_000},
        reason="house rule",
        user=proposer,
    )
    counted = _counted("SE04")
    with django_capture_on_commit_callbacks(execute=True):
        change_approve(
            pool_id=floor.pool_id, change_id=change.pk, user=approver, pool_tables=POOL_TABLES
        )
    (event,) = _events("pool.changed")
    message = OutboxMessage.objects.get(key=f"event:{event.chain}:{event.sequence}")
    assert message.payload["code"] == "SE04" and message.payload["pool"] == floor.pool_id
    assert _counted("SE04") == counted + 1


@pytest.mark.django_db(transaction=True)
def test_nothing_is_told_of_an_event_rolled_back():
    counted = _counted("SE05")
    floor = make_floor(uth_tables=1)
    messages = OutboxMessage.objects.filter(topic="significant_event").count()
    with pytest.raises(RuntimeError), transaction.atomic():
        table_update(table_id=floor.uth[0].table_id, changes={"name": "gone"}, actor="test")
        raise RuntimeError("the transaction fails after the event")
    assert OutboxMessage.objects.filter(topic="significant_event").count() == messages
    created = _counted("SE05")  # make_floor's own tables were created, not changed
    assert created == counted


@pytest.mark.django_db
def test_another_copy_of_the_database_is_a_restore():
    assert note_database_life() is False  # the first life: recorded, not a restore
    assert note_database_life() is False  # the same life
    (identified,) = _events("database.identified")
    # A backup carries the identity token; what differs is the database it now lives in. Here
    # the token is rewritten by the database's superuser to stand for the other database.
    superuser_sql("UPDATE jackpot_databaseidentity SET token = gen_random_uuid() WHERE id = 1")
    assert note_database_life() is True
    (restored,) = _events("database.restored")
    assert restored.payload["before"] == identified.payload["life"]
    assert restored.payload["life"] != identified.payload["life"]
    assert note_database_life() is False


@pytest.mark.django_db
def test_a_suspension_and_a_surveillance_referral_are_listed_with_their_pool_and_table():
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    admin = person("admin-se", "admin")
    lifecycle.pool_suspend(pool_id=floor.pool_id, user=admin, reason="the sign's controller failed")
    lifecycle.pool_resume(pool_id=floor.pool_id, user=admin, reason="controller replaced")
    jackpot, _ = play_hit(terminal)
    referred(jackpot["id"])

    auditor = _staff("auditor")
    rows = auditor.get("/api/v1/events", {"pool": floor.pool_id}).json()["results"]
    assert [row["code"] for row in rows] == ["SE12", "SE07", "SE06"]
    referral, resumed, suspended = rows
    assert (referral["table"], referral["pool"]) == (terminal.table_id, floor.pool_id)
    assert referral["detail"]["award"] == jackpot["id"]
    assert (suspended["table"], suspended["actor"]) == (None, "user:admin-se")
    assert suspended["detail"]["reason"] == "the sign's controller failed"
    assert resumed["detail"]["reason"] == "controller replaced"
    by_table = auditor.get("/api/v1/events", {"table": terminal.table_id}).json()["results"]
    assert [row["code"] for row in by_table] == ["SE12"]


@pytest.mark.django_db
def test_the_auditors_pool_page_lists_the_pools_significant_events_in_french_and_english():
    floor = make_floor(uth_tables=1)
    admin = person("admin-page", "admin")
    lifecycle.pool_suspend(pool_id=floor.pool_id, user=admin, reason="panne du contrôleur")
    auditor = signed_in(person("auditor-page", "auditor"))

    page = auditor.get(f"/audit/pools/{floor.pool_id}/").content.decode()
    assert '<tr data-code="SE06">' in page and "Jackpot suspendu" in page
    assert "user:admin-page" in page
    english = auditor.get(f"/audit/pools/{floor.pool_id}/?lang=en").content.decode()
    assert "Significant events (the latest 25)" in english
    assert "A progressive suspended (a technical fault)" in english
    other = make_floor(uth_tables=1)
    quiet = auditor.get(f"/audit/pools/{other.pool_id}/?lang=en").content.decode()
    assert "No significant event for this pool." in quiet
