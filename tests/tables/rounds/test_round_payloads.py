"""The round events' payloads and `Round.result`, pinned: what is hashed into the chain for a round.

The journal's hashes, `tables.audit.records` (which re-derives a round's row from its events),
`tables.audit.verification` and docs/accounting.md's worked example read these payloads: a change of
one key or value is a change of the chain's format, never a side effect of the wire's shape. One
pooled UTH round settled with a jackpot and an envy (seats posted out of order), one voided, and
one Stud round with a buy, through the terminal API; ids are the database's.

Each settled seat carries the best five cards the rules engine settled it with (`best_five`,
issue 23 item 3), and each award entry what the award shows of the round (its table, game, the
terminal's round id, cards and winning five: the award row's own columns, issue 23): rounds
settled before have neither, their awards are filled by jackpot's migration 0021 (the winning
five worked out once where no best five was recorded), and they still verify.
"""

from __future__ import annotations

from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.db import connection

from jackpot.audit.projections import RECORD_FIELDS
from jackpot.models import AuditEvent, Award, AwardKind
from jackpot.money.canonical import canonical_json
from tables.models import Round, Table
from tables.rounds import answers
from tests.conftest import assert_journal_ok, uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql, verify

pytestmark = pytest.mark.django_db

TERMS = {
    "paytable_version": "uth-progressive/2026-1",
    "stake_cents": 500,
    "verification_threshold_cents": 100000,
}
BETS = {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500, "trips_cents": 0}
ROYAL = ["Ah", "Kh", "Qh", "2c", "3d"]
PLAY_4X = {"action": "play", "multiple": 4, "street": "preflop"}
PLAY_RIVER = {"action": "play", "multiple": 1, "street": "river"}
STUD_DEALER = ["Ac", "Kd", "7h", "4s", "2c"]
BUY = {"action": "buy", "discard": "2h", "draw": "Qs"}
ROYAL_FIVE = ["Ah", "Kh", "Qh", "Jh", "Th"]


def _play(floor) -> None:
    uth, stud = floor.uth[0], floor.stud
    seats = [uth_seat(1), uth_seat(2, trips=500), uth_seat(3, progressive=0)]
    assert uth.post("/rounds", {"round_id": "p-1", "seats": seats}).status_code == 201
    result = {
        "board": ROYAL,
        "dealer": ["9s", "9d"],
        "seats": [
            uth_play(3, "4c 5c", "play", "river", 1),
            uth_play(1, "Jh Th"),
            uth_play(2, "2s 2d", "fold"),
        ],
    }
    assert uth.post("/rounds/p-1/result", result).status_code == 200
    assert uth.post("/rounds", {"round_id": "p-2", "seats": [uth_seat(4)]}).status_code == 201
    assert uth.post("/rounds/p-2/void", {"reason": "misdeal"}).status_code == 200
    seats = [
        {"seat": 1, "bets": {"ante_cents": 100, "bonus_cents": 100}},
        {"seat": 2, "bets": {"ante_cents": 100}},
    ]
    assert stud.post("/rounds", {"round_id": "s-1", "seats": seats}).status_code == 201
    result = {
        "dealer": STUD_DEALER,
        "seats": [
            {"seat": 2, "cards": ["9h", "9d", "5c", "4c", "2h"], "decision": BUY},
            {"seat": 1, "cards": ["Th", "Td", "8c", "8d", "3h"], "decision": {"action": "raise"}},
        ],
    }
    assert stud.post("/rounds/s-1/result", result).status_code == 200


def _payloads() -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for event in AuditEvent.objects.filter(kind__startswith="round.").order_by("pk"):
        found.setdefault(event.kind, []).append(event.payload)
    return found


def test_a_rounds_payloads_and_result_record_are_exactly_these(floor):
    _play(floor)

    uth, stud, pool = floor.uth[0].table_id, floor.stud.table_id, floor.pool_id
    p1, p2, s1 = (Round.objects.get(round_id=r).pk for r in ("p-1", "p-2", "s-1"))
    royal, envy = Award.objects.filter(round_id=p1).order_by("pk")
    uth_name = Table.objects.get(pk=uth).name
    uth_result = {
        "board": ROYAL,
        "dealer": ["9s", "9d"],
        "seats": [
            {"seat": 1, "cards": ["Jh", "Th"], "decision": PLAY_4X, "best_five": ROYAL_FIVE},
            {
                "seat": 2,
                "cards": ["2s", "2d"],
                "decision": {"action": "fold"},
                "best_five": ["2s", "2d", "2c", "Ah", "Kh"],
            },
            {
                "seat": 3,
                "cards": ["4c", "5c"],
                "decision": PLAY_RIVER,
                "best_five": ["5c", "4c", "3d", "2c", "Ah"],
            },
        ],
    }
    stud_result = {
        "board": [],
        "dealer": STUD_DEALER,
        "seats": [
            {
                "seat": 1,
                "cards": ["Th", "Td", "8c", "8d", "3h"],
                "decision": {"action": "raise"},
                "best_five": ["Th", "Td", "8d", "8c", "3h"],
            },
            {
                "seat": 2,
                "cards": ["9h", "9d", "5c", "4c", "2h"],
                "decision": BUY,
                # the hand the seat settled with: the discard out, the card bought in
                "best_five": ["9h", "9d", "Qs", "5c", "4c"],
            },
        ],
    }
    expected = {
        "round.opened": [
            {
                "table": uth,
                "pool": pool,
                "round": p1,
                "round_id": "p-1",
                "seats": [
                    {"seat": 1, "bets": BETS},
                    {"seat": 2, "bets": {**BETS, "trips_cents": 500}},
                    {"seat": 3, "bets": {**BETS, "progressive_cents": 0}},
                ],
                "progressive": {
                    "stakes": 2,
                    "stake_cents": 500,
                    "meter_cents": 200,
                    "reserve_cents": 80,
                    "house_cents": 720,
                },
                "terms": TERMS,
                "meter_version": 1,
            },
            {
                "table": uth,
                "pool": pool,
                "round": p2,
                "round_id": "p-2",
                "seats": [{"seat": 4, "bets": BETS}],
                "progressive": {
                    "stakes": 1,
                    "stake_cents": 500,
                    "meter_cents": 100,
                    "reserve_cents": 40,
                    "house_cents": 360,
                },
                "terms": TERMS,
                "meter_version": 3,
            },
            {
                "table": stud,
                "pool": None,
                "round": s1,
                "round_id": "s-1",
                "seats": [
                    {"seat": 1, "bets": {"ante_cents": 100, "bonus_cents": 100}},
                    {"seat": 2, "bets": {"ante_cents": 100, "bonus_cents": 0}},
                ],
                "progressive": None,
                "terms": None,
                "meter_version": None,
            },
        ],
        "round.settled": [
            {
                "table": uth,
                "pool": pool,
                "round": p1,
                "round_id": "p-1",
                "board": ROYAL,
                "dealer": ["9s", "9d"],
                "seats": [
                    {**uth_result["seats"][0], "net_cents": 252500},
                    {**uth_result["seats"][1], "net_cents": 500},
                    {**uth_result["seats"][2], "net_cents": 1500},
                ],
                "awards": [
                    {
                        "id": royal.pk,
                        "seat": 1,
                        "kind": "royal_flush",
                        "amount_cents": 1000200,
                        "status": "pending",
                        "sequence": 1,
                        # what the award shows of the round, as its row records it (issue 23)
                        "table_pk": uth,
                        "table_name": uth_name,
                        "game": "uth",
                        "round_name": "p-1",
                        "hole_cards": ["Jh", "Th"],
                        "board": ROYAL,
                        "winning_five": ROYAL_FIVE,
                    },
                    {
                        "id": envy.pk,
                        "seat": 2,
                        "kind": "envy",
                        "amount_cents": 50000,
                        "status": "approved",
                        "sequence": 2,
                        "table_pk": uth,
                        "table_name": uth_name,
                        "game": "uth",
                        "round_name": "p-1",
                        "hole_cards": ["2s", "2d"],
                        "board": ROYAL,
                        "winning_five": [],  # won by seat 1's cards, not its own
                    },
                ],
                "meter_version": 2,
            },
            {
                "table": stud,
                "pool": None,
                "round": s1,
                "round_id": "s-1",
                "board": [],
                "dealer": STUD_DEALER,
                "seats": [
                    {**stud_result["seats"][0], "net_cents": 400},
                    {**stud_result["seats"][1], "net_cents": 200},
                ],
                "awards": [],
                "meter_version": None,
            },
        ],
        "round.voided": [
            {
                "table": uth,
                "round": p2,
                "round_id": "p-2",
                "reason": "misdeal",
                "progressive_refund_cents": 500,
            }
        ],
    }

    payloads = _payloads()
    assert payloads == expected
    # What is hashed is the canonical JSON: the same bytes, not only equal values.
    for kind, events in expected.items():
        assert [canonical_json(p) for p in payloads[kind]] == [canonical_json(p) for p in events]
    assert [r.result for r in Round.objects.filter(pk__in=[p1, p2, s1]).order_by("pk")] == [
        uth_result,
        None,
        stud_result,
    ]


def _without_best_five(record: dict) -> dict:
    return {
        **record,
        "seats": [{k: v for k, v in seat.items() if k != "best_five"} for seat in record["seats"]],
    }


def _as_before_issue_23(payload: dict) -> dict:
    """A `round.settled` payload as it was before issue 23: no best five, and award entries
    without what the award shows of the round."""
    return {
        **_without_best_five(payload),
        "awards": [
            {k: v for k, v in award.items() if k not in RECORD_FIELDS}
            for award in payload["awards"]
        ],
    }


def test_a_round_settled_before_issue_23_is_backfilled_and_still_verifies(floor, monkeypatch):
    # Given a jackpot round settled as before issue 23 (no best five in its event or row, and
    # award entries without the grant's record), whose award rows predate the columns
    settled_event, result_record = answers.settled_event, answers.result_record
    monkeypatch.setattr(
        answers, "settled_event", lambda **kw: _as_before_issue_23(settled_event(**kw))
    )
    monkeypatch.setattr(answers, "result_record", lambda *a: _without_best_five(result_record(*a)))
    uth = floor.uth[0]
    assert uth.post("/rounds", {"round_id": "old", "seats": [uth_seat(1)]}).status_code == 201
    royal = {"board": ROYAL, "dealer": ["9s", "9d"], "seats": [uth_play(1, "Jh Th")]}
    assert uth.post("/rounds/old/result", royal).status_code == 200
    monkeypatch.undo()
    blank = {"table_pk": 0, "table_name": "", "game": "", "round_name": ""}
    superuser_sql(
        "UPDATE jackpot_award SET table_pk = 0, table_name = '', game = '', round_name = '',"
        " hole_cards = '[]', board = '[]', winning_five = '[]'"
    )
    assert Award.objects.filter(**blank).count() == 1
    # and a straight flush settled since (best five and the grant's record in its event)
    assert uth.post("/rounds", {"round_id": "new", "seats": [uth_seat(2)]}).status_code == 201
    flush = {
        "board": ["9c", "8c", "7c", "2d", "3s"],
        "dealer": ["Kd", "Ks"],
        "seats": [uth_play(2, "6c 5c")],
    }
    assert uth.post("/rounds/new/result", flush).status_code == 200

    # When the migration's backfill runs (as the database's owner: the columns are kept)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
    with connection.schema_editor(atomic=False) as editor:
        import_module("jackpot.migrations.0021_award_record").backfill(django_apps, editor)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = origin")

    # Then the old award shows its round from its own row, its winning five worked out once
    table = Table.objects.get(pk=uth.table_id)
    old = Award.objects.get(round__round_id="old", kind=AwardKind.ROYAL_FLUSH)
    assert (old.table_pk, old.table_name, old.game, old.round_name) == (
        table.pk,
        table.name,
        "uth",
        "old",
    )
    assert (old.hole_cards, old.board) == (["Jh", "Th"], ROYAL)
    assert sorted(old.winning_five) == sorted(ROYAL_FIVE)
    # and the new one kept what its grant recorded (the backfill's copy of the same)
    new = Award.objects.get(round__round_id="new")
    assert (new.round_name, new.hole_cards, new.winning_five) == (
        "new",
        ["6c", "5c"],
        ["9c", "8c", "7c", "6c", "5c"],
    )
    # and the journal verifies, each award against its own event's shape
    assert_journal_ok()
    # and the old award's cards forged in the database are found, against what its event says
    # of its seat (an old event has no award fields, but it has the seat's cards)
    superuser_sql(
        """UPDATE jackpot_award SET hole_cards = '["Ah", "Ac"]' WHERE id = %s""", [old.pk]
    )
    status, lines = verify()
    assert status == 1
    assert any(
        line.startswith(
            f"  award {old.pk}: hole_cards is ['Ah', 'Ac'], the journal says ['Jh', 'Th']"
        )
        for line in lines
    ), lines
