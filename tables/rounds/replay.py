"""Answers stored and replayed: what makes a terminal's retry safe.

A round step's first answer is stored with the fingerprint (SHA-256 of the canonical request) of
the request that made it, in the same transaction as the money, so the two commit together.
Invariants:
- a round step (open, settle, void) retried with the same payload returns the first answer and
  moves nothing; another payload under the same round id is refused (409 `round_id_reused`);
- a request sent with an `Idempotency-Key` runs at most once per (table, key): the same key with
  the same request replays the first answer, with another request it is a 409
  (`idempotency_key_reused`). The key's record is written in the operation's own transaction.
- a replayed answer says so (`Answer.replayed`, the `Idempotent-Replayed: true` header): a
  terminal that restarted its round numbering learns it got an old answer, not a new round;
- a replay is an acknowledgement too, so it is given only once the synchronous standby has what
  it acknowledges (`_replay`): a first commit whose wait for the standby was cancelled is
  visible on its server before the standby has it (config.database), and a resend must not be
  told "done" off that server alone;
- a supervisor's void stands for any void of the round: once a supervisor voided it, the
  terminal's own void (whatever its reason) gets the supervisor's stored answer as a replay, and
  a supervisor's void of a round already void gets the stored answer too. The refund is made
  once, by whichever void came first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction

from config.errors import Conflict
from jackpot import locks, rows
from tables.models import IdempotencyRecord, Round, RoundState, Table

#: A JSON object as the API answers it.
JsonObject = dict[str, object]


@dataclass(frozen=True, slots=True)
class Answer:
    """What a round step answers the terminal: an HTTP status and a JSON body, and whether it is
    the stored first answer of an earlier request (a replay) rather than this request's own."""

    status: int
    body: JsonObject
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """A client's Idempotency-Key and the fingerprint of the request it was sent with."""

    key: str
    fingerprint: str


def _replay(status: int, body: JsonObject) -> Answer:
    """The stored answer, replayed once it is durable: the replay's transaction writes the
    commit probe (`jackpot.rows.COMMIT_PROBE`), so its COMMIT waits for the synchronous standby
    like any write (and a cancelled wait raises, config.database). The standby then has the WAL
    up to it, the stored answer's included. Replays are rare (a resend)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(rows.COMMIT_PROBE)
    return Answer(status, body, replayed=True)


def replayed(
    stored_fingerprint: str, fingerprint: str, body: JsonObject, status: int, what: str
) -> Answer:
    """The stored first answer of a round step, if `fingerprint` is the first request's."""
    if stored_fingerprint != fingerprint:
        raise Conflict(
            "round_id_reused",
            f"this round was already {what} with a different payload; nothing was changed",
            param="round_id",
        )
    return _replay(status, body)


# A closed round: how its step is named, and the refusal of the other step.
_CLOSED = {
    RoundState.SETTLED: ("settled", "round_settled", "a settled round cannot be voided"),
    RoundState.VOID: ("voided", "round_void", "this round was voided; it cannot be settled"),
}


#: The actor of a staff member's step (`user:<name>`), as against a terminal's (`terminal:<id>`).
STAFF_ACTOR = "user:"


def already_closed(
    found: Round, fingerprint: str, *, closing: RoundState, by_supervisor: bool = False
) -> Answer | None:
    """None while `found` is open. Once closed: the stored answer when the step `closing` closed
    it (a retry), a 409 when the other step did. A void by a supervisor (`by_supervisor`), or of
    a round a supervisor voided, replays the stored void whatever its reason."""
    if found.state == RoundState.OPEN:
        return None
    what, code, refusal = _CLOSED[RoundState(found.state)]
    if found.state != closing:
        raise Conflict(code, refusal, param="round_id")
    if closing == RoundState.VOID and (by_supervisor or found.closed_by.startswith(STAFF_ACTOR)):
        return _replay(200, found.close_response or {})
    return replayed(found.close_fingerprint, fingerprint, found.close_response or {}, 200, what)


@locks.retried
def idempotent(table: Table, key: IdempotencyKey | None, operation: Callable[[], Answer]) -> Answer:
    """Run `operation` at most once per (table, Idempotency-Key); replay its first answer.

    `transaction.atomic` nests as a savepoint inside the operation's transaction. Two requests
    racing with one key: the loser's insert fails on the unique constraint, rolls back, and
    replays the winner's answer.
    """
    if key is None:
        return operation()
    for _attempt in range(3):
        stored = IdempotencyRecord.objects.filter(table=table, key=key.key).first()
        if stored is not None:
            if stored.fingerprint != key.fingerprint:
                raise Conflict(
                    "idempotency_key_reused",
                    "this Idempotency-Key was used with a different request; nothing was changed",
                    param="Idempotency-Key",
                )
            return _replay(stored.status_code, stored.response)
        try:
            with transaction.atomic():
                answer = operation()
                IdempotencyRecord.objects.create(
                    table=table,
                    key=key.key,
                    fingerprint=key.fingerprint,
                    status_code=answer.status,
                    response=answer.body,
                )
            return answer
        except IntegrityError:
            continue
    raise Conflict("idempotency_key_busy", "the same request is being processed; retry")
