"""Open a round: the bets lock, and each progressive stake raises the pool's meter at once.

`round_open`, the one entry: `jackpot.money.locks.retried` around one durable transaction, in
which the Idempotency-Key is looked up (`tables.rounds.replay.idempotent`), the round and its seats
are written (`store`), the stakes taken (`jackpot.money.movements.take_stakes_last`: an `Attempt`
the step builds its event and answer from and writes them with), and the signs told after commit.

Invariants:
- locks in `jackpot.money.locks`'s order: the table's row (shared), the new round row, the table's
  chain head, the pool row last, held for the final statement and the commit;
- the round belongs to the pool its table feeds now and records that pool's terms as committed
  under the table's lock; its `round.opened` event carries them (`terms`);
- one open round a table (`tables.models.ONE_OPEN_ROUND`): an open while another is open is a 409
  `round_in_progress`; the round's INSERT refuses before anything is written (no savepoint), and
  one that met a round closed since is run again whole (`locks.StaleConflict`).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.errors import Conflict
from jackpot.money import ledger, locks, movements
from jackpot.money.meter import pool_meter
from jackpot.sign import display
from rules.uth import UthBets
from tables.bodies.round_requests import OpenRequest
from tables.models import Round, RoundState, Table
from tables.rounds import answers, store
from tables.rounds.replay import IdempotencyKey, KeyRecord, idempotent, replayed
from tables.rounds.results import RoundOpened, Written


@locks.retried
@transaction.atomic(durable=True)
def round_open(
    *,
    table: Table,
    request: OpenRequest,
    fingerprint: str,
    actor: str,
    key: IdempotencyKey | None = None,
) -> RoundOpened:
    """Lock the bets of a new round; its progressive stakes feed the table's pool.

    No look-up first: the unique (table, round_id) finds a replay, whose INSERT writes nothing
    (nor does anything after it) before the first answer is returned again; the unique open
    round per table finds a round in progress the same way.
    """
    return idempotent(
        table,
        key,
        lambda record: _open_or_refuse(table, request, fingerprint, actor, record),
        RoundOpened,
    )


def _open_or_refuse(
    table: Table, request: OpenRequest, fingerprint: str, actor: str, record: KeyRecord
) -> RoundOpened:
    opened = _open(table, request, fingerprint, actor, record)
    if opened is not None:
        return opened
    # The round's INSERT met a round of the table's (a unique index): nothing was written. A
    # replay first: the round this id opened may well be the table's open round.
    existing = Round.objects.filter(table=table, round_id=request.round_id).first()
    if existing is not None:
        return replayed(
            existing.open_fingerprint, fingerprint, existing.open_response, RoundOpened, "opened"
        )
    in_progress = Round.objects.filter(table=table, state=RoundState.OPEN).first()
    if in_progress is None:
        raise locks.StaleConflict(
            "round_in_progress",
            f"a round was open at table {table.pk} when this one was written, and has closed "
            "since; nothing was written: post it again",
            param="round_id",
        )
    raise Conflict(
        "round_in_progress",
        f"round {in_progress.round_id!r} is open at table {table.pk} (opened "
        f"{in_progress.opened_at.isoformat()}): post its result or void it before "
        "opening another; nothing was written",
        param="round_id",
    )


def _open(
    table: Table, request: OpenRequest, fingerprint: str, actor: str, record: KeyRecord
) -> RoundOpened | None:
    """The round opened, its answer written with the key's `record`; None, with nothing written,
    when its INSERT met a round of the table's."""
    now = timezone.now()
    committed = store.locked_table(table)
    terms = store.committed_terms(committed)
    round_pk = store.insert_round(table, request, fingerprint, now, terms)
    if round_pk is None:
        return None
    pool = store.pool_of_record(table, committed, terms)
    slot = locks.chain_slot(ledger.table_chain(table.pk))
    stakes = sum(
        1
        for seat in request.seats
        if isinstance(seat.bets, UthBets) and seat.bets.progressive_cents
    )

    def built(taken: movements.StakesTaken | None) -> Written:
        meter = taken.meter if taken else pool_meter(pool_id=pool.pk) if pool else None
        answer = answers.opened(table=table, request=request, now=now, stakes=taken, meter=meter)
        payload = answers.opened_event(
            table=table, round_pk=round_pk, request=request, stakes=taken, terms=terms
        )
        answered = store.answered(round_pk, {"open_response": answer})
        return Written(payload, (answered, *record.rows(answer)), answer)

    if pool is None or not stakes:
        written = built(None)
        ledger.record(
            chain=slot,
            kind="round.opened",
            actor=actor,
            pool_id=table.pool_id,
            occurred_at=now,
            payload=written.payload,
            also=written.also,
        )
        return RoundOpened(written.answer)
    # The event built before the pool row is taken, written with it (movements.Attempt).
    attempt = movements.take_stakes_last(
        pool=pool, round_pk=round_pk, stakes=stakes, stake_cents=pool.stake_cents, now=now
    )
    while True:
        written = built(attempt.moved)
        if attempt.record(
            chain=slot, kind="round.opened", actor=actor, payload=written.payload, also=written.also
        ):
            break
        attempt = attempt.retake()
    display.meter_changed(pool.pk, attempt.moved.meter)  # the signs, after commit
    return RoundOpened(written.answer)
