"""A progressive's life: suspended (a technical fault, one admin), resumed (one admin), stopped for
good (a two-person change `pool.stop`), compliance 36. Each an audit event on the pool's chain in
the transaction that changes the pool row, and in the security log.

Invariants:
- a pool not active takes no progressive stake (409 `pool_suspended` or `pool_stopped`, checked
  by the meter's own `UPDATE`) and pays nothing; a round opened before settles on its terms;
- suspending and resuming move no figure;
- a stop needs another admin, the pool at rest (`jackpot.pools.at_rest`) and every award paid or
  void; its meter and reserve leave by transfers to an heir pool, or to the register of orphans
  (the meter above the seed and the reserve; the seed back to the house: `jackpot.pools.orphans`),
  the sub-cent remainders staying on the counters;
- each is told (`jackpot.pools.notices`, compliance 57): a suspension and an involuntary stop to
  the police when they happen; a voluntary stop to the minister when proposed, with its
  `effective_at` at least 15 days on, and approved no sooner than `effective_at` nor 15 days
  after the notice's authentic sending (409 `notice_period_running`);
- a stopped pool is never changed again (409 `pool_stopped`).

The states, the French practice behind them and the locks: docs/accounting.md, "The modules, in
detail".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import (
    ChangeKind,
    Notice,
    NoticeCause,
    ParameterChange,
    Pool,
    PoolStatus,
    TransferCode,
)
from jackpot.money import ledger, locks, meter
from jackpot.money.accounting import Posting
from jackpot.money.meter import pool_meter
from jackpot.pools import at_rest, notices, orphans, parameters, replacement, settled
from jackpot.sign import display


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def _refused(pool_id: int, *, doing: str) -> Conflict | NotFound:
    """Why `doing` cannot be done to the pool as its row reads now."""
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        return NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    since = pool.status_since.isoformat() if pool.status_since else "?"
    if pool.status == PoolStatus.STOPPED:
        return Conflict(
            "pool_stopped",
            f"pool {pool_id} was stopped for good on {since}: it is never {doing} again",
            param="pool",
        )
    if pool.status == PoolStatus.SUSPENDED:
        return Conflict(
            "pool_suspended",
            f"pool {pool_id} is already suspended since {since} ({pool.status_reason})",
            param="pool",
        )
    return Conflict(
        "pool_not_suspended", f"pool {pool_id} is active: only a suspended pool is resumed"
    )


def _set(pool_id: int, *, to: PoolStatus, allowed: PoolStatus, reason: str, user: User) -> Pool:
    with transaction.atomic():
        now = timezone.now()
        version = meter.set_status(
            pool_id=pool_id, status=to, reason=reason, now=now, allowed=(allowed,)
        )
        if version is None:
            raise _refused(pool_id, doing="suspended" if to == PoolStatus.SUSPENDED else "resumed")
        ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind="pool.suspended" if to == PoolStatus.SUSPENDED else "pool.resumed",
            actor=_actor(user),
            occurred_at=now,
            payload={"pool": pool_id, "status": to.value, "reason": reason},
        )
        display.meter_changed(pool_id, pool_meter(pool_id=pool_id))
        pool = Pool.objects.get(pk=pool_id)
        if to == PoolStatus.SUSPENDED:
            notices.notice_make(
                pool=pool,
                cause=NoticeCause.SUSPENSION,
                reason=reason,
                when=now,
                actor=_actor(user),
                now=now,
            )
        return pool


@locks.retried
def pool_suspend(*, pool_id: int, reason: str, user: User) -> Pool:
    """An admin suspends an active pool (a technical fault): no progressive stake, nothing
    payable, the sign says so; 409 `pool_suspended` if it already is, `pool_stopped`."""
    return _set(
        pool_id, to=PoolStatus.SUSPENDED, allowed=PoolStatus.ACTIVE, reason=reason, user=user
    )


@locks.retried
def pool_resume(*, pool_id: int, reason: str, user: User) -> Pool:
    """An admin resumes a suspended pool: stakes and payments again, no figure changed; 409
    `pool_not_suspended` for an active pool, `pool_stopped` for a stopped one."""
    return _set(
        pool_id, to=PoolStatus.ACTIVE, allowed=PoolStatus.SUSPENDED, reason=reason, user=user
    )


def _heir(pool: Pool, to_pool: int | None, *, error: type[ApiError] | type[Conflict]) -> Pool:
    """The pool a stop moves `pool`'s liability to: another active pool of its currency."""
    heir = Pool.objects.filter(pk=to_pool).first() if to_pool is not None else None
    problem = None
    if heir is None:
        problem = f"no pool {to_pool}"
    elif heir.pk == pool.pk:
        problem = "a pool is not stopped into itself"
    elif heir.status != PoolStatus.ACTIVE:
        problem = f"pool {heir.pk} is {heir.status}: only an active pool takes a liability"
    elif heir.currency != pool.currency:
        problem = f"pool {heir.pk} counts in {heir.currency}, pool {pool.pk} in {pool.currency}"
    if problem is None:
        assert heir is not None
        return heir
    if error is Conflict:
        raise Conflict("change_stale", f"the stop's disposition no longer holds: {problem}")
    raise ApiError("invalid_disposition", problem, param="to_pool")


def _effective(voluntary: bool, effective_at: datetime | None, now: datetime) -> datetime | None:
    """A voluntary stop's effective date, at least 15 days on; an involuntary stop names none."""
    if not voluntary:
        if effective_at is not None:
            raise ApiError(
                "invalid_effective_at",
                "an involuntary stop takes effect at its approval: leave effective_at out",
                param="effective_at",
            )
        return None
    earliest = now + notices.VOLUNTARY_NOTICE
    if effective_at is None or effective_at < earliest:
        raise ApiError(
            "invalid_effective_at",
            "a voluntary stop names its effective_at, at least 15 days after its proposal "
            f"(the minister is told 15 days before): {earliest.isoformat()} at the earliest",
            param="effective_at",
        )
    return effective_at


@transaction.atomic
def pool_stop_propose(
    *,
    pool_id: int,
    to: str,
    to_pool: int | None,
    reason: str,
    user: User,
    voluntary: bool,
    effective_at: datetime | None = None,
) -> ParameterChange:
    """File the proposal to stop `pool_id` for good, naming its disposition: `to` `pool` (another
    active pool, `to_pool`) or `orphan`; `voluntary` (the club's decision, with its
    `effective_at`: the minister's notice is made now) or not (a fault). Nothing changes until
    another admin approves."""
    effective = _effective(voluntary, effective_at, timezone.now())
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    if pool.status == PoolStatus.STOPPED:
        raise _refused(pool_id, doing="stopped")
    if to == "orphan":
        if to_pool is not None:
            raise ApiError(
                "invalid_disposition",
                "a stop to the orphan account names no pool: leave to_pool out",
                param="to_pool",
            )
    else:
        to_pool = _heir(pool, to_pool, error=ApiError).pk
    change = changes.propose(
        kind=ChangeKind.POOL_STOP,
        pool=pool,
        changes={
            "to": to,
            "to_pool": to_pool,
            "voluntary": voluntary,
            "effective_at": effective.isoformat() if effective is not None else None,
        },
        before={"status": pool.status},
        reason=reason,
        user=user,
    )
    if effective is not None:
        notices.notice_make(
            pool=pool,
            cause=NoticeCause.VOLUNTARY_STOP,
            reason=reason,
            when=effective,
            actor=_actor(user),
            now=change.proposed_at,
            change=change,
        )
    return change


def _refuse_notice_running(change: ParameterChange, now: datetime) -> None:
    """409 `notice_period_running` before a voluntary stop's effective date, or before 15 days
    after its notice's authentic sending (or while it is unsent)."""
    effective_at = change.changes.get("effective_at")
    if not change.changes.get("voluntary") or not isinstance(effective_at, str):
        return
    notice = Notice.objects.filter(change=change).order_by("pk").first()
    told = notices.sent(notice) if notice is not None else None
    waits = []
    if now < datetime.fromisoformat(effective_at):
        waits.append(f"it takes effect on {effective_at}")
    if told is None:
        waits.append("its notice to the minister is not recorded sent")
    elif now < told.at + notices.VOLUNTARY_NOTICE:
        waits.append(
            f"its notice was sent on {told.at.isoformat()}: 15 days run until "
            f"{(told.at + notices.VOLUNTARY_NOTICE).isoformat()}"
        )
    if waits:
        raise Conflict(
            "notice_period_running",
            f"the voluntary stop {change.pk} is not approved yet: {'; '.join(waits)}",
            param="change",
        )


def _stop_postings(stopped: meter.Stopped, *, orphan: bool, seed_cents: int) -> tuple[Posting, ...]:
    if orphan:
        # Art. 66-4: the orphans are the displayed amount less the start value; the seed the
        # house funded goes back to it, the reserve (players' stakes kept for the next start
        # value, which never comes) is the players' too (docs/accounting.md, "Orphans").
        seed_back = min(stopped.meter_cents, seed_cents)
        return (
            Posting(TransferCode.STOP_ORPHANS, stopped.meter_cents - seed_back),
            Posting(TransferCode.STOP_SEED_BACK, seed_back),
            Posting(TransferCode.STOP_RESERVE_ORPHAN, stopped.reserve_cents),
        )
    return (
        Posting(TransferCode.STOP_METER_OUT, stopped.meter_cents),
        Posting(TransferCode.STOP_RESERVE_OUT, stopped.reserve_cents),
    )


@locks.retried
def pool_stop_approve(
    *,
    pool_id: int,
    change_id: int,
    user: User,
    pool_tables: at_rest.PoolTables | None = None,
    note: str = "",
    presence: Presence | None = None,
) -> ParameterChange:
    """A second admin approves a stop: the pool is stopped now and its meter and reserve move to
    their disposition, each by transfers whose event names the change."""
    with transaction.atomic():
        pool_tables = pool_tables or at_rest.registered()
        tables = pool_tables.lock(pool_id)  # Lock.TABLE: none opens until the commit
        # The heir's row is locked with the pool's, in id order (Lock.POOL); the proposal names
        # it and is read again, locked, below.
        named = (
            ParameterChange.objects.filter(pk=change_id, pool_id=pool_id, kind=ChangeKind.POOL_STOP)
            .values_list("changes", flat=True)
            .first()
        )
        heir_id = (named or {}).get("to_pool")
        pools = {
            pool.pk: pool for pool in locks.pool_rows([pool_id] + ([heir_id] if heir_id else []))
        }
        if pool_id not in pools:
            raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
        pool = pools[pool_id]
        change = changes.proposed(change_id, kinds=(ChangeKind.POOL_STOP,), pool_id=pool_id)
        changes.four_eyes(change, user, presence=presence)
        if pool.status == PoolStatus.STOPPED:
            raise _refused(pool_id, doing="stopped")
        _refuse_notice_running(change, timezone.now())
        at_rest.refuse_unless_at_rest(pool_id, tables, pool_tables, doing="stop is approved")
        settled.refuse_unpaid_awards(pool, doing="stopped")
        orphan = change.changes.get("to") == "orphan"
        heir = None if orphan else _heir(pool, heir_id, error=Conflict)
        now = timezone.now()
        stopped = meter.stop_counters(pool_id=pool_id, reason=change.reason, now=now)
        assert stopped is not None  # the row is locked and was not stopped
        facts = changes.applied(change, user, note, now)
        moved: dict[str, Any] = {
            "meter_cents": stopped.meter_cents,
            "reserve_cents": stopped.reserve_cents,
        }
        # Every pool row is written before the first chain's head is taken (jackpot.money.locks).
        received = None
        if heir is not None:
            received = meter.receive(
                pool_id=heir.pk,
                meter_cents=stopped.meter_cents,
                reserve_cents=stopped.reserve_cents,
                now=now,
            )
            assert received is not None  # locked above, active
        disposition: dict[str, Any] = (
            {"to": "orphan"} if heir is None else {"to": "pool", "to_pool": heir.pk}
        )
        postings = _stop_postings(stopped, orphan=heir is None, seed_cents=pool.seed_cents)
        if heir is None:
            moved["orphans_cents"] = stopped.meter_cents + stopped.reserve_cents
            moved["orphans_cents"] -= postings[1].amount_cents  # the seed back to the house
            moved["seed_back_cents"] = postings[1].amount_cents
        event = ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind="pool.stopped",
            actor=_actor(user),
            pool_id=pool_id,
            occurred_at=now,
            postings=postings,
            payload={
                "pool": pool_id,
                "status": PoolStatus.STOPPED.value,
                "reason": change.reason,
                "disposition": disposition,
                "moved": moved,
                "voluntary": bool(change.changes.get("voluntary")),
                **facts,
            },
        )
        if heir is None:
            orphans.entered(pool=pool, change=change, event=event, cents=moved["orphans_cents"])
        if not change.changes.get("voluntary"):
            notices.notice_make(
                pool=pool,
                cause=NoticeCause.INVOLUNTARY_STOP,
                reason=change.reason,
                when=now,
                actor=_actor(user),
                now=now,
                change=change,
            )
        display.meter_changed(pool_id, pool_meter(pool_id=pool_id))
        if heir is not None:
            assert received is not None
            ledger.record(
                chain=ledger.pool_chain(heir.pk),
                kind="pool.liability_received",
                actor=_actor(user),
                pool_id=heir.pk,
                occurred_at=now,
                postings=(
                    Posting(TransferCode.STOP_METER_IN, stopped.meter_cents),
                    Posting(TransferCode.STOP_RESERVE_IN, stopped.reserve_cents),
                ),
                payload={
                    "pool": heir.pk,
                    "from_pool": pool_id,
                    "change": change.pk,
                    "moved": moved,
                    "meter_after_cents": received[0],
                },
            )
            display.meter_changed(heir.pk, pool_meter(pool_id=heir.pk))
        return change


def pool_change_approve(
    *,
    pool_id: int,
    change_id: int,
    user: User,
    pool_tables: at_rest.PoolTables | None = None,
    note: str = "",
    presence: Presence | None = None,
) -> ParameterChange:
    """Approve any two-person change of a pool (`POST .../changes/{change}/approve`): its stop
    here, its replacement by `jackpot.pools.replacement`, its parameters by
    `jackpot.pools.parameters.change_approve` (which answers for a missing one)."""
    kind = (
        ParameterChange.objects.filter(pk=change_id, pool_id=pool_id)
        .values_list("kind", flat=True)
        .first()
    )
    approve = parameters.change_approve
    if kind == ChangeKind.POOL_STOP:
        approve = pool_stop_approve
    elif kind == ChangeKind.POOL_REPLACE:
        approve = replacement.pool_replace_approve
    return approve(
        pool_id=pool_id,
        change_id=change_id,
        user=user,
        pool_tables=pool_tables,
        note=note,
        presence=presence,
    )
