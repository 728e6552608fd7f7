"""The way of an award to payment: verify, approve by a second supervisor, pay; or void.

Every step is checked for its money (balances from the journal), its audit event, who may take
it, and what a refused step leaves unchanged.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from jackpot.models import AuditEvent, Award
from tests.conftest import assert_journal_ok, uth_play, uth_seat
from tests.staff import api_clients, surveilled
from tests.winners import PAY

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    return api_clients(
        ana="supervisor",
        bob="supervisor",
        ida="auditor",
    )


@pytest.fixture
def hit(floor):
    """A round with a jackpot royal (seat 1) and envy (seat 2): two awards."""
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    body = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    ).json()
    jackpot, envy = body["awards"]
    return floor, jackpot, envy


def _post(client, award_id, step, body=None):
    return client.post(
        f"/api/v1/awards/{award_id}/{step}", body or {}, content_type="application/json"
    )


def _balances(floor):
    return assert_journal_ok()["balances"][str(floor.pool_id)]


def test_verify_then_a_second_supervisor_approves_then_pay(hit, people):
    floor, jackpot, _ = hit
    amount = jackpot["amount_cents"]
    assert jackpot["status"] == "pending" and _balances(floor)["awards_pending"] == amount

    verified = _post(people["ana"], jackpot["id"], "verify", {"note": "cards and video checked"})
    assert verified.status_code == 200, verified.json()
    assert verified.json()["status"] == "verified"
    assert verified.json()["verified_by"] == "ana"
    assert _balances(floor)["awards_pending"] == amount  # verification moves no money

    refused = _post(people["ana"], jackpot["id"], "approve")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "four_eyes"
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"

    surveilled(jackpot["id"])  # the pool requires surveillance's review (test_surveillance.py)
    approved = _post(people["bob"], jackpot["id"], "approve")
    assert approved.json()["status"] == "approved" and approved.json()["approved_by"] == "bob"
    after_approval = _balances(floor)
    assert after_approval["awards_pending"] == 0
    assert after_approval["payable"] == amount + 50_000  # the envy was approved at once

    paid = _post(people["ana"], jackpot["id"], "pay", PAY)
    assert paid.json()["status"] == "paid"
    balances = _balances(floor)
    assert (balances["payable"], balances["paid"]) == (50_000, amount)
    kinds = list(
        AuditEvent.objects.filter(chain=f"pool-{floor.pool_id}", kind__startswith="award.")
        .order_by("sequence")
        .values_list("kind", "actor")
    )
    assert kinds == [
        ("award.verified", "user:ana"),
        ("award.reviewed", "user:sam"),
        ("award.approved", "user:bob"),
        ("award.paid", "user:ana"),
    ]


def test_one_supervisor_only_requests_a_jackpots_void(hit, people):
    # The two-person void itself: tests/jackpot/awards/test_jackpot_void.py.
    floor, jackpot, _ = hit
    before = _balances(floor)
    requested = _post(people["bob"], jackpot["id"], "void", {"reason": "dealer error on video"})
    assert requested.status_code == 202, requested.json()
    body = requested.json()
    assert (body["status"], body["void_requested_by"], body["void_request_reason"]) == (
        "pending",
        "bob",
        "dealer error on video",
    )
    assert body["voided_by"] is None and body["void_requested_at"] is not None
    assert _balances(floor) == before


def test_a_voided_fixed_award_goes_back_to_the_house(floor, people):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "c-1", "seats": [uth_seat(1)]})
    award = terminal.post(
        "/rounds/c-1/result",
        {
            "board": ["As", "Ks", "Qs", "Js", "Ts"],
            "dealer": ["2c", "3c"],
            "seats": [uth_play(1, "9h 8h")],
        },
    ).json()["awards"][0]
    assert (award["kind"], award["status"]) == ("community_royal", "pending")
    house_before = _balances(floor)["house"]
    _post(people["ana"], award["id"], "verify", {"note": "ok"})
    voided = _post(people["bob"], award["id"], "void", {"reason": "marked cards"})
    assert voided.json()["status"] == "void"
    assert _balances(floor)["house"] == house_before + 500_000


def test_steps_out_of_order_and_bad_input_change_nothing(hit, people):
    floor, jackpot, envy = hit
    before = _balances(floor)
    for client, step, body, status, code in [
        (people["ana"], "pay", PAY, 409, "award_wrong_status"),  # pending, not approved
        (people["ana"], "approve", None, 409, "award_wrong_status"),  # not verified yet
        (people["ana"], "verify", {"note": ""}, 400, "invalid_text"),
        (people["ana"], "verify", {"note": 5}, 400, "invalid_text"),
        (people["ana"], "void", {}, 400, "invalid_text"),
    ]:
        response = _post(client, jackpot["id"], step, body)
        assert response.status_code == status, response.json()
        assert response.json()["error"]["code"] == code
    assert _post(people["ana"], envy["id"], "void", {"reason": "x"}).status_code == 409  # approved
    assert _post(people["ana"], 999_999, "verify", {"note": "x"}).status_code == 404
    assert _balances(floor) == before
    assert Award.objects.get(pk=jackpot["id"]).status == "pending"


def test_who_may_do_what(hit, people, floor):
    _, jackpot, _ = hit
    assert people["ida"].get("/api/v1/awards?status=pending").status_code == 200
    assert _post(people["ida"], jackpot["id"], "verify", {"note": "x"}).status_code == 403
    assert _post(Client(), jackpot["id"], "verify", {"note": "x"}).status_code == 401
    terminal = Client(HTTP_AUTHORIZATION=f"Bearer {floor.uth[0].token}")
    assert terminal.get("/api/v1/awards").status_code == 401
    listed = people["ana"].get("/api/v1/awards?status=pending").json()
    assert [a["id"] for a in listed["results"]] == [jackpot["id"]]
    assert people["ana"].get("/api/v1/awards?status=lost").status_code == 400
    assert people["ana"].get("/api/v1/awards?limit=0").status_code == 400


def test_the_database_refuses_an_approver_who_verified(hit, people, django_user_model):
    _, jackpot, _ = hit
    ana = django_user_model.objects.get(username="ana")
    with pytest.raises(IntegrityError), transaction.atomic():
        Award.objects.filter(pk=jackpot["id"]).update(verified_by=ana, approved_by=ana)
