"""The floor's watch: what beat looks at every WATCH_SECONDS and records as significant events
(`jackpot.notifications.significant`): a silent terminal (SE01, nothing at a table open for play
for TERMINAL_SILENT_SECONDS), another copy of the database (SE09, its identity token or OID
changed), improbable award odds (SE18, `tables.audit.award_odds`, making up for a lost task).

Invariants:
- one event per silence, whatever the number of watches or workers (an advisory lock);
- a few index probes per open table: never the journal's age;
- a PITR restore into the same cluster keeps the OID and is not seen here (the operator's
  procedure records it).

The rules in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from jackpot.models import AuditEvent, DatabaseIdentity
from jackpot.money import ledger, locks
from tables.audit.award_odds import check_award_odds
from tables.models import Round, RoundState, Table

ACTOR = "system:watch"
SILENT = "terminal.silent"


@dataclass(frozen=True, slots=True)
class Watched:
    silent_tables: list[int]  # the tables whose silence this watch recorded
    restored: bool
    award_odds: list[int] = field(default_factory=list)  # the alarms' events it recorded


def _opened_for_play(table: Table) -> datetime | None:
    """When the table was last opened for play (its `table.changed` event turning `enabled` on)."""
    found = (
        AuditEvent.objects.filter(
            kind="table.changed", payload__table=table.pk, payload__after__enabled=True
        )
        .order_by("-occurred_at")
        .values_list("occurred_at", flat=True)
        .first()
    )
    return found


def last_activity(table: Table) -> datetime:
    """What happened last at `table` (the module's docstring)."""
    moments = [table.created_at]
    for state in RoundState:
        latest = (
            Round.objects.filter(table=table, state=state)
            .order_by("-opened_at")
            .values_list("opened_at", "closed_at")
            .first()
        )
        if latest is not None:
            moments.extend(moment for moment in latest if moment is not None)
    opened = _opened_for_play(table)
    if opened is not None:
        moments.append(opened)
    return max(moments)


def _already_told(table: Table, since: datetime) -> bool:
    return AuditEvent.objects.filter(
        kind=SILENT,
        occurred_at__gte=since,  # a silence is told after it began: the index bounds the read
        payload__table=table.pk,
        payload__silent_since=since.isoformat(),
    ).exists()


def silent_tables(now: datetime) -> list[int]:
    """Record SE01 for each open table silent past the limit and not yet recorded; their ids.
    Runs inside the watch's transaction."""
    limit = timedelta(seconds=settings.TERMINAL_SILENT_SECONDS)
    recorded = []
    tables = Table.objects.filter(enabled=True, terminals__revoked_at__isnull=True).distinct()
    for table in tables.order_by("pk"):
        since = last_activity(table)
        if now - since < limit or _already_told(table, since):
            continue
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind=SILENT,
            actor=ACTOR,
            occurred_at=now,
            payload={
                "table": table.pk,
                "table_name": table.name,
                "pool": table.pool_id,
                "silent_since": since.isoformat(),
                "limit_seconds": settings.TERMINAL_SILENT_SECONDS,
            },
        )
        recorded.append(table.pk)
    return recorded


IDENTIFIED = "database.identified"
RESTORED = "database.restored"


def database_life() -> dict[str, str] | None:
    """This database's life (the module's docstring); None off PostgreSQL."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT oid::text FROM pg_database WHERE datname = current_database()")
        (oid,) = cursor.fetchone()
    identity, _ = DatabaseIdentity.objects.get_or_create(pk=1, defaults={"token": uuid.uuid4()})
    return {"token": str(identity.token), "oid": oid}


def note_database_life() -> bool:
    """Record the database's life the first time, SE09 when it is not the last one recorded;
    whether it recorded SE09."""
    life = database_life()
    if life is None:
        return False
    last = (
        AuditEvent.objects.filter(kind__in=(IDENTIFIED, RESTORED))
        .order_by("-occurred_at", "-pk")
        .values_list("payload", flat=True)
        .first()
    )
    if last is not None and last.get("life") == life:
        return False
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=IDENTIFIED if last is None else RESTORED,
        actor=ACTOR,
        payload={"life": life, **({} if last is None else {"before": last.get("life")})},
    )
    return last is not None


def watch(*, now: datetime | None = None) -> Watched:
    """One watch of the floor (the module's docstring)."""
    now = now or timezone.now()
    with transaction.atomic():
        locks.advisory(locks.Advisory.FLOOR_WATCH)
        silent = silent_tables(now)
        restored = note_database_life()
        odds = check_award_odds(now=now)
    return Watched(silent_tables=silent, restored=restored, award_odds=odds)
