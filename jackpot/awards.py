"""The way of an award to payment: verify, approve (a second person), pay; or void.

Each step is one transaction that locks the award row, checks the step is allowed from the
award's status, writes its audit event on the pool's chain with any transfers, and updates the
award. Money moves as TigerBeetle's pending transfers do:

    approve   awards_pending -> payable        (award_approved)
    pay       payable        -> paid           (award_paid)
    void      awards_pending -> meter          (award_void_meter: a jackpot goes back on the meter)
              awards_pending -> house          (award_void_house: a fixed award or envy)

Invariants: the approver is never the verifier (checked here and by a database constraint);
only `pending` and `verified` awards can be voided; nothing is deleted or edited in place but
the award's status and who/when fields, whose history is the audit chain. Lock order: the award
row, then the pool row (a voided jackpot only), then the pool's chain head; rounds never lock an
award row, and take the pool row after their own table's chain, so no cycle is possible.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from config.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot import display, ledger, meter
from jackpot.ledger import Posting
from jackpot.models import AccountKind, Award, AwardKind, AwardStatus, TransferCode
from jackpot.selectors import pool_meter

MAX_TEXT = 500


def _text(value: object, *, param: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise ApiError(
            "invalid_text",
            f"{param} must be a non-empty text of at most {MAX_TEXT} characters",
            param=param,
        )
    return value.strip()


def _step(
    award_id: int,
    user: User,
    *,
    allowed: tuple[AwardStatus, ...],
    to: AwardStatus,
    payload: dict[str, Any],
    postings: Callable[[Award], list[Posting]] = lambda award: [],
    before: Callable[[Award], dict[str, Any]] = lambda award: {},
    changes: Callable[[datetime], dict[str, Any]] = lambda now: {},
) -> Award:
    """Move one award from one of `allowed` to `to`, with its audit event and transfers."""
    with transaction.atomic():
        award = Award.objects.select_for_update().filter(pk=award_id).first()
        if award is None:
            raise NotFound("award_not_found", f"no award {award_id}", param="award")
        if award.status not in allowed:
            raise Conflict(
                "award_wrong_status",
                f"award {award_id} is {award.status}; this step needs it {' or '.join(allowed)}",
                param="award",
            )
        extra = before(award)  # checks and locks that need the award, before the event
        meter.bump_award_version(pool_id=award.pool_id)
        display.awards_changed(award.pool_id)
        now = timezone.now()
        ledger.record(
            chain=ledger.pool_chain(award.pool_id),
            kind=f"award.{to}",
            actor=f"user:{user.get_username()}",
            pool_id=award.pool_id,
            occurred_at=now,
            postings=postings(award),
            payload={
                "award": award.pk,
                "round": award.round_id,
                "seat": award.seat,
                "kind": award.kind,
                "amount_cents": award.amount_cents,
                "from": award.status,
                "to": to,
                **payload,
                **extra,
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
    return _step(
        award_id,
        user,
        allowed=(AwardStatus.PENDING,),
        to=AwardStatus.VERIFIED,
        payload={"note": text},
        changes=lambda now: {"verified_by": user, "verified_at": now, "verification_note": text},
    )


def award_approve(*, award_id: int, user: User) -> Award:
    """A second supervisor approves payment: the award becomes payable to the player."""

    def four_eyes(award: Award) -> dict[str, Any]:
        if award.verified_by_id == user.pk:
            raise Forbidden(
                "four_eyes",
                "the supervisor who verified an award cannot also approve it",
                param="award",
            )
        return {}

    return _step(
        award_id,
        user,
        allowed=(AwardStatus.VERIFIED,),
        to=AwardStatus.APPROVED,
        payload={},
        before=four_eyes,
        postings=lambda award: [
            Posting(
                TransferCode.AWARD_APPROVED,
                AccountKind.AWARDS_PENDING,
                AccountKind.PAYABLE,
                award.amount_cents,
                award.round_id,
                award.pk,
            )
        ],
        changes=lambda now: {"approved_by": user, "approved_at": now},
    )


def award_pay(*, award_id: int, user: User) -> Award:
    """The player has been paid."""
    return _step(
        award_id,
        user,
        allowed=(AwardStatus.APPROVED,),
        to=AwardStatus.PAID,
        payload={},
        postings=lambda award: [
            Posting(
                TransferCode.AWARD_PAID,
                AccountKind.PAYABLE,
                AccountKind.PAID,
                award.amount_cents,
                award.round_id,
                award.pk,
            )
        ],
        changes=lambda now: {"paid_by": user, "paid_at": now},
    )


def award_void(*, award_id: int, user: User, reason: object) -> Award:
    """Void an award awaiting payment. A jackpot goes back on the meter, a fixed award to the
    house; both by new transfers."""
    text = _text(reason, param="reason")

    def back_on_meter(award: Award) -> dict[str, Any]:
        if award.kind != AwardKind.ROYAL_FLUSH:
            return {}
        meter_cents, version = meter.return_to_meter(
            pool_id=award.pool_id, amount_cents=award.amount_cents, now=timezone.now()
        )
        display.meter_changed(award.pool_id, pool_meter(pool_id=award.pool_id))
        return {"meter_after_cents": meter_cents, "meter_version": version}

    def back(award: Award) -> list[Posting]:
        jackpot = award.kind == AwardKind.ROYAL_FLUSH
        return [
            Posting(
                TransferCode.AWARD_VOID_METER if jackpot else TransferCode.AWARD_VOID_HOUSE,
                AccountKind.AWARDS_PENDING,
                AccountKind.METER if jackpot else AccountKind.HOUSE,
                award.amount_cents,
                award.round_id,
                award.pk,
            )
        ]

    return _step(
        award_id,
        user,
        allowed=(AwardStatus.PENDING, AwardStatus.VERIFIED),
        to=AwardStatus.VOID,
        payload={"reason": text},
        before=back_on_meter,
        postings=back,
        changes=lambda now: {"voided_by": user, "voided_at": now, "void_reason": text},
    )
