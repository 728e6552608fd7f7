"""Surveillance before payment: what an award's video reviews allow, read under its row lock.

A surveillance officer (role `surveillance`) reviews the footage of a win while the award is
`pending` or `verified` (`jackpot.awards.workflow.award_review`); the latest review decides. A
`referred` verdict waits for a manager (the `manager` role, who took no step of the award:
`award_referral_decide`), who clears it or starts the award's void. This module holds the rules
the award's steps check, each
with the award row locked by the caller (`jackpot.money.locks.award_row`), so no review can slip in
between a check and the step's commit:

- approve: refused while the latest review is a referral not cleared (409
  `surveillance_referred`); for a jackpot of a pool with `surveillance_required`, refused until
  the latest review is `confirmed` or a cleared referral (409 `surveillance_review_required`);
- pay: refused while the latest review is a referral not cleared (409 `surveillance_referred`);
- four eyes: a reviewer of an award never verifies or approves it, its verifier or approver never
  reviews it (403 `four_eyes`; the database's triggers of migration jackpot 0018 too), and no
  one who acted on the award decides its referral: not its reviewers (the triggers too), nor
  whoever verified it, requested or cancelled its void or took any other step the award's rows
  or its events on the journal name, under any name they had (`acted_on`);
- a new review is refused while the latest is a referral not cleared: only a manager ends it.

Reads only; the writes (the review, the decision and their audit events) are
`jackpot.awards.workflow`'.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from core.errors import Conflict, Forbidden
from jackpot.models import (
    AuditEvent,
    Award,
    AwardKind,
    Pool,
    ReferralDecision,
    ReferralOutcome,
    SurveillanceReview,
    Verdict,
)
from jackpot.money.ledger import ADMIN_CHAIN, pool_chain

ROLE = "surveillance"


@dataclass(frozen=True, slots=True)
class Reviewed:
    """An award's latest review and, for a referral, the manager's decision (None: undecided)."""

    review: SurveillanceReview | None
    decision: ReferralDecision | None

    @property
    def confirmed(self) -> bool:
        """The footage was found fair, or a manager cleared its referral."""
        if self.review is None:
            return False
        if self.review.verdict == Verdict.CONFIRMED:
            return True
        return self.decision is not None and self.decision.outcome == ReferralOutcome.CLEAR

    @property
    def blocked(self) -> bool:
        """The latest review is a referral no manager cleared (undecided, or decided void)."""
        return (
            self.review is not None
            and self.review.verdict == Verdict.REFERRED
            and (not self.confirmed)
        )


def latest_review(award_id: int) -> Reviewed:
    review = (
        SurveillanceReview.objects.select_related("reviewer")
        .filter(award_id=award_id)
        .order_by("-pk")
        .first()
    )
    decision = None
    if review is not None and review.verdict == Verdict.REFERRED:
        decision = (
            ReferralDecision.objects.select_related("decided_by").filter(review=review).first()
        )
    return Reviewed(review, decision)


def required(award: Award, pool: Pool) -> bool:
    """Whether `award` needs a confirmed review before its approval: a jackpot of a pool that
    asks for one."""
    return award.kind == AwardKind.ROYAL_FLUSH and pool.surveillance_required


def _reviewers(award: Award) -> set[int]:
    return set(
        SurveillanceReview.objects.filter(award_id=award.pk).values_list("reviewer_id", flat=True)
    )


def _refuse_referred(award: Award, reviewed: Reviewed, step: str) -> None:
    if reviewed.blocked:
        assert reviewed.review is not None
        ended = reviewed.decision is not None  # decided void: the award only goes to its void
        raise Conflict(
            "surveillance_referred",
            f"surveillance referred award {award.pk} (review {reviewed.review.pk}: "
            f"{reviewed.review.reason}); "
            + (
                "a manager decided to void it: it cannot be " + step
                if ended
                else f"it cannot be {step} until a manager decides "
                f"(POST /api/v1/awards/{award.pk}/referral)"
            ),
            param="award",
        )


def check_verifier(award: Award, user: User) -> None:
    """Who verifies `award` has not reviewed it."""
    if user.pk in _reviewers(award):
        raise Forbidden(
            "four_eyes",
            "the surveillance officer who reviewed an award cannot also verify it",
            param="award",
        )


def check_approval(award: Award, user: User) -> None:
    """Whether `award` (locked) may be approved by `user`, as far as surveillance goes."""
    reviewed = latest_review(award.pk)
    _refuse_referred(award, reviewed, "approved")
    if user.pk in _reviewers(award):
        raise Forbidden(
            "four_eyes",
            "the surveillance officer who reviewed an award cannot also approve it",
            param="award",
        )
    pool = Pool.objects.only("surveillance_required").get(pk=award.pool_id)
    if required(award, pool) and not reviewed.confirmed:
        raise Conflict(
            "surveillance_review_required",
            f"pool {award.pool_id} requires surveillance to confirm a jackpot on video before "
            f"its approval, and award {award.pk} has no confirmed review: a surveillance "
            f"officer records one (POST /api/v1/awards/{award.pk}/review)",
            param="award",
        )


def check_payment(award: Award) -> None:
    """Whether `award` (locked) may be paid, as far as surveillance goes."""
    _refuse_referred(award, latest_review(award.pk), "paid")


def check_review(award: Award, user: User) -> None:
    """Whether `user` may record a new review of `award` (locked)."""
    if user.pk in (award.verified_by_id, award.approved_by_id):
        raise Forbidden(
            "four_eyes",
            "the supervisor who verified or approved an award cannot also review it",
            param="award",
        )
    reviewed = latest_review(award.pk)
    if reviewed.blocked:
        assert reviewed.review is not None
        raise Conflict(
            "surveillance_referred",
            f"award {award.pk}'s latest review ({reviewed.review.pk}) is a referral no manager "
            "cleared: a manager decides it before another review "
            f"(POST /api/v1/awards/{award.pk}/referral)",
            param="award",
        )


def check_referral(award: Award, user: User) -> SurveillanceReview:
    """The undecided referral of `award` (locked) that `user` may decide."""
    reviewed = latest_review(award.pk)
    review = reviewed.review
    if review is None or review.verdict != Verdict.REFERRED or reviewed.decision is not None:
        raise Conflict(
            "referral_not_open",
            f"award {award.pk} has no referral awaiting a manager's decision",
            param="award",
        )
    if review.reviewer_id == user.pk:
        raise Forbidden(
            "four_eyes",
            "the surveillance officer who referred an award cannot also decide the referral",
            param="award",
        )
    if acted_on(award, user):
        raise Forbidden(
            "four_eyes",
            f"{user.get_username()} took a step of award {award.pk} (verified, reviewed, "
            "requested or cancelled its void...): another manager decides its referral",
            param="award",
        )
    return review


def _names(user: User) -> set[str]:
    """`user`'s name and every name they had: one admin renames an account alone
    (`jackpot.staff.accounts.staff_update`, a `staff.changed` event listing `username` among its
    fields), so a step taken under an earlier name is still theirs. A name since given to someone
    else counts too: that only refuses more."""
    renames = AuditEvent.objects.filter(
        chain=ADMIN_CHAIN, kind="staff.changed", payload__fields__contains=["username"]
    ).values_list("payload__before__username", "payload__after__username")
    names, pairs = {user.get_username()}, [(str(old), str(new)) for old, new in renames]
    grew = True
    while grew:
        grew = False
        for old, new in pairs:
            if new in names and old not in names:
                names.add(old)
                grew = True
    return names


def acted_on(award: Award, user: User) -> bool:
    """Whether `user` took any step of `award`: as its rows say (who verified, approved, paid,
    voided it or requested its void; its reviewers and referrals' deciders), or as the journal
    does (each event of the award: a void requested then cancelled leaves no name on the row).
    The events are read from the award's creation on, on its pool's chain."""
    people = {
        award.verified_by_id,
        award.approved_by_id,
        award.paid_by_id,
        award.voided_by_id,
        award.void_requested_by_id,
        *_reviewers(award),
        *ReferralDecision.objects.filter(review__award_id=award.pk).values_list(
            "decided_by_id", flat=True
        ),
    }
    if user.pk in people:
        return True
    actors = {f"user:{name}" for name in _names(user)}
    return AuditEvent.objects.filter(
        chain=pool_chain(award.pool_id),
        occurred_at__gte=award.created_at,
        payload__award=award.pk,
        actor__in=actors,
    ).exists()
