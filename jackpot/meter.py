"""The pool row's hot counters: the only code that changes the meter and the reserve.

The pool row is the progressive's single point of serialization. A contribution is one UPDATE
that computes the new values from the row as the database holds it and RETURNs them; a hit locks
the row (SELECT ... FOR UPDATE) and applies relative changes computed under that lock. Nothing
here ever writes back a value read earlier without the lock, so concurrent tables cannot lose an
update. The first of these statements in a transaction takes the pool row lock, held until
commit, so callers run them as late as they can, in the order `jackpot.locks` states. Only
`jackpot.movements` calls them.

Units: the meter and reserve are kept in 1/10,000 cent (`UNITS_PER_CENT`); the journal's meter
and reserve accounts hold whole cents and always equal the counters rounded down.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from jackpot import rows
from jackpot.bodies import Meter
from jackpot.models import UNITS_PER_CENT as U
from jackpot.models import Pool


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
class Hit:
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


def add_stakes(*, pool_id: int, stakes: int, stake_cents: int, now: datetime) -> Split | None:
    """Add `stakes` progressive stakes of `stake_cents` to the meter and the reserve and return
    the split; None, changing nothing, when the pool's stake is no longer `stake_cents` (the
    stake the round was validated and recorded with: the row refuses a stale one).

    The meter gains exactly `stakes * stake_cents * meter_share_bp` units and the reserve
    likewise; each journal account gains the whole cents its counter crossed. The house gets the
    rest of the stakes, so it holds the meter's and the reserve's sub-cent remainders (under one
    cent each) until they make up a cent. N stakes after the pool's creation the meter therefore
    shows exactly `seed + N * stake_cents * meter_share_bp // 10000` cents; after a hit, the
    sub-cent remainder the hit left on the meter counts too.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET"
            " meter_units = meter_units + %s * stake_cents * meter_share_bp,"
            " reserve_units = reserve_units + %s * stake_cents * reserve_share_bp,"
            " meter_version = meter_version + 1, meter_changed_at = %s"
            " WHERE id = %s AND stake_cents = %s"
            " RETURNING meter_units, reserve_units, meter_share_bp, reserve_share_bp,"
            " meter_version",
            [stakes, stakes, now, pool_id, stake_cents],
        )
        row = cursor.fetchone()
    if row is None:
        return None
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


class ZeroJackpot(RuntimeError):
    """A royal on a meter under one cent: a jackpot of 0 cents, refused before anything moved.

    It cannot happen to a pool whose seed is at least one cent (the database's CHECK
    `pool_seed_positive`): the meter starts at the seed, only a hit lowers it, and a hit resets
    it to the seed. Seen anyway, the books and the pool row disagree with the rules: the round
    is refused whole (a 500, logged) rather than settled with a hit and no award.
    """


def take_jackpot(*, pool_id: int, now: datetime) -> Hit:
    """Win the whole meter (in whole cents) and reset it to the seed from the reserve.

    The sub-cent remainder stays in the meter. Where the reserve holds less than the seed, the
    house funds the shortfall. Hits are served one after another in lock order, so a second hit
    wins the meter as it stands after the first one's reset. ZeroJackpot, with nothing changed,
    when the meter holds less than a cent.
    """
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""  # SQLite: db lock
    meter_units, reserve_units, seed_cents = _one_row(
        f"SELECT meter_units, reserve_units, seed_cents FROM jackpot_pool WHERE id = %s{lock}",
        [pool_id],
    )
    amount_cents = meter_units // U
    if amount_cents < 1:
        raise ZeroJackpot(f"pool {pool_id}: a jackpot of 0 cents (meter {meter_units} units)")
    from_reserve = min(seed_cents, reserve_units // U)
    from_house = seed_cents - from_reserve
    meter_after, version, hit_number = _one_row(
        "UPDATE jackpot_pool SET"
        " meter_units = meter_units - %s + %s, reserve_units = reserve_units - %s,"
        " hit_count = hit_count + 1, meter_version = meter_version + 1, meter_changed_at = %s"
        " WHERE id = %s RETURNING meter_units, meter_version, hit_count",
        [amount_cents * U, seed_cents * U, from_reserve * U, now, pool_id],
    )
    return Hit(
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


def next_award_numbers(*, pool_id: int, count: int) -> range:
    """Take `count` consecutive award numbers (`Award.sequence`) in commit order, under the lock."""
    (last,) = _one_row(
        "UPDATE jackpot_pool SET award_sequence = award_sequence + %s,"
        " award_version = award_version + 1 WHERE id = %s RETURNING award_sequence",
        [count, pool_id],
    )
    return range(last - count + 1, last + 1)


def bump_award_version(*, pool_id: int) -> int:
    """An award of the pool changed status: displays must show it (see jackpot.display)."""
    (version,) = _one_row(
        "UPDATE jackpot_pool SET award_version = award_version + 1"
        " WHERE id = %s RETURNING award_version",
        [pool_id],
    )
    return version


# --- the committed meter, as terminals and signs see it ------------------------------------


def meter_body(
    *, pool_id: int, currency: str, meter_cents: int, meter_version: int, as_of: datetime | None
) -> Meter:
    """The meter as displays and terminals see it (`jackpot.bodies.Meter`): whole cents, its
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
    )


def pool_meter(*, pool_id: int) -> Meter:
    """The committed meter in whole cents, with its version (`sequence`) and time.

    Read with plain SQL (jackpot.rows): terminals get it with every answer, and building the
    ORM query cost more than the query.
    """
    pool = rows.select_one(
        Pool,
        "id = %s",
        [pool_id],
        for_update=False,
        only=("currency", "meter_units", "meter_version", "meter_changed_at"),
    )
    if pool is None:
        raise Pool.DoesNotExist(pool_id)
    return meter_body(
        pool_id=pool_id,
        currency=pool.currency,
        meter_cents=pool.meter_cents,
        meter_version=pool.meter_version,
        as_of=pool.meter_changed_at,
    )
