"""The worked example of docs/accounting.md, "Worked example: stopping a pool", through the API.

Pool A (stake 500 cents, 1,250 bp to the meter = 625,000 units a stake, 625 bp to the reserve =
312,500 units, seed 100,000 cents) takes 3 progressive stakes in round R1, which settles with no
award; pool B (same shares, seed 50,000) takes none. Two admins stop A into B; then, in a second
run, into A's orphan account. Every figure is worked out BY HAND in the comments, asserted
against the journal (which also verifies), the counters and the transfers, and against the two
tables the doc prints: a change to either must change both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from jackpot.models import Pool, Transfer
from tests.conftest import Floor, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[3] / "docs" / "accounting.md"
TERMS = {"stake_cents": 500, "meter_share_bp": 1250, "reserve_share_bp": 625}
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


def _doc_tables() -> tuple[list[tuple[str, str, str, str, int]], dict[str, list[int]]]:
    """The section's transfer rows (pool, code, debit, credit, cents) and balance rows."""
    text = DOC.read_text()
    section = text[text.index("## Worked example: stopping a pool") :]
    section = section[: section.find("\n## ", 10) if "\n## " in section[10:] else None]
    transfers, balances = [], {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] not in ("A", "B"):
            continue
        if cells[1].startswith("`"):
            transfers.append((cells[0], cells[1].strip("`"), cells[2], cells[3], _cents(cells[4])))
        else:
            balances[cells[0]] = [_cents(cell) for cell in cells[1:]]
    return transfers, balances


def _cents(cell: str) -> int:
    assert re.fullmatch(r"-?[\d,]+", cell), cell
    return int(cell.replace(",", ""))


@pytest.fixture
def admins(django_user_model) -> dict[str, Client]:
    return api_clients(ana="admin", bob="admin")


def _pools_played() -> tuple[Floor, Floor]:
    a = make_floor(uth_tables=1, seed_cents=100_000, **TERMS)
    b = make_floor(uth_tables=1, seed_cents=50_000, **TERMS)
    terminal = a.uth[0]
    opened = terminal.post(
        "/rounds", {"round_id": "R1", "seats": [uth_seat(1), uth_seat(2), uth_seat(3)]}
    )
    assert opened.status_code == 201, opened.json()
    settled = terminal.post(
        "/rounds/R1/result",
        {
            "board": ["2c", "7d", "9h", "Js", "3c"],
            "dealer": ["4d", "5s"],
            "seats": [uth_play(1, "Ah Kd"), uth_play(2, "8s 8h", "fold"), uth_play(3, "Qc Td")],
        },
    )
    assert settled.status_code == 200 and settled.json()["awards"] == [], settled.json()
    return a, b


def _stop(admins: dict[str, Client], a: Floor, body: dict) -> None:
    table = a.uth[0].table_id
    closed = admins["ana"].patch(
        f"/api/v1/tables/{table}", {"enabled": False}, content_type="application/json"
    )
    assert closed.status_code == 200, closed.json()
    change = admins["ana"].post(
        f"/api/v1/pools/{a.pool_id}/stop", body, content_type="application/json"
    )
    assert change.status_code == 201, change.json()
    approved = admins["bob"].post(
        f"/api/v1/pools/{a.pool_id}/changes/{change.json()['id']}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.json()


def _balances(pool: int) -> list[int]:
    found = assert_journal_ok()["balances"][str(pool)]
    return [found[kind] for kind in KINDS]


def test_stopping_pool_a_into_pool_b_every_account(admins):
    a, b = _pools_played()
    # R1: 3 x 625,000 = 1,875,000 units = 187.5 cents on the meter (187 crossed), 3 x 312,500 =
    # 937,500 units = 93.75 cents on the reserve (93 crossed), the house 1,500 - 187 - 93 = 1,220.
    assert _balances(a.pool_id) == [-1_500, 100_187, 93, -98_780, 0, 0, 0, 0, 0]
    assert _balances(b.pool_id) == [0, 50_000, 0, -50_000, 0, 0, 0, 0, 0]

    _stop(
        admins,
        a,
        {"to": "pool", "to_pool": b.pool_id, "reason": "decommissioned", "voluntary": False},
    )

    moved = [
        (
            "A" if t.pool_id == a.pool_id else "B",
            t.code,
            t.debit.kind,
            t.credit.kind,
            t.amount_cents,
        )
        for t in Transfer.objects.filter(code__startswith="stop_")
        .select_related("debit", "credit")
        .order_by("pk")
    ]
    # The whole cents: 100,187 and 93 out of A, into B; A's moved +100,280, B's -100,280.
    assert moved == [
        ("A", "stop_meter_out", "meter", "moved", 100_187),
        ("A", "stop_reserve_out", "reserve", "moved", 93),
        ("B", "stop_meter_in", "moved", "meter", 100_187),
        ("B", "stop_reserve_in", "moved", "reserve", 93),
    ]
    after_a = [-1_500, 0, 0, -98_780, 0, 0, 0, 0, 100_280]
    after_b = [0, 150_187, 93, -50_000, 0, 0, 0, 0, -100_280]
    assert _balances(a.pool_id) == after_a and sum(after_a) == 0
    assert _balances(b.pool_id) == after_b and sum(after_b) == 0
    # The sub-cent remainders stay: 1,001,875,000 - 100,187 x 10,000 = 5,000 units; 937,500 -
    # 930,000 = 7,500. B: 500,000,000 + 1,001,870,000 = 1,501,870,000; 0 + 930,000.
    pool_a, pool_b = Pool.objects.get(pk=a.pool_id), Pool.objects.get(pk=b.pool_id)
    assert (pool_a.status, pool_a.meter_units, pool_a.reserve_units) == ("stopped", 5_000, 7_500)
    assert (pool_b.meter_units, pool_b.reserve_units) == (1_501_870_000, 930_000)

    # The doc prints the same figures.
    transfers, balances = _doc_tables()
    assert transfers == moved
    assert balances == {"A": after_a, "B": after_b}


def test_stopping_pool_a_to_its_orphan_account(admins):
    a, _ = _pools_played()
    _stop(admins, a, {"to": "orphan", "reason": "decommissioned", "voluntary": False})
    moved = [
        (t.code, t.debit.kind, t.credit.kind, t.amount_cents)
        for t in Transfer.objects.filter(code__startswith="stop_")
        .select_related("debit", "credit")
        .order_by("pk")
    ]
    # The orphans: the meter above the seed (100,187 - 100,000 = 187) and the reserve (93); the
    # seed (100,000) back to the house.
    assert moved == [
        ("stop_orphans", "meter", "orphan", 187),
        ("stop_seed_back", "meter", "house", 100_000),
        ("stop_reserve_orphan", "reserve", "orphan", 93),
    ]
    # The house: -98,780 + 100,000 = 1,220 (its share of R1's stakes); the orphans 280.
    assert _balances(a.pool_id) == [-1_500, 0, 0, 1_220, 0, 0, 0, 280, 0]
    text = " ".join(DOC.read_text().split())
    assert "`stop_orphans` 187, `stop_seed_back` 100,000 and `stop_reserve_orphan` 93" in text
    assert "its `orphan` account holds 280" in text
