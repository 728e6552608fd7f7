"""The way of an award to payment: verify, approve (a second person), pay; or void.

Each step is one transaction that locks the award row, checks the step is allowed from the
award's status, writes its audit event on the pool's chain with the transfers
`jackpot.movements` decides, and updates the award. Money moves as TigerBeetle's pending
transfers do:

    approve   awards_pending -> payable        (award_approved)
    pay       payable        -> paid           (award_paid)
    void      awards_pending -> meter          (award_void_meter: a jackpot goes back on the meter)
              awards_pending -> house          (award_void_house: a fixed award or envy)

Invariants: the approver is never the verifier (checked here and by a database constraint);
only `pending` and `verified` awards can be voided; nothing is deleted or edited in place but
the award's status and who/when fields, whose history is the audit chain. Locks: the award row,
the pool row, the pool's chain head, in the order `jackpot.locks` states.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from config.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot import display, ledger, locks, meter, movements
from jackpot.accounting import Posting
from jackpot.bodies import MAX_TEXT
from jackpot.models import Award, AwardStatus


def _text(value: object, *, param: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise ApiError(
            "invalid_text",
            f"{param} must be a non-empty text of at most {MAX_TEXT} characters",
            param=param,
        )
    return value.strip()


@locks.retried
def _take_step(
    award_id: int,
    user: User,
    *,
    allowed: tuple[AwardStatus, ...],
    to: AwardStatus,
    payload: dict[str, object],
    changes: Callable[[datetime], dict[str, object]],
    check: Callable[[Award], None] = lambda award: None,
    move: Callable[[Award, datetime], tuple[tuple[Posting, ...], dict[str, object]]] = (
        lambda award, now: ((), {})
    ),
) -> Award:
    """Move one award from one of `allowed` to `to`: `check` may refuse; `move` gives the money
    movement (`jackpot.movements`) and what the event records of it."""
    with transaction.atomic():
        award = locks.award_row(award_id)
        if award is None:
            raise NotFound("award_not_found", f"no award {award_id}", param="award")
        if award.status not in allowed:
            raise Conflict(
                "award_wrong_status",
                f"award {award_id} is {award.status}; this step needs it {' or '.join(allowed)}",
                param="award",
            )
        check(award)
        now = timezone.now()
        postings, moved = move(award, now)
        meter.bump_award_version(pool_id=award.pool_id)
        display.awards_changed(award.pool_id)
        ledger.record(
            chain=ledger.pool_chain(award.pool_id),
            kind=f"award.{to}",
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
                "to": to,
                **payload,
                **moved,
            },
        )
        update = {"status": to, **changes(now)}
        for field, value in update.items():
            setattr(award, field, value)
        award.save(update_fields=list(update))
        return award


def award_verify(*, award_id: int, user: User, note: object) -> Award:
    """A supervisor checked the cards and the video: the award waits for a second person."""
    text = _text(note, param="note")
    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.PENDING,),
        to=AwardStatus.VERIFIED,
        payload={"note": text},
        changes=lambda now: {"verified_by": user, "verified_at": now, "verification_note": text},
    )


def award_approve(*, award_id: int, user: User) -> Award:
    """A second supervisor approves payment: the award becomes payable to the player."""

    def four_eyes(award: Award) -> None:
        if award.verified_by_id == user.pk:
            raise Forbidden(
                "four_eyes",
                "the supervisor who verified an award cannot also approve it",
                param="award",
            )

    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.VERIFIED,),
        to=AwardStatus.APPROVED,
        payload={},
        check=four_eyes,
        move=lambda award, now: (movements.approve_award(award), {}),
        changes=lambda now: {"approved_by": user, "approved_at": now},
    )


def award_pay(*, award_id: int, user: User) -> Award:
    """The player has been paid."""
    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.APPROVED,),
        to=AwardStatus.PAID,
        payload={},
        move=lambda award, now: (movements.pay_award(award), {}),
        changes=lambda now: {"paid_by": user, "paid_at": now},
    )


def award_void(*, award_id: int, user: User, reason: object) -> Award:
    """Void an award awaiting payment. A jackpot goes back on the meter, a fixed award to the
    house; both by new transfers."""
    text = _text(reason, param="reason")

    def back(award: Award, now: datetime) -> tuple[tuple[Posting, ...], dict[str, object]]:
        voided = movements.void_award(award, now=now)
        if voided.meter_version is None:
            return voided.postings, {}
        return voided.postings, {
            "meter_after_cents": voided.meter_after_cents,
            "meter_version": voided.meter_version,
        }

    return _take_step(
        award_id,
        user,
        allowed=(AwardStatus.PENDING, AwardStatus.VERIFIED),
        to=AwardStatus.VOID,
        payload={"reason": text},
        move=back,
        changes=lambda now: {"voided_by": user, "voided_at": now, "void_reason": text},
    )
