"""Tables, their terminals, and the rounds the terminals post.

Invariants: a table has 1 to 7 seats; only an Ultimate Texas Hold'em table feeds a pool;
`(table, round_id)` is unique, which makes a terminal's retry of a round safe; a seat's bets are
non-negative cents and never change after the round opens (bets lock before the cards are dealt);
a round records the pool its table fed when it opened (its pool of record) and that pool's terms
then: the stake, the progressive paytable's version and the verification threshold (CHECKs: a
pooled round has all three, a round without a pool none); it settles or voids with them whatever
happens to the table or the pool afterwards, and while it is open its pool's parameters do not
change (`jackpot.pools.parameters`, told by `tables.pools`, with the index `round_open_per_pool`); a
table has at most one open round at a time (a partial unique index: a table deals one hand at a
time, and two terminals' opens racing cannot both pass it, whatever locks they hold); a pool's
history day (`HistoryDay`) is the journal's figures of that club day up to the fold's cursor
(`HistoryCursor`), one row per pool and day, recomputable from the journal at any time; a club
session's snapshot and drop counts are as `tables.models.club` says.
"""

from tables.models.checks import HistoryCursor, HistoryDay, IntegrityFlag, Reconciliation
from tables.models.club import (
    ONE_OPEN_SESSION,
    ClosedBy,
    ClubSession,
    DropCount,
    SessionPool,
    SessionStatus,
    SessionTable,
)
from tables.models.rounds import ONE_OPEN_ROUND, IdempotencyRecord, Round, RoundSeat, RoundState
from tables.models.tables import Game, Table, Terminal

__all__ = [
    "ONE_OPEN_ROUND",
    "ONE_OPEN_SESSION",
    "ClosedBy",
    "ClubSession",
    "DropCount",
    "Game",
    "HistoryCursor",
    "HistoryDay",
    "IdempotencyRecord",
    "IntegrityFlag",
    "Reconciliation",
    "Round",
    "RoundSeat",
    "RoundState",
    "SessionPool",
    "SessionStatus",
    "SessionTable",
    "Table",
    "Terminal",
]
