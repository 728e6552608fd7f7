"""The way of an award to payment: verify, approve (a second person), pay; or void.

Each step is one transaction: the award row locked, the step checked against its status, its
audit event on the pool's chain with the transfers `jackpot.money.movements` decides.

Invariants:
- the approver is never the verifier, a jackpot's void confirmer never its requester (403
  `four_eyes`, and database constraints); a money step is refused to an account that configures
  (403 `separation_of_duties`);
- an award that follows another (envy, its round's jackpot) is approved or paid only after it,
  and voided with it;
- nothing is claimable while the pool is suspended (409 `pool_suspended`);
- only `pending` and `verified` awards can be voided; nothing is edited in place but the status
  and who/when fields. Locks: the award row, the pool row, the pool's chain head.

The money of each step, surveillance, and a jackpot's two-person void: docs/accounting.md, "The
modules, in detail".
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot.approvals.presence import Presence, presence_refused
from jackpot.awards import surveillance, winners
from jackpot.bodies.awards import WinnerIdentityBody
from jackpot.bodies.common import MAX_TEXT
from jackpot.models import (
    Award,
    AwardKind,
    AwardStatus,
    PaymentMethod,
    ReferralDecision,
    ReferralOutcome,
    SurveillanceReview,
    Verdict,
)
from jackpot.money import ledger, locks, meter, movements
from jackpot.money.accounting import Posting
from jackpot.money.meter import pool_meter
from jackpot.sign import display
from jackpot.staff import duties


def _text(value: object, *, param: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise ApiError(
            "invalid_text",
            f"{param} must be a non-empty text of at most {MAX_TEXT} characters",
            param=param,
        )
    return value.strip()


Change = Callable[[Award, datetime], dict[str, object]]


@locks.retried
def _take_step(
    award_id: int,
    user: User,
    *,
    allowed: tuple[AwardStatus, ...],
    to: AwardStatus | None,
    payload: dict[str, object],
    changes: Change,
    kind: str | None = None,
    check: Callable[[Award], None] = lambda award: None,
    move: Callable[[Award, datetime], tuple[tuple[Posting, ...], dict[str, object]]] = (
        lambda award, now: ((), {})
    ),
    needs_active: str | None = None,
    decides_money: bool = True,
) -> Award:
    """Move one award from one of `allowed` to `to` (None: it keeps its status), as the audit
    event `kind` (default `award.<to>`): `check` may refuse; `move` gives the money movement
    (`jackpot.money.movements`) and what the event records of it; `changes` the award's new fields;
    `needs_active` (what the step does) refuses it while the pool is suspended or stopped.
    A step that `decides_money` (all but surveillance's review) is refused to an account that
    configures (403 `separation_of_duties`, `jackpot.staff.duties`)."""
    with transaction.atomic():
        if decides_money:
            duties.refuse_configurer(user, doing=f"act on award {award_id}")
        award = locks.award_row(award_id)
        if award is None:
            raise NotFound("award_not_found", f"no award {award_id}", param="award")
        if award.status not in allowed:
            raise Conflict(
                "award_wrong_status",
                f"award {award_id} is {award.status}; this step needs it {' or '.join(allowed)}",
                param="award",
            )
        if to in (AwardStatus.APPROVED, AwardStatus.PAID):
            _follows_approved(award)
        check(award)
        now = timezone.now()
        status = to or AwardStatus(award.status)
        # Voided with it: its followers' rows, after its own, before the pool's
        # (jackpot.money.locks).
        followers = locks.follower_rows(award) if status == AwardStatus.VOID else []
        meter.bump_award_version(pool_id=award.pool_id)  # the pool row lock: its status holds
        if needs_active is not None:
            movements.refuse_unless_active(award.pool_id, param="award", doing=needs_active)
        postings, moved = move(award, now)
        display.awards_changed(award.pool_id)
        ledger.record(
            chain=ledger.pool_chain(award.pool_id),
            kind=kind or f"award.{status}",
            actor=f"user:{user.get_username()}",
            pool_id=award.pool_id,
            occurred_at=now,
            postings=postings,
            payload={
                "award": award.pk,
                "round": award.round_id,
                "seat": award.seat,
                "kind": award.kind,
                "amount_cents": award.amount_cents,
                "from": award.status,
                "to": status,
                **payload,
                **moved,
            },
        )
        update = {"status": status, **changes(award, now)}
        for field, value in update.items():
            setattr(award, field, value)
        award.save(update_fields=list(update))
        for follower in followers:
            if follower.status in FOLLOWER_VOIDABLE:
                _void_follower(follower, award, user, now)
        return award


def _follows_approved(award: Award) -> None:
    """An award that follows another is approved or paid only once that one is approved (or
    paid): 409 `award_follows_unapproved` otherwise. An approved award never goes back, so its
    status is read without its row's lock."""
    if award.follows_id is None:
        return
    led = Award.objects.filter(pk=award.follows_id).values_list("kind", "status").first()
    if led is not None and led[1] in (AwardStatus.APPROVED, AwardStatus.PAID):
        return
    kind, status = led or ("?", "missing")
    raise Conflict(
        "award_follows_unapproved",
        f"award {award.pk} ({award.kind}) follows award {award.follows_id} ({kind}), which is "
        f"{status}: it is payable only once that one is approved (and is voided with it); "
        "nothing was written",
        param="award",
    )


#: A follower's statuses in which it is voided with the award it follows: any but the final ones.
FOLLOWER_VOIDABLE = (AwardStatus.PENDING, AwardStatus.VERIFIED, AwardStatus.APPROVED)


def _void_follower(follower: Award, led: Award, user: User, now: datetime) -> None:
    """Void `follower` (locked) with `led`, the award it follows, voided by `user` in this
    transaction: its money back to the house, its own `award.void` event."""
    reason = f"voided with the {led.kind} it follows"  # which one: the event's `follows`
    ledger.record(
        chain=ledger.pool_chain(follower.pool_id),
        kind="award.void",
        actor=f"user:{user.get_username()}",
        pool_id=follower.pool_id,
        occurred_at=now,
        postings=movements.void_award(follower, now=now).postings,
        payload={
            "award": follower.pk,
            "round": follower.round_id,
            "seat": follower.seat,
            "kind": follower.kind,
            "amount_cents": follower.amount_cents,
            "from": follower.status,
            "to": AwardStatus.VOID,
            "reason": reason,
            "follows": led.pk,
        },
    )
    follower.status = AwardStatus.VOID
    follower.voided_by, follower.voided_at, follower.void_reason = user, now, reason
    follower.save(update_fields=["status", "voided_by", "voided_at", "void_reason"])


def _no_void_requested(award: Award) -> None:
    if award.void_requested_by_id is not None:
        raise Conflict(
            "void_requested",
            f"a void of award {award.pk} is requested: a second supervisor confirms it "
            f"(POST /api/v1/awards/{award.pk}/void/confirm) or it is cancelled "
            f"(/void/cancel) before anything else",
            param="award",
        )


def _void_requested(award: Award) -> None:
    if award.void_requested_by_id is None:
        raise Conflict(
            "void_not_requested",
            f"no void of award {award.pk} is requested: a supervisor requests it first "
            f"(POST /api/v1/awards/{award.pk}/void with a reason)",
            param="award",
        )


def _both(first: Callable[[Award], None], then: Callable[[Award], None]) -> Callable[[Award], None]:
    """Two checks of a step, in order."""

    def check(award: Award) -> None:
        first(award)
        then(award)

    return check


def _who(user_id: int | None) -> str | None:
    found = User.objects.filter(pk=user_id).first() if user_id is not None else None
    return None if found is None else found.get_username()


def award_verify(*, award_id: int, user: User, note: object) -> Award:
    """A supervisor checked the cards and the video: the award waits for a second person."""
    text = _text(note, param="note")
    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.PENDING,),
        to=AwardStatus.VERIFIED,
        payload={"note": text},
        check=_both(_no_void_requested, lambda award: surveillance.check_verifier(award, user)),
        changes=lambda award, now: {
            "verified_by": user,
            "verified_at": now,
            "verification_note": text,
        },
    )


def award_approve(
    *, award_id: int, user: User, note: str | None = None, presence: Presence | None = None
) -> Award:
    """A second supervisor approves payment, with an optional note: the award becomes payable to
    the player. The approver shows a fresh code (`presence`, where the second factor is on)."""
    presence_refused(user, presence)
    text = "" if note is None else _text(note, param="note")

    def four_eyes(award: Award) -> None:
        _no_void_requested(award)
        if award.verified_by_id == user.pk:
            raise Forbidden(
                "four_eyes",
                "the supervisor who verified an award cannot also approve it",
                param="award",
            )
        surveillance.check_approval(award, user)

    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.VERIFIED,),
        to=AwardStatus.APPROVED,
        payload={"note": text} if text else {},
        check=four_eyes,
        needs_active=f"no award of it is approved (award {award_id})",
        move=lambda award, now: (movements.approve_award(award), {}),
        changes=lambda award, now: {"approved_by": user, "approved_at": now, "approval_note": text},
    )


def award_pay(
    *,
    award_id: int,
    user: User,
    method: PaymentMethod,
    reference: str | None = None,
    note: str | None = None,
    winner: WinnerIdentityBody | None = None,
) -> Award:
    """The player has been paid by `user` (the cashier), by `method` with its `reference` (a
    cheque's or transfer's number: required for those, optional for cash) and an optional `note`.
    At or above the identification threshold the winner's identity is required (`winner`); given,
    it is stored encrypted and the event records its digest, never the identity
    (`jackpot.awards.winners`)."""
    ref = "" if reference is None else reference.strip()
    if method != PaymentMethod.CASH and not ref:
        raise ApiError(
            "invalid_request",
            f"reference is required for a payment by {method.value}: the cheque's or "
            "transfer's number",
            param="reference",
        )
    text = "" if note is None else _text(note, param="note")

    def payable(award: Award) -> None:
        surveillance.check_payment(award)
        winners.required(award, winner)

    def paid(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
        identified: dict[str, object] = {"winner_identified": False}
        if winner is not None:
            identified = winners.record(award, winner, user=user, now=now)
        return movements.pay_award(award), identified

    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.APPROVED,),
        to=AwardStatus.PAID,
        payload={"method": method.value, "reference": ref, "note": text},
        check=payable,
        needs_active=f"no award of it is paid (award {award_id})",
        move=paid,
        changes=lambda award, now: {
            "paid_by": user,
            "paid_at": now,
            "payment_method": method.value,
            "payment_reference": ref,
            "payment_note": text,
        },
    )


def _back(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
    """The money of a void (`jackpot.money.movements.void_award`) and what its event records
    of it."""
    voided = movements.void_award(award, now=now)
    if voided.meter_version is None:
        return voided.postings, {}
    # The jackpot is back on the meter: the signs get it after commit.
    display.meter_changed(award.pool_id, pool_meter(pool_id=award.pool_id))
    return voided.postings, {
        "meter_after_cents": voided.meter_after_cents,
        "meter_version": voided.meter_version,
        "reset_returned": {
            "reserve_cents": voided.reset_reserve_cents,
            "house_cents": voided.reset_house_cents,
        },
        "requested_by": _who(award.void_requested_by_id),
        "requested_at": None
        if award.void_requested_at is None
        else award.void_requested_at.isoformat(),
    }


VOIDABLE = (AwardStatus.PENDING, AwardStatus.VERIFIED)


def award_void(*, award_id: int, user: User, reason: object) -> Award:
    """Void an award awaiting payment, or for a jackpot request its void.

    A fixed award or envy is void at once and goes back to the house. A jackpot is only marked
    with the request (who, when, `reason`): its status and its money stay until a second
    supervisor confirms (`award_void_confirm`). Whether a void was filed or done, the caller
    reads from the award's status."""
    text = _text(reason, param="reason")
    # An award's kind never changes, so it can be read before the award is locked.
    kind = Award.objects.filter(pk=award_id).values_list("kind", flat=True).first()
    if kind == AwardKind.ROYAL_FLUSH:
        return _take_step(
            award_id,
            user,
            allowed=VOIDABLE,
            to=None,
            kind="award.void_requested",
            payload={"reason": text},
            check=_no_void_requested,
            changes=lambda award, now: {
                "void_requested_by": user,
                "void_requested_at": now,
                "void_request_reason": text,
            },
        )
    return _take_step(
        award_id,
        user,
        allowed=VOIDABLE,
        to=AwardStatus.VOID,
        payload={"reason": text},
        move=_back,
        changes=lambda award, now: {"voided_by": user, "voided_at": now, "void_reason": text},
    )


def award_void_confirm(*, award_id: int, user: User, presence: Presence | None = None) -> Award:
    """A second supervisor confirms a jackpot's requested void: the award is void, the jackpot
    goes back on the meter and the hit's reset back to the reserve and the house. The second
    supervisor shows a fresh code (`presence`, where the second factor is on)."""
    presence_refused(user, presence)

    def four_eyes(award: Award) -> None:
        _void_requested(award)
        if award.void_requested_by_id == user.pk:
            raise Forbidden(
                "four_eyes",
                "the supervisor who requested a jackpot's void cannot also confirm it",
                param="award",
            )

    return _take_step(
        award_id,
        user,
        allowed=VOIDABLE,
        to=AwardStatus.VOID,
        payload={},
        check=four_eyes,
        move=_back,
        # A voided jackpot goes back on the meter, which stands still while the pool is not
        # active; the void waits for the resumption.
        needs_active=f"no jackpot of it goes back on its meter (award {award_id})",
        changes=lambda award, now: {
            "voided_by": user,
            "voided_at": now,
            "void_reason": award.void_request_reason,
        },
    )


def award_void_cancel(*, award_id: int, user: User, reason: object) -> Award:
    """A supervisor (the requester or another) withdraws a jackpot's requested void, saying why:
    the award goes on its way to payment; nothing moves."""
    text = _text(reason, param="reason")

    def requested(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
        return (), {
            "requested_by": _who(award.void_requested_by_id),
            "request_reason": award.void_request_reason,
        }

    return _take_step(
        award_id,
        user,
        allowed=VOIDABLE,
        to=None,
        kind="award.void_cancelled",
        payload={"reason": text},
        check=_void_requested,
        move=requested,
        changes=lambda award, now: {
            "void_requested_by": None,
            "void_requested_at": None,
            "void_request_reason": "",
        },
    )


#: The statuses in which surveillance reviews an award, and a manager decides a referral.
REVIEWABLE = (AwardStatus.PENDING, AwardStatus.VERIFIED)


def award_review(
    *,
    award_id: int,
    user: User,
    camera: str,
    footage_from: datetime,
    footage_to: datetime,
    verdict: Verdict,
    reason: str | None,
    note: str | None,
) -> tuple[Award, SurveillanceReview]:
    """A surveillance officer records what the footage of `award_id`'s win shows: the review's
    row and its audit event (`award.reviewed`, or `award.referred`), the award unchanged. The
    footage range and a referral's reason are checked (400 naming the field) before anything is
    locked; `reason` is kept only for a referral."""
    camera_text = _text(camera, param="camera")
    footage_from, footage_to = footage_from.astimezone(UTC), footage_to.astimezone(UTC)
    if footage_from >= footage_to:
        raise ApiError("invalid_footage_range", "from must be before to (UTC times)", param="from")
    reason_text = _text(reason, param="reason") if verdict == Verdict.REFERRED else ""
    note_text = "" if note is None else _text(note, param="note")
    made: list[SurveillanceReview] = []

    def record(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
        review = SurveillanceReview.objects.create(
            award=award,
            reviewer=user,
            reviewed_at=now,
            camera=camera_text,
            footage_from=footage_from,
            footage_to=footage_to,
            verdict=verdict,
            reason=reason_text,
            note=note_text,
        )
        made.append(review)
        return (), review_facts(review)

    # The table, for a referral's significant event (jackpot.notifications.significant): the award's
    # own record of its grant, which never changes (a trigger), so it can be read before the award
    # is locked.
    table = Award.objects.filter(pk=award_id).values_list("table_pk", flat=True).first()
    award = _take_step(
        award_id,
        user,
        allowed=REVIEWABLE,
        to=None,
        kind="award.referred" if verdict == Verdict.REFERRED else "award.reviewed",
        payload={"table": table},
        check=_both(_no_void_requested, lambda award: surveillance.check_review(award, user)),
        move=record,
        changes=lambda award, now: {},
        decides_money=False,
    )
    return award, made[-1]


def review_facts(review: SurveillanceReview) -> dict[str, object]:
    """What a review's audit event records of it (`jackpot.audit.surveillance_records` compares the
    row with these): the reviewer and the time are the event's actor and time."""
    return {
        "review": review.pk,
        "camera": review.camera,
        "footage_from": review.footage_from.isoformat(),
        "footage_to": review.footage_to.isoformat(),
        "verdict": str(review.verdict),
        "reason": review.reason,
        "note": review.note,
    }


@locks.retried
def award_referral_decide(
    *,
    award_id: int,
    user: User,
    outcome: ReferralOutcome,
    reason: str,
    presence: Presence | None = None,
) -> Award:
    """A manager (never an account that configures: `jackpot.staff.duties`; never one who took a
    step of the award: `surveillance.acted_on`) decides surveillance's referral of `award_id`:
    `clear` lets it go on to approval; `void` also starts its void in the same transaction
    (`award_void`: a jackpot's void requested, which a second supervisor confirms; a fixed award or
    envy void at once). The manager shows a fresh code (`presence`)."""
    presence_refused(user, presence)
    text = _text(reason, param="reason")
    with transaction.atomic():
        found: list[SurveillanceReview] = []

        def decide(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
            review = found[-1]
            decision = ReferralDecision.objects.create(
                review=review, decided_by=user, decided_at=now, outcome=outcome, reason=text
            )
            return (), {
                "review": review.pk,
                "decision": decision.pk,
                "outcome": str(outcome),
                "reason": text,
            }

        award = _take_step(
            award_id,
            user,
            allowed=REVIEWABLE,
            to=None,
            kind="award.referral_decided",
            payload={},
            check=_both(
                _no_void_requested,
                lambda award: found.append(surveillance.check_referral(award, user)),
            ),
            move=decide,
            changes=lambda award, now: {},
        )
        if outcome == ReferralOutcome.VOID:
            award = award_void(award_id=award_id, user=user, reason=text)
        return award
