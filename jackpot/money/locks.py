"""The concurrency contract: every row lock the service takes, and the one order they go in.

Every `SELECT ... FOR UPDATE` / `FOR KEY SHARE` and advisory lock is taken by a helper of this
module (plain-SQL rows read through `jackpot.money.rows`), named for the rows it locks and saying
where it sits in the order below, or that it is outside the order and why; elsewhere a row is locked
only by the statement that changes it (the pool's counters by `jackpot.money.meter`'s single
`UPDATE`s). tests/concurrency/test_lock_order.py checks that no other module asks for a lock.

A transaction takes the locks it needs in this order, never going back to an earlier one:

0. `TABLE` - the table's row (`tables_table`): shared (`FOR KEY SHARE`) by a round's open, which
   so reads the pool the table feeds as committed last and keeps the table from moving until the
   round is written; exclusive (`FOR UPDATE`) by the table's administration (`table_row`), which
   so waits for every open in flight and then sees its round; exclusive, every table of a pool in
   id order, by the approval of a change of the pool's parameters, so that none opens for play
   until the change is committed (and a round opening reads its pool's terms, which it records,
   while it holds its table's shared lock: none changes until the round is written).
1. `ROUND` - the round's row (`tables_round`): the INSERT of a new round on open, `SELECT ...
   FOR UPDATE` on settle and void (`round_row`). Only its own table's terminal ever waits on it.
2. `AWARD` - the award's row (`jackpot_award`), one step of an award's way to payment
   (`award_row`); a void then takes the rows of the awards that follow it (`follower_rows`).
3. `TABLE_CHAIN` - the head of the table's audit chain (`table-{id}`), taken by `chain_slot`
   before the pool row, so the pool row is held only for the final write and the commit.
4. `POOL` - the pool's row (`jackpot_pool`), the progressive's one point of serialization and the
   only lock tables share. It is taken by the first statement of `jackpot.money.meter` a transaction
   runs (each is a single `UPDATE ... RETURNING`, or `pool_counters` for a hit), never by
   a read followed by a write. A round's stakes run that UPDATE last, after the round's event
   is written (`jackpot.money.movements.take_stakes_last`, `jackpot.money.ledger.Gate`): the row
   is then held for that one statement and the commit, nothing computed or written in between.
   A parameter change's row (`jackpot_parameterchange`) is taken after it when both are (an
   approval), and alone otherwise (a rejection, a withdrawal): it is never held while waiting
   for the pool row.
5. `POOL_CHAIN` - the head of the pool's own chain (`pool-{id}`, `chain_slot`): pool events and
   award steps, after the pool row.
6. `ADMIN_CHAIN` - the head of the `admin` chain (`chain_slot`): tables and tokens issued.
7. `CHECKPOINT_CHAIN` - the head of the `checkpoints` chain (`chain_slot`): a verification's
   checkpoint (`jackpot.audit.checkpoints.store`), taken alone in a transaction of its own.

Why no two transactions can wait on each other: every path below takes its locks in increasing
order, so a cycle of waits would need some transaction to wait for a lower lock while holding a
higher one.

- open a round: TABLE (shared), ROUND (insert), TABLE_CHAIN, POOL (stakes);
- settle a round: ROUND, TABLE_CHAIN, POOL (only when it grants awards; the statement that
  takes it numbers and writes the awards, so no award's unique number is waited for outside it);
- void a round: ROUND, TABLE_CHAIN;
- an award's step: AWARD, POOL (the award version; a voided jackpot's return), POOL_CHAIN;
  surveillance's review of an award and a manager's decision on its referral are award steps
  (their rows, `jackpot_surveillancereview` and `jackpot_referraldecision`, are inserted, never
  locked); a referral decided `void` takes the void's step again in the same transaction (its
  locks already held);
- change a table: TABLE (exclusive), ADMIN_CHAIN;
- create a pool, propose a change of its parameters: POOL_CHAIN (creation: POOL first);
- approve a change: TABLE (each of the pool's tables, exclusive, in id order), POOL, the change's
  row, POOL_CHAIN; reject or withdraw it: the change's row, POOL_CHAIN;
- suspend or resume a pool: POOL, POOL_CHAIN; approve its stop (`jackpot.pools.lifecycle`): TABLE
  (the stopped pool's, exclusive, in id order), POOL (the stopped pool's row and its heir's, in id
  order, in one statement), the change's row, POOL_CHAIN (the stopped pool's, then the heir's:
  both pool rows are held, so no other transaction holds either chain's head waiting for them);
- issue a token or a table: ADMIN_CHAIN (a token issued in place of the others, or one revoked:
  the table's terminal rows first, `terminal_rows`, outside the order below);
- propose a table move, a pool's creation or a staff change: ADMIN_CHAIN; reject or withdraw
  one: the change's row, ADMIN_CHAIN;
- approve a table move: TABLE (exclusive), the change's row, ADMIN_CHAIN; a pool's creation:
  the change's row, then the new pool's own rows and POOL_CHAIN (no other transaction knows
  the new pool yet); a staff change: the change's row, the account's row (`auth_user`, which
  no money path locks), ADMIN_CHAIN;
- one admin's change of a staff account (`jackpot.staff.accounts.staff_update`): the account's row,
  and for an admin's deactivation the admin role's group row after it (`role_group_row`: two
  deactivations count each other's), ADMIN_CHAIN;
- store a checkpoint: CHECKPOINT_CHAIN alone, or after the full run's own job row
  (`jackpot_verification`, `tables.audit.verification_jobs`), which nothing else locks;
- store a reconciliation's report (tables.audit.reconciliation): its own transaction-level advisory
  lock (`Advisory.RECONCILIATION_STORE`), taken by nothing else, then ADMIN_CHAIN for its alert;
  the floor's watch and the history's fold likewise take their own advisory lock first
  (`Advisory`), the watch then ADMIN_CHAIN.

Outside the order: rows no money path locks, each taken first in its transaction (or after
rows no money path locks), with at most the `admin` or `checkpoints` chain's head after it:
a person's second-factor devices (`second_factor_devices`; then ADMIN_CHAIN for a recovery
code's use), staff accounts and a role's group (`staff_account`, `staff_account_or_new`,
`role_group_row`; then ADMIN_CHAIN), winners' identities before their purge
(`winner_identities`; then ADMIN_CHAIN), an export job's row (`export_jobs`), a full
verification's job row (`verification_jobs`; then CHECKPOINT_CHAIN), a table's terminal rows
(`terminal_rows`; then ADMIN_CHAIN). A transaction holding one of them waits for nothing lower
than the last chain heads, so no cycle of waits can go through them.

`tests/concurrency/test_lock_order.py` records the SQL of these paths and checks the order.

Where PostgreSQL still gives up on a transaction (a deadlock it detected, a serialization
failure: SQLSTATE 40P01 and 40001), the whole transaction is run again, a bounded number of
times (`retried`): the round and award paths are idempotent units, so a second run after a
rollback is the first one done again, never twice. `retried` is the one retry policy: it also
runs a transaction again when the transaction found the row it conflicted with gone by the time
it looked (`StaleConflict`, e.g. a round's open refused by the table's round in progress, which
has closed since). It wraps the operation's one durable transaction (`transaction.atomic(
durable=True)`), never a block nested in another.
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
    ADMIN_CHAIN = 6
    CHECKPOINT_CHAIN = 7


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
    """Lock a chain's head (`Lock.TABLE_CHAIN`, `POOL_CHAIN`, `ADMIN_CHAIN` or
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
