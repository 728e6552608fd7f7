"""Awards, parameter changes, export jobs and webhook deliveries as the API shows them
(`jackpot.bodies.awards.AwardBody`, `changes.ParameterChangeBody`, `exports.ExportJobBody`,
`notifications.Notification`): rendering only, no reads and no writes. An award is shown from
its own columns: what it shows of its round was recorded at its grant
(`jackpot.money.movements.Dealt`), so nothing here follows `Award.round` to the tables' rows.

Kept apart from `jackpot.awards.workflow` (the award's way to payment) so that the reads in
`jackpot.selectors` can render awards without importing the module that writes them.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from jackpot.bodies.awards import AwardBody, ReferralDecided, Review
from jackpot.bodies.changes import ParameterChangeBody
from jackpot.bodies.corrections import CorrectionBody
from jackpot.bodies.exports import ExportJobBody, ExportRequest
from jackpot.bodies.journal import BrokenAt, VerificationRun
from jackpot.bodies.notifications import Notification
from jackpot.models import (
    Award,
    AwardKind,
    AwardStatus,
    ChangeStatus,
    DeliveryStatus,
    ExportJob,
    ExportStatus,
    ParameterChange,
    PaymentMethod,
    ReferralOutcome,
    SurveillanceReview,
    Verdict,
    Verification,
    VerificationStatus,
    VerificationTrigger,
    WebhookDelivery,
    WinnerIdentity,
)


def _who(user: User | None) -> str | None:
    return None if user is None else user.get_username()


def review_body(review: SurveillanceReview) -> Review:
    """A surveillance review as the API shows it, with a referral's decision."""
    decision = getattr(review, "decision", None)  # the reverse one-to-one: absent without one
    return Review.model_construct(
        id=review.pk,
        reviewer=review.reviewer.get_username(),
        reviewed_at=review.reviewed_at,
        camera=review.camera,
        from_=review.footage_from,
        to=review.footage_to,
        verdict=Verdict(review.verdict),
        reason=review.reason,
        note=review.note,
        decision=None
        if decision is None
        else ReferralDecided.model_construct(
            outcome=ReferralOutcome(decision.outcome),
            decided_by=decision.decided_by.get_username(),
            decided_at=decision.decided_at,
            reason=decision.reason,
        ),
    )


#: What `award_body` reads of an award beyond its row, for a list to prefetch
#: (`prefetch_related(*AWARD_PREFETCH)` with `select_related(*AWARD_RELATED)`).
AWARD_RELATED = (
    "pool",
    "follows",
    "verified_by",
    "approved_by",
    "paid_by",
    "voided_by",
    "void_requested_by",
    "winner_identity",
)
AWARD_PREFETCH = ("reviews__reviewer", "reviews__decision__decided_by")


def award_body(award: Award) -> AwardBody:
    """An award as the API shows it (select_related `AWARD_RELATED` and prefetch
    `AWARD_PREFETCH` when listing many): with surveillance's latest review, and whether its
    winner is identified, never who. What it shows of its round (table, game, round id, cards,
    winning five) is the award's own record of its grant, never the tables' rows."""
    reviews = list(award.reviews.all())  # prefetched in lists; few (one a jackpot, mostly)
    latest = max(reviews, key=lambda review: review.pk) if reviews else None
    return AwardBody.model_construct(
        id=award.pk,
        pool=award.pool_id,
        round=award.round_id,
        round_id=award.round_name,
        table=award.table_pk,
        table_name=award.table_name,
        game=award.game,
        seat=award.seat,
        cards=list(award.hole_cards),
        board=list(award.board),
        winning_five=list(award.winning_five),
        kind=AwardKind(award.kind),  # the database gives the value, the model its enum
        amount_cents=award.amount_cents,
        corrected_cents=award.corrected_cents,
        due_cents=award.due_cents,
        status=AwardStatus(award.status),
        sequence=award.number,
        created_at=award.created_at,
        follows=award.follows_id,
        waits_on_follows=_waits(award),
        verified_by=_who(award.verified_by),
        verified_at=award.verified_at,
        verification_note=award.verification_note,
        approved_by=_who(award.approved_by),
        approved_at=award.approved_at,
        paid_by=_who(award.paid_by),
        paid_at=award.paid_at,
        voided_by=_who(award.voided_by),
        voided_at=award.voided_at,
        void_reason=award.void_reason,
        void_requested_by=_who(award.void_requested_by),
        void_requested_at=award.void_requested_at,
        void_request_reason=award.void_request_reason,
        approval_note=award.approval_note,
        payment_method=PaymentMethod(award.payment_method) if award.payment_method else None,
        payment_reference=award.payment_reference,
        payment_note=award.payment_note,
        winner_identified=_identified(award),
        surveillance_required=award.kind == AwardKind.ROYAL_FLUSH
        and award.pool.surveillance_required,
        review=None if latest is None else review_body(latest),
    )


def _waits(award: Award) -> bool:
    """Whether `award` waits for the award it follows to be approved (select_related `follows`
    when listing many)."""
    led = award.follows
    if led is None or award.status in (AwardStatus.PAID, AwardStatus.VOID):
        return False
    return led.status not in (AwardStatus.APPROVED.value, AwardStatus.PAID.value)


def _identified(award: Award) -> bool:
    """Whether the award's winner is identified (select_related `winner_identity` when listing
    many); never the identity."""
    try:
        return award.winner_identity is not None
    except WinnerIdentity.DoesNotExist:
        return False


def change_body(change: ParameterChange) -> ParameterChangeBody:
    """A parameter change as the API shows it (select_related its two users when listing)."""
    return ParameterChangeBody.model_construct(
        id=change.pk,
        kind=change.kind,
        pool=change.pool_id,
        status=ChangeStatus(change.status),
        changes=change.changes,
        before=change.before,
        reason=change.reason,
        proposed_by=change.proposed_by.get_username(),
        proposed_at=change.proposed_at,
        decided_by=_who(change.decided_by),
        decided_at=change.decided_at,
        decision_note=change.decision_note,
    )


def correction_body(change: ParameterChange) -> CorrectionBody:
    """A correction (a change of kind `pool.correction`) as the API shows it (select_related
    its two users when listing)."""
    asked = change.changes
    return CorrectionBody.model_construct(
        id=change.pk,
        pool=change.pool_id,
        status=ChangeStatus(change.status),
        target=asked["target"],
        award=asked.get("award"),
        amount_cents=asked["amount_cents"],
        reason=change.reason,
        reference=asked["reference"],
        evidence=asked["evidence"],
        before=change.before,
        proposed_by=change.proposed_by.get_username(),
        proposed_at=change.proposed_at,
        decided_by=_who(change.decided_by),
        decided_at=change.decided_at,
        decision_note=change.decision_note,
    )


def export_job_body(job: ExportJob, *, url: str, download_url: str) -> ExportJobBody:
    """An export job as the API shows it (`download_url` only once it is done);
    select_related the user who asked."""
    done = job.status == ExportStatus.DONE
    return ExportJobBody.model_construct(
        id=job.pk,
        status=ExportStatus(job.status),
        filters=ExportRequest.model_construct(**job.filters()),
        requested_by=job.requested_by.get_username(),
        rows_written=job.rows_written,
        rows_total=job.rows_total,
        size_bytes=job.size_bytes,
        sha256=job.sha256 or None,
        error=job.error or None,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        expires_at=job.expires_at,
        url=url,
        download_url=download_url if done else None,
    )


def verification_body(
    run: Verification, *, url: str, heartbeat: dict[str, Any] | None = None
) -> VerificationRun:
    """A verification run as the API shows it; `heartbeat` (a running job's last one) gives its
    progress. select_related the user who asked."""
    running = run.status == VerificationStatus.RUNNING and heartbeat is not None
    return VerificationRun.model_construct(
        id=run.pk,
        full=run.full,
        trigger=VerificationTrigger(run.trigger),
        status=VerificationStatus(run.status),
        requested_by=run.requested_by.get_username() if run.requested_by else None,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        events_total=run.events_total,
        events_checked=int(heartbeat["events"]) if heartbeat and running else run.events_checked,
        transfers_checked=int(heartbeat["transfers"])
        if heartbeat and running
        else run.transfers_checked,
        chains=run.chains,
        started_from=run.started_from_id,
        checkpoint=run.checkpoint_id,
        ok=run.ok,
        first_broken=BrokenAt.model_construct(chain=run.broken_chain, sequence=run.broken_sequence)
        if run.broken_chain
        else None,
        problem_count=run.problem_count,
        problems=run.problems[:20],
        failure=run.error or None,
        url=url,
    )


def notification_body(delivery: WebhookDelivery) -> Notification:
    """A webhook delivery as the auditors see it; select_related its message."""
    pending = delivery.status == DeliveryStatus.PENDING
    award = delivery.message.payload.get("award")
    return Notification.model_construct(
        delivery_id=str(delivery.delivery_id),
        event_id=delivery.message.key,
        topic=delivery.message.topic,
        award=award if isinstance(award, int) else None,
        url=delivery.url,
        status=DeliveryStatus(delivery.status),
        attempts=delivery.attempts,
        last_status=delivery.last_status,
        last_error=delivery.last_error or None,
        created_at=delivery.created_at,
        last_attempt_at=delivery.last_attempt_at,
        next_attempt_at=delivery.next_attempt_at if pending else None,
        delivered_at=delivery.delivered_at,
    )
