"""A round's own rows: the round and its seats' bets, written and read with plain SQL.

The bets a round settles or refunds are read from its `RoundSeat` rows, written once when it
opened and never changed, and the terms it settles with (`jackpot.money.movements.Terms`) from its
own row, where its open recorded its pool's as committed under the table's share lock (an approval
of a change of them locks the pool's tables exclusively first, so none commits until the round is
written); the stored answer (`Round.open_response`) is only ever replayed.
Plain SQL (`jackpot.money.rows`) because these run on every round: the ORM compiled each statement
anew at a cost above the statement's own (bench/ingest.py).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from core.errors import Conflict, NotFound
from jackpot.models import Pool
from jackpot.money import locks, rows
from jackpot.money.movements import TERMS_FIELDS, Terms, pool_terms
from rules.stud import StudBets
from rules.uth import UthBets
from tables.bodies.round_requests import OpenRequest
from tables.models import Game, Round, RoundSeat, RoundState, Table

Bets = UthBets | StudBets


def locked_table(table: Table) -> Table | None:
    """The table's row as committed last, share-locked (`jackpot.money.locks`): it cannot be moved
    to another pool, unlinked or closed until the round opening now is written."""
    return locks.table_row(Table, table_pk=table.pk, exclusive=False)


def committed_terms(committed: Table | None) -> Terms | None:
    """The terms of the pool the table feeds (`committed`, from `locked_table`), as committed
    last: none changes until this transaction ends (see the module's docstring)."""
    if committed is None or committed.pool_id is None:
        return None
    pool = rows.select_one(
        Pool, "id = %s", [committed.pool_id], for_update=False, only=TERMS_FIELDS
    )
    return None if pool is None else pool_terms(pool)


def pool_of_record(table: Table, committed: Table | None, terms: Terms | None) -> Pool | None:
    """The pool a round opening now at `table` belongs to: the table's pool as the terminal's
    authentication read it (`table`), if the table still feeds it (`committed`, from
    `locked_table`); a change committed in between is a 409 `table_changed`, a stake other than
    the one the bets were checked against (`terms`, from `committed_terms`) a 409
    `stake_changed`."""
    if committed is None or committed.pool_id != table.pool_id or not committed.enabled:
        raise Conflict(
            "table_changed",
            f"table {table.pk} was changed (closed, or linked to another pool) while this round "
            "was being opened; nothing was written: post it again",
            param=None,
        )
    pool = table.pool
    if pool is not None and (terms is None or terms.stake_cents != pool.stake_cents):
        raise Conflict(
            "stake_changed",
            f"pool {pool.pk}'s progressive stake is no longer {pool.stake_cents} cents; nothing "
            "was written: read the pool and post the round again",
            param="seats",
        )
    return pool


def insert_round(
    table: Table, request: OpenRequest, fingerprint: str, now: datetime, terms: Terms | None
) -> int | None:
    """Write a new open round, with its pool of record (the table's, `pool_of_record` checks it
    is still) and that pool's terms (`committed_terms`), and its seats' bets; returns the
    round's primary key.

    None, writing nothing, when the table has a round with this id (a replay) or another open
    round (`tables.models.ONE_OPEN_ROUND`): the INSERT skips a row its unique indexes refuse,
    before the pool row is waited for, so the transaction goes on to find which without a
    savepoint. A conflicting round not yet committed is waited for.
    """
    pool = table.pool
    record: dict[str, object] = {
        "pool_id": None,
        "stake_cents": 0,
        "paytable_version": "",
        "verification_threshold_cents": None,
    }
    # Without its pool's terms (the table unlinked meanwhile) the row is written without a pool,
    # as its CHECKs want, and `pool_of_record` then refuses the round: nothing stays written.
    if pool is not None and terms is not None:
        record = {
            "pool_id": pool.pk,
            "stake_cents": terms.stake_cents,
            "paytable_version": terms.paytable_version,
            "verification_threshold_cents": terms.verification_threshold_cents,
        }
    inserted = rows.insert(
        Round,
        [
            {
                "table_id": table.pk,
                "round_id": request.round_id,
                **record,
                "state": RoundState.OPEN,
                "opened_at": now,
                "open_fingerprint": fingerprint,
                "open_response": {},  # the answer, written with the audit event
            }
        ],
        returning_id=True,
        skip_conflicts=True,
    )
    if not inserted:
        return None
    (round_pk,) = inserted
    rows.insert(
        RoundSeat,
        [
            {"round_id": round_pk, "seat": entry.seat, **bets_columns(entry.bets)}
            for entry in request.seats
        ],
        returning_id=False,
    )
    return round_pk


def bets_columns(bets: Bets) -> dict[str, int]:
    """A seat's bets as `RoundSeat` columns."""
    if isinstance(bets, UthBets):
        return {
            "ante_cents": bets.ante_cents,
            "blind_cents": bets.blind_cents,
            "trips_cents": bets.trips_cents,
            "progressive_cents": bets.progressive_cents,
        }
    return {"ante_cents": bets.ante_cents, "bonus_cents": bets.bonus_cents}


def round_pool(found: Round, table: Table) -> Pool | None:
    """The round's pool of record, which it settles or voids against whatever its table feeds
    now (the authenticated table's pool object when it is the same one)."""
    if found.pool_id is None:
        return None
    if table.pool is not None and table.pool.pk == found.pool_id:
        return table.pool
    return Pool.objects.get(pk=found.pool_id)


def round_terms(found: Round) -> Terms | None:
    """The terms the round settles with, as it recorded them when it opened (None: no pool)."""
    if found.pool_id is None:
        return None
    threshold = found.verification_threshold_cents
    assert threshold is not None  # a pooled round records it (CHECK round_terms_of_its_pool)
    return Terms(found.stake_cents, found.paytable_version, threshold)


def locked_round(table: Table, round_id: str) -> Round:
    """The round's row, locked for the rest of the transaction; 404 if the table has none."""
    found = locks.round_row(Round, table_pk=table.pk, round_id=round_id)
    if found is None:
        raise NotFound(
            "round_not_found", f"no round {round_id!r} at table {table.pk}", param="round_id"
        )
    return found


_BETS = (
    "SELECT seat, ante_cents, blind_cents, trips_cents, bonus_cents, progressive_cents"
    " FROM tables_roundseat WHERE round_id = %s ORDER BY seat"
)


def round_bets(round_pk: int, game: Game) -> dict[int, Bets]:
    """Each seat's bets as locked when the round opened, by seat number."""
    with connection.cursor() as cursor:
        cursor.execute(_BETS, [round_pk])
        found = cursor.fetchall()
    if game == Game.UTH:
        return {
            seat: UthBets(ante, blind, trips, progressive)
            for seat, ante, blind, trips, _bonus, progressive in found
        }
    return {seat: StudBets(ante, bonus) for seat, ante, _b, _t, bonus, _p in found}


def progressive_stakes_cents(bets: dict[int, Bets]) -> int:
    """What the round's seats staked on the progressive, in cents."""
    return sum(b.progressive_cents for b in bets.values() if isinstance(b, UthBets))


def answered(round_pk: int, changes: dict[str, object]) -> rows.RowUpdate:
    """The round row's change that records a step's answer, written with its audit event."""
    return rows.RowUpdate(Round, round_pk, changes)
