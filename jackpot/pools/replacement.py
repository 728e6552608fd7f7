"""A progressive replaced (compliance 56): new increment terms start a new pool, to which the old
one's increment moves to the cent, with its tables. A two-person change `pool.replace` on the
old pool's chain: one admin proposes the new pool's name and terms, another approves.

Invariants:
- the approver is neither the proposer (403 `four_eyes`) and shows a fresh code; the old pool is
  at rest (`jackpot.pools.at_rest`), not stopped, its awards paid or void (as a stop);
- the approval is one transaction: the new pool created (`pool.created` naming the change), the
  old one stopped ("replaced by pool N"), its start value back to the house
  (`replace_seed_back`), its increment (meter less its start value, never below 0) and reserve
  into the new pool through the two `moved` accounts, each table of the old pool moved to the
  new one (`table.changed`); the sub-cent remainders stay on the old pool's counters, the house
  holding them in the journal;
- locks (`jackpot.money.locks`): the old pool's tables, its row, the change's row (the new
  pool's row, unknown to any other transaction), the two pools' chains, the `admin` chain.

The money, with a worked example: docs/accounting.md, "A progressive replaced".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import (
    ChangeKind,
    ParameterChange,
    Pool,
    PoolStatus,
    TransferCode,
)
from jackpot.money import ledger, locks, meter
from jackpot.money.accounting import Posting
from jackpot.money.meter import pool_meter
from jackpot.pools import at_rest, parameters, settled
from jackpot.pools.creation import pool_created, pool_row_insert
from jackpot.sign import display

KINDS = (ChangeKind.POOL_REPLACE,)
#: What a replacement names of its new pool: its name and its terms; the verification threshold
#: and surveillance are the old pool's unless given (they are not increment terms).
FIELDS = (*parameters.CREATE_FIELDS, "paytable_version", "surveillance_required")


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def _stopped(pool_id: int) -> Conflict:
    return Conflict(
        "pool_stopped",
        f"pool {pool_id} was stopped for good: it is never replaced again; nothing was written",
        param="pool",
    )


def new_terms(pool: Pool, values: Mapping[str, Any]) -> dict[str, Any]:
    """The new pool's parameters: `values`, the old pool's for those left out, checked as a new
    pool's are (400 `invalid_change` naming `changes.<field>`); 400 `no_change` when the
    increment terms are the old pool's (a replacement is for new terms)."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise ApiError(
            "invalid_change",
            f"a replacement names {', '.join(FIELDS)}, not {', '.join(unknown)}",
            param=f"changes.{unknown[0]}",
        )
    full = {field: values.get(field, getattr(pool, field)) for field in FIELDS}
    if all(full[term] == getattr(pool, term) for term in parameters.TERMS):
        raise ApiError(
            "no_change",
            f"these are pool {pool.pk}'s increment terms: a replacement starts new ones",
            param="changes",
        )
    shares = full["meter_share_bp"], full["reserve_share_bp"]
    if all(type(share) is int for share in shares) and sum(shares) > 10_000:
        raise ApiError(
            "invalid_change",
            f"meter_share_bp {shares[0]} and reserve_share_bp {shares[1]} add up to more than "
            "10,000 bp (the house keeps the rest)",
            param="changes.meter_share_bp",
        )
    parameters.check_change(Pool(currency=pool.currency), full)
    return full


def pool_replace_propose(
    *, pool_id: int, values: Mapping[str, Any], reason: str, user: User
) -> ParameterChange:
    """File the proposal to replace `pool_id` by a new pool with `values` (its name and terms).
    Nothing changes until another admin approves (`pool_replace_approve`)."""
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    if pool.status == PoolStatus.STOPPED:
        raise _stopped(pool_id)
    terms = new_terms(pool, values)
    return changes.propose(
        kind=ChangeKind.POOL_REPLACE,
        pool=pool,
        changes=terms,
        before={"status": pool.status, **{term: getattr(pool, term) for term in parameters.TERMS}},
        reason=reason,
        user=user,
    )


def _checked(pool: Pool, change: ParameterChange) -> None:
    """409 `change_stale` when the proposal no longer fits: its name taken, its values no
    longer a valid pool's."""
    if Pool.objects.filter(name=change.changes.get("name")).exists():
        raise Conflict(
            "change_stale",
            f"a pool named {change.changes.get('name')!r} exists since change {change.pk} was "
            "proposed: reject it and propose again",
            param="change",
        )
    try:
        new_terms(pool, change.changes)
    except ApiError as refusal:
        raise Conflict(
            "change_stale",
            f"change {change.pk} no longer fits: {refusal.message}",
            param="change",
        ) from None


def split(stopped: meter.Stopped, *, seed_cents: int) -> tuple[int, int]:
    """(start value back to the house, increment carried) of a meter of `stopped.meter_cents`:
    the old start value returns whole unless a correction lowered the meter below it, then
    what the meter holds (the increment is never negative: a lowered meter owes players none).

    >>> split(meter.Stopped(1_234_567, 45_678, 9), seed_cents=1_000_000)
    (1000000, 234567)
    >>> split(meter.Stopped(900_000, 0, 9), seed_cents=1_000_000)
    (900000, 0)
    """
    back = min(seed_cents, stopped.meter_cents)
    return back, stopped.meter_cents - back


@locks.retried
def pool_replace_approve(
    *,
    pool_id: int,
    change_id: int,
    user: User,
    pool_tables: at_rest.PoolTables | None = None,
    note: str = "",
    presence: Presence | None = None,
) -> ParameterChange:
    """A second admin approves a replacement: the new pool is created, the old one stopped, its
    increment and reserve moved to the new one to the cent, its start value back to the house,
    its tables moved; the change's `pool` stays the old pool, its new pool is named by the
    events (`pool.created`'s `replaces`, `pool.stopped`'s `replaced_by`)."""
    with transaction.atomic():
        pool_tables = pool_tables or at_rest.registered()
        tables = pool_tables.lock(pool_id)  # Lock.TABLE: none opens until the commit
        pool = locks.pool_row(pool_id)  # Lock.POOL
        if pool is None:
            raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
        change = changes.proposed(change_id, kinds=KINDS, pool_id=pool_id)
        changes.four_eyes(change, user, presence=presence)
        if pool.status == PoolStatus.STOPPED:
            raise _stopped(pool_id)
        at_rest.refuse_unless_at_rest(pool_id, tables, pool_tables, doing="replacement")
        settled.refuse_unpaid_awards(pool, doing="replaced")
        _checked(pool, change)
        now = timezone.now()
        facts = changes.applied(change, user, note, now)
        # Every pool row is written before the first chain's head is taken (jackpot.money.locks):
        # the new pool's row (no other transaction knows it), the old pool's, the new one's.
        values = {**change.changes, "currency": pool.currency}
        heir = pool_row_insert(values=values)
        stopped = meter.stop_counters(
            pool_id=pool_id, reason=f"replaced by pool {heir.pk}", now=now
        )
        assert stopped is not None  # the row is locked and was not stopped
        back, increment = split(stopped, seed_cents=pool.seed_cents)
        received = meter.receive(
            pool_id=heir.pk, meter_cents=increment, reserve_cents=stopped.reserve_cents, now=now
        )
        assert received is not None  # created above, active
        pool_created(
            heir, values=values, actor=_actor(user), approval={**facts, "replaces": pool_id}
        )
        moved = {"meter_cents": increment, "reserve_cents": stopped.reserve_cents}
        ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind="pool.stopped",
            actor=_actor(user),
            pool_id=pool_id,
            occurred_at=now,
            postings=(
                Posting(TransferCode.REPLACE_SEED_BACK, back),
                Posting(TransferCode.STOP_METER_OUT, increment),
                Posting(TransferCode.STOP_RESERVE_OUT, stopped.reserve_cents),
            ),
            payload={
                "pool": pool_id,
                "status": PoolStatus.STOPPED.value,
                "reason": change.reason,
                "disposition": {"to": "replacement", "to_pool": heir.pk},
                "replaced_by": heir.pk,
                "moved": moved,
                "seed_back_cents": back,
                **facts,
            },
        )
        ledger.record(
            chain=ledger.pool_chain(heir.pk),
            kind="pool.liability_received",
            actor=_actor(user),
            pool_id=heir.pk,
            occurred_at=now,
            postings=(
                Posting(TransferCode.STOP_METER_IN, increment),
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
        pool_tables.move_all(pool_id, heir.pk, actor=_actor(user), facts=facts)  # admin chain
        display.meter_changed(pool_id, pool_meter(pool_id=pool_id))
        display.meter_changed(heir.pk, pool_meter(pool_id=heir.pk))
        return change
