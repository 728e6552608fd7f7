"""The journal's verification finds an SQL edit of any session row, and a row with no event."""

from __future__ import annotations

import pytest
from django.db import connection

from tables.audit.verification import verify_full
from tables.club.drops import count_drop
from tables.club.sessions import close_session, open_session
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import person
from tests.tables.club.story import play

pytestmark = pytest.mark.django_db


def _story():
    ana = person("ana", "supervisor")
    floor = make_floor(1)
    session = open_session(user=ana)
    play(floor.uth[0], "a1", 2)
    close_session(session_id=session.pk, user=ana)
    count_drop(session_id=session.pk, table_id=floor.uth[0].table_id, counted_cents=900, user=ana)
    assert_journal_ok()
    return session


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        ("UPDATE tables_clubsession SET closed_by = 'user:eve'", "the row's closed_by differ"),
        ("UPDATE tables_dropcount SET counted_cents = 1000", "drop count differs"),
        ("UPDATE tables_dropcount SET counted_by = 'user:eve'", "drop count differs"),
        # The snapshot's rows refuse UPDATE (their triggers): the insider adds a line instead.
        (
            "INSERT INTO tables_sessiontable (session_id, table_id, pool_id, rounds, stakes,"
            " stakes_cents, meter_cents, reserve_cents, house_cents, voided, voided_cents,"
            " withheld_cents) SELECT (SELECT max(id) FROM tables_clubsession),"
            " (SELECT max(id) FROM tables_table), (SELECT max(id) FROM jackpot_pool),"
            " 1, 1, 500, 100, 40, 360, 0, 0, 500",
            "table lines differ",
        ),
        (
            "INSERT INTO tables_clubsession (number, club_day, status, opened_at, opened_by,"
            " closed_by, closed_how, opened_heads) VALUES (99, '2026-01-01', 'open', now(),"
            " 'user:eve', '', '', '{}')",
            "no session.opened event",
        ),
    ],
)
def test_an_sql_edit_is_reported(sql, found):
    _story()
    with connection.cursor() as cursor:
        cursor.execute(sql)
    report = verify_full()
    assert not report.ok
    assert any(found in problem for problem in report.problems), report.problems
