"""The pool row's hot counters: the only code that changes the meter and the reserve.

The pool row is the progressive's single point of serialization. A contribution is one UPDATE
that computes the new values from the row as the database holds it and RETURNs them; a hit locks
the row (`jackpot.money.locks.pool_counters`) and applies relative changes computed under that lock.
Nothing here ever writes back a value read earlier without the lock, so concurrent tables cannot
lose an update. The first of these statements in a transaction takes the pool row lock, held until
commit, so callers run them as late as they can, in the order `jackpot.money.locks` states. Only
`jackpot.money.movements` calls them; a round's stakes have their UPDATE (`stakes_update`) run by
`jackpot.money.ledger` as the first part of the statement that writes the round's event, built
beforehand from the counters as read without a lock (`expected_stakes`: a guess, written only
where the UPDATE returns exactly it).

Units: the meter and reserve are kept in 1/10,000 cent (`UNITS_PER_CENT`); the journal's meter
and reserve accounts hold whole cents and always equal the counters rounded down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from jackpot.bodies.meter import Meter
from jackpot.models import UNITS_PER_CENT as U
from jackpot.models import Pool, PoolStatus
from jackpot.money import locks, rows


@dataclass(frozen=True, slots=True)
class Split:
    """Whole cents moved by a contribution: `stakes_cents` = meter + reserve + house parts."""

    stakes_cents: int
    meter_cents: int
    reserve_cents: int
    house_cents: int  # negative (-1 at most) when sub-cent carries the house held make a cent
    meter_after_cents: int
    meter_version: int


@dataclass(frozen=True, slots=True)
class JackpotTaken:
    """A jackpot hit: the whole meter (whole cents) is won, then the meter resets to the seed."""

    amount_cents: int
    reset_from_reserve_cents: int
    reset_from_house_cents: int
    meter_after_cents: int
    hit_number: int
    meter_version: int


def _one_row(sql: str, params: list[Any]) -> tuple[int, ...]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise LookupError("no such pool")
    return tuple(int(value) for value in row)


def crossed_cents(after_units: int, added_units: int) -> int:
    """Whole cents a counter crossed when `added_units` brought it to `after_units`."""
    return after_units // U - (after_units - added_units) // U


#: A contribution's one statement (`add_stakes`, `stakes_update`): the counters move relative to
#: the row as the database holds it, under its lock; a stale stake or a pool not active moves
#: nothing and returns no row.
_ADD_STAKES = (
    "UPDATE jackpot_pool SET"
    " meter_units = meter_units + %s * stake_cents * meter_share_bp,"
    " reserve_units = reserve_units + %s * stake_cents * reserve_share_bp,"
    " meter_version = meter_version + 1, meter_changed_at = %s"
    " WHERE id = %s AND stake_cents = %s AND status = 'active'"
    " RETURNING meter_units, reserve_units, meter_share_bp, reserve_share_bp, meter_version"
)
_ADD_STAKES_AT_VERSION = _ADD_STAKES.replace(
    "status = 'active'", "status = 'active' AND meter_version = %s"
)


def stakes_update(
    *, pool_id: int, stakes: int, stake_cents: int, now: datetime, at_version: int | None = None
) -> tuple[str, list[Any]]:
    """`add_stakes`' statement and its parameters, for a caller that runs it itself, after the
    event it decides (`jackpot.money.movements.take_stakes_last`, `jackpot.money.ledger.Gate`).

    With `at_version`, the statement also moves nothing, and returns no row, unless the meter is
    still at that version: a row another transaction moved is then left unlocked once that
    transaction commits (PostgreSQL checks the condition again on the new row), rather than
    held until the caller sees it is not the row it expected and rolls back."""
    params = [stakes, stakes, now, pool_id, stake_cents]
    if at_version is None:
        return _ADD_STAKES, params
    return _ADD_STAKES_AT_VERSION, [*params, at_version]


def split_of(row: Sequence[Any], *, stakes: int, stake_cents: int) -> Split:
    """The split of a contribution of `stakes` stakes of `stake_cents`, from the row its
    statement returned (`_ADD_STAKES`' RETURNING)."""
    meter_units, reserve_units, meter_bp, reserve_bp, version = (int(value) for value in row)
    stakes_cents = stakes * stake_cents
    meter_cents = crossed_cents(meter_units, stakes * stake_cents * meter_bp)
    reserve_cents = crossed_cents(reserve_units, stakes * stake_cents * reserve_bp)
    return Split(
        stakes_cents=stakes_cents,
        meter_cents=meter_cents,
        reserve_cents=reserve_cents,
        house_cents=stakes_cents - meter_cents - reserve_cents,
        meter_after_cents=meter_units // U,
        meter_version=version,
    )


def add_stakes(*, pool_id: int, stakes: int, stake_cents: int, now: datetime) -> Split | None:
    """Add `stakes` progressive stakes of `stake_cents` to the meter and the reserve and return
    the split; None, changing nothing, when the pool's stake is no longer `stake_cents` (the
    stake the round was validated and recorded with: the row refuses a stale one) or the pool is
    not active (suspended or stopped: `jackpot.pools.lifecycle`), as the locked row says.

    The meter gains exactly `stakes * stake_cents * meter_share_bp` units and the reserve
    likewise; each journal account gains the whole cents its counter crossed. The house gets the
    rest of the stakes, so it holds the meter's and the reserve's sub-cent remainders (under one
    cent each) until they make up a cent. N stakes after the pool's creation the meter therefore
    shows exactly `seed + N * stake_cents * meter_share_bp // 10000` cents; after a hit, the
    sub-cent remainder the hit left on the meter counts too.
    """
    sql, params = stakes_update(pool_id=pool_id, stakes=stakes, stake_cents=stake_cents, now=now)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else split_of(row, stakes=stakes, stake_cents=stake_cents)


_EXPECTED = (
    "SELECT meter_units, reserve_units, meter_share_bp, reserve_share_bp, meter_version"
    " FROM jackpot_pool WHERE id = %s AND stake_cents = %s AND status = 'active'"
)


def expected_stakes(*, pool_id: int, stakes: int, stake_cents: int) -> tuple[int, ...] | None:
    """What `add_stakes`' statement would return if it ran now and no other
    transaction changed the pool first, read without a lock; None when it would refuse.

    Only a guess, never written: a caller writes it only where the statement's own returned row
    equals it (`jackpot.money.movements.take_stakes_last`), and goes by that row otherwise.
    """
    with connection.cursor() as cursor:
        cursor.execute(_EXPECTED, [pool_id, stake_cents])
        row = cursor.fetchone()
    if row is None:
        return None
    meter_units, reserve_units, meter_bp, reserve_bp, version = (int(value) for value in row)
    added = stakes * stake_cents
    return (
        meter_units + added * meter_bp,
        reserve_units + added * reserve_bp,
        meter_bp,
        reserve_bp,
        version + 1,
    )


class ZeroJackpot(RuntimeError):
    """A royal on a meter under one cent: a jackpot of 0 cents, refused before anything moved.

    It cannot happen to a pool whose seed is at least one cent (the database's CHECK
    `pool_seed_positive`): the meter starts at the seed, only a hit lowers it, and a hit resets
    it to the seed. Seen anyway, the books and the pool row disagree with the rules: the round
    is refused whole (a 500, logged) rather than settled with a hit and no award.
    """


def take_jackpot(*, pool_id: int, now: datetime) -> JackpotTaken:
    """Win the whole meter (in whole cents) and reset it to the seed from the reserve.

    The sub-cent remainder stays in the meter. Where the reserve holds less than the seed, the
    house funds the shortfall. Hits are served one after another in lock order, so a second hit
    wins the meter as it stands after the first one's reset. ZeroJackpot, with nothing changed,
    when the meter holds less than a cent.
    """
    counters = locks.pool_counters(pool_id)
    seed_cents = counters.seed_cents
    amount_cents = counters.meter_units // U
    if amount_cents < 1:
        raise ZeroJackpot(
            f"pool {pool_id}: a jackpot of 0 cents (meter {counters.meter_units} units)"
        )
    from_reserve = min(seed_cents, counters.reserve_units // U)
    from_house = seed_cents - from_reserve
    meter_after, version, hit_number = _one_row(
        "UPDATE jackpot_pool SET"
        " meter_units = meter_units - %s + %s, reserve_units = reserve_units - %s,"
        " hit_count = hit_count + 1, meter_version = meter_version + 1, meter_changed_at = %s"
        " WHERE id = %s RETURNING meter_units, meter_version, hit_count",
        [amount_cents * U, seed_cents * U, from_reserve * U, now, pool_id],
    )
    return JackpotTaken(
        amount_cents=amount_cents,
        reset_from_reserve_cents=from_reserve,
        reset_from_house_cents=from_house,
        meter_after_cents=meter_after // U,
        hit_number=hit_number,
        meter_version=version,
    )


def void_jackpot(
    *,
    pool_id: int,
    jackpot_cents: int,
    reset_reserve_cents: int,
    reset_house_cents: int,
    now: datetime,
) -> tuple[int, int] | None:
    """Undo a jackpot hit on the counters, in one statement: the jackpot goes back on the meter
    and the reset the hit paid goes back where it came from, so the meter loses
    `reset_reserve_cents + reset_house_cents` (the seed at the hit) and the reserve regains
    `reset_reserve_cents`. Returns (meter after in cents, meter version); None, changing nothing,
    when the meter would go below zero (possible only if the meter was reset again since, to a
    lower seed, or has otherwise fallen below the voided hit's reset)."""
    meter_delta = (jackpot_cents - reset_reserve_cents - reset_house_cents) * U
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET meter_units = meter_units + %s,"
            " reserve_units = reserve_units + %s,"
            " meter_version = meter_version + 1, meter_changed_at = %s"
            " WHERE id = %s AND meter_units + %s >= 0 RETURNING meter_units, meter_version",
            [meter_delta, reset_reserve_cents * U, now, pool_id, meter_delta],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    meter_units, meter_version = (int(value) for value in row)
    return meter_units // U, meter_version


def set_status(
    *, pool_id: int, status: str, reason: str, now: datetime, allowed: tuple[str, ...]
) -> int | None:
    """Suspend or resume a pool, in one statement under its row lock: its status, why and since
    when, and a new meter version (the signs show the status with the meter). Returns the meter
    version; None, changing nothing, when the pool's status is not one of `allowed`. No figure
    moves."""
    placeholders = ", ".join(["%s"] * len(allowed))
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET status = %s, status_reason = %s, status_since = %s,"
            " meter_version = meter_version + 1"
            f" WHERE id = %s AND status IN ({placeholders}) RETURNING meter_version",
            [status, reason, now, pool_id, *allowed],
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


@dataclass(frozen=True, slots=True)
class Stopped:
    """What a stop took off a pool: the whole cents of its meter and reserve (the sub-cent
    remainders stay on the counters: the house already holds them in the journal)."""

    meter_cents: int
    reserve_cents: int
    meter_version: int


def stop_counters(*, pool_id: int, reason: str, now: datetime) -> Stopped | None:
    """Stop a pool for good: its meter and reserve, in whole cents, taken off its counters and
    its status `stopped`, under its row lock (`locks.pool_counters`, then one relative
    `UPDATE`). None, changing nothing, when it is already stopped."""
    counters = locks.pool_counters(pool_id)
    if counters.stopped:
        return None
    meter_cents, reserve_cents = counters.meter_units // U, counters.reserve_units // U
    (version,) = _one_row(
        "UPDATE jackpot_pool SET meter_units = meter_units - %s,"
        " reserve_units = reserve_units - %s,"
        " status = 'stopped', status_reason = %s, status_since = %s,"
        " meter_version = meter_version + 1, meter_changed_at = %s"
        " WHERE id = %s RETURNING meter_version",
        [meter_cents * U, reserve_cents * U, reason, now, now, pool_id],
    )
    return Stopped(meter_cents, reserve_cents, version)


def receive(
    *, pool_id: int, meter_cents: int, reserve_cents: int, now: datetime
) -> tuple[int, int] | None:
    """A stopped pool's meter and reserve added to this active pool's, in one statement under
    its row lock. Returns (meter after in cents, meter version); None, changing nothing, when
    the pool is not active."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET meter_units = meter_units + %s,"
            " reserve_units = reserve_units + %s,"
            " meter_version = meter_version + 1, meter_changed_at = %s"
            " WHERE id = %s AND status = 'active' RETURNING meter_units, meter_version",
            [meter_cents * U, reserve_cents * U, now, pool_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return int(row[0]) // U, int(row[1])


@dataclass(frozen=True, slots=True)
class Counters:
    """A pool's meter and reserve in whole cents after a change, and the meter's version."""

    meter_cents: int
    reserve_cents: int
    meter_version: int


def correct(
    *, pool_id: int, meter_cents: int, reserve_cents: int, now: datetime
) -> Counters | None:
    """A documented correction (`jackpot.pools.corrections`): the meter and the reserve moved by
    these signed whole cents, in one relative statement under the pool row lock; the meter's
    version moves with the meter only. None, changing nothing, when the pool is stopped or a
    counter would go below zero."""
    meter_delta, reserve_delta = meter_cents * U, reserve_cents * U
    moved = 1 if meter_cents else 0
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET meter_units = meter_units + %s,"
            " reserve_units = reserve_units + %s, meter_version = meter_version + %s,"
            " meter_changed_at = CASE WHEN %s = 1 THEN %s ELSE meter_changed_at END"
            " WHERE id = %s AND status <> 'stopped'"
            " AND meter_units + %s >= 0 AND reserve_units + %s >= 0"
            " RETURNING meter_units, reserve_units, meter_version",
            [meter_delta, reserve_delta, moved, moved, now, pool_id, meter_delta, reserve_delta],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return Counters(int(row[0]) // U, int(row[1]) // U, int(row[2]))


def counters(*, pool_id: int) -> Counters:
    """The pool's meter and reserve in whole cents, as this transaction sees them."""
    meter_units, reserve_units, version = _one_row(
        "SELECT meter_units, reserve_units, meter_version FROM jackpot_pool WHERE id = %s",
        [pool_id],
    )
    return Counters(meter_units // U, reserve_units // U, version)


def next_award_numbers(*, pool_id: int, count: int) -> range:
    """Take `count` consecutive award numbers (`Award.number`) in commit order, under the lock."""
    (last,) = _one_row(
        "UPDATE jackpot_pool SET last_award_number = last_award_number + %s,"
        " award_version = award_version + 1 WHERE id = %s RETURNING last_award_number",
        [count, pool_id],
    )
    return range(last - count + 1, last + 1)


def last_award_number(*, pool_id: int) -> int:
    """The pool's last award number as committed, read without a lock: a guess at the numbers
    the next awards take (`award_numbers_update`)."""
    (last,) = _one_row("SELECT last_award_number FROM jackpot_pool WHERE id = %s", [pool_id])
    return last


def award_numbers_update(*, pool_id: int, count: int, after: int) -> tuple[str, list[Any]]:
    """`next_award_numbers`' statement for a caller that runs it itself, after the awards and
    the event it numbered from `after` (`jackpot.money.movements.grant_awards_last`): it takes
    the `count` numbers after `after`, and returns `after + count`, only if no award took a
    number since; else it moves nothing and returns no row (and leaves the row unlocked)."""
    return (
        "UPDATE jackpot_pool SET last_award_number = last_award_number + %s,"
        " award_version = award_version + 1 WHERE id = %s AND last_award_number = %s"
        " RETURNING last_award_number",
        [count, pool_id, after],
    )


def bump_award_version(*, pool_id: int) -> int:
    """An award of the pool changed status: displays must show it (see jackpot.sign.display)."""
    (version,) = _one_row(
        "UPDATE jackpot_pool SET award_version = award_version + 1"
        " WHERE id = %s RETURNING award_version",
        [pool_id],
    )
    return version


# --- the committed meter, as terminals and signs see it ------------------------------------


def meter_body(
    *,
    pool_id: int,
    currency: str,
    meter_cents: int,
    meter_version: int,
    as_of: datetime | None,
    status: str = PoolStatus.ACTIVE,
) -> Meter:
    """The meter as displays and terminals see it (`jackpot.bodies.meter.Meter`): whole cents, its
    version and time.

    The wire calls the meter's version `sequence` (unchanged for the signs and terminals that
    read it); everywhere else it is `meter_version`.
    """
    return Meter.model_construct(
        pool=pool_id,
        amount_cents=meter_cents,
        currency=currency,
        sequence=meter_version,
        as_of=as_of,
        status=PoolStatus(status),
    )


def pool_meter(*, pool_id: int) -> Meter:
    """The committed meter in whole cents, with its version (`sequence`) and time.

    Read with plain SQL (jackpot.money.rows): terminals get it with every answer, and building the
    ORM query cost more than the query.
    """
    pool = rows.select_one(
        Pool,
        "id = %s",
        [pool_id],
        for_update=False,
        only=("currency", "meter_units", "meter_version", "meter_changed_at", "status"),
    )
    if pool is None:
        raise Pool.DoesNotExist(pool_id)
    return meter_body(
        pool_id=pool_id,
        currency=pool.currency,
        meter_cents=pool.meter_cents,
        meter_version=pool.meter_version,
        as_of=pool.meter_changed_at,
        status=pool.status,
    )
