"""A round keeps the terms it opened with; a table closed mid-round does not strand its round
(issue 20, items 2 and 3).

Two admins who close a table with a round open cannot approve a change of its pool's threshold
until the round is finished (its paytable never changes: compliance 56); an insider who rewrites
the pool's row in the database between a round's open and its result does not change what the
round pays; closing a table stops new rounds, and its terminal still settles or voids the round in
progress. After each refusal, what did not change is asserted too.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest
from django.db import connection
from django.test import Client

from jackpot.models import AuditEvent, Award, ParameterChange, Pool
from rules import paytables
from rules.paytables import CURRENT, ProgressiveSchedule
from tables.audit.verification import verify_full
from tables.models import Round, RoundState, Table
from tests.conftest import Floor, uth_play, uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db

#: Another progressive paytable, every line different from the current one.
OTHER = ProgressiveSchedule(
    version="uth-progressive/test-other",
    straight_flush_cents=20_000,
    four_of_a_kind_cents=30_000,
    full_house_cents=7_500,
    envy_cents=40_000,  # no envy here (only a jackpot pays it), but no line left the same
)
#: Seat 1 a straight flush (9c high), seat 2 a full house (kings over sevens).
RESULT = {
    "board": ["5c", "6c", "7c", "Kd", "7h"],
    "dealer": ["2d", "3s"],
    "seats": [uth_play(1, "8c 9c"), uth_play(2, "Kc Ks")],
}
#: What that result pays with the terms the rounds open with here: the current paytable, a
#: threshold of 1,000 EUR (the straight flush waits for a supervisor).
PAID = [
    (1, "straight_flush", CURRENT.progressive.straight_flush_cents, "pending"),
    (2, "full_house", CURRENT.progressive.full_house_cents, "approved"),
]


@pytest.fixture(autouse=True)
def other_paytable(monkeypatch):
    monkeypatch.setattr(
        paytables,
        "PROGRESSIVE_PAYTABLES",
        MappingProxyType({**paytables.PROGRESSIVE_PAYTABLES, OTHER.version: OTHER}),
    )


@pytest.fixture
def admins(django_user_model) -> dict[str, Client]:
    return api_clients(ana="admin", bob="admin")


def _set_table(admin: Client, table: int, enabled: bool) -> dict:
    response = admin.patch(
        f"/api/v1/tables/{table}", {"enabled": enabled}, content_type="application/json"
    )
    assert response.status_code == 200, response.json()
    return response.json()


def _close_all(admin: Client, floor: Floor) -> None:
    for terminal in floor.uth:
        _set_table(admin, terminal.table_id, False)


def _open(floor: Floor, round_id: str = "r-1", table: int = 0) -> None:
    seats = [uth_seat(1), uth_seat(2)]
    response = floor.uth[table].post("/rounds", {"round_id": round_id, "seats": seats})
    assert response.status_code == 201, response.json()


def _terms(pool_id: int) -> tuple:
    return Pool.objects.filter(pk=pool_id).values_list(
        "stake_cents", "paytable_version", "verification_threshold_cents", "meter_units"
    )[0]


def _journal_problems() -> list[str]:
    """What the journal's full check finds."""
    return verify_full().problems


def _paid(body: dict) -> list[tuple]:
    return [(a["seat"], a["kind"], a["amount_cents"], a["status"]) for a in body["awards"]]


def test_two_admins_cannot_change_a_pools_terms_under_a_round_left_open(admins, floor):
    """(a) A round open, its table closed: proposed by one admin, approved by another, the
    change of threshold is refused while the round is open, applied once it is
    settled; the round settled with the terms it opened with."""
    _open(floor)
    _close_all(admins["ana"], floor)
    proposed = admins["ana"].post(
        f"/api/v1/pools/{floor.pool_id}/changes",
        {
            "changes": {"verification_threshold_cents": 10**9},
            "reason": "a higher threshold",
        },
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.json()
    change = proposed.json()["id"]
    before = _terms(floor.pool_id)
    events = AuditEvent.objects.count()

    refused = admins["bob"].post(
        f"/api/v1/pools/{floor.pool_id}/changes/{change}/approve",
        {},
        content_type="application/json",
    )

    assert refused.status_code == 409, refused.json()
    error = refused.json()["error"]
    assert (error["code"], error["param"]) == ("pool_round_open", "change")
    table_name = Table.objects.get(pk=floor.uth[0].table_id).name
    assert f"{table_name} round 'r-1'" in error["message"]
    # Nothing changed: the pool, the proposal, the journal, the round.
    assert _terms(floor.pool_id) == before
    assert ParameterChange.objects.get(pk=change).status == "proposed"
    assert AuditEvent.objects.count() == events
    assert not AuditEvent.objects.filter(kind="pool.changed").exists()
    assert Round.objects.get(round_id="r-1").state == RoundState.OPEN

    # The closed table's terminal settles its round, with the terms it opened with ...
    settled = floor.uth[0].post("/rounds/r-1/result", RESULT)
    assert settled.status_code == 200, settled.json()
    assert _paid(settled.json()) == PAID
    # ... and then the change is approved; the next round opens with the new terms.
    approved = admins["bob"].post(
        f"/api/v1/pools/{floor.pool_id}/changes/{change}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.json()
    _set_table(admins["ana"], floor.uth[0].table_id, True)
    _open(floor, "r-2")
    assert Round.objects.get(round_id="r-2").verification_threshold_cents == 10**9
    after = floor.uth[0].post("/rounds/r-2/result", RESULT)
    assert _paid(after.json()) == [
        (1, "straight_flush", CURRENT.progressive.straight_flush_cents, "approved"),
        (2, "full_house", CURRENT.progressive.full_house_cents, "approved"),
    ]
    assert _journal_problems() == []


def test_a_pool_rewritten_in_the_database_does_not_reach_a_round_already_open(floor):
    """(b) An insider with write access to the database (no journal key) rewrites the pool's
    paytable, threshold and stake between a round's open and its result: the round pays what it
    opened with, the straight flush still waits for a supervisor, and the journal's check names
    the pool's rewritten parameters."""
    _open(floor)
    opened = AuditEvent.objects.get(kind="round.opened")
    assert opened.payload["terms"] == {
        "stake_cents": 500,
        "paytable_version": CURRENT.progressive.version,
        "verification_threshold_cents": 100_000,
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET paytable_version = %s, verification_threshold_cents = %s,"
            " stake_cents = 700 WHERE id = %s",
            [OTHER.version, 10**9, floor.pool_id],
        )

    settled = floor.uth[0].post("/rounds/r-1/result", RESULT)

    assert settled.status_code == 200, settled.json()
    assert _paid(settled.json()) == PAID
    assert settled.json()["seats"][0]["progressive"]["stake_cents"] == 500
    awards = Award.objects.order_by("number").values_list("kind", "amount_cents", "status")
    assert [tuple(a) for a in awards] == [(kind, cents, status) for _, kind, cents, status in PAID]
    # The round's record is the one it opened with, whatever the pool's row says now.
    found = Round.objects.get(round_id="r-1")
    assert (found.stake_cents, found.paytable_version, found.verification_threshold_cents) == (
        500,
        CURRENT.progressive.version,
        100_000,
    )
    rewritten = {p.split(" is ")[0] for p in verify_full().problems}
    assert rewritten == {
        f"pool {floor.pool_id}: {field}"
        for field in ("stake_cents", "paytable_version", "verification_threshold_cents")
    }


def test_a_table_closed_mid_round_still_settles_or_voids_it_and_opens_no_other(admins, floor):
    """(c) Closing a table with a round in progress is accepted; its terminal then posts the
    round's result (200) or voids another one (200), reads its rounds, and opens no new one."""
    _open(floor, "r-1", table=0)
    _open(floor, "v-1", table=1)
    closed = _set_table(admins["ana"], floor.uth[0].table_id, False)
    assert (closed["enabled"], closed["open_rounds"]) == (False, 1)
    _set_table(admins["ana"], floor.uth[1].table_id, False)

    settled = floor.uth[0].post("/rounds/r-1/result", RESULT)
    voided = floor.uth[1].post("/rounds/v-1/void", {"reason": "table closed by the pit boss"})
    listed = floor.uth[0].client().get(f"/api/v1/tables/{floor.uth[0].table_id}/rounds")

    assert settled.status_code == 200, settled.json()
    assert _paid(settled.json()) == PAID
    assert voided.status_code == 200, voided.json()
    assert voided.json()["progressive_refund_cents"] == 1_000
    assert listed.status_code == 200
    assert [r["state"] for r in listed.json()["results"]] == ["settled"]

    rounds, events, meter = Round.objects.count(), AuditEvent.objects.count(), _terms(floor.pool_id)
    refused = floor.uth[0].post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    assert refused.status_code == 403, refused.json()
    assert refused.json()["error"]["code"] == "permission_denied"
    # Nothing opened, nothing staked, nothing journaled.
    assert (Round.objects.count(), AuditEvent.objects.count()) == (rounds, events)
    assert _terms(floor.pool_id) == meter
    assert not Round.objects.filter(round_id="r-2").exists()
    assert _journal_problems() == []


def test_an_open_round_s_own_terms_rewritten_in_the_database_are_reported(floor):
    """The round's row is where its terms live once it opened: an insider who rewrites them
    there (a lower threshold, so a big award is approved at once) is named by the journal's
    check, which holds them to the `round.opened` event's `terms`."""
    _open(floor)
    found = Round.objects.get(round_id="r-1")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE tables_round SET verification_threshold_cents = 1 WHERE id = %s", [found.pk]
        )
    opened = AuditEvent.objects.get(kind="round.opened")
    assert _journal_problems() == [
        f"round {found.pk} (chain {opened.chain} sequence {opened.sequence}): the row's"
        " verification_threshold_cents differ from its events"
    ]
    assert opened.payload["terms"]["verification_threshold_cents"] == 100_000  # the record stands
