"""The floor's watch: what beat looks at every WATCH_SECONDS and records as significant events
(`jackpot.notifications.significant`) when it sees it.

- **A silent terminal** (SE01, `terminal.silent`): a table open for play (enabled, with a
  terminal not revoked) at which nothing has happened for TERMINAL_SILENT_SECONDS: no round
  opened, settled or voided, and the table not opened for play again since. What happened last
  is the newest of: the table's latest round opened (an open round's `opened_at`) or closed (a
  decided round's `closed_at`), the table's last `table.changed` event that opened it for play,
  and its creation. One event per silence: a silence already recorded (the same table, the same
  last activity) is not recorded again, whatever the number of watches or workers.
- **Another copy of the database** (SE09, `database.restored`): the database's life is its
  identity token (`jackpot.models.DatabaseIdentity`, which a backup carries) and its OID (which
  a restore into a new database changes, and a standby promoted by a failover keeps). The first
  watch records it (`database.identified`); a later watch that finds another records SE09 with
  both. A restore of a physical backup into the same cluster's files (PITR) keeps the OID and is
  not seen here: the operator's procedure records it (docs/operations.md).

- **Improbable award odds** (SE18, `integrity.award_odds`): every table that settled a round in
  the last AWARD_ODDS_WINDOW_HOURS, and each of its terminals, tested against the PAR sheet's odds
  (`tables.audit.award_odds`), which a settlement's task does too as soon as it commits: the watch
  makes up for a task Redis lost.

Cost: three index probes per open table (its latest round in each state, the index
`round_table_state_opened`) and one of the events' (kind, occurred_at) index for its last
opening and for a silence already recorded: a handful of tables, never the journal's age.
Concurrency: the watch's transaction takes an advisory lock, so two watches at once record a
silence once.
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
