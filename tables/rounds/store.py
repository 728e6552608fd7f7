"""A round's own rows: the round and its seats' bets, written and read with plain SQL.

The bets a round settles or refunds are read from its `RoundSeat` rows, written once when it
opened and never changed; the stored answer (`Round.open_response`) is only ever replayed.
Plain SQL (`jackpot.rows`) because these run on every round: the ORM compiled each statement
anew at a cost above the statement's own (bench/ingest.py).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from config.errors import NotFound
from jackpot import locks, rows
from tables.bodies import OpenRequest
from tables.models import Game, Round, RoundSeat, RoundState, Table
from tables.rules.stud import StudBets
from tables.rules.uth import UthBets

Bets = UthBets | StudBets


def insert_round(table: Table, request: OpenRequest, fingerprint: str, now: datetime) -> int:
    """Write a new open round and its seats' bets; returns the round's primary key.

    A replay fails here, on the unique (table, round_id), before any lock is waited for.
    """
    (round_pk,) = rows.insert(
        Round,
        [
            {
                "table_id": table.pk,
                "round_id": request.round_id,
                "state": RoundState.OPEN,
                "opened_at": now,
                "open_fingerprint": fingerprint,
                "open_response": {},  # the answer, written with the audit event
            }
        ],
        returning_id=True,
    )
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
