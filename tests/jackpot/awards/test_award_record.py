"""What an award shows of its round is its own record (issue 23): written at the grant, read by
every view of an award without a join to the tables' rows, and unchanged by a later rename of
its table."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jackpot import selectors
from jackpot.bodies.awards import AwardFilters
from jackpot.models import Award, AwardKind
from jackpot.reporting import exports, register
from jackpot.sign import display
from tables.models import Table
from tables.services import table_update
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import person
from tests.winners import pay_identified

pytestmark = pytest.mark.django_db

TABLES_ROWS = ("tables_round", "tables_table")


@pytest.fixture
def paid_full_house(django_user_model):
    """A full house, approved at once, then paid: one award to show."""
    floor = make_floor()
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["3c", "4c"],
            "seats": [uth_play(1, "Kc Ks")],
        },
    )
    cashier = person("cashier", "supervisor")
    award = Award.objects.get(kind=AwardKind.FULL_HOUSE)  # under the threshold: approved
    pay_identified(award.pk, cashier)
    return floor, Award.objects.get(pk=award.pk)


def _shown(award: Award, pool_id: int) -> dict[str, object]:
    """Every way the service shows or reports an award, read with the SQL recorded."""
    now = timezone.now()
    return {
        "slip": selectors.payment_slip(award.pk).award.model_dump(mode="json"),
        "list": [a.pk for a in exports.awards_filtered(AwardFilters(table=award.table_pk))],
        "register": [
            row.cells()[:9]
            for row in register.register_rows(
                now - timedelta(days=1), now + timedelta(days=1), reader="test"
            )
        ],
        "csv": "".join(exports.award_rows(Award.objects.all())).splitlines()[1].split(",")[3:10],
        "sign": display._awards_part(pool_id)[1].model_dump(mode="json"),
    }


def test_an_award_is_shown_from_its_own_row_and_as_granted(paid_full_house):
    floor, award = paid_full_house
    table = Table.objects.get(pk=floor.uth[0].table_id)
    # Given the award's record, written at the grant
    assert (award.table_pk, award.table_name, award.game, award.round_name) == (
        table.pk,
        table.name,
        "uth",
        "r-1",
    )
    assert (award.hole_cards, award.board) == (["Kc", "Ks"], ["7c", "7d", "7h", "Kd", "2s"])
    assert sorted(award.winning_five) == sorted(["Kc", "Ks", "Kd", "7d", "7h"])  # kings full

    # When every view of it is read, no statement names the tables' rows
    with CaptureQueriesContext(connection) as queries:
        before = _shown(award, floor.pool_id)
    assert not [q["sql"] for q in queries if any(t in q["sql"] for t in TABLES_ROWS)]
    assert before["slip"]["table_name"] == table.name
    assert before["slip"]["round_id"] == "r-1"
    assert before["list"] == [award.pk]
    assert before["register"] == [
        (
            award.pk,
            award.paid_at.isoformat(),
            "uth",
            table.name,
            "r-1",
            1,
            "full_house",
            "Kc Ks",
            "7c 7d 7h Kd 2s",
        )
    ]
    assert before["csv"] == ["uth", table.name, "r-1", "1", "full_house", "Kc Ks", "7c 7d 7h Kd 2s"]
    assert before["sign"]["last_hit"]["table"] == table.name

    # and once the table is renamed, the award's paperwork still says where it was won
    table_update(table_id=table.pk, changes={"name": "Renamed since"}, actor="test")
    assert Table.objects.get(pk=table.pk).name == "Renamed since"
    assert _shown(award, floor.pool_id) == before
