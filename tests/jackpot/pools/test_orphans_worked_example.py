"""The worked example of docs/accounting.md, "Worked example: orphans", through the services on
its dates: every transfer of the doc's table and every figure of its prose."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import time_machine

from jackpot.models import OrphanEntry, Pool, Transfer
from jackpot.pools import lifecycle, orphans
from jackpot.reporting.liability import pool_liability
from tests.conftest import assert_journal_ok, make_floor
from tests.jackpot.pools.test_notices_and_orphans import _closed, _figures

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[3] / "docs" / "accounting.md"
PARIS = ZoneInfo("Europe/Paris")


def _section() -> str:
    text = DOC.read_text()
    section = text[text.index("## Worked example: orphans") :]
    return section[: section.index("\n## ", 10)]


def _doc_transfers() -> list[tuple[str, str, str, str, int]]:
    rows = []
    for line in _section().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in ("P", "Q", "R") and cells[1].startswith("`"):
            assert re.fullmatch(r"[\d,]+", cells[4]), cells
            rows.append(
                (cells[0], cells[1].strip("`"), cells[2], cells[3], int(cells[4].replace(",", "")))
            )
    return rows


@pytest.fixture
def cast(django_user_model) -> dict:
    from tests.staff import person

    return {
        "ana": person("ana", "admin"),
        "bob": person("bob", "admin"),
        "max": person("max", "manager"),
        "meg": person("meg", "manager"),
    }


def _stop(pool_id: int, cast: dict) -> None:
    _closed(pool_id)
    change = lifecycle.pool_stop_propose(
        pool_id=pool_id, to="orphan", to_pool=None, reason="fin", user=cast["ana"], voluntary=False
    )
    lifecycle.pool_stop_approve(pool_id=pool_id, change_id=change.pk, user=cast["bob"])


def test_the_orphans_worked_example_to_the_cent(cast):
    prose = " ".join(_section().split())
    with time_machine.travel(datetime(2027, 3, 1, 10, tzinfo=PARIS), tick=False):
        p = make_floor(uth_tables=1, seed_cents=1_000_000)
        q = make_floor(uth_tables=1, seed_cents=500_000)
        _figures(p.pool_id, cast, meter=1_234_567, reserve=45_678)
        _stop(p.pool_id, cast)
        entry = OrphanEntry.objects.get(pk=p.pool_id)
        assert entry.orphans_cents == 280_245
        assert entry.deadline == datetime(2027, 10, 31, 23, tzinfo=UTC)
        assert "P, orphans 280,245 (234,567 + 45,678), deadline 2027-10-31T23:00:00Z" in prose
        owed = pool_liability(
            Pool.objects.get(pk=p.pool_id),
            at=datetime.now(UTC),
            start=datetime(2027, 3, 1, tzinfo=UTC),
        )
        assert (owed.meter_cents, owed.meter_above_seed_cents) == (0, 0)
        assert (owed.orphans_cents, owed.owed_cents) == (280_245, 280_245)
        assert "`orphans_cents` 280,245, `owed_cents` 280,245" in prose
    with time_machine.travel(datetime(2027, 6, 15, 10, tzinfo=PARIS), tick=False):
        change = orphans.orphans_recover_propose(
            pool_id=p.pool_id, to_pool=q.pool_id, reason="report", user=cast["max"]
        )
        orphans.orphans_recover_approve(pool_id=p.pool_id, change_id=change.pk, user=cast["meg"])
        assert orphans.orphans_held(p.pool_id) == 0
        assert Pool.objects.get(pk=q.pool_id).meter_cents == 780_245
        assert "Q's meter is 780,245 (500,000 + 280,245)" in prose
    with time_machine.travel(datetime(2027, 9, 1, 10, tzinfo=PARIS), tick=False):
        r = make_floor(uth_tables=1, seed_cents=200_000)
        _figures(r.pool_id, cast, meter=250_000, reserve=10_000)
        _stop(r.pool_id, cast)
    with time_machine.travel(datetime(2027, 10, 31, 22, 59, tzinfo=UTC), tick=False):
        assert orphans.orphans_final() == []
    with time_machine.travel(datetime(2027, 10, 31, 23, tzinfo=UTC), tick=False):
        assert orphans.orphans_final() == [r.pool_id]
        owed = pool_liability(
            Pool.objects.get(pk=r.pool_id),
            at=datetime.now(UTC),
            start=datetime(2027, 10, 1, tzinfo=UTC),
        )
        assert (owed.orphans_cents, owed.owed_cents) == (0, 0)
        balances = assert_journal_ok()["balances"][str(r.pool_id)]
        assert (balances["orphan"], balances["forfeit"]) == (0, 60_000)
    names = {p.pool_id: "P", q.pool_id: "Q", r.pool_id: "R"}
    written = [
        (names[t.pool_id], t.code, t.debit.kind, t.credit.kind, t.amount_cents)
        for t in Transfer.objects.filter(
            code__in=[
                "stop_orphans",
                "stop_seed_back",
                "stop_reserve_orphan",
                "orphans_out",
                "orphans_in",
                "orphans_final",
            ]
        )
        .select_related("debit", "credit")
        .order_by("pk")
    ]
    assert written == _doc_transfers()
