"""A terminal recovers (issue 11, item 10): it lists its table's rounds to find the one it left
open, a supervisor voids a stuck round through the terminal's own void, a round open too long is
stale in the list and in the pool report, and a table has one open round at a time.

Given / when / then, through the API as a terminal and as staff, on PostgreSQL.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jackpot.bodies.pools import PoolReport
from jackpot.models import AuditEvent, Pool, Transfer
from tables.bodies.round_answers import VoidAnswer
from tables.bodies.round_reads import RoundPage
from tables.models import Round, Table
from tests.conftest import Terminal, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

HEADER = "Idempotent-Replayed"
RESULT = {
    "board": ["2c", "7d", "9h", "Js", "4s"],
    "dealer": ["Kd", "3c"],
    "seats": [uth_play(1, "5h 6h", "fold"), uth_play(2, "8c Td", "fold")],
}


def _staff(django_user_model, name: str, role: str) -> Client:
    return token_client(person(name, role))


@pytest.fixture
def supervisor(django_user_model) -> Client:
    return _staff(django_user_model, "sam", "supervisor")


def _list(terminal: Terminal, query: str = "") -> dict:
    response = terminal.client().get(f"/api/v1/tables/{terminal.table_id}/rounds{query}")
    assert response.status_code == 200, response.content
    RoundPage.model_validate_json(response.content)  # the answer is of its declared shape
    return response.json()


def _supervisor_void(staff: Client, terminal: Terminal, round_id: str, reason: str):
    return staff.post(
        f"/api/v1/tables/{terminal.table_id}/rounds/{round_id}/supervisor-void",
        {"reason": reason},
        content_type="application/json",
    )


def _backdate(round_id: str, seconds: int) -> None:
    Round.objects.filter(round_id=round_id).update(
        opened_at=timezone.now() - timedelta(seconds=seconds)
    )


def _refunds(round_id: str) -> list[int]:
    return list(
        Transfer.objects.filter(round__round_id=round_id, code="void_refund").values_list(
            "amount_cents", flat=True
        )
    )


# --- the list -----------------------------------------------------------------------------------


def test_a_terminal_that_lost_its_round_id_finds_its_open_round(floor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    terminal.post("/rounds/r-1/result", RESULT)
    terminal.post(
        "/rounds", {"round_id": "r-2", "seats": [uth_seat(1), uth_seat(3, progressive=0)]}
    )

    page = _list(terminal, "?state=open")

    assert page["count"] == 1 and page["table"] == terminal.table_id
    assert page["stale_after_seconds"] == 900
    (found,) = page["results"]
    assert found["round_id"] == "r-2" and found["state"] == "open"
    assert found["closed_at"] is None and found["stale"] is False
    assert 0 <= found["age_seconds"] < 60
    assert found["seats"] == [
        {
            "seat": 1,
            "bets": {
                "ante_cents": 500,
                "blind_cents": 500,
                "trips_cents": 0,
                "progressive_cents": 500,
            },
        },
        {
            "seat": 3,
            "bets": {
                "ante_cents": 500,
                "blind_cents": 500,
                "trips_cents": 0,
                "progressive_cents": 0,
            },
        },
    ]
    assert (found["progressive_stakes"], found["progressive_cents"]) == (1, 500)
    # What it found is what the round's own read says.
    detail = terminal.client().get(f"/api/v1/tables/{terminal.table_id}/rounds/r-2").json()
    assert detail["opened"]["opened_at"] == found["opened_at"]


def test_the_list_filters_by_state_newest_first_and_pages(floor):
    terminal = floor.uth[0]
    for n in range(1, 6):
        terminal.post("/rounds", {"round_id": f"r-{n}", "seats": [uth_seat(1), uth_seat(2)]})
        if n % 2:
            terminal.post(f"/rounds/r-{n}/result", RESULT)
        else:
            terminal.post(f"/rounds/r-{n}/void", {"reason": "misdeal"})
    terminal.post("/rounds", {"round_id": "r-6", "seats": [uth_seat(1)]})

    every = _list(terminal)
    assert [r["round_id"] for r in every["results"]] == ["r-6", "r-5", "r-4", "r-3", "r-2", "r-1"]
    assert [r["round_id"] for r in _list(terminal, "?state=settled")["results"]] == [
        "r-5",
        "r-3",
        "r-1",
    ]
    voided = _list(terminal, "?state=void")["results"]
    assert [r["round_id"] for r in voided] == ["r-4", "r-2"]
    assert all(r["closed_at"] and r["stale"] is False for r in voided)
    page = _list(terminal, "?limit=2&offset=1")
    assert (page["count"], page["limit"], page["offset"]) == (6, 2, 1)
    assert [r["round_id"] for r in page["results"]] == ["r-5", "r-4"]


def test_the_list_is_the_tables_own_and_its_query_is_strict(floor):
    mine, other = floor.uth
    mine.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert _list(other, "?state=open")["count"] == 0
    # Another table's rounds are not this terminal's to read.
    response = other.client().get(f"/api/v1/tables/{mine.table_id}/rounds")
    assert response.status_code == 403
    for query, param in (
        ("?state=stuck", "state"),
        ("?limit=0", "limit"),
        ("?offset=-1", "offset"),
    ):
        refused = mine.client().get(f"/api/v1/tables/{mine.table_id}/rounds{query}")
        assert refused.status_code == 400
        assert refused.json()["error"] == {**refused.json()["error"], "code": "invalid_parameter"}
        assert refused.json()["error"]["param"] == param
    # Staff tokens do not read a table's rounds here.
    assert Client().get(f"/api/v1/tables/{mine.table_id}/rounds").status_code == 401


def test_a_stud_tables_rounds_list_their_bets(floor):
    floor.stud.post(
        "/rounds", {"round_id": "s-1", "seats": [{"seat": 2, "bets": {"ante_cents": 500}}]}
    )
    (found,) = _list(floor.stud, "?state=open")["results"]
    assert found["seats"] == [{"seat": 2, "bets": {"ante_cents": 500, "bonus_cents": 0}}]
    assert (found["progressive_stakes"], found["progressive_cents"]) == (0, 0)


# --- stale rounds ---------------------------------------------------------------------------------


def test_a_round_open_too_long_is_stale_in_the_list_and_the_pool_report(
    floor, supervisor, settings
):
    settings.ROUND_STALE_AFTER_SECONDS = 600
    first, second = floor.uth
    first.post("/rounds", {"round_id": "old", "seats": [uth_seat(1), uth_seat(2)]})
    second.post("/rounds", {"round_id": "older", "seats": [uth_seat(4)]})
    floor.stud.post(
        "/rounds", {"round_id": "s-1", "seats": [{"seat": 1, "bets": {"ante_cents": 500}}]}
    )
    _backdate("old", 601)
    _backdate("older", 7200)
    fresh = make_floor(1)  # a round of another pool, just as old, is not this pool's
    fresh.uth[0].post("/rounds", {"round_id": "elsewhere", "seats": [uth_seat(1)]})
    _backdate("elsewhere", 7200)

    (listed,) = _list(first, "?state=open")["results"]
    report = supervisor.get(f"/api/v1/pools/{floor.pool_id}/report")

    assert listed["stale"] is True and listed["age_seconds"] >= 601
    assert _list(first, "?state=open")["stale_after_seconds"] == 600
    assert report.status_code == 200
    PoolReport.model_validate_json(report.content)
    open_rounds = report.json()["open_rounds"]
    assert {k: v for k, v in open_rounds.items() if k != "oldest_stale"} == {
        "count": 2,
        "stale_after_seconds": 600,
        "stale_count": 2,
    }
    names = dict(Table.objects.values_list("pk", "name"))
    assert [
        (r["table"], r["table_name"], r["round_id"], r["progressive_cents"])
        for r in open_rounds["oldest_stale"]
    ] == [
        (second.table_id, names[second.table_id], "older", 500),
        (first.table_id, names[first.table_id], "old", 1000),
    ]
    assert open_rounds["oldest_stale"][0]["age_seconds"] >= 7200

    # Voided by a supervisor, it is neither open nor stale any more.
    assert _supervisor_void(supervisor, second, "older", "terminal crashed").status_code == 200
    again = supervisor.get(f"/api/v1/pools/{floor.pool_id}/report").json()["open_rounds"]
    assert (again["count"], again["stale_count"]) == (1, 1)
    assert [r["round_id"] for r in again["oldest_stale"]] == ["old"]


def test_a_fresh_round_is_open_but_not_stale(floor, supervisor):
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    report = supervisor.get(f"/api/v1/pools/{floor.pool_id}/report").json()
    assert report["open_rounds"] == {
        "count": 1,
        "stale_after_seconds": 900,
        "stale_count": 0,
        "oldest_stale": [],
    }


def test_the_stale_age_comes_from_the_environment(python_subprocess):
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.ROUND_STALE_AFTER_SECONDS)"
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.test"}
    assert python_subprocess(code, **env).stdout.strip() == "900"
    assert python_subprocess(code, ROUND_STALE_AFTER_SECONDS="120", **env).stdout.strip() == "120"
    refused = python_subprocess(code, ROUND_STALE_AFTER_SECONDS="0", **env)
    assert refused.returncode != 0 and "ROUND_STALE_AFTER_SECONDS" in refused.stderr


# --- a supervisor's void --------------------------------------------------------------------------


def test_a_supervisor_voids_a_stuck_round_and_the_terminals_void_replays_it(floor, supervisor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    meter = Pool.objects.get(pk=floor.pool_id).meter_units

    voided = _supervisor_void(supervisor, terminal, "r-1", "terminal crashed, no result")

    assert voided.status_code == 200 and HEADER not in voided
    body = voided.json()
    VoidAnswer.model_validate_json(voided.content)
    assert body == {
        **body,
        "round_id": "r-1",
        "state": "void",
        "reason": "terminal crashed, no result",
        "progressive_refund_cents": 1000,
    }
    event = AuditEvent.objects.get(kind="round.voided")
    assert event.actor == "user:sam" and event.chain == f"table-{terminal.table_id}"
    assert Round.objects.get(round_id="r-1").closed_by == "user:sam"
    assert Pool.objects.get(pk=floor.pool_id).meter_units == meter  # the meter keeps its share

    # The terminal comes back and voids its round (its own reason): the supervisor's answer.
    retried = terminal.post("/rounds/r-1/void", {"reason": "misdeal"})
    assert retried.status_code == 200 and retried[HEADER] == "true"
    assert retried.json() == body
    # A supervisor's void again, with another reason: the same stored answer.
    again = _supervisor_void(supervisor, terminal, "r-1", "double click")
    assert again.status_code == 200 and again[HEADER] == "true" and again.json() == body
    # One refund, one event; the round is void, not settleable; the next round opens.
    assert _refunds("r-1") == [1000]
    assert AuditEvent.objects.filter(kind="round.voided").count() == 1
    assert terminal.post("/rounds/r-1/result", RESULT).json()["error"]["code"] == "round_void"
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    assert assert_journal_ok()["balances"][str(floor.pool_id)]["stakes"] == -500


def test_a_supervisors_void_after_the_terminals_replays_the_terminals(floor, supervisor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    first = terminal.post("/rounds/r-1/void", {"reason": "misdeal"})

    late = _supervisor_void(supervisor, terminal, "r-1", "stuck")

    assert late.status_code == 200 and late[HEADER] == "true"
    assert late.json() == first.json()
    assert _refunds("r-1") == [500]
    # The terminal's own void keeps its rule: another reason from the terminal is refused.
    other = terminal.post("/rounds/r-1/void", {"reason": "something else"})
    assert (other.status_code, other.json()["error"]["code"]) == (409, "round_id_reused")


def test_a_supervisor_cannot_void_a_settled_round(floor, supervisor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    settled = terminal.post("/rounds/r-1/result", RESULT)
    assert settled.status_code == 200
    transfers = Transfer.objects.count()

    refused = _supervisor_void(supervisor, terminal, "r-1", "stuck")

    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "round_settled"
    assert Transfer.objects.count() == transfers  # nothing moved
    assert Round.objects.get(round_id="r-1").state == "settled"


def test_a_supervisor_voids_a_stuck_round_of_a_closed_table(floor, supervisor, django_user_model):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    admin = _staff(django_user_model, "ada", "admin")
    closed = admin.patch(
        f"/api/v1/tables/{terminal.table_id}", {"enabled": False}, content_type="application/json"
    )
    assert closed.status_code == 200
    # Closed, the table opens no new round; its round in progress, whose terminal is gone, is
    # the supervisor's to void (a terminal still there could settle or void it itself).
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 403

    voided = _supervisor_void(supervisor, terminal, "r-1", "table closed, its terminal dead")

    assert voided.status_code == 200
    assert admin.get(f"/api/v1/tables/{terminal.table_id}").json()["open_rounds"] == 0


def test_who_may_void_for_a_supervisor(floor, django_user_model, supervisor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    path = f"/api/v1/tables/{terminal.table_id}/rounds/r-1/supervisor-void"
    auditor = _staff(django_user_model, "ida", "auditor")
    as_terminal = terminal.client().post(path, {"reason": "x"}, content_type="application/json")
    as_auditor = auditor.post(path, {"reason": "x"}, content_type="application/json")
    anonymous = Client().post(path, {"reason": "x"}, content_type="application/json")
    assert [as_terminal.status_code, as_auditor.status_code, anonymous.status_code] == [
        401,
        403,
        401,
    ]
    unknown_table = supervisor.post(
        "/api/v1/tables/999999/rounds/r-1/supervisor-void",
        {"reason": "x"},
        content_type="application/json",
    )
    assert unknown_table.json()["error"]["code"] == "table_not_found"
    unknown_round = _supervisor_void(supervisor, terminal, "r-9", "x")
    assert unknown_round.json()["error"]["code"] == "round_not_found"
    no_reason = _supervisor_void(supervisor, terminal, "r-1", " ")
    assert no_reason.json()["error"]["code"] == "invalid_reason"
    assert Round.objects.get(round_id="r-1").state == "open"  # nothing of it happened


# --- one open round per table ---------------------------------------------------------------------


def test_a_table_opens_one_round_at_a_time(floor):
    terminal, other_table = floor.uth
    first = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    meter = Pool.objects.get(pk=floor.pool_id).meter_units

    refused = terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})

    assert refused.status_code == 409 and HEADER not in refused
    error = refused.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "conflict",
        "round_in_progress",
        "round_id",
    )
    assert "'r-1'" in error["message"]
    # Nothing was written: no round, no stake, no event.
    assert not Round.objects.filter(round_id="r-2").exists()
    assert Pool.objects.get(pk=floor.pool_id).meter_units == meter
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
    # The open round's own retry still replays; another table is not held up.
    replay = terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    assert replay.status_code == 201 and replay[HEADER] == "true"
    assert replay.json() == first.json()
    assert (
        other_table.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    )
    # Once the open round is settled, the next one opens.
    terminal.post("/rounds/r-1/result", {**RESULT, "seats": RESULT["seats"][:1]})
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201


def test_an_open_refused_with_an_idempotency_key_is_not_stored(floor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    body = {"round_id": "r-2", "seats": [uth_seat(1)]}
    refused = terminal.post("/rounds", body, HTTP_IDEMPOTENCY_KEY="k-2")
    assert refused.json()["error"]["code"] == "round_in_progress"
    terminal.post("/rounds/r-1/void", {"reason": "misdeal"})
    # The same key and body once the table is free: it runs now (a refusal is not stored).
    opened = terminal.post("/rounds", body, HTTP_IDEMPOTENCY_KEY="k-2")
    assert opened.status_code == 201 and HEADER not in opened
