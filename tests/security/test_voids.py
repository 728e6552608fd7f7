"""Attack: a terminal voids the rounds it does not like (issue 20 item 10).

A terminal alone can void its open round, and the house refunds the round's progressive stakes;
a voided round is out of the award counts. Played here through the terminals' own HTTP API: one
table voids 30% of its rounds after the bets, while the pool's two other tables void 1%. The
integrity check must raise the void alarm for that table (its shift and its window) and for no
other table; the voids must have refunded their stakes (the journal says so); and the check
itself must move nothing: the meter, the balances, the journal, the rounds stay as they were.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.test import Client

from jackpot.models import AuditEvent, Transfer, TransferCode
from simulator.deals import plan_round
from tables.audit.integrity import check_integrity
from tables.models import IntegrityFlag, Round, RoundSeat, RoundState
from tables.models import Terminal as TerminalRow
from tests.conftest import Terminal, make_floor
from tests.staff import person, token_client

PARIS = ZoneInfo("Europe/Paris")
DAY = date(2026, 11, 10)


def play(terminal: Terminal, rounds: int, voids: int, seed: int) -> None:
    """`rounds` rounds posted by the terminal, every `rounds // voids`-th of them voided after its
    bets (a "misdeal"), the others settled with fair deals."""
    rng = random.Random(seed)
    every = rounds // voids
    for number in range(rounds):
        plan = plan_round(rng, round_id=f"r-{seed}-{number}", stake_cents=500)
        opened = terminal.post("/rounds", plan.open_body())
        assert opened.status_code == 201, opened.content
        if number % every == 0 and number // every < voids:
            closed = terminal.post(f"/rounds/{plan.round_id}/void", {"reason": "misdeal"})
        else:
            closed = terminal.post(f"/rounds/{plan.round_id}/result", plan.result_body())
        assert closed.status_code == 200, closed.content


def auditor(django_user_model) -> Client:
    return token_client(person("auditor-voids", "auditor"))


@pytest.mark.django_db
def test_a_terminal_voiding_30_percent_of_its_rounds_raises_the_void_alarm(django_user_model):
    floor = make_floor(3)
    rigged, fair_a, fair_b = floor.uth
    with time_machine.travel(datetime.combine(DAY, time(17), tzinfo=PARIS), tick=True):
        play(rigged, 40, voids=12, seed=1)
        play(fair_a, 100, voids=1, seed=2)
        play(fair_b, 100, voids=1, seed=3)

    # The voids were the terminal's alone, and the house refunded each one's stakes.
    voided = Round.objects.filter(table_id=rigged.table_id, state=RoundState.VOID)
    assert voided.count() == 12
    terminal = TerminalRow.objects.get(table_id=rigged.table_id)
    assert set(voided.values_list("closed_by", flat=True)) == {f"terminal:{terminal.pk}"}
    stakes = RoundSeat.objects.filter(round__in=voided, progressive_cents__gt=0)
    refunds = Transfer.objects.filter(code=TransferCode.VOID_REFUND, round__in=voided)
    assert sorted(refunds.values_list("round_id", "amount_cents")) == sorted(
        (found.pk, 500 * stakes.filter(round=found).count())
        for found in voided
        if stakes.filter(round=found).exists()
    )

    staff = auditor(django_user_model)
    before = staff.get(f"/api/v1/pools/{floor.pool_id}/report").json()
    rows = (Transfer.objects.count(), AuditEvent.objects.count(), Round.objects.count())
    states = dict(Round.objects.values_list("pk", "state"))

    check_time = datetime.combine(DAY, time(23), tzinfo=PARIS)
    stored = check_integrity(now=check_time)

    # The alarm: that table, in its shift (16:00-24:00) and over the window; no other table.
    assert {(flag.table_id, flag.kind) for flag in stored} == {
        (rigged.table_id, "voids_in_shift"),
        (rigged.table_id, "voids_in_window"),
    }
    in_shift = next(flag for flag in stored if flag.kind == "voids_in_shift")
    assert in_shift.window_from == datetime.combine(DAY, time(16), tzinfo=PARIS)
    assert (in_shift.observed, in_shift.rounds) == (12, 40)
    assert not IntegrityFlag.objects.filter(table_id__in=(fair_a.table_id, fair_b.table_id))
    with time_machine.travel(check_time, tick=False):
        watch = staff.get(f"/api/v1/pools/{floor.pool_id}/voids").json()
    flagged = {row["table"] for row in watch["tables"] if row["window"]["flag"] is not None}
    assert flagged == {rigged.table_id}

    # The check moved nothing: the same meter, balances and stakes, no transfer, no round; its
    # only journal rows are the two alarms (the significant event SE10,
    # jackpot.notifications.significant).
    after = staff.get(f"/api/v1/pools/{floor.pool_id}/report").json()
    for figure in ("meter_cents", "reserve_cents", "house_cents", "balances", "stakes"):
        assert after[figure] == before[figure], figure
    transfers, events, rounds = rows
    counted = (Transfer.objects.count(), AuditEvent.objects.count(), Round.objects.count())
    assert counted == (transfers, events + 2, rounds)
    alarms = AuditEvent.objects.filter(kind="integrity.void_rate")
    assert sorted(a.payload["flag"] for a in alarms) == sorted(flag.pk for flag in stored)
    assert dict(Round.objects.values_list("pk", "state")) == states
    # The flags and their alarms are the check's only writes, each stored once.
    assert check_integrity(now=check_time) == []
    assert AuditEvent.objects.count() == events + 2
    assert IntegrityFlag.objects.count() == 2
