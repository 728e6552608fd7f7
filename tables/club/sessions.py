"""The club's sessions: opened and closed by a supervisor or a manager, or closed by the club
day's end, each with its snapshot from the journal (compliance 54).

Invariants:
- each step is one durable transaction that takes the `club` chain's head first
  (`Lock.CLUB_CHAIN`): at most one session is open, numbers follow one another, a close happens
  once, whoever (people, beat's workers) asks at once;
- the opening records the journal's cut (`session.opened`); the close records the cut again and
  the snapshot's rows written with its `session.closed` event, whose lists are those rows
  (`tables.club.snapshot`: the figures are the session's events alone);
- an account that configures never opens or closes one (`jackpot.staff.duties`).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.errors import Conflict, Forbidden, NotFound
from jackpot.money import ledger, locks
from jackpot.staff import authority, duties
from tables.club import snapshot
from tables.models import ClosedBy, ClubSession, SessionPool, SessionStatus, SessionTable

#: Who closes a session at the club day's end.
CLUB_DAY_ACTOR = "system:club_day"


def actor_of(user: User) -> str:
    return f"user:{user.get_username()}"


def may_act(user: User, *, doing: str) -> None:
    """403 unless `user` acts with a money role and configures nothing (the journal's roles)."""
    duties.refuse_configurer(user, doing=doing)
    roles = authority.acting_roles(user) or frozenset()
    if not roles.intersection(duties.MONEY_ROLES):
        raise Forbidden(
            "permission_denied", f"only a supervisor or a manager may {doing}", param=None
        )


def _day_end_time() -> time:
    hour, minute = (int(part) for part in settings.CLUB_DAY_ENDS_AT.split(":"))
    return time(hour, minute)


def club_day(moment: datetime) -> date:
    """The club day `moment` falls on: its local date, the day before when it is earlier than
    the day's end (CLUB_DAY_ENDS_AT): a session opened at 02:00 belongs to the evening before."""
    local = timezone.localtime(moment)
    return local.date() - timedelta(days=1) if local.time() < _day_end_time() else local.date()


def day_end(day: date) -> datetime:
    """When the club day `day` ends: CLUB_DAY_ENDS_AT on the next local date."""
    return timezone.make_aware(
        datetime.combine(day + timedelta(days=1), _day_end_time()),
        timezone.get_current_timezone(),
    )


def session_row(session_id: int) -> ClubSession:
    session = ClubSession.objects.filter(pk=session_id).first()
    if session is None:
        raise NotFound("session_not_found", f"no session {session_id}", param="session")
    return session


@locks.retried
@transaction.atomic(durable=True)
def open_session(*, user: User) -> ClubSession:
    """Open the club's next session: 409 `session_open` while one is open."""
    may_act(user, doing="open a session")
    slot = locks.chain_slot(ledger.CLUB_CHAIN)
    current = ClubSession.objects.filter(status=SessionStatus.OPEN).first()
    if current is not None:
        raise Conflict(
            "session_open",
            f"session {current.number} is open: it is closed before another opens",
            param=None,
        )
    now = timezone.now()
    number = (ClubSession.objects.aggregate(top=Max("number"))["top"] or 0) + 1
    at = snapshot.cut()
    session = ClubSession.objects.create(
        number=number,
        club_day=club_day(now),
        opened_at=now,
        opened_by=actor_of(user),
        opened_heads=at.heads,
    )
    ledger.record(
        chain=slot,
        kind="session.opened",
        actor=session.opened_by,
        occurred_at=now,
        payload={
            "session": session.pk,
            "number": number,
            "club_day": session.club_day.isoformat(),
            "heads": at.heads,
        },
    )
    return session


@locks.retried
@transaction.atomic(durable=True)
def close_session(
    *, session_id: int, user: User | None, how: ClosedBy = ClosedBy.SUPERVISOR
) -> ClubSession:
    """Close a session with its snapshot: by `user` (a supervisor or a manager), or at the club
    day's end (`how=ClosedBy.CLUB_DAY`, no user). 409 `session_closed` if it is closed."""
    if how == ClosedBy.SUPERVISOR:
        if user is None:
            raise ValueError("a supervisor's close names the supervisor")
        may_act(user, doing="close a session")
    slot = locks.chain_slot(ledger.CLUB_CHAIN)
    session = session_row(session_id)
    if session.status != SessionStatus.OPEN:
        raise Conflict("session_closed", f"session {session.number} is closed", param="session")
    actor = actor_of(user) if user is not None and how == ClosedBy.SUPERVISOR else CLUB_DAY_ACTOR
    return _close(session, slot, actor=actor, how=how)


def _close(
    session: ClubSession, slot: locks.ChainSlot, *, actor: str, how: ClosedBy
) -> ClubSession:
    now = timezone.now()
    at = snapshot.cut()
    found = snapshot.figures(opened_at=session.opened_at, opened_heads=session.opened_heads, at=at)
    session.status = SessionStatus.CLOSED
    session.closed_at, session.closed_by, session.closed_how = now, actor, how
    session.closed_heads = at.heads
    session.save(update_fields=["status", "closed_at", "closed_by", "closed_how", "closed_heads"])
    SessionTable.objects.bulk_create(
        SessionTable(
            session=session,
            table_id=line.table,
            pool_id=line.pool,
            **{k: v for k, v in line.as_payload().items() if k not in ("table", "pool")},
        )
        for line in found.tables
    )
    SessionPool.objects.bulk_create(
        SessionPool(
            session=session,
            pool_id=line.pool,
            **{k: v for k, v in line.as_payload().items() if k != "pool"},
        )
        for line in found.pools
    )
    ledger.record(
        chain=slot,
        kind="session.closed",
        actor=actor,
        occurred_at=now,
        payload={
            "session": session.pk,
            "number": session.number,
            "closed_how": str(how),
            "heads": at.heads,
            "tables": [line.as_payload() for line in found.tables],
            "pools": [line.as_payload() for line in found.pools],
        },
    )
    return session


@locks.retried
@transaction.atomic(durable=True)
def close_at_day_end(*, now: datetime | None = None) -> ClubSession | None:
    """Close the open session if the club day it opened on has ended (beat's task): the closed
    session, or None (none open, its day not over, or CLUB_SESSION_CLOSES_AT_DAY_END off). Safe
    to run twice and by two workers at once: the `club` head serializes them and the second
    finds nothing open."""
    if not settings.CLUB_SESSION_CLOSES_AT_DAY_END:
        return None
    slot = locks.chain_slot(ledger.CLUB_CHAIN)
    session = ClubSession.objects.filter(status=SessionStatus.OPEN).first()
    if session is None or (now or timezone.now()) < day_end(session.club_day):
        transaction.set_rollback(True)  # the head's slot was taken for nothing
        return None
    return _close(session, slot, actor=CLUB_DAY_ACTOR, how=ClosedBy.CLUB_DAY)
