"""The liability rolls forward over a pool's life (issue 40 follow-up): a period holding a stop to
orphans, a stop into another pool, a replacement, a recovery of orphans or orphans made final
shows what left or entered the owed figure (`period.life`), and the owed figure at its end is the
one at its start moved by the period's figures, to the cent, on every pool concerned.

Each period holds no play (no stakes, no awards): its other entries are named where there is
one (the new pool's seed). Time runs with time_machine; no entry falls on a period's bounds."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from jackpot.bodies.liability import Liability
from jackpot.models import Pool, Transfer
from jackpot.pools import lifecycle, orphans, replacement
from jackpot.pools.corrections import correction_approve, correction_propose
from jackpot.reporting.liability import pool_liability
from jackpot.reporting.statements import liability_csv, liability_pdf
from tables.models import Table
from tables.services import table_update
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import person

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=PARIS)


@pytest.fixture
def cast(django_user_model) -> dict:
    return {
        "ana": person("ana", "admin"),
        "bob": person("bob", "admin"),
        "sue": person("sue", "supervisor"),
        "max": person("max", "manager"),
        "meg": person("meg", "manager"),
    }


def _figures(pool_id: int, cast: dict, meter: int, reserve: int) -> None:
    """The pool's meter and reserve raised to these figures by documented corrections."""
    row = Pool.objects.get(pk=pool_id)
    for target, amount in (("meter", meter - row.meter_cents), ("reserve", reserve)):
        change = correction_propose(
            pool_id=pool_id,
            target=target,
            award_id=None,
            amount_cents=amount,
            reason="figures of the test",
            reference="EX-1",
            evidence="the test",
            user=cast["max"],
        )
        correction_approve(pool_id=pool_id, change_id=change.pk, user=cast["meg"])


def _closed(pool_id: int) -> None:
    for table in Table.objects.filter(pool_id=pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")


def _stop(pool_id: int, cast: dict, to_pool: int | None = None) -> None:
    change = lifecycle.pool_stop_propose(
        pool_id=pool_id,
        to="orphan" if to_pool is None else "pool",
        to_pool=to_pool,
        reason="panne du pupitre",
        user=cast["ana"],
        voluntary=False,
    )
    lifecycle.pool_stop_approve(pool_id=pool_id, change_id=change.pk, user=cast["bob"])


def _statements(pool_id: int, start: datetime, end: datetime) -> tuple[Liability, Liability]:
    """(opening, closing): the statement at `start`, and the one at `end` of [start, end)."""
    pool = Pool.objects.get(pk=pool_id)
    return pool_liability(pool, at=start, start=start), pool_liability(pool, at=end, start=start)


def rolled(opening: Liability, closing: Liability, *, other_cents: int = 0) -> int:
    """The roll-forward of docs/accounting.md "The period-end liability", term by term: owed at
    the end = owed at the start + the period's corrections + moved in - seed back - moved out -
    orphans final + `other_cents` (the stakes' and the house's entries, the awards' that leave)."""
    corrections, life = closing.period.corrections, closing.period.life
    expected = (
        opening.owed_cents
        + corrections.meter_cents
        + corrections.reserve_cents
        + corrections.pending_cents
        + corrections.payable_cents
        + life.moved_in_cents
        - life.seed_back_cents
        - life.moved_out_cents
        - life.orphans_final_cents
        + other_cents
    )
    assert closing.owed_cents == expected
    return expected


def _life(liability: Liability) -> tuple[int, int, int, int]:
    life = liability.period.life
    return (
        life.seed_back_cents,
        life.moved_out_cents,
        life.moved_in_cents,
        life.orphans_final_cents,
    )


def test_a_stop_to_orphans_rolls_forward_with_its_seed_back(cast):
    with time_machine.travel(at("2027-03-01", 9), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=1_000_000)
        _closed(stopped.pool_id)
    with time_machine.travel(at("2027-03-01", 12), tick=False):
        # In the period: corrections to 1,234,567 and 45,678, then the stop.
        _figures(stopped.pool_id, cast, meter=1_234_567, reserve=45_678)
        _stop(stopped.pool_id, cast)
    opening, closing = _statements(stopped.pool_id, at("2027-03-01", 10), at("2027-03-01", 13))
    assert opening.owed_cents == 1_000_000
    assert _life(closing) == (1_000_000, 0, 0, 0)
    assert closing.period.corrections.meter_cents == 234_567
    assert closing.period.corrections.reserve_cents == 45_678
    # 1,000,000 + 234,567 + 45,678 - 1,000,000: the orphans, owed still.
    assert rolled(opening, closing) == closing.orphans_cents == 280_245
    figures = dict(
        line.split(",", 1) for line in liability_csv(closing).decode().splitlines()[1:-1]
    )
    assert figures["life_seed_back_cents"] == "1000000"
    assert (figures["life_moved_out_cents"], figures["life_orphans_final_cents"]) == ("0", "0")
    assert liability_pdf(closing).startswith(b"%PDF")
    assert_journal_ok()


def test_a_stop_into_another_pool_rolls_forward_on_both(cast):
    with time_machine.travel(at("2027-04-01", 9), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=300_000)
        heir = make_floor(uth_tables=1, seed_cents=200_000)
        _figures(stopped.pool_id, cast, meter=345_678, reserve=12_345)
        _closed(stopped.pool_id)
    with time_machine.travel(at("2027-04-01", 12), tick=False):
        _stop(stopped.pool_id, cast, to_pool=heir.pool_id)
    start, end = at("2027-04-01", 10), at("2027-04-01", 13)
    opening, closing = _statements(stopped.pool_id, start, end)
    # The whole meter, seed included, and the reserve go: none comes back to the house.
    assert _life(closing) == (0, 345_678 + 12_345, 0, 0)
    assert rolled(opening, closing) == closing.owed_cents == 0
    opening, closing = _statements(heir.pool_id, start, end)
    assert _life(closing) == (0, 0, 358_023, 0)
    assert rolled(opening, closing) == 200_000 + 358_023
    assert_journal_ok()


def test_a_replacement_rolls_forward_on_the_old_pool_and_the_new(cast):
    with time_machine.travel(at("2027-05-01", 9), tick=False):
        old = make_floor(uth_tables=1, seed_cents=1_000_000)
        _figures(old.pool_id, cast, meter=1_234_567, reserve=45_678)
        _closed(old.pool_id)
        terms = {
            "name": "Salon 2027",
            "stake_cents": 500,
            "meter_share_bp": 2_500,
            "reserve_share_bp": 500,
            "seed_cents": 500_000,
        }
        change = replacement.pool_replace_propose(
            pool_id=old.pool_id, values=terms, reason="2027 terms", user=cast["ana"]
        )
    with time_machine.travel(at("2027-05-01", 12), tick=False):
        replacement.pool_replace_approve(pool_id=old.pool_id, change_id=change.pk, user=cast["bob"])
    start, end = at("2027-05-01", 10), at("2027-05-01", 13)
    opening, closing = _statements(old.pool_id, start, end)
    # Its start value back to the house, its increment and reserve to the new pool.
    assert _life(closing) == (1_000_000, 234_567 + 45_678, 0, 0)
    assert rolled(opening, closing) == closing.owed_cents == 0
    new = Pool.objects.exclude(pk=old.pool_id).get()
    opening, closing = _statements(new.pk, start, end)
    assert opening.owed_cents == 0  # not created yet
    assert _life(closing) == (0, 0, 280_245, 0)
    # The period's other entry: its own seed, funded by the house (`pool_seed`).
    seeded = Transfer.objects.get(pool=new, code="pool_seed").amount_cents
    assert rolled(opening, closing, other_cents=seeded) == 500_000 + 280_245
    assert_journal_ok()


def test_a_recovery_of_orphans_rolls_forward_on_both_pools(cast):
    with time_machine.travel(at("2027-03-01", 9), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=1_000_000)
        heir = make_floor(uth_tables=1, seed_cents=500_000)
        _figures(stopped.pool_id, cast, meter=1_234_567, reserve=45_678)
        _closed(stopped.pool_id)
        _stop(stopped.pool_id, cast)
    with time_machine.travel(at("2027-06-15", 12), tick=False):
        proposed = orphans.orphans_recover_propose(
            pool_id=stopped.pool_id, to_pool=heir.pool_id, reason="report", user=cast["max"]
        )
        orphans.orphans_recover_approve(
            pool_id=stopped.pool_id, change_id=proposed.pk, user=cast["meg"]
        )
    start, end = at("2027-06-15", 10), at("2027-06-15", 13)
    opening, closing = _statements(stopped.pool_id, start, end)
    assert opening.owed_cents == opening.orphans_cents == 280_245
    assert _life(closing) == (0, 280_245, 0, 0)
    assert rolled(opening, closing) == closing.owed_cents == 0
    opening, closing = _statements(heir.pool_id, start, end)
    assert _life(closing) == (0, 0, 280_245, 0)
    assert rolled(opening, closing) == 500_000 + 280_245
    assert_journal_ok()


def test_orphans_made_final_roll_forward_to_nothing(cast):
    with time_machine.travel(at("2027-09-01"), tick=False):
        stopped = make_floor(uth_tables=1, seed_cents=200_000)
        _figures(stopped.pool_id, cast, meter=250_000, reserve=10_000)
        _closed(stopped.pool_id)
        _stop(stopped.pool_id, cast)
    swept = at("2027-11-01", 0) + timedelta(minutes=1)
    with time_machine.travel(swept, tick=False):
        assert orphans.orphans_final() == [stopped.pool_id]
    opening, closing = _statements(stopped.pool_id, at("2027-10-31"), swept + timedelta(hours=1))
    assert opening.owed_cents == 60_000
    assert _life(closing) == (0, 0, 0, 60_000)
    assert rolled(opening, closing) == closing.owed_cents == 0
    assert_journal_ok()
