"""Every entry says when, in what order, who and where: requirements 31 and 44.

- 31: after a floor's play (rounds opened, settled with a jackpot, voided; the jackpot verified,
  approved and paid by two supervisors), every audit event and every transfer carries the
  server's UTC time, a gapless sequence number in its chain, the actor (a terminal, a user, or
  the fixture's `test` for the pool and tables it made) and the table where there is one: a
  round's events name the table of their chain, an award's events its round, whose table is
  recorded; each transfer is of its event (same time, actor, and the same round).
- 44: terminals cannot supply times: a timestamp in a body is refused naming the field, a Date
  header is ignored; answers, rows and events carry the server's time, and order is the chain's
  sequence.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jackpot.models import AuditEvent, Transfer
from tables.models import Round
from tests.conftest import uth_play, uth_seat
from tests.staff import person, surveilled, token_client
from tests.winners import PAY

pytestmark = pytest.mark.django_db

ACTOR = re.compile(r"^(terminal:\d+|user:[\w.@+-]+|test)$")
ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
}


def _staff(django_user_model, name: str) -> Client:
    return token_client(person(name, "supervisor"))


def test_every_entry_carries_server_utc_time_sequence_actor_and_table(floor, django_user_model):
    started = timezone.now()
    first, second = floor.uth
    seats = [uth_seat(1), uth_seat(2)]
    assert first.post("/rounds", {"round_id": "r-1", "seats": seats}).status_code == 201
    assert second.post("/rounds", {"round_id": "q-1", "seats": seats}).status_code == 201
    settled = first.post("/rounds/r-1/result", ROYAL)
    assert settled.status_code == 200
    assert second.post("/rounds/q-1/void", {"reason": "misdeal"}).status_code == 200
    jackpot = settled.json()["awards"][0]["id"]
    ana, bob = _staff(django_user_model, "ana"), _staff(django_user_model, "bob")
    surveilled(jackpot)  # the pool requires surveillance's video review (by sam) before approval
    for client, step, body in (
        (ana, "verify", {"note": "video checked"}),
        (bob, "approve", {}),
        (ana, "pay", PAY),
    ):
        response = client.post(f"/api/v1/awards/{jackpot}/{step}", body, "application/json")
        assert response.status_code == 200, response.json()
    finished = timezone.now()

    events = list(AuditEvent.objects.order_by("pk"))
    assert {e.kind for e in events} >= {
        "pool.created",
        "round.opened",
        "round.settled",
        "round.voided",
        "award.verified",
        "award.reviewed",
        "award.approved",
        "award.paid",
    }
    by_chain: dict[str, list[AuditEvent]] = {}
    for event in events:
        by_chain.setdefault(event.chain, []).append(event)
        # Server time, in UTC, from this run (not a time any client sent).
        assert event.occurred_at.utcoffset() == timedelta(0)
        assert started - timedelta(minutes=5) <= event.occurred_at <= finished, event
        assert ACTOR.match(event.actor), event.actor
        table_chain = re.fullmatch(r"table-(\d+)", event.chain)
        if table_chain:
            # A round's event names its table: the chain's.
            assert event.payload["table"] == int(table_chain.group(1)), event
            assert event.actor == f"terminal:{_terminal_of(int(table_chain.group(1)))}"
        elif event.kind.startswith("award."):
            # An award's event names its round, and the round its table.
            assert Round.objects.get(pk=event.payload["round"]).table_id == first.table_id
            assert event.actor in ("user:ana", "user:bob", "user:sam")
    # Monotonic: each chain's sequence is 1, 2, 3, ... in the order written.
    for chain, chain_events in by_chain.items():
        assert [e.sequence for e in chain_events] == list(range(1, len(chain_events) + 1)), chain
        times = [e.occurred_at for e in chain_events]
        assert times == sorted(times), chain

    transfers = list(Transfer.objects.select_related("event", "round"))
    assert transfers
    for transfer in transfers:
        event = transfer.event
        assert transfer.created_at == event.occurred_at  # its event's time, actor and sequence
        if transfer.round is not None:
            if event.chain.startswith("table-"):
                assert event.chain == f"table-{transfer.round.table_id}"
            else:
                assert event.payload["round"] == transfer.round_id
        else:  # the pool's seed: the pool's own event, no table
            assert (transfer.code, event.kind) == ("pool_seed", "pool.created")


def _terminal_of(table_id: int) -> int:
    from tables.models import Terminal

    return Terminal.objects.get(table_id=table_id).pk


@pytest.mark.parametrize("field", ["opened_at", "timestamp", "terminal_time"])
def test_a_terminal_cannot_supply_a_time(floor, field):
    body = {"round_id": "r-1", "seats": [uth_seat(1)], field: "1999-01-01T00:00:00Z"}
    response = floor.uth[0].post("/rounds", body)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == field
    assert not Round.objects.exists()


def test_times_and_order_are_the_servers_whatever_the_terminal_clock(floor):
    terminal = floor.uth[0]
    before = timezone.now()
    stale_clock = {"HTTP_DATE": "Fri, 01 Jan 1999 00:00:00 GMT"}
    for number in range(3):
        opened = terminal.post(
            "/rounds", {"round_id": f"r-{number}", "seats": [uth_seat(1)]}, **stale_clock
        )
        assert opened.status_code == 201
        voided = terminal.post(f"/rounds/r-{number}/void", {"reason": "m"}, **stale_clock)
        assert voided.status_code == 200
    after = timezone.now()
    answer_time = datetime.fromisoformat(opened.json()["opened_at"])
    assert answer_time.tzinfo is not None and before <= answer_time.astimezone(UTC) <= after
    for found in Round.objects.all():
        assert before <= found.opened_at <= found.closed_at <= after
    events = list(
        AuditEvent.objects.filter(chain=f"table-{terminal.table_id}").order_by("sequence")
    )
    assert [e.kind for e in events][-6:] == ["round.opened", "round.voided"] * 3
    assert [e.payload["round_id"] for e in events][-6:] == [
        "r-0", "r-0", "r-1", "r-1", "r-2", "r-2"
    ]  # fmt: skip
    assert all(before <= e.occurred_at <= after for e in events[-6:])
