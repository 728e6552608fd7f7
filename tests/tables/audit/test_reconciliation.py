"""Reconciliation on a schedule (issue 12 item 2, compliance requirement 4): on a real Celery worker
over the real Redis, the task stores an ok report; a journal tampered with as a superuser makes
the next run store a failed report, write `reconciliation.failed` on the `admin` chain and log at
ERROR; once repaired, the next run writes `reconciliation.recovered`. Beat carries both entries
and really sends the periodic one; a scheduled run stores one report however often it is
delivered; the chains are checked against their anchors; the reports are read over the API by
auditors, supervisors and admins only.
"""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from celery import current_app
from celery.schedules import crontab
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from core.dispatch import send
from jackpot.audit.anchors import write_anchor
from jackpot.models import AuditEvent, OutboxMessage, Transfer
from jackpot.money import ledger
from jackpot.notifications import significant
from tables.audit import reconciliation
from tables.audit.reconciliation import reconcile
from tables.models import Reconciliation, Table
from tables.services import table_update
from tables.tasks import reconcile_daily
from tests.conftest import assert_journal_ok, make_floor, uth_seat
from tests.jackpot.tamper import keyed_link, play_rounds, rehash_chain, superuser_sql
from tests.old_terms import change_terms_as_before
from tests.staff import person, token_client
from tests.workers import wait_for

EDIT = "UPDATE jackpot_transfer SET amount_cents = amount_cents + %s WHERE id = %s"


def staff(django_user_model, role: str) -> Client:
    return token_client(person(f"{role}-user", role))


def _purge() -> None:
    """Drop the run's queued tasks: beat's messages left by an earlier test's worker."""
    current_app.control.purge()


def _alerts(kind: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN, kind=kind).order_by("sequence"))


def test_beat_has_the_periodic_and_the_daily_entries():
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["reconcile"] == {"task": "tables.reconcile", "schedule": 300.0}
    daily = schedule["reconcile-daily"]
    assert daily["task"] == "tables.reconcile_daily"
    assert daily["schedule"] == crontab(hour=6, minute=45)
    assert settings.CELERY_TIMEZONE == "UTC"


def test_beat_runs_the_task_on_a_real_worker_and_it_stores_an_ok_report(celery_worker):
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201

    worker = celery_worker(beat=True, RECONCILE_SECONDS="1")

    periodic = Reconciliation.objects.filter(daily=False)
    wait_for(periodic.exists, within_s=30, what="beat's reconciliation stored")
    worker.stop()
    _purge()
    report = periodic.order_by("pk").first()
    assert report.ok, report.problems
    assert report.run_key.startswith("periodic:") and not report.daily
    assert (report.problem_count, report.problems, report.broken_chain) == (0, [], "")
    assert report.chains >= 2 and report.events >= 2 and report.transfers >= 1
    assert report.started_at <= report.finished_at
    (pool,) = report.pools
    assert pool["pool"] == floor.pool_id and pool["identity"] == "holds"
    assert pool["expected_units"] == pool["meter_units"] > 0
    assert sum(pool["balances"].values()) == 0
    # An ok run after nothing wrong alerts nobody.
    assert not _alerts(reconciliation.FAILED) and not _alerts(reconciliation.RECOVERED)


def test_a_tampered_journal_alerts_and_the_repair_is_announced_on_a_real_worker(celery_worker):
    floor = play_rounds()
    _purge()
    worker = celery_worker()
    assert send("tables.reconcile") is True
    wait_for(Reconciliation.objects.exists, within_s=30, what="the first report")
    assert Reconciliation.objects.get().ok

    # Play goes on past the checkpoint the first run stored; an insider with the database's
    # superuser adds 100 cents to an award's transfer written since: the next routine run,
    # which walks what was added since its checkpoint, finds it.
    first = Transfer.objects.order_by("-pk").values_list("pk", flat=True).first()
    floor.uth[0].post("/rounds/r-2/void", {"reason": "misdeal"})
    play_rounds(floor, prefix="s")
    transfer = Transfer.objects.filter(code="fixed_award", pk__gt=first).order_by("pk").first()
    event = transfer.event
    with transaction.atomic():  # the superuser's SET LOCAL lasts the transaction
        superuser_sql(EDIT, [100, transfer.pk])

    assert send("tables.reconcile") is True
    wait_for(
        lambda: Reconciliation.objects.count() == 2, within_s=30, what="the report of the tamper"
    )
    failed = Reconciliation.objects.order_by("-pk").first()
    assert not failed.ok
    assert (failed.broken_chain, failed.broken_sequence) == (event.chain, event.sequence)
    assert "content does not match its hash" in failed.problems[0]
    assert failed.problem_count == len(failed.problems) >= 1

    # (a) a significant event on the admin chain, naming the report and its first problems.
    (alert,) = _alerts(reconciliation.FAILED)
    assert alert.actor == "system:reconciliation"
    assert alert.payload["report"] == failed.pk
    assert alert.payload["first_broken"] == {"chain": event.chain, "sequence": event.sequence}
    assert alert.payload["problems"] == failed.problems[: reconciliation.ALERT_PROBLEMS]
    assert reconciliation.FAILED in significant.KINDS  # the security log, a webhook, a count

    # (b) a line at ERROR with the report's id and its first problem; and the security log.
    def error_line() -> str | None:
        wanted = f"reconciliation {failed.pk} FAILED: {failed.problems[0]}"
        return next((line for line in worker.output().splitlines() if wanted in line), None)

    wait_for(error_line, within_s=60, what="the ERROR line in the worker's log")
    assert "ERROR" in str(error_line()), error_line()
    worker.logged("reconciliation.failed by system:reconciliation")

    # Repaired (the edit undone): the next run is ok and says so.
    with transaction.atomic():
        superuser_sql(EDIT, [-100, transfer.pk])
    assert send("tables.reconcile") is True
    wait_for(
        lambda: Reconciliation.objects.count() == 3, within_s=30, what="the report after repair"
    )
    recovered = Reconciliation.objects.order_by("-pk").first()
    assert recovered.ok, recovered.problems
    (announced,) = _alerts(reconciliation.RECOVERED)
    assert announced.payload["report"] == recovered.pk
    assert announced.payload["after"] == failed.pk
    assert len(_alerts(reconciliation.FAILED)) == 1
    # The alerts are journal events like any other: the journal verifies with them.
    assert_journal_ok()


@pytest.mark.django_db
def test_a_scheduled_run_stores_one_report_however_often_it_is_delivered(caplog):
    play_rounds()
    transfer = Transfer.objects.filter(code="fixed_award").order_by("pk").first()
    superuser_sql(EDIT, [1, transfer.pk])

    with caplog.at_level(logging.ERROR, logger="tables.audit.reconciliation"):
        first = reconcile(run_key="periodic:the-same-task-id")
        again = reconcile(run_key="periodic:the-same-task-id")
    assert again.pk == first.pk and not first.ok
    assert Reconciliation.objects.count() == 1
    assert len(_alerts(reconciliation.FAILED)) == 1

    # The daily report: one per UTC day, marked daily, whatever delivers it twice.
    one = reconcile_daily.apply().get()
    two = reconcile_daily.apply().get()
    assert one == two
    daily = Reconciliation.objects.get(pk=one)
    assert daily.daily and daily.run_key.startswith("daily:")
    # A failure after a failure alerts again (each failed run is its own alert), never recovers.
    assert len(_alerts(reconciliation.FAILED)) == 2
    assert not _alerts(reconciliation.RECOVERED)


@pytest.mark.django_db
def test_the_chains_are_checked_against_their_anchors(tmp_path, settings):
    """An insider holding the journal's key rewrites a chain so that every link verifies: only
    the anchor written before finds it."""
    play_rounds()
    settings.JOURNAL_ANCHOR_DIR = str(tmp_path)
    write_anchor(tmp_path)
    report = reconcile()
    assert report.ok and report.anchors == 1, report.problems

    event = Transfer.objects.filter(code="fixed_award").order_by("pk").first().event
    superuser_sql(
        "UPDATE jackpot_auditevent SET actor = 'terminal:someone-else' WHERE id = %s", [event.pk]
    )
    rehash_chain(event.chain, event.sequence, keyed_link)

    rewritten = reconcile()
    assert not rewritten.ok
    assert rewritten.broken_chain == event.chain
    assert any("anchor" in problem for problem in rewritten.problems)
    assert _alerts(reconciliation.FAILED)[-1].payload["report"] == rewritten.pk


@pytest.mark.django_db
def test_an_anchor_directory_without_anchors_is_a_failed_run(tmp_path, settings):
    make_floor(uth_tables=1)
    settings.JOURNAL_ANCHOR_DIR = str(tmp_path / "missing")
    report = reconcile()
    assert not report.ok
    assert report.problems == [f"anchors: {tmp_path / 'missing'} is not a directory"]


@pytest.mark.django_db
def test_the_reports_over_the_api(django_user_model):
    floor = make_floor(uth_tables=1)
    ok = reconcile()
    daily = reconcile(run_key="daily:2026-12-01", daily=True)
    seed = Transfer.objects.get(pool_id=floor.pool_id, code="pool_seed")
    superuser_sql(EDIT, [5, seed.pk])
    failed = reconcile(full=True)

    auditor = staff(django_user_model, "auditor")
    page = auditor.get("/api/v1/reconciliations").json()
    assert page["count"] == 3
    assert [found["id"] for found in page["results"]] == [failed.pk, daily.pk, ok.pk]
    assert [f["id"] for f in auditor.get("/api/v1/reconciliations?ok=false").json()["results"]] == [
        failed.pk
    ]
    daily_only = auditor.get("/api/v1/reconciliations?daily=true").json()
    assert [found["id"] for found in daily_only["results"]] == [daily.pk]
    second = auditor.get("/api/v1/reconciliations?limit=1&offset=1").json()
    assert (second["count"], second["limit"], second["offset"]) == (3, 1, 1)
    assert [found["id"] for found in second["results"]] == [daily.pk]

    detail = auditor.get(f"/api/v1/reconciliations/{failed.pk}").json()
    assert detail["ok"] is False and detail["problem_count"] == failed.problem_count
    assert detail["first_broken"] == {
        "chain": failed.broken_chain,
        "sequence": failed.broken_sequence,
    }
    assert detail["problems"] == failed.problems
    # The seed's transfer grew by 5 cents: the meter identity no longer holds either.
    assert detail["pools"][0]["pool"] == floor.pool_id
    assert detail["pools"][0]["identity"] == "broken"
    assert any("meter identity" in problem for problem in detail["problems"])
    ok_detail = auditor.get(f"/api/v1/reconciliations/{ok.pk}").json()
    assert ok_detail["first_broken"] is None and ok_detail["problems"] == []
    assert ok_detail["pools"][0]["identity"] == "holds"
    missing = auditor.get(f"/api/v1/reconciliations/{failed.pk + 100}")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "reconciliation_not_found"
    bad = auditor.get("/api/v1/reconciliations?ok=maybe")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "ok"

    # The pool report shows the latest report's status.
    status = auditor.get(f"/api/v1/pools/{floor.pool_id}/report").json()["reconciliation"]
    assert status["id"] == failed.pk and status["ok"] is False
    assert status["first_problem"] == failed.problems[0]


@pytest.mark.django_db
def test_the_reports_are_for_auditors_supervisors_and_admins(django_user_model):
    floor = make_floor(uth_tables=1)
    report = reconcile()
    paths = ["/api/v1/reconciliations", f"/api/v1/reconciliations/{report.pk}"]
    for role in ("auditor", "supervisor", "admin"):
        client = staff(django_user_model, role)
        assert [client.get(path).status_code for path in paths] == [200, 200], role
    for path in paths:
        assert Client().get(path).status_code == 401
        assert floor.uth[0].client().get(path).status_code in (401, 403)
    assert token_client(person("no-role")).get(paths[0]).status_code == 403


@pytest.mark.django_db
def test_the_identity_is_not_applicable_once_the_meter_share_changed(django_user_model):
    """The identity counts every stake at today's share: after an applied change of the share (in
    a journal from before the terms were fixed) it would be off by construction, so it is shown
    as not applicable, and the run stays ok (the journal's own checks still hold the meter to the
    ledger)."""
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    assert terminal.post("/rounds/r-1/void", {"reason": "misdeal"}).status_code == 200
    proposer, approver = person("ann", "admin"), person("ben", "admin")
    for table in Table.objects.filter(pool_id=floor.pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    # A journal from before the terms were fixed (compliance 56): its share changed in place.
    change_terms_as_before(
        pool_id=floor.pool_id, values={"meter_share_bp": 1500}, proposer=proposer, approver=approver
    )

    report = reconcile()
    assert report.ok, report.problems
    (pool,) = report.pools
    assert pool["identity"] == "not_applicable"
    assert pool["expected_units"] != pool["meter_units"]  # what a false alarm would have been


@pytest.mark.django_db
def test_the_command_reconciles_now_and_exits_1_on_a_difference():
    floor = make_floor(uth_tables=1)
    out = StringIO()
    call_command("reconcile", stdout=out)
    report = Reconciliation.objects.get()
    assert out.getvalue().startswith(f"OK: reconciliation {report.pk}: ")
    assert report.run_key is None and not report.daily

    seed = Transfer.objects.get(pool_id=floor.pool_id, code="pool_seed")
    superuser_sql(EDIT, [1, seed.pk])
    # The seed is before the checkpoint the first run stored: the routine run starts after it,
    # the full one (the daily's, or --full by hand) walks from the first event and finds it.
    call_command("reconcile", stdout=StringIO())
    out = StringIO()
    with pytest.raises(SystemExit) as stop:
        call_command("reconcile", "--full", stdout=out)
    assert stop.value.code == 1
    failed = Reconciliation.objects.latest("pk")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"FAILED: reconciliation {failed.pk}, broken at chain pool-")
    assert lines[1:] == [f"  {problem}" for problem in failed.problems]
    assert _alerts(reconciliation.FAILED)[-1].payload["report"] == failed.pk
    # The cage and surveillance hear of it as of a big win: a signed webhook, through the outbox.
    # The significant event SE02, whose data is the event's (its report, its problems).
    alert = _alerts(reconciliation.FAILED)[-1]
    message = OutboxMessage.objects.get(key=f"event:admin:{alert.sequence}")
    assert message.topic == "significant_event"
    assert (message.payload["code"], message.payload["kind"]) == ("SE02", "reconciliation.failed")
    assert (
        message.payload["detail"]["report"] == failed.pk and message.payload["detail"]["problems"]
    )


@pytest.mark.django_db
def test_an_anchor_file_the_worker_cannot_read_is_a_problem_not_a_crash(tmp_path, settings):
    make_floor(uth_tables=1)
    settings.JOURNAL_ANCHOR_DIR = str(tmp_path)
    (tmp_path / "journal-anchor-20261201T060000Z.json").mkdir()  # read_bytes: IsADirectoryError
    report = reconcile()
    assert not report.ok
    assert report.problems[0].startswith(f"anchors: {tmp_path} could not be read: ")
    assert _alerts(reconciliation.FAILED)[-1].payload["report"] == report.pk
