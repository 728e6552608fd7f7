"""The transactional outbox and the signed big-win webhooks (issue 12, items 1, 3 and 8).

The worker tests use `celery_worker` (tests/workers.py): a real worker subprocess over the real
Redis, with beat inside it for the sweeper, posting to a real HTTP receiver on 127.0.0.1
(tests/jackpot/webhook_receiver.py) that checks every signature as docs/api.md tells receivers
to. Backoff, sweeps and leases are made short so that the tests take seconds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from django.db import transaction
from django.test import Client

from core.circuit import redis_circuit
from jackpot.audit.outbox_journal import vouched
from jackpot.models import (
    Award,
    AwardKind,
    DeliveryStatus,
    OutboxMessage,
    OutboxStatus,
    WebhookDelivery,
)
from jackpot.notifications import outbox, webhooks
from tests.conftest import make_floor, uth_play, uth_seat
from tests.jackpot.webhook_receiver import Receiver
from tests.staff import person, token_client
from tests.workers import wait_for

# Each receiver its own secret.
SECRETS = {
    path: f"a-test-webhook-secret-for-{path[1:]}-of-more-than-32-bytes"
    for path in ("/cage", "/surveillance", "/fast", "/slow")
}
NOTIFICATIONS = "/api/v1/notifications"
# Short everything: a sweep a second, a retry 1 s then 2 s after a failure.
FAST = {
    "WEBHOOK_BACKOFF_SECONDS": "1",
    "WEBHOOK_TIMEOUT_SECONDS": "2",
    "OUTBOX_SWEEP_SECONDS": "1",
    "OUTBOX_RESEND_AFTER_SECONDS": "2",
    "OUTBOX_LEASE_SECONDS": "4",
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver(SECRETS)
    yield server
    server.close()


def _staff(django_user_model, name: str, role: str) -> Client:
    return token_client(person(name, role))


def _play(floor, round_id: str, seats: list[tuple[int, str]], board: str, table: int = 0):
    terminal = floor.uth[table]
    opened = terminal.post(
        "/rounds", {"round_id": round_id, "seats": [uth_seat(s) for s, _ in seats]}
    )
    assert opened.status_code == 201, opened.content
    settled = terminal.post(
        f"/rounds/{round_id}/result",
        {
            "board": board.split(),
            "dealer": ["9s", "9d"],
            "seats": [uth_play(seat, cards) for seat, cards in seats],
        },
    )
    assert settled.status_code == 200, settled.content
    return settled.json()


def _play_a_jackpot(floor, round_id: str = "r-1") -> Award:
    """A jackpot royal at seat 1 (and an envy of 50,000 cents at seat 2: under the threshold)."""
    _play(floor, round_id, [(1, "Jh Th"), (2, "4c 5c")], "Ah Kh Qh 2c 3d")
    return Award.objects.get(round__round_id=round_id, kind=AwardKind.ROYAL_FLUSH)


def _delivered(count: int):
    return lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() >= count


# --- with a real worker, a real Redis and a real receiver --------------------------------------


def test_a_jackpot_is_signed_and_delivered_after_retries_once_per_url(
    celery_worker, receiver, django_user_model
):
    floor = make_floor(uth_tables=1)
    receiver.fail("/cage", 2)  # the cage answers 500 twice, then 200
    worker = celery_worker(beat=True, **receiver.environment("/cage", "/surveillance"), **FAST)
    award = _play_a_jackpot(floor)

    wait_for(_delivered(2), within_s=30, what="both URLs acknowledged the jackpot")
    time.sleep(3)  # a few more sweeps: nothing is sent again
    cage, surveillance = receiver.at("/cage"), receiver.at("/surveillance")
    assert [request.answered for request in cage] == [500, 500, 200]
    assert [request.answered for request in surveillance] == [200]

    # Every request signed and fresh; one delivery id per URL, the same on every attempt.
    assert all(request.verified for request in receiver.received)
    assert len({request.delivery for request in cage}) == 1
    assert {request.delivery for request in surveillance}.isdisjoint({cage[0].delivery})
    assert [request.headers["Jackpot-Attempt"] for request in cage] == ["1", "2", "3"]
    assert len({request.body for request in receiver.received}) == 1  # the same bytes each time
    event = cage[0].event
    assert cage[0].headers["Jackpot-Event"] == event["id"] == f"award:{award.pk}"
    assert event["type"] == "award.jackpot_hit"
    assert event["data"] == {
        "award": award.pk,
        "sequence": award.number,
        "kind": "royal_flush",
        "jackpot": True,
        "amount_cents": award.amount_cents,
        "currency": "EUR",
        "status": "pending",
        "pool": floor.pool_id,
        "table": floor.uth[0].table_id,
        "seat": 1,
        "round": "r-1",
        "round_pk": award.round_id,
        "won_at": award.created_at.isoformat().replace("+00:00", "Z"),
    }

    # On record: the message done, each delivery's attempts and last answer.
    message = OutboxMessage.objects.get()  # the envy of 50,000 cents is under the threshold
    assert message.status == OutboxStatus.DONE
    deliveries = {d.url: d for d in WebhookDelivery.objects.all()}
    assert deliveries[receiver.url("/cage")].attempts == 3
    assert deliveries[receiver.url("/surveillance")].attempts == 1
    assert {d.last_status for d in deliveries.values()} == {200}
    worker.logged("failed, attempt 2")

    # The auditors see them: newest first, with their attempts and outcome.
    auditor = _staff(django_user_model, "ida", "auditor")
    listed = auditor.get(NOTIFICATIONS).json()
    assert listed["count"] == 2
    first = listed["results"][1]
    assert first["url"] == receiver.url("/cage") and first["attempts"] == 3
    assert first["status"] == "delivered" and first["delivery_id"] == cage[0].delivery
    assert first["event_id"] == f"award:{award.pk}" and first["delivered_at"]


def test_a_worker_killed_mid_relay_never_resends_what_was_recorded_delivered(
    celery_worker, receiver
):
    floor = make_floor(uth_tables=1)
    receiver.hold("/slow")  # the second URL does not answer until released
    env = {**FAST, **receiver.environment("/fast", "/slow"), "WEBHOOK_TIMEOUT_SECONDS": "20"}
    env |= {"OUTBOX_LEASE_SECONDS": "21", "CELERY_VISIBILITY_TIMEOUT_SECONDS": "2"}
    first = celery_worker(**env)
    _play_a_jackpot(floor)
    wait_for(lambda: receiver.at("/fast"), within_s=60, what="the fast URL got it")
    wait_for(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == 1,
        within_s=60,
        what="the fast delivery recorded",
    )
    time.sleep(0.5)  # the worker is now waiting on /slow
    first.kill()  # kill -9 in the middle of the relay
    message = OutboxMessage.objects.get()
    assert message.status == OutboxStatus.PENDING
    slow = WebhookDelivery.objects.get(url=receiver.url("/slow"))
    assert slow.status == DeliveryStatus.PENDING and slow.attempts == 1

    # Its leases run out (made short here); another worker takes the message over.
    receiver.release("/slow")
    OutboxMessage.objects.update(claimed_until=None, next_attempt_at=message.created_at)
    WebhookDelivery.objects.filter(pk=slow.pk).update(claimed_until=None)
    celery_worker(beat=True, **{**env, "OUTBOX_LEASE_SECONDS": "4", "WEBHOOK_TIMEOUT_SECONDS": "2"})
    wait_for(_delivered(2), within_s=30, what="the slow URL acknowledged it")
    wait_for(
        lambda: OutboxMessage.objects.get().status == OutboxStatus.DONE,
        within_s=60,
        what="the message done",
    )
    time.sleep(2)
    assert len(receiver.at("/fast")) == 1  # recorded delivered: never sent again
    slow_requests = receiver.at("/slow")
    # The one the killed worker sent (never recorded) and the one after: the same delivery id,
    # which the receiver dedups on (docs/api.md).
    assert len(slow_requests) == 2
    assert len({request.delivery for request in slow_requests}) == 1
    assert WebhookDelivery.objects.get(pk=slow.pk).attempts == 2


def test_redis_unreachable_rounds_settle_and_the_sweeper_drains_the_outbox_once_back(
    celery_worker, receiver, settings
):
    floor = make_floor(uth_tables=1)
    settings.OUTBOX_RESEND_AFTER_SECONDS = 2
    # Redis failed a moment ago in this web process: nothing is sent to it (core.dispatch).
    redis_circuit.failed(RuntimeError("Redis is down"))
    award = _play_a_jackpot(floor)  # the round opens and settles all the same
    _play(floor, "r-2", [(1, "8h 9h")], "Th Jh Qh 2c 3d")  # a straight flush: 150,000 cents
    messages = OutboxMessage.objects.order_by("pk")
    assert [m.key for m in messages] == [f"award:{award.pk}", f"award:{award.pk + 2}"]
    assert {m.status for m in messages} == {OutboxStatus.PENDING}
    assert not WebhookDelivery.objects.exists()
    time.sleep(1)
    assert not receiver.received

    # Redis back: beat's sweeper sends what the commit could not.
    worker = celery_worker(beat=True, **receiver.environment("/cage"), **FAST)
    # A message is marked done after its deliveries are recorded (two commits): wait for both.
    wait_for(
        lambda: (
            _delivered(2)()
            and set(OutboxMessage.objects.values_list("status", flat=True)) == {OutboxStatus.DONE}
        ),
        within_s=30,
        what="the outbox drained",
    )
    worker.logged("outbox swept: sent again")
    kinds = sorted(request.event["data"]["kind"] for request in receiver.at("/cage"))
    assert kinds == ["royal_flush", "straight_flush"]
    assert all(request.verified for request in receiver.received)


# --- in process ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_award_under_the_threshold_enqueues_nothing_and_one_at_it_does(settings):
    floor = make_floor(uth_tables=1)
    _play(floor, "r-1", [(1, "7c 7d")], "7h 7s Jd Js 4s")  # quads: 50,000 cents
    assert Award.objects.get().kind == AwardKind.FOUR_OF_A_KIND
    assert not OutboxMessage.objects.exists()

    settings.NOTIFY_AWARD_CENTS = 50_000  # at the threshold: notified
    _play(floor, "r-2", [(1, "7c 7d")], "7h 7s Jd Js 4s")
    message = OutboxMessage.objects.get()
    award = Award.objects.get(round__round_id="r-2")
    assert (message.key, message.topic) == (f"award:{award.pk}", "award.big_win")
    assert message.payload["amount_cents"] == 50_000 and message.payload["status"] == "approved"


@pytest.mark.django_db
def test_enqueue_is_once_per_key_and_rolls_back_with_the_money(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as sent, transaction.atomic():
        first = outbox.enqueue(outbox.BIG_WIN, {"award": 1}, key="award:1")
        again = outbox.enqueue(outbox.BIG_WIN, {"award": 2}, key="award:1")
    assert first is not None and again is None  # the second is a no-op, and sends nothing
    assert len(sent) == 1
    assert OutboxMessage.objects.get().payload == {"award": 1}

    with pytest.raises(RuntimeError), transaction.atomic():
        outbox.enqueue(outbox.BIG_WIN, {"award": 3}, key="award:3")
        raise RuntimeError("the money's transaction failed")
    assert list(OutboxMessage.objects.values_list("key", flat=True)) == ["award:1"]


@pytest.mark.django_db(transaction=True)
def test_the_relay_claims_retries_with_backoff_and_never_resends_a_delivered_one(
    receiver, settings
):
    settings.WEBHOOK_RECEIVERS = receiver.settings("/cage", "/surveillance")
    settings.WEBHOOK_BACKOFF_SECONDS = 60
    receiver.fail("/cage", 1)
    # A real jackpot's message: the journal's event vouches for it (jackpot.audit.outbox_journal).
    _play_a_jackpot(make_floor(uth_tables=1))
    message_id = OutboxMessage.objects.get().pk

    assert outbox.relay(message_id, vouched) == outbox.Relayed.RETRY
    cage = WebhookDelivery.objects.get(url=receiver.url("/cage"))
    assert (cage.status, cage.attempts, cage.last_status) == ("pending", 1, 500)
    assert "HTTP 500" in cage.last_error
    message = OutboxMessage.objects.get()
    # The message waits for its delivery's backoff (60 s), not less.
    assert message.next_attempt_at == cage.next_attempt_at
    assert 59 <= (cage.next_attempt_at - cage.last_attempt_at).total_seconds() <= 61
    assert outbox.sweep().resent == []  # not due

    # Due again: only the failed one is sent; the delivered one never again.
    WebhookDelivery.objects.filter(pk=cage.pk).update(next_attempt_at=cage.last_attempt_at)
    assert outbox.relay(message_id, vouched) == outbox.Relayed.DONE
    assert [len(receiver.at(path)) for path in ("/cage", "/surveillance")] == [2, 1]
    assert (
        outbox.relay(message_id, vouched) == outbox.Relayed.LEFT_ALONE
    )  # done: never relayed again
    assert WebhookDelivery.objects.get(pk=cage.pk).attempts == 2
    assert OutboxMessage.objects.get().attempts == 2


@pytest.mark.django_db(transaction=True)
def test_a_live_claim_is_left_alone_and_a_dead_one_is_taken_over(receiver, settings):
    settings.WEBHOOK_RECEIVERS = receiver.settings("/cage")
    _play_a_jackpot(make_floor(uth_tables=1))  # a real message, which its event vouches for
    message_id = OutboxMessage.objects.get().pk
    # A relay holds it (its lease has not run out): a second delivery of the task does nothing.
    OutboxMessage.objects.update(claim="00000000-0000-0000-0000-000000000001")
    OutboxMessage.objects.update(
        claimed_until=OutboxMessage.objects.get().created_at.replace(year=2999)
    )
    assert outbox.relay(message_id, vouched) == outbox.Relayed.LEFT_ALONE
    assert outbox.sweep().resent == []
    assert not receiver.received
    # Its worker died: the lease ran out; the sweeper sends it again (to the run's queue, which no
    # worker reads here) and a relay takes it over.
    OutboxMessage.objects.update(claimed_until=OutboxMessage.objects.get().created_at)
    OutboxMessage.objects.update(next_attempt_at=OutboxMessage.objects.get().created_at)
    assert outbox.sweep().resent == [message_id]
    assert outbox.sweep().resent == []  # once a period
    assert outbox.relay(message_id, vouched) == outbox.Relayed.DONE
    assert len(receiver.at("/cage")) == 1


def test_the_signature_is_hmac_sha256_over_timestamp_delivery_url_and_body():
    delivery = uuid.UUID("0b2a1a6e-58a1-4c8e-9a39-2f0b0f5d0f11")
    url = "https://cage.club.internal/hooks/jackpot"
    # printf '%s\n%s\n%s\n%s' 1700000000 0b2a1a6e-58a1-4c8e-9a39-2f0b0f5d0f11 \
    #   https://cage.club.internal/hooks/jackpot '{"a":1}' | openssl dgst -sha256 -hmac k
    signed = webhooks.signature(
        "k", timestamp=1_700_000_000, delivery_id=delivery, url=url, body=b'{"a":1}'
    )
    assert signed == "ebe1a6521b91e3a6c190983139f9a73158b0c773c65d12aececec0e3f902033d"


@pytest.mark.django_db
def test_notifications_rights_filters_and_refusals(django_user_model):
    message = OutboxMessage.objects.create(
        key="award:1",
        topic=outbox.BIG_WIN,
        payload={"award": 1},
        next_attempt_at="2026-01-01T00:00Z",
    )
    WebhookDelivery.objects.create(message=message, url="https://cage.example/hook")
    WebhookDelivery.objects.create(
        message=message,
        url="https://surveillance.example/hook",
        status=DeliveryStatus.DELIVERED,
        attempts=1,
        last_status=204,
        delivered_at="2026-01-01T00:00:01Z",
    )
    auditor = _staff(django_user_model, "ida", "auditor")
    admin = _staff(django_user_model, "ada", "admin")
    supervisor = _staff(django_user_model, "sam", "supervisor")

    everything = auditor.get(NOTIFICATIONS).json()
    assert everything["count"] == 2
    assert [d["url"] for d in everything["results"]] == [
        "https://surveillance.example/hook",
        "https://cage.example/hook",
    ]
    pending = admin.get(f"{NOTIFICATIONS}?status=pending").json()
    assert [d["status"] for d in pending["results"]] == ["pending"]
    assert pending["results"][0]["last_status"] is None
    by_url = auditor.get(NOTIFICATIONS, {"url": "https://surveillance.example/hook"}).json()
    assert by_url["count"] == 1 and by_url["results"][0]["last_status"] == 204

    assert supervisor.get(NOTIFICATIONS).status_code == 403
    assert Client().get(NOTIFICATIONS).status_code == 401
    refused = auditor.get(f"{NOTIFICATIONS}?status=lost")
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "status"
