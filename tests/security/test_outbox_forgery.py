"""An outbox row the service's role wrote is signed only as the journal says (issue 37 item 7).

The insider holds SQL as the service's role but neither the journal's key nor a receiver's
secret. The worker signs each outbox message for its receivers, so a row that role INSERTs or
edits would reach the cage signed: a fake significant event, a fake big win. Each attack below
plays the insider's SQL, then the worker's step (`jackpot.tasks.relay_outbox`, run here in the
test's process), against the real HTTP receiver the outbox tests use, and asserts that nothing
signed reached it, that no delivery row was made, that no journal event was written, and that
the row is refused for good (never relayed again); a legitimate message still delivers the same
bytes as before.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from django.db import connection

from jackpot import tasks
from jackpot.audit import outbox_journal
from jackpot.models import AuditEvent, Award, AwardKind, OutboxMessage, WebhookDelivery
from jackpot.notifications import outbox, webhooks
from tables.services import table_update
from tests.conftest import make_floor, uth_play, uth_seat
from tests.jackpot.webhook_receiver import Receiver

SECRETS = {"/cage": "a-test-webhook-secret-for-the-cage-of-more-than-32-bytes"}


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    server = Receiver(SECRETS)
    settings.WEBHOOK_RECEIVERS = server.settings("/cage")
    yield server
    server.close()


def _insert(key: str, topic: str, payload: dict) -> int:
    """The insider's INSERT, as the service's role, of a message due now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO jackpot_outboxmessage (key, topic, payload, status, attempts, last_error,"
            " request_id, created_at, next_attempt_at)"
            " VALUES (%s, %s, %s::jsonb, 'pending', 0, '', '', now(), now()) RETURNING id",
            [key, topic, json.dumps(payload)],
        )
        return int(cursor.fetchone()[0])


def _jackpot(floor, round_id: str = "r-1") -> Award:
    terminal = floor.uth[0]
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1)]})
    assert opened.status_code == 201, opened.content
    settled = terminal.post(
        f"/rounds/{round_id}/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th")],
        },
    )
    assert settled.status_code == 200, settled.content
    return Award.objects.get(round__round_id=round_id, kind=AwardKind.ROYAL_FLUSH)


def _refused(message_id: int, receiver: Receiver, caplog, events: int) -> None:
    """Nothing signed reached the receiver, nothing was written, the row is refused for good."""
    with caplog.at_level(logging.WARNING, logger="jackpot.security"):
        tasks.relay_outbox(message_id)
    assert not receiver.received
    assert not WebhookDelivery.objects.filter(message_id=message_id).exists()
    assert AuditEvent.objects.count() == events
    message = OutboxMessage.objects.get(pk=message_id)
    assert message.status == "refused"
    assert "journal" in message.last_error
    assert any(
        r.name == "jackpot.security" and f"outbox {message_id}" in r.getMessage()
        for r in caplog.records
    )
    # Never retried as if transient: the sweeper and the relay leave it alone.
    OutboxMessage.objects.filter(pk=message_id).update(next_attempt_at=message.created_at)
    assert message_id not in outbox.sweep().resent
    assert tasks.relay_outbox(message_id) == outbox.Relayed.LEFT_ALONE
    assert not receiver.received


@pytest.mark.django_db(transaction=True)
def test_a_significant_event_or_big_win_inserted_by_sql_is_never_signed(receiver, caplog):
    floor = make_floor(uth_tables=1)
    real = AuditEvent.objects.filter(chain="admin").order_by("sequence").first()
    assert real is not None and real.kind not in ("pool.suspended",)
    forged = {
        "code": "SE06",
        "name": "pool_suspended",
        "kind": "pool.suspended",
        "occurred_at": "2026-01-01T00:00:00+00:00",
        "table": None,
        "pool": floor.pool_id,
        "actor": "user:boss",
        "chain": "admin",
        "sequence": 999_999,
        "hash": "0" * 64,
        "detail": {"pool": floor.pool_id, "reason": "fraud"},
    }
    events = AuditEvent.objects.count()
    # No such event; a real event that is not a significant one: neither is signed.
    for key in ("event:admin:999999", f"event:{real.chain}:{real.sequence}"):
        message_id = _insert(key, outbox.SIGNIFICANT_EVENT, forged)
        _refused(message_id, receiver, caplog, events)
    # A jackpot "paid" that no round granted.
    award = {"award": 424242, "kind": "royal_flush", "jackpot": True, "amount_cents": 10**9}
    message_id = _insert("award:424242", outbox.JACKPOT_HIT, award)
    _refused(message_id, receiver, caplog, events)


@pytest.mark.django_db(transaction=True)
def test_a_real_message_edited_by_sql_before_delivery_is_refused(receiver, caplog):
    floor = make_floor(uth_tables=1)
    award = _jackpot(floor)
    table_update(table_id=floor.uth[0].table_id, changes={"enabled": False}, actor="test")
    hit = OutboxMessage.objects.get(key=f"award:{award.pk}")
    significant = OutboxMessage.objects.get(
        topic=outbox.SIGNIFICANT_EVENT, payload__kind="table.changed"
    )
    events = AuditEvent.objects.count()

    # The insider makes the jackpot bigger, and says the table changed somewhere else.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_outboxmessage SET payload = jsonb_set(payload, '{amount_cents}',"
            " to_jsonb((payload->>'amount_cents')::bigint * 10)) WHERE id = %s",
            [hit.pk],
        )
        cursor.execute(
            "UPDATE jackpot_outboxmessage SET payload = jsonb_set(payload, '{actor}',"
            " '\"user:nobody\"') WHERE id = %s",
            [significant.pk],
        )
    _refused(hit.pk, receiver, caplog, events)
    _refused(significant.pk, receiver, caplog, events)
    # A real row moved to another topic is refused too.
    OutboxMessage.objects.filter(pk=hit.pk).update(
        payload=hit.payload, topic=outbox.BIG_WIN, status="pending", done_at=None
    )
    _refused(hit.pk, receiver, caplog, events)


@pytest.mark.django_db(transaction=True)
def test_a_legitimate_message_delivers_the_same_bytes_as_before(receiver):
    floor = make_floor(uth_tables=1)
    award = _jackpot(floor)
    table_update(table_id=floor.uth[0].table_id, changes={"enabled": False}, actor="test")
    messages = [
        OutboxMessage.objects.get(key=f"award:{award.pk}"),
        OutboxMessage.objects.get(topic=outbox.SIGNIFICANT_EVENT, payload__kind="table.changed"),
    ]
    for message in messages:
        assert tasks.relay_outbox(message.pk) == outbox.Relayed.DONE
        # What a receiver got before this check: the row's own payload as the event's data.
        before = {
            "id": message.key,
            "type": message.topic,
            "created_at": message.created_at.isoformat().replace("+00:00", "Z"),
            "data": message.payload,
        }
        expected = json.dumps(before, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        (received,) = [r for r in receiver.received if r.headers["Jackpot-Event"] == message.key]
        assert received.verified
        assert received.body == expected.encode()
        # And it is what the journal says, built from the event.
        assert webhooks.event_body(message, outbox_journal.vouched(message)) == received.body
