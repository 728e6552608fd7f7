"""The auditors' history of a pool (GET /api/v1/pools/{pool}/history and history.csv): every
figure of tests/pool_story.py to the cent, the expected counts from the PAR sheet, the day
filters, the CSV as the JSON, the rights, and a constant number of queries."""

from __future__ import annotations

import csv
import io
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import pytest
from django.test import Client

from rules.par import progressive_sheet
from rules.paytables import CURRENT
from tables.audit.history import fold_history
from tables.audit.pool_history import pool_history
from tables.audit.reconciliation import reconcile
from tables.bodies.history import PoolHistory, PoolHistoryQuery
from tests import pool_story as story
from tests.staff import person, token_client

# One process builds this module's fixtures (tests/conftest.py).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.xdist_group("tests/tables/audit/test_pool_history.py"),
]


def staff(django_user_model, role: str) -> Client:
    return token_client(person(f"{role}-1", role))


@pytest.fixture
def auditor(django_user_model) -> Client:
    return staff(django_user_model, "auditor")


@pytest.fixture(scope="module")
def sheets() -> dict[int, dict[str, Fraction]]:
    """The PAR sheet's probability of each line, by the number of other bettors."""
    return {
        others: {
            line.kind: line.probability
            for line in progressive_sheet(
                CURRENT.progressive, jackpot_cents=story.SEED_CENTS, other_bettors=others
            ).lines
        }
        for others in range(7)
    }


def expected(kind: str, sizes, sheets) -> Fraction:
    """Each staked seat's probability as the PAR sheet gives it with its other bettors."""
    return sum((size * sheets[size - 1][kind] for size in sizes), start=Fraction(0))


def test_the_whole_story_to_the_cent(auditor, sheets):
    floor = story.play_story()
    reconcile()
    answer = auditor.get(f"/api/v1/pools/{floor.pool_id}/history")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    PoolHistory.model_validate_json(answer.content)  # the answer is of its declared shape

    assert body["time_zone"] == "Europe/Paris"
    assert [(d["day"], d["closing_cents"], d["change_cents"]) for d in body["meter"]] == [
        (day.isoformat(), *figures) for day, figures in story.METER.items()
    ]
    assert [
        (d["day"], d["count"], d["stakes_cents"], d["refunded_count"], d["refunded_cents"])
        for d in body["stakes"]
    ] == [(day.isoformat(), *figures) for day, figures in story.STAKES.items()]
    assert body["settled_rounds"] == 4 and body["settled_stakes"] == 11

    awards = {line["kind"]: line for line in body["awards"]}
    assert list(awards) == [
        "royal_flush",
        "community_royal",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "envy",
    ]
    observed = {kind: (a["observed"], a["voided"], a["amount_cents"]) for kind, a in awards.items()}
    assert observed == {
        "royal_flush": (1, 0, story.JACKPOT_CENTS),
        "community_royal": (0, 0, 0),
        "straight_flush": (0, 0, 0),
        "four_of_a_kind": (0, 0, 0),
        "full_house": (1, 0, 5_000),
        "envy": (1, 0, 50_000),
    }
    for kind, line in awards.items():
        exact = expected(kind, story.SETTLED_SIZES, sheets)
        assert Fraction(line["expected"]) == exact, kind
        assert Fraction(line["expected_rate"]) == exact / 11, kind
    # Envy: 2x1 + 3x2 + 2x1 + 4x3 = 22 (seat, other bettor) pairs, each a jackpot's chance.
    assert Fraction(awards["envy"]["expected"]) == 22 * sheets[0]["royal_flush"]
    for line in awards.values():
        exact = Fraction(line["expected"])
        decimal = Decimal(exact.numerator) / Decimal(exact.denominator)
        assert line["expected_decimal"] == str(decimal.quantize(Decimal("0.0001"), ROUND_HALF_UP))

    [hit] = body["hits"]
    assert hit["day"] == story.DAYS[1].isoformat()
    assert (hit["round"], hit["seat"], hit["amount_cents"], hit["status"]) == (
        "r3",
        1,
        story.JACKPOT_CENTS,
        "pending",
    )
    assert (hit["reset_reserve_cents"], hit["reset_house_cents"]) == (
        story.RESET_RESERVE_CENTS,
        story.RESET_HOUSE_CENTS,
    )
    assert body["reconciliation"]["ok"] is True
    assert body["reconciled"]["identity"] == "holds"
    assert body["reconciled"]["meter_cents"] == story.METER[story.DAYS[2]][0]


def test_one_day_of_the_story(auditor, sheets):
    floor = story.play_story()
    day = story.DAYS[1].isoformat()
    body = auditor.get(f"/api/v1/pools/{floor.pool_id}/history?from={day}&to={day}").json()
    assert (body["first_day"], body["last_day"]) == (day, day)
    # The closing meter counts every movement before the day too.
    assert [(d["day"], d["closing_cents"]) for d in body["meter"]] == [(day, 1_000_100)]
    assert [(d["day"], d["count"], d["refunded_cents"]) for d in body["stakes"]] == [(day, 3, 500)]
    assert body["settled_rounds"] == 1 and body["settled_stakes"] == 2
    awards = {line["kind"]: line for line in body["awards"]}
    assert (awards["royal_flush"]["observed"], awards["full_house"]["observed"]) == (1, 0)
    assert Fraction(awards["envy"]["expected"]) == 2 * sheets[1]["envy"]
    assert [hit["round"] for hit in body["hits"]] == ["r3"]
    # From the last day on: the first two days' movements are in its closing meter.
    last = story.DAYS[2].isoformat()
    later = auditor.get(f"/api/v1/pools/{floor.pool_id}/history?from={last}").json()
    assert [(d["day"], d["closing_cents"], d["change_cents"]) for d in later["meter"]] == [
        (last, 1_000_500, 400)
    ]
    assert later["hits"] == []


def test_each_chart_as_csv_is_the_json(auditor):
    floor = story.play_story()
    url = f"/api/v1/pools/{floor.pool_id}/history"
    body = auditor.get(url).json()
    for chart in ("meter", "stakes", "awards", "hits"):
        answer = auditor.get(f"{url}.csv?chart={chart}")
        assert answer.status_code == 200
        assert answer["Content-Type"] == "text/csv; charset=utf-8"
        assert (
            answer["Content-Disposition"]
            == f'attachment; filename="pool-{floor.pool_id}-{chart}.csv"'
        )
        rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
        assert rows == [{key: str(value) for key, value in row.items()} for row in body[chart]]
    meter = auditor.get(f"{url}.csv?chart=meter&from=2026-11-11&to=2026-11-11")
    assert meter.content.decode() == (
        "day,closing_cents,change_cents,corrections_cents\n2026-11-11,1000100,-400,0\n"
    )
    assert 'filename="pool-' in meter["Content-Disposition"]
    assert "2026-11-11-2026-11-11.csv" in meter["Content-Disposition"]


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("?from=2026-13-01", "from"),
        ("?to=yesterday", "to"),
        ("?from=2026-11-12&to=2026-11-11", "to"),
        (".csv?chart=pie", "chart"),
        (".csv", "chart"),
    ],
)
def test_bad_filters_name_the_parameter(auditor, floor, query, param):
    answer = auditor.get(f"/api/v1/pools/{floor.pool_id}/history{query}")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_parameter"
    assert answer.json()["error"]["param"] == param


def test_rights(django_user_model, floor):
    url = f"/api/v1/pools/{floor.pool_id}/history"
    assert Client().get(url).status_code == 401
    supervisor = staff(django_user_model, "supervisor")
    assert supervisor.get(url).status_code == 403
    assert supervisor.get(f"{url}.csv?chart=meter").status_code == 403
    admin = staff(django_user_model, "admin")
    assert admin.get(url).status_code == 200
    missing = admin.get("/api/v1/pools/99999/history")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "pool_not_found")


def test_a_constant_number_of_queries(django_assert_num_queries):
    """Day rows, not rounds: once folded, the same statements for three days as for none,
    whatever the number of rounds, awards and hits (tables.audit.history)."""
    floor = story.play_story()
    reconcile()
    fold_history()
    # 8 reads (the pool, its days, the fold's cursors, the chains' heads, the hits, the
    # corrections, the latest reconciliation and its report) and the statement timeout (the
    # test's transaction is the snapshot; a read takes no savepoint)
    with django_assert_num_queries(9):
        history = pool_history(floor.pool_id, PoolHistoryQuery())
    assert len(history.meter) == 3 and len(history.hits) == 1
    with django_assert_num_queries(10):  # and the meter's closing before the first day
        one_day = pool_history(floor.pool_id, PoolHistoryQuery(**{"from": story.DAYS[1]}))
    assert len(one_day.meter) == 2


def test_the_history_is_the_same_folded_or_not(auditor):
    """The day rows the fold keeps (tables.audit.history) give the answers the journal gives."""
    floor = story.play_story()
    url = f"/api/v1/pools/{floor.pool_id}/history"
    queries = ["", f"?from={story.DAYS[1]}", f"?to={story.DAYS[1]}", f"?from={story.DAYS[2]}"]
    before = [auditor.get(url + query).json() for query in queries]
    assert fold_history() > 0
    assert [auditor.get(url + query).json() for query in queries] == before
