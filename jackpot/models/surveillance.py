"""Surveillance's video reviews of awards, and a manager's decision on a referral.

A surveillance officer watches the footage of a win and records what they saw: the camera, the
range of footage reviewed (UTC, `footage_from` before `footage_to`), the verdict (`confirmed`, or
`referred` with a reason: something is wrong) and an optional note. An award may be reviewed
several times (new footage, a second camera): the latest review decides. A referral waits for a
manager (the `manager` role, never its reviewer) who decides once: `clear` (the award goes on to
approval) or `void` (the void path starts).

Invariants, held by the database:
- both tables are append-only (triggers refuse UPDATE and DELETE, as for the journal): a review
  is corrected by a newer review, never edited;
- a referral needs a reason (CHECK `review_referral_reason`), the footage range is not empty
  (CHECK `review_footage_range`);
- four eyes: the reviewer of an award is never its verifier or approver, and the manager who
  decides a referral is never the referral's reviewer (triggers of migration jackpot 0018, on the
  review, the decision and the award rows);
- a referral is decided at most once (unique `review`).
Every row is also an audit event on its pool's chain (`award.reviewed`, `award.referred`,
`award.referral_decided`), which the journal's verification compares with the rows
(`jackpot.audit.surveillance_records`).
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class Verdict(models.TextChoices):
    CONFIRMED = "confirmed", "Confirmed: the footage shows a fair win"
    REFERRED = "referred", "Referred to a manager"


class ReferralOutcome(models.TextChoices):
    CLEAR = "clear", "Cleared: the award goes on to approval"
    VOID = "void", "Void: the award's void is started"


class SurveillanceReview(models.Model):
    award = models.ForeignKey("jackpot.Award", on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    reviewed_at = models.DateTimeField()
    camera = models.CharField(max_length=80)
    footage_from = models.DateTimeField()
    footage_to = models.DateTimeField()
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    reason = models.CharField(max_length=500, blank=True, default="")
    note = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(footage_from__lt=F("footage_to")), name="review_footage_range"
            ),
            models.CheckConstraint(
                condition=~Q(verdict="referred") | ~Q(reason=""), name="review_referral_reason"
            ),
        ]
        indexes = [models.Index(fields=["award", "id"])]

    def __str__(self) -> str:
        return f"review {self.pk} of award {self.award_id}: {self.verdict}"


class ReferralDecision(models.Model):
    review = models.OneToOneField(
        SurveillanceReview, on_delete=models.PROTECT, related_name="decision"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField()
    outcome = models.CharField(max_length=5, choices=ReferralOutcome.choices)
    reason = models.CharField(max_length=500)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="referral_decision_reason"),
        ]

    def __str__(self) -> str:
        return f"referral {self.review_id}: {self.outcome}"
