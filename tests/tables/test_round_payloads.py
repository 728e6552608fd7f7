"""The round events' payloads and `Round.result`, pinned: what is hashed into the chain for a round.

The journal's hashes, `tables.audit.records` (which re-derives a round's row from its events),
`tables.audit.verification` and docs/accounting.md's worked example read these payloads: a change of
one key or value is a change of the chain's format, never a side effect of the wire's shape. One
pooled UTH round settled with a jackpot and an envy (seats posted out of order), one voided, and
one Stud round with a buy, through the terminal API; ids are the database's.

Each settled seat carries the best five cards the rules engine settled it with (`best_five`,
issue 23 item 3): rounds settled before have none, and they still verify and still show their
award's winning five (evaluated then, as before).
"""

from __future__ import annotations

import pytest

from jackpot import render
from jackpot.canonical import canonical_json
from jackpot.models import AuditEvent, Award, AwardKind
from tables.models import Round
from tables.rounds import answers
from tests.conftest import assert_journal_ok, uth_play, uth_seat

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
                    },
                    {
                        "id": envy.pk,
                        "seat": 2,
                        "kind": "envy",
                        "amount_cents": 50000,
                        "status": "approved",
                        "sequence": 2,
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


def test_a_round_settled_before_the_best_five_were_recorded_still_verifies_and_shows_them(
    floor, monkeypatch
):
    # Given a jackpot round settled as before issue 23 item 3 (no best five in its event or row)
    settled_event, result_record = answers.settled_event, answers.result_record
    monkeypatch.setattr(
        answers, "settled_event", lambda **kw: _without_best_five(settled_event(**kw))
    )
    monkeypatch.setattr(answers, "result_record", lambda *a: _without_best_five(result_record(*a)))
    uth = floor.uth[0]
    assert uth.post("/rounds", {"round_id": "old", "seats": [uth_seat(1)]}).status_code == 201
    royal = {"board": ROYAL, "dealer": ["9s", "9d"], "seats": [uth_play(1, "Jh Th")]}
    assert uth.post("/rounds/old/result", royal).status_code == 200
    monkeypatch.undo()
    # and a straight flush settled since (best five recorded)
    assert uth.post("/rounds", {"round_id": "new", "seats": [uth_seat(2)]}).status_code == 201
    flush = {
        "board": ["9c", "8c", "7c", "2d", "3s"],
        "dealer": ["Kd", "Ks"],
        "seats": [uth_play(2, "6c 5c")],
    }
    assert uth.post("/rounds/new/result", flush).status_code == 200

    # Then the journal verifies, each round's row against its own event's shape
    assert_journal_ok()
    old = Award.objects.select_related("round").get(
        round__round_id="old", kind=AwardKind.ROYAL_FLUSH
    )
    new = Award.objects.select_related("round").get(round__round_id="new")
    assert "best_five" not in old.round.result["seats"][0]
    assert new.round.result["seats"][0]["best_five"] == ["9c", "8c", "7c", "6c", "5c"]
    # and the old round's winning five is evaluated, the new one's read, never evaluated again
    assert sorted(render.winning_five(old, *render.dealt_cards(old))) == sorted(ROYAL_FIVE)

    def refuse(*_args, **_kwargs):
        raise AssertionError("the winning five of a round that recorded them is not evaluated")

    monkeypatch.setattr(render, "evaluate", refuse)
    assert render.winning_five(new, *render.dealt_cards(new)) == ["9c", "8c", "7c", "6c", "5c"]
