"""The register of orphans (compliance 58; arrêté of 14 May 2007 art. 66-4): a stopped pool's
orphans, what its players contributed and did not win, owed until recovered or final.

Invariants:
- a stop to orphans (`jackpot.pools.lifecycle`) enters the meter above the seed in force and the
  reserve in the pool's `orphan` account and its `OrphanEntry`; the seed goes back to the house;
- orphans are recoverable until the end of the day CLUB_SEASON_END that ends the season the pool
  stopped in (club's time zone), into an active pool of its currency created before then, by a
  two-person change `pool.orphans_recover`: proposed by a supervisor or a manager, approved by
  another manager with a fresh code, neither a configurer (a money decision, as a correction);
  refused after (409 `orphans_final`);
- after it a sweep makes them final once (`orphans.final`, SE23): `orphan` to `forfeit`;
- the amount moved is the `orphan` account's balance in the journal, never the row's; each move
  is one event referencing the decision. Locks: the pools' rows (id order), then the chains.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from core.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import (
    AccountKind,
    AuditEvent,
    ChangeKind,
    OrphanEntry,
    ParameterChange,
    Pool,
    PoolStatus,
    Transfer,
    TransferCode,
)
from jackpot.money import ledger, locks, meter
from jackpot.money.accounting import Posting
from jackpot.money.meter import pool_meter
from jackpot.sign import display
from jackpot.staff import authority, duties

PROPOSERS = ("supervisor", "manager")
APPROVERS = ("manager",)
KINDS = (ChangeKind.POOL_ORPHANS_RECOVER,)
RECOVERED, RECEIVED, FINAL = "pool.orphans_recovered", "pool.orphans_received", "orphans.final"
#: The codes that move a pool's `orphan` account (the (pool, code) index reads them).
_ORPHAN_CODES = (
    TransferCode.STOP_METER_ORPHAN,
    TransferCode.STOP_RESERVE_ORPHAN,
    TransferCode.STOP_ORPHANS,
    TransferCode.ORPHANS_OUT,
    TransferCode.ORPHANS_FINAL,
)


def season_deadline(stopped_at: datetime) -> datetime:
    """The instant a stop's orphans become final: the end of the first CLUB_SEASON_END on or
    after the day the pool stopped, in the club's time zone, as UTC."""
    club = ZoneInfo(settings.TIME_ZONE)
    day = stopped_at.astimezone(club).date()
    month, dom = (int(part) for part in settings.CLUB_SEASON_END.split("-"))
    end = date(day.year, month, dom)
    if day > end:
        end = date(day.year + 1, month, dom)
    return datetime.combine(end + timedelta(days=1), time(0), tzinfo=club).astimezone(UTC)


def orphans_held(pool_id: int) -> int:
    """The pool's `orphan` account balance in the journal: credits less debits."""
    moved = Transfer.objects.filter(pool_id=pool_id, code__in=_ORPHAN_CODES)
    credit = moved.filter(credit__kind=AccountKind.ORPHAN).aggregate(c=Sum("amount_cents"))["c"]
    debit = moved.filter(debit__kind=AccountKind.ORPHAN).aggregate(c=Sum("amount_cents"))["c"]
    return (credit or 0) - (debit or 0)


def entered(*, pool: Pool, change: ParameterChange, event: AuditEvent, cents: int) -> OrphanEntry:
    """The stop's line in the register, written with its `pool.stopped` event."""
    return OrphanEntry.objects.create(
        pool=pool,
        change=change,
        stopped_at=event.occurred_at,
        orphans_cents=cents,
        deadline=season_deadline(event.occurred_at),
        stopped_event=event,
    )


def _refuse_unless(user: User, roles: tuple[str, ...], *, doing: str) -> None:
    duties.refuse_configurer(user, doing=doing)
    if not (authority.acting_roles(user) or frozenset()).intersection(roles):
        raise Forbidden(
            "permission_denied",
            f"{user.get_username()} may not {doing}: that needs the role {' or '.join(roles)}",
        )


def _open_entry(pool_id: int, now: datetime) -> OrphanEntry:
    """The pool's register line, still owed and within its season."""
    entry = OrphanEntry.objects.filter(pool_id=pool_id).first()
    if entry is None:
        raise Conflict(
            "no_orphans",
            f"pool {pool_id} has no orphans in the register (not stopped to orphans)",
            param="pool",
        )
    if entry.recovered_at is not None:
        raise Conflict(
            "orphans_recovered",
            f"the orphans of pool {pool_id} were recovered on {entry.recovered_at.isoformat()}",
            param="pool",
        )
    if entry.final_at is not None or now >= entry.deadline:
        raise Conflict(
            "orphans_final",
            f"the orphans of pool {pool_id} are final since {entry.deadline.isoformat()} (the "
            "end of the season it stopped in): they are recovered no more; nothing was written",
            param="pool",
        )
    return entry


def _heir(to_pool: int | None, stopped: Pool, deadline: datetime, error: type[ApiError]) -> Pool:
    heir = Pool.objects.filter(pk=to_pool).first() if to_pool is not None else None
    problem = None
    if heir is None:
        problem = f"no pool {to_pool}"
    elif heir.status != PoolStatus.ACTIVE:
        problem = f"pool {heir.pk} is {heir.status}: only an active pool takes orphans"
    elif heir.currency != stopped.currency:
        problem = (
            f"pool {heir.pk} counts in {heir.currency}, pool {stopped.pk} in {stopped.currency}"
        )
    elif heir.created_at >= deadline:
        problem = f"pool {heir.pk} was created after the season's end ({deadline.isoformat()})"
    if problem is None:
        assert heir is not None
        return heir
    if error is Conflict:
        raise Conflict("change_stale", f"the recovery no longer holds: {problem}", param="change")
    raise ApiError("invalid_heir", problem, param="to_pool")


def orphans_recover_propose(
    *, pool_id: int, to_pool: int, reason: str, user: User
) -> ParameterChange:
    """File the recovery of stopped `pool_id`'s orphans into active `to_pool`'s meter; nothing
    moves until another manager approves (`orphans_recover_approve`)."""
    _refuse_unless(user, PROPOSERS, doing="propose an orphans' recovery")
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    entry = _open_entry(pool_id, timezone.now())
    heir = _heir(to_pool, pool, entry.deadline, ApiError)
    return changes.propose(
        kind=ChangeKind.POOL_ORPHANS_RECOVER,
        pool=pool,
        changes={"to_pool": heir.pk},
        before={"orphans_cents": orphans_held(pool_id)},
        reason=reason,
        user=user,
    )


@locks.retried
def orphans_recover_approve(
    *, pool_id: int, change_id: int, user: User, note: str = "", presence: Presence | None = None
) -> ParameterChange:
    """A manager other than the proposer approves: the orphans move now from the stopped pool's
    register into the heir's meter, two events naming the decision."""
    _refuse_unless(user, APPROVERS, doing="approve an orphans' recovery")
    with transaction.atomic():
        named = (
            ParameterChange.objects.filter(pk=change_id, pool_id=pool_id, kind__in=KINDS)
            .values_list("changes", flat=True)
            .first()
        )
        heir_id = (named or {}).get("to_pool")
        pools = {p.pk: p for p in locks.pool_rows([pool_id] + ([heir_id] if heir_id else []))}
        if pool_id not in pools:
            raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
        change = changes.proposed(change_id, kinds=KINDS, pool_id=pool_id)
        changes.four_eyes(change, user, presence=presence)
        now = timezone.now()
        entry = _open_entry(pool_id, now)
        heir = _heir(change.changes.get("to_pool"), pools[pool_id], entry.deadline, Conflict)
        cents = orphans_held(pool_id)
        received = meter.receive(pool_id=heir.pk, meter_cents=cents, reserve_cents=0, now=now)
        assert received is not None  # locked above, active
        facts = changes.applied(change, user, note, now)
        actor = f"user:{user.get_username()}"
        event = ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind=RECOVERED,
            actor=actor,
            pool_id=pool_id,
            occurred_at=now,
            postings=(Posting(TransferCode.ORPHANS_OUT, cents),),
            payload={"pool": pool_id, "to_pool": heir.pk, "orphans_cents": cents, **facts},
        )
        ledger.record(
            chain=ledger.pool_chain(heir.pk),
            kind=RECEIVED,
            actor=actor,
            pool_id=heir.pk,
            occurred_at=now,
            postings=(Posting(TransferCode.ORPHANS_IN, cents),),
            payload={
                "pool": heir.pk,
                "from_pool": pool_id,
                "change": change.pk,
                "orphans_cents": cents,
                "meter_after_cents": received[0],
            },
        )
        OrphanEntry.objects.filter(
            pk=pool_id, recovered_at__isnull=True, final_at__isnull=True
        ).update(recovered_at=now, recovered_into=heir, recovery=change, closed_event=event)
        display.meter_changed(heir.pk, pool_meter(pool_id=heir.pk))
        return change


def orphans_recover_reject(
    *, pool_id: int, change_id: int, user: User, note: str
) -> ParameterChange:
    """A supervisor or manager (the proposer too) rejects a proposed recovery, saying why."""
    _refuse_unless(user, PROPOSERS, doing="reject an orphans' recovery")
    return changes.change_reject(
        pool_id=pool_id, change_id=change_id, user=user, note=note, kinds=KINDS
    )


def orphans_final(*, now: datetime | None = None) -> list[int]:
    """Make final, once, the orphans whose season has ended (`orphans.final`, SE23): the pools.
    Safe to run twice: a line made final is closed, the second run finds none."""
    now = now or timezone.now()
    due = list(
        OrphanEntry.objects.filter(
            recovered_at__isnull=True, final_at__isnull=True, deadline__lte=now
        ).values_list("pk", flat=True)[:500]
    )
    return [pk for pk in due if _final(pk, now)]


@locks.retried
def _final(pool_id: int, now: datetime) -> bool:
    with transaction.atomic():
        locks.pool_row(pool_id)  # a recovery approved meanwhile waits, or is seen below
        entry = OrphanEntry.objects.get(pk=pool_id)
        if entry.recovered_at is not None or entry.final_at is not None:
            return False
        cents = orphans_held(pool_id)
        event = ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind=FINAL,
            actor="system:orphans_final",
            pool_id=pool_id,
            occurred_at=now,
            postings=(Posting(TransferCode.ORPHANS_FINAL, cents),),
            payload={
                "pool": pool_id,
                "change": entry.change_id,
                "orphans_cents": cents,
                "deadline": entry.deadline.isoformat(),
            },
        )
        OrphanEntry.objects.filter(pk=pool_id).update(final_at=now, closed_event=event)
        return True
