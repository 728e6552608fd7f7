"""The concurrency contract: every row lock the service takes, and the one order they go in.

Invariants:
- every `SELECT ... FOR UPDATE` / `FOR KEY SHARE` and advisory lock is taken by a helper of this
  module; elsewhere a row is locked only by the statement that changes it (the pool's counters
  by `jackpot.money.meter`'s single `UPDATE`s); tests/concurrency/test_lock_order.py checks it;
- a transaction takes its locks in this order, never going back: TABLE, ROUND, AWARD,
  TABLE_CHAIN, POOL (taken last by a round's stakes: held only for one statement and the
  commit), POOL_CHAIN, CLUB_CHAIN, ADMIN_CHAIN, CHECKPOINT_CHAIN; rows no money path locks come
  first;
- a deadlock or serialization failure (40P01, 40001) runs the one durable transaction again,
  whole, a bounded number of times (`retried`, the one retry policy).

Each path's locks, and why no cycle of waits can form: docs/accounting.md, "The modules, in
detail".
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, unique
from typing import ParamSpec, TypeVar

from django.contrib.auth.models import Group, User
from django.db import OperationalError, connection
from django.db.models import Model, QuerySet

from core.errors import Conflict
from jackpot.models import AuditChain, Award, ParameterChange, Pool
from jackpot.money import rows

M = TypeVar("M", bound=Model)
P = ParamSpec("P")
R = TypeVar("R")

logger = logging.getLogger(__name__)

#: How many times a transaction PostgreSQL gave up on is run in all, and the longest pause
#: between two runs (a random part of it, so two transactions that collided do not again).
ATTEMPTS = 3
MAX_PAUSE_SECONDS = 0.05
_RETRYABLE = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected


def retryable(error: OperationalError) -> bool:
    """Whether PostgreSQL rolled the transaction back and asks for it to be run again."""
    return getattr(error.__cause__, "sqlstate", None) in _RETRYABLE


class StaleConflict(Conflict):
    """A 409 whose cause was gone when the transaction looked for it: a statement failed on a
    row (a unique index's) that changed before the transaction could name it. `retried` runs the
    transaction again, where the statement finds the state as it is now; past its attempts (or
    inside a caller's transaction) this 409 is the answer."""


def _why(error: Exception) -> str:
    if isinstance(error, StaleConflict):
        return error.code
    return str(getattr(error.__cause__, "sqlstate", "?"))


def retried(operation: Callable[P, R]) -> Callable[P, R]:
    """Run `operation` (one whole transaction) again when PostgreSQL rolled it back for a
    deadlock or a serialization failure, or when it raised a `StaleConflict`, up to `ATTEMPTS`
    runs in all.

    Only where the call opens the transaction: inside a caller's transaction a retry would run
    half of it again, so the error goes up to whoever opened it.
    """

    @functools.wraps(operation)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        outermost = not connection.in_atomic_block
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return operation(*args, **kwargs)
            except (OperationalError, StaleConflict) as error:
                again = isinstance(error, StaleConflict) or (
                    isinstance(error, OperationalError) and retryable(error)
                )
                if not (outermost and again) or attempt == ATTEMPTS:
                    raise
                logger.warning(
                    "%s: run %s of %s rolled back (%s); running it again",
                    operation.__qualname__,
                    attempt,
                    ATTEMPTS,
                    _why(error),
                )
                time.sleep(random.uniform(0, MAX_PAUSE_SECONDS))
        raise AssertionError("unreachable")

    return run


class Lock(IntEnum):
    """The locks in the order a transaction takes them."""

    TABLE = 0
    ROUND = 1
    AWARD = 2
    TABLE_CHAIN = 3
    POOL = 4
    POOL_CHAIN = 5
    #: The club's sessions and drop counts (`tables.club`): taken first in their transactions,
    #: so it serializes every write of a session, its snapshot and its counts; nothing of a money
    #: path is taken after it, only the `admin` and `checkpoints` heads could be.
    CLUB_CHAIN = 6
    ADMIN_CHAIN = 7
    CHECKPOINT_CHAIN = 8


def table_row(model: type[M], *, table_pk: int, exclusive: bool) -> M | None:
    """Lock a table's row (`Lock.TABLE`) and load it: shared for a round's open, exclusive for a
    change of the table; None if there is no such table."""
    return rows.select_one(
        model, "id = %s", [table_pk], for_update=exclusive, key_share=not exclusive
    )


def round_row(model: type[M], *, table_pk: int, round_id: str) -> M | None:
    """Lock a round's row (`Lock.ROUND`) and load it; None if the table has no such round."""
    return rows.select_one(
        model, "table_id = %s AND round_id = %s", [table_pk, round_id], for_update=True
    )


def award_row(award_id: int) -> Award | None:
    """Lock an award's row (`Lock.AWARD`) and load it; None if there is no such award."""
    return Award.objects.select_for_update().filter(pk=award_id).first()


def follower_rows(award: Award) -> list[Award]:
    """Lock the rows of the awards that follow `award` (`Lock.AWARD`, after its own row: its
    void voids them), in id order, and load them. Only the void of an award they follow takes
    more than one award row, always its own first, so no two such transactions cross."""
    return list(Award.objects.select_for_update().filter(follows=award).order_by("pk"))


@dataclass(frozen=True, slots=True)
class ChainSlot:
    """The next place in an audit chain, held under the chain head's lock until commit: the
    event written there takes `position` and links to `prev_hash`."""

    chain: str
    position: int
    prev_hash: str


_ADVANCE = (
    "UPDATE jackpot_auditchain SET sequence = sequence + 1 WHERE key = %s "
    "RETURNING sequence, head_hash"
)


def chain_slot(chain: str) -> ChainSlot:
    """Lock a chain's head (`Lock.TABLE_CHAIN`, `POOL_CHAIN`, `CLUB_CHAIN`, `ADMIN_CHAIN` or
    `CHECKPOINT_CHAIN` by the chain) with one UPDATE and take its next position; a chain's first
    event creates its head."""
    with connection.cursor() as cursor:
        cursor.execute(_ADVANCE, [chain])
        row = cursor.fetchone()
        if row is None:
            AuditChain.objects.get_or_create(key=chain)
            cursor.execute(_ADVANCE, [chain])
            row = cursor.fetchone()
    position, prev_hash = row
    return ChainSlot(chain, int(position), str(prev_hash))


# --- the pool's rows, its tables and its changes, as the order above takes them ----------------


def pool_row(pool_id: int) -> Pool | None:
    """Lock a pool's row (`Lock.POOL`) and load it, for a change of its state or parameters
    (`jackpot.pools.parameters`); None if there is no such pool."""
    return Pool.objects.select_for_update().filter(pk=pool_id).first()


@dataclass(frozen=True, slots=True)
class PoolCounters:
    """A pool's counters, read under its row lock."""

    meter_units: int
    reserve_units: int
    seed_cents: int
    stopped: bool


def pool_counters(pool_id: int) -> PoolCounters:
    """Lock a pool's row (`Lock.POOL`) and read its counters, for a change computed from them: a
    hit's jackpot and a stop's take (`jackpot.money.meter`), each then written by one relative
    UPDATE under this lock. LookupError if there is no such pool."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""  # SQLite: db lock
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT meter_units, reserve_units, seed_cents, status = 'stopped'"
            f" FROM jackpot_pool WHERE id = %s{lock}",
            [pool_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise LookupError(f"no pool {pool_id}")
    return PoolCounters(int(row[0]), int(row[1]), int(row[2]), bool(row[3]))


def pool_rows(pool_ids: list[int]) -> list[Pool]:
    """Lock pools' rows (`Lock.POOL`) in id order in one statement and load them: a stopped pool
    and its heir (`jackpot.pools.lifecycle`), so two stops crossing the same pools wait, never
    deadlock."""
    return list(Pool.objects.select_for_update().filter(pk__in=pool_ids).order_by("pk"))


def pool_tables(model: type[M], *, pool_id: int) -> list[tuple[str, bool]]:
    """Lock the pool's tables (`Lock.TABLE`, exclusive, in id order: none opens until the caller
    commits); their (name, open for play). `model` is the tables' model, which the progressive
    does not import (`tables.pools`)."""
    tables = model._default_manager.select_for_update().filter(pool_id=pool_id).order_by("pk")
    return list(tables.values_list("name", "enabled"))


def parameter_changes() -> QuerySet[ParameterChange]:
    """Changes of parameters (`jackpot_parameterchange`), to be locked by the query the caller
    narrows to one: after the pool row when both are taken, alone otherwise (the order above).
    Rows the caller joins with `select_related` are locked with it (the proposer's account row:
    no path takes an account's row after a chain's head, so this adds no wait a chain holder
    could be part of)."""
    return ParameterChange.objects.select_for_update()


# --- rows outside the round and award order ----------------------------------------------------
# No money path takes these. Each is taken first in its transaction (or after rows no money path
# takes), and at most the `admin` or `checkpoints` chain's head (the last of the order) after it,
# so a transaction holding one never waits for a lower lock: no cycle can go through them.


def second_factor_devices(devices: QuerySet[M]) -> QuerySet[M]:
    """A person's second-factor devices (django-otp's rows: TOTP and recovery codes), locked
    while a code is checked or a device enrolled, so two sign-ins cannot both use one recovery
    code or enroll two keys; the use of a recovery code is then recorded on the `admin` chain."""
    return devices.select_for_update()


def staff_account(**lookup: object) -> User:
    """Lock a staff account's row (`auth_user`) and load it (User.DoesNotExist if none): a change
    of the account, its roles or its password, recorded on the `admin` chain after it."""
    return User.objects.select_for_update().get(**lookup)


def staff_account_or_new(*, username: str) -> tuple[User, bool]:
    """The account named `username`, locked, created first if there is none (the operator's
    demo people: `jackpot.staff.accounts.operator_grant`); whether it was created."""
    return User.objects.select_for_update().get_or_create(username=username)


def role_group_row(group: Group) -> None:
    """Lock a role's group row (`auth_group`), so two bootstraps of the first admins at once
    count each other's admin (`jackpot.staff.accounts.bootstrap_admin`), and two deactivations of
    admins each other's (`jackpot.staff.accounts.staff_update`)."""
    Group.objects.select_for_update().get(pk=group.pk)


def winner_identities(identities: QuerySet[M]) -> QuerySet[M]:
    """Winners' identities (`jackpot_winneridentity`), locked by the query the caller orders
    (award id order) before their purge, which the `admin` chain then records."""
    return identities.select_for_update()


def export_jobs(jobs: QuerySet[M]) -> QuerySet[M]:
    """An export job's row (`jackpot_exportjob`), locked while its builder checks it still holds
    the job and finishes it (`jackpot.reporting.export_jobs`): only builders and the sweeper touch
    it."""
    return jobs.select_for_update()


def verification_jobs(jobs: QuerySet[M]) -> QuerySet[M]:
    """A full verification's job row (`jackpot_verification`, `tables.audit.verification_jobs`),
    locked while its runner checks it still holds the job, before `Lock.CHECKPOINT_CHAIN`."""
    return jobs.select_for_update()


def terminal_rows(terminals: QuerySet[M]) -> QuerySet[M]:
    """A table's terminal tokens (`tables_terminal`), locked while tokens are revoked
    (`tables.services`), then recorded on the `admin` chain. A round never locks them: it reads
    its terminal's token without a lock."""
    return terminals.select_for_update()


@unique
class Advisory(IntEnum):
    """The keys of the transaction-level advisory locks (`pg_advisory_xact_lock`), one per
    background job that must not run twice at once. Declared together, so no two share a key
    (`unique`). Each is taken first in its own transaction; none is taken by a money path."""

    #: The history's fold ("HISTFOLD" in ASCII, `tables.audit.history`): a fold that waited reads
    # the : cursors its forerunner moved.
    HISTORY_FOLD = 0x48495354464F4C44
    #: The floor's watch ("jackWATC", `tables.watch`): two watches at once record a silence or a
    #: restored database once; then the `admin` chain.
    FLOOR_WATCH = 0x6A61_636B_5741_5443
    #: The award odds' alarms ("AWDODDS!", `tables.audit.award_odds`): the settlement's task and
    #: the watch at once record an alarm once; taken after FLOOR_WATCH, then the `admin` chain.
    AWARD_ODDS = 0x4157_444F_4444_5321
    #: Storing a reconciliation's report ("RECONCIL", `tables.audit.reconciliation`): a report
    # compares : with the one stored just before it; then the `admin` chain for its alert.
    RECONCILIATION_STORE = 0x5245434F4E43494C


def advisory(key: Advisory) -> None:
    """Take the advisory lock `key` until the transaction ends (PostgreSQL only: SQLite's
    IMMEDIATE transactions already run one writer at a time)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int(key)])


def advisory_if_free(key: Advisory) -> bool:
    """Take the advisory lock `key` until the transaction ends if no other transaction holds it;
    False, at once, if one does (never a wait a lock or statement timeout could cut short)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [int(key)])
        (taken,) = cursor.fetchone()
    return bool(taken)
