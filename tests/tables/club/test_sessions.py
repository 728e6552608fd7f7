"""Sessions opened and closed, and their snapshot from the journal (compliance 54)."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import DatabaseError, transaction

from core.errors import ApiError
from jackpot.models import AuditEvent, Pool
from tables.club.sessions import close_at_day_end, close_session, club_day, open_session
from tables.models import ClosedBy, ClubSession, SessionPool, SessionStatus, SessionTable
from tables.tasks import close_club_day
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import person
from tests.tables.club.story import Recount, open_round, play, void

pytestmark = pytest.mark.django_db
PARIS = ZoneInfo("Europe/Paris")


def _lines(session: ClubSession) -> list[dict[str, int]]:
    fields = ("table", "pool", "rounds", "stakes", "stakes_cents", "voided", "voided_cents")
    return [
        {
            **{
                name: getattr(line, f"{name}_id" if name in ("table", "pool") else name)
                for name in fields
            },
            "withheld_cents": line.withheld_cents,
        }
        for line in SessionTable.objects.filter(session=session).order_by("table", "pool")
    ]


def test_open_close_and_a_second_open_refused():
    ana = person("ana", "supervisor")
    first = open_session(user=ana)
    assert (first.number, first.status) == (1, SessionStatus.OPEN)
    with pytest.raises(ApiError) as refused:
        open_session(user=ana)
    assert refused.value.code == "session_open"
    closed = close_session(session_id=first.pk, user=ana)
    assert (closed.status, closed.closed_how, closed.closed_by) == (
        "closed",
        "supervisor",
        "user:ana",
    )
    with pytest.raises(ApiError) as again:
        close_session(session_id=first.pk, user=ana)
    assert again.value.code == "session_closed"
    assert open_session(user=ana).number == 2
    kinds = list(
        AuditEvent.objects.filter(chain="club").order_by("sequence").values_list("kind", flat=True)
    )
    assert kinds == ["session.opened", "session.closed", "session.opened"]
    assert_journal_ok()


def test_an_admin_and_an_auditor_may_not_open_one():
    for name, role, code in (
        ("adam", "admin", "separation_of_duties"),
        ("aude", "auditor", "permission_denied"),
    ):
        with pytest.raises(ApiError) as refused:
            open_session(user=person(name, role))
        assert refused.value.code == code
    assert not ClubSession.objects.exists()


def test_the_snapshot_is_the_rounds_of_each_session():
    """Two sessions, two tables: stakes, a jackpot, a void within a session and a round opened
    in the first and voided in the second (it counts where the void happens)."""
    ana = person("ana", "supervisor")
    floor = make_floor(2)
    one, two = floor.uth
    first, second = Recount(floor), Recount(floor)
    session = open_session(user=ana)
    play(one, "a1", 3)
    first.staked(one, 3)
    play(two, "b1", 2, royal=True)
    first.staked(two, 2)
    open_round(one, "a2", 2)
    first.staked(one, 2)
    void(one, "a2")
    first.voided(one, 2)
    open_round(two, "b2", 4)  # opened in the first session, voided in the second
    first.staked(two, 4)
    closed = close_session(session_id=session.pk, user=ana)
    assert _lines(closed) == first.expected()

    later = open_session(user=ana)
    void(two, "b2")
    second.voided(two, 4)
    play(one, "a3", 1)
    second.staked(one, 1)
    closed_later = close_session(session_id=later.pk, user=ana)
    assert _lines(closed_later) == second.expected()
    withheld = {(line["table"], line["pool"]): line["withheld_cents"] for line in second.expected()}
    assert withheld[(two.table_id, floor.pool_id)] == -2000  # the void of the first's round

    # The shares add up to the stakes; the event's lists are the rows.
    for line in SessionTable.objects.all():
        assert line.meter_cents + line.reserve_cents + line.house_cents == line.stakes_cents
    event = AuditEvent.objects.get(chain="club", kind="session.closed", payload__session=later.pk)
    assert event.payload["tables"] == [
        {
            "table": line.table_id,
            "pool": line.pool_id,
            "rounds": line.rounds,
            "stakes": line.stakes,
            "stakes_cents": line.stakes_cents,
            "meter_cents": line.meter_cents,
            "reserve_cents": line.reserve_cents,
            "house_cents": line.house_cents,
            "voided": line.voided,
            "voided_cents": line.voided_cents,
            "withheld_cents": line.withheld_cents,
        }
        for line in SessionTable.objects.filter(session=later).order_by("table", "pool")
    ]
    pool = Pool.objects.get(pk=floor.pool_id)
    shown = SessionPool.objects.get(session=later, pool=pool)
    assert (shown.displayed_cents, shown.meter_version) == (pool.meter_cents, pool.meter_version)
    assert (shown.status, shown.corrections, shown.corrections_cents) == ("active", 0, 0)
    assert_journal_ok()


def test_the_snapshot_rows_are_append_only():
    ana = person("ana", "supervisor")
    floor = make_floor(1)
    session = open_session(user=ana)
    play(floor.uth[0], "a1", 2)
    close_session(session_id=session.pk, user=ana)
    for model in (SessionTable, SessionPool):
        with pytest.raises(DatabaseError), transaction.atomic():
            model.objects.filter(session=session).update(session=session)
        with pytest.raises(DatabaseError), transaction.atomic():
            model.objects.filter(session=session).delete()


def test_the_club_day_closes_the_session_once():
    ana = person("ana", "supervisor")
    with time_machine.travel(datetime.combine(date(2026, 11, 10), time(21), PARIS), tick=False):
        session = open_session(user=ana)
    assert session.club_day == date(2026, 11, 10)
    with time_machine.travel(datetime.combine(date(2026, 11, 11), time(2), PARIS), tick=False):
        assert club_day(datetime.now(PARIS)) == date(2026, 11, 10)
        assert close_at_day_end() is None  # the club day runs until 06:00
    with time_machine.travel(datetime.combine(date(2026, 11, 11), time(6, 1), PARIS), tick=False):
        closed = close_at_day_end()
        assert closed is not None and closed.closed_how == ClosedBy.CLUB_DAY
        assert closed.closed_by == "system:club_day"
        assert close_at_day_end() is None  # a retry, a second worker: nothing more
    assert ClubSession.objects.get().status == SessionStatus.CLOSED
    assert AuditEvent.objects.filter(chain="club", kind="session.closed").count() == 1
    assert_journal_ok()


def test_the_club_day_setting_off_closes_nothing(settings):
    settings.CLUB_SESSION_CLOSES_AT_DAY_END = False
    ana = person("ana", "supervisor")
    with time_machine.travel(datetime.combine(date(2026, 11, 10), time(21), PARIS), tick=False):
        open_session(user=ana)
    with time_machine.travel(datetime.combine(date(2026, 11, 12), time(9), PARIS), tick=False):
        assert close_at_day_end() is None
    assert ClubSession.objects.get().status == SessionStatus.OPEN


def test_beats_task_closes_the_session_at_the_day_end():
    ana = person("ana", "supervisor")
    with time_machine.travel(datetime.combine(date(2026, 11, 10), time(21), PARIS), tick=False):
        session = open_session(user=ana)
        assert close_club_day() is None
    with time_machine.travel(datetime.combine(date(2026, 11, 11), time(7), PARIS), tick=False):
        assert close_club_day() == session.pk
        assert close_club_day() is None
