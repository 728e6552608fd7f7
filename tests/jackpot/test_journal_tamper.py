"""History rewritten by someone who holds the database's password but not the journal's key, and
rows the chain describes (awards, pools) edited behind its back: `verify_journal` names the first
broken point each time."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from jackpot.models import AuditEvent, Transfer
from tests.conftest import uth_play, uth_seat
from tests.jackpot.tamper import rehash_chain, superuser_sql, unkeyed_link

pytestmark = pytest.mark.django_db


def verify() -> tuple[int, list[str]]:
    """verify_journal's exit status and its lines."""
    out = StringIO()
    try:
        call_command("verify_journal", stdout=out)
    except SystemExit as stop:
        return int(stop.code or 0), out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


@pytest.fixture
def played(floor):
    """A round with a full house (approved at once) and a four of a kind (waits: at or above the
    threshold), then another round, so the table's chain goes on past the awards."""
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
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    return floor


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
