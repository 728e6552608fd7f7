"""Attack: what follows a jackpot is paid whatever becomes of the jackpot (issue 37 item 5).

A royal's envy awards (EUR 500 to each other bettor at the table, below the threshold, so
approved at once) were paid while the royal still waited for its verification, and stayed
payable after two supervisors voided the royal: up to six times EUR 500 for a jackpot the club
found was cheated. Compliance 53: an award that follows another is payable only once that one is
approved, and is voided with it (the confirm of the jackpot's void voids each envy in the same
transaction, its money back to the house, each its own audit event); the journal verifies after.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from jackpot.models import AuditEvent, Award, Transfer
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import api_clients, surveilled

pytestmark = pytest.mark.django_db

ENVY = 50_000
PAY = {"method": "cash"}
ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold"), uth_play(3, "6d 7d", "fold")],
}


def _hit(**pool_options: int):
    """A round with a jackpot royal (seat 1) and two envies (seats 2 and 3)."""
    floor = make_floor(**pool_options)
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r1", "seats": [uth_seat(s) for s in (1, 2, 3)]})
    awards = terminal.post("/rounds/r1/result", ROYAL).json()["awards"]
    royal = next(a for a in awards if a["kind"] == "royal_flush")
    envies = [a for a in awards if a["kind"] == "envy"]
    assert len(envies) == 2
    people = api_clients(ana="supervisor", bob="supervisor", cal="supervisor")
    return floor, royal, envies, people


@pytest.fixture
def hit():
    return _hit()


def _post(client, award_id, step, body=None):
    return client.post(
        f"/api/v1/awards/{award_id}/{step}", body or {}, content_type="application/json"
    )


def _shown(client, award_id: int) -> dict:
    """The award as the API's list shows it."""
    listed = client.get("/api/v1/awards", {"kind": "envy", "limit": 200}).json()["results"]
    return next(award for award in listed if award["id"] == award_id)


def _written() -> tuple[int, int, list]:
    """Everything a refused step could have written: events, transfers, the awards' rows."""
    return (
        AuditEvent.objects.count(),
        Transfer.objects.count(),
        list(Award.objects.order_by("pk").values()),
    )


def _refused(answer, status: int, code: str) -> None:
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.json()


def test_two_supervisors_void_the_royal_and_its_envies_go_with_it(hit):
    floor, royal, envies, people = hit
    shown = [_shown(people["ana"], e["id"]) for e in envies]
    assert [(e["follows"], e["waits_on_follows"]) for e in shown] == [(royal["id"], True)] * 2
    before = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert before["payable"] == 2 * ENVY  # approved at once: payable, once the royal is

    requested = _post(people["ana"], royal["id"], "void", {"reason": "marked deck on video"})
    assert requested.status_code == 202, requested.json()
    # One supervisor's request lets no envy be paid.
    _refused(_post(people["cal"], envies[0]["id"], "pay", PAY), 409, "award_follows_unapproved")
    confirmed = _post(people["bob"], royal["id"], "void/confirm")
    assert confirmed.status_code == 200, confirmed.json()

    for envy in envies:
        row = Award.objects.get(pk=envy["id"])
        assert (row.status, row.voided_by.username) == ("void", "bob")
        assert row.void_reason == "voided with the royal_flush it follows"
        _refused(_post(people["cal"], envy["id"], "pay", PAY), 409, "award_wrong_status")
        # Its money back to the house, by its own transfer on its own event.
        moved = list(
            Transfer.objects.filter(award_id=envy["id"], event__kind="award.void").values_list(
                "debit__kind", "credit__kind", "amount_cents", "event__actor"
            )
        )
        assert moved == [("payable", "house", ENVY, "user:bob")]
        event = AuditEvent.objects.get(kind="award.void", payload__award=envy["id"])
        assert (event.payload["follows"], event.payload["from"]) == (royal["id"], "approved")
    # The royal's void and its envies' in one transaction: consecutive on the pool's chain.
    events = list(
        AuditEvent.objects.filter(chain=f"pool-{floor.pool_id}", kind="award.void")
        .order_by("sequence")
        .values_list("sequence", "payload__award")
    )
    assert [award for _, award in events] == [royal["id"], *(e["id"] for e in envies)]
    assert [s for s, _ in events] == list(range(events[0][0], events[0][0] + 3))
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert (balances["awards_pending"], balances["payable"], balances["paid"]) == (0, 0, 0)
    reset = Transfer.objects.filter(award_id=royal["id"], code="void_reset_house")
    house_back = sum(reset.values_list("amount_cents", flat=True))
    assert balances["house"] == before["house"] + 2 * ENVY + house_back


def test_an_envy_is_not_paid_before_its_royal_is_approved(hit):
    _, royal, envies, people = hit
    envy = envies[0]
    written = _written()
    _refused(_post(people["ana"], envy["id"], "pay", PAY), 409, "award_follows_unapproved")
    answer = _post(people["ana"], envy["id"], "pay", PAY).json()["error"]
    assert answer["param"] == "award" and str(royal["id"]) in answer["message"]
    assert _written() == written
    shown = _shown(people["ana"], envy["id"])
    assert (shown["follows"], shown["waits_on_follows"]) == (royal["id"], True)

    # Verified by one supervisor: still not payable.
    assert _post(people["ana"], royal["id"], "verify", {"note": "cards ok"}).status_code == 200
    written = _written()
    _refused(_post(people["bob"], envy["id"], "pay", PAY), 409, "award_follows_unapproved")
    assert _written() == written

    # Approved by a second: the envy is paid.
    surveilled(royal["id"])
    assert _post(people["bob"], royal["id"], "approve").status_code == 200
    shown = _shown(people["ana"], envy["id"])
    assert shown["waits_on_follows"] is False
    paid = _post(people["cal"], envy["id"], "pay", PAY)
    assert paid.status_code == 200, paid.json()
    assert_journal_ok()


def test_the_service_role_cannot_unlink_an_envy_from_its_royal(hit):
    _, _, envies, people = hit
    envy = envies[0]
    for statement in (
        "UPDATE jackpot_award SET follows_id = NULL WHERE id = %s",
        "UPDATE jackpot_award SET follows_id = id WHERE id = %s",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [envy["id"]])
    written = _written()
    _refused(_post(people["ana"], envy["id"], "pay", PAY), 409, "award_follows_unapproved")
    assert _written() == written
    assert_journal_ok()


def test_an_envy_waiting_for_its_own_approval_waits_for_the_royal_too_and_goes_with_it():
    """At or above the threshold an envy waits for its own verification: its approval is refused
    until the royal's, and the royal's void takes it back from `awards_pending`."""
    floor, royal, envies, people = _hit(verification_threshold_cents=ENVY)
    first, second = envies
    assert (first["status"], second["status"]) == ("pending", "pending")
    assert (
        _post(people["ana"], first["id"], "verify", {"note": "seat had a stake"}).status_code == 200
    )
    written = _written()
    _refused(_post(people["bob"], first["id"], "approve"), 409, "award_follows_unapproved")
    assert _written() == written

    assert _post(people["ana"], royal["id"], "void", {"reason": "marked deck"}).status_code == 202
    assert _post(people["bob"], royal["id"], "void/confirm").status_code == 200
    for envy, was in ((first, "verified"), (second, "pending")):
        event = AuditEvent.objects.get(kind="award.void", payload__award=envy["id"])
        assert (event.payload["from"], event.actor) == (was, "user:bob")
        moved = Transfer.objects.filter(award_id=envy["id"], event=event)
        assert list(moved.values_list("code", "debit__kind", "credit__kind", "amount_cents")) == [
            ("award_void_house", "awards_pending", "house", ENVY)
        ]
    _refused(_post(people["bob"], first["id"], "approve"), 409, "award_wrong_status")
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    assert (balances["awards_pending"], balances["payable"], balances["paid"]) == (0, 0, 0)


def test_an_envy_voided_alone_stays_void_when_its_royal_is_paid():
    """One supervisor may void an envy waiting for its verification: that void is final, and the
    royal's approval and payment later pay it no more."""
    _, royal, envies, people = _hit(verification_threshold_cents=ENVY)
    envy = envies[0]
    assert _post(people["cal"], envy["id"], "void", {"reason": "no stake"}).status_code == 200
    assert _post(people["ana"], royal["id"], "verify", {"note": "cards ok"}).status_code == 200
    surveilled(royal["id"])
    assert _post(people["bob"], royal["id"], "approve").status_code == 200
    for step, body in (("verify", {"note": "ok"}), ("approve", None), ("pay", PAY)):
        _refused(_post(people["ana"], envy["id"], step, body), 409, "award_wrong_status")
    assert Award.objects.get(pk=envy["id"]).status == "void"
    assert_journal_ok()
