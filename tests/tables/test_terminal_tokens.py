"""Terminal tokens for the club's systems: rotation with an overlap, so no terminal is cut off
mid-round, replacement of a lost terminal's token, and revocation (issue 11, item 10; compliance
38: each terminal has its own revocable credential)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from jackpot.models import AuditEvent
from tests.conftest import Terminal, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

RESULT = {
    "board": ["2h", "7d", "9c", "Js", "Kd"],
    "dealer": ["3s", "4s"],
    "seats": [uth_play(1, "Ah Ac")],
}


def _staff(django_user_model, username: str, role: str) -> Client:
    return token_client(person(username, role))


@pytest.fixture
def admin(django_user_model) -> Client:
    return _staff(django_user_model, "club-admin", "admin")


def _issue(admin: Client, table: int, **body: object):
    """A token proposed by another admin and approved by `admin`, who receives it (a terminal
    token takes two people: tests/security/test_terminal_issue.py); a refused proposal's answer
    as it is."""
    proposer = User.objects.filter(username="club-admin-2").first() or person(
        "club-admin-2", "admin"
    )
    url = f"/api/v1/tables/{table}/terminals"
    proposed = token_client(proposer).post(
        url, {"reason": "rotation", **body}, content_type="application/json"
    )
    if proposed.status_code != 201:
        return proposed
    return admin.post(
        f"{url}/issues/{proposed.json()['id']}/approve", {}, content_type="application/json"
    )


def _revoke(admin: Client, table: int, terminal: int):
    return admin.post(f"/api/v1/tables/{table}/terminals/{terminal}/revoke")


def test_a_rotation_keeps_the_old_token_working_until_it_is_revoked(admin):
    floor = make_floor(uth_tables=1)
    old = floor.uth[0]
    table = old.table_id
    # The terminal opens a round with its old token; the new one is issued meanwhile.
    assert old.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    issued = _issue(admin, table, name="terminal B")
    assert issued.status_code == 201, issued.json()
    body = issued.json()
    assert body["token"].startswith("term_") and body["revoked_at"] is None
    new = Terminal(table, body["token"])
    # The terminal switches between two rounds: the round opened with the old token settles
    # with the new one, and the old token still works until revoked.
    assert new.post("/rounds/r-1/result", RESULT).status_code == 200
    assert old.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    listed = admin.get(f"/api/v1/tables/{table}/terminals").json()["terminals"]
    assert listed[0]["id"] == body["id"]
    assert all("token" not in t and t["revoked_at"] is None for t in listed)
    old_id = next(t["id"] for t in listed if t["id"] != body["id"])

    revoked = _revoke(admin, table, old_id)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    refused = old.post("/rounds/r-2/result", RESULT)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "authentication_failed"
    assert new.post("/rounds/r-2/result", RESULT).status_code == 200
    # Revoking again changes nothing and writes no second event.
    assert _revoke(admin, table, old_id).json() == revoked.json()
    kinds = list(
        AuditEvent.objects.filter(chain="admin", kind__startswith="terminal.")
        .order_by("sequence")
        .values_list("kind", "actor")
    )
    assert kinds[-2:] == [
        ("terminal.issued", "user:club-admin"),
        ("terminal.revoked", "user:club-admin"),
    ]
    assert_journal_ok()


def test_replacing_a_lost_terminal_revokes_the_others_at_once(admin):
    floor = make_floor(uth_tables=1)
    lost = floor.uth[0]
    issued = _issue(admin, lost.table_id, name="spare", revoke_others=True).json()
    assert lost.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 401
    spare = Terminal(lost.table_id, issued["token"])
    assert spare.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    event = AuditEvent.objects.filter(kind="terminal.issued").latest("occurred_at")
    assert event.payload["terminal"] == issued["id"] and len(event.payload["revoked"]) == 1


def test_terminal_administration_refusals(admin, django_user_model):
    floor = make_floor(uth_tables=2)
    first, second = floor.uth
    blank = _issue(admin, first.table_id, name="  ")
    assert blank.status_code == 400
    assert (blank.json()["error"]["code"], blank.json()["error"]["param"]) == (
        "invalid_text",
        "name",
    )
    assert _issue(admin, 999_999, name="x").json()["error"]["code"] == "table_not_found"
    other = _issue(admin, second.table_id, name="x").json()["id"]
    # A terminal of another table is not found under this one: nothing revoked.
    wrong = _revoke(admin, first.table_id, other)
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (404, "terminal_not_found")
    supervisor = _staff(django_user_model, "floor-supervisor", "supervisor")
    assert _issue(supervisor, first.table_id, name="x").status_code == 403
    assert supervisor.get(f"/api/v1/tables/{first.table_id}/terminals").status_code == 403
    assert first.client().get(f"/api/v1/tables/{first.table_id}/terminals").status_code == 401
