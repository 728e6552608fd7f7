"""A table's drop box counted for a closed session by two people (compliance 54).

One person counts (`count_drop`, again as often as needed until it is confirmed: each a new
`session.drop_counted` event, the row following the latest); another enters the amount blind
with a fresh second-factor code (`confirm_drop`). Equal counts confirm it, with its difference
against the stakes the session's snapshot says the table withheld; a difference is a significant
event (SE19), recorded, never corrected.

Invariants:
- who counted is read from the latest AUTHENTIC `session.drop_counted` event of the box, never
  from the row (which the service's database role can write): the confirmer is another person
  (403 `four_eyes`), and a row that differs from that event is refused (409 `count_unexplained`);
- a disagreeing blind count confirms nothing and writes nothing (409 `count_disagrees`);
- each step is one durable transaction after the `club` chain's head (`Lock.CLUB_CHAIN`); an
  account that configures never counts (`jackpot.staff.duties`).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Sum
from django.db.models.fields.json import KT
from django.utils import timezone

from core.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot.approvals.presence import Presence, presence_refused
from jackpot.models import AuditEvent
from jackpot.money import ledger, locks
from tables.club.sessions import actor_of, may_act, session_row
from tables.models import ClubSession, DropCount, SessionStatus, SessionTable, Table

COUNTED, CONFIRMED, DIFFERENCE = (
    "session.drop_counted",
    "session.drop_confirmed",
    "session.drop_difference",
)


def _amount(counted_cents: object) -> int:
    if isinstance(counted_cents, bool) or not isinstance(counted_cents, int) or counted_cents < 0:
        raise ApiError(
            "invalid_request",
            "counted_cents must be a whole number of cents, 0 or more",
            param="counted_cents",
        )
    return counted_cents


def _closed_session(session_id: int) -> ClubSession:
    session = session_row(session_id)
    if session.status != SessionStatus.CLOSED:
        raise Conflict(
            "session_not_closed",
            f"session {session.number} is open: its drop boxes are counted once it is closed",
            param="session",
        )
    return session


def expected_cents(session: ClubSession, table_id: int) -> int:
    """What the session's snapshot says the table withheld, all its pools: 404 when the
    snapshot has no line for it."""
    lines = SessionTable.objects.filter(session=session, table_id=table_id)
    total = lines.aggregate(total=Sum("withheld_cents"))["total"]
    if total is None:
        if not Table.objects.filter(pk=table_id).exists():
            raise NotFound("table_not_found", f"no table {table_id}", param="table")
        raise NotFound(
            "table_not_in_session",
            f"session {session.number} took no progressive stake at table {table_id}",
            param="table",
        )
    return int(total)


def latest_count(session: ClubSession, table_id: int) -> AuditEvent | None:
    """The latest `session.drop_counted` event of the box, if it is authentic; None when there
    is none or it does not verify. Read down the events' (kind, occurred_at) index from the
    session's close: a close time moved later by SQL hides the count, and nothing is confirmed."""
    if session.closed_at is None:
        return None
    event = (
        AuditEvent.objects.filter(
            chain=ledger.CLUB_CHAIN, kind=COUNTED, occurred_at__gte=session.closed_at
        )
        .alias(session=KT("payload__session"), table=KT("payload__table"))
        .filter(session=str(session.pk), table=str(table_id))
        .order_by("-sequence")
        .first()
    )
    return event if event is not None and ledger.authentic(event) else None


def _unexplained(row: DropCount, event: AuditEvent | None) -> bool:
    """Whether the row differs from the latest authentic count of its box (or there is none)."""
    if event is None:
        return True
    said = event.payload
    return (
        row.counted_cents != said.get("counted_cents")
        or row.expected_cents != said.get("expected_cents")
        or row.counted_by != event.actor
        or row.confirmed_at is not None
    )


def _refuse_unexplained(session: ClubSession, table_id: int) -> None:
    raise Conflict(
        "count_unexplained",
        f"the count of table {table_id}'s drop box for session {session.number} is not what its "
        "event in the journal says: nothing is done over it (the journal's verification names "
        "the difference)",
        param="table",
    )


@locks.retried
@transaction.atomic(durable=True)
def count_drop(*, session_id: int, table_id: int, counted_cents: object, user: User) -> DropCount:
    """The first person's count of a table's drop box for a closed session, or their recount
    while it is not confirmed (409 `drop_counted_by_another` for anyone else's)."""
    amount = _amount(counted_cents)
    may_act(user, doing="count a drop box")
    slot = locks.chain_slot(ledger.CLUB_CHAIN)
    session = _closed_session(session_id)
    expected = expected_cents(session, table_id)
    now, actor = timezone.now(), actor_of(user)
    row = DropCount.objects.filter(session=session, table_id=table_id).first()
    if row is not None:
        if row.confirmed_at is not None:
            raise Conflict(
                "drop_confirmed",
                f"table {table_id}'s drop box for session {session.number} is confirmed: a "
                "difference is recorded, never corrected",
                param="table",
            )
        first = latest_count(session, table_id)
        if _unexplained(row, first):
            _refuse_unexplained(session, table_id)
        assert first is not None
        if first.payload.get("counted_by_id") != user.pk:
            raise Conflict(
                "drop_counted_by_another",
                f"{first.actor} counted this drop box: they recount, or you confirm it",
                param="table",
            )
        row.counted_cents, row.counted_at, row.counted_by = amount, now, actor
        row.save(update_fields=["counted_cents", "counted_at", "counted_by"])
    else:
        row = DropCount.objects.create(
            session=session,
            table_id=table_id,
            counted_cents=amount,
            counted_by=actor,
            counted_at=now,
            expected_cents=expected,
        )
    ledger.record(
        chain=slot,
        kind=COUNTED,
        actor=actor,
        occurred_at=now,
        payload={
            "session": session.pk,
            "table": table_id,
            "counted_cents": amount,
            "expected_cents": expected,
            "counted_by_id": user.pk,
        },
    )
    return row


@locks.retried
@transaction.atomic(durable=True)
def confirm_drop(
    *,
    session_id: int,
    table_id: int,
    counted_cents: object,
    user: User,
    presence: Presence | None,
) -> DropCount:
    """A second person's blind count: equal to the first, the count is confirmed with its
    difference (SE19 when not zero); otherwise 409 `count_disagrees` and nothing changes."""
    amount = _amount(counted_cents)
    presence_refused(user, presence)
    may_act(user, doing="confirm a drop box's count")
    slot = locks.chain_slot(ledger.CLUB_CHAIN)
    session = _closed_session(session_id)
    expected_cents(session, table_id)  # 404 for a table the session has no line for
    row = DropCount.objects.filter(session=session, table_id=table_id).first()
    if row is None:
        raise Conflict(
            "drop_not_counted",
            f"table {table_id}'s drop box for session {session.number} has no count to confirm",
            param="table",
        )
    if row.confirmed_at is not None:
        raise Conflict(
            "drop_confirmed", f"table {table_id}'s drop box is confirmed already", param="table"
        )
    first = latest_count(session, table_id)
    if _unexplained(row, first):
        _refuse_unexplained(session, table_id)
    assert first is not None
    actor = actor_of(user)
    if first.payload.get("counted_by_id") == user.pk or first.actor == actor:
        raise Forbidden(
            "four_eyes",
            "the person who counted a drop box cannot also confirm it: another person counts it "
            "again, blind",
            param="table",
        )
    if amount != first.payload["counted_cents"]:
        raise Conflict(
            "count_disagrees",
            "your count differs from the first one: nothing is confirmed; the first person "
            "counts the box again",
            param="counted_cents",
        )
    now = timezone.now()
    row.confirmed_by, row.confirmed_at = actor, now
    row.difference_cents = row.counted_cents - row.expected_cents
    row.save(update_fields=["confirmed_by", "confirmed_at", "difference_cents"])
    facts = {
        "session": session.pk,
        "table": table_id,
        "counted_cents": row.counted_cents,
        "expected_cents": row.expected_cents,
        "difference_cents": row.difference_cents,
        "counted_by": first.actor,
        "confirmed_by_id": user.pk,
    }
    ledger.record(chain=slot, kind=CONFIRMED, actor=actor, occurred_at=now, payload=facts)
    if row.difference_cents != 0:
        ledger.record(
            chain=ledger.CLUB_CHAIN, kind=DIFFERENCE, actor=actor, occurred_at=now, payload=facts
        )
    return row
