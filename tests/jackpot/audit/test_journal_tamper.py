"""History rewritten by someone who holds the database's password but not the journal's key, and
rows the chain describes (awards, pools) edited behind its back: `verify_journal` names the first
broken point each time."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from jackpot.awards.workflow import award_approve, award_verify, award_void, award_void_cancel
from jackpot.models import AuditEvent, Award, Pool, Transfer
from jackpot.money import ledger
from jackpot.pools.parameters import change_approve, change_propose
from tables.models import Table
from tables.pools import POOL_TABLES
from tables.services import table_update
from tests.conftest import make_floor, uth_play, uth_seat
from tests.jackpot.tamper import play_rounds, rehash_chain, superuser_sql, unkeyed_link, verify
from tests.staff import person

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(db):
    return play_rounds()


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE jackpot_transfer SET amount_cents = amount_cents + 100 WHERE event_id = %s"
        " AND code = 'fixed_award'",
        "UPDATE jackpot_auditevent SET actor = 'terminal:someone-else' WHERE id = %s",
    ],
    ids=["transfer-amount", "event-actor"],
)
def test_a_history_rewritten_with_the_unkeyed_formula_is_found(played, edit):
    """The insider has the database (superuser: triggers off) but not the key: they change an
    award's transfer, or who settled the round, and recompute every later hash with the SHA-256
    link the journal used to have. The chain links again, head row included, and still verify
    names the edited event. (With the unkeyed link, the actor's edit passed every check and the
    amount's was seen only as a balance off, with no sequence.)"""
    assert verify()[0] == 0
    event = Transfer.objects.filter(code="fixed_award").order_by("pk").first().event
    later = AuditEvent.objects.filter(chain=event.chain, sequence__gt=event.sequence).count()
    assert later >= 1  # the rewrite has to carry on past the edited event

    superuser_sql(edit, [event.pk])
    rehash_chain(event.chain, event.sequence, unkeyed_link)

    status, lines = verify()
    assert status == 1
    assert lines[0] == f"BROKEN at chain {event.chain} sequence {event.sequence}"
    assert "content does not match its hash" in lines[1]


@pytest.fixture
def awarded(played, django_user_model):
    """The four of a kind verified by ana and approved by bob; carl is a third supervisor."""
    people = {}
    for name in ("ana", "bob", "carl"):
        people[name] = person(name, "supervisor")
    quads = Award.objects.get(kind="four_of_a_kind")
    assert quads.status == "pending"
    award_verify(award_id=quads.pk, user=people["ana"], note="video checked")
    award_approve(award_id=quads.pk, user=people["bob"])
    assert verify()[0] == 0
    return played, people


def _event(kind: str, **payload: object) -> AuditEvent:
    return AuditEvent.objects.get(kind=kind, **{f"payload__{k}": v for k, v in payload.items()})


@pytest.mark.parametrize(
    ("edit", "field", "last_kind"),
    [
        ("amount_cents = amount_cents + 1", "amount_cents", "award.approved"),
        ("status = 'paid'", "status", "award.approved"),
        ("approved_by_id = %(carl)s", "approved_by", "award.approved"),
        ("verified_at = verified_at - interval '1 hour'", "verified_at", "award.approved"),
        ("seat = 7", "seat", "award.approved"),
    ],
    ids=["amount", "status", "approver", "verified-at", "seat"],
)
def test_an_award_edited_in_place_is_found_at_its_last_event(awarded, edit, field, last_kind):
    """The award table is not append-only (its status moves), so a direct UPDATE needs no trigger
    off: the award is a projection of its events, and verify names the award, the field and the
    chain and sequence of the award's last event, as the first broken point."""
    _floor, people = awarded
    quads = Award.objects.get(kind="four_of_a_kind")
    superuser_sql(
        f"UPDATE jackpot_award SET {edit % {'carl': people['carl'].pk}} WHERE id = %s",
        [quads.pk],
    )
    last = _event(last_kind, award=quads.pk)
    status, lines = verify()
    assert status == 1
    assert lines[0] == f"BROKEN at chain {last.chain} sequence {last.sequence}"
    assert lines[1].startswith(f"  award {quads.pk}: {field} is "), lines


def test_an_award_still_as_created_is_found_at_its_round(played):
    """An award no step has touched: its last event is the round that created it."""
    full_house = Award.objects.get(kind="full_house")
    superuser_sql("UPDATE jackpot_award SET status = 'paid' WHERE id = %s", [full_house.pk])
    settled = AuditEvent.objects.get(kind="round.settled")
    status, lines = verify()
    assert status == 1
    assert lines[0] == f"BROKEN at chain {settled.chain} sequence {settled.sequence}"
    assert lines[1] == (
        f"  award {full_house.pk}: status is 'paid', the journal says 'approved' "
        f"(chain {settled.chain} sequence {settled.sequence})"
    )


def test_an_award_no_round_created_is_found(awarded):
    quads = Award.objects.get(kind="four_of_a_kind")
    superuser_sql(
        "INSERT INTO jackpot_award (pool_id, round_id, seat, kind, amount_cents, status,"
        " number, created_at, verification_note, void_reason, void_request_reason)"
        " SELECT pool_id, round_id, 3, kind, amount_cents, 'approved', 99, created_at, '', '', ''"
        " FROM jackpot_award WHERE id = %s",
        [quads.pk],
    )
    status, lines = verify()
    assert status == 1
    assert any("no round.settled event created it" in line for line in lines), lines


def test_a_pool_edited_in_place_is_found_at_its_last_parameter_event(played, django_user_model):
    """The stake is what pool.created said; the threshold what the last pool.changed's
    "after" said: a direct SQL edit of either is named with that event."""
    pool = Pool.objects.get(pk=played.pool_id)
    created = _event("pool.created", pool=pool.pk)
    superuser_sql("UPDATE jackpot_pool SET stake_cents = 600 WHERE id = %s", [pool.pk])
    status, lines = verify()
    assert status == 1
    assert lines[0] == f"BROKEN at chain {created.chain} sequence {created.sequence}"
    assert lines[1] == (
        f"  pool {pool.pk}: stake_cents is 600, the journal says 500 "
        f"(chain {created.chain} sequence {created.sequence})"
    )

    superuser_sql("UPDATE jackpot_pool SET stake_cents = 500 WHERE id = %s", [pool.pk])
    assert verify()[0] == 0
    # A change as the club makes it: tables closed, one admin proposes, another approves.
    for table in Table.objects.filter(pool=pool):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    # and the round left open voided by its terminal: none is open across a change
    assert played.uth[0].post("/rounds/r-2/void", {"reason": "misdeal"}).status_code == 200
    dora, eric = (django_user_model.objects.create(username=name) for name in ("dora", "eric"))
    change = change_propose(
        pool_id=pool.pk,
        changes={"verification_threshold_cents": 20_000},
        reason="a lower threshold",
        user=dora,
    )
    change_approve(pool_id=pool.pk, change_id=change.pk, user=eric, pool_tables=POOL_TABLES)
    assert verify()[0] == 0  # the change, applied through its event, is what the row says
    changed = _event("pool.changed", pool=pool.pk)
    superuser_sql(
        "UPDATE jackpot_pool SET verification_threshold_cents = 10000 WHERE id = %s", [pool.pk]
    )
    status, lines = verify()
    assert lines[0] == f"BROKEN at chain {changed.chain} sequence {changed.sequence}"
    assert "verification_threshold_cents is 10000, the journal says 20000" in lines[1]


def test_a_renamed_approver_is_still_the_one_the_journal_names(awarded):
    """Renaming a user in the admin is recorded (staff.changed on the admin chain): the award
    keeps matching. A rename without its event is an award that no longer matches."""
    _floor, people = awarded
    bob = people["bob"]
    bob.username = "robert"
    bob.save(update_fields=["username"])
    status, lines = verify()
    assert status == 1 and "approved_by is 'robert', the journal says 'bob'" in lines[1]

    with transaction.atomic():
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind="staff.changed",
            actor="user:admin",
            payload={
                "user": "robert",
                "before": {"username": "bob"},
                "after": {"username": "robert"},
            },
        )
    assert verify()[0] == 0


def test_a_jackpot_void_request_edited_in_place_is_found(db, django_user_model):
    """Who asked for a jackpot's void is in the journal (award.void_requested): a row that names
    someone else is caught; a cancelled request is what the journal says too."""
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    royal_hand = {
        "board": ["Ah", "Kh", "Qh", "2c", "3d"],
        "dealer": ["9s", "9d"],
        "seats": [uth_play(1, "Jh Th")],
    }
    assert terminal.post("/rounds/r-1/result", royal_hand).status_code == 200
    royal = Award.objects.get(kind="royal_flush")
    ana, bob = (django_user_model.objects.create(username=name) for name in ("ana", "bob"))
    award_void(award_id=royal.pk, user=ana, reason="misdeal on camera")
    assert verify()[0] == 0
    superuser_sql(
        "UPDATE jackpot_award SET void_requested_by_id = %s WHERE id = %s", [bob.pk, royal.pk]
    )
    status, lines = verify()
    assert status == 1
    assert any("void_requested_by is 'bob', the journal says 'ana'" in line for line in lines)
    superuser_sql(
        "UPDATE jackpot_award SET void_requested_by_id = %s WHERE id = %s", [ana.pk, royal.pk]
    )
    award_void_cancel(award_id=royal.pk, user=bob, reason="the video shows a fair deal")
    assert verify()[0] == 0


@pytest.mark.parametrize(
    ("edit", "field", "shown"),
    [
        ("table_name = 'Salle privée 9'", "table_name", "'Salle privée 9'"),
        (
            """winning_five = '["Kc", "Ks", "Kh", "7c", "7d"]'""",
            "winning_five",
            "['Kc', 'Ks', 'Kh', '7c', '7d']",
        ),
    ],
    ids=["table-name", "winning-five"],
)
def test_what_an_award_shows_of_its_round_forged_in_the_database_is_found(
    played, edit, field, shown
):
    """What an award shows of its round (the table's name, the five cards on the slip) is its
    own row's since issue 23, recorded at the grant and carried by the round's event: a writer
    who goes around the trigger that keeps it is named at that event, with what it says."""
    full_house = Award.objects.get(kind="full_house")
    superuser_sql(f"UPDATE jackpot_award SET {edit} WHERE id = %s", [full_house.pk])
    settled = AuditEvent.objects.get(kind="round.settled")
    entry = next(a for a in settled.payload["awards"] if a["id"] == full_house.pk)
    status, lines = verify()
    assert status == 1
    assert lines[0] == f"BROKEN at chain {settled.chain} sequence {settled.sequence}"
    assert lines[1] == (
        f"  award {full_house.pk}: {field} is {shown}, the journal says {entry[field]!r} "
        f"(chain {settled.chain} sequence {settled.sequence})"
    )


def test_what_an_award_shows_of_its_round_is_refused_an_update(played):
    """Without going around the triggers, the grant's record does not change at all; the
    award's status still moves."""
    full_house = Award.objects.get(kind="full_house")
    with pytest.raises(DatabaseError, match="never changes"), transaction.atomic():
        Award.objects.filter(pk=full_house.pk).update(table_name="Salle privée 9")
    with pytest.raises(DatabaseError, match="never changes"), transaction.atomic():
        Award.objects.filter(pk=full_house.pk).update(winning_five=[])
    Award.objects.filter(pk=full_house.pk).update(table_name=full_house.table_name)  # unchanged
    full_house.refresh_from_db()
    assert full_house.table_name != "Salle privée 9" and len(full_house.winning_five) == 5
