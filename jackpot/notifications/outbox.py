"""The transactional outbox: work that follows a money movement, recorded with the money, relayed
to Celery after the commit, swept by beat when the relay was missed. `enqueue` runs in the
money's transaction; a worker runs `relay`; beat runs `sweep`; each topic's work is a handler
(`HANDLERS`: today the signed webhooks).

Invariants:
- money never waits: `enqueue` is one INSERT, nothing talks to Redis before the commit;
- a message is enqueued once (its `key` is unique: `ON CONFLICT DO NOTHING`);
- Redis never holds the only trace of work: the sweeper resends what was never relayed;
- a relay claims its message by one UPDATE with a lease; a message done is never relayed again;
- a message's work uses only what its journal event says (`vouch`); one refused is never handled;
- a message keeps the request id of the request that wrote it.

Each rule in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import DateTimeField, ExpressionWrapper, F, Q
from django.db.models.functions import Now
from django.utils import timezone

from core import request_id
from core.dispatch import send, send_after_commit
from jackpot.models import OutboxMessage, OutboxStatus
from jackpot.notifications import webhooks

logger = logging.getLogger(__name__)
security_log = logging.getLogger("jackpot.security")

RELAY_TASK = "jackpot.relay_outbox"
ERROR_CHARACTERS = 2000
SWEEP_BATCH = 500  # messages sent again per sweep at most; the next sweep takes the rest

BIG_WIN = "award.big_win"  # an award at or above NOTIFY_AWARD_CENTS
JACKPOT_HIT = "award.jackpot_hit"  # a jackpot royal, whatever its amount
SIGNIFICANT_EVENT = (
    "significant_event"  # one of jackpot.notifications.significant's catalogue was recorded
)
# The reconciliation's own topics, before its alerts became significant events: kept so that
# messages written by an older build are still relayed.
RECONCILIATION_FAILED = "reconciliation.failed"
RECONCILIATION_RECOVERED = "reconciliation.recovered"

#: What each topic's message does when relayed, given the data its journal event vouches for. A
#: handler is idempotent and says whether the work is finished and, if not, when to try again.
HANDLERS: Mapping[str, Callable[[OutboxMessage, Mapping[str, Any]], webhooks.Delivered]] = {
    BIG_WIN: webhooks.deliver,
    JACKPOT_HIT: webhooks.deliver,
    SIGNIFICANT_EVENT: webhooks.deliver,
    RECONCILIATION_FAILED: webhooks.deliver,
    RECONCILIATION_RECOVERED: webhooks.deliver,
}


def _in(seconds: float) -> ExpressionWrapper:
    return ExpressionWrapper(Now() + timedelta(seconds=seconds), output_field=DateTimeField())


# --- enqueueing (in the money's transaction) ----------------------------------------------------

_TABLE = OutboxMessage._meta.db_table
_COLUMNS = (
    "key, topic, payload, status, attempts, last_error, request_id, created_at, next_attempt_at"
)
#: PostgreSQL: one statement, times on the database's clock.
_INSERT_POSTGRESQL = (
    f"INSERT INTO {_TABLE} ({_COLUMNS})"
    " VALUES (%s, %s, %s::jsonb, %s, 0, '', %s, now(), now() + make_interval(secs => %s))"
    " ON CONFLICT (key) DO NOTHING RETURNING id"
)
#: SQLite (`make run` without DATABASE_URL, development only): the same, on this process's clock.
_INSERT_OTHER = (
    f"INSERT INTO {_TABLE} ({_COLUMNS}) VALUES (%s, %s, %s, %s, 0, '', %s, %s, %s)"
    " ON CONFLICT (key) DO NOTHING RETURNING id"
)


def enqueue(topic: str, payload: Mapping[str, object], *, key: str) -> int | None:
    """Record `payload` for `topic` in the caller's transaction, once per `key`, and ask for its
    relay after the commit. The new message's id, or None when `key` was enqueued before."""
    if topic not in HANDLERS:
        raise ValueError(f"outbox: no handler for topic {topic!r}")
    body = json.dumps(payload, sort_keys=True)
    values: list[str | int | None] = [
        key,
        topic,
        body,
        OutboxStatus.PENDING,
        request_id.current() or "",
    ]
    resend = settings.OUTBOX_RESEND_AFTER_SECONDS
    if connection.vendor == "postgresql":
        statement = _INSERT_POSTGRESQL
        values.append(resend)
    else:
        statement = _INSERT_OTHER
        now = timezone.now()
        adapt = connection.ops.adapt_datetimefield_value
        values += [adapt(now), adapt(now + timedelta(seconds=resend))]
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        row = cursor.fetchone()
    if row is None:
        return None
    message_id = int(row[0])
    send_after_commit(RELAY_TASK, message_id)
    return message_id


# --- relaying (a worker) ------------------------------------------------------------------------


class Refused(Exception):
    """No authentic journal event vouches for the message as its row stands: never done."""


#: The relay's check of a message against its journal event: the data to deliver, or `Refused`.
Vouch = Callable[[OutboxMessage], Mapping[str, Any]]


class Relayed(StrEnum):
    """What one run of the relay task did."""

    DONE = "done"  # the work is finished: the message is done
    REFUSED = "refused"  # no authentic journal event vouches for it: refused for good
    RETRY = "retry"  # some of it is left (a receiver failed): the sweeper sends it again
    LEFT_ALONE = "left_alone"  # done already, claimed by a live relay, or no such message
    FAILED = "failed"  # the handler raised: recorded, the sweeper sends it again


def _ready() -> Q:
    return Q(status=OutboxStatus.PENDING) & (
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=Now())
    )


def relay(message_id: int, vouch: Vouch) -> Relayed:
    """Do message `message_id`'s work, with the data `vouch` says its journal event holds, if no
    live relay holds it and it is not done; safe to run any number of times, at once or one
    after the other (see the module's invariants)."""
    token = uuid.uuid4()
    lease = settings.OUTBOX_LEASE_SECONDS
    claimed = OutboxMessage.objects.filter(_ready(), pk=message_id).update(
        claim=token,
        claimed_until=_in(lease),
        next_attempt_at=_in(lease),  # the sweeper leaves it alone while the lease lives
        attempts=F("attempts") + 1,
    )
    if not claimed:
        logger.info("outbox %s left alone: done, or a relay holds it", message_id)
        return Relayed.LEFT_ALONE
    message = OutboxMessage.objects.get(pk=message_id)
    # Its work is logged as the request that wrote it, however late (a sweeper's resend).
    with request_id.bound(message.request_id or request_id.current()):
        return _relay_claimed(message, token, vouch)


def _relay_claimed(message: OutboxMessage, token: uuid.UUID, vouch: Vouch) -> Relayed:
    message_id = message.pk
    mine = OutboxMessage.objects.filter(pk=message_id, claim=token, status=OutboxStatus.PENDING)
    try:
        data = vouch(message)
        outcome = HANDLERS[message.topic](message, data)
    except Refused as refused:
        # Not transient: the journal will not say otherwise later. Nothing was signed.
        reason = f"refused: {refused}"[:ERROR_CHARACTERS]
        mine.update(
            status=OutboxStatus.REFUSED,
            done_at=Now(),
            last_error=reason,
            claim=None,
            claimed_until=None,
        )
        security_log.warning(
            "outbox %s (%s %s) not delivered: %s", message_id, message.topic, message.key, reason
        )
        return Relayed.REFUSED
    except Exception as error:
        logger.exception("outbox %s (%s) failed", message_id, message.topic)
        mine.update(
            last_error=f"{type(error).__name__}: {error}"[:ERROR_CHARACTERS],
            next_attempt_at=_in(webhooks.backoff_seconds(message.attempts)),
            claim=None,
            claimed_until=None,
        )
        return Relayed.FAILED
    if outcome.done:
        mine.update(
            status=OutboxStatus.DONE, done_at=Now(), last_error="", claim=None, claimed_until=None
        )
        logger.info("outbox %s (%s %s) done", message_id, message.topic, message.key)
        return Relayed.DONE
    mine.update(next_attempt_at=_retry_at(outcome.next_attempt_at), claim=None, claimed_until=None)
    return Relayed.RETRY


def _retry_at(wanted: datetime | None) -> datetime | ExpressionWrapper:
    """When the sweeper sends a message whose work is left: its handler's earliest retry (a
    delivery's backoff), or in OUTBOX_RESEND_AFTER_SECONDS when it named none."""
    return wanted if wanted is not None else _in(settings.OUTBOX_RESEND_AFTER_SECONDS)


# --- sweeping (beat) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Swept:
    resent: list[int]


def sweep() -> Swept:
    """Send again every pending message that is due (`next_attempt_at` past) and held by no live
    relay, each at most once per OUTBOX_RESEND_AFTER_SECONDS: the UPDATE that moves its next
    attempt on is the claim to send, so two sweepers never both send one message."""
    due = _ready() & Q(next_attempt_at__lte=Now())
    ids = list(
        OutboxMessage.objects.filter(due)
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    resent = []
    for message_id in ids:
        moved = OutboxMessage.objects.filter(due, pk=message_id).update(
            next_attempt_at=_in(settings.OUTBOX_RESEND_AFTER_SECONDS)
        )
        if moved:
            send(RELAY_TASK, message_id)
            resent.append(message_id)
    if resent:
        logger.info("outbox swept: sent again %s", resent)
    return Swept(resent=resent)
