"""A drop box counted by two people (compliance 54), the second factor on as in production; the
insider with every privilege and SQL as the service's role is played too."""

from __future__ import annotations

import pytest
from django.db import connection

from core.errors import ApiError
from jackpot.approvals.presence import Presence
from jackpot.models import AuditEvent, OutboxMessage
from jackpot.staff.second_factor import present
from tables.club.drops import confirm_drop, count_drop
from tables.club.sessions import close_session, open_session
from tables.models import DropCount
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import code, enrolled, person, wrong_code
from tests.tables.club.story import play

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(settings):
    """A closed session in which table one withheld 2,500 cents (five stakes)."""
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "manager")
    floor = make_floor(2)
    session = open_session(user=ana)
    play(floor.uth[0], "a1", 5)
    close_session(session_id=session.pk, user=ana)
    return session, floor.uth[0].table_id, floor.uth[1].table_id, ana, bob


def _confirm(session, table, cents, user, given=None, *, steps_ahead=0):
    """The second person's confirmation with a code of theirs (a TOTP code serves once: a
    second confirmation in one test takes the next step's)."""
    return confirm_drop(
        session_id=session.pk,
        table_id=table,
        counted_cents=cents,
        user=user,
        presence=present(user, given if given is not None else code(user, steps_ahead)),
    )


def _as_present(session, table, cents, user):
    """The confirmation of someone whose code passed (the attacks below are not on the code)."""
    return confirm_drop(
        session_id=session.pk,
        table_id=table,
        counted_cents=cents,
        user=user,
        presence=Presence(user.pk),
    )


def _refused(run, code_: str) -> None:
    with pytest.raises(ApiError) as refused:
        run()
    assert refused.value.code == code_, refused.value.message


def test_an_agreed_count_with_a_difference_is_se19(closed):
    session, table, _, ana, bob = closed
    first = count_drop(session_id=session.pk, table_id=table, counted_cents=2_000, user=ana)
    assert (first.expected_cents, first.confirmed_at) == (2_500, None)
    row = _confirm(session, table, 2_000, bob)
    assert (row.difference_cents, row.confirmed_by) == (-500, "user:bob")
    kinds = list(
        AuditEvent.objects.filter(chain="club", kind__startswith="session.drop")
        .order_by("sequence")
        .values_list("kind", flat=True)
    )
    assert kinds == ["session.drop_counted", "session.drop_confirmed", "session.drop_difference"]
    data = OutboxMessage.objects.get(payload__code="SE19").payload
    assert data["detail"]["difference_cents"] == -500 and data["table"] == table
    _refused(lambda: _confirm(session, table, 2_000, bob, steps_ahead=1), "drop_confirmed")
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=table, counted_cents=1, user=ana),
        "drop_confirmed",
    )
    assert_journal_ok()


def test_no_difference_no_significant_event_and_a_recount_first(closed):
    session, table, _, ana, bob = closed
    count_drop(session_id=session.pk, table_id=table, counted_cents=2_400, user=ana)
    count_drop(session_id=session.pk, table_id=table, counted_cents=2_500, user=ana)  # recount
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=table, counted_cents=9, user=bob),
        "drop_counted_by_another",
    )
    assert _confirm(session, table, 2_500, bob).difference_cents == 0
    assert not AuditEvent.objects.filter(kind="session.drop_difference").exists()
    assert AuditEvent.objects.filter(kind="session.drop_counted").count() == 2


def test_a_disagreeing_blind_count_confirms_nothing(closed):
    session, table, _, ana, bob = closed
    count_drop(session_id=session.pk, table_id=table, counted_cents=2_500, user=ana)
    _refused(lambda: _as_present(session, table, 2_450, bob), "count_disagrees")
    row = DropCount.objects.get()
    assert (row.confirmed_at, row.confirmed_by, row.difference_cents) == (None, "", None)
    assert not AuditEvent.objects.filter(kind="session.drop_confirmed").exists()


def test_the_counter_may_not_confirm_even_after_an_sql_edit_of_the_row(closed):
    session, table, _, ana, _bob = closed
    count_drop(session_id=session.pk, table_id=table, counted_cents=2_500, user=ana)
    _refused(lambda: _confirm(session, table, 2_500, ana), "four_eyes")
    _refused(lambda: _as_present(session, table, 2_500, ana), "four_eyes")
    with connection.cursor() as cursor:  # the insider writes someone else's name on the row
        cursor.execute("UPDATE tables_dropcount SET counted_by = 'user:bob'")
    _refused(lambda: _as_present(session, table, 2_500, ana), "count_unexplained")
    with connection.cursor() as cursor:  # ...or moves the close so the count is not found
        cursor.execute("UPDATE tables_dropcount SET counted_by = 'user:ana'")
        cursor.execute("UPDATE tables_clubsession SET closed_at = closed_at + interval '1 day'")
    _refused(lambda: _as_present(session, table, 2_500, ana), "count_unexplained")
    assert DropCount.objects.get().confirmed_at is None


def test_a_wrong_or_missing_code_is_refused(closed):
    session, table, _, ana, bob = closed
    count_drop(session_id=session.pk, table_id=table, counted_cents=2_500, user=ana)
    _refused(
        lambda: _confirm(session, table, 2_500, bob, wrong_code(bob)), "second_factor_code_wrong"
    )
    _refused(
        lambda: confirm_drop(
            session_id=session.pk, table_id=table, counted_cents=2_500, user=bob, presence=None
        ),
        "second_factor_code_required",
    )
    assert DropCount.objects.get().confirmed_at is None


def test_refusals_before_any_count(closed):
    session, table, idle, ana, bob = closed
    adam = person("adam", "admin")
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=table, counted_cents=1, user=adam),
        "separation_of_duties",
    )
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=idle, counted_cents=1, user=ana),
        "table_not_in_session",
    )
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=9999, counted_cents=1, user=ana),
        "table_not_found",
    )
    _refused(
        lambda: count_drop(session_id=session.pk, table_id=table, counted_cents=-1, user=ana),
        "invalid_request",
    )
    _refused(lambda: _confirm(session, table, 2_500, bob), "drop_not_counted")
    later = open_session(user=ana)
    _refused(
        lambda: count_drop(session_id=later.pk, table_id=table, counted_cents=1, user=ana),
        "session_not_closed",
    )
    assert not DropCount.objects.exists()
