"""The wire's declarations: strict readers, duplicate keys, Stud rounds through the API, and the
service's real answers validated against the models that declare them."""

from __future__ import annotations

import pytest
from django.test import Client

from config.codes import ERRORS, ErrorCode
from tables import bodies
from tables.rules.errors import RulesCode
from tests.conftest import uth_seat

pytestmark = pytest.mark.django_db


def test_the_engine_codes_are_in_the_registry():
    assert {code.value for code in RulesCode} <= {code.value for code in ErrorCode}
    assert set(ERRORS) == set(ErrorCode)


@pytest.mark.parametrize(
    ("raw", "code", "param"),
    [
        ('{"cards": ["As", "Ks", "Qs", "Js", "Ts"], "cards": ["2c"]}', "malformed_json", None),
        ('{"cards": "As Ks Qs Js Ts"}', "invalid_card", "cards"),
        ('{"cards": ["As", "Ks", "Qs", "Js", 10]}', "invalid_card", "cards[4]"),
        ('{"cards": ["As", "Ks", "Qs", "Js"]}', "wrong_card_count", "cards"),
        ('{"cards": ["As", "Ks", "Qs", "Js", "Ts"], "x": 1}', "unknown_field", "x"),
        ("{}", "invalid_card", "cards"),
    ],
)
def test_evaluate_refuses_what_is_not_declared(raw, code, param):
    response = Client().post("/api/v1/rules/evaluate", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == (code, param)


@pytest.mark.parametrize(
    ("bets", "param"),
    [
        ({"ante_cents": "500", "blind_cents": 500}, "ante_cents"),
        ({"ante_cents": True, "blind_cents": 500}, "ante_cents"),
        ({"ante_cents": 500.0, "blind_cents": 500}, "ante_cents"),
        ({"ante_cents": 500}, "blind_cents"),
        ({"ante_cents": 500, "blind_cents": 500, "tip_cents": 1}, "tip_cents"),
    ],
)
def test_uth_bets_are_read_strictly(bets, param):
    seat = {**uth_seat(1), "bets": bets}
    with pytest.raises(Exception) as caught:
        bodies.parse_open(
            {"round_id": "r", "seats": [seat]},
            game=bodies.Game.UTH,
            seats=7,
            progressive_stake_cents=500,
        )
    assert caught.value.code == "invalid_bet"  # type: ignore[attr-defined]
    assert caught.value.param == f"seats[0].bets.{param}"  # type: ignore[attr-defined]


def test_a_stud_table_refuses_uth_bets_naming_the_field():
    with pytest.raises(Exception) as caught:
        bodies.parse_open(
            {"round_id": "r", "seats": [uth_seat(1)]},
            game=bodies.Game.STUD,
            seats=7,
            progressive_stake_cents=None,
        )
    assert caught.value.code == "invalid_bet"  # type: ignore[attr-defined]
    assert caught.value.param.startswith("seats[0].bets.")  # type: ignore[attr-defined]
