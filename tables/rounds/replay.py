"""Answers stored and replayed: what makes a terminal's retry safe.

A step's first answer is stored with its request's fingerprint, in the transaction that moves
the money, so the two commit together. Invariants:
- a step (open, settle, void) retried with the same payload replays the first answer and moves
  nothing; another payload under the same round id is a 409 `round_id_reused`;
- a request with an `Idempotency-Key` runs at most once per (table, key); the same key with
  another request is a 409 `idempotency_key_reused`; the key's record is written in the step's
  own transaction, in the statement that writes its answer (`KeyRecord`);
- a replay says so (`Idempotent-Replayed: true`) and is given only once the synchronous standby
  has what it acknowledges (`_replay`);
- a supervisor's void stands for any void of the round; the refund is made once.
Why each holds (the race of two requests with one key, the fingerprint's derivation, the
standby): docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.errors import Conflict
from jackpot.money import rows
from tables.models import IdempotencyRecord, Round, RoundState, Table
from tables.rounds.results import JsonObject, StepResult

R = TypeVar("R", bound=StepResult)


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """A client's Idempotency-Key and the fingerprint of the request it was sent with."""

    key: str
    fingerprint: str


@dataclass(slots=True)
class KeyRecord:
    """The Idempotency-Key's record of a step's answer, for the step to write with the answer
    (`rows(answer)`, in the statement that writes it); none when the request has no key."""

    table: Table
    key: IdempotencyKey | None
    written: bool = False  # handed to the step, which writes it once it returns an answer

    def rows(self, answer: JsonObject) -> tuple[rows.RowInsert, ...]:
        if self.key is None:
            return ()
        self.written = True
        record = {
            "table_id": self.table.pk,
            "key": self.key.key,
            "fingerprint": self.key.fingerprint,
            "response": answer,
            "created_at": timezone.now(),
        }
        return (rows.RowInsert(IdempotencyRecord, record),)


def key_fingerprint(path: str, body_fingerprint: str) -> str:
    """The fingerprint an Idempotency-Key is stored with: the request's path and its body's
    fingerprint (`jackpot.money.canonical.fingerprint`, computed once per request), hashed."""
    return hashlib.sha256(f"{path}\n{body_fingerprint}".encode()).hexdigest()


def _replay(answer: JsonObject, result: type[R]) -> R:
    """The stored answer, replayed once it is durable: the replay writes the commit probe
    (`jackpot.money.rows.COMMIT_PROBE`) in the step's transaction, so its COMMIT waits for the
    synchronous standby like any write (and a cancelled wait raises, config.database). The
    standby then has the WAL up to it, the stored answer's included. Replays are rare (a
    resend)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(rows.COMMIT_PROBE)
    return result(answer, replayed=True)


def replayed(
    stored_fingerprint: str, fingerprint: str, answer: JsonObject, result: type[R], what: str
) -> R:
    """The stored first answer of a round step, if `fingerprint` is the first request's."""
    if stored_fingerprint != fingerprint:
        raise Conflict(
            "round_id_reused",
            f"this round was already {what} with a different payload; nothing was changed",
            param="round_id",
        )
    return _replay(answer, result)


# A closed round: how its step is named, and the refusal of the other step.
_CLOSED = {
    RoundState.SETTLED: ("settled", "round_settled", "a settled round cannot be voided"),
    RoundState.VOID: ("voided", "round_void", "this round was voided; it cannot be settled"),
}


#: The actor of a staff member's step (`user:<name>`), as against a terminal's (`terminal:<id>`).
STAFF_ACTOR = "user:"


def already_closed(
    found: Round,
    fingerprint: str,
    result: type[R],
    *,
    closing: RoundState,
    by_supervisor: bool = False,
) -> R | None:
    """None while `found` is open. Once closed: the stored answer when the step `closing` closed
    it (a retry), a 409 when the other step did. A void by a supervisor (`by_supervisor`), or of
    a round a supervisor voided, replays the stored void whatever its reason."""
    if found.state == RoundState.OPEN:
        return None
    what, code, refusal = _CLOSED[RoundState(found.state)]
    if found.state != closing:
        raise Conflict(code, refusal, param="round_id")
    if closing == RoundState.VOID and (by_supervisor or found.closed_by.startswith(STAFF_ACTOR)):
        return _replay(found.close_response or {}, result)
    return replayed(found.close_fingerprint, fingerprint, found.close_response or {}, result, what)


def _stored(table: Table, key: IdempotencyKey, result: type[R]) -> R | None:
    """The first answer stored under `key`, replayed; a 409 if it answered another request."""
    stored = IdempotencyRecord.objects.filter(table=table, key=key.key).first()
    if stored is None:
        return None
    if stored.fingerprint != key.fingerprint:
        raise Conflict(
            "idempotency_key_reused",
            "this Idempotency-Key was used with a different request; nothing was changed",
            param="Idempotency-Key",
        )
    return _replay(stored.response, result)


def idempotent(
    table: Table, key: IdempotencyKey | None, step: Callable[[KeyRecord], R], result: type[R]
) -> R:
    """Run `step` at most once per (table, Idempotency-Key) and store its answer; replay the
    first answer (as `result`) to a request with a key already answered. The step writes the
    key's record with its answer (`KeyRecord`); this writes it after a step that did not.

    Runs inside the step's transaction, which the caller opened (durable): never a transaction
    of its own, so the record and the step's rows commit together.
    """
    assert connection.in_atomic_block, "idempotent runs inside its step's transaction"
    record = KeyRecord(table, key)
    if key is None:
        return step(record)
    stored = _stored(table, key, result)
    if stored is not None:
        return stored
    # A savepoint: if another request took the key meanwhile, this step's writes go with it.
    # Never released (the COMMIT ends it): a RELEASE is one more round trip, and after an open
    # it would come while the pool row is held.
    savepoint = transaction.savepoint()
    try:
        outcome = step(record)
        if not record.written:
            for row in record.rows(outcome.answer):
                rows.write(row)
    except IntegrityError:
        # The INSERT waited for the request that took the key and failed once it committed: its
        # record is visible to the next statement (READ COMMITTED). Any other integrity error
        # leaves no record and goes up as it was.
        transaction.savepoint_rollback(savepoint)
        # Back at the savepoint nothing of the step is left, and the transaction goes on (an
        # ORM write that failed in the step had marked it for rollback).
        transaction.set_rollback(False)
        stored = _stored(table, key, result)
        if stored is None:
            raise
        return stored
    return outcome
