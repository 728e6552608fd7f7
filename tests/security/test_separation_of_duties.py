"""Separation of duties (issue 37 item 4; compliance 52, first clause): an account that configures
(the admin role, the admin site's `is_staff` or `is_superuser`) never verifies, approves, pays or
voids, held by the service and by the database.

The attack, with no SQL: one admin posts an invented round with two four-of-a-kinds (EUR 500 each,
under the verification threshold: approved at once) and pays both himself. Then the insider's
ways around it: holding a money role as well (given by a proposal, or by SQL as the service's
role), or writing himself into the award's row. A manager, who configures nothing, takes the
money decisions an admin took before (a referral's decision, a void's confirmation).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, connection, transaction

from core.errors import ApiError, Forbidden
from jackpot.awards.workflow import (
    award_pay,
    award_referral_decide,
    award_verify,
    award_void,
    award_void_confirm,
)
from jackpot.models import (
    AuditEvent,
    Award,
    ParameterChange,
    PaymentMethod,
    ReferralDecision,
    ReferralOutcome,
    Transfer,
)
from jackpot.money import ledger
from jackpot.staff import accounts
from jackpot.staff.roles import role_group
from tests.conftest import uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql
from tests.staff import person, referred, signed_in, surveilled, token_client

QUADS = {
    "board": ["7c", "7d", "Kh", "Kd", "2s"],
    "dealer": ["3c", "4c"],
    "seats": [uth_play(1, "7s 7h"), uth_play(2, "Ks Kc")],
}
ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")],
}


def _round(floor, round_id: str, result: dict) -> list[int]:
    seats = [uth_seat(seat["seat"]) for seat in result["seats"]]
    assert floor.uth[0].post("/rounds", {"round_id": round_id, "seats": seats}).status_code == 201
    answer = floor.uth[0].post(f"/rounds/{round_id}/result", result)
    assert answer.status_code == 200, answer.content
    return [award["id"] for award in answer.json()["awards"]]


def mixed(name: str, role: str, *roles: str, **flags: bool) -> User:
    """An account holding `role` and `roles` with `flags` at once, as a grant from before the
    constraint (or a superuser around the triggers) left it: the service must refuse it still."""
    user = person(name, role)
    for more in roles:
        superuser_sql(
            "INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)",
            [user.pk, role_group(more).pk],
        )
    for flag, value in flags.items():
        assert flag in ("is_staff", "is_superuser")
        superuser_sql(f"UPDATE auth_user SET {flag} = %s WHERE id = %s", [value, user.pk])
    user = User.objects.get(pk=user.pk)
    # The grant from before is on the journal, as it was then: the account is what the journal
    # gave it (jackpot.staff.authority), and still refused, as one that configures.
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff.changed",
        actor="test",
        payload={"user": name, "before": {}, "after": accounts.snapshot(user)},
    )
    return user


def _commit(*statements: tuple[str, list[object]]) -> None:
    """SQL as the service's role, in one transaction that commits (its constraints checked)."""
    with transaction.atomic(), connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)


def _written() -> tuple[int, int, int]:
    """What a refused step must not add to: audit events, transfers, referral decisions."""
    return AuditEvent.objects.count(), Transfer.objects.count(), ReferralDecision.objects.count()


def _statuses(ids: list[int]) -> list[str]:
    return [Award.objects.get(pk=pk).status for pk in ids]


def _code(answer) -> tuple[int, str]:
    return answer.status_code, answer.json()["error"]["code"]


def _pay(client, award_id: int):
    return client.post(
        f"/api/v1/awards/{award_id}/pay", {"method": "cash"}, content_type="application/json"
    )


@pytest.mark.django_db
def test_one_admin_cannot_pay_the_awards_of_an_invented_round(floor):
    root = person("root", "admin", is_staff=True, is_superuser=True)
    quads = _round(floor, "invented-1", QUADS)
    assert _statuses(quads) == ["approved", "approved"]
    api, session = token_client(root), signed_in(root)
    written = _written()

    # The API, with his own token and his browser session (the floor page's own calls).
    assert _code(_pay(api, quads[0]))[0] == 403
    assert _code(_pay(session, quads[1]))[0] == 403
    # The floor page offers him nothing to do.
    page = signed_in(root).get("/floor/awards/").content.decode()
    assert '"canAct": false' in page and '"canDecide": false' in page
    # The Django admin shows awards, never changes them.
    admin = signed_in(root).post(f"/admin/jackpot/award/{quads[0]}/change/", {"status": "paid"})
    assert admin.status_code == 403
    # The service itself, as a page or an admin action would call it.
    with pytest.raises(Forbidden) as refused:
        award_pay(award_id=quads[0], user=root, method=PaymentMethod.CASH)
    assert refused.value.code == "separation_of_duties"
    # Nor behind the service: the award's row refuses him as its payer.
    with pytest.raises(IntegrityError), transaction.atomic():
        Award.objects.filter(pk=quads[0]).update(paid_by=root, status="paid")

    assert _statuses(quads) == ["approved", "approved"]
    assert _written() == written
    assert not AuditEvent.objects.filter(kind="award.paid").exists()

    # A supervisor, who configures nothing, pays them.
    cashier = token_client(person("ana", "supervisor"))
    assert all(_pay(cashier, award).status_code == 200 for award in quads)
    assert _statuses(quads) == ["paid", "paid"]


@pytest.mark.django_db
def test_an_admin_holding_a_money_role_as_well_is_refused_every_money_step(floor):
    """An account that holds both (an old grant, or rows this transaction has not committed:
    the database refuses them at commit, below) is refused as one that configures."""
    quads = _round(floor, "invented-2", QUADS)
    royal = _round(floor, "royal-1", ROYAL)[0]
    accounts = [
        mixed("ida", "admin", "supervisor"),
        mixed("max", "manager", is_staff=True),
        mixed("sue", "supervisor", is_superuser=True),
    ]
    clients = [token_client(user) for user in accounts]
    written = _written()
    for client in clients:
        assert _code(_pay(client, quads[0])) == (403, "separation_of_duties")
        verify = client.post(
            f"/api/v1/awards/{royal}/verify", {"note": "ok"}, content_type="application/json"
        )
        assert _code(verify) == (403, "separation_of_duties")
        void = client.post(
            f"/api/v1/awards/{quads[1]}/void", {"reason": "x"}, content_type="application/json"
        )
        assert _code(void) == (403, "separation_of_duties")
        stuck = client.post(
            f"/api/v1/tables/{floor.uth[1].table_id}/rounds/stuck-1/supervisor-void",
            {"reason": "terminal down"},
            content_type="application/json",
        )
        assert _code(stuck) == (403, "separation_of_duties")
    assert _statuses([*quads, royal]) == ["approved", "approved", "pending"]
    assert _written() == written


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_an_admin_a_money_role_at_commit():
    root = person("root", "admin", is_staff=True)
    ana = person("ana", "supervisor")
    supervisors = role_group("supervisor")
    admins = role_group("admin")

    # SQL as the service's role: the grant itself is refused when its transaction commits.
    with pytest.raises(IntegrityError, match="separation of duties"):
        _commit(
            (
                "INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)",
                [root.pk, supervisors.pk],
            )
        )
    # Nor a supervisor made an admin, or given the admin site, or a group renamed.
    for sql, params in [
        ("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", [ana.pk, admins.pk]),
        ("UPDATE auth_user SET is_staff = true WHERE id = %s", [ana.pk]),
        ("UPDATE auth_user SET is_superuser = true WHERE id = %s", [ana.pk]),
    ]:
        with pytest.raises(IntegrityError, match="separation of duties"):
            _commit((sql, params))
    auditors = role_group("auditor")
    person("eve", "auditor", "supervisor")
    with pytest.raises(IntegrityError, match="separation of duties"), transaction.atomic():
        Group.objects.filter(pk=auditors.pk).update(name="admin-renamed")
        Group.objects.filter(pk=admins.pk).update(name="admins-old")
        Group.objects.filter(pk=auditors.pk).update(name="admin")

    assert sorted(root.groups.values_list("name", flat=True)) == ["admin"]
    ana.refresh_from_db()
    assert (list(ana.groups.values_list("name", flat=True)), ana.is_staff, ana.is_superuser) == (
        ["supervisor"],
        False,
        False,
    )
    assert Group.objects.get(pk=admins.pk).name == "admin"
    # One transaction may reshuffle, as long as it ends clean: an admin becomes a supervisor.
    with transaction.atomic():
        root.groups.add(supervisors)
        root.groups.remove(admins)
        User.objects.filter(pk=root.pk).update(is_staff=False)
    assert sorted(root.groups.values_list("name", flat=True)) == ["supervisor"]


@pytest.mark.django_db
def test_a_manager_decides_a_referral_and_confirms_a_void_an_admin_cannot(floor):
    royals = [_round(floor, f"royal-{n}", ROYAL)[0] for n in (1, 2)]
    referred(royals[0])
    meg = person("meg", "manager")
    admin = person("root", "admin")
    admin_api, boss = token_client(admin), mixed("boss", "admin", "manager")
    written = _written()

    # An admin no longer decides a referral, nor confirms a void.
    clear = {"decision": "clear", "reason": "the footage is fine"}
    answer = admin_api.post(
        f"/api/v1/awards/{royals[0]}/referral", clear, content_type="application/json"
    )
    assert answer.status_code == 403
    for user in (admin, boss):
        with pytest.raises(Forbidden) as refused:
            award_referral_decide(
                award_id=royals[0], user=user, outcome=ReferralOutcome.CLEAR, reason="fine"
            )
        assert refused.value.code == "separation_of_duties"
    assert _written() == written

    # The manager does.
    manager = token_client(meg)
    answer = manager.post(
        f"/api/v1/awards/{royals[0]}/referral", clear, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    assert ReferralDecision.objects.get().decided_by == meg

    # A jackpot's void: a supervisor requests it; an admin cannot confirm; the manager does.
    surveilled(royals[1])
    award_verify(award_id=royals[1], user=person("ana", "supervisor"), note="checked")
    award_void(award_id=royals[1], user=User.objects.get(username="ana"), reason="misdeal")
    written = _written()
    refused_confirm = admin_api.post(
        f"/api/v1/awards/{royals[1]}/void/confirm", {}, content_type="application/json"
    )
    assert refused_confirm.status_code == 403
    with pytest.raises(Forbidden) as refused:
        award_void_confirm(award_id=royals[1], user=admin)
    assert refused.value.code == "separation_of_duties"
    assert _written() == written and _statuses([royals[1]]) == ["verified"]
    assert (
        manager.post(
            f"/api/v1/awards/{royals[1]}/void/confirm", {}, content_type="application/json"
        ).status_code
        == 200
    )
    assert _statuses([royals[1]]) == ["void"]
    # The database refuses an admin as a referral's decider too (SQL as the service's role).
    referred(royals[0], by="sue")
    with pytest.raises(IntegrityError, match="separation of duties"):
        _commit(
            (
                "INSERT INTO jackpot_referraldecision (review_id, decided_by_id, decided_at,"
                " outcome, reason) SELECT max(id), %s, now(), 'clear', 'fine'"
                " FROM jackpot_surveillancereview WHERE award_id = %s",
                [admin.pk, royals[0]],
            )
        )
    assert ReferralDecision.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_money_role_for_an_admin_is_refused_at_proposal_and_by_the_database():
    root = person("root", "admin", is_staff=True)
    bob = person("bob", "admin", is_staff=True)
    ana = person("ana", "supervisor")
    before = ParameterChange.objects.count(), AuditEvent.objects.count()

    for subject, values in [
        (bob, {"roles": ["admin", "supervisor"]}),
        (bob, {"roles": ["admin", "manager"]}),
        (ana, {"roles": ["admin", "supervisor"]}),
        (ana, {"is_staff": True}),
        (ana, {"is_superuser": True}),
    ]:
        with pytest.raises(ApiError) as refused:
            accounts.staff_access_propose(subject=subject, values=values, reason="r", user=root)
        assert (refused.value.code, refused.value.status_code) == ("invalid_change", 400)
    with pytest.raises(ApiError) as refused:
        accounts.staff_create_propose(
            values={"username": "eve", "roles": ["supervisor"], "is_staff": True},
            reason="r",
            user=root,
        )
    assert refused.value.code == "invalid_change"
    # The admin site's form says so, and files nothing.
    page = signed_in(root).post(
        f"/admin/auth/user/{ana.pk}/change/",
        {"username": "ana", "is_active": "on", "roles": ["supervisor", "admin"], "reason": "r"},
    )
    assert page.status_code == 200 and "separation of duties" in page.content.decode()
    assert (ParameterChange.objects.count(), AuditEvent.objects.count()) == before

    # Two proposals, each clean alone, that together would mix: the second approval refuses.
    carl = person("carl", "auditor")
    money = accounts.staff_access_propose(
        subject=carl, values={"roles": ["auditor", "manager"]}, reason="r", user=root
    )
    power = accounts.staff_access_propose(
        subject=carl, values={"is_staff": True}, reason="r", user=root
    )
    accounts.staff_change_approve(change_id=money.pk, user=bob)
    events = AuditEvent.objects.count()
    with pytest.raises(ApiError) as refused:
        accounts.staff_change_approve(change_id=power.pk, user=bob)
    assert refused.value.code == "invalid_change"
    carl.refresh_from_db()
    assert not carl.is_staff and AuditEvent.objects.count() == events
    assert ParameterChange.objects.get(pk=power.pk).status == "proposed"

    # The approval path bypassed by SQL as the service's role (the proposal marked applied and
    # its flag set, or a role's row inserted): the database refuses each at commit.
    with pytest.raises(IntegrityError, match="separation of duties"):
        _commit(
            ("UPDATE auth_user SET is_staff = true WHERE id = %s", [carl.pk]),
            (
                "UPDATE jackpot_parameterchange SET status = 'applied', decided_by_id = %s,"
                " decided_at = now() WHERE id = %s",
                [bob.pk, power.pk],
            ),
        )
    with pytest.raises(IntegrityError, match="separation of duties"):
        _commit(
            (
                "INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)",
                [bob.pk, role_group("supervisor").pk],
            )
        )
    carl.refresh_from_db()
    assert not carl.is_staff and ParameterChange.objects.get(pk=power.pk).status == "proposed"
    assert sorted(bob.groups.values_list("name", flat=True)) == ["admin"]
