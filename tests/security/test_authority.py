"""Authority the service's own database role cannot forge (issue 37 items 1 and 2; compliance 51).

The insider holds one admin account (a superuser too) and SQL as the service's role, without the
journal's key. Each test plays what he did with rows, asserts the refusal at the request and that
the refused step wrote nothing, then shows the legitimate path still works. The last tests turn
the second factor on, as production has it: the second person of a two-person step sends a
fresh code with that step, which neither a session nor a staff token stands in for.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from core.errors import ApiError
from core.tokens import hash_token, issue_token
from jackpot.awards.workflow import award_verify
from jackpot.models import AuditEvent, Award, ParameterChange, SealedTOTPDevice, StaffToken
from jackpot.staff import accounts, authority
from jackpot.staff.roles import role_group
from tables.models import Round, Table, Terminal
from tables.services import operator_terminal_issue, terminal_revoke
from tests.conftest import uth_seat
from tests.floor.conftest import play_hit
from tests.security.test_second_factor import signed_in
from tests.staff import code, enrolled, person, referred, surveilled, token_client
from tests.staff import signed_in as session_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def root() -> User:
    """The insider: an admin and superuser, given his powers as the service gives them."""
    return person("root", "admin", is_staff=True, is_superuser=True)


def sql(statement: str, *params: object) -> None:
    """What the insider writes as the service's role: plain SQL, no service, no journal key."""
    with connection.cursor() as cursor:
        cursor.execute(statement, list(params))


def sql_role(user: User, role: str) -> None:
    group = role_group(role)
    sql("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", user.pk, group.pk)


def events() -> int:
    return AuditEvent.objects.count()


def test_an_account_inserted_by_sql_acts_with_no_power_and_no_edit_certifies_it(root):
    sql(
        "INSERT INTO auth_user (username, password, is_superuser, is_staff, is_active, first_name,"
        " last_name, email, date_joined) VALUES ('ghost', '', true, true, true, '', '', '', now())"
    )
    ghost = User.objects.get(username="ghost")
    sql_role(ghost, "admin")
    sql_role(ghost, "auditor")
    before = events()

    # Signed in (his own session) or with a token row he wrote, the account does nothing.
    refused = session_of(ghost).get("/api/v1/journal")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "powers_unexplained"
    assert session_of(ghost).get("/admin/jackpot/parameterchange/").status_code in (302, 403)
    token = issue_token("staff")
    StaffToken.objects.create(user=ghost, token_hash=token.token_hash, prefix=token.prefix)
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token.raw}").get("/api/v1/awards").status_code == 401

    # One admin's harmless edit (a first name) would write an event showing the rows as they
    # are: refused, so no event certifies powers no event gave.
    with pytest.raises(ApiError) as edit:
        accounts.staff_update(subject=ghost, values={"first_name": "Casper"}, actor="user:root")
    assert edit.value.code == "account_unexplained"
    page = session_of(root).post(
        f"/admin/auth/user/{ghost.pk}/change/",
        {
            "username": "ghost",
            "first_name": "Casper",
            "last_name": "",
            "email": "",
            "is_active": "on",
            "reason": "",
        },
    )
    assert page.status_code in (200, 302)
    ghost.refresh_from_db()
    assert ghost.first_name == ""
    assert events() == before
    assert not authority.explained(User.objects.get(pk=ghost.pk))

    # Deactivating it takes every power away: the event shows an account with none.
    accounts.staff_update(subject=ghost, values={"is_active": False}, actor="user:root")
    ghost = User.objects.get(pk=ghost.pk)
    assert authority.row_powers(ghost) == {
        "is_active": False,
        "is_staff": False,
        "is_superuser": False,
        "roles": [],
    }
    assert authority.explained(ghost)


def test_a_role_added_by_sql_takes_every_power_of_the_account_away(root):
    ana = person("ana", "supervisor")
    client = token_client(ana)
    assert client.get("/api/v1/awards").status_code == 200
    sql_role(ana, "auditor")
    refused = client.get("/api/v1/journal")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "powers_unexplained")
    # Not even what the journal gave her: the account is not what was approved.
    assert client.get("/api/v1/awards").status_code == 403

    # Two admins set her powers again: the approval writes every power from the journal's
    # values and the change's, never the rows it found.
    bob = person("bob", "admin")
    change = accounts.staff_access_propose(
        subject=ana, values={"roles": ["supervisor", "auditor"]}, reason="audits too", user=root
    )
    assert change.before == {"roles": ["supervisor"]}
    accounts.staff_change_approve(change_id=change.pk, user=bob)
    assert client.get("/api/v1/journal").status_code == 200


def test_a_proposal_inserted_or_edited_by_sql_is_not_approved(root):
    bob = person("bob", "admin")
    before = events()
    sql(
        "INSERT INTO jackpot_parameterchange (kind, changes, before, reason, status,"
        " proposed_by_id,"
        " proposed_at, decision_note) VALUES ('staff.create', %s, '{}', 'night shift', 'proposed',"
        " %s, now(), '')",
        '{"username": "root2", "roles": ["admin"], "is_staff": true}',
        bob.pk,
    )
    forged = ParameterChange.objects.get(reason="night shift")
    approved = session_of(root).post(
        "/admin/jackpot/parameterchange/",
        {"action": "approve", "_selected_action": [forged.pk]},
        follow=True,
    )
    assert "is not what its proposal in the journal filed" in approved.content.decode()
    assert not User.objects.filter(username="root2").exists()
    assert ParameterChange.objects.get(pk=forged.pk).status == "proposed"
    assert events() == before

    # A real proposal whose row is edited afterwards: the approval checks it against its event.
    real = accounts.staff_access_propose(
        subject=person("cat", "auditor"), values={"roles": ["supervisor"]}, reason="r", user=bob
    )
    sql(
        "UPDATE jackpot_parameterchange SET changes = %s, proposed_by_id = %s WHERE id = %s",
        '{"roles": ["admin"]}',
        bob.pk,
        real.pk,
    )
    before = events()
    with pytest.raises(ApiError) as refused:
        accounts.staff_change_approve(change_id=real.pk, user=root)
    assert refused.value.code == "change_unexplained"
    assert events() == before
    assert list(User.objects.get(username="cat").groups.values_list("name", flat=True)) == [
        "auditor"
    ]


def test_a_token_row_written_for_a_colleague_does_not_act_as_them(root):
    ana = person("ana", "supervisor")
    token = issue_token("staff")
    StaffToken.objects.create(user=ana, token_hash=token.token_hash, prefix=token.prefix)
    forged = Client(HTTP_AUTHORIZATION=f"Bearer {token.raw}")
    assert forged.get("/api/v1/awards").status_code == 401

    # Nor a real token of his moved onto her account, nor one revived after its revocation.
    mine = token_client(root)
    row = StaffToken.objects.get(user=root)
    sql("UPDATE jackpot_stafftoken SET user_id = %s WHERE id = %s", ana.pk, row.pk)
    assert mine.get("/api/v1/awards").status_code == 401
    sql("UPDATE jackpot_stafftoken SET user_id = %s WHERE id = %s", root.pk, row.pk)
    assert mine.get("/api/v1/awards").status_code == 200


def test_the_second_person_proves_presence_with_a_fresh_code(settings, floor):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "supervisor")
    jackpot, _ = play_hit(floor.uth[0])
    award_verify(award_id=jackpot["id"], user=ana, note="video checked")
    surveilled(jackpot["id"])
    url = f"/api/v1/awards/{jackpot['id']}/approve"
    awards_events = AuditEvent.objects.filter(kind__startswith="award").count()

    session = signed_in(bob)  # signed in with this time step's code
    for body, refusal in (
        ({}, "second_factor_code_required"),
        (
            {"second_factor_code": "000000" if code(bob) != "000000" else "111111"},
            "second_factor_code_wrong",
        ),
        ({"second_factor_code": code(bob)}, "second_factor_code_wrong"),  # the sign-in's: used
    ):
        refused = session.post(url, body, content_type="application/json")
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, refusal)
    # A staff token of a verified session does not stand in for the code either.
    token = session.post("/floor/account/", {"action": "token"}).context["token"]
    bearer = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    refused = bearer.post(url, {}, content_type="application/json")
    assert refused.json()["error"]["code"] == "second_factor_code_required"
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    assert AuditEvent.objects.filter(kind__startswith="award").count() == awards_events

    # The device refuses for a while after the two failures above (django-otp's delay): time
    # would end it; the test ends it at once.
    SealedTOTPDevice.objects.filter(user=bob).update(
        throttling_failure_timestamp=None, throttling_failure_count=0
    )
    approved = bearer.post(
        url, {"second_factor_code": code(bob, steps_ahead=1)}, content_type="application/json"
    )
    assert approved.status_code == 200, approved.content
    assert Award.objects.get(pk=jackpot["id"]).status == "approved"


def test_a_change_is_approved_only_with_the_approvers_fresh_code(settings, floor):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    ana, bob = enrolled("ana", "admin"), enrolled("bob", "admin")
    Table.objects.filter(pool_id=floor.pool_id).update(enabled=False)
    proposed = signed_in(ana).post(
        f"/api/v1/pools/{floor.pool_id}/changes",
        {"changes": {"name": "Salle B"}, "reason": "the room's name"},
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.content
    url = f"/api/v1/pools/{floor.pool_id}/changes/{proposed.json()['id']}/approve"
    session = signed_in(bob)
    refused = session.post(url, {}, content_type="application/json")
    assert refused.json()["error"]["code"] == "second_factor_code_required"
    applied = session.post(
        url, {"second_factor_code": code(bob, steps_ahead=1)}, content_type="application/json"
    )
    assert applied.status_code == 200, applied.content
    assert applied.json()["status"] == "applied"


def test_a_terminal_row_written_by_sql_posts_no_round(floor):
    """A spare token for a live table, written as a row (the real terminal keeps working), a
    revoked token revived, or a real row given another token: none opens a round."""
    table = Table.objects.get(pk=floor.uth[0].table_id)
    seat = uth_seat(1)
    opened = floor.uth[0].post("/rounds", {"round_id": "real", "seats": [seat]})
    assert opened.status_code == 201, opened.content
    before = events()

    spare = issue_token("term")
    Terminal.objects.create(
        table=table, name="spare", token_hash=spare.token_hash, prefix=spare.prefix
    )
    forged = Client(HTTP_AUTHORIZATION=f"Bearer {spare.raw}")
    refused = forged.post(
        f"/api/v1/tables/{table.pk}/rounds",
        {"round_id": "invented", "seats": [seat]},
        content_type="application/json",
    )
    assert refused.status_code == 401
    # A real terminal's row given the spare token's hash: its issue names another.
    issued = operator_terminal_issue(table=table, name="second", revoke_others=False, actor="t")
    Terminal.objects.filter(name="spare").delete()
    sql(
        "UPDATE tables_terminal SET token_hash = %s WHERE id = %s",
        spare.token_hash,
        issued.terminal.pk,
    )
    assert forged.get(f"/api/v1/tables/{table.pk}/rounds").status_code == 401
    # A revoked token revived by clearing its row's revocation.
    sql(
        "UPDATE tables_terminal SET token_hash = %s WHERE id = %s",
        hash_token(issued.token),
        issued.terminal.pk,
    )
    terminal_revoke(table_id=table.pk, terminal_id=issued.terminal.pk, actor="user:root")
    sql("UPDATE tables_terminal SET revoked_at = NULL WHERE id = %s", issued.terminal.pk)
    revived = Client(HTTP_AUTHORIZATION=f"Bearer {issued.token}")
    assert revived.get(f"/api/v1/tables/{table.pk}/rounds").status_code == 401
    assert not Round.objects.filter(round_id="invented").exists()
    assert events() == before + 2  # the second terminal's issue and its revocation
    # The real terminal still plays.
    assert floor.uth[0].client().get(f"/api/v1/tables/{table.pk}/rounds").status_code == 200


def test_no_second_step_of_any_two_person_control_goes_without_a_fresh_code(settings, floor):
    """Every second step the API offers (approve an award, confirm a jackpot's void, decide a
    referral, approve a pool's change, a table's move or a terminal token), by its rightful
    second person with a verified session's staff token and no code: 403, nothing written."""
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    ana, bob = enrolled("ana", "admin"), enrolled("bob", "admin")
    sue, sid = enrolled("sue", "supervisor"), enrolled("sid", "supervisor")
    meg = enrolled("meg", "manager")
    proposer, approver = token_client(ana), token_client(bob)
    first, second, manager = token_client(sue), token_client(sid), token_client(meg)
    table = floor.uth[0].table_id

    def post(client: Client, url: str, body: dict) -> int:
        return client.post(url, body, content_type="application/json").status_code

    royal, _ = play_hit(floor.uth[0], "r-1")
    assert post(first, f"/api/v1/awards/{royal['id']}/verify", {"note": "seen"}) == 200
    surveilled(royal["id"])
    voided, _ = play_hit(floor.uth[0], "r-2")
    assert post(first, f"/api/v1/awards/{voided['id']}/void", {"reason": "misdeal"}) == 202
    disputed, _ = play_hit(floor.uth[0], "r-3")
    referred(disputed["id"])
    Table.objects.filter(pool_id=floor.pool_id).update(enabled=False)
    pool_change = proposer.post(
        f"/api/v1/pools/{floor.pool_id}/changes",
        {"changes": {"name": "Salle B"}, "reason": "r"},
        content_type="application/json",
    ).json()["id"]
    move = proposer.post(
        f"/api/v1/tables/{table}/moves", {"pool": None, "reason": "r"}, "application/json"
    )
    issue = proposer.post(
        f"/api/v1/tables/{table}/terminals", {"name": "spare", "reason": "r"}, "application/json"
    )
    assert (move.status_code, issue.status_code) == (201, 201), (move.content, issue.content)
    move, issue = move.json()["id"], issue.json()["id"]

    steps = [
        (second, f"/api/v1/awards/{royal['id']}/approve", {}),
        (second, f"/api/v1/awards/{voided['id']}/void/confirm", {}),
        (
            manager,
            f"/api/v1/awards/{disputed['id']}/referral",
            {"decision": "clear", "reason": "x"},
        ),
        (approver, f"/api/v1/pools/{floor.pool_id}/changes/{pool_change}/approve", {}),
        (approver, f"/api/v1/tables/{table}/moves/{move}/approve", {}),
        (approver, f"/api/v1/tables/{table}/terminals/issues/{issue}/approve", {}),
    ]
    for client, url, body in steps:
        before = events()
        refused = client.post(url, body, content_type="application/json")
        assert (refused.status_code, refused.json()["error"]["code"]) == (
            403,
            "second_factor_code_required",
        ), url
        assert events() == before, url
    assert Award.objects.get(pk=royal["id"]).status == "verified"
    assert Award.objects.get(pk=voided["id"]).status != "void"
    assert not ParameterChange.objects.filter(status="applied").exists()
