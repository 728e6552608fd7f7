"""The void watch (tables.selectors.voids) among the integrity signals: shifts as the club day's
thirds, a table voiding far more than the pool's other tables in a shift flagged for that shift and
for the window (once), the others not; a table with too few rounds left out; the counts and flags
over the API; the reads bounded by the window and its index.

Rounds go through the round service in process (`round_open`, then `round_settle` with the
floor simulator's fair deals, or `round_void`), with the service's clock moved (time-machine).
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection, transaction
from django.test import Client

from jackpot.models import AuditEvent
from simulator.deals import plan_round
from tables.audit.integrity import check_integrity
from tables.bodies.integrity import VoidWatch
from tables.bodies.round_requests import parse_open, parse_result
from tables.models import Game, IntegrityFlag, RoundState, Table
from tables.rounds.opening import round_open
from tables.rounds.settlement import round_settle
from tables.rounds.voiding import round_void
from tables.selectors.voids import Shift, read_window, shift_of, window_reads, window_shifts
from tests.conftest import make_floor
from tests.staff import person, token_client

PARIS = ZoneInfo("Europe/Paris")
DAY = date(2026, 11, 10)


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=PARIS)


def play(table_id: int, rounds: int, voids: int, seed: int, prefix: str = "v") -> int:
    """`rounds` rounds at the table, the first `voids` of them voided by the terminal (after
    their bets), the rest settled with fair deals; the progressive stakes the voids refunded."""
    rng = random.Random(seed)
    table = Table.objects.select_related("pool").get(pk=table_id)
    refunded = 0
    for number in range(rounds):
        plan = plan_round(rng, round_id=f"{prefix}-{seed}-{number}", stake_cents=500)
        opening = parse_open(
            plan.open_body(), game=Game.UTH, seats=table.seats, progressive_stake_cents=500
        )
        round_open(table=table, request=opening, fingerprint=f"o{number}", actor="test")
        if number < voids:
            voided = round_void(
                table=table,
                round_id=plan.round_id,
                reason="misdeal",
                fingerprint=f"v{number}",
                actor=f"terminal:{table_id}",
            )
            refunded += sum(1 for seat in plan.seats if seat.progressive_cents)
            assert voided.answer["state"] == "void" and not voided.replayed
            continue
        result = parse_result(plan.result_body(), game=Game.UTH, seats=table.seats)
        round_settle(
            table=table, round_id=plan.round_id, request=result, fingerprint=f"r{number}", actor="t"
        )
    return refunded


def staff(django_user_model, role: str) -> Client:
    return token_client(person(f"{role}-voids", role))


def test_shifts_cut_the_club_day_at_midnight_8_and_16_local_time(settings):
    assert settings.SHIFT_HOURS == 8
    assert shift_of(at(DAY, 7, 59), PARIS) == Shift(DAY, 0)
    assert shift_of(at(DAY, 8), PARIS) == Shift(DAY, 1)
    assert shift_of(at(DAY, 23, 59), PARIS) == Shift(DAY, 2)
    assert Shift(DAY, 2).end(PARIS) == at(DAY + timedelta(days=1), 0)
    assert Shift(DAY, 0).before() == Shift(DAY - timedelta(days=1), 2)
    # The night the clocks go back (25 October 2026 in Paris), the first shift lasts 9 hours.
    autumn = Shift(date(2026, 10, 25), 0)
    assert autumn.end(PARIS).astimezone(UTC) - autumn.start(PARIS) == timedelta(hours=9)
    # The window: the last 21 shifts (a week), the current one last.
    shifts = window_shifts(at(DAY, 10), PARIS)
    assert len(shifts) == settings.INTEGRITY_VOID_SHIFTS == 21
    assert (shifts[0], shifts[-1]) == (Shift(DAY - timedelta(days=7), 2), Shift(DAY, 1))


@pytest.mark.django_db
def test_a_table_voiding_far_more_than_the_others_is_flagged_in_its_shift_and_window(
    django_user_model,
):
    floor = make_floor(3)
    rigged, fair_a, fair_b = (terminal.table_id for terminal in floor.uth)
    with time_machine.travel(at(DAY, 9), tick=True):
        refunded = play(rigged, 40, voids=12, seed=1)  # 30%
        play(fair_a, 100, voids=1, seed=2)  # 1%
        play(fair_b, 100, voids=1, seed=3)
    now = at(DAY, 15)

    stored = check_integrity(now=now)

    assert {(flag.table_id, flag.kind) for flag in stored} == {
        (rigged, "voids_in_shift"),
        (rigged, "voids_in_window"),
    }
    in_shift = next(flag for flag in stored if flag.kind == "voids_in_shift")
    # 12 voids in 40 rounds, where the shift's 14 voids in 240 rounds made 40 x 14 / 240 likely.
    assert (in_shift.rounds, in_shift.observed, in_shift.seats, in_shift.awards) == (
        40,
        12,
        refunded,
        0,
    )
    assert Fraction(in_shift.expected) == Fraction(40 * 14, 240)
    assert (in_shift.window_from, in_shift.window_to) == (at(DAY, 8), now)
    assert Fraction(in_shift.tail) < Fraction(1, 10**5)
    assert Fraction(in_shift.adjusted) < Fraction(in_shift.alpha) == Fraction(1, 1000)
    in_window = next(flag for flag in stored if flag.kind == "voids_in_window")
    assert in_window.window_from == at(DAY - timedelta(days=7), 16)
    assert (in_window.rounds, in_window.observed) == (40, 12)

    # Once only: the same rounds checked again store nothing new.
    assert check_integrity(now=now) == []
    assert IntegrityFlag.objects.count() == 2
    # Each flag is the significant event SE10 once, naming its table and pool
    # (jackpot.notifications.significant).
    alarms = AuditEvent.objects.filter(kind="integrity.void_rate").order_by("pk")
    assert sorted(a.payload["flag"] for a in alarms) == sorted(f.pk for f in stored)
    assert {(a.payload["table"], a.payload["pool"]) for a in alarms} == {(rigged, floor.pool_id)}

    # Over the API: the pool's voids by table and shift, each cell's latest flag, the flags.
    auditor = staff(django_user_model, "auditor")
    with time_machine.travel(now, tick=False):
        answer = auditor.get(f"/api/v1/pools/{floor.pool_id}/voids")
    assert answer.status_code == 200, answer.content
    watch = answer.json()
    VoidWatch.model_validate_json(answer.content)
    assert (watch["shift_hours"], watch["min_rounds"], len(watch["shifts"])) == (8, 30, 21)
    assert watch["shifts"][-1]["start"] == at(DAY, 8).isoformat()
    assert (watch["shifts"][-1]["rounds"], watch["shifts"][-1]["voids"]) == (240, 14)
    rows = {row["table"]: row for row in watch["tables"]}
    assert set(rows) == {rigged, fair_a, fair_b}
    cell = rows[rigged]["shifts"][-1]
    assert (cell["rounds"], cell["voids"], cell["expected"], cell["flag"]) == (
        40,
        12,
        "2.33",
        in_shift.pk,
    )
    assert cell["refunded_stakes"] == refunded
    assert cell["refunded_cents"] == 500 * refunded
    assert rows[rigged]["window"]["flag"] == in_window.pk
    assert rows[rigged]["shifts"][:-1] == [None] * 20
    assert rows[fair_a]["shifts"][-1]["flag"] is None
    assert {flag["id"] for flag in watch["flags"]} == {in_shift.pk, in_window.pk}
    listed = auditor.get("/api/v1/integrity/flags?kind=voids_in_shift").json()
    assert [flag["id"] for flag in listed["results"]] == [in_shift.pk]
    assert (
        staff(django_user_model, "supervisor")
        .get(f"/api/v1/pools/{floor.pool_id}/voids")
        .status_code
        == 200
    )
    missing = auditor.get("/api/v1/pools/999999/voids")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "pool_not_found")
    assert floor.uth[0].client().get(f"/api/v1/pools/{floor.pool_id}/voids").status_code in (
        401,
        403,
    )
    assert Client().get(f"/api/v1/pools/{floor.pool_id}/voids").status_code == 401


@pytest.mark.django_db
def test_too_few_rounds_or_a_table_alone_are_not_tested(settings):
    floor = make_floor(2)
    alone, few = (terminal.table_id for terminal in floor.uth)
    with time_machine.travel(at(DAY, 1), tick=True):
        play(alone, 40, voids=30, seed=4)  # alone in its shift: nothing to compare with
    with time_machine.travel(at(DAY, 9), tick=True):
        play(alone, 60, voids=0, seed=5)
        play(few, 29, voids=29, seed=6)  # one round short of INTEGRITY_VOID_MIN_ROUNDS

    assert check_integrity(now=at(DAY, 15)) == []

    settings.INTEGRITY_VOID_MIN_ROUNDS = 29
    flagged = check_integrity(now=at(DAY, 15))
    assert {(flag.table_id, flag.kind) for flag in flagged} == {
        (few, "voids_in_shift"),
        (few, "voids_in_window"),
    }


@pytest.mark.django_db
def test_the_watch_reads_only_its_window_through_the_rounds_index():
    floor = make_floor(2)
    rigged, fair = (terminal.table_id for terminal in floor.uth)
    # A week and a day ago, the rigged table voided every other round: out of today's window.
    with time_machine.travel(at(DAY - timedelta(days=8), 9), tick=True):
        play(rigged, 40, voids=20, seed=7, prefix="old")
        play(fair, 40, voids=0, seed=8, prefix="old")
    with time_machine.travel(at(DAY, 9), tick=True):
        play(rigged, 40, voids=1, seed=9)
        play(fair, 40, voids=1, seed=10)
        # A round still open counts once decided, not before.
        table = Table.objects.select_related("pool").get(pk=fair)
        plan = plan_round(random.Random(11), round_id="still-open", stake_cents=500)
        opening = parse_open(plan.open_body(), game=Game.UTH, seats=7, progressive_stake_cents=500)
        round_open(table=table, request=opening, fingerprint="open", actor="test")
    assert table.rounds.filter(state=RoundState.OPEN).count() == 1

    window = read_window(now=at(DAY, 15))
    pool = window.pools[floor.pool_id]
    counted = {
        table: (sum(c.rounds for c in cells.values()), sum(c.voids for c in cells.values()))
        for table, cells in pool.cells.items()
    }
    assert counted == {rigged: (40, 1), fair: (40, 1)}
    assert check_integrity(now=at(DAY, 15)) == []

    # Both reads are ranges of the index on opened_at (sequential scans off: the planner would
    # pick them on so few rows).
    rounds, seats = window_reads(window.start, window.now)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for query in (rounds, seats):
            plan = query.explain()
            assert "opened_at" in plan and "Index" in plan, plan
