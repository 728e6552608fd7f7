"""Surveillance before payment (issue 22 item 2): a jackpot of a pool that requires it is
approved only after a surveillance officer confirmed it on video; a referral blocks approval and
payment until a manager (not its reviewer, never an admin) clears it or starts the void; the
reviewer is never the verifier or approver; reviews are append-only rows and audit events, and a
review forged or edited by SQL is reported by the journal's verification.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from jackpot.models import AuditEvent, Award, Pool, ReferralDecision, SurveillanceReview
from jackpot.staff.roles import role_group
from tables.models import Table
from tests.conftest import assert_journal_ok, uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql, verify
from tests.staff import api_clients, grant_roles
from tests.winners import PAY

pytestmark = pytest.mark.django_db

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
}
REVIEW = {
    "camera": "UTH-1 overhead",
    "from": "2026-12-02T09:55:00+01:00",
    "to": "2026-12-02T10:05:00+01:00",
    "verdict": "confirmed",
}
REFERRAL = {**REVIEW, "verdict": "referred", "reason": "the dealer's hand passes over the deck"}


@pytest.fixture
def people() -> dict[str, Client]:
    return api_clients(
        ana="supervisor",
        bob="supervisor",
        sam="surveillance",
        sue="surveillance",
        max="manager",
        meg="manager",
        ada="admin",
        ned="admin",
        ida="auditor",
    )


@pytest.fixture
def jackpot(floor) -> dict:
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    return terminal.post("/rounds/r-1/result", ROYAL).json()["awards"][0]


def _post(client: Client, award_id: int, step: str, body: dict | None = None):
    if step == "pay" and body is None:
        body = PAY  # every jackpot here is above the identification threshold
    return client.post(
        f"/api/v1/awards/{award_id}/{step}", body or {}, content_type="application/json"
    )


def _refused(response, status: int, code: str) -> None:
    assert (response.status_code, response.json()["error"]["code"]) == (status, code), (
        response.json()
    )


def _balances(pool_id: int) -> dict[str, int]:
    return assert_journal_ok()["balances"][str(pool_id)]


def test_a_jackpot_waits_for_a_confirmed_review_then_is_approved(people, jackpot, floor):
    (listed,) = [
        a for a in people["ana"].get("/api/v1/awards").json()["results"] if a["id"] == jackpot["id"]
    ]
    assert listed["surveillance_required"] is True and listed["review"] is None
    assert _post(people["ana"], jackpot["id"], "verify", {"note": "cards"}).status_code == 200
    before = _balances(floor.pool_id)
    _refused(_post(people["bob"], jackpot["id"], "approve"), 409, "surveillance_review_required")
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    assert _balances(floor.pool_id) == before

    reviewed = _post(people["sam"], jackpot["id"], "review", {**REVIEW, "note": "clean deal"})
    assert reviewed.status_code == 200, reviewed.json()
    review = reviewed.json()["review"]
    assert review | {"id": 0, "reviewed_at": ""} == {
        "id": 0,
        "reviewer": "sam",
        "reviewed_at": "",
        "camera": "UTH-1 overhead",
        "from": "2026-12-02T08:55:00+00:00",  # stored and shown in UTC
        "to": "2026-12-02T09:05:00+00:00",
        "verdict": "confirmed",
        "reason": "",
        "note": "clean deal",
        "decision": None,
    }
    assert reviewed.json()["status"] == "verified"  # a review moves no status, no money
    assert _balances(floor.pool_id) == before
    event = AuditEvent.objects.get(kind="award.reviewed")
    assert (event.chain, event.actor, event.payload["review"]) == (
        f"pool-{floor.pool_id}",
        "user:sam",
        review["id"],
    )

    approved = _post(people["bob"], jackpot["id"], "approve")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["review"]["verdict"] == "confirmed"
    listed = people["sam"].get("/api/v1/awards").json()["results"]  # surveillance reads the queue
    assert next(a for a in listed if a["id"] == jackpot["id"])["review"]["reviewer"] == "sam"
    assert _post(people["ana"], jackpot["id"], "pay").status_code == 200
    assert _balances(floor.pool_id)["paid"] == jackpot["amount_cents"]


def test_only_surveillance_reviews_and_it_takes_no_other_step(people, jackpot):
    for name in ("ana", "max", "ida"):
        assert _post(people[name], jackpot["id"], "review", REVIEW).status_code == 403
    for step, body in (("verify", {"note": "x"}), ("approve", None), ("pay", None)):
        assert _post(people["sam"], jackpot["id"], step, body).status_code == 403
    assert _post(people["sam"], jackpot["id"], "void", {"reason": "x"}).status_code == 403
    assert (
        _post(
            people["sam"], jackpot["id"], "referral", {"decision": "clear", "reason": "x"}
        ).status_code
        == 403
    )
    assert not SurveillanceReview.objects.exists()


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ({**REVIEW, "to": REVIEW["from"]}, "from", "invalid_footage_range"),
        ({**REVIEW, "from": "0001-01-01T00:00:00+05:00"}, "from", "invalid_request"),  # no UTC
        ({**REVIEW, "verdict": "referred"}, "reason", "invalid_text"),
        ({**REVIEW, "verdict": "maybe"}, "verdict", "invalid_request"),
        ({**REVIEW, "camera": " "}, "camera", "invalid_text"),
        ({**REVIEW, "from": "2026-12-02T09:55:00"}, "from", "invalid_request"),  # no offset
        ({k: v for k, v in REVIEW.items() if k != "to"}, "to", "invalid_request"),
        ({**REVIEW, "seen": True}, "seen", "unknown_field"),
    ],
)
def test_a_bad_review_is_a_400_naming_the_field(people, jackpot, body, param, code):
    response = _post(people["sam"], jackpot["id"], "review", body)
    assert response.status_code == 400, response.json()
    assert (response.json()["error"]["param"], response.json()["error"]["code"]) == (param, code)
    assert (
        not SurveillanceReview.objects.exists()
        and not AuditEvent.objects.filter(kind__in=["award.reviewed", "award.referred"]).exists()
    )


def test_four_eyes_between_the_reviewer_and_the_supervisors(people, jackpot, django_user_model):
    # One person with both roles: reviews, then cannot verify; verifies, then cannot review.
    ana = django_user_model.objects.get(username="ana")
    grant_roles(ana, role_group("surveillance"))
    assert _post(people["ana"], jackpot["id"], "review", REVIEW).status_code == 200
    _refused(_post(people["ana"], jackpot["id"], "verify", {"note": "x"}), 403, "four_eyes")
    assert _post(people["bob"], jackpot["id"], "verify", {"note": "x"}).status_code == 200
    _refused(_post(people["ana"], jackpot["id"], "approve"), 403, "four_eyes")
    bob = django_user_model.objects.get(username="bob")
    grant_roles(bob, role_group("surveillance"))
    _refused(_post(people["bob"], jackpot["id"], "review", REVIEW), 403, "four_eyes")
    assert Award.objects.get(pk=jackpot["id"]).approved_by is None
    # The database refuses it too, whichever row is written last.
    with pytest.raises(IntegrityError), transaction.atomic():
        Award.objects.filter(pk=jackpot["id"]).update(approved_by=ana)
    review = SurveillanceReview.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        SurveillanceReview.objects.create(
            award_id=jackpot["id"],
            reviewer=bob,
            reviewed_at=review.reviewed_at,
            camera="c",
            footage_from=review.footage_from,
            footage_to=review.footage_to,
            verdict="confirmed",
        )


def test_a_referral_blocks_approval_and_payment_until_a_manager_clears_it(people, jackpot, floor):
    assert _post(people["ana"], jackpot["id"], "verify", {"note": "cards"}).status_code == 200
    referred = _post(people["sam"], jackpot["id"], "review", REFERRAL)
    assert referred.status_code == 200, referred.json()
    assert referred.json()["review"]["verdict"] == "referred"
    event = AuditEvent.objects.get(kind="award.referred")
    assert event.payload["reason"] == REFERRAL["reason"]
    before = _balances(floor.pool_id)

    _refused(_post(people["bob"], jackpot["id"], "approve"), 409, "surveillance_referred")
    # Another officer's confirmation cannot overrule a referral: only a manager ends it.
    _refused(_post(people["sue"], jackpot["id"], "review", REVIEW), 409, "surveillance_referred")
    # Payment is refused too, even for an award approved behind the service's back.
    superuser_sql("UPDATE jackpot_award SET status = 'approved' WHERE id = %s", [jackpot["id"]])
    _refused(_post(people["bob"], jackpot["id"], "pay"), 409, "surveillance_referred")
    superuser_sql("UPDATE jackpot_award SET status = 'verified' WHERE id = %s", [jackpot["id"]])
    assert _balances(floor.pool_id) == before

    # A manager decides: not the reviewer, not a supervisor; a reason is required.
    decision = {"decision": "clear", "reason": "the hand passes, the deck is untouched"}
    assert _post(people["bob"], jackpot["id"], "referral", decision).status_code == 403
    assert _post(people["max"], jackpot["id"], "referral", {"decision": "clear"}).status_code == 400
    cleared = _post(people["max"], jackpot["id"], "referral", decision)
    assert cleared.status_code == 200, cleared.json()
    assert cleared.json()["review"]["decision"]["outcome"] == "clear"
    assert cleared.json()["review"]["decision"]["decided_by"] == "max"
    _refused(_post(people["meg"], jackpot["id"], "referral", decision), 409, "referral_not_open")
    assert AuditEvent.objects.get(kind="award.referral_decided").payload["outcome"] == "clear"

    assert _post(people["bob"], jackpot["id"], "approve").status_code == 200
    assert _post(people["ana"], jackpot["id"], "pay").status_code == 200
    _balances(floor.pool_id)  # the journal verifies: rows and events agree


def test_a_referral_decided_void_requests_the_jackpots_void(people, jackpot, floor):
    assert _post(people["sam"], jackpot["id"], "review", REFERRAL).status_code == 200
    before = _balances(floor.pool_id)
    decided = _post(
        people["max"], jackpot["id"], "referral", {"decision": "void", "reason": "cheat"}
    )
    assert decided.status_code == 200, decided.json()
    body = decided.json()
    assert (body["status"], body["void_requested_by"], body["void_request_reason"]) == (
        "pending",
        "max",
        "cheat",
    )
    assert _balances(floor.pool_id) == before  # requested, not done
    kinds = list(
        AuditEvent.objects.filter(kind__startswith="award.")
        .order_by("pk")
        .values_list("kind", flat=True)
    )
    assert kinds == ["award.referred", "award.referral_decided", "award.void_requested"]
    # The manager who requested the void cannot confirm it; a supervisor does.
    _refused(_post(people["max"], jackpot["id"], "void/confirm"), 403, "four_eyes")
    assert _post(people["ana"], jackpot["id"], "void/confirm").status_code == 200
    assert Award.objects.get(pk=jackpot["id"]).status == "void"
    _balances(floor.pool_id)


def test_the_manager_is_never_the_reviewer(people, jackpot, django_user_model):
    max_ = django_user_model.objects.get(username="max")
    grant_roles(max_, role_group("surveillance"))
    assert _post(people["max"], jackpot["id"], "review", REFERRAL).status_code == 200
    decision = {"decision": "clear", "reason": "fine"}
    _refused(_post(people["max"], jackpot["id"], "referral", decision), 403, "four_eyes")
    assert not ReferralDecision.objects.exists()
    review = SurveillanceReview.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        ReferralDecision.objects.create(
            review=review,
            decided_by=max_,
            decided_at=review.reviewed_at,
            outcome="clear",
            reason="x",
        )


def test_a_pool_not_requiring_surveillance_approves_without_a_review(people, jackpot, floor):
    admin, other = people["ada"], people["ned"]
    for table in Table.objects.filter(pool_id=floor.pool_id):
        admin.patch(
            f"/api/v1/tables/{table.pk}", {"enabled": False}, content_type="application/json"
        )
    proposed = admin.post(
        f"/api/v1/pools/{floor.pool_id}/changes",
        {"changes": {"surveillance_required": False}, "reason": "a test floor"},
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.json()
    change = proposed.json()
    assert (change["changes"], change["before"]) == (
        {"surveillance_required": False},
        {"surveillance_required": True},
    )
    _refused(
        admin.post(
            f"/api/v1/pools/{floor.pool_id}/changes/{change['id']}/approve",
            {},
            content_type="application/json",
        ),
        403,
        "four_eyes",
    )
    approved = other.post(
        f"/api/v1/pools/{floor.pool_id}/changes/{change['id']}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.json()
    assert Pool.objects.get(pk=floor.pool_id).surveillance_required is False
    assert admin.get(f"/api/v1/pools/{floor.pool_id}").json()["surveillance_required"] is False

    assert _post(people["ana"], jackpot["id"], "verify", {"note": "cards"}).status_code == 200
    approved = _post(people["bob"], jackpot["id"], "approve")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["surveillance_required"] is False
    _balances(floor.pool_id)  # the pool's row agrees with its pool.changed event


def test_reviews_are_append_only(people, jackpot):
    assert _post(people["sam"], jackpot["id"], "review", REVIEW).status_code == 200
    for attempt in (
        lambda: SurveillanceReview.objects.update(verdict="referred", reason="x"),
        lambda: SurveillanceReview.objects.all().delete(),
    ):
        with pytest.raises(Exception, match="append-only"), transaction.atomic():
            attempt()


def test_a_review_forged_or_edited_by_sql_is_reported(people, jackpot, django_user_model):
    assert _post(people["sam"], jackpot["id"], "review", REFERRAL).status_code == 200
    assert verify()[0] == 0
    review = SurveillanceReview.objects.get()
    # The referral turned into a confirmation, going around the triggers.
    superuser_sql(
        "UPDATE jackpot_surveillancereview SET verdict = 'confirmed', reason = '' WHERE id = %s",
        [review.pk],
    )
    _, problems = verify()
    assert any(
        f"review {review.pk}: the row's verdict, reason differ from its event" in p
        for p in problems
    ), problems
    superuser_sql(
        "UPDATE jackpot_surveillancereview SET verdict = 'referred', reason = %s WHERE id = %s",
        [REFERRAL["reason"], review.pk],
    )
    assert verify()[0] == 0
    # A confirmed review inserted without its event.
    sue = django_user_model.objects.get(username="sue")
    superuser_sql(
        "INSERT INTO jackpot_surveillancereview (award_id, reviewer_id, reviewed_at, camera,"
        " footage_from, footage_to, verdict, reason, note) SELECT award_id, %s, now(), camera,"
        " footage_from, footage_to, 'confirmed', '', '' FROM jackpot_surveillancereview"
        " WHERE id = %s",
        [sue.pk, review.pk],
    )
    forged = SurveillanceReview.objects.exclude(pk=review.pk).get()
    _, problems = verify()
    assert any(f"review {forged.pk}: no event recorded it" in p for p in problems), problems
