"""Settle a round: the cards and decisions in, every box and progressive award worked out.

`round_settle`, the one entry: `jackpot.money.locks.retried` around one durable transaction, in
which the Idempotency-Key is looked up (`tables.rounds.replay.idempotent`), the round row locked,
each seat settled by the rules engine with the terms the round opened with (`store.round_terms`),
the awards granted (`jackpot.money.movements.grant_awards_last`: an `Attempt` the step builds its
event, answer and round record from and writes them with), and the signs told after commit.

Invariants:
- locks in `jackpot.money.locks`'s order: the round row, the table's chain head, the pool row (only
  when the round grants awards) last, unless a seat won the jackpot: then first;
- each award records what it shows of the round (`movements.Dealt`), so the progressive never
  reads this app's rows; the big wins' notifications commit with the awards;
- the round is counted (`jackpot_rounds_settled_total`) once the transaction commits.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core import metrics
from core.dispatch import send_after_commit
from jackpot.money import ledger, locks, movements
from jackpot.money.meter import pool_meter
from jackpot.sign import display
from rules.errors import RulesError
from rules.paytables import CURRENT
from rules.progressive import OwedAward, round_awards
from rules.stud import StudBets, StudDecision, settle_stud
from rules.uth import UthBets, UthDecision, UthSettlement, settle_uth
from tables.audit import award_odds
from tables.bodies.round_requests import ResultRequest
from tables.models import Game, Round, RoundState, Table
from tables.rounds import answers, store
from tables.rounds.answers import Settlement
from tables.rounds.replay import IdempotencyKey, KeyRecord, already_closed, idempotent
from tables.rounds.results import RoundSettled, Written


@locks.retried
@transaction.atomic(durable=True)
def round_settle(
    *,
    table: Table,
    round_id: str,
    request: ResultRequest,
    fingerprint: str,
    actor: str,
    key: IdempotencyKey | None = None,
) -> RoundSettled:
    """Settle every seat, grant the progressive's awards, and record it all."""
    return idempotent(
        table,
        key,
        lambda record: _settle_open(table, round_id, request, fingerprint, actor, record),
        RoundSettled,
    )


def _settle_open(
    table: Table,
    round_id: str,
    request: ResultRequest,
    fingerprint: str,
    actor: str,
    record: KeyRecord,
) -> RoundSettled:
    """Settle the round if it is open; replay (or refuse) once it is closed."""
    found = store.locked_round(table, round_id)
    closed = already_closed(found, fingerprint, RoundSettled, closing=RoundState.SETTLED)
    if closed is not None:
        return closed
    return _settle(table, found, request, fingerprint, actor, record)


def _settle(
    table: Table,
    found: Round,
    request: ResultRequest,
    fingerprint: str,
    actor: str,
    record: KeyRecord,
) -> RoundSettled:
    now = timezone.now()
    pool = store.round_pool(found, table)
    terms = store.round_terms(found)
    settlements = _settlements(table, found, request, terms)
    slot = locks.chain_slot(ledger.table_chain(table.pk))  # before the pool row (money.locks)

    def built(granted: movements.AwardsGranted | None) -> Written:
        meter = granted.meter if granted else pool_meter(pool_id=pool.pk) if pool else None
        answer = answers.settled(
            table=table,
            round_id=found.round_id,
            request=request,
            now=now,
            settlements=settlements,
            granted=granted,
            meter=meter,
        )
        payload = answers.settled_event(
            table=table, found=found, request=request, settlements=settlements, granted=granted
        )
        closed = store.answered(
            found.pk,
            {
                "state": RoundState.SETTLED,
                "closed_at": now,
                "closed_by": actor,
                "close_fingerprint": fingerprint,
                "close_response": answer,
                "result": answers.result_record(request, settlements),
            },
        )
        return Written(payload, (closed, *record.rows(answer)), answer)

    owed = _owed(settlements) if pool is not None and terms is not None else ()
    game = str(table.game)
    transaction.on_commit(lambda: metrics.ROUNDS_SETTLED.labels(game).inc(), robust=True)
    if not owed:
        written = built(None)
        ledger.record(
            chain=slot,
            kind="round.settled",
            actor=actor,
            pool_id=found.pool_id,
            occurred_at=now,
            payload=written.payload,
            also=written.also,
        )
        return RoundSettled(written.answer)
    assert pool is not None and terms is not None
    # The award odds of the table and its terminals, checked once this commits (a task sent
    # then: nothing more on the terminal's request; the watch checks too).
    send_after_commit(award_odds.TASK, table.pk)
    # The awards and their event, the pool row taken last unless a seat won the jackpot
    # (movements.Attempt).
    attempt = movements.grant_awards_last(
        pool=pool,
        terms=terms,
        round_pk=found.pk,
        dealt=_dealt(table, found, request, settlements),
        owed=owed,
        now=now,
    )
    while True:
        written = built(attempt.moved)
        if attempt.record(
            chain=slot,
            kind="round.settled",
            actor=actor,
            payload=written.payload,
            also=written.also,
        ):
            break
        attempt = attempt.retake()
    granted = attempt.moved
    # The signs, after commit: the new awards, and the meter a jackpot reset.
    display.awards_changed(pool.pk)
    if granted.hit_meter_version is not None:
        display.meter_changed(pool.pk, granted.meter)
    return RoundSettled(written.answer)


def _settlements(
    table: Table, found: Round, request: ResultRequest, terms: movements.Terms | None
) -> dict[int, Settlement]:
    """Each seat settled by the rules engine with the terms the round opened with; 400
    `seats_mismatch` unless the result gives exactly the seats that opened the round."""
    bets = store.round_bets(found.pk, Game(table.game))
    posted = sorted(play.seat for play in request.seats)
    if posted != sorted(bets):
        raise RulesError(
            "seats_mismatch",
            f"the result must give exactly the seats that opened the round {sorted(bets)}, "
            f"got {posted}",
            param="seats",
        )
    paytables = movements.paytables(terms) if terms else CURRENT
    settlements: dict[int, Settlement] = {}
    for play in request.seats:
        seat_bets = bets[play.seat]
        if isinstance(seat_bets, UthBets):
            assert isinstance(play.decision, UthDecision)
            settlements[play.seat] = settle_uth(
                player=play.cards,
                dealer=request.dealer,
                board=request.board,
                bets=seat_bets,
                decision=play.decision,
                paytables=paytables,
                progressive_stake_cents=found.stake_cents,
            )
        else:
            assert isinstance(seat_bets, StudBets) and isinstance(play.decision, StudDecision)
            settlements[play.seat] = settle_stud(
                player=play.cards,
                dealer=request.dealer,
                bets=seat_bets,
                decision=play.decision,
                paytables=paytables,
            )
    return settlements


def _owed(settlements: dict[int, Settlement]) -> tuple[OwedAward, ...]:
    """The progressive's awards the round owes, envy included (`rules.progressive`)."""
    return round_awards(
        {
            seat: settlement.progressive.award
            for seat, settlement in settlements.items()
            if isinstance(settlement, UthSettlement) and settlement.progressive is not None
        }
    )


def _dealt(
    table: Table, found: Round, request: ResultRequest, settlements: dict[int, Settlement]
) -> movements.Dealt:
    """What the round's awards show of it, from the table and the request as settled: each
    seat's cards as posted and the best five the rules engine judged it on."""
    return movements.Dealt(
        table_pk=table.pk,
        table_name=table.name,
        game=str(table.game),
        round_name=found.round_id,
        board=tuple(str(card) for card in request.board),
        hands={
            play.seat: movements.SeatHand(
                cards=tuple(str(card) for card in play.cards),
                best_five=tuple(str(card) for card in settlements[play.seat].player_hand.best_five),
            )
            for play in request.seats
        },
    )
