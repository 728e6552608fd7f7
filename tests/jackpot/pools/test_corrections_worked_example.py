"""The worked example of docs/accounting.md, "Worked example: corrections", through the services.

One pool (stake 500 cents, 1,250 bp to the meter = 625,000 units a stake, 625 bp to the reserve
= 312,500 units, seed 100,000 cents, threshold 100,000): R1 takes 4 progressive stakes and pays a
straight flush (150,000 cents, pending); a correction raises the meter by 1,500 cents, another
lowers the reserve by 25, a third raises the award by 10,000 before it is verified, approved and
paid. After every step the transfers written and every account are asserted against the two
tables the doc prints, and against figures worked out BY HAND here: a change to either must
change both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jackpot.awards.workflow import award_approve, award_pay, award_verify
from jackpot.models import Award, PaymentMethod, Pool, Transfer
from jackpot.pools.corrections import correction_approve, correction_propose
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[3] / "docs" / "accounting.md"
SHOWN = ("stakes", "meter", "reserve", "house", "awards_pending", "payable", "paid")
U = 10_000


def _cents(cell: str) -> int:
    assert re.fullmatch(r"-?[\d,]+", cell), cell
    return int(cell.replace(",", ""))


def _doc_tables() -> tuple[dict[int, list[tuple[str, str, str, int]]], dict[int, list[int]]]:
    """The section's transfers by step (code, debit, credit, cents) and balances by step."""
    text = DOC.read_text()
    section = text[text.index("## Worked example: corrections") :]
    end = section.find("\n## ", 10)
    section = section if end == -1 else section[:end]
    transfers: dict[int, list[tuple[str, str, str, int]]] = {}
    balances: dict[int, list[int]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not cells[0].isdigit():
            continue
        step = int(cells[0])
        if cells[1].startswith("`"):
            row = (cells[1].strip("`"), cells[2], cells[3], _cents(cells[4]))
            transfers.setdefault(step, []).append(row)
        else:
            balances[step] = [_cents(cell) for cell in cells[1:]]
    return transfers, balances


def _balances(pool_id: int) -> list[int]:
    found = assert_journal_ok()["balances"][str(pool_id)]
    return [found[kind] for kind in SHOWN]


def _after(pk: int) -> list[tuple[str, str, str, int]]:
    return [
        (t.code, t.debit.kind, t.credit.kind, t.amount_cents)
        for t in Transfer.objects.filter(pk__gt=pk).select_related("debit", "credit").order_by("pk")
    ]


def _last() -> int:
    return Transfer.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _correct(pool_id: int, proposer, approver, **asked: object) -> None:
    change = correction_propose(
        pool_id=pool_id,
        reason="the worked example",
        reference="ANJ-2026-0412",
        evidence="inspector's report",
        user=proposer,
        award_id=asked.pop("award_id", None),  # type: ignore[arg-type]
        **asked,  # type: ignore[arg-type]
    )
    correction_approve(pool_id=pool_id, change_id=change.pk, user=approver)


def test_the_corrections_worked_example_figure_by_figure():
    doc_transfers, doc_balances = _doc_tables()
    assert sorted(doc_transfers) == sorted(doc_balances) == list(range(1, 8))
    sue, sam = person("sue", "supervisor"), person("sam", "supervisor")
    max_user, meg = person("max", "manager"), person("meg", "manager")
    written: dict[int, list[tuple[str, str, str, int]]] = {}
    shown: dict[int, list[int]] = {}

    # Step 1: the house funds the seed.
    mark = _last()
    floor = make_floor(1, meter_share_bp=1250, reserve_share_bp=625, seed_cents=100_000)
    pool_id, table = floor.pool_id, floor.uth[0]
    written[1], shown[1] = [t for t in _after(mark) if t[0] == "pool_seed"], _balances(pool_id)

    # Step 2: 4 stakes: meter 4 x 62.5 = 250, reserve 4 x 31.25 = 125, house 2,000 - 375.
    mark = _last()
    seats = [uth_seat(n) for n in range(1, 5)]
    assert table.post("/rounds", {"round_id": "R1", "seats": seats}).status_code == 201
    written[2], shown[2] = _after(mark), _balances(pool_id)
    assert shown[2] == [-2_000, 100_250, 125, -98_375, 0, 0, 0]

    # Step 3: seat 1's straight flush (5c to 9c), 150,000 cents, waits for a supervisor.
    mark = _last()
    settled = table.post(
        "/rounds/R1/result",
        {
            "board": ["5c", "6c", "7c", "2s", "9h"],
            "dealer": ["Ac", "Qd"],
            "seats": [
                uth_play(1, "8c 9c"),
                uth_play(2, "Ah Kd"),
                uth_play(3, "Td Jd", "fold"),
                uth_play(4, "3h 4d"),
            ],
        },
    )
    assert settled.status_code == 200, settled.json()
    (award,) = settled.json()["awards"]
    assert (award["kind"], award["amount_cents"], award["status"]) == (
        "straight_flush",
        150_000,
        "pending",
    )
    written[3], shown[3] = _after(mark), _balances(pool_id)

    # Step 4: the meter raised by 1,500 cents: 100,250 + 1,500 = 101,750.
    mark = _last()
    _correct(pool_id, sue, max_user, target="meter", amount_cents=1_500)
    written[4], shown[4] = _after(mark), _balances(pool_id)

    # Step 5: the reserve lowered by 25 cents: 125 - 25 = 100.
    mark = _last()
    _correct(pool_id, meg, max_user, target="reserve", amount_cents=-25)
    written[5], shown[5] = _after(mark), _balances(pool_id)

    # Step 6: the award raised by 10,000 cents before its payment: due 160,000.
    mark = _last()
    _correct(pool_id, sue, meg, target="award", award_id=award["id"], amount_cents=10_000)
    written[6], shown[6] = _after(mark), _balances(pool_id)

    # Step 7: verified, approved by another supervisor, paid: 160,000 cents move.
    mark = _last()
    award_verify(award_id=award["id"], user=sue, note="cards checked")
    award_approve(award_id=award["id"], user=sam)
    award_pay(award_id=award["id"], user=sam, method=PaymentMethod.CASH)
    written[7], shown[7] = _after(mark), _balances(pool_id)

    assert shown[7] == [-2_000, 101_750, 100, -259_850, 0, 0, 160_000]
    for step in range(1, 8):
        assert written[step] == doc_transfers[step], step
        assert shown[step] == doc_balances[step], step
        assert sum(shown[step]) == 0, step
    pool = Pool.objects.get(pk=pool_id)
    assert (pool.meter_units, pool.meter_cents, pool.reserve_units) == (
        101_750 * U,
        101_750,
        100 * U,
    )
    row = Award.objects.get(pk=award["id"])
    assert (row.amount_cents, row.corrected_cents, row.due_cents) == (150_000, 10_000, 160_000)
