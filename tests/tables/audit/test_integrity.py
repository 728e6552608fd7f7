"""Integrity monitoring: an improbable run of quads at one table is flagged, the other tables
are not; a long fair floor raises no flag; the flags are stored once, listed to auditors and
supervisors, shown in the pool report; the beat task runs on a real Celery worker.

Rounds are played through the round service (the terminal's HTTP path for the planted ones;
`round_open`/`round_settle` in process, with the floor simulator's fair deals and bets, for the
long fair floor).
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from django.test import Client

from core.dispatch import send
from jackpot.models import AuditEvent, Award, AwardKind
from rules.progressive import AWARD_DEALS, TOTAL_DEALS, ProgressiveAward
from simulator.deals import plan_round
from tables.audit.integrity import check_integrity, round_probability
from tables.bodies.round_requests import parse_open, parse_result
from tables.models import Game, IntegrityFlag, RoundSeat, Table
from tables.rounds.opening import round_open
from tables.rounds.settlement import round_settle
from tests.conftest import Terminal, make_floor, uth_play, uth_seat
from tests.staff import person, token_client
from tests.workers import wait_for

QUADS = Fraction(AWARD_DEALS[ProgressiveAward.FOUR_OF_A_KIND], TOTAL_DEALS)


def staff(django_user_model, role: str) -> Client:
    return token_client(person(f"{role}-user", role))


def play_quads(terminal: Terminal, rounds: int, prefix: str = "q") -> None:
    """Rounds where seat 1 (the only progressive stake) always holds four sevens; seat 2, no
    stake, holds nothing."""
    for number in range(rounds):
        round_id = f"{prefix}-{number}"
        opened = terminal.post(
            "/rounds",
            {"round_id": round_id, "seats": [uth_seat(1), uth_seat(2, progressive=0)]},
        )
        assert opened.status_code == 201, opened.content
        settled = terminal.post(
            f"/rounds/{round_id}/result",
            {
                "board": ["7h", "7s", "2d", "Js", "4s"],
                "dealer": ["9c", "8d"],
                "seats": [uth_play(1, "7c 7d"), uth_play(2, "3c 5d", "fold")],
            },
        )
        assert settled.status_code == 200, settled.content


def play_fair(table_id: int, rounds: int, seed: int) -> None:
    """Fair rounds through the round service in process: the simulator's bets, deals and
    decisions (most seats stake the progressive)."""
    rng = random.Random(seed)
    for number in range(rounds):
        table = Table.objects.select_related("pool").get(pk=table_id)
        plan = plan_round(rng, round_id=f"f-{seed}-{number}", stake_cents=500)
        opening = parse_open(
            plan.open_body(), game=Game.UTH, seats=table.seats, progressive_stake_cents=500
        )
        round_open(table=table, request=opening, fingerprint=f"o{number}", actor="test")
        result = parse_result(plan.result_body(), game=Game.UTH, seats=table.seats)
        round_settle(
            table=table,
            round_id=plan.round_id,
            request=result,
            fingerprint=f"r{number}",
            actor="test",
        )


@pytest.mark.django_db
def test_a_planted_run_of_quads_is_flagged_at_its_table_only(django_user_model):
    floor = make_floor(3)
    rigged, fair_a, fair_b = floor.uth
    play_quads(rigged, 12)
    play_fair(fair_a.table_id, 40, seed=1)
    play_fair(fair_b.table_id, 40, seed=2)

    stored = check_integrity()

    at_tables = {(flag.table_id, flag.kind) for flag in stored if flag.table_id}
    assert at_tables == {(rigged.table_id, "four_of_a_kind")}
    # The pool as a whole holds the same quads: flagged too (its table says where).
    assert {flag.kind for flag in stored if flag.table_id is None} <= {"four_of_a_kind"}
    flag = next(flag for flag in stored if flag.table_id == rigged.table_id)
    assert (flag.rounds, flag.seats, flag.observed, flag.awards) == (12, 12, 12, 12)
    assert flag.expected == f"{(12 * QUADS).numerator}/{(12 * QUADS).denominator}"
    # 12 quads where 0.02 were expected: a tail near 1e-30 (a bound, rounded up).
    assert Fraction(flag.tail) < Fraction(1, 10**29)
    assert Fraction(flag.adjusted) < Fraction(1, 1000) == Fraction(flag.alpha)
    assert flag.family >= 2 * 3  # every (scope, kind) with something possible

    # Once only: the same rounds checked again store nothing new.
    assert check_integrity() == []
    assert IntegrityFlag.objects.filter(table_id=rigged.table_id).count() == 1
    # Each flag is the significant event SE11 once (jackpot.notifications.significant).
    alarms = AuditEvent.objects.filter(kind="integrity.award_rate")
    assert sorted(a.payload["flag"] for a in alarms) == sorted(f.pk for f in stored)

    # Listed to auditors and supervisors, newest first, filtered; shown in the pool report.
    auditor = staff(django_user_model, "auditor")
    page = auditor.get(f"/api/v1/integrity/flags?table={rigged.table_id}").json()
    assert page["count"] == 1
    (listed,) = page["results"]
    assert listed["kind"] == "four_of_a_kind"
    assert listed["table_name"] == Table.objects.get(pk=rigged.table_id).name
    assert (listed["observed"], listed["rounds"]) == (12, 12)
    assert auditor.get(f"/api/v1/integrity/flags?table={fair_a.table_id}").json()["count"] == 0
    supervisor = staff(django_user_model, "supervisor")
    assert supervisor.get("/api/v1/integrity/flags?kind=four_of_a_kind").status_code == 200
    report = auditor.get(f"/api/v1/pools/{floor.pool_id}/report").json()
    assert listed in report["integrity_flags"]


@pytest.mark.django_db
def test_the_flags_are_not_for_everyone(django_user_model):
    assert Client().get("/api/v1/integrity/flags").status_code == 401
    floor = make_floor(1)
    terminal = floor.uth[0].client()
    assert terminal.get("/api/v1/integrity/flags").status_code in (401, 403)
    bad = staff(django_user_model, "auditor").get("/api/v1/integrity/flags?kind=flush")
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "kind"


@pytest.mark.django_db
def test_a_long_fair_floor_raises_no_flag():
    floor = make_floor(4)
    for number, terminal in enumerate(floor.uth):
        play_fair(terminal.table_id, 200, seed=100 + number)

    # Thousands of stakes, and the awards they make: the test had something to count.
    assert RoundSeat.objects.filter(progressive_cents__gt=0).count() > 3_000
    assert Award.objects.filter(kind="full_house").count() > 50

    assert check_integrity() == []
    assert not IntegrityFlag.objects.exists()


def test_round_probabilities():
    p = Fraction(AWARD_DEALS[ProgressiveAward.ROYAL_FLUSH], TOTAL_DEALS)
    assert round_probability(AwardKind.ROYAL_FLUSH, 3) == 3 * p
    assert round_probability(AwardKind.ENVY, 1) == 0
    assert round_probability(AwardKind.ENVY, 7) == 7 * p
    assert round_probability(AwardKind.COMMUNITY_ROYAL, 7) == Fraction(4, 2_598_960)
    assert round_probability(AwardKind.FOUR_OF_A_KIND, 2) == 2 * QUADS


def test_the_beat_task_stores_the_flag_on_a_real_worker(celery_worker):
    floor = make_floor(2)
    play_quads(floor.uth[0], 8)
    celery_worker()

    assert send("tables.check_integrity") is True

    wait_for(
        lambda: IntegrityFlag.objects.filter(table_id=floor.uth[0].table_id).exists(),
        within_s=30,
        what="the worker's integrity check stored the flag",
    )
    flag = IntegrityFlag.objects.get(table_id=floor.uth[0].table_id)
    assert (flag.kind, flag.observed) == ("four_of_a_kind", 8)
