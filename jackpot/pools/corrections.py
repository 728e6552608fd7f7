"""Documented corrections (compliance 55): a pool's meter, its reserve or an award's amount due
raised or lowered by a new compensating entry, never an edit, with its reason, the regulator's
reference and the evidence, proposed by one person and approved by another.

Invariants:
- a correction is a two-person change `pool.correction` (`jackpot.approvals.changes`): proposed
  by a supervisor or a manager, approved by a manager who is not the proposer (as the authentic
  proposal event says) and shows a fresh code; neither configures (`jackpot.staff.duties`);
- its money is `correction` transfers between the house and the corrected account in one
  `pool.corrected` event on the pool's chain, the counter moved by one relative statement under
  its row (the pool's, an award's `corrected_cents`);
- refused with nothing written: a stopped pool (409 `pool_stopped`), a meter or reserve taken
  below zero (409 `correction_below_zero`), an award paid or void (409 `award_paid`,
  `award_void`) or left owing nothing (409 `award_due_not_positive`).

Locks: the award's row (an award's correction), the pool's row, the change's row, the pool's
chain head. The rules and a worked example: docs/accounting.md, "Corrections".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import Award, AwardStatus, ChangeKind, ParameterChange, Pool, PoolStatus
from jackpot.money import ledger, locks, meter, movements
from jackpot.money.accounting import Posting
from jackpot.money.meter import pool_meter
from jackpot.sign import display
from jackpot.staff import authority, duties

#: What a correction corrects.
TARGETS = ("meter", "reserve", "award")
#: Who proposes (a money decision: never an admin), and who approves.
PROPOSERS = ("supervisor", "manager")
APPROVERS = ("manager",)
#: The event that applies a correction, on the pool's chain (significant: SE20).
CORRECTED = "pool.corrected"
KINDS = (ChangeKind.POOL_CORRECTION,)


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def _refuse_unless(user: User, roles: tuple[str, ...], *, doing: str) -> None:
    """403 unless `user` acts with one of `roles` as the journal explains its powers, and
    configures nothing (`separation_of_duties`)."""
    duties.refuse_configurer(user, doing=doing)
    if not (authority.acting_roles(user) or frozenset()).intersection(roles):
        raise Forbidden(
            "permission_denied",
            f"{user.get_username()} may not {doing}: that needs the role {' or '.join(roles)}",
        )


def _text(value: object, *, param: str, limit: int = 500) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ApiError(
            "invalid_text",
            f"{param} is required: a non-blank text of at most {limit} characters",
            param=param,
        )
    return value.strip()


def _pool(pool_id: int) -> Pool:
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    return pool


def _refuse_stopped(pool: Pool) -> None:
    if pool.status == PoolStatus.STOPPED:
        raise Conflict(
            "pool_stopped",
            f"pool {pool.pk} was stopped for good: its figures are never corrected again; "
            "nothing was written",
            param="pool",
        )


def _refuse_award(award: Award, amount_cents: int, *, param: str) -> None:
    """409 unless `award` may be corrected by `amount_cents`: not paid, not void, still owing."""
    if award.status == AwardStatus.PAID:
        raise Conflict(
            "award_paid",
            f"award {award.pk} is paid: what it paid is not corrected; nothing was written",
            param=param,
        )
    if award.status == AwardStatus.VOID:
        raise Conflict(
            "award_void",
            f"award {award.pk} is void: it owes nothing to correct; nothing was written",
            param=param,
        )
    if award.due_cents + amount_cents <= 0:
        raise Conflict(
            "award_due_not_positive",
            f"award {award.pk} is due {award.due_cents} cents: a correction of {amount_cents} "
            "would leave it owing nothing or less (void it instead); nothing was written",
            param="amount_cents",
        )


def _below_zero(target: str, held_cents: int, amount_cents: int) -> Conflict:
    return Conflict(
        "correction_below_zero",
        f"the {target} holds {held_cents} cents: a correction of {amount_cents} cents would take "
        "it below zero; nothing was written",
        param="amount_cents",
    )


def _checked_award(pool: Pool, award_id: object, amount_cents: int) -> Award:
    if type(award_id) is not int:
        raise ApiError(
            "invalid_correction", "an award's correction names its award (id)", param="award"
        )
    award = Award.objects.filter(pk=award_id, pool=pool).first()
    if award is None:
        raise NotFound("award_not_found", f"pool {pool.pk} has no award {award_id}", param="award")
    _refuse_award(award, amount_cents, param="award")
    return award


def correction_propose(
    *,
    pool_id: int,
    target: str,
    award_id: int | None,
    amount_cents: int,
    reason: str,
    reference: str,
    evidence: str,
    user: User,
) -> ParameterChange:
    """File a correction of `pool_id`'s `target` (`meter`, `reserve`, or `award` `award_id`) by
    signed `amount_cents` (+ raises, - lowers), with its reason, the regulator's `reference` and
    the `evidence`. Nothing moves until a manager approves (`correction_approve`)."""
    _refuse_unless(user, PROPOSERS, doing="propose a correction")
    if target not in TARGETS:
        raise ApiError(
            "invalid_correction", f"target is one of {', '.join(TARGETS)}", param="target"
        )
    if type(amount_cents) is not int or amount_cents == 0:
        raise ApiError(
            "invalid_correction",
            "amount_cents is a signed whole number of cents, not zero (+ raises, - lowers)",
            param="amount_cents",
        )
    if target != "award" and award_id is not None:
        raise ApiError(
            "invalid_correction", f"a correction of the {target} names no award", param="award"
        )
    texts = {
        "reason": _text(reason, param="reason"),
        "reference": _text(reference, param="reference", limit=100),
        "evidence": _text(evidence, param="evidence"),
    }
    pool = _pool(pool_id)
    _refuse_stopped(pool)
    figures = meter.counters(pool_id=pool.pk)
    before: dict[str, Any] = {
        "meter_cents": figures.meter_cents,
        "reserve_cents": figures.reserve_cents,
    }
    if target == "award":
        award = _checked_award(pool, award_id, amount_cents)
        before["award_due_cents"] = award.due_cents
    else:
        held = figures.meter_cents if target == "meter" else figures.reserve_cents
        if held + amount_cents < 0:
            raise _below_zero(target, held, amount_cents)
    return changes.propose(
        kind=ChangeKind.POOL_CORRECTION,
        pool=pool,
        changes={
            "target": target,
            "award": award_id,
            "amount_cents": amount_cents,
            "reference": texts["reference"],
            "evidence": texts["evidence"],
        },
        before=before,
        reason=texts["reason"],
        user=user,
    )


def _apply(
    pool: Pool, change: ParameterChange, award: Award | None, now: datetime
) -> tuple[tuple[Posting, ...], meter.Counters]:
    """The correction's money: its postings and the pool's counters after it."""
    target, amount = change.changes["target"], int(change.changes["amount_cents"])
    if award is None:
        corrected = movements.correct_counter(
            pool_id=pool.pk, target=target, amount_cents=amount, now=now
        )
        if corrected is None:  # the pool row is locked and not stopped: a counter below zero
            figures = meter.counters(pool_id=pool.pk)
            held = figures.meter_cents if target == "meter" else figures.reserve_cents
            raise _below_zero(target, held, amount)
        return corrected.postings, corrected.after
    _refuse_award(award, amount, param="change")
    meter.bump_award_version(pool_id=pool.pk)  # the award's amount due changes on the displays
    postings = movements.correct_award(award, amount_cents=amount)
    if postings is None:  # the row is locked and was checked: only an edit behind its back
        raise Conflict("award_due_not_positive", f"award {award.pk} would owe nothing or less")
    return postings, meter.counters(pool_id=pool.pk)


@locks.retried
def correction_approve(
    *,
    pool_id: int,
    change_id: int,
    user: User,
    note: str = "",
    presence: Presence | None = None,
) -> ParameterChange:
    """A manager other than the proposer approves a correction, showing a fresh code: its
    money moves now, by `correction` transfers in its `pool.corrected` event."""
    _refuse_unless(user, APPROVERS, doing="approve a correction")
    with transaction.atomic():
        # An award's row comes before the pool's (jackpot.money.locks): its id is read from the
        # proposal first, and checked against the locked, authentic proposal below.
        named = (
            ParameterChange.objects.filter(pk=change_id, pool_id=pool_id, kind__in=KINDS)
            .values_list("changes", flat=True)
            .first()
        )
        award_id = (named or {}).get("award")
        award = locks.award_row(award_id) if isinstance(award_id, int) else None
        pool = locks.pool_row(pool_id)
        if pool is None:
            raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
        change = changes.proposed(change_id, kinds=KINDS, pool_id=pool_id)
        changes.four_eyes(change, user, presence=presence)
        asked = change.changes
        if asked.get("award") != award_id or (asked.get("target") == "award") != (
            award is not None and award.pool_id == pool_id
        ):
            raise Conflict(
                "change_stale",
                f"change {change_id} no longer names what it named: reject it and propose again",
                param="change",
            )
        _refuse_stopped(pool)
        now = timezone.now()
        postings, after = _apply(pool, change, award, now)
        facts = changes.applied(change, user, note, now)
        ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind=CORRECTED,
            actor=_actor(user),
            pool_id=pool_id,
            occurred_at=now,
            postings=postings,
            payload={
                "pool": pool_id,
                "change": change.pk,
                "target": asked["target"],
                "award": award_id,
                "amount_cents": int(asked["amount_cents"]),
                "reason": change.reason,
                "reference": asked["reference"],
                "evidence": asked["evidence"],
                "meter_after_cents": after.meter_cents,
                "reserve_after_cents": after.reserve_cents,
                **facts,
            },
        )
        if asked["target"] == "meter":
            display.meter_changed(pool_id, pool_meter(pool_id=pool_id))
        if award is not None:
            display.awards_changed(pool_id)
        return change


def correction_reject(*, pool_id: int, change_id: int, user: User, note: str) -> ParameterChange:
    """A supervisor or manager (the proposer too) rejects a proposed correction, saying why."""
    _refuse_unless(user, PROPOSERS, doing="reject a correction")
    return changes.change_reject(
        pool_id=pool_id, change_id=change_id, user=user, note=note, kinds=KINDS
    )


def correction_withdraw(
    *, pool_id: int, change_id: int, user: User, note: str = ""
) -> ParameterChange:
    """The proposer takes a proposed correction back."""
    return changes.change_withdraw(
        pool_id=pool_id, change_id=change_id, user=user, note=note, kinds=KINDS
    )
