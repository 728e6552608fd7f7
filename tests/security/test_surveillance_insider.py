"""Surveillance's sign-off against one person holding every privilege (issue 22 item 2;
compliance 40, 47): one account that is supervisor, manager and surveillance officer at once cannot
review the jackpot they verified (nor verify or approve the one they reviewed), cannot decide
their own referral, and cannot get a confirmation past the verification by writing it to the
database behind the journal. Each attack is played, the refusal asserted and what did not
change checked; then the second person it takes is shown to be what moves the award on.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from jackpot.awards.workflow import award_approve, award_referral_decide, award_review, award_verify
from jackpot.models import (
    AuditEvent,
    Award,
    ReferralDecision,
    ReferralOutcome,
    SurveillanceReview,
    Verdict,
)
from tables.audit.verification import keep_checkpoint, verify_full, verify_routine
from tests.conftest import uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql, verify
from tests.staff import person, signed_in

pytestmark = pytest.mark.django_db

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")],
}


@pytest.fixture
def root() -> User:
    # Every role one account may hold at once: an admin, `is_staff` or `is_superuser` holds no
    # money role (compliance 52, tests/security/test_separation_of_duties.py).
    return person("root", "supervisor", "manager", "surveillance")


@pytest.fixture
def jackpot(floor) -> int:
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    return floor.uth[0].post("/rounds/r-1/result", ROYAL).json()["awards"][0]["id"]


def _review(award_id: int, user: User, verdict: Verdict = Verdict.CONFIRMED, reason=None):
    footage = Award.objects.get(pk=award_id).created_at
    return award_review(
        award_id=award_id,
        user=user,
        camera="overhead",
        footage_from=footage.replace(minute=0),
        footage_to=footage.replace(minute=59),
        verdict=verdict,
        reason=reason,
        note=None,
    )


def test_one_person_with_every_role_cannot_sign_off_their_own_jackpot(root, jackpot):
    client = signed_in(root)
    verified = client.post(
        f"/api/v1/awards/{jackpot}/verify", {"note": "ok"}, content_type="application/json"
    )
    assert verified.status_code == 200, verified.json()
    refused = client.post(
        f"/api/v1/awards/{jackpot}/review",
        {
            "camera": "c",
            "from": "2026-01-01T10:00:00Z",
            "to": "2026-01-01T10:05:00Z",
            "verdict": "confirmed",
        },
        content_type="application/json",
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    assert not SurveillanceReview.objects.exists()
    assert not AuditEvent.objects.filter(kind="award.reviewed").exists()
    # Writing the review straight to the database is refused by its trigger.
    with pytest.raises(IntegrityError), transaction.atomic():
        SurveillanceReview.objects.create(
            award_id=jackpot,
            reviewer=root,
            reviewed_at=Award.objects.get(pk=jackpot).created_at,
            camera="c",
            footage_from=Award.objects.get(pk=jackpot).created_at.replace(minute=0),
            footage_to=Award.objects.get(pk=jackpot).created_at.replace(minute=59),
            verdict="confirmed",
        )
    # A real officer's review, and another supervisor's approval, move it on.
    officer = person("sam", "surveillance")
    _review(jackpot, officer)
    other = person("bob", "supervisor")
    assert award_approve(award_id=jackpot, user=other).status == "approved"


def test_the_reviewer_cannot_then_verify_or_approve(root, jackpot):
    _review(jackpot, root)
    with pytest.raises(Exception) as refused:
        award_verify(award_id=jackpot, user=root, note="ok")
    assert getattr(refused.value, "code", None) == "four_eyes"
    award_verify(award_id=jackpot, user=person("ana", "supervisor"), note="ok")
    with pytest.raises(Exception) as refused:
        award_approve(award_id=jackpot, user=root)
    assert getattr(refused.value, "code", None) == "four_eyes"
    assert Award.objects.get(pk=jackpot).status == "verified"
    # Nor behind the service: the award row refuses a reviewer as its approver.
    with pytest.raises(IntegrityError), transaction.atomic():
        Award.objects.filter(pk=jackpot).update(approved_by=root, status="approved")


def test_a_referrer_cannot_clear_their_own_referral(root, jackpot):
    _review(jackpot, root, Verdict.REFERRED, "chip movement after the river")
    with pytest.raises(Exception) as refused:
        award_referral_decide(
            award_id=jackpot, user=root, outcome=ReferralOutcome.CLEAR, reason="fine"
        )
    assert getattr(refused.value, "code", None) == "four_eyes"
    assert not ReferralDecision.objects.exists()
    # Another officer's confirmation does not end a referral either: only a manager does.
    with pytest.raises(Exception) as refused:
        _review(jackpot, person("sue", "surveillance"))
    assert getattr(refused.value, "code", None) == "surveillance_referred"
    award_verify(award_id=jackpot, user=person("ana", "supervisor"), note="ok")
    with pytest.raises(Exception) as refused:
        award_approve(award_id=jackpot, user=person("bob", "supervisor"))
    assert getattr(refused.value, "code", None) == "surveillance_referred"


def test_a_decision_forged_in_the_database_is_reported(root, jackpot):
    _, review = _review(jackpot, root, Verdict.REFERRED, "chip movement")
    assert verify()[0] == 0
    # The insider writes a "clear" decision of their own referral, around the triggers.
    superuser_sql(
        "INSERT INTO jackpot_referraldecision (review_id, decided_by_id, decided_at, outcome,"
        " reason) VALUES (%s, %s, now(), 'clear', 'fine')",
        [review.pk, person("meg", "admin").pk],
    )
    decision = ReferralDecision.objects.get()
    status, problems = verify()
    assert status != 0
    assert any(f"referral decision {decision.pk}: no event recorded it" in p for p in problems)


def test_a_review_edited_after_a_checkpoint_is_reported_by_the_routine_run(root, jackpot):
    """The start-up gate and the scheduled reconciliation walk from the newest checkpoint: the
    reviews it carries are compared again with their rows."""
    _, review = _review(jackpot, person("sam", "surveillance"), Verdict.REFERRED, "chips moved")
    report = verify_routine()
    assert report.ok, report.problems
    keep_checkpoint(report)
    assert verify_routine().ok
    superuser_sql(
        "UPDATE jackpot_surveillancereview SET verdict = 'confirmed', reason = '' WHERE id = %s",
        [review.pk],
    )
    for run in (verify_routine, verify_full):
        found = run()
        assert not found.ok
        assert any(f"review {review.pk}: the row's verdict, reason" in p for p in found.problems)
