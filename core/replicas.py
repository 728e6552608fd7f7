"""Which database a query reads: the primary, unless the code asked for the standby.

A standby (DATABASE_REPLICA_URL, the `replica` alias) takes the auditors' heavy reads off the
primary: the full verification of the journal, the anchors, the payout log's exports, a pool's
history (docs/operations.md "High availability"). It is a choice the code makes where it reads,
never a guess by model: a read runs on the standby only inside `replica_reads()` (or through
`on_replica()` for a stream consumed after its view has returned), and only when a standby is
configured.

Invariants:
- every write goes to the primary, inside `replica_reads()` too (`db_for_write`), as does a
  locking read (`select_for_update` is a write's query for Django's router); raw SQL that reads
  takes its connection from `reading()`, raw SQL that writes keeps `django.db.connection`;
- a block on the standby reads at least what the primary had committed when the block began:
  on entering, the standby's replay position is waited for (CATCH_UP_S at most) to reach the
  primary's; a standby that lags further, or cannot be reached, leaves the block on the primary.
  Synchronous replication acknowledges a commit once the standby has it on disk, which is not yet
  once it is visible there: without this wait, an export asked for just after an award could miss
  it;
- nothing a terminal reads, nothing a money decision reads, ever reads the standby: the terminals'
  instances run without a standby's address (deploy/cluster/up.sh), and the code that moves
  money never enters `replica_reads()`;
- migrations run on the primary only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

REPLICA = "replica"
CATCH_UP_S = 5.0
T = TypeVar("T")

logger = logging.getLogger(__name__)

# The alias this block reads (None: no block, the primary).
_reads: ContextVar[str | None] = ContextVar("replica_reads", default=None)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def reading_alias() -> str:
    """The database reads go to now: the standby inside `replica_reads()` when it serves the
    block, else the primary."""
    return _reads.get() or DEFAULT_DB_ALIAS


def reading() -> BaseDatabaseWrapper:
    """The connection a raw SQL read takes (the ORM's go through `ReplicaRouter`)."""
    return connections[reading_alias()]


def _caught_up() -> bool:
    """Whether the standby has replayed what the primary has committed now (CATCH_UP_S at
    most); False when it cannot be reached."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            (position,) = cursor.fetchone()
        deadline = time.monotonic() + CATCH_UP_S
        with connections[REPLICA].cursor() as cursor:
            while True:
                cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [position])
                if cursor.fetchone()[0]:
                    return True
                if time.monotonic() > deadline:
                    logger.warning(
                        "the standby is behind %s after %s s: read on the primary",
                        position,
                        CATCH_UP_S,
                    )
                    return False
                time.sleep(0.02)
    except DatabaseError as error:
        logger.warning("the standby cannot be read (%s): read on the primary", error)
        connections[REPLICA].close()
        return False


def _chosen() -> str:
    return REPLICA if replica_configured() and _caught_up() else DEFAULT_DB_ALIAS


@contextmanager
def replica_reads() -> Iterator[None]:
    """Reads in this block run on the standby when one is configured and caught up; writes
    never do. Inside another block, that block's choice holds."""
    if _reads.get() is not None:
        yield
        return
    token = _reads.set(_chosen())
    try:
        yield
    finally:
        _reads.reset(token)


def on_replica(rows: Iterable[T]) -> Iterator[T]:
    """`rows` consumed with each step on the standby (chosen once, at the first): for a
    response streamed after its view returned, when a `replica_reads()` block would be over."""
    iterator = iter(rows)
    alias = None
    while True:
        alias = alias or _reads.get() or _chosen()
        token = _reads.set(alias)
        try:
            row = next(iterator)
        except StopIteration:
            return
        finally:
            _reads.reset(token)
        yield row


class ReplicaRouter:
    """Django's router (DATABASE_ROUTERS)."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        return reading_alias()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, first: Any, second: Any, **hints: Any) -> bool:
        return True  # the same rows on both: the standby is a copy of the primary

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
