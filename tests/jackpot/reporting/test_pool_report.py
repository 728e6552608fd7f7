"""The pool reconciliation auditors read: every figure, and the meter identity to the unit."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor(django_user_model) -> Client:
    return token_client(person("ida", "auditor"))


def test_report_after_stakes_a_hit_a_void_and_a_voided_jackpot(auditor, django_user_model, db):
    # 1,234 bp of 500 cents is 61.7 cents a stake: the identity must hold to the unit.
    floor = make_floor(1, meter_share_bp=1234, reserve_share_bp=777, seed_cents=100_000)
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    hit = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    ).json()
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(3)]})
    terminal.post("/rounds/r-2/void", {"reason": "misdeal"})
    jackpot = hit["awards"][0]
    token_client(person("ana", "supervisor")).post(
        f"/api/v1/awards/{jackpot['id']}/void", {"reason": "test"}, content_type="application/json"
    )
    confirmed = token_client(person("bob", "supervisor")).post(
        f"/api/v1/awards/{jackpot['id']}/void/confirm", {}, content_type="application/json"
    )
    assert confirmed.status_code == 200, confirmed.json()

    report = auditor.get(f"/api/v1/pools/{floor.pool_id}/report").json()
    # 100,000 + 2 x 61.7 = 100,123.4 cents; the hit won 100,123 and the reset put the seed
    # back (100,000.4); r-2's stake added 61.7 (100,062.1); the voided jackpot went back on
    # the meter and its reset (the seed) back to the reserve and the house: 100,185.1 cents,
    # the meter at the hit plus the stake since.
    assert report["meter_identity"]["holds"] is True
    assert report["meter_identity"]["meter_units"] == 1_001_851_000
    assert report["meter_identity"]["expected_units"] == 1_001_851_000
    assert report["meter_cents"] == 100_185
    assert report["stakes"] == {"count": 3, "in_cents": 1_000, "refunded_cents": 500}
    assert report["hit_count"] == 0  # the only jackpot was voided
    assert report["seed_cents"] == 100_000  # the reset, beside the meter
    # Voided with the jackpot it follows (compliance 53).
    assert report["awards_by_kind"]["envy"] == {"count": 0, "amount_cents": 0}
    assert report["awards_by_kind"]["royal_flush"] == {"count": 0, "amount_cents": 0}
    assert report["balances"]["meter"] == report["meter_cents"]


def test_report_rights(auditor, floor):
    url = f"/api/v1/pools/{floor.pool_id}/report"
    assert auditor.get(url).status_code == 200
    assert Client().get(url).status_code == 401
    assert Client(HTTP_AUTHORIZATION=f"Bearer {floor.uth[0].token}").get(url).status_code == 401
    assert auditor.get("/api/v1/pools/99999/report").status_code == 404
