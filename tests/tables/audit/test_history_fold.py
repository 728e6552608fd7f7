"""The pool history's day rows (tables.audit.history): the fold of the audit events, the history
read from them (stored days plus the events after the cursors), always equal to a from-scratch count
of the journal and the rows, whether the fold ran, ran part-way, or never; the full check that
names a day row edited behind the fold's back; the beat task."""

from __future__ import annotations

import threading
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection, transaction

from jackpot.awards.workflow import award_void, award_void_confirm
from jackpot.models import Account, AccountKind, Award, Transfer
from jackpot.money import locks
from tables import tasks
from tables.audit.history import fold_history, history_problems
from tables.audit.integrity import expected_awards
from tables.audit.pool_history import pool_history
from tables.bodies.history import PoolHistoryQuery
from tables.models import HistoryCursor, HistoryDay, Round, RoundSeat, RoundState
from tests.conftest import Floor, make_floor, uth_play, uth_seat
from tests.staff import person

PARIS = ZoneInfo("Europe/Paris")
DAYS = (date(2026, 3, 27), date(2026, 3, 28), date(2026, 3, 29))  # the 29th: summer time


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=PARIS)


def _open(floor: Floor, table: int, round_id: str, seats: int) -> None:
    answer = floor.uth[table].post(
        "/rounds", {"round_id": round_id, "seats": [uth_seat(s) for s in range(1, seats + 1)]}
    )
    assert answer.status_code == 201, answer.json()


def _settle(
    floor: Floor, table: int, round_id: str, board: str, dealer: str, hands: list[str]
) -> None:
    plays = [uth_play(seat, cards) for seat, cards in enumerate(hands, start=1)]
    body = {"board": board.split(), "dealer": dealer.split(), "seats": plays}
    answer = floor.uth[table].post(f"/rounds/{round_id}/result", body)
    assert answer.status_code == 200, answer.json()


def _void(floor: Floor, table: int, round_id: str) -> None:
    answer = floor.uth[table].post(f"/rounds/{round_id}/void", {"reason": "misdeal"})
    assert answer.status_code == 200, answer.json()


def _supervisor(django_user_model, name: str):
    return person(name, "supervisor")


NOTHING = ("2c 7d 9h Js 4s", "Kd Qc", ["3h 5h", "8c 8d"])
FULL_HOUSE = ("Ks Kd 7c 7h 2d", "Qs Jd", ["Kc 3s", "4c 5d", "9c 9d"])
ROYAL = ("Ah Kh Qh 2c 3d", "9s 9d", ["Jh Th", "4c 5c"])


def _play(floor: Floor, django_user_model) -> None:
    """Rounds, voids, award voids and a jackpot voided, over days and across Paris midnights
    (opened before midnight, settled after; opened after midnight, still the day before in
    UTC)."""
    ana, bob = _supervisor(django_user_model, "ana"), _supervisor(django_user_model, "bob")
    with time_machine.travel(_at(DAYS[0], 23, 59), tick=True):
        _open(floor, 0, "a1", 2)
        _settle(floor, 0, "a1", *NOTHING)
        _open(floor, 0, "a2", 3)  # settled after midnight: its stakes the 27th, settled the 28th
        _open(floor, 1, "b1", 1)  # voided after midnight: refunded on the 27th
    with time_machine.travel(_at(DAYS[1], 0, 1), tick=True):
        _settle(floor, 0, "a2", *FULL_HOUSE)
        _void(floor, 1, "b1")
        house = Award.objects.get(round__round_id="a2", kind="full_house")
        award_void(award_id=house.pk, user=ana, reason="wrong card read")  # voided on the 28th
    with time_machine.travel(_at(DAYS[1], 0, 30), tick=True):  # the 27th in UTC
        _open(floor, 0, "a3", 2)
        _settle(floor, 0, "a3", *ROYAL)
        _open(floor, 1, "b2", 4)
        _settle(floor, 1, "b2", *NOTHING[:2], ["3h 5h", "8c 8d", "Ac 6d", "Tc Td"])
    with time_machine.travel(_at(DAYS[2], 12), tick=True):
        jackpot = Award.objects.get(round__round_id="a3", kind="royal_flush")
        award_void(award_id=jackpot.pk, user=ana, reason="marked cards")
        award_void_confirm(award_id=jackpot.pk, user=bob)
        _open(floor, 0, "a4", 2)
        _settle(floor, 0, "a4", *ROYAL)  # a jackpot that stands
        _open(floor, 1, "b3", 1)  # left open


def _day(moment: datetime) -> date:
    return moment.astimezone(PARIS).date()


def _in(day: date, first: date | None, last: date | None) -> bool:
    return (first is None or day >= first) and (last is None or day <= last)


def from_scratch(pool_id: int, first: date | None, last: date | None) -> dict:
    """The history's figures counted row by row in Python from the journal and the rows."""
    meter = Account.objects.get(pool_id=pool_id, kind=AccountKind.METER)
    changes: dict[date, int] = defaultdict(int)
    for transfer in Transfer.objects.filter(pool_id=pool_id):
        if meter.pk in (transfer.credit_id, transfer.debit_id):
            sign = 1 if transfer.credit_id == meter.pk else -1
            changes[_day(transfer.created_at)] += sign * transfer.amount_cents
    closing, meter_days = 0, []
    for day in sorted(changes):
        closing += changes[day]
        if _in(day, first, last):
            meter_days.append((day.isoformat(), closing, changes[day]))
    stakes: dict[date, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    sizes: dict[int, int] = defaultdict(int)
    for found in Round.objects.filter(pool_id=pool_id):
        staked = [s.progressive_cents for s in RoundSeat.objects.filter(round=found)]
        staked = [cents for cents in staked if cents > 0]
        if not staked:
            continue
        opened = _day(found.opened_at)
        if _in(opened, first, last):
            figures = stakes[opened]
            figures[0] += len(staked)
            figures[1] += sum(staked)
            if found.state == RoundState.VOID:
                figures[2] += len(staked)
                figures[3] += sum(staked)
        if found.state == RoundState.SETTLED and _in(_day(found.closed_at), first, last):
            sizes[len(staked)] += 1
    awards: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for award in Award.objects.filter(pool_id=pool_id):
        if _in(_day(award.created_at), first, last):
            awards[award.kind][0] += 1
            awards[award.kind][1 if award.status == "void" else 2] += (
                1 if award.status == "void" else award.amount_cents
            )
    return {
        "meter": meter_days,
        "stakes": [(day.isoformat(), *stakes[day]) for day in sorted(stakes)],
        "settled_rounds": sum(sizes.values()),
        "settled_stakes": sum(size * n for size, n in sizes.items()),
        "awards": {kind: tuple(figures) for kind, figures in awards.items()},
        "expected": {
            kind: f"{e.numerator}/{e.denominator}"
            for kind, e in ((k, expected_awards(k, sizes)) for k in KINDS)
        },
    }


KINDS = ("royal_flush", "envy", "full_house", "community_royal")


def answered(pool_id: int, first: date | None, last: date | None) -> dict:
    body = pool_history(pool_id, PoolHistoryQuery(**{"from": first, "to": last})).model_dump(
        mode="json"
    )
    awards = {line["kind"]: line for line in body["awards"]}
    return {
        "meter": [(d["day"], d["closing_cents"], d["change_cents"]) for d in body["meter"]],
        "stakes": [
            (d["day"], d["count"], d["stakes_cents"], d["refunded_count"], d["refunded_cents"])
            for d in body["stakes"]
        ],
        "settled_rounds": body["settled_rounds"],
        "settled_stakes": body["settled_stakes"],
        "awards": {
            kind: (line["observed"], line["voided"], line["amount_cents"])
            for kind, line in awards.items()
            if line["observed"]
        },
        "expected": {
            kind: awards[kind]["expected"]
            for kind in ("royal_flush", "envy", "full_house", "community_royal")
        },
    }


RANGES = [
    (None, None),
    (DAYS[0], DAYS[0]),
    (DAYS[1], DAYS[1]),
    (DAYS[1], None),
    (None, DAYS[1]),
    (DAYS[2], DAYS[2]),
    (date(2026, 1, 1), date(2026, 1, 31)),
]


def assert_exact(pool_id: int) -> None:
    for first, last in RANGES:
        assert answered(pool_id, first, last) == from_scratch(pool_id, first, last), (first, last)


@pytest.mark.django_db
def test_the_history_equals_the_journal_folded_or_not(django_user_model):
    floor = make_floor(2, verification_threshold_cents=1)  # every award waits: voidable
    _play(floor, django_user_model)
    whole = from_scratch(floor.pool_id, None, None)
    # The story has what it should: two days' meters, a refund, a voided award, a jackpot's void.
    assert [day for day, *_ in whole["stakes"]] == [d.isoformat() for d in DAYS]
    assert whole["stakes"][0][3:] == (1, 500)
    assert whole["awards"]["royal_flush"] == (
        2,
        1,
        Award.objects.get(round__round_id="a4", kind="royal_flush").amount_cents,
    )
    assert whole["awards"]["full_house"] == (1, 1, 0)

    assert not HistoryDay.objects.exists()
    assert_exact(floor.pool_id)  # never folded: every event in memory
    assert history_problems() == []

    folded = fold_history(limit=7)  # part-way: some chains, part of one
    assert folded == 7
    assert_exact(floor.pool_id)
    assert history_problems() == []

    while fold_history(limit=5) == 5:
        pass
    assert fold_history() == 0  # nothing left: folding again changes nothing
    rows = list(HistoryDay.objects.order_by("pool", "day").values())
    days = [row["day"] for row in rows if row["pool_id"] == floor.pool_id]
    assert set(DAYS) < set(days)  # and the day the pool was created (its seed), today
    assert_exact(floor.pool_id)
    assert fold_history() == 0
    assert list(HistoryDay.objects.order_by("pool", "day").values()) == rows

    with time_machine.travel(_at(DAYS[2], 23, 30), tick=True):  # more after the fold
        _settle(floor, 1, "b3", "2c 7d 9h Js 4s", "Kd Qc", ["3h 5h"])
        _open(floor, 0, "a5", 3)
    assert_exact(floor.pool_id)
    assert history_problems() == []
    assert fold_history() > 0
    assert_exact(floor.pool_id)


@pytest.mark.django_db
def test_a_day_row_edited_behind_the_folds_back_is_named(django_user_model):
    floor = make_floor(2, verification_threshold_cents=1)  # every award waits: voidable
    _play(floor, django_user_model)
    tasks.fold_history()  # the beat task: everything, as many folds as it takes
    assert not HistoryCursor.objects.filter(sequence=0).exists()
    assert history_problems() == []
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE tables_historyday SET stakes_cents = stakes_cents + 1 WHERE pool_id = %s"
            " AND day = %s",
            [floor.pool_id, DAYS[1]],
        )
        cursor.execute(
            "UPDATE tables_historyday SET awards = '{}'::jsonb WHERE pool_id = %s AND day = %s",
            [floor.pool_id, DAYS[2]],
        )
    problems = history_problems()
    stakes = next(p for p in problems if "stakes_cents" in p)
    assert stakes.startswith(f"history of pool {floor.pool_id} on {DAYS[1].isoformat()}")
    assert f"on {DAYS[2].isoformat()}: awards[royal_flush].observed is 0" in " ".join(problems)


@pytest.mark.django_db(transaction=True)
def test_folds_running_at_once_fold_each_event_once(django_user_model):
    floor = make_floor(2, verification_threshold_cents=1)  # every award waits: voidable
    _play(floor, django_user_model)
    errors: list[BaseException] = []

    def fold() -> None:
        try:
            while fold_history(limit=3) == 3:
                pass
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=fold) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert fold_history() == 0
    assert history_problems() == []
    assert_exact(floor.pool_id)


@pytest.mark.django_db(transaction=True)
def test_a_fold_that_finds_another_at_work_folds_nothing_at_once(django_user_model):
    floor = make_floor(2, verification_threshold_cents=1)
    _play(floor, django_user_model)
    taken, release = threading.Event(), threading.Event()

    def another_fold() -> None:  # its own connection, holding the fold's lock
        try:
            with transaction.atomic():
                assert locks.advisory_if_free(locks.Advisory.HISTORY_FOLD)
                taken.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    other = threading.Thread(target=another_fold)
    other.start()
    assert taken.wait(timeout=30)
    try:
        # Not a wait (the lock timeout would raise): at once, nothing folded.
        assert fold_history() == 0
        assert not HistoryCursor.objects.exists()
    finally:
        release.set()
        other.join(timeout=30)
    assert fold_history() > 0


@pytest.mark.django_db
def test_the_fold_is_scheduled(settings):
    schedule = settings.CELERY_BEAT_SCHEDULE["fold-history"]
    assert schedule["task"] == "tables.fold_history"
    assert schedule["schedule"] == float(settings.HISTORY_FOLD_SECONDS) == 60.0
    assert timedelta(seconds=schedule["schedule"]) < timedelta(minutes=5)
