"""The worked example of docs/accounting.md, "Worked example: replacing a pool", through the
services.

Pool A (stake 500, 2,001 bp to the meter = 1,000,500 units a stake, 799 bp to the reserve =
399,500 units, seed 1,000,000 cents) takes 3 stakes in R1 (no award), two documented corrections
bring its meter to 1,234,567 cents (and 1,500 units) and its reserve to 45,678 cents (and 8,500
units); two admins replace it by B (stake 500, 2,500 bp, 500 bp, seed 500,000). Every figure is
worked out BY HAND here and asserted against the journal (which also verifies), the counters, the
transfers, and the two tables the doc prints: a change to either must change both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jackpot.models import Pool, Transfer
from jackpot.pools.corrections import correction_approve, correction_propose
from jackpot.pools.replacement import pool_replace_approve, pool_replace_propose
from tables.pools import POOL_TABLES
from tables.services import table_update
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[3] / "docs" / "accounting.md"
KINDS = (
    "stakes",
    "meter",
    "reserve",
    "house",
    "awards_pending",
    "payable",
    "paid",
    "orphan",
    "moved",
)
U = 10_000
Row = tuple[int, str, str, str, str, int]


def _cents(cell: str) -> int:
    assert re.fullmatch(r"-?[\d,]+", cell), cell
    return int(cell.replace(",", ""))


def _doc_tables() -> tuple[list[Row], dict[tuple[int, str], list[int]]]:
    """The section's transfers (step, pool, code, debit, credit, cents) and its balances by
    (step, pool)."""
    text = DOC.read_text()
    section = text[text.index("## Worked example: replacing a pool") :]
    end = section.find("\n## ", 10)
    section = section if end == -1 else section[:end]
    transfers: list[Row] = []
    balances: dict[tuple[int, str], list[int]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not cells[0].isdigit() or len(cells) < 6:
            continue
        step, pool = int(cells[0]), cells[1]
        if cells[2].startswith("`"):
            transfers.append(
                (step, pool, cells[2].strip("`"), cells[3], cells[4], _cents(cells[5]))
            )
        else:
            balances[(step, pool)] = [_cents(cell) for cell in cells[2:]]
    return transfers, balances


def _balances(pool_id: int) -> list[int]:
    found = assert_journal_ok()["balances"][str(pool_id)]
    return [found[kind] for kind in KINDS]


def _last() -> int:
    return Transfer.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _after(mark: int, step: int, names: dict[int, str]) -> list[Row]:
    return [
        (step, names[t.pool_id], t.code, t.debit.kind, t.credit.kind, t.amount_cents)
        for t in Transfer.objects.filter(pk__gt=mark)
        .select_related("debit", "credit")
        .order_by("pk")
    ]


def _correct(pool_id: int, target: str, amount: int, proposer, approver) -> None:
    change = correction_propose(
        pool_id=pool_id,
        target=target,
        award_id=None,
        amount_cents=amount,
        reason="the worked example: the pool's life so far",
        reference="ANJ-2027-0001",
        evidence="the worked example",
        user=proposer,
    )
    correction_approve(pool_id=pool_id, change_id=change.pk, user=approver)


def test_the_replacement_worked_example_figure_by_figure():
    doc_transfers, doc_balances = _doc_tables()
    sue, max_user = person("sue", "supervisor"), person("max", "manager")
    ana, bob = person("ana", "admin"), person("bob", "admin")
    written: list[Row] = []

    # Step 1: the house funds A's seed.
    mark = _last()
    floor = make_floor(
        1, stake_cents=500, meter_share_bp=2_001, reserve_share_bp=799, seed_cents=1_000_000
    )
    a = floor.pool_id
    names = {a: "A"}
    written += _after(mark, 1, names)

    # Step 2: 3 stakes: meter 3 x 1,000,500 = 3,001,500 units (300 cents, 1,500 units left),
    # reserve 3 x 399,500 = 1,198,500 units (119 cents, 8,500 left), house 1,500 - 419 = 1,081.
    mark = _last()
    seats = [uth_seat(n) for n in (1, 2, 3)]
    assert floor.uth[0].post("/rounds", {"round_id": "R1", "seats": seats}).status_code == 201
    settled = floor.uth[0].post(
        "/rounds/R1/result",
        {
            "board": ["2c", "7d", "9h", "Js", "3c"],
            "dealer": ["4d", "5s"],
            "seats": [uth_play(1, "Ah Kd"), uth_play(2, "8s 8h", "fold"), uth_play(3, "Qc Td")],
        },
    )
    assert settled.status_code == 200 and settled.json()["awards"] == [], settled.json()
    written += _after(mark, 2, names)
    row = Pool.objects.get(pk=a)
    assert (row.meter_units, row.reserve_units) == (1_000_300 * U + 1_500, 119 * U + 8_500)

    # Step 3: the meter to 1,234,567 (+234,267), the reserve to 45,678 (+45,559).
    mark = _last()
    _correct(a, "meter", 234_267, sue, max_user)
    _correct(a, "reserve", 45_559, sue, max_user)
    written += _after(mark, 3, names)
    row = Pool.objects.get(pk=a)
    assert (row.meter_units, row.reserve_units) == (1_234_567 * U + 1_500, 45_678 * U + 8_500)
    shown = {(3, "A"): _balances(a)}
    assert shown[(3, "A")] == [-1_500, 1_234_567, 45_678, -1_278_745, 0, 0, 0, 0, 0]

    # Step 4: the replacement. Increment 1,234,567 - 1,000,000 = 234,567 to B's meter on B's
    # seed, 500,000: 734,567; the reserve 45,678 whole; A's seed back to the house.
    table_update(table_id=floor.uth[0].table_id, changes={"enabled": False}, actor="test")
    new_terms = {
        "name": "B",
        "stake_cents": 500,
        "meter_share_bp": 2_500,
        "reserve_share_bp": 500,
        "seed_cents": 500_000,
    }
    change = pool_replace_propose(pool_id=a, values=new_terms, reason="2027 terms", user=ana)
    mark = _last()
    pool_replace_approve(pool_id=a, change_id=change.pk, user=bob, pool_tables=POOL_TABLES)
    b = Pool.objects.get(name="B").pk
    names[b] = "B"
    written += _after(mark, 4, names)
    shown[(4, "A")], shown[(4, "B")] = _balances(a), _balances(b)
    assert shown[(4, "A")] == [-1_500, 0, 0, -278_745, 0, 0, 0, 0, 280_245]
    assert shown[(4, "B")] == [0, 734_567, 45_678, -500_000, 0, 0, 0, 0, -280_245]
    assert all(sum(figures) == 0 for figures in shown.values())

    old, new = Pool.objects.get(pk=a), Pool.objects.get(pk=b)
    assert (old.meter_units, old.reserve_units, old.status) == (1_500, 8_500, "stopped")
    assert (new.meter_units, new.reserve_units) == (7_345_670_000, 456_780_000)
    assert new.meter_cents == 500_000 + 234_567

    # The doc prints exactly these transfers and balances.
    assert written == doc_transfers
    assert shown == doc_balances
