"""Void an open round (a misdeal): its progressive stakes are refunded in full by the house.

One transaction: the round row locked, the refund (`jackpot.money.movements`), the audit event and
the stored answer. Locks: the round row, then the table's chain head (`jackpot.money.locks`). The
meter and the reserve keep the shares they got at open, since the meter never goes down but for a
hit.

The terminal voids a misdeal; a supervisor voids a round left open (its terminal crashed, its
result never came) through the same function, as `user:<name>` with `by_supervisor`: the same
refund, audit event and stored answer, which any later void of the round replays
(`tables.rounds.replay.already_closed`).

`round_void` is the one entry, the terminal's and the supervisor's: `jackpot.money.locks.retried`
around one durable transaction, in which the Idempotency-Key's record, if the request has one, is
looked up first (`tables.rounds.replay.idempotent`) and written with the answer, in the event's
statement.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from jackpot.money import ledger, locks, movements
from jackpot.money.meter import pool_meter
from tables.models import Game, RoundState, Table
from tables.rounds import answers, store
from tables.rounds.replay import IdempotencyKey, KeyRecord, already_closed, idempotent
from tables.rounds.results import RoundVoided


@locks.retried
@transaction.atomic(durable=True)
def round_void(
    *,
    table: Table,
    round_id: str,
    reason: str,
    fingerprint: str,
    actor: str,
    by_supervisor: bool = False,
    key: IdempotencyKey | None = None,
) -> RoundVoided:
    """Void an open round and refund its progressive stakes."""
    return idempotent(
        table,
        key,
        lambda record: _void_open(
            table, round_id, reason, fingerprint, actor, by_supervisor, record
        ),
        RoundVoided,
    )


def _void_open(
    table: Table,
    round_id: str,
    reason: str,
    fingerprint: str,
    actor: str,
    by_supervisor: bool,
    record: KeyRecord,
) -> RoundVoided:
    """Void the round if it is open; replay (or refuse) once it is closed."""
    found = store.locked_round(table, round_id)
    closed = already_closed(
        found, fingerprint, RoundVoided, closing=RoundState.VOID, by_supervisor=by_supervisor
    )
    if closed is not None:
        return closed
    now = timezone.now()
    refund = store.progressive_stakes_cents(store.round_bets(found.pk, Game(table.game)))
    answer = answers.voided(
        table=table,
        round_id=found.round_id,
        reason=reason,
        now=now,
        refund_cents=refund,
        meter=pool_meter(pool_id=found.pool_id) if found.pool_id else None,
    )
    ledger.record(
        chain=ledger.table_chain(table.pk),
        kind="round.voided",
        actor=actor,
        pool_id=found.pool_id,
        occurred_at=now,
        postings=movements.refund_stakes(round_pk=found.pk, refund_cents=refund),
        payload=answers.voided_event(table=table, found=found, reason=reason, refund_cents=refund),
        also=(
            store.answered(
                found.pk,
                {
                    "state": RoundState.VOID,
                    "closed_at": now,
                    "void_reason": reason,
                    "closed_by": actor,
                    "close_fingerprint": fingerprint,
                    "close_response": answer,
                },
            ),
            *record.rows(answer),
        ),
    )
    return RoundVoided(answer)
