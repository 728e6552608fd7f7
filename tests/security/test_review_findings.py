"""The rest of the review (issue 37 item 7), each finding played as the insider plays it: one
account's every power, no key. Each refusal is asserted with its status and code, and that the
refused step wrote nothing (audit events, rows).

1. Whoever acted on an award (verified it, requested or cancelled its void, reviewed it, ...)
   never clears surveillance's referral of it, even holding the manager role.
2. A table's seats change only with no round open at the table: a round opened with seat 7
   settles even if someone tried to lower the table to 3 seats meanwhile.
3. A liability statement at an instant no calendar arithmetic can reach (year 1) is a 400 naming
   `at` (or `from`), never a 500.
4. A NUL in a Django admin list's search or filter is a 400, never PostgreSQL's refusal as a 500.
5. The club keeps two active admins: one admin cannot deactivate the others, not even two
   deactivations racing each other.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from core.errors import Conflict
from jackpot.models import AuditEvent, Award, ReferralDecision
from jackpot.money import locks
from jackpot.staff import accounts
from jackpot.staff.roles import role_group
from tables.models import Round, Table
from tables.services import table_update
from tests.concurrency.test_one_open_round import _waiting_on_a_lock
from tests.conftest import assert_journal_ok, uth_play, uth_seat
from tests.staff import person, referred, signed_in, token_client

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")],
}
CLEAR = {"decision": "clear", "reason": "the footage is fine after all"}


def _refused(response, status: int, code: str, param: str | None = None) -> dict:
    body = response.json()
    assert response.status_code == status, body
    assert body["error"]["code"] == code, body
    if param is not None:
        assert body["error"]["param"] == param, body
    return body["error"]


def _events() -> int:
    return AuditEvent.objects.count()


# 1. Surveillance's referral, cleared by someone who acted on the award.


@pytest.fixture
def jackpot(floor) -> int:
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    return floor.uth[0].post("/rounds/r-1/result", ROYAL).json()["awards"][0]["id"]


def _step(client, award: int, step: str, body: dict | None = None):
    return client.post(
        f"/api/v1/awards/{award}/{step}", body or {}, content_type="application/json"
    )


def _cleared_by_insider(root, award: int) -> None:
    """Surveillance refers the award; the insider, a manager, tries to clear it: refused, and
    nothing is written."""
    referred(award)
    insider = token_client(root)  # its issue is an event of its own
    events = _events()
    refused = _step(insider, award, "referral", CLEAR)
    _refused(refused, 403, "four_eyes", "award")
    assert not ReferralDecision.objects.exists()
    assert _events() == events
    assert Award.objects.get(pk=award).status in ("pending", "verified")
    # A colleague who never touched the award decides it.
    meg = person("meg", "manager")
    cleared = _step(token_client(meg), award, "referral", CLEAR)
    assert cleared.status_code == 200, cleared.json()
    assert_journal_ok()


@pytest.mark.django_db
def test_the_verifier_cannot_clear_the_referral_of_the_award(jackpot):
    root = person("root", "supervisor", "manager")
    verified = _step(token_client(root), jackpot, "verify", {"note": "cards checked"})
    assert verified.status_code == 200, verified.json()
    _cleared_by_insider(root, jackpot)


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["requester", "canceller"])
def test_whoever_requested_or_cancelled_its_void_cannot_clear_the_referral(jackpot, who):
    # The void's request and its cancellation leave nothing on the award's row: only the
    # journal says who acted.
    root = person("root", "supervisor", "manager")
    other = person("bob", "supervisor")
    requester, canceller = (root, other) if who == "requester" else (other, root)
    asked = _step(token_client(requester), jackpot, "void", {"reason": "a doubt"})
    assert asked.status_code == 202, asked.json()  # a jackpot's void is only requested
    cancelled = _step(token_client(canceller), jackpot, "void/cancel", {"reason": "no doubt"})
    assert cancelled.status_code == 200, cancelled.json()
    _cleared_by_insider(root, jackpot)


# 2. A table's seats, lowered while a round is open at it.


def _table_form(table: Table, **changes: object) -> dict:
    form = {
        "name": table.name,
        "pool": table.pool_id or "",
        "reason": "",
        "seats": table.seats,
        "enabled": "on" if table.enabled else "",
    }
    form.update(changes)
    return {key: value for key, value in form.items() if value != ""}


@pytest.mark.django_db
def test_a_tables_seats_do_not_change_under_an_open_round(floor):
    terminal = floor.uth[0]
    opened = terminal.post("/rounds", {"round_id": "r-7", "seats": [uth_seat(1), uth_seat(7)]})
    assert opened.status_code in (200, 201), opened.json()
    table = Table.objects.get(pk=terminal.table_id)
    root = person("root", "admin", is_staff=True, is_superuser=True)
    events = _events()

    page = signed_in(root).post(
        f"/admin/tables/table/{table.pk}/change/", _table_form(table, seats=3), follow=True
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert "r-7" in text and "open round" in text, text
    with pytest.raises(Conflict) as refused:
        table_update(table_id=table.pk, changes={"seats": 3}, actor="user:root")
    assert (refused.value.status_code, refused.value.code) == (409, "table_has_open_rounds")
    assert "r-7" in refused.value.message
    assert Table.objects.get(pk=table.pk).seats == 7
    assert _events() == events

    # The round settles with its seat 7; afterwards the table may be lowered.
    played = {
        "board": ["2h", "7d", "9c", "Js", "Kd"],
        "dealer": ["3s", "4s"],
        "seats": [uth_play(1, "5c 6c", "fold"), uth_play(7, "8h 8d", "fold")],
    }
    settled = terminal.post("/rounds/r-7/result", played)
    assert settled.status_code == 200, settled.json()
    assert Round.objects.get(round_id="r-7").state == "settled"
    table_update(table_id=table.pk, changes={"seats": 3}, actor="user:root")
    assert Table.objects.get(pk=table.pk).seats == 3
    # Opening and closing a table for play stays possible mid-round (how a table is stopped).
    terminal.post("/rounds", {"round_id": "r-8", "seats": [uth_seat(1)]})
    table_update(table_id=table.pk, changes={"enabled": False}, actor="user:root")
    assert_journal_ok()


# 3. The liability statement at year 1.


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"at": "0001-01-01T00:00:00Z"}, "at"),
        ({"at": "0001-01-01T00:00:01Z"}, "at"),
        ({"at": "0001-01-01T00:00:00Z", "from": "0001-01-01T00:00:00Z"}, "at"),
        ({"from": "0001-01-01T00:00:00Z"}, "from"),
        ({"from": "0001-01-01T23:59:59+14:00"}, "from"),
    ],
)
def test_a_liability_statement_of_year_1_is_a_400_naming_the_field(floor, query, param):
    auditor = token_client(person("ida", "auditor"))
    answer = auditor.get(f"/api/v1/pools/{floor.pool_id}/liability", query)
    _refused(answer, 400, "invalid_parameter", param)


# 4. NUL in the admin's lists.


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/admin/auth/user/?q=%00",
        "/admin/auth/user/?q=ana%00",
        "/admin/auth/user/?username=%00",
        "/admin/auth/user/?username__exact=a%00b",
        "/admin/jackpot/auditevent/?kind=%00",
        "/admin/jackpot/award/?status__exact=%00",
        "/admin/jackpot/parameterchange/?kind__exact=%00",
        "/admin/tables/table/?game__exact=%00",
        "/admin/tables/table/?q=%00&game__exact=uth",
        "/admin/tables/table/?%00=uth",
    ],
)
def test_a_nul_in_an_admin_list_is_a_400(path):
    root = person("root", "admin", is_staff=True, is_superuser=True)
    events = _events()
    answer = signed_in(root).get(path)
    assert answer.status_code == 400, answer.content[:500]
    assert answer.json()["error"]["code"] == "invalid_parameter"
    assert _events() == events


@pytest.mark.django_db
def test_a_nul_in_an_admin_form_or_action_is_a_400():
    root = person("root", "admin", is_staff=True, is_superuser=True)
    ana = person("ana", "supervisor")
    admin = signed_in(root)
    events = _events()
    action = {"action": "reset_password", "_selected_action": ["\x00"]}
    answer = admin.post("/admin/auth/user/", action)
    assert (answer.status_code, answer.json()["error"]["param"]) == (400, "_selected_action")
    form = {"username": "ana", "first_name": "A\x00na", "roles": ["supervisor"], "is_active": "on"}
    answer = admin.post(f"/admin/auth/user/{ana.pk}/change/", form)
    assert (answer.status_code, answer.json()["error"]["param"]) == (400, "first_name")
    assert User.objects.get(pk=ana.pk).first_name == ""
    assert _events() == events


# 5. The club keeps two active admins.


def _deactivate(root: User, subject: User):
    """The account's form in the admin, saved with `is_active` unticked and nothing else
    changed."""
    form: dict[str, object] = {"username": subject.username, "roles": accounts.roles_of(subject)}
    form |= {flag: "on" for flag in ("is_staff", "is_superuser") if getattr(subject, flag)}
    return signed_in(root).post(f"/admin/auth/user/{subject.pk}/change/", form, follow=True)


def _active_admins() -> set[str]:
    return set(
        User.objects.filter(groups=role_group("admin"), is_active=True).values_list(
            "username", flat=True
        )
    )


@pytest.mark.django_db
def test_one_admin_cannot_deactivate_the_other_admins():
    root = person("root", "admin", is_staff=True, is_superuser=True)
    bob = person("bob", "admin", is_staff=True)
    carl = person("carl", "admin", is_staff=True)
    ana = person("ana", "supervisor")
    # Others than admins, and an admin beyond the two, are deactivated by one admin.
    assert "was changed successfully" in _deactivate(root, ana).content.decode()
    assert "was changed successfully" in _deactivate(root, carl).content.decode()
    assert _active_admins() == {"root", "bob"}
    events = _events()

    page = _deactivate(root, bob)
    text = page.content.decode()
    assert page.status_code == 200
    assert "at least 2 active admins" in text and "was changed successfully" not in text, text
    with pytest.raises(Conflict) as refused:
        accounts.staff_update(subject=bob, values={"is_active": False}, actor="user:root")
    assert (refused.value.status_code, refused.value.code) == (409, "too_few_admins")
    # Nor himself.
    with pytest.raises(Conflict):
        accounts.staff_update(subject=root, values={"is_active": False}, actor="user:root")
    assert _active_admins() == {"root", "bob"}
    assert _events() == events
    # A rename of an admin still goes through.
    accounts.staff_update(subject=bob, values={"first_name": "Bob"}, actor="user:root")
    assert _active_admins() == {"root", "bob"}


def _deactivate_in_thread(subject: User) -> str:
    try:
        accounts.staff_update(subject=subject, values={"is_active": False}, actor="user:root")
        return "done"
    except Conflict as refused:
        return refused.code
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_two_deactivations_racing_leave_two_active_admins():
    person("root", "admin", is_staff=True)
    bob = person("bob", "admin", is_staff=True)
    carl = person("carl", "admin", is_staff=True)
    events = _events()
    with ThreadPoolExecutor(max_workers=2) as executor:
        with transaction.atomic():
            # Hold what both deactivations count under, so both have read their account and
            # wait at once; released, each counts what the other committed.
            locks.role_group_row(role_group("admin"))
            outcomes = [executor.submit(_deactivate_in_thread, who) for who in (bob, carl)]
            _waiting_on_a_lock(2)
        results = sorted(outcome.result(timeout=60) for outcome in outcomes)
    assert results == ["done", "too_few_admins"]
    assert len(_active_admins()) == 2
    assert _events() == events + 1
    assert_journal_ok()
