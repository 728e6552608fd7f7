"""The wire's declarations: strict readers, duplicate keys, Stud rounds through the API, and the
service's real answers validated against the models that declare them."""

from __future__ import annotations

import pytest
from django.test import Client

from core.codes import ERRORS, ErrorCode
from rules.errors import RulesCode
from tables.bodies.round_answers import OpenAnswer, ResultAnswer
from tables.bodies.round_reads import RoundDetail
from tables.bodies.round_requests import parse_open
from tables.models import Game, Round
from tests.conftest import uth_play, uth_seat
from tests.staff import person, staff_token

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
        parse_open(
            {"round_id": "r", "seats": [seat]},
            game=Game.UTH,
            seats=7,
            progressive_stake_cents=500,
        )
    assert caught.value.code == "invalid_bet"  # type: ignore[attr-defined]
    assert caught.value.param == f"seats[0].bets.{param}"  # type: ignore[attr-defined]


def test_a_stud_table_refuses_uth_bets_naming_the_field():
    with pytest.raises(Exception) as caught:
        parse_open(
            {"round_id": "r", "seats": [uth_seat(1)]},
            game=Game.STUD,
            seats=7,
            progressive_stake_cents=None,
        )
    assert caught.value.code == "invalid_bet"  # type: ignore[attr-defined]
    assert caught.value.param.startswith("seats[0].bets.")  # type: ignore[attr-defined]


# --- through the API --------------------------------------------------------------------------

STUD_OPEN = {
    "round_id": "s-1",
    "seats": [
        {"seat": 1, "bets": {"ante_cents": 1000, "bonus_cents": 200}},
        {"seat": 3, "bets": {"ante_cents": 500}},
    ],
}
STUD_RESULT = {
    "dealer": ["As", "Kd", "8h", "6c", "3s"],
    "seats": [
        {"seat": 1, "cards": ["Jc", "Tc", "7c", "4c", "2c"], "decision": {"action": "raise"}},
        {
            "seat": 3,
            "cards": ["9h", "9d", "5c", "4s", "2h"],
            "decision": {"action": "buy", "discard": "2h", "draw": "9c"},
        },
    ],
}


def test_a_stud_round_opens_and_settles_through_the_api(floor):
    opened = floor.stud.post("/rounds", STUD_OPEN)
    assert opened.status_code == 201, opened.content
    body = opened.json()
    OpenAnswer.model_validate_json(opened.content)
    assert (body["progressive"], body["meter"]) == (None, None)
    assert body["seats"] == [
        {"seat": 1, "bets": {"ante_cents": 1000, "bonus_cents": 200}},
        {"seat": 3, "bets": {"ante_cents": 500, "bonus_cents": 0}},
    ]
    settled = floor.stud.post("/rounds/s-1/result", STUD_RESULT)
    assert settled.status_code == 200, settled.content
    answer = ResultAnswer.model_validate_json(settled.content)
    body = settled.json()
    assert (body["board"], body["awards"], body["meter"]) == ([], [], None)
    # Seat 1: a flush beats the dealer's Ace-King: Ante 1:1, Raise 5:1 on 2,000, Bonus 100:1.
    # Seat 3: buys the third nine (fee 500), three of a kind: Ante 1:1, Raise 3:1 on 1,000.
    assert [seat["net_cents"] for seat in body["seats"]] == [31_000, 3_000]
    assert body["seats"][1]["boxes"]["purchase"] == {"stake_cents": 500, "net_cents": -500}
    assert body["seats"][1]["decision"] == {"action": "buy", "discard": "2h", "draw": "9c"}
    assert answer.seats[1].player_hand.category == "three_of_a_kind"
    detail = floor.stud.client().get(f"/api/v1/tables/{floor.stud.table_id}/rounds/s-1")
    assert detail.status_code == 200
    assert detail.json()["closed"] == body
    RoundDetail.model_validate_json(detail.content)


def refusal(response) -> tuple[int, str, str | None]:
    error = response.json()["error"]
    return response.status_code, error["code"], error["param"]


def test_a_round_body_with_a_key_twice_is_refused(floor):
    terminal = floor.uth[0]
    raw = '{"round_id": "r-1", "seats": [], "round_id": "r-2"}'
    response = terminal.client().post(
        f"/api/v1/tables/{terminal.table_id}/rounds", raw, content_type="application/json"
    )
    assert refusal(response) == (400, "malformed_json", None)
    assert "duplicate key 'round_id'" in response.json()["error"]["message"]
    bets = '{"ante_cents": 500, "blind_cents": 500, "ante_cents": 1}'
    raw = '{"round_id": "r-1", "seats": [{"seat": 1, "bets": ' + bets + "}]}"
    response = terminal.client().post(
        f"/api/v1/tables/{terminal.table_id}/rounds", raw, content_type="application/json"
    )
    assert refusal(response) == (400, "malformed_json", None)
    assert not Round.objects.exists()  # nothing opened, nothing staked


UTH_RESULT = {
    "board": ["2h", "7c", "9d", "Js", "4s"],
    "dealer": ["Kc", "Kd"],
    "seats": [uth_play(1, "Ac Ad")],
}


@pytest.mark.parametrize(
    ("path", "body", "code", "param"),
    [
        # strings, booleans and floats for ints
        (
            "/rounds",
            {"round_id": "r", "seats": [{"seat": "1", "bets": {}}]},
            "invalid_seat",
            "seats[0].seat",
        ),
        (
            "/rounds",
            {"round_id": "r", "seats": [{"seat": True, "bets": {}}]},
            "invalid_seat",
            "seats[0].seat",
        ),
        (
            "/rounds",
            {"round_id": "r", "seats": [{"seat": 1.0, "bets": {}}]},
            "invalid_seat",
            "seats[0].seat",
        ),
        ("/rounds", {"round_id": 7, "seats": [uth_seat(1)]}, "invalid_round_id", "round_id"),
        (
            "/rounds",
            {
                "round_id": "r",
                "seats": [{**uth_seat(1), "bets": {"ante_cents": 5e2, "blind_cents": 500}}],
            },
            "invalid_bet",
            "seats[0].bets.ante_cents",
        ),
        # unknown fields
        ("/rounds", {"round_id": "r", "seats": [uth_seat(1)], "shoe": 3}, "unknown_field", "shoe"),
        (
            "/rounds",
            {"round_id": "r", "seats": [{**uth_seat(1), "chair": 1}]},
            "unknown_field",
            "seats[0].chair",
        ),
        ("/rounds/r/result", {**UTH_RESULT, "burn": ["2c"]}, "unknown_field", "burn"),
        ("/rounds/r/void", {"reason": "misdeal", "by": "me"}, "unknown_field", "by"),
        # missing required fields
        ("/rounds", {"seats": [uth_seat(1)]}, "invalid_round_id", "round_id"),
        ("/rounds", {"round_id": "r"}, "invalid_request", "seats"),
        (
            "/rounds",
            {"round_id": "r", "seats": [{"bets": uth_seat(1)["bets"]}]},
            "invalid_seat",
            "seats[0].seat",
        ),
        (
            "/rounds/r/result",
            {"dealer": ["Kc", "Kd"], "seats": UTH_RESULT["seats"]},
            "invalid_card",
            "board",
        ),
        (
            "/rounds/r/result",
            {**UTH_RESULT, "seats": [{"seat": 1, "cards": ["Ac", "Ad"]}]},
            "invalid_decision",
            "seats[0].decision",
        ),
        ("/rounds/r/void", {}, "invalid_reason", "reason"),
        ("/rounds/r/void", {"reason": " \t"}, "invalid_reason", "reason"),
    ],
)
def test_round_bodies_are_read_strictly(floor, path, body, code, param):
    response = floor.uth[0].post(path, body)
    assert refusal(response) == (400, code, param)
    assert not Round.objects.exists()


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=5.0", "limit"),
        ("limit=true", "limit"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("pool=-1", "pool"),
        ("kind=jackpot", "kind"),
        ("from=2026-11-29T20:00:00", "from"),
        ("to=yesterday", "to"),
    ],
)
def test_award_queries_are_read_strictly(admin_client_token, query, param):
    response = Client().get(f"/api/v1/awards?{query}", HTTP_AUTHORIZATION=admin_client_token)
    assert refusal(response) == (400, "invalid_parameter", param)


@pytest.fixture
def admin_client_token(django_user_model) -> str:
    return f"Bearer {staff_token(person('auditor', 'auditor'))}"
