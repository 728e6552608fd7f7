"""A terminal credential is issued by two people; improbable award rates per table or terminal are
flagged (issue 37 item 4; compliance 52).

The attack, with no SQL at all: one admin issued a spare terminal token for a live table (the real
terminal kept working), posted an invented round with two four-of-a-kinds and had both EUR 500
awards paid, round after round, and nothing flagged it. Each test plays the insider's steps (one
account with every power: admin and superuser), asserts the refusal and that the refused step
wrote nothing, then what a second person's approval does, and that such rounds are flagged from
the exact odds as soon as their awards are written.
"""

from __future__ import annotations

import random
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

import pytest
from celery import current_app
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from jackpot.models import AuditEvent, Award, ChangeStatus, OutboxMessage, ParameterChange
from jackpot.money import ledger
from tables.audit.award_odds import BOX_P, check_award_odds, table_tests
from tables.models import Table
from tables.models import Terminal as TerminalRow
from tables.services import operator_terminal_issue
from tables.watch import watch
from tests.conftest import Terminal, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, signed_in, token_client

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> User:
    return person("root", "admin", is_staff=True, is_superuser=True)


@pytest.fixture
def bob() -> User:
    return person("bob", "admin", is_staff=True)


def _written() -> tuple[int, int, int]:
    """What an issue writes: terminal rows, `terminal.issued` events, significant-event messages."""
    return (
        TerminalRow.objects.count(),
        AuditEvent.objects.filter(kind="terminal.issued").count(),
        OutboxMessage.objects.filter(topic="significant_event").count(),
    )


def _json(client: Client, url: str, body: dict | None = None):
    return client.post(url, body or {}, content_type="application/json")


def test_one_admin_alone_gets_no_terminal_token_from_the_api(root):
    floor = make_floor(uth_tables=1)
    table = floor.uth[0].table_id
    insider = token_client(root)
    before = _written()
    proposed = _json(
        insider, f"/api/v1/tables/{table}/terminals", {"name": "spare", "reason": "a spare"}
    )
    assert proposed.status_code == 201, proposed.content
    body = proposed.json()
    # A proposal, not a token: nothing issued, nothing to install.
    assert (body["kind"], body["status"]) == ("terminal.issue", "proposed")
    assert "token" not in proposed.content.decode()
    assert _written() == before
    events = AuditEvent.objects.count()
    refused = _json(insider, f"/api/v1/tables/{table}/terminals/issues/{body['id']}/approve")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    assert _written() == before
    assert AuditEvent.objects.count() == events  # the refused approval wrote nothing at all
    assert ParameterChange.objects.get(pk=body["id"]).status == ChangeStatus.PROPOSED
    # His own list shows no new token either.
    listed = insider.get(f"/api/v1/tables/{table}/terminals").json()["terminals"]
    assert len(listed) == 1
    assert_journal_ok()


def test_one_admin_alone_gets_no_terminal_token_from_the_admin(root):
    floor = make_floor(uth_tables=1)
    table = floor.uth[0].table_id
    browser = signed_in(root)
    before = _written()
    pages = []
    events = 0
    for action in ("issue_terminal_token", "replace_terminal_tokens", "approve_terminal_issue"):
        events = AuditEvent.objects.count()
        page = browser.post(
            "/admin/tables/table/",
            {"action": action, "_selected_action": [table]},
            follow=True,
        )
        assert page.status_code == 200
        pages.append(page.content.decode())
    assert _written() == before
    assert AuditEvent.objects.count() == events  # the refused approvals wrote nothing at all
    assert not any("term_" in page for page in pages)  # no token shown anywhere
    assert "cannot also approve" in pages[-1]
    proposals = ParameterChange.objects.filter(kind="terminal.issue").order_by("pk")
    assert [p.status for p in proposals] == [ChangeStatus.PROPOSED] * 2
    assert [p.changes["revoke_others"] for p in proposals] == [False, True]
    # The real terminal still works, and still alone.
    assert (
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    )
    assert TerminalRow.objects.filter(table_id=table, revoked_at__isnull=True).count() == 1


def test_a_second_admin_approves_and_only_he_sees_the_token(root, bob):
    floor = make_floor(uth_tables=1)
    real = floor.uth[0]
    table = real.table_id
    insider, approver = token_client(root), token_client(bob)
    proposed = _json(
        insider,
        f"/api/v1/tables/{table}/terminals",
        {"name": "terminal B", "reason": "rotation"},
    ).json()
    approved = _json(approver, f"/api/v1/tables/{table}/terminals/issues/{proposed['id']}/approve")
    assert approved.status_code == 201, approved.content
    token = approved.json()["token"]
    assert token.startswith("term_") and approved.json()["change"] == proposed["id"]
    # The approver installs it: it works at the table, beside the real terminal's (a rotation).
    new = Terminal(table, token)
    assert new.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201

    # The proposer never sees it: not in his answers, his list, the change, its events.
    seen_by_proposer = [
        insider.get(f"/api/v1/tables/{table}/terminals").content.decode(),
        str(ParameterChange.objects.filter(pk=proposed["id"]).values().get()),
        signed_in(root).get(f"/admin/jackpot/parameterchange/{proposed['id']}/change/").content,
        *(str(e.payload) for e in AuditEvent.objects.all()),
    ]
    assert not any(token in str(seen) for seen in seen_by_proposer)
    # Nor can he approve again or re-read it: the change is decided.
    again = _json(insider, f"/api/v1/tables/{table}/terminals/issues/{proposed['id']}/approve")
    assert again.status_code in (403, 409)

    # Its issue is a significant event naming both people, told by webhook, in the security log.
    issued = AuditEvent.objects.get(kind="terminal.issued", payload__change=proposed["id"])
    assert (issued.actor, issued.payload["proposed_by"], issued.payload["approved_by"]) == (
        "user:bob",
        "root",
        "bob",
    )
    told = OutboxMessage.objects.get(
        topic="significant_event", payload__detail__change=proposed["id"]
    )
    assert (told.payload["code"], told.payload["table"]) == ("SE17", table)
    assert token not in str(told.payload)
    assert "terminal.issued" in ledger.SECURITY_KINDS
    assert "terminal.change_proposed" in ledger.SECURITY_KINDS
    assert_journal_ok()


def test_a_replacement_and_its_refusals_take_two_and_revoking_takes_one(root, bob):
    floor = make_floor(uth_tables=2)
    lost, other = floor.uth
    insider, approver = token_client(root), token_client(bob)
    url = f"/api/v1/tables/{lost.table_id}/terminals"
    proposed = _json(insider, url, {"name": "spare", "revoke_others": True, "reason": "lost"})
    change = proposed.json()["id"]
    # Under another table the proposal is not found; a withdrawal is the proposer's only.
    elsewhere = _json(
        approver, f"/api/v1/tables/{other.table_id}/terminals/issues/{change}/approve"
    )
    assert (elsewhere.status_code, elsewhere.json()["error"]["code"]) == (404, "change_not_found")
    not_his = _json(approver, f"{url}/issues/{change}/withdraw")
    assert (not_his.status_code, not_his.json()["error"]["code"]) == (403, "not_the_proposer")
    assert lost.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    spare = _json(approver, f"{url}/issues/{change}/approve").json()["token"]
    # Approved: the lost terminal's token stops at once, the spare works.
    assert lost.post("/rounds/r-1/result", _result()).status_code == 401
    assert Terminal(lost.table_id, spare).post("/rounds/r-1/result", _result()).status_code == 200
    # A rejected proposal issues nothing.
    before = _written()
    second = _json(insider, url, {"name": "x", "reason": "again"}).json()["id"]
    rejected = _json(approver, f"{url}/issues/{second}/reject", {"note": "no need"})
    assert rejected.json()["status"] == "rejected"
    late = _json(approver, f"{url}/issues/{second}/approve")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "change_wrong_status")
    assert _written() == before
    # Revoking is one admin's act: it only takes power away.
    spare_id = TerminalRow.objects.get(table_id=lost.table_id, revoked_at__isnull=True).pk
    assert insider.post(f"{url}/{spare_id}/revoke").status_code == 200
    assert_journal_ok()


def test_the_operator_s_one_act_path_is_never_reached_from_the_api_the_admin_or_the_pages():
    """`operator_terminal_issue` is for the demo floor and the tests' setup (like
    `bootstrap_admin`): nothing a person reaches over HTTP calls it."""
    reached = [
        *(ROOT / "tables" / "api").rglob("*.py"),
        *(ROOT / "floor").rglob("*.py"),
        *(ROOT / "jackpot" / "api").rglob("*.py"),
        ROOT / "tables" / "admin.py",
        ROOT / "jackpot" / "admin.py",
        ROOT / "jackpot" / "sign" / "page.py",
    ]
    assert reached
    for path in reached:
        text = path.read_text()
        assert "operator_terminal_issue" not in text, path
        assert "_install_terminal" not in text, path


def _result() -> dict:
    return {
        "board": ["2h", "7d", "9c", "Js", "Kd"],
        "dealer": ["3s", "4s"],
        "seats": [uth_play(1, "Ah Ac")],
    }


# --- improbable award rates per table and terminal ----------------------------------------------

#: Two four-of-a-kinds a round, each made by the box's own cards (the board is two pair).
INVENTED = {
    "board": ["Ah", "Ad", "Kh", "Kd", "2c"],
    "dealer": ["3s", "4s"],
    "seats": [uth_play(1, "As Ac"), uth_play(2, "Ks Kc")],
}
DECK = [rank + suit for rank in "23456789TJQKA" for suit in "shdc"]


def _play(terminal: Terminal, round_id: str, result: dict) -> None:
    seats = [uth_seat(play["seat"]) for play in result["seats"]]
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": seats})
    assert opened.status_code == 201, opened.content
    settled = terminal.post(f"/rounds/{round_id}/result", result)
    assert settled.status_code == 200, settled.content


def _fair(rng: random.Random, boxes: int) -> dict:
    cards = rng.sample(DECK, 7 + 2 * boxes)
    return {
        "board": cards[:5],
        "dealer": cards[5:7],
        "seats": [
            uth_play(seat, f"{cards[5 + 2 * seat]} {cards[6 + 2 * seat]}")
            for seat in range(1, boxes + 1)
        ],
    }


@pytest.fixture
def tasks_run_here(monkeypatch, django_capture_on_commit_callbacks):
    """The tasks a commit sends run here, once it commits (as `make run`'s eager Celery)."""
    monkeypatch.setattr(current_app.conf, "task_always_eager", True)
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_two_invented_rounds_with_two_quads_each_are_flagged_when_their_awards_are_written(
    tasks_run_here,
):
    floor = make_floor(uth_tables=1)
    real = floor.uth[0]
    table = Table.objects.get(pk=real.table_id)
    # The spare terminal (its issue took two people now; here the tests' setup path), and the
    # real terminal's ordinary rounds before and beside it.
    spare_row = operator_terminal_issue(table=table, name="spare", revoke_others=False, actor="t")
    spare = Terminal(table.pk, spare_row.token)
    rng = random.Random(52)
    for n in range(20):
        _play(real, f"real-{n}", _fair(rng, 3))
    with tasks_run_here():
        _play(spare, "invented-1", INVENTED)
    # One such round is possible (p^2, a few in a million): no alarm yet.
    assert not AuditEvent.objects.filter(kind="integrity.award_odds").exists()
    with tasks_run_here():
        _play(spare, "invented-2", INVENTED)
    alarms = {
        (e.payload["terminal"], e.payload["award_kind"], e.payload["test"]): e
        for e in AuditEvent.objects.filter(kind="integrity.award_odds")
    }
    # Flagged at once, by the task the second settlement sent: the spare terminal.
    spare_alarm = alarms[(spare_row.terminal.pk, "four_of_a_kind", "boxes")]
    assert (spare_alarm.payload["count"], spare_alarm.payload["boxes"]) == (4, 4)
    assert spare_alarm.payload["table"] == table.pk and spare_alarm.actor == "system:award_odds"
    assert Fraction(spare_alarm.payload["p_value"]) < Fraction("1e-6")
    assert Fraction(spare_alarm.payload["expected"]) >= 4 * BOX_P["four_of_a_kind"]
    # The table as a whole (64 boxes, 60 of them fair) is not improbable yet: 4 quads in 64
    # boxes happen about 5 times in a million. The spare terminal's own rounds are.
    assert set(alarms) == {(spare_row.terminal.pk, "four_of_a_kind", "boxes")}
    told = OutboxMessage.objects.get(
        topic="significant_event",
        payload__chain="admin",
        payload__sequence=spare_alarm.sequence,
    )
    assert (told.payload["code"], told.payload["table"]) == ("SE18", table.pk)
    # The watch sees the same counts: nothing recorded twice.
    assert watch(now=timezone.now() + timedelta(seconds=1)).award_odds == []
    assert AuditEvent.objects.filter(kind="integrity.award_odds").count() == 1
    assert_journal_ok()


def test_the_watch_flags_them_when_the_task_was_lost():
    floor = make_floor(uth_tables=1)
    spare = floor.uth[0]
    for n in (1, 2):
        _play(spare, f"invented-{n}", INVENTED)  # no commit here: the task is never sent
    assert not AuditEvent.objects.filter(kind="integrity.award_odds").exists()
    recorded = watch(now=timezone.now() + timedelta(seconds=1)).award_odds
    assert len(recorded) == 2  # the terminal and the table
    assert check_award_odds([spare.table_id], now=timezone.now() + timedelta(seconds=2)) == []


def test_a_normal_run_of_rounds_is_not_flagged_even_with_a_board_of_quads(tasks_run_here):
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    rng = random.Random(37)
    with tasks_run_here():
        for n in range(60):
            _play(terminal, f"r-{n}", _fair(rng, 3))
        # A lucky board: quads on the table, every box wins them (3 at once), as fair deals do
        # about once in 4,165 rounds.
        lucky = {
            "board": ["9h", "9d", "9c", "9s", "2c"],
            "dealer": ["3s", "4s"],
            "seats": [uth_play(1, "Ah Kc"), uth_play(2, "Qd Jd"), uth_play(3, "5h 6h")],
        }
        _play(terminal, "lucky", lucky)
    quads = Award.objects.filter(round__table_id=terminal.table_id, kind="four_of_a_kind")
    assert quads.count() == 4  # the lucky board's 3, and one a fair round dealt
    assert (
        Award.objects.filter(round__table_id=terminal.table_id)
        .exclude(kind="four_of_a_kind")
        .exists()
    )  # the fair rounds paid some awards: they were tested
    now = timezone.now() + timedelta(seconds=1)
    tested = table_tests(terminal.table_id, since=now - timedelta(hours=8), now=now)
    assert tested and all(test.tail >= Fraction("1e-6") for test in tested)
    assert watch(now=now).award_odds == []
    assert not AuditEvent.objects.filter(kind="integrity.award_odds").exists()
