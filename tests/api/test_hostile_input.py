"""Bad input gets a 4xx in one error shape, naming the field, and changes nothing."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from jackpot.models import AuditEvent, Pool, Transfer
from tables.models import Round, RoundSeat
from tests.conftest import uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

GOOD_SEATS = [uth_seat(1), uth_seat(2)]


def _snapshot(pool_id):
    return (
        Round.objects.count(),
        RoundSeat.objects.count(),
        Transfer.objects.count(),
        AuditEvent.objects.count(),
        Pool.objects.get(pk=pool_id).meter_units,
    )


def _error(response, status):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "code", "message", "param"}
    return body["error"]


OPEN_CASES = [
    # (body, code, param)
    ([], "invalid_request", None),
    ({"round_id": "r", "seats": GOOD_SEATS, "extra": 1}, "unknown_field", "extra"),
    ({"seats": GOOD_SEATS}, "invalid_round_id", "round_id"),
    ({"round_id": "x" * 65, "seats": GOOD_SEATS}, "invalid_round_id", "round_id"),
    ({"round_id": "r/1", "seats": GOOD_SEATS}, "invalid_round_id", "round_id"),
    ({"round_id": 12, "seats": GOOD_SEATS}, "invalid_round_id", "round_id"),
    ({"round_id": "r", "seats": []}, "invalid_request", "seats"),
    ({"round_id": "r", "seats": [uth_seat(n) for n in range(1, 9)]}, "too_many_seats", "seats"),
    ({"round_id": "r", "seats": [uth_seat(0)]}, "invalid_seat", "seats[0].seat"),
    ({"round_id": "r", "seats": [uth_seat(8)]}, "invalid_seat", "seats[0].seat"),
    ({"round_id": "r", "seats": [uth_seat(1), uth_seat(1)]}, "duplicate_seat", "seats[1].seat"),
    (
        {"round_id": "r", "seats": [{"seat": True, "bets": uth_seat(1)["bets"]}]},
        "invalid_seat",
        "seats[0].seat",
    ),
    (
        {"round_id": "r", "seats": [{"seat": 1, "bets": {"ante_cents": 5.5, "blind_cents": 5.5}}]},
        "invalid_bet",
        "seats[0].bets.ante_cents",
    ),
    (
        {
            "round_id": "r",
            "seats": [{"seat": 1, "bets": {"ante_cents": "500", "blind_cents": 500}}],
        },
        "invalid_bet",
        "seats[0].bets.ante_cents",
    ),
    (
        {
            "round_id": "r",
            "seats": [{"seat": 1, "bets": {"ante_cents": -500, "blind_cents": -500}}],
        },
        "invalid_bet",
        "seats[0].bets.ante_cents",
    ),
    (
        {
            "round_id": "r",
            "seats": [{"seat": 1, "bets": {"ante_cents": 10**15, "blind_cents": 10**15}}],
        },
        "invalid_bet",
        "seats[0].bets.ante_cents",
    ),
    (
        {"round_id": "r", "seats": [{"seat": 1, "bets": {"ante_cents": 500, "blind_cents": 400}}]},
        "invalid_bet",
        "seats[0].bets.blind_cents",
    ),
    (
        {"round_id": "r", "seats": [uth_seat(1, progressive=400)]},
        "invalid_bet",
        "seats[0].bets.progressive_cents",
    ),
    (
        {"round_id": "r", "seats": [uth_seat(1, progressive=True)]},
        "invalid_bet",
        "seats[0].bets.progressive_cents",
    ),
]


@pytest.mark.parametrize(("body", "code", "param"), OPEN_CASES)
def test_bad_open_is_refused_and_changes_nothing(floor, body, code, param):
    before = _snapshot(floor.pool_id)
    error = _error(floor.uth[0].post("/rounds", body), 400)
    assert (error["code"], error["param"]) == (code, param)
    assert _snapshot(floor.pool_id) == before


RESULT = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
}


def _with(**changes):
    return {**RESULT, **changes}


RESULT_CASES = [
    (_with(board=["Ah", "Kh", "Qh", "2c"]), "wrong_card_count", "board"),
    (_with(board=["Ah", "Kh", "Qh", "2c", "1x"]), "invalid_card", "board[4]"),
    (_with(dealer=["9s", "as"]), "invalid_card", "dealer[1]"),
    (_with(dealer=["9s", "Ah"]), "duplicate_card", "dealer[1]"),
    (
        _with(seats=[uth_play(1, "Jh Th"), uth_play(2, "Jh 5c", "fold")]),
        "duplicate_card",
        "seats[1].cards[0]",
    ),
    (_with(seats=[uth_play(1, "Jh Th")]), "seats_mismatch", "seats"),
    (_with(seats=[uth_play(1, "Jh Th"), uth_play(3, "4c 5c", "fold")]), "seats_mismatch", "seats"),
    (
        _with(seats=[uth_play(1, "Jh Th", "play", "flop", 3), uth_play(2, "4c 5c", "fold")]),
        "invalid_decision",
        "seats[0].decision.multiple",
    ),
    (
        _with(seats=[uth_play(1, "Jh Th", "play", "river", 2), uth_play(2, "4c 5c", "fold")]),
        "invalid_decision",
        "seats[0].decision.multiple",
    ),
]


@pytest.mark.parametrize(("body", "code", "param"), RESULT_CASES)
def test_bad_result_is_refused_and_changes_nothing(floor, body, code, param):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": GOOD_SEATS})
    before = _snapshot(floor.pool_id)
    error = _error(terminal.post("/rounds/r-1/result", body), 400)
    assert (error["code"], error["param"]) == (code, param)
    assert _snapshot(floor.pool_id) == before
    assert Round.objects.get(round_id="r-1").state == "open"


def test_malformed_and_deeply_nested_json_are_400(floor):
    terminal = floor.uth[0]
    client = terminal.client()
    url = f"/api/v1/tables/{terminal.table_id}/rounds"
    for raw in ("{", '{"round_id": NaN}', "[" * 20_000 + "]" * 20_000, '{"a": 1e999999}'):
        error = _error(client.post(url, raw, content_type="application/json"), 400)
        assert error["code"] == "malformed_json"
    assert (
        _error(client.post(url, "round_id=1", content_type="text/plain"), 415)["code"]
        == "unsupported_media_type"
    )
    big = json.dumps({"round_id": "r", "seats": GOOD_SEATS, "pad": "x" * 100_000})
    response = client.post(url, big, content_type="application/json")
    assert 400 <= response.status_code < 500


def test_wrong_tokens_and_other_tables(floor):
    own, other = floor.uth
    body = {"round_id": "r-1", "seats": GOOD_SEATS}
    url = f"/api/v1/tables/{own.table_id}/rounds"
    assert (
        _error(Client().post(url, body, content_type="application/json"), 401)["type"]
        == "authentication"
    )
    bad = Client(HTTP_AUTHORIZATION="Bearer term_forged")
    assert (
        _error(bad.post(url, body, content_type="application/json"), 401)["code"]
        == "authentication_failed"
    )
    # A terminal posting to another table's rounds.
    assert (
        _error(other.client().post(url, body, content_type="application/json"), 403)["type"]
        == "permission"
    )
    own.post("/rounds", body)
    # Another table's round id is simply not found at this table.
    assert _error(other.post("/rounds/r-1/result", RESULT), 404)["code"] == "round_not_found"
    assert Round.objects.count() == 1


def test_progressive_refused_at_a_table_without_a_pool(floor):
    body = {
        "round_id": "s-1",
        "seats": [{"seat": 1, "bets": {"ante_cents": 100, "progressive_cents": 500}}],
    }
    error = _error(floor.stud.post("/rounds", body), 400)
    assert error["param"] == "seats[0].bets.progressive_cents"


def test_revoked_token_and_disabled_table(floor):
    from tables.models import Table, Terminal

    terminal = floor.uth[0]
    body = {"round_id": "r-1", "seats": GOOD_SEATS}
    Table.objects.filter(pk=terminal.table_id).update(enabled=False)
    error = _error(terminal.post("/rounds", body), 403)
    assert error["message"] == "this table is disabled"
    Table.objects.filter(pk=terminal.table_id).update(enabled=True)
    Terminal.objects.filter(table_id=terminal.table_id).update(revoked_at="2026-01-01T00:00Z")
    assert _error(terminal.post("/rounds", body), 401)["code"] == "authentication_failed"
    assert not Round.objects.exists()


def test_stud_buy_with_a_card_already_dealt_is_refused(floor):
    terminal = floor.stud
    terminal.post(
        "/rounds", {"round_id": "s-1", "seats": [{"seat": 1, "bets": {"ante_cents": 100}}]}
    )
    before = _snapshot(floor.pool_id)
    buy = {"action": "buy", "discard": "2h", "draw": "Ac"}  # Ac is the dealer's
    error = _error(
        terminal.post(
            "/rounds/s-1/result",
            {
                "dealer": ["Ac", "Kd", "7h", "4s", "2c"],
                "seats": [{"seat": 1, "cards": ["9h", "9d", "5c", "4c", "2h"], "decision": buy}],
            },
        ),
        400,
    )
    assert (error["code"], error["param"]) == ("duplicate_card", "seats[0].decision.draw[0]")
    assert _snapshot(floor.pool_id) == before


def test_stud_buy_settles_with_the_drawn_card(floor):
    terminal = floor.stud
    bets = {"ante_cents": 100, "bonus_cents": 100}
    terminal.post("/rounds", {"round_id": "s-2", "seats": [{"seat": 1, "bets": bets}]})
    response = terminal.post(
        "/rounds/s-2/result",
        {
            "dealer": ["Ac", "Kd", "7h", "4s", "2c"],
            "seats": [
                {
                    "seat": 1,
                    "cards": ["9h", "9d", "5c", "4c", "2h"],
                    "decision": {"action": "buy", "discard": "2h", "draw": "9s"},
                }
            ],
        },
    )
    assert response.status_code == 200, response.json()
    seat = response.json()["seats"][0]
    assert seat["player_hand"]["category"] == "three_of_a_kind"
    assert seat["boxes"]["purchase"] == {"stake_cents": 100, "net_cents": -100}
    assert seat["boxes"]["bonus"] == {"stake_cents": 100, "net_cents": -100}  # buying forfeits it
    assert seat["boxes"]["raise"] == {"stake_cents": 200, "net_cents": 600}  # trips pay 3:1
    assert seat["boxes"]["ante"]["net_cents"] == 100


def test_unknown_paths_and_pools_answer_in_the_error_shape(client, floor):
    assert _error(client.get("/api/v1/no-such-thing"), 404)["code"] == "not_found"
    assert _error(client.get("/api/v1/pools/999999/meter"), 404)["code"] == "pool_not_found"
    assert _error(client.get("/api/v1/pools/999999"), 404)["param"] == "pool"


def test_oversized_bodies_are_refused_unread(client):
    body = '{"cards": ["As"], "pad": "' + "x" * 100_000 + '"}'
    response = client.post("/api/v1/rules/evaluate", body, content_type="application/json")
    assert _error(response, 413)["code"] == "body_too_large"


def test_a_token_of_the_wrong_kind_is_named(floor, django_user_model):

    staff = token_client(person("sup", "supervisor"))
    error = _error(
        staff.post(
            f"/api/v1/tables/{floor.uth[0].table_id}/rounds", {}, content_type="application/json"
        ),
        401,
    )
    assert "terminal's token" in error["message"]
    terminal = floor.uth[0].client()
    assert "staff token" in _error(terminal.get("/api/v1/journal"), 401)["message"]


def test_unknown_api_paths_are_json_even_in_debug(client, settings):
    settings.DEBUG = True
    assert _error(client.get("/api/v1/nothing/here"), 404)["code"] == "not_found"


@pytest.mark.parametrize("text", ["a\u0000b", "\ud800", "\udfff"])
def test_text_no_database_can_hold_is_refused(floor, text):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": GOOD_SEATS})
    before = _snapshot(floor.pool_id)
    raw = json.dumps({"reason": text})  # json.dumps writes \u0000 and lone surrogates as escapes
    response = terminal.client().post(
        f"/api/v1/tables/{terminal.table_id}/rounds/r-1/void", raw, content_type="application/json"
    )
    assert _error(response, 400)["code"] == "malformed_json"
    assert _snapshot(floor.pool_id) == before
    assert _error(terminal.client().get(f"/api/v1/tables/{terminal.table_id}/rounds/a%00b"), 400)


def test_posts_to_unknown_api_paths_are_json_404_without_csrf(floor):
    csrf = Client(enforce_csrf_checks=True)
    assert _error(csrf.post("/api/v1/nothing", {}), 404)["code"] == "not_found"
