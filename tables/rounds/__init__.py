"""The round lifecycle: open (the bets lock, the stakes feed the pool), settle (the cards in,
every box and progressive award worked out), void (a misdeal before settlement).

Read in this order: `opening`, `settlement`, `voiding` (one screen each); `store` (the round's
own rows), `answers` (the JSON they write: the answer, and the audit payloads built from the
domain values), `results` (what a step returns), `replay` (answers stored and replayed, so a
terminal may retry anything). Money is decided by `jackpot.money.movements`, which returns it
as data; the step builds its event and answer from it and writes them (`jackpot.money.ledger`,
or a movement's `Attempt`): nothing calls back into the step. Every rule is the rules engine's
(`rules`); locks follow `jackpot.money.locks`.

Each step has one entry, `round_open`, `round_settle`, `round_void` (the terminal's and the
supervisor's void alike): `jackpot.money.locks.retried`, the one retry policy, around one
`transaction.atomic(durable=True)`, inside which everything happens: the Idempotency-Key's
record looked up and stored (`replay.idempotent`), the round's rows, the money and its audit
event. Nothing else opens a transaction on the round path, and a step cannot be called inside
another transaction (durable raises). A step returns a typed result (`RoundOpened`,
`RoundSettled`, `RoundVoided`), no HTTP status: the view chooses it.

Invariants: `(table, round_id)` is unique; a step retried with the same payload returns the first
answer and moves nothing; every money movement is written with its audit event in the same
transaction as the round's own rows; what is hashed into the chain is built from the domain
values, never from the answer's JSON.
"""

from tables.rounds.opening import round_open
from tables.rounds.replay import IdempotencyKey, key_fingerprint
from tables.rounds.results import RoundOpened, RoundSettled, RoundVoided, StepResult
from tables.rounds.settlement import round_settle
from tables.rounds.voiding import round_void

__all__ = [
    "IdempotencyKey",
    "RoundOpened",
    "RoundSettled",
    "RoundVoided",
    "StepResult",
    "key_fingerprint",
    "round_open",
    "round_settle",
    "round_void",
]
