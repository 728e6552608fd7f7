"""The registers 8 and 8 ter agree to the cent with the journal over a story of three sessions
and two tables: stakes, voids (one across a close), a jackpot and its envy, a suspension and a
documented correction of the meter (issue 39; compliance 54 and 55).

The figures are recomputed here another way than the snapshot reads them: from the transfers
of each session's time window (the story runs one step at a time, so a window holds what the
session's cut holds), never from the events' payloads the snapshot reads.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from django.db.models import Sum
from django.test import Client

from jackpot.models import Account, AccountKind, Transfer, TransferCode
from jackpot.pools.lifecycle import pool_resume, pool_suspend
from tables.models import ClubSession, Round, RoundSeat
from tests.conftest import Floor, assert_journal_ok, uth_play, uth_seat
from tests.floor.conftest import play_hit
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

JSON = "application/json"
STAKE = (
    TransferCode.CONTRIBUTION_METER,
    TransferCode.CONTRIBUTION_RESERVE,
    TransferCode.CONTRIBUTION_HOUSE,
)


def _post(client: Client, path: str, body: dict | None = None) -> dict:
    answer = client.post(f"/api/v1{path}", body or {}, content_type=JSON)
    assert answer.status_code in (200, 201), answer.content
    return answer.json()


def _losing(terminal, round_id: str, seats: list[int]) -> None:
    """A round whose boxes win nothing of the progressive (a pair on the board at best)."""
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(s) for s in seats]})
    assert opened.status_code == 201, opened.json()
    cards = ["2c 7d", "3c 8d", "4s 9h"]
    settled = terminal.post(
        f"/rounds/{round_id}/result",
        {
            "board": ["Kd", "Qs", "5h", "6c", "Jd"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(s, cards[n]) for n, s in enumerate(seats)],
        },
    )
    assert settled.status_code == 200, settled.json()
    assert settled.json()["awards"] == []


def _opened(terminal, round_id: str, seats: list[int]) -> None:
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(s) for s in seats]})
    assert opened.status_code == 201, opened.json()


def _voided(terminal, round_id: str) -> None:
    voided = terminal.post(f"/rounds/{round_id}/void", {"reason": "misdeal"})
    assert voided.status_code == 200, voided.json()


def _recomputed(session: ClubSession, pool_id: int) -> tuple[dict, int, tuple[int, int]]:
    """Per table: (stakes, stakes_cents, voided rounds, voided_cents) from the transfers of the
    session's window; the meter account's balance at the close; the meter's corrections."""
    window = Transfer.objects.filter(
        pool_id=pool_id, created_at__gte=session.opened_at, created_at__lte=session.closed_at
    )
    figures: dict[int, list[int]] = {}
    staked = window.filter(code__in=STAKE).values("round").annotate(cents=Sum("amount_cents"))
    for row in staked:
        table = Round.objects.get(pk=row["round"]).table_id
        line = figures.setdefault(table, [0, 0, 0, 0])
        line[0] += RoundSeat.objects.filter(round_id=row["round"], progressive_cents__gt=0).count()
        line[1] += row["cents"]
    for refund in window.filter(code=TransferCode.VOID_REFUND):
        line = figures.setdefault(refund.round.table_id, [0, 0, 0, 0])
        line[2] += 1
        line[3] += refund.amount_cents
    meter = Account.objects.get(pool_id=pool_id, kind=AccountKind.METER)
    upto = Transfer.objects.filter(pool_id=pool_id, created_at__lte=session.closed_at)
    credits = upto.filter(credit=meter).aggregate(s=Sum("amount_cents"))["s"] or 0
    debits = upto.filter(debit=meter).aggregate(s=Sum("amount_cents"))["s"] or 0
    corrections = window.filter(code=TransferCode.CORRECTION)
    signed = [t.amount_cents if t.credit_id == meter.pk else -t.amount_cents for t in corrections]
    return (
        {table: tuple(line) for table, line in figures.items()},
        credits - debits,
        (len(signed), sum(signed)),
    )


def test_the_registers_are_the_journal_to_the_cent(floor: Floor):
    sue, max_, meg, ada = (
        person("sue", "supervisor"),
        person("max", "manager"),
        person("meg", "manager"),
        person("ada", "admin"),
    )
    sue_c, max_c, aud_c = (
        token_client(sue),
        token_client(max_),
        token_client(person("aud", "auditor")),
    )
    a, b = floor.uth

    # Session 1: stakes at both tables, a void, a jackpot and its envy.
    one = _post(sue_c, "/sessions")["id"]
    _losing(a, "a1", [1, 2])
    _opened(a, "a2", [1])
    _voided(a, "a2")
    play_hit(b, "b1")
    _post(sue_c, f"/sessions/{one}/close")

    # Session 2: a suspension (stakes refused, the meter still), a correction of the meter, and a
    # round still open at the close.
    two = _post(max_c, "/sessions")["id"]
    pool_suspend(pool_id=floor.pool_id, reason="meter board fault", user=ada)
    refused = a.post("/rounds", {"round_id": "a3", "seats": [uth_seat(1)]})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "pool_suspended"
    pool_resume(pool_id=floor.pool_id, reason="board replaced", user=ada)
    proposed = _post(
        sue_c,
        f"/pools/{floor.pool_id}/corrections",
        {
            "target": "meter",
            "amount_cents": 2_500,
            "reason": "the board lost 25 euros of stakes during the fault",
            "reference": "ANJ-2026-0412",
            "evidence": "ticket INC-881",
        },
    )
    _post(token_client(meg), f"/pools/{floor.pool_id}/corrections/{proposed['id']}/approve")
    _losing(b, "b2", [1, 2, 3])
    _opened(a, "a4", [1, 2])
    _post(max_c, f"/sessions/{two}/close")

    # Session 3: the round left open is voided (its refund counts here), and one more round.
    three = _post(sue_c, "/sessions")["id"]
    _voided(a, "a4")
    _losing(b, "b3", [2])
    _post(sue_c, f"/sessions/{three}/close")

    day = ClubSession.objects.get(pk=one).club_day.isoformat()
    withheld = aud_c.get(f"/api/v1/registers/withheld?from={day}&to={day}").json()
    displayed = aud_c.get(f"/api/v1/registers/displayed?from={day}&to={day}").json()
    assert [s["session"] for s in withheld["sessions"]] == [1, 2, 3]

    previous = None
    for number, session_id in enumerate((one, two, three), start=1):
        session = ClubSession.objects.get(pk=session_id)
        tables, meter, (corrections, corrected) = _recomputed(session, floor.pool_id)
        lines = next(s for s in withheld["sessions"] if s["session"] == number)["lines"]
        assert {
            line["table"]: (
                line["stakes"],
                line["stakes_cents"],
                line["voided"],
                line["voided_cents"],
            )
            for line in lines
        } == tables, number
        for line in lines:
            assert line["withheld_cents"] == line["stakes_cents"] - line["voided_cents"]
        (shown,) = next(s for s in displayed["sessions"] if s["session"] == number)["lines"]
        assert shown["displayed_cents"] == meter, number
        assert (shown["corrections"], shown["corrections_cents"]) == (corrections, corrected)
        assert shown["change_cents"] == (None if previous is None else meter - previous)
        previous = meter

    # The story's own figures, so a recomputation that drifted with the registers cannot pass.
    first = {line["table"]: line for line in withheld["sessions"][0]["lines"]}
    assert (first[a.table_id]["stakes_cents"], first[a.table_id]["voided_cents"]) == (1_500, 500)
    assert first[b.table_id]["stakes_cents"] == 1_000
    second = {line["table"]: line for line in withheld["sessions"][1]["lines"]}
    assert second[a.table_id]["withheld_cents"] == 1_000  # a4, open at the close
    third = {line["table"]: line for line in withheld["sessions"][2]["lines"]}
    assert third[a.table_id]["withheld_cents"] == -1_000  # a4's refund, after its session
    assert [s["lines"][0]["corrections_cents"] for s in displayed["sessions"]] == [0, 2_500, 0]

    # Over the three sessions the registers hold every stake the journal took and gave back.
    stakes = Account.objects.get(pool_id=floor.pool_id, kind=AccountKind.STAKES)
    taken = Transfer.objects.filter(debit=stakes).aggregate(s=Sum("amount_cents"))["s"]
    refunded = Transfer.objects.filter(credit=stakes).aggregate(s=Sum("amount_cents"))["s"]
    assert withheld["total"]["withheld_cents"] == taken - refunded == 5_500 - 1_500

    # The CSV says the same, line for line.
    exported = aud_c.get(f"/api/v1/registers/withheld?from={day}&to={day}&format=csv")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert sum(int(row["withheld_cents"]) for row in rows) == withheld["total"]["withheld_cents"]
    assert Counter(row["session"] for row in rows) == Counter({"1": 2, "2": 2, "3": 2})
    assert_journal_ok()
