"""A round step has one entry: one durable transaction, run again by `jackpot.money.locks.retried`
alone, with its Idempotency-Key's record looked up and written inside it. On real PostgreSQL
connections: what the retry loops that used to sit in the view's path handled is still handled
(a round in progress that closed meanwhile; a key taken by a racing request), and a step cannot
be folded into someone else's transaction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction

from jackpot.models import AuditEvent, Pool
from tables.bodies.round_requests import parse_open
from tables.models import Game, IdempotencyRecord, Round, Table
from tables.rounds import replay, round_open, store
from tests.conftest import Terminal, assert_journal_ok, make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db(transaction=True)

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")],
}


def _post(terminal: Terminal, path: str, body: dict, **headers: str) -> tuple[int, dict]:
    try:
        response = terminal.post(path, body, **headers)
        return response.status_code, response.json()
    finally:
        connection.close()


def test_an_open_refused_by_a_round_that_closed_meanwhile_is_run_again(monkeypatch):
    floor = make_floor(1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    real_insert = store.insert_round
    inserts: list[str] = []

    def insert_round(*args, **kwargs):
        inserts.append("tried")
        round_pk = real_insert(*args, **kwargs)
        if round_pk is None and len(inserts) == 1:
            # r-1 is voided (and committed) between the refused INSERT and the look-up for the
            # round in progress, which so finds none.
            with ThreadPoolExecutor(max_workers=1) as executor:
                voided = executor.submit(_post, terminal, "/rounds/r-1/void", {"reason": "misdeal"})
                assert voided.result(timeout=30)[0] == 200
        return round_pk

    monkeypatch.setattr(store, "insert_round", insert_round)

    status, body = _post(terminal, "/rounds", {"round_id": "r-2", "seats": [uth_seat(2)]})

    assert (status, body["state"], body["round_id"]) == (201, "open", "r-2"), body
    assert inserts == ["tried", "tried"]  # the whole open run again, by `retried`
    assert sorted(Round.objects.values_list("round_id", "state")) == [
        ("r-1", "void"),
        ("r-2", "open"),
    ]
    assert AuditEvent.objects.filter(kind="round.opened").count() == 2
    assert_journal_ok()


def test_a_key_taken_meanwhile_by_another_request_refuses_this_one_and_keeps_nothing(
    monkeypatch,
):
    floor = make_floor(1)
    terminal = floor.uth[0]
    key = {"HTTP_IDEMPOTENCY_KEY": "k-1"}
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    settled = _post(terminal, "/rounds/r-1/result", ROYAL, **key)
    assert settled[0] == 200, settled
    meter = Pool.objects.get(pk=floor.pool_id).meter_units
    # The open below (another request, the same key) looks its key up as if the settle had not
    # committed yet, the race's window: it opens r-2, then its INSERT of the key's record fails.
    real_stored = replay._stored
    looks: list[str] = []

    def stored(*args, **kwargs):
        looks.append("looked")
        return None if len(looks) == 1 else real_stored(*args, **kwargs)

    monkeypatch.setattr(replay, "_stored", stored)

    refused = _post(terminal, "/rounds", {"round_id": "r-2", "seats": [uth_seat(2)]}, **key)

    assert refused[0] == 409, refused
    assert refused[1]["error"]["code"] == "idempotency_key_reused"
    assert looks == ["looked", "looked"]  # once before the open, once after the failed INSERT
    # The open's round, stake and event went with its savepoint: nothing of r-2 is left.
    assert list(Round.objects.values_list("round_id", "state")) == [("r-1", "settled")]
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
    assert list(IdempotencyRecord.objects.values_list("key", "response")) == [("k-1", settled[1])]
    assert Pool.objects.get(pk=floor.pool_id).meter_units == meter
    # The same request as the settle, in the same window, is given the settle's answer.
    looks.clear()
    replayed = terminal.post("/rounds/r-1/result", ROYAL, **key)
    assert (replayed.status_code, replayed.json()) == (200, settled[1])
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert_journal_ok()


def test_a_round_step_is_its_own_transaction_never_part_of_another():
    floor = make_floor(1)
    table = Table.objects.select_related("pool").get(pk=floor.uth[0].table_id)
    request = parse_open(
        {"round_id": "r-1", "seats": [uth_seat(1)]},
        game=Game.UTH,
        seats=table.seats,
        progressive_stake_cents=500,
    )

    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        round_open(table=table, request=request, fingerprint="f", actor="test")

    assert not Round.objects.exists()
    opened = round_open(table=table, request=request, fingerprint="f", actor="test")
    assert opened.answer["round_id"] == "r-1" and not opened.replayed


def test_a_keyed_open_writes_its_keys_record_before_the_pool_row_is_taken():
    """The key's record is written with the open's answer, in the statement before the one that
    takes the pool row: the row is held for that one statement and the COMMIT, key or not (no
    INSERT of the record, no RELEASE of a savepoint after it)."""
    from django.test.utils import CaptureQueriesContext

    floor = make_floor(1)
    terminal = floor.uth[0]
    with CaptureQueriesContext(connection) as queries:
        opened = terminal.post(
            "/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}, HTTP_IDEMPOTENCY_KEY="k-1"
        )
    assert opened.status_code == 201, opened.json()
    statements = [query["sql"] for query in queries.captured_queries]
    takes_the_row = [
        at for at, sql in enumerate(statements) if sql.startswith("UPDATE jackpot_pool")
    ]
    assert len(takes_the_row) == 1, statements
    at = takes_the_row[0]
    assert statements[at + 1] == "COMMIT", statements[at:]
    assert "INSERT INTO tables_idempotencyrecord" in statements[at - 1]  # with the event
    assert list(IdempotencyRecord.objects.values_list("key", "response")) == [
        ("k-1", opened.json())
    ]
    again = terminal.post(
        "/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}, HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert (again.status_code, again.json()) == (201, opened.json())
    assert again.headers["Idempotent-Replayed"] == "true"


def test_a_keyed_request_answered_by_its_rounds_replay_still_records_its_key():
    """A step that writes nothing (the round's own replay) leaves the key's record to
    `idempotent`, after it: the key then answers as the round id does."""
    floor = make_floor(1)
    terminal = floor.uth[0]
    body = {"round_id": "r-1", "seats": [uth_seat(1)]}
    first = terminal.post("/rounds", body)
    assert first.status_code == 201

    keyed = terminal.post("/rounds", body, HTTP_IDEMPOTENCY_KEY="k-late")

    assert (keyed.status_code, keyed.json()) == (201, first.json())
    assert keyed.headers["Idempotent-Replayed"] == "true"
    assert list(IdempotencyRecord.objects.values_list("key", "response")) == [
        ("k-late", first.json())
    ]
    other = terminal.post(
        "/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}, HTTP_IDEMPOTENCY_KEY="k-late"
    )
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
