"""A round settles with its pool's own paytable version, even when it is not the current one:
the figures the terminal is answered and the awards paid come from the same table."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from jackpot.models import Award, Pool
from rules import paytables
from rules.paytables import CURRENT, ProgressiveSchedule
from tests.conftest import make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db

OLDER = ProgressiveSchedule(version="uth-progressive/test-older", full_house_cents=7_500)


def test_settlement_and_awards_use_the_pools_paytable_version(monkeypatch):
    monkeypatch.setattr(
        paytables,
        "PROGRESSIVE_PAYTABLES",
        MappingProxyType({**paytables.PROGRESSIVE_PAYTABLES, OLDER.version: OLDER}),
    )
    floor = make_floor()
    Pool.objects.filter(pk=floor.pool_id).update(paytable_version=OLDER.version)
    assert OLDER.version != CURRENT.progressive.version
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201

    response = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["9s", "8d"],
            "seats": [uth_play(1, "Kc Ks")],  # a full house
        },
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["seats"][0]["progressive"] == {
        "stake_cents": 500,
        "award": "full_house",
        "fixed_cents": 7_500,
    }
    assert [(a["kind"], a["amount_cents"]) for a in body["awards"]] == [("full_house", 7_500)]
    assert Award.objects.get().amount_cents == 7_500
