"""The journal covers what the register prints (issue 20, item 6): an insider who writes to the
database without the journal's key edits a round's cards, a table, a terminal's token, a
transfer's pool, an account's roles or a staff token, and the verification names the row.
After each refusal, what did not change is asserted too."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import DatabaseError, transaction

from jackpot.models import AuditEvent, StaffToken, Transfer
from jackpot.staff.accounts import roles_of, staff_token_issue
from jackpot.staff.records import record_accounts
from jackpot.staff.roles import role_group
from tables.audit.verification import keep_checkpoint, verify_full, verify_routine
from tables.models import Round, RoundState, Table, Terminal
from tables.services import operator_terminal_issue, table_update
from tests.conftest import make_floor
from tests.jackpot.tamper import keyed_link, play_rounds, rehash_chain, superuser_sql
from tests.staff import person

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(db):
    """Round r-1 settled (a full house and a four of a kind), r-2 open; the journal verifies."""
    floor = play_rounds()
    assert verify_full().ok
    return floor


def problems(routine: bool = False) -> list[str]:
    report = verify_routine() if routine else verify_full()
    assert not report.ok
    return report.problems


def checkpoint() -> None:
    report = verify_routine()
    assert report.ok, report.problems
    keep_checkpoint(report)


def settled() -> Round:
    return Round.objects.get(round_id="r-1", state=RoundState.SETTLED)


# --- a round's record ---------------------------------------------------------------------------


def test_the_application_cannot_rewrite_a_settled_round(played):
    found = settled()
    with pytest.raises(DatabaseError, match="record is final"), transaction.atomic():
        Round.objects.filter(pk=found.pk).update(result={"board": ["As"] * 5})
    assert Round.objects.get(pk=found.pk).result == found.result


def test_a_round_s_cards_edited_around_the_trigger_are_reported(played):
    found = settled()
    cards = {**found.result, "board": ["As", "Ks", "Qs", "Js", "Ts"]}  # a royal on the slip
    superuser_sql(
        "UPDATE tables_round SET result = %s::jsonb WHERE id = %s", [json.dumps(cards), found.pk]
    )
    [line] = [p for p in problems() if p.startswith(f"round {found.pk} ")]
    assert line.endswith("the row's result differ from its events")
    assert f"chain table-{found.table_id} " in line


def test_a_round_closed_behind_the_journal_is_reported_by_the_routine_run(played):
    checkpoint()  # r-2 is carried as open
    still_open = Round.objects.get(round_id="r-2")
    superuser_sql(
        "UPDATE tables_round SET state = 'settled', result = '{}'::jsonb WHERE id = %s",
        [still_open.pk],
    )
    expected = f"round {still_open.pk}: settled in its row, open in the journal"
    assert expected in problems(routine=True)
    full = problems()
    assert expected in full
    assert "rounds: 2 settled rows, 1 events put them there" in full


def test_a_round_s_terminal_id_and_table_are_covered(played):
    found = settled()
    superuser_sql("UPDATE tables_round SET round_id = 'r-9' WHERE id = %s", [found.pk])
    [line] = [p for p in problems() if p.startswith(f"round {found.pk} ")]
    assert "round_id" in line


# --- tables and terminals -----------------------------------------------------------------------


def test_a_table_renamed_or_moved_by_sql_is_reported(played):
    table = Table.objects.get(pk=played.uth[0].table_id)
    other = make_floor(uth_tables=1)
    superuser_sql(
        "UPDATE tables_table SET name = %s, pool_id = %s WHERE id = %s",
        ["=HYPERLINK(1)", other.pool_id, table.pk],
    )
    assert f"table {table.pk}: the row's name, pool differ from its events" in problems()


def test_a_table_reopened_by_sql_is_reported_by_the_routine_run(played):
    table = Table.objects.get(pk=played.uth[1].table_id)
    table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    checkpoint()
    superuser_sql("UPDATE tables_table SET enabled = true WHERE id = %s", [table.pk])
    assert f"table {table.pk}: the row's enabled differ from its events" in problems(routine=True)


def test_a_terminal_s_token_swapped_by_sql_is_reported(played):
    """The insider puts the hash of a token they hold on a table's terminal row: the terminal
    now answers to their token. The journal recorded the hash it issued."""
    victim = Terminal.objects.get(table_id=played.uth[0].table_id, revoked_at__isnull=True)
    checkpoint()
    superuser_sql("UPDATE tables_terminal SET token_hash = %s WHERE id = %s", ["f" * 64, victim.pk])
    expected = f"terminal {victim.pk}: the row's token_hash differ from its events"
    assert expected in problems(routine=True)
    assert expected in problems()


def test_a_revoked_terminal_revived_by_sql_is_reported(played):
    table = Table.objects.get(pk=played.uth[0].table_id)
    old = Terminal.objects.get(table=table, revoked_at__isnull=True)
    operator_terminal_issue(table=table, name="replacement", revoke_others=True, actor="test")
    checkpoint()
    superuser_sql("UPDATE tables_terminal SET revoked_at = NULL WHERE id = %s", [old.pk])
    expected = f"terminal {old.pk}: no terminal.issued event (or it was revoked)"
    assert expected in problems(routine=True)
    assert f"terminal {old.pk}: the row's revoked differ from its events" in problems()


def test_a_terminal_written_behind_the_journal_is_reported(played):
    checkpoint()
    table = played.uth[0].table_id
    superuser_sql(
        "INSERT INTO tables_terminal (table_id, name, token_hash, prefix, created_at)"
        " VALUES (%s, 'mine', %s, 'term_mine', now())",
        [table, "e" * 64],
    )
    made = Terminal.objects.get(name="mine")
    expected = f"terminal {made.pk}: no terminal.issued event (or it was revoked)"
    assert expected in problems(routine=True)
    assert expected in problems()


# --- a transfer's pool, and the content format --------------------------------------------------


def test_a_transfer_moved_to_another_pool_breaks_its_event(played):
    other = make_floor(uth_tables=1)
    moved = Transfer.objects.filter(pool_id=played.pool_id, code="fixed_award").first()
    superuser_sql(
        "UPDATE jackpot_transfer SET pool_id = %s WHERE id = %s", [other.pool_id, moved.pk]
    )
    event = moved.event
    assert event.content_format == 2
    found = problems()
    assert (
        f"chain {event.chain} sequence {event.sequence}: content does not match its hash" in found
    )
    assert Transfer.objects.get(pk=moved.pk).amount_cents == moved.amount_cents


def test_events_of_the_first_format_still_verify_and_their_format_is_covered(played):
    """A journal written before transfers' pools were covered (format 1) verifies as it was
    written; turning a format-2 event into format 1 (to uncover its pools) breaks it."""
    table_chain = f"table-{played.uth[0].table_id}"
    superuser_sql(
        "UPDATE jackpot_auditevent SET content_format = 1 WHERE chain = %s", [table_chain]
    )
    rehash_chain(table_chain, 1, keyed_link)  # as the service wrote it then, with the key
    assert verify_full().ok

    first = AuditEvent.objects.get(chain=table_chain, sequence=1)
    superuser_sql("UPDATE jackpot_auditevent SET content_format = 2 WHERE id = %s", [first.pk])
    assert f"chain {table_chain} sequence 1: content does not match its hash" in problems()

    superuser_sql("UPDATE jackpot_auditevent SET content_format = 1 WHERE id = %s", [first.pk])
    pool_event = AuditEvent.objects.filter(chain=f"pool-{played.pool_id}").order_by("sequence")[0]
    superuser_sql("UPDATE jackpot_auditevent SET content_format = 1 WHERE id = %s", [pool_event.pk])
    expected = f"chain {pool_event.chain} sequence {pool_event.sequence}: content does not match"
    assert any(p.startswith(expected) for p in problems())


# --- who may act: staff powers and staff tokens -------------------------------------------------


@pytest.fixture
def staff(played, django_user_model):
    """ana, a supervisor given her role as the service gives it; mallory, an account with no
    power; each has a staff token."""
    ana, mallory = person("ana", "supervisor"), person("mallory")
    for user in (ana, mallory):
        staff_token_issue(user=user, revoke_others=False, actor=f"user:{user.username}")
    checkpoint()
    return ana, mallory


def test_a_role_granted_by_sql_is_reported(staff):
    _ana, mallory = staff
    admin = role_group("admin")
    superuser_sql(
        "INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", [mallory.pk, admin.pk]
    )
    expected = "staff mallory: holds powers no staff event gave"
    assert expected in problems(routine=True)
    assert expected in problems()


def test_a_superuser_flag_set_by_sql_is_reported(staff):
    ana, _mallory = staff
    superuser_sql("UPDATE auth_user SET is_superuser = true WHERE id = %s", [ana.pk])
    expected = "staff ana: the account's is_superuser differ from its events"
    assert expected in problems(routine=True)
    assert expected in problems()


def test_a_colleague_s_token_moved_to_oneself_by_sql_is_reported(staff):
    ana, mallory = staff
    token = StaffToken.objects.get(user=ana)
    superuser_sql(
        "UPDATE jackpot_stafftoken SET user_id = %s WHERE id = %s", [mallory.pk, token.pk]
    )
    expected = f"staff token {token.pk}: the row's user differ from its events"
    assert expected in problems(routine=True)
    assert expected in problems()


def test_a_revoked_staff_token_revived_by_sql_is_reported(staff):
    ana, _mallory = staff
    old = StaffToken.objects.get(user=ana)
    staff_token_issue(user=ana, revoke_others=True, actor="user:ana")
    checkpoint()
    superuser_sql("UPDATE jackpot_stafftoken SET revoked_at = NULL WHERE id = %s", [old.pk])
    expected = f"staff token {old.pk}: no staff_token.issued event (or it was revoked)"
    assert expected in problems(routine=True)
    assert expected in problems()


def test_accounts_made_before_the_journal_covered_them_are_recorded_once_at_the_upgrade(played):
    """An install upgraded with staff made before (no event showed their roles): the migration
    records every account as it stands, and from then on the comparison holds."""
    User = get_user_model()
    old = User.objects.create(username="old-timer", is_staff=True)
    old.groups.add(role_group("admin"))  # before the journal covered accounts: no event
    assert "staff old-timer: holds powers no staff event gave" in problems()
    with transaction.atomic():
        record_accounts(User, roles_of)
    assert verify_full().ok
    superuser_sql("UPDATE auth_user SET is_superuser = true WHERE id = %s", [old.pk])
    assert "staff old-timer: the account's is_superuser differ from its events" in problems()
