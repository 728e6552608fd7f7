"""Significant events: what a regulator wants told, each under a stable code.

The catalogue (`CATALOGUE`, docs/operations.md "Significant events") names each kind of event a
regulator calls significant: a code that never changes meaning (`SE01`...; a retired code is never
given to another event), a name, and the journal event that records it. Recording one is writing
that journal event (`jackpot.money.ledger.record`), which calls `follow` inside the same
transaction:

- its signed webhook (topic `significant_event`, through the outbox: sent after the commit, once
  per event, keyed by the event's chain and position);
- its count in /metrics (`jackpot_significant_events_total{code}`), after the commit only;
- the security log, as every parameter or access change is (`ledger.SECURITY_KINDS`).

So an event is told exactly when its journal entry commits, by whatever wrote it, and the list
(`event_page`, `GET /api/v1/events`) is the journal itself read by kind and time: the index on
the events' (kind, occurred_at) makes a range cost that range, whatever the journal's age.

Each event carries the server's UTC time and, where there is one, its table (`payload["table"]`)
and pool (`payload["pool"]`, or the pool chain's). The payload of a significant event never holds
a winner's identity or a secret: it is sent to every webhook receiver.

Invariants: codes and kinds are one to one; `follow` writes one outbox row and nothing else in
the caller's transaction (no lock, no read); nothing is told for a rolled-back transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.db import transaction

from core import metrics
from jackpot.models import AuditEvent
from jackpot.notifications import outbox


class EventCode(StrEnum):
    """The catalogue's codes: stable, never given to another event."""

    TERMINAL_SILENT = "SE01"
    BOOKS_MISMATCH = "SE02"
    BOOKS_AGREE_AGAIN = "SE03"
    PARAMETERS_CHANGED = "SE04"
    TABLE_CHANGED = "SE05"
    POOL_SUSPENDED = "SE06"
    POOL_RESUMED = "SE07"
    POOL_STOPPED = "SE08"
    DATABASE_RESTORED = "SE09"
    VOID_RATE_ALARM = "SE10"
    AWARD_RATE_ALARM = "SE11"
    SURVEILLANCE_REFERRAL = "SE12"
    SECOND_FACTOR_ENROLLED = "SE13"
    SECOND_FACTOR_RESET = "SE14"
    RECOVERY_CODES_ISSUED = "SE15"
    SECOND_FACTOR_MISSING = "SE16"
    TERMINAL_ISSUED = "SE17"
    AWARD_ODDS_ALARM = "SE18"
    DROP_DIFFERENCE = "SE19"
    POOL_CORRECTED = "SE20"
    # The code proved (compliance 59).
    CODE_MISMATCH = "SE21"
    # The progressive's life (compliance 57, 58): jackpot.pools.notices, jackpot.pools.orphans.
    NOTICE_OVERDUE = "SE22"
    ORPHANS_FINAL = "SE23"


@dataclass(frozen=True, slots=True)
class EventType:
    code: EventCode
    kind: str  # the journal event that records it
    title: str  # what happened, for the catalogue and the pages

    @property
    def name(self) -> str:
        return self.code.name.lower()


CATALOGUE: tuple[EventType, ...] = (
    EventType(
        EventCode.TERMINAL_SILENT,
        "terminal.silent",
        "A table open for play whose terminal has posted nothing for TERMINAL_SILENT_SECONDS",
    ),
    EventType(
        EventCode.BOOKS_MISMATCH,
        "reconciliation.failed",
        "A reconciliation found the meter, the reserve or an award differing from the journal",
    ),
    EventType(
        EventCode.BOOKS_AGREE_AGAIN,
        "reconciliation.recovered",
        "The reconciliation agrees with the journal again after a mismatch",
    ),
    EventType(
        EventCode.PARAMETERS_CHANGED,
        "pool.changed",
        "A pool's parameters changed (stake, shares, seed, threshold, paytable): an approved "
        "two-person change",
    ),
    EventType(
        EventCode.TABLE_CHANGED,
        "table.changed",
        "A table opened or closed for play, renamed, or moved to another pool",
    ),
    EventType(
        EventCode.POOL_SUSPENDED,
        "pool.suspended",
        "A progressive suspended (a technical fault): tables play on without it",
    ),
    EventType(EventCode.POOL_RESUMED, "pool.resumed", "A suspended progressive resumed"),
    EventType(
        EventCode.POOL_STOPPED,
        "pool.stopped",
        "A progressive stopped for good, its liability moved to another pool or the orphan "
        "account (an approved two-person change)",
    ),
    EventType(
        EventCode.DATABASE_RESTORED,
        "database.restored",
        "The service runs on another copy of its database than before (a restored backup)",
    ),
    EventType(
        EventCode.VOID_RATE_ALARM,
        "integrity.void_rate",
        "A table's voids improbably many against the other tables' in the same shifts",
    ),
    EventType(
        EventCode.AWARD_RATE_ALARM,
        "integrity.award_rate",
        "A table's or pool's awards of a kind improbably many for the stakes played",
    ),
    EventType(
        EventCode.SURVEILLANCE_REFERRAL,
        "award.referred",
        "Surveillance referred an award after its video review: payment waits for a manager",
    ),
    EventType(
        EventCode.SECOND_FACTOR_ENROLLED,
        "staff.second_factor_enrolled",
        "A staff member enrolled a second factor (a new TOTP key), with a second admin's "
        "activation code",
    ),
    EventType(
        EventCode.SECOND_FACTOR_RESET,
        "staff.second_factor_reset",
        "A staff member's second factor was reset: an approved two-person change",
    ),
    EventType(
        EventCode.RECOVERY_CODES_ISSUED,
        "staff.recovery_codes_issued",
        "A staff member was issued new recovery codes (the old ones stop working)",
    ),
    EventType(
        EventCode.SECOND_FACTOR_MISSING,
        "staff.second_factor_missing",
        "A sign-in refused: the journal says the person enrolled a second factor, no device is "
        "left in the database (deleted or changed outside the service)",
    ),
    EventType(
        EventCode.TERMINAL_ISSUED,
        "terminal.issued",
        "A terminal token issued for a table: an approved two-person change (or the operator's "
        "setup)",
    ),
    EventType(
        EventCode.AWARD_ODDS_ALARM,
        "integrity.award_odds",
        "A table's or terminal's awards of a kind improbably many for the boxes that played it "
        "in a sliding window (binomial tail of the PAR sheet's odds below AWARD_ODDS_THRESHOLD)",
    ),
    EventType(
        EventCode.DROP_DIFFERENCE,
        "session.drop_difference",
        "A table's drop box, counted by two people at a session's end, differs from the "
        "progressive stakes the journal says it withheld",
    ),
    EventType(
        EventCode.POOL_CORRECTED,
        "pool.corrected",
        "A documented correction of a pool's meter, reserve or an award's amount: a new "
        "compensating entry with its reason and the regulator's reference, approved by two people",
    ),
    # The code proved (compliance 59): the start-up gate's item `code` (jackpot.audit.code).
    EventType(
        EventCode.CODE_MISMATCH,
        "code.mismatch",
        "The start-up gate found the installed code's digest not the approved one "
        "(JACKPOT_CODE_SHA256), or none approved where one is required: the service stays closed",
    ),
    # The progressive's life (compliance 57, 58).
    EventType(
        EventCode.NOTICE_OVERDUE,
        "notice.overdue",
        "A notice to the authorities (a suspension, a stop) not recorded sent by its deadline",
    ),
    EventType(
        EventCode.ORPHANS_FINAL,
        "orphans.final",
        "A stopped progressive's orphans final: its season ended before anyone recovered them",
    ),
)

BY_KIND: Mapping[str, EventType] = {event.kind: event for event in CATALOGUE}
BY_CODE: Mapping[str, EventType] = {event.code: event for event in CATALOGUE}
KINDS = frozenset(BY_KIND)
assert len(BY_CODE) == len(BY_KIND) == len(CATALOGUE), "codes and kinds are one to one"


def _pool_of(event: AuditEvent) -> int | None:
    pool = event.payload.get("pool") if isinstance(event.payload, dict) else None
    if isinstance(pool, int):
        return pool
    prefix, _, number = event.chain.partition("-")
    return int(number) if prefix == "pool" and number.isdigit() else None


def told(event: AuditEvent) -> dict[str, Any]:
    """What is told of a significant event (the webhook's data, a row of the list)."""
    kind = BY_KIND[event.kind]
    payload = event.payload if isinstance(event.payload, dict) else {}
    table = payload.get("table")
    return {
        "code": kind.code,
        "name": kind.name,
        "kind": event.kind,
        "occurred_at": event.occurred_at,
        "table": table if isinstance(table, int) else None,
        "pool": _pool_of(event),
        "actor": event.actor,
        "chain": event.chain,
        "sequence": event.sequence,
        "hash": event.hash,
        "detail": payload,
    }


def webhook_data(event: AuditEvent) -> dict[str, Any]:
    """The `data` of a significant event's webhook: `told`, its time as the API writes it. The
    worker builds it again from the journal's event before signing
    (`jackpot.audit.outbox_journal`)."""
    return {**told(event), "occurred_at": event.occurred_at.isoformat()}


def follow(event: AuditEvent) -> None:
    """Inside the transaction that wrote `event` (one of the catalogue's): its webhook, and its
    count once committed."""
    code = BY_KIND[event.kind].code.value
    data = webhook_data(event)
    outbox.enqueue(outbox.SIGNIFICANT_EVENT, data, key=f"event:{event.chain}:{event.sequence}")
    transaction.on_commit(lambda: metrics.SIGNIFICANT_EVENTS.labels(code).inc(), robust=True)
