"""Notices and orphans (issue 40 items 2 and 3, compliance 57 and 58): a voluntary stop proposed
with its effective date, told to the minister, approved no sooner than 15 days after the notice
was sent; a suspension and an involuntary stop told to the police; an overdue notice told once
(SE22); a stop to orphans entered in the register, counted in the liability, recovered by two
people before the season's end, final after it (SE23). Time runs with time_machine."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection
from django.test import Client

from jackpot.audit.verification import verify_journal
from jackpot.models import AuditEvent, Notice, OrphanEntry, ParameterChange, Pool, Transfer
from jackpot.pools import lifecycle, notices, orphans
from jackpot.pools.corrections import correction_approve, correction_propose
from jackpot.reporting.liability import pool_liability
from tables.models import Table
from tables.services import table_update
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=PARIS)


@pytest.fixture
def cast(django_user_model) -> dict:
    return {
        "ana": person("ana", "admin"),
        "bob": person("bob", "admin"),
        "sue": person("sue", "supervisor"),
        "max": person("max", "manager"),
        "meg": person("meg", "manager"),
        "aud": person("aud", "auditor"),
    }


def _post(client: Client, path: str, body: dict | None = None):
    return client.post(f"/api/v1{path}", body or {}, content_type="application/json")


def _closed(pool_id: int) -> None:
    for table in Table.objects.filter(pool_id=pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")


def _figures(pool_id: int, cast: dict, meter: int, reserve: int) -> None:
    """The pool's meter and reserve raised to these figures by documented corrections."""
    row = Pool.objects.get(pk=pool_id)
    for target, amount in (("meter", meter - row.meter_cents), ("reserve", reserve)):
        if amount:
            change = correction_propose(
                pool_id=pool_id,
                target=target,
                award_id=None,
                amount_cents=amount,
                reason="figures of the example",
                reference="EX-1",
                evidence="the worked example",
                user=cast["max"],
            )
            correction_approve(pool_id=pool_id, change_id=change.pk, user=cast["meg"])


def _stop(pool_id: int, cast: dict, **kwargs) -> ParameterChange:
    change = lifecycle.pool_stop_propose(
        pool_id=pool_id, reason="fermeture de la table", user=cast["ana"], **kwargs
    )
    return change


# 57: the voluntary stop and its notice.


def test_a_voluntary_stop_names_a_date_15_days_on_at_least(cast):
    floor = make_floor(uth_tables=1)
    client = token_client(cast["ana"])
    soon = (datetime.now(PARIS) + timedelta(days=14, hours=23)).isoformat()
    for body, field in (
        ({"voluntary": True}, "effective_at"),
        ({"voluntary": True, "effective_at": soon}, "effective_at"),
        ({"voluntary": False, "effective_at": soon}, "effective_at"),
        ({}, "voluntary"),
    ):
        refused = _post(
            client, f"/pools/{floor.pool_id}/stop", {"to": "orphan", "reason": "x", **body}
        )
        assert refused.status_code == 400, refused.json()
        assert refused.json()["error"]["param"] == field
    assert not ParameterChange.objects.exists() and not Notice.objects.exists()


def test_a_voluntary_stop_waits_for_its_date_and_its_notices_15_days(cast):
    with time_machine.travel(at("2027-03-01"), tick=False):
        floor = make_floor(uth_tables=1)
        _closed(floor.pool_id)
        change = _stop(
            floor.pool_id,
            cast,
            to="orphan",
            to_pool=None,
            voluntary=True,
            effective_at=at("2027-03-20"),
        )
        notice = Notice.objects.get(change=change)
        assert (notice.addressee, notice.cause) == ("minister", "voluntary_stop")
        assert notice.deadline == at("2027-03-05")  # 15 days before it takes effect
        assert "arrêt volontaire" in notice.text and floor.pool_id and "20/03/2027" in notice.text
    with time_machine.travel(at("2027-03-20"), tick=False):
        # Its date has come, but the notice is unsent: refused.
        with pytest.raises(Exception) as unsent:
            lifecycle.pool_stop_approve(
                pool_id=floor.pool_id, change_id=change.pk, user=cast["bob"]
            )
        assert getattr(unsent.value, "code", None) == "notice_period_running"
        # Recorded sent on the 10th: 15 days run to the 25th.
        notices.notice_sent(
            notice_id=notice.pk,
            channel="letter",
            reference="AR 1A 234",
            sent_at=at("2027-03-10"),
            user=cast["max"],
        )
        with pytest.raises(Exception) as early:
            lifecycle.pool_stop_approve(
                pool_id=floor.pool_id, change_id=change.pk, user=cast["bob"]
            )
        assert getattr(early.value, "code", None) == "notice_period_running"
        assert Pool.objects.get(pk=floor.pool_id).status == "active"
    with time_machine.travel(at("2027-03-25", 13), tick=False):
        lifecycle.pool_stop_approve(pool_id=floor.pool_id, change_id=change.pk, user=cast["bob"])
        assert Pool.objects.get(pk=floor.pool_id).status == "stopped"
        # A voluntary stop makes no police notice.
        assert Notice.objects.filter(pool_id=floor.pool_id).count() == 1
        assert_journal_ok()


def test_a_suspension_and_an_involuntary_stop_are_told_to_the_police(cast, settings):
    settings.NOTICE_WITHOUT_DELAY_HOURS = 24
    with time_machine.travel(at("2027-04-01"), tick=False):
        floor = make_floor(uth_tables=1)
        lifecycle.pool_suspend(pool_id=floor.pool_id, reason="carte mère", user=cast["ana"])
        suspension = Notice.objects.get(cause="suspension")
        assert suspension.addressee == "police"
        assert suspension.deadline == at("2027-04-02")
        _closed(floor.pool_id)
        change = _stop(floor.pool_id, cast, to="orphan", to_pool=None, voluntary=False)
        assert Notice.objects.count() == 1  # an involuntary stop is told when it happens
        lifecycle.pool_stop_approve(pool_id=floor.pool_id, change_id=change.pk, user=cast["bob"])
        stop = Notice.objects.get(cause="involuntary_stop")
        assert (stop.addressee, stop.change_id) == ("police", change.pk)


def test_an_overdue_notice_is_told_once(cast):
    with time_machine.travel(at("2027-05-01"), tick=False):
        floor = make_floor(uth_tables=1)
        lifecycle.pool_suspend(pool_id=floor.pool_id, reason="panne", user=cast["ana"])
        assert notices.notices_overdue() == []
    with time_machine.travel(at("2027-05-02", 13), tick=False):
        notice = Notice.objects.get()
        assert notices.notices_overdue() == [notice.pk]
        assert notices.notices_overdue() == []  # the task run twice: told once
        told = AuditEvent.objects.filter(kind="notice.overdue")
        assert told.count() == 1 and told.get().payload["notice"] == notice.pk
        page = token_client(cast["aud"]).get(f"/api/v1/notices?pool={floor.pool_id}&unsent=true")
        assert page.status_code == 200 and page.json()["results"][0]["overdue"] is True


def test_who_sent_a_notice_is_the_journals_word_and_an_sql_edit_is_reported(cast):
    with time_machine.travel(at("2027-05-01"), tick=False):
        floor = make_floor(uth_tables=1)
        lifecycle.pool_suspend(pool_id=floor.pool_id, reason="panne", user=cast["ana"])
        notice = Notice.objects.get()
        refused = _post(token_client(cast["sue"]), f"/notices/{notice.pk}/sent", {})
        assert refused.status_code == 403
        sent = _post(
            token_client(cast["max"]),
            f"/notices/{notice.pk}/sent",
            {"channel": "email", "reference": "PJ-2027-77"},
        )
        assert sent.status_code == 200, sent.json()
        assert (sent.json()["sent_by"], sent.json()["channel"]) == ("max", "email")
        again = _post(
            token_client(cast["ana"]),
            f"/notices/{notice.pk}/sent",
            {"channel": "email", "reference": "PJ-2027-78"},
        )
        assert again.status_code == 409 and again.json()["error"]["code"] == "notice_sent"
        assert verify_journal(full=True).ok
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE jackpot_notice SET sent_by_id = %s WHERE id = %s",
                [cast["ana"].pk, notice.pk],
            )
        shown = token_client(cast["aud"]).get("/api/v1/notices").json()["results"][0]
        assert shown["sent_by"] == "max"  # the row says ana, the journal max
        report = verify_journal(full=True)
        assert not report.ok
        assert any(f"notice {notice.pk}" in problem for problem in report.problems)


# 58: orphans.


def test_orphans_to_the_cent_the_liability_and_a_recovery_by_two_people(cast):
    with time_machine.travel(at("2027-03-01"), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=1_000_000)
        heir = make_floor(uth_tables=1, seed_cents=500_000)
        _figures(stopped.pool_id, cast, meter=1_234_567, reserve=45_678)
        _closed(stopped.pool_id)
        change = _stop(stopped.pool_id, cast, to="orphan", to_pool=None, voluntary=False)
        lifecycle.pool_stop_approve(pool_id=stopped.pool_id, change_id=change.pk, user=cast["bob"])
        entry = OrphanEntry.objects.get(pool_id=stopped.pool_id)
        assert entry.orphans_cents == 234_567 + 45_678 == 280_245
        assert entry.deadline == datetime(2027, 11, 1, tzinfo=PARIS)
        owed = pool_liability(
            Pool.objects.get(pk=stopped.pool_id), at=datetime.now(PARIS), start=at("2027-03-01", 0)
        )
        assert (owed.stopped, owed.orphans_cents, owed.owed_cents) == (True, 280_245, 280_245)
        assert (owed.meter_cents, owed.meter_above_seed_cents) == (0, 0)
    with time_machine.travel(at("2027-06-15"), tick=False):
        with pytest.raises(Exception) as alone:  # an admin configures: never money
            orphans.orphans_recover_propose(
                pool_id=stopped.pool_id, to_pool=heir.pool_id, reason="x", user=cast["ana"]
            )
        assert getattr(alone.value, "status_code", None) == 403
        proposed = orphans.orphans_recover_propose(
            pool_id=stopped.pool_id, to_pool=heir.pool_id, reason="report", user=cast["max"]
        )
        with pytest.raises(Exception) as own:  # the proposer never approves
            orphans.orphans_recover_approve(
                pool_id=stopped.pool_id, change_id=proposed.pk, user=cast["max"]
            )
        assert getattr(own.value, "code", None) == "four_eyes"
        assert Pool.objects.get(pk=heir.pool_id).meter_cents == 500_000
        orphans.orphans_recover_approve(
            pool_id=stopped.pool_id, change_id=proposed.pk, user=cast["meg"]
        )
        assert Pool.objects.get(pk=heir.pool_id).meter_cents == 780_245
        register = token_client(cast["aud"]).get("/api/v1/orphans").json()["results"]
        assert register[0]["recovered_into"] == heir.pool_id
        assert (register[0]["recovered_by"], register[0]["owed_cents"]) == ("meg", 0)
        assert orphans.orphans_held(stopped.pool_id) == 0
        assert_journal_ok()


def test_orphans_are_refused_after_the_season_and_final_once(cast):
    with time_machine.travel(at("2027-09-01"), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=200_000)
        heir = make_floor(uth_tables=1)
        _figures(stopped.pool_id, cast, meter=250_000, reserve=10_000)
        _closed(stopped.pool_id)
        change = _stop(stopped.pool_id, cast, to="orphan", to_pool=None, voluntary=False)
        lifecycle.pool_stop_approve(pool_id=stopped.pool_id, change_id=change.pk, user=cast["bob"])
        proposed = orphans.orphans_recover_propose(
            pool_id=stopped.pool_id, to_pool=heir.pool_id, reason="report", user=cast["sue"]
        )
        assert orphans.orphans_final() == []
    with time_machine.travel(at("2027-11-01", 0) + timedelta(minutes=1), tick=False):
        with pytest.raises(Exception) as late:
            orphans.orphans_recover_approve(
                pool_id=stopped.pool_id, change_id=proposed.pk, user=cast["meg"]
            )
        assert getattr(late.value, "code", None) == "orphans_final"
        assert orphans.orphans_final() == [stopped.pool_id]
        assert orphans.orphans_final() == []  # twice: once
        final = Transfer.objects.get(code="orphans_final")
        assert final.amount_cents == 60_000
        assert AuditEvent.objects.filter(kind="orphans.final").count() == 1
        owed = pool_liability(
            Pool.objects.get(pk=stopped.pool_id), at=datetime.now(PARIS), start=at("2027-11-01", 0)
        )
        assert (owed.orphans_cents, owed.owed_cents) == (0, 0)
        assert_journal_ok()
