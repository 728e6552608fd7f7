"""openapi-core validates every request and answer of the real flows against `/api/schema/`
(issue 22, item 5), beside schemathesis (generated requests) and the generated client (typed
models).

The schema is OpenAPI 3.1 (core/openapi.py): openapi-spec-validator accepts it, and openapi-core's
request and response validators accept what the service really sends and answers, nulls included
(the meter with no jackpot waiting, a Stud round's `progressive` and `meter`, a verification with
nothing running), and requests without the optional filters (`kind`, `code`, `status`). Each test
drives a flow through `tests.api.strict.StrictClient` and ends with `finish()`, which lists every
exchange the validator refused. The last tests show the validation can fail: a tampered answer (a
null where the schema says none, a required key missing, a status not documented) and a request
that breaks the schema are refused.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import Client
from openapi_spec_validator import validate as validate_spec

from tables.audit.reconciliation import reconcile
from tests.api.strict import StrictClient, load_openapi, validate_exchange
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import person, staff_token
from tests.winners import PAY, PAY_CASH

# One process builds this module's fixtures (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("tests/api/test_strict_validation.py")

ROYAL_BOARD = ["Ah", "Kh", "Qh", "2c", "3d"]
LIMITLESS = {
    "anon": "1000000/min",
    "rules": "1000000/min",
    "terminal": "1000000/min",
    "heavy_read": "1000000/min",
}


#: The operations the UTH flow must have validated (a step dropped from it fails the test).
UTH_FLOW = {
    ("get", "/api/v1/pools/{pool}/meter"),
    ("get", "/api/v1/pools/{pool}"),
    ("post", "/api/v1/tables/{table}/rounds"),
    ("get", "/api/v1/tables/{table}/rounds"),
    ("post", "/api/v1/tables/{table}/rounds/{round_id}/result"),
    ("get", "/api/v1/tables/{table}/rounds/{round_id}"),
    ("post", "/api/v1/tables/{table}/rounds/{round_id}/void"),
    ("get", "/api/v1/awards"),
    ("post", "/api/v1/awards/{award}/verify"),
    ("post", "/api/v1/awards/{award}/approve"),
    ("post", "/api/v1/awards/{award}/pay"),
    ("post", "/api/v1/awards/{award}/void"),
    ("post", "/api/v1/awards/{award}/void/confirm"),
    ("get", "/api/v1/journal"),
    ("get", "/api/v1/journal/verify"),
    ("post", "/api/v1/journal/verify"),
    ("get", "/api/v1/journal/verifications/{verification}"),
    ("get", "/api/v1/pools/{pool}/report"),
    ("get", "/api/v1/reconciliations"),
    ("get", "/api/v1/reconciliations/{reconciliation}"),
    ("get", "/api/v1/awards/{award}/winner"),
    ("get", "/api/v1/awards/register"),
    ("get", "/api/v1/pools/{pool}/liability"),
    ("get", "/api/v1/events"),
    ("post", "/api/v1/awards/{award}/review"),
    ("post", "/api/v1/awards/{award}/referral"),
}


@pytest.fixture(scope="module")
def openapi_and_spec():
    return load_openapi()


@pytest.fixture
def api(openapi_and_spec, settings, db) -> StrictClient:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": LIMITLESS}
    return StrictClient(openapi_and_spec[0])


@pytest.fixture
def staff(db, django_user_model) -> dict[str, str]:
    """Bearer tokens: two supervisors (four eyes), an auditor, an admin, a surveillance officer,
    a manager (a referral's decision: never an admin's, compliance 52)."""
    cast = (
        ("supervisor1", "supervisor"),
        ("supervisor2", "supervisor"),
        ("auditor", "auditor"),
        ("admin", "admin"),
        ("officer", "surveillance"),
        ("manager", "manager"),
    )
    return {username: staff_token(person(username, role)) for username, role in cast}


def test_the_schema_is_valid_openapi_3_1(openapi_and_spec):
    _, spec = openapi_and_spec
    assert spec["openapi"] == "3.1.0"
    validate_spec(spec)  # raises on any fault, with the path to it
    text = json.dumps(spec)
    # OpenAPI 3.0's keyword, meaningless in 3.1: a null is a `{"type": "null"}` member.
    assert '"nullable"' not in text
    # A query parameter is absent or has a value: never null, no `default: null` to validate.
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                where = f"{method} {path} {parameter['name']}"
                assert "null" not in json.dumps(parameter["schema"]), where
                assert parameter["schema"].get("default", 0) is not None, where


def test_uth_round_to_a_paid_jackpot(api, staff):
    floor = make_floor()
    terminal, other = floor.uth[0], floor.uth[1]
    rounds = f"/api/v1/tables/{terminal.table_id}/rounds"
    pool = floor.pool_id
    auditor, sup1, sup2 = staff["auditor"], staff["supervisor1"], staff["supervisor2"]

    # The sign before any hit: nothing pending (a null), then an unchanged sign is a 304.
    meter = api.get(f"/api/v1/pools/{pool}/meter")
    api.check(meter["pending_jackpot"] is None, f"meter: {meter}")
    etag = api.client.get(f"/api/v1/pools/{pool}/meter")["ETag"]
    api.get(f"/api/v1/pools/{pool}/meter", headers={"If-None-Match": etag}, expect=304)
    api.get(f"/api/v1/pools/{pool}")

    # A round opened with progressive stakes, with an Idempotency-Key, and replayed with it.
    opening = {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2, trips=100), uth_seat(3)]}
    key = {"Idempotency-Key": "open-r-1"}
    opened = api.post(rounds, opening, token=terminal.token, headers=key, expect=201)
    api.check(opened["progressive"]["stakes"] == 3, f"open: {opened['progressive']}")
    replayed = api.post(rounds, opening, token=terminal.token, headers=key, expect=201)
    api.check(replayed["round_id"] == "r-1", f"replay: {replayed}")
    other_body = {"round_id": "r-9", "seats": [uth_seat(1)]}
    reused = api.post(rounds, other_body, token=terminal.token, headers=key, expect=409)
    api.check(reused["error"]["code"] == "idempotency_key_reused", f"reused: {reused}")
    api.get(rounds, token=terminal.token)
    api.get(rounds, token=terminal.token, query={"state": "open", "limit": 5})

    # The result: a royal with both hole cards (the jackpot), the envy for the others, Trips.
    result = {
        "board": ROYAL_BOARD,
        "dealer": ["9s", "9d"],
        "seats": [
            uth_play(1, "Jh Th"),
            uth_play(2, "2s 2d", action="fold"),
            uth_play(3, "5c 6c", street="river", multiple=1),
        ],
    }
    settled = api.post(f"{rounds}/r-1/result", result, token=terminal.token)
    awards = {(a["seat"], a["kind"]): a for a in settled["awards"]}
    api.check({(1, "royal_flush"), (2, "envy"), (3, "envy")} <= set(awards), f"awards {awards}")
    jackpot = awards[(1, "royal_flush")]
    api.post(f"{rounds}/r-1/result", result, token=terminal.token)  # a replay by round_id
    api.get(f"{rounds}/r-1", token=terminal.token)

    # The sign with a jackpot waiting, the awards listed with and without each filter.
    meter = api.get(f"/api/v1/pools/{pool}/meter")
    api.check(meter["pending_jackpot"] is not None, f"meter: {meter}")
    api.get("/api/v1/awards", token=sup1)
    api.get("/api/v1/awards", token=sup1, query={"status": "pending", "pool": pool})
    api.get("/api/v1/awards", token=sup1, query={"kind": "royal_flush", "table": terminal.table_id})

    # Verify, approve (four eyes), pay; paying twice is a conflict.
    api.post(f"/api/v1/awards/{jackpot['id']}/verify", {"note": "video checked"}, token=sup1)
    refused = api.post(f"/api/v1/awards/{jackpot['id']}/approve", token=sup1, expect=403)
    api.check(refused["error"]["code"] == "four_eyes", f"approve: {refused}")
    # Surveillance first: no confirmed video review, no approval of a jackpot.
    refused = api.post(f"/api/v1/awards/{jackpot['id']}/approve", token=sup2, expect=409)
    api.check(refused["error"]["code"] == "surveillance_review_required", f"approve: {refused}")
    review = {
        "camera": "table 1, overhead",
        "from": "2026-12-01T20:00:00+01:00",
        "to": "2026-12-01T20:05:00+01:00",
        "verdict": "referred",
        "reason": "the dealer's hand over the deck",
    }
    api.post(f"/api/v1/awards/{jackpot['id']}/review", review, token=staff["officer"])
    decision = {"decision": "clear", "reason": "the full footage shows a fair deal"}
    api.post(f"/api/v1/awards/{jackpot['id']}/referral", decision, token=staff["manager"])
    api.post(f"/api/v1/awards/{jackpot['id']}/approve", {"note": "slip seen"}, token=sup2)
    refused = api.post(f"/api/v1/awards/{jackpot['id']}/pay", PAY_CASH, token=sup1, expect=400)
    api.check(refused["error"]["code"] == "winner_identity_required", f"pay: {refused}")
    paid = api.post(f"/api/v1/awards/{jackpot['id']}/pay", PAY, token=sup1)
    api.check(paid["status"] == "paid" and paid["winner_identified"], f"pay: {paid}")
    api.post(f"/api/v1/awards/{jackpot['id']}/pay", PAY, token=sup1, expect=409)
    api.get(f"/api/v1/awards/{jackpot['id']}/winner", token=auditor)
    today = {"from": "2020-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z"}
    api.get("/api/v1/awards/register", token=auditor, query={**today, "format": "csv"})

    # A fixed award voided with a reason (or refused as owed: either answer is held to the
    # schema); an award of the next round, voided while pending.
    envy = awards[(2, "envy")]
    voided_or_owed = api.client.post(
        f"/api/v1/awards/{envy['id']}/void",
        {"reason": "dealer error"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {sup2}",
    )
    api.record(voided_or_owed, sent=json.dumps({"reason": "dealer error"}).encode())
    api.check(voided_or_owed.status_code in (200, 202, 409), f"void: {voided_or_owed.content!r}")

    # A misdeal: opened, then voided.
    api.post(rounds, {"round_id": "r-2", "seats": [uth_seat(4)]}, token=terminal.token, expect=201)
    api.post(f"{rounds}/r-2/void", {"reason": "misdeal"}, token=terminal.token)
    api.get(rounds, token=terminal.token, query={"state": "void"})

    # A jackpot's void is a two-person step: filed by one supervisor, confirmed by another.
    other_rounds = f"/api/v1/tables/{other.table_id}/rounds"
    api.post(
        other_rounds, {"round_id": "o-1", "seats": [uth_seat(1)]}, token=other.token, expect=201
    )
    royal = {"board": ROYAL_BOARD, "dealer": ["9s", "9d"], "seats": [uth_play(1, "Jh Th")]}
    second = api.post(f"{other_rounds}/o-1/result", royal, token=other.token)
    hit = next(a for a in second["awards"] if a["kind"] == "royal_flush")
    filed = api.call(
        "post", f"/api/v1/awards/{hit['id']}/void", body={"reason": "cheat"}, token=sup1, expect=202
    )
    api.check(filed is not None, "void: nothing filed")
    api.post(f"/api/v1/awards/{hit['id']}/void/confirm", token=sup2)

    # The auditor: the journal (with and without the code filter), its check, the reports.
    api.get("/api/v1/journal", token=auditor)
    api.get("/api/v1/journal", token=auditor, query={"code": "jackpot_hit", "pool": pool})
    api.get("/api/v1/journal/verify", token=auditor)
    run = api.post("/api/v1/journal/verify", token=auditor, expect=202)
    api.get(f"/api/v1/journal/verifications/{run['id']}", token=auditor)
    api.get("/api/v1/journal/verify", token=auditor)
    api.get(f"/api/v1/pools/{pool}/report", token=auditor)
    api.get(f"/api/v1/pools/{pool}/voids", token=auditor)
    api.get("/api/v1/integrity/flags", token=auditor)
    api.get("/api/v1/notifications", token=staff["admin"])
    reconciled = reconcile()
    api.get("/api/v1/reconciliations", token=auditor)
    api.get(f"/api/v1/reconciliations/{reconciled.pk}", token=auditor)
    api.get(f"/api/v1/pools/{pool}/history", token=auditor)
    api.get(f"/api/v1/pools/{pool}/liability", token=auditor)
    api.get(f"/api/v1/pools/{pool}/liability", token=auditor, query={"format": "csv"})
    api.get("/api/v1/events", token=auditor)
    api.get("/api/v1/events", token=auditor, query={"code": "SE02", "pool": pool})
    covered = {(method, path) for method, path, _ in api.covered}
    api.check(covered >= UTH_FLOW, f"not validated: {sorted(UTH_FLOW - covered)}")
    api.finish()


def test_stud_round(api):
    floor = make_floor(uth_tables=1)
    stud = floor.stud
    rounds = f"/api/v1/tables/{stud.table_id}/rounds"
    opening = {
        "round_id": "s-1",
        "seats": [
            {"seat": 1, "bets": {"ante_cents": 1000, "bonus_cents": 200}},
            {"seat": 2, "bets": {"ante_cents": 500}},
            {"seat": 3, "bets": {"ante_cents": 1000, "bonus_cents": 100}},
        ],
    }
    opened = api.post(rounds, opening, token=stud.token, expect=201)
    # No pool: `progressive` and `meter` are null, and the schema says they may be.
    api.check(opened["progressive"] is None and opened["meter"] is None, f"open: {opened}")
    result = {
        "dealer": ["As", "Kd", "8h", "6c", "3s"],
        "seats": [
            {"seat": 1, "cards": ["Jc", "Tc", "7c", "4c", "2c"], "decision": {"action": "raise"}},
            {"seat": 2, "cards": ["Qs", "7d", "5h", "4d", "2s"], "decision": {"action": "fold"}},
            {
                "seat": 3,
                "cards": ["9h", "9d", "5c", "4s", "2h"],
                "decision": {"action": "buy", "discard": "2h", "draw": "9c"},
            },
        ],
    }
    settled = api.post(f"{rounds}/s-1/result", result, token=stud.token)
    api.check(settled["meter"] is None and settled["awards"] == [], f"result: {settled}")
    api.get(f"{rounds}/s-1", token=stud.token)
    api.post(
        rounds,
        {"round_id": "s-2", "seats": [{"seat": 1, "bets": {"ante_cents": 500}}]},
        token=stud.token,
        expect=201,
    )
    api.post(f"{rounds}/s-2/void", {"reason": "misdeal"}, token=stud.token)
    api.finish()


def test_the_rules_api(api):
    api.post("/api/v1/rules/evaluate", {"cards": ["Ah", "2c", "3d", "Kd", "4s", "5h", "Kh"]})
    api.post(
        "/api/v1/rules/uth/settle",
        {
            "player": ["Ah", "Kh"],
            "dealer": ["9c", "7d"],
            "board": ["Qh", "Jh", "3h", "9s", "4d"],
            "bets": {"ante_cents": 125, "blind_cents": 125, "trips_cents": 100},
            "decision": {"action": "play", "street": "preflop", "multiple": 4},
        },
    )
    api.post(
        "/api/v1/rules/stud/settle",
        {
            "player": ["9h", "9d", "5c", "4s", "2h"],
            "dealer": ["Ac", "Kd", "Jh", "8s", "3c"],
            "bets": {"ante_cents": 100, "bonus_cents": 100},
            "decision": {"action": "buy", "discard": "2h", "draw": "9c"},
        },
    )
    api.get("/api/v1/rules/paytables")
    api.get("/api/v1/rules/progressive/return", query={"jackpot_cents": 1_000_000})
    api.get("/api/v1/rules/par")
    api.finish()


def test_the_errors(api, staff):
    """400, 401, 403, 404 and 409 answers, each in the one error shape the schema declares."""
    floor = make_floor(uth_tables=2)
    terminal = floor.uth[0]
    rounds = f"/api/v1/tables/{terminal.table_id}/rounds"
    # 400: valid by the schema, refused by the service (Blind differs from Ante).
    unequal = {
        "round_id": "r-1",
        "seats": [{"seat": 1, "bets": {"ante_cents": 500, "blind_cents": 600}}],
    }
    api.post(rounds, unequal, token=terminal.token, expect=400)
    # 400: requests that break the schema, which openapi-core must refuse too (a card twice:
    # `uniqueItems`; a field the body does not declare; not JSON; a code of no enum).
    twice = api.post(
        "/api/v1/rules/evaluate",
        {"cards": ["Ah", "Ah", "3d", "Kd", "5s"]},
        expect=400,
        request_valid=False,
    )
    api.check(twice["error"]["param"] == "cards[1]", f"duplicate: {twice}")
    api.post(
        "/api/v1/rules/evaluate",
        {"cards": ["Ah", "2c", "3d", "Kd", "4s"], "extra": 1},
        expect=400,
        request_valid=False,
    )
    api.call("post", "/api/v1/rules/evaluate", raw=b"{not json", expect=400, request_valid=False)
    api.get(
        "/api/v1/journal",
        token=staff["auditor"],
        query={"code": "no_such_code"},
        expect=400,
        request_valid=False,
    )
    # A NUL in a filter (PostgreSQL's text cannot hold one: it was a 500).
    nul = api.get(
        "/api/v1/notifications",
        token=staff["admin"],
        query={"url": "\x00"},
        expect=400,
        request_valid=False,
    )
    api.check(nul["error"]["code"] == "invalid_parameter", f"NUL: {nul}")
    # 401: no token, and an unknown one.
    api.get(f"{rounds}/r-404", expect=401, request_valid=False)
    api.get("/api/v1/journal", token="staff_unknown", expect=401)
    # 403: a terminal at another table's rounds; a supervisor reading the journal.
    api.get(f"/api/v1/tables/{floor.uth[1].table_id}/rounds", token=terminal.token, expect=403)
    api.get("/api/v1/journal", token=staff["supervisor1"], expect=403)
    # 404: no such round, no such award, no such pool.
    missing = api.get(f"{rounds}/r-404", token=terminal.token, expect=404)
    api.check(missing["error"]["param"] == "round_id", f"404: {missing}")
    api.post(
        "/api/v1/awards/999999/verify", {"note": "seen"}, token=staff["supervisor1"], expect=404
    )
    api.get("/api/v1/pools/999999/meter", expect=404)
    # 409: a second open round at the table; the round's id again.
    api.post(rounds, {"round_id": "r-1", "seats": [uth_seat(1)]}, token=terminal.token, expect=201)
    api.post(rounds, {"round_id": "r-2", "seats": [uth_seat(1)]}, token=terminal.token, expect=409)
    api.finish()


def test_the_staff_steps_and_exports(api, staff, django_user_model):
    """A supervisor's void of a stuck round and a jackpot's void cancelled; an admin's table,
    terminals, a table's move and a pool's changes (two admins); the auditor's exports."""
    floor = make_floor(uth_tables=2)
    terminal, pool = floor.uth[0], floor.pool_id
    table = f"/api/v1/tables/{terminal.table_id}"
    admin = staff["admin"]
    admin2 = staff_token(person("admin2", "admin"))

    # A stuck round voided by a supervisor; a jackpot's void filed, then cancelled.
    api.post(
        f"{table}/rounds",
        {"round_id": "t-1", "seats": [uth_seat(1)]},
        token=terminal.token,
        expect=201,
    )
    api.post(
        f"{table}/rounds/t-1/supervisor-void",
        {"reason": "terminal crashed"},
        token=staff["supervisor1"],
    )
    api.post(
        f"{table}/rounds",
        {"round_id": "t-2", "seats": [uth_seat(1)]},
        token=terminal.token,
        expect=201,
    )
    royal = {"board": ROYAL_BOARD, "dealer": ["9s", "9d"], "seats": [uth_play(1, "Jh Th")]}
    hit = api.post(f"{table}/rounds/t-2/result", royal, token=terminal.token)["awards"][0]
    award = f"/api/v1/awards/{hit['id']}"
    api.post(f"{award}/void", {"reason": "cheat?"}, token=staff["supervisor1"], expect=202)
    api.post(f"{award}/void/cancel", {"reason": "video clean"}, token=staff["supervisor2"])

    # The admin: the table, closed for play; its terminals; its move to no pool (two admins).
    api.get(table, token=admin)
    api.call("patch", table, body={"enabled": False}, token=admin)
    api.get(f"{table}/terminals", token=admin)
    proposed = api.post(
        f"{table}/terminals", {"name": "spare", "reason": "rotation"}, token=admin, expect=201
    )
    issued = api.post(
        f"{table}/terminals/issues/{proposed['id']}/approve", token=admin2, expect=201
    )
    api.post(f"{table}/terminals/{issued['id']}/revoke", token=admin)
    move = api.post(f"{table}/moves", {"pool": None, "reason": "retired"}, token=admin, expect=201)
    api.post(f"{table}/moves/{move['id']}/withdraw", token=admin)
    move = api.post(f"{table}/moves", {"pool": None, "reason": "retired"}, token=admin, expect=201)
    api.post(f"{table}/moves/{move['id']}/reject", {"note": "not yet"}, token=admin2)
    move = api.post(f"{table}/moves", {"pool": None, "reason": "retired"}, token=admin, expect=201)
    api.post(f"{table}/moves/{move['id']}/approve", {"note": "ok"}, token=admin2)

    # A pool's parameters: proposed, withdrawn, rejected, listed with and without a status.
    changes = f"/api/v1/pools/{pool}/changes"
    proposal = {"reason": "a clearer name", "changes": {"name": "Club progressive"}}
    change = api.post(changes, proposal, token=admin, expect=201)
    api.post(f"{changes}/{change['id']}/withdraw", token=admin)
    change = api.post(changes, proposal, token=admin, expect=201)
    api.post(f"{changes}/{change['id']}/reject", {"note": "keep it"}, token=admin2)
    api.get(changes, token=admin)
    api.get(changes, token=admin, query={"status": "rejected"})

    # The auditor's exports: the CSV at once, and one in the background (no worker: queued).
    auditor = staff["auditor"]
    window = {"from": "2026-01-01T00:00:00+00:00", "to": "2026-01-20T00:00:00+00:00"}
    api.get("/api/v1/awards/export.csv", token=auditor, query=window)
    job = api.post("/api/v1/awards/exports", {"pool": pool}, token=auditor, expect=202)
    api.get(f"/api/v1/awards/exports/{job['id']}", token=auditor)
    api.get(f"/api/v1/awards/exports/{job['id']}/download", token=auditor, expect=409)
    api.get(f"/api/v1/pools/{pool}/history.csv", token=auditor, query={"chart": "meter"})
    api.finish()


# The validation can fail ------------------------------------------------------------------------


def _tampered(response: HttpResponse, change) -> HttpResponse:
    body = json.loads(response.content)
    change(body)
    forged = HttpResponse(
        json.dumps(body), status=response.status_code, content_type="application/json"
    )
    forged.wsgi_request = response.wsgi_request  # type: ignore[attr-defined]
    return forged


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # A null where the schema allows none.
        (lambda body: body.update(amount_cents=None), "amount_cents"),
        # A required key missing.
        (lambda body: body.pop("amount_cents"), "amount_cents"),
        # A type the schema does not say.
        (lambda body: body.update(jackpot_pending="yes"), "jackpot_pending"),
        # A key the schema does not declare (the answer's objects are closed).
        (lambda body: body.update(surprise=1), "surprise"),
    ],
    ids=["null", "missing", "wrong-type", "unknown-key"],
)
def test_a_wrong_answer_is_refused(openapi_and_spec, db, change, expected):
    openapi = openapi_and_spec[0]
    floor = make_floor(uth_tables=1)
    real = Client().get(f"/api/v1/pools/{floor.pool_id}/meter")
    assert real.status_code == 200
    assert validate_exchange(openapi, real) == []
    problems = validate_exchange(openapi, _tampered(real, change))
    assert problems, "a wrong answer passed"
    assert any(expected in problem for problem in problems), problems


def test_an_undocumented_status_is_refused(openapi_and_spec, db):
    openapi = openapi_and_spec[0]
    floor = make_floor(uth_tables=1)
    real = Client().get(f"/api/v1/pools/{floor.pool_id}/meter")
    teapot = HttpResponse(b"{}", status=418, content_type="application/json")
    teapot.wsgi_request = real.wsgi_request  # type: ignore[attr-defined]
    assert validate_exchange(openapi, teapot)


def test_a_request_that_breaks_the_schema_is_refused(openapi_and_spec, db):
    openapi = openapi_and_spec[0]
    body: dict[str, Any] = {"cards": ["Ah", "2c", "3d", "Kd", "4s"], "extra": 1}
    response = Client().post("/api/v1/rules/evaluate", body, content_type="application/json")
    assert response.status_code == 400
    problems = validate_exchange(openapi, response, sent=json.dumps(body).encode())
    assert any("the request breaks the schema" in problem for problem in problems), problems
    # And the same exchange, declared as meant to break it, has nothing left to report.
    assert (
        validate_exchange(openapi, response, sent=json.dumps(body).encode(), request_valid=False)
        == []
    )
