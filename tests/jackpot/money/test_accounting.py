"""The chart of transfers in code (`jackpot.money.accounting.ROUTES`) is the one docs/accounting.md
prints, and the ledger writes nothing it does not route."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from jackpot.models import AccountKind, Transfer, TransferCode
from jackpot.money import ledger
from jackpot.money.accounting import CORRECTION_ROUTES, ROUTES, Posting
from tests.conftest import make_floor

DOC = Path(__file__).resolve().parents[3] / "docs" / "accounting.md"


def _documented_routes() -> dict[str, tuple[str, list[str]]]:
    """The "Transfer codes" table of docs/accounting.md: code -> (debit, credits)."""
    text = DOC.read_text()
    section = text[text.index("## Transfer codes") : text.index("### The way of an award")]
    routes = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        code = cells[0].strip("`")
        routes[code] = (cells[1].strip("`"), re.findall(r"`(\w+)`", cells[2]))
    return routes


def test_every_route_is_the_documented_one():
    documented = _documented_routes()
    assert set(documented) == set(TransferCode.values)
    for code, route in ROUTES.items():
        debit, credits = documented[code]
        expected = [route.credit] + ([route.pending_credit] if route.pending_credit else [])
        assert (debit, credits) == (route.debit, expected), code
    # The one code without a fixed route is the correction's: the house against a liability,
    # both ways, as the doc's row says (its debit `house` or the credit's, in pairs).
    assert set(TransferCode) - set(ROUTES) == {TransferCode.CORRECTION}
    assert documented["correction"][0] == "pairs"
    pairs = documented["correction"][1]
    assert {(pairs[n], pairs[n + 1]) for n in range(0, len(pairs), 2)} == CORRECTION_ROUTES


def test_routes_move_money_between_two_accounts():
    for code, route in ROUTES.items():
        assert route.debit != route.credit, code
        assert route.pending_credit in (None, AccountKind.AWARDS_PENDING), code


def test_a_correction_moves_the_house_against_one_liability_both_ways():
    assert len(CORRECTION_ROUTES) == 8
    for debit, credit in CORRECTION_ROUTES:
        assert AccountKind.HOUSE in (debit, credit) and debit != credit
        assert {debit, credit} - {AccountKind.HOUSE} <= {
            AccountKind.METER,
            AccountKind.RESERVE,
            AccountKind.AWARDS_PENDING,
            AccountKind.PAYABLE,
        }
        assert Posting(TransferCode.CORRECTION, 1, route=(debit, credit)).accounts() == (
            debit,
            credit,
        )


def test_the_meter_goes_down_only_by_a_jackpot_a_stop_or_a_correction():
    """Compliance 55: every code that debits the meter is a hit, a stop (a replacement is one:
    its start value back to the house, compliance 56), a voided hit's reset given back, or a
    correction."""
    debiting = {code.value for code, route in ROUTES.items() if route.debit == AccountKind.METER}
    assert debiting == {
        "jackpot_hit",
        "stop_meter_orphan",
        "stop_meter_out",
        "replace_seed_back",
        # A stop to orphans (jackpot.pools.orphans): the meter above the seed, the seed back.
        "stop_orphans",
        "stop_seed_back",
        "void_reset_reserve",
        "void_reset_house",
    }
    corrections = {pair for pair in CORRECTION_ROUTES if pair[0] == AccountKind.METER}
    assert corrections == {(AccountKind.METER, AccountKind.HOUSE)}


def test_a_posting_the_chart_does_not_allow_is_refused():
    with pytest.raises(ValueError, match="no such route"):
        Posting(TransferCode.CORRECTION, 1).accounts()
    with pytest.raises(ValueError, match="no such route"):  # two liabilities: never
        Posting(
            TransferCode.CORRECTION, 1, route=(AccountKind.METER, AccountKind.RESERVE)
        ).accounts()
    with pytest.raises(ValueError, match="no such route"):
        Posting(
            TransferCode.CORRECTION, 1, route=(AccountKind.STAKES, AccountKind.HOUSE)
        ).accounts()
    with pytest.raises(ValueError, match="fixed route"):
        Posting(
            TransferCode.CONTRIBUTION_METER, 1, route=(AccountKind.HOUSE, AccountKind.METER)
        ).accounts()
    with pytest.raises(ValueError, match="never waits"):
        Posting(TransferCode.CONTRIBUTION_METER, 1, pending=True).accounts()
    assert Posting(TransferCode.ENVY, 1, pending=True).accounts() == (
        AccountKind.HOUSE,
        AccountKind.AWARDS_PENDING,
    )


@pytest.mark.django_db
def test_the_database_refuses_a_second_transfer_of_one_code_for_one_round():
    floor = make_floor()
    terminal = floor.uth[0]
    opened = terminal.post(
        "/rounds",
        {
            "round_id": "r-1",
            "seats": [
                {
                    "seat": 1,
                    "bets": {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500},
                }
            ],
        },
    )
    assert opened.status_code == 201
    round_pk = Transfer.objects.get(code=TransferCode.CONTRIBUTION_METER).round_id
    before = Transfer.objects.count()

    with pytest.raises(IntegrityError), transaction.atomic():
        ledger.record(
            chain=ledger.table_chain(terminal.table_id),
            kind="round.opened",
            actor="test",
            pool_id=floor.pool_id,
            payload={},
            postings=[Posting(TransferCode.CONTRIBUTION_METER, 100, round_pk)],
        )

    assert Transfer.objects.count() == before
