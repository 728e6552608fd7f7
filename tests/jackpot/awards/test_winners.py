"""Paying a winner (issue 22, item 1; compliance 50): the method, reference and note of a
payment, the winner's identity required at or above the identification threshold, stored
encrypted and tied to the journal by a digest, read by auditors and admins alone, never in the
journal's payloads, the outbox, the logs, /metrics, the award list or the payout export; the
register of a period as CSV and PDF, matching the journal to the cent; the purge after the
retention, and none before.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.utils import timezone
from pypdf import PdfReader

from jackpot.awards import winners
from jackpot.models import (
    AuditEvent,
    Award,
    OutboxMessage,
    Transfer,
    TransferCode,
    WebhookDelivery,
    WinnerIdentity,
)
from jackpot.tasks import purge_winner_identities
from tables.audit.verification import verify_full, verify_routine
from tests.conftest import assert_journal_ok, uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql
from tests.staff import api_clients, surveilled
from tests.winners import DOCUMENT, NAME, PAY, PAY_CASH, WINNER

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    return api_clients(
        ana="supervisor",
        bob="supervisor",
        ida="auditor",
        max="admin",
    )


def _post(client, award_id, step, body=None):
    return client.post(
        f"/api/v1/awards/{award_id}/{step}", body or {}, content_type="application/json"
    )


def _hit(floor, round_id="r-1"):
    """A jackpot royal (seat 1, the meter: EUR 10,000 and more) and envy (seat 2, EUR 500)."""
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1), uth_seat(2)]})
    body = terminal.post(
        f"/rounds/{round_id}/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    ).json()
    jackpot, envy = body["awards"]
    return jackpot, envy


def _approved(people, award_id, note=None):
    assert _post(people["ana"], award_id, "verify", {"note": "cards and video"}).status_code == 200
    surveilled(award_id)
    approved = _post(people["bob"], award_id, "approve", {"note": note} if note else {})
    assert approved.status_code == 200, approved.json()
    return approved.json()


def _balances(floor):
    return assert_journal_ok()["balances"][str(floor.pool_id)]


def test_a_jackpot_is_paid_only_with_its_winner_identified(floor, people):
    jackpot, _ = _hit(floor)
    approved = _approved(people, jackpot["id"], note="manager on the floor")
    assert approved["approval_note"] == "manager on the floor"
    before = _balances(floor)

    refusals = [
        (PAY_CASH, "winner_identity_required", "winner"),
        ({"method": "cash", "winner": {**WINNER, "name": None}}, "invalid_request", "winner.name"),
        (
            {"method": "cash", "winner": {k: v for k, v in WINNER.items() if k != "nationality"}},
            "invalid_request",
            "winner.nationality",
        ),
        (
            {"method": "cash", "winner": {**WINNER, "document_type": "library_card"}},
            "invalid_request",
            "winner.document_type",
        ),
        ({"method": "cheque", "winner": WINNER}, "invalid_request", "reference"),
        ({"method": "barter", "winner": WINNER}, "invalid_request", "method"),
        ({"method": "cash", "note": "", "winner": WINNER}, "invalid_text", "note"),
    ]
    for body, code, param in refusals:
        refused = _post(people["ana"], jackpot["id"], "pay", body)
        assert refused.status_code == 400, refused.json()
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (code, param)
    # Nothing was written by a refusal: no money, no identity, the award still approved.
    assert _balances(floor) == before
    assert not WinnerIdentity.objects.exists()
    assert Award.objects.get(pk=jackpot["id"]).status == "approved"

    paid = _post(
        people["ana"],
        jackpot["id"],
        "pay",
        {**PAY, "method": "cheque", "reference": "CHQ-0042"},
    )
    assert paid.status_code == 200, paid.json()
    body = paid.json()
    assert (body["status"], body["paid_by"], body["payment_method"]) == ("paid", "ana", "cheque")
    assert (body["payment_reference"], body["payment_note"]) == ("CHQ-0042", "paid at the cage")
    assert body["winner_identified"] is True
    assert NAME not in paid.content.decode() and DOCUMENT not in paid.content.decode()

    event = AuditEvent.objects.get(kind="award.paid")
    assert event.payload["method"] == "cheque" and event.payload["reference"] == "CHQ-0042"
    assert event.payload["note"] == "paid at the cage"
    identity = WinnerIdentity.objects.get(award_id=jackpot["id"])
    assert event.payload["winner_digest"] == winners.digest(
        jackpot["id"], winners._opened(identity)
    )
    assert NAME not in identity.ciphertext and DOCUMENT not in identity.ciphertext
    assert identity.keep_until == identity.recorded_at + timedelta(days=1826)
    assert identity.recorded_by.username == "ana"
    approved_event = AuditEvent.objects.get(kind="award.approved")
    assert approved_event.payload["note"] == "manager on the floor"
    assert _balances(floor)["paid"] == before["paid"] + jackpot["amount_cents"]
    assert verify_routine().ok


def test_under_the_threshold_an_identity_is_optional_and_kept_the_same_way(floor, people):
    jackpot, envy = _hit(floor)  # EUR 500, approved at once
    assert envy["status"] == "approved"
    _approved(people, jackpot["id"])  # an envy is paid once its jackpot is approved
    paid = _post(people["ana"], envy["id"], "pay", PAY_CASH)
    assert paid.status_code == 200, paid.json()
    assert paid.json()["winner_identified"] is False and paid.json()["payment_method"] == "cash"
    assert AuditEvent.objects.get(kind="award.paid").payload["winner_identified"] is False

    other_jackpot, other = _hit(floor, "r-2")
    _approved(people, other_jackpot["id"])
    assert _post(people["ana"], other["id"], "pay", PAY).json()["winner_identified"] is True
    assert WinnerIdentity.objects.filter(award_id=other["id"]).exists()
    # Approve takes a note and nothing else.
    refused = _post(people["ana"], other["id"], "approve", {"reason": "x"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "unknown_field")


def test_only_auditors_and_admins_read_the_winner(floor, people, caplog):
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])
    assert _post(people["ana"], jackpot["id"], "pay", PAY).status_code == 200
    url = f"/api/v1/awards/{jackpot['id']}/winner"
    for refused in ("ana", "bob"):
        answer = people[refused].get(url)
        assert answer.status_code == 403 and NAME not in answer.content.decode()
    assert Client().get(url).status_code == 401
    for reader in ("ida", "max"):
        read = people[reader].get(url)
        assert read.status_code == 200, read.json()
        assert read["Cache-Control"] == "no-store"
        record = read.json()
        assert {k: record[k] for k in WINNER} == {**WINNER}
        assert record["recorded_by"] == "ana"
    # Who read it is on the security log; the identity is not.
    reads = [r.getMessage() for r in caplog.records if r.name == "jackpot.security"]
    assert f"winner identity of award {jackpot['id']} read by user:ida" in reads
    assert f"winner identity of award {jackpot['id']} read by user:max" in reads
    missing = people["ida"].get(f"/api/v1/awards/{envy['id']}/winner")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "winner_not_identified")


def test_the_identity_is_nowhere_but_its_encrypted_row(floor, people, caplog, settings):
    """Not in the journal's payloads, the outbox or its deliveries, the logs, /metrics, the award
    list, the payout export; nor echoed by a refusal."""
    settings.NOTIFY_AWARD_CENTS = 1  # every award is a notification: the outbox is used
    caplog.set_level(logging.DEBUG)
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])
    bad = {**PAY, "winner": {**WINNER, "document_number": DOCUMENT + "!"}}
    refused = _post(people["ana"], jackpot["id"], "pay", bad)
    assert refused.json()["error"]["param"] == "winner.document_number"
    assert DOCUMENT not in refused.content.decode()
    assert _post(people["ana"], jackpot["id"], "pay", PAY).status_code == 200
    assert _post(people["ana"], envy["id"], "pay", PAY).status_code == 200

    seen = [
        json.dumps([event.payload for event in AuditEvent.objects.all()]),
        json.dumps([message.payload for message in OutboxMessage.objects.all()]),
        json.dumps(list(WebhookDelivery.objects.values())),
        caplog.text,
        Client().get("/metrics").content.decode(),
        people["ida"].get("/api/v1/awards").content.decode(),
        people["ana"].get(f"/api/v1/awards?table={floor.uth[0].table_id}").content.decode(),
    ]
    today = timezone.now()
    export = people["ida"].get(
        "/api/v1/awards/export.csv",
        {
            "from": (today - timedelta(days=1)).isoformat(),
            "to": (today + timedelta(days=1)).isoformat(),
        },
    )
    seen.append(b"".join(export.streaming_content).decode())
    assert OutboxMessage.objects.exists()  # the outbox was used, and holds no identity
    for text in seen:
        assert NAME not in text and DOCUMENT not in text
        assert "Quintanar" not in text  # nor a part of the name


def test_an_identity_edited_forged_or_deleted_by_sql_is_reported(floor, people, settings):
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])
    assert _post(people["ana"], jackpot["id"], "pay", PAY).status_code == 200
    assert verify_full().ok and verify_routine().ok
    row = WinnerIdentity.objects.get(award_id=jackpot["id"])

    # The database itself refuses an edit and an early deletion, even to the table's owner.
    for sql in (
        "UPDATE jackpot_winneridentity SET ciphertext = 'x' WHERE id = %s",
        "DELETE FROM jackpot_winneridentity WHERE id = %s",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [row.pk])

    # Someone holding the encryption key (not the journal's) swaps in another identity.
    forged = dict(winners._opened(row), name="Somebody Else")
    token = Fernet(settings.WINNER_IDENTITY_KEYS[0].encode()).encrypt(
        json.dumps(forged, sort_keys=True).encode()
    )
    superuser_sql(
        "UPDATE jackpot_winneridentity SET ciphertext = %s WHERE id = %s", [token.decode(), row.pk]
    )
    for report in (verify_full(), verify_routine()):
        assert not report.ok
        assert any(
            f"winner of award {jackpot['id']}: the identity differs" in p for p in report.problems
        ), report.problems
    superuser_sql(
        "UPDATE jackpot_winneridentity SET ciphertext = %s WHERE id = %s",
        [row.ciphertext, row.pk],
    )
    assert verify_full().ok

    # An identity moved to an award paid without one is a row no payment recorded.
    assert _post(people["ana"], envy["id"], "pay", PAY_CASH).status_code == 200
    superuser_sql(
        "UPDATE jackpot_winneridentity SET award_id = %s WHERE id = %s", [envy["id"], row.pk]
    )
    problems = verify_full().problems
    assert any(f"winner of award {envy['id']}: an identity row no payment" in p for p in problems)
    assert any(f"winner of award {jackpot['id']}: the payment's event" in p for p in problems)
    superuser_sql(
        "UPDATE jackpot_winneridentity SET award_id = %s WHERE id = %s", [jackpot["id"], row.pk]
    )
    # Deleted before its purge.
    superuser_sql("DELETE FROM jackpot_winneridentity WHERE id = %s", [row.pk])
    assert any("no identity row holds it" in p for p in verify_routine().problems)


def test_the_register_of_a_period_matches_the_journal_to_the_cent(floor, people, caplog):
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])  # an envy is paid once its jackpot is approved
    assert _post(people["ana"], envy["id"], "pay", PAY_CASH).status_code == 200
    middle = timezone.now()
    assert (
        _post(
            people["ana"],
            jackpot["id"],
            "pay",
            {**PAY, "method": "bank_transfer", "reference": "=X1"},
        ).status_code
        == 200
    )
    later_jackpot, later = _hit(floor, "r-2")
    _approved(people, later_jackpot["id"])
    assert _post(people["bob"], later["id"], "pay", PAY_CASH).status_code == 200
    end = timezone.now() + timedelta(seconds=1)
    start = middle - timedelta(hours=1)

    for period in ((start, middle), (middle, end), (start, end)):
        answer = people["ida"].get(
            "/api/v1/awards/register",
            {"from": period[0].isoformat(), "to": period[1].isoformat(), "format": "csv"},
        )
        assert answer.status_code == 200, answer.content
        rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
        paid = Transfer.objects.filter(
            code=TransferCode.AWARD_PAID,
            event__occurred_at__gte=period[0],
            event__occurred_at__lt=period[1],
        )
        assert len(rows) == paid.count() > 0
        assert sum(int(row["amount_cents"]) for row in rows) == sum(
            paid.values_list("amount_cents", flat=True)
        )
        assert sorted(int(row["award_id"]) for row in rows) == sorted(
            paid.values_list("award_id", flat=True)
        )
    by_award = {int(row["award_id"]): row for row in rows}
    assert by_award[jackpot["id"]]["winner_name"] == NAME
    assert by_award[jackpot["id"]]["payment_reference"] == "'=X1"  # never a formula
    assert by_award[jackpot["id"]]["approver"] == "bob"
    assert by_award[jackpot["id"]]["cashier"] == "ana"
    assert by_award[envy["id"]]["winner_name"] == ""
    assert by_award[later["id"]]["cashier"] == "bob"

    pdf = people["max"].get(
        "/api/v1/awards/register",
        {"from": start.isoformat(), "to": end.isoformat(), "format": "pdf"},
    )
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert NAME in text and "The cashier" in text and "The manager" in text
    assert "3 gains" in text
    assert any(
        r.name == "jackpot.security" and "read by user:max" in r.getMessage()
        for r in caplog.records
    )

    for who, status in (("ana", 403), ("ida", 400)):
        refused = people[who].get("/api/v1/awards/register", {"from": end.isoformat()})
        assert refused.status_code == status


def test_a_purge_deletes_only_identities_past_their_retention(floor, people, settings):
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])
    settings.WINNER_IDENTITY_RETENTION_DAYS = 0  # this one's retention ends as it is recorded
    assert _post(people["ana"], envy["id"], "pay", PAY).status_code == 200
    settings.WINNER_IDENTITY_RETENTION_DAYS = 1826
    assert _post(people["ana"], jackpot["id"], "pay", PAY).status_code == 200

    # A purge that claims a later date still cannot delete what the database keeps.
    with pytest.raises(DatabaseError):
        winners.purge_expired(actor="test", now=timezone.now() + timedelta(days=2000))
    assert WinnerIdentity.objects.count() == 2

    assert winners.purge_expired(actor="test") == [envy["id"]]
    assert list(WinnerIdentity.objects.values_list("award_id", flat=True)) == [jackpot["id"]]
    purged = AuditEvent.objects.get(kind=winners.PURGED)
    assert purged.payload["awards"] == [envy["id"]]
    assert verify_full().ok and verify_routine().ok  # a purge is not a deletion
    assert winners.purge_expired(actor="test") == []


def test_the_daily_purge_is_beats_and_its_command_says_what_it_did(floor, people, settings):
    schedule = settings.CELERY_BEAT_SCHEDULE["purge-winner-identities"]
    assert schedule["task"] == "jackpot.purge_winner_identities"
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])  # an envy is paid once its jackpot is approved
    settings.WINNER_IDENTITY_RETENTION_DAYS = 0
    assert _post(people["ana"], envy["id"], "pay", PAY).status_code == 200
    out = io.StringIO()
    call_command("purge_winner_identities", stdout=out)
    assert out.getvalue().strip() == f"purged 1 winner identities (awards: {envy['id']})"
    assert purge_winner_identities() == []  # run again: nothing left
    assert not WinnerIdentity.objects.exists()


def test_a_new_key_put_first_encrypts_and_the_old_ones_still_open(floor, people, settings):
    """Rotation (docs/operations.md): identities encrypted under the old key open once a new key
    is first; new ones are encrypted under the new key; without the old key they open with
    none, and the verification says so."""
    jackpot, envy = _hit(floor)
    _approved(people, jackpot["id"])
    old = settings.WINNER_IDENTITY_KEYS[0]
    assert _post(people["ana"], jackpot["id"], "pay", PAY).status_code == 200
    new = Fernet.generate_key().decode()
    settings.WINNER_IDENTITY_KEYS = [new, old]
    assert _post(people["ana"], envy["id"], "pay", PAY).status_code == 200
    assert people["ida"].get(f"/api/v1/awards/{jackpot['id']}/winner").json()["name"] == NAME
    fresh = WinnerIdentity.objects.get(award_id=envy["id"]).ciphertext.encode()
    assert json.loads(Fernet(new.encode()).decrypt(fresh))["name"] == NAME
    assert verify_full().ok
    settings.WINNER_IDENTITY_KEYS = [new]  # the old key dropped too soon
    problems = verify_full().problems
    assert f"winner of award {jackpot['id']}: the identity opens with no key" in problems
