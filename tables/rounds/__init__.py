"""The round lifecycle: open (the bets lock, the stakes feed the pool), settle (the cards in,
every box and progressive award worked out), void (a misdeal before settlement).

Read in this order: `opening`, `settlement`, `voiding` (one screen each, one transaction each);
`store` (the round's own rows), `answers` (the JSON they write), `replay` (answers stored and
replayed, so a terminal may retry anything). Money is decided by `jackpot.movements` and written
by `jackpot.ledger`; every rule is the rules engine's (`tables.rules`); locks follow
`jackpot.locks`.

Invariants: `(table, round_id)` is unique; a step retried with the same payload returns the first
answer and moves nothing; every money movement is written with its audit event in the same
transaction as the round's own rows.
"""

from tables.rounds.opening import round_open
from tables.rounds.replay import Answer, IdempotencyKey, idempotent
from tables.rounds.settlement import round_settle
from tables.rounds.voiding import round_void

__all__ = ["Answer", "IdempotencyKey", "idempotent", "round_open", "round_settle", "round_void"]
