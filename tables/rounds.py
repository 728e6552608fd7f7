"""The round lifecycle: open (bets lock, stakes feed the pool), settle (cards in, every box and
progressive award worked out), void (a misdeal before settlement). One transaction each.

Invariants:
- `(table, round_id)` is unique. Posting the same step again with the same payload returns the
  first answer and moves nothing; a different payload under the same id is refused (409).
- Every money movement is written by `jackpot.ledger.record` with its audit event, in the same
  transaction as the round's own rows.
- Locks are taken in one order: the round row, the table's audit chain head, then the pool row
  (`jackpot.meter`), last, so it is held only for the final write and the commit. The pool row
  is the only lock tables share.
- The rules engine computes every result; nothing here re-implements a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from config.errors import Conflict, NotFound
from jackpot import display, ledger, meter, rows
from jackpot.ledger import Posting
from jackpot.models import AccountKind, Award, AwardKind, AwardStatus, Pool, TransferCode
from jackpot.selectors import meter_json, pool_meter
from tables.bodies import OpenRequest, ResultRequest
from tables.models import Game, IdempotencyRecord, Round, RoundSeat, RoundState, Table
from tables.render import hand_json, settlement_json
from tables.rules.errors import RulesError
from tables.rules.paytables import get_progressive_paytable
from tables.rules.progressive import ProgressiveAward, envy_seats, fixed_award_cents
from tables.rules.stud import StudBets, StudDecision, settle_stud
from tables.rules.uth import UthBets, UthDecision, UthSettlement, settle_uth


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """A client's Idempotency-Key and the fingerprint of the request it was sent with."""

    key: str
    fingerprint: str


def _chain(table: Table) -> str:
    # One chain per table: a table's rounds are serialized by its own terminal anyway, so the
    # chain adds no lock shared between tables; the order of meter changes across tables is
    # recorded by the pool's meter version, carried in each event.
    return ledger.table_chain(table.pk)


def _replay(
    stored_fingerprint: str, fingerprint: str, response: Any, status: int, what: str
) -> Answer:
    if stored_fingerprint != fingerprint:
        raise Conflict(
            "round_id_reused",
            f"this round was already {what} with a different payload; nothing was changed",
            param="round_id",
        )
    return Answer(status, response)


def idempotent(table: Table, key: IdempotencyKey | None, operation: Callable[[], Answer]) -> Answer:
    """Run `operation` at most once per (table, Idempotency-Key); replay its first answer.

    The key's record is written in the operation's own transaction (`transaction.atomic` nests as
    a savepoint), so the answer and the money commit together. Two requests racing with one key:
    the loser's insert fails on the unique constraint, rolls back, and replays the winner's answer.
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
            return Answer(stored.status_code, stored.response)
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


# --- open ------------------------------------------------------------------------------------


def round_open(*, table: Table, request: OpenRequest, fingerprint: str, actor: str) -> Answer:
    """Lock the bets of a new round; each progressive stake raises the pool's meter at once.

    No look-up first: the unique (table, round_id) constraint finds a replay, and the replay's
    transaction (stakes included) rolls back whole before the first answer is returned again.
    """
    try:
        with transaction.atomic():
            return _open(table, request, fingerprint, actor)
    except IntegrityError:
        existing = Round.objects.filter(table=table, round_id=request.round_id).first()
        if existing is None:
            raise
        return _replay(
            existing.open_fingerprint, fingerprint, existing.open_response, 201, "opened"
        )


def _open(table: Table, request: OpenRequest, fingerprint: str, actor: str) -> Answer:
    now = timezone.now()
    seats = [_bets_json(entry.seat, entry.bets) for entry in request.seats]
    stakes = sum(1 for seat in seats if seat["bets"].get("progressive_cents"))
    # The round and its bets first: a replay fails here, on the unique round id, before any lock.
    (round_pk,) = rows.insert(
        Round,
        [
            {
                "table_id": table.pk,
                "round_id": request.round_id,
                "state": RoundState.OPEN,
                "opened_at": now,
                "open_fingerprint": fingerprint,
                "open_response": {},  # the answer, written with the event below
            }
        ],
        returning_id=True,
    )
    rows.insert(
        RoundSeat,
        [{"round_id": round_pk, "seat": seat["seat"], **seat["bets"]} for seat in seats],
        returning_id=False,
    )
    entry = ledger.reserve(_chain(table))
    pool = table.pool
    progressive: dict[str, Any] | None = None
    meter_body: dict[str, Any] | None = None
    split: meter.Split | None = None
    if pool is not None:
        if stakes:
            # The pool row lock: last, so it is held only for the final write and the commit.
            split = meter.add_stakes(pool_id=pool.pk, stakes=stakes, now=now)
            meter_body = meter_json(
                pool_id=pool.pk,
                currency=pool.currency,
                meter_cents=split.meter_after_cents,
                version=split.meter_version,
                as_of=now,
            )
            display.meter_changed(pool.pk, meter_body)
        else:
            meter_body = pool_meter(pool_id=pool.pk)
        progressive = {
            "stakes": stakes,
            "stake_cents": pool.stake_cents,
            "meter_cents": split.meter_cents if split else 0,
            "reserve_cents": split.reserve_cents if split else 0,
            "house_cents": split.house_cents if split else 0,
        }
    body = {
        "table": table.pk,
        "round_id": request.round_id,
        "state": RoundState.OPEN.value,
        "opened_at": now.isoformat(),
        "seats": seats,
        "progressive": progressive,
        "meter": meter_body,
    }
    ledger.record(
        chain=entry,
        kind="round.opened",
        actor=actor,
        pool_id=table.pool_id,
        occurred_at=now,
        postings=_contribution_postings(split, round_pk) if split else [],
        payload={
            "table": table.pk,
            "pool": table.pool_id,
            "round": round_pk,
            "round_id": request.round_id,
            "seats": seats,
            "progressive": progressive,
            # Orders this event's meter change among every table's (see accounting.md).
            "meter_version": split.meter_version if split else None,
        },
        also=rows.RowUpdate(Round, round_pk, {"open_response": body}),
    )
    return Answer(201, body)


def _contribution_postings(split: meter.Split, round_pk: int) -> list[Posting]:
    stakes, meter_, reserve, house = (
        AccountKind.STAKES,
        AccountKind.METER,
        AccountKind.RESERVE,
        AccountKind.HOUSE,
    )
    postings = [
        Posting(TransferCode.CONTRIBUTION_METER, stakes, meter_, split.meter_cents, round_pk),
    ]
    if split.house_cents >= 0:
        postings += [
            Posting(
                TransferCode.CONTRIBUTION_RESERVE, stakes, reserve, split.reserve_cents, round_pk
            ),
            Posting(TransferCode.CONTRIBUTION_HOUSE, stakes, house, split.house_cents, round_pk),
        ]
    else:
        # The reserve crossed one more cent than the stakes had left: that cent is the sub-cent
        # remainders the house held so far, released now.
        carry = -split.house_cents
        postings += [
            Posting(
                TransferCode.CONTRIBUTION_RESERVE,
                stakes,
                reserve,
                split.reserve_cents - carry,
                round_pk,
            ),
            Posting(TransferCode.SUB_CENT_CARRY, house, reserve, carry, round_pk),
        ]
    return postings


def _bets_json(seat: int, bets: UthBets | StudBets) -> dict[str, Any]:
    if isinstance(bets, UthBets):
        return {
            "seat": seat,
            "bets": {
                "ante_cents": bets.ante_cents,
                "blind_cents": bets.blind_cents,
                "trips_cents": bets.trips_cents,
                "progressive_cents": bets.progressive_cents,
            },
        }
    return {"seat": seat, "bets": {"ante_cents": bets.ante_cents, "bonus_cents": bets.bonus_cents}}


# --- settle ----------------------------------------------------------------------------------


def _locked_round(table: Table, round_id: str) -> Round:
    rnd = rows.select_one(
        Round, "table_id = %s AND round_id = %s", [table.pk, round_id], for_update=True
    )
    if rnd is None:
        raise NotFound(
            "round_not_found", f"no round {round_id!r} at table {table.pk}", param="round_id"
        )
    return rnd


def round_settle(
    *, table: Table, round_id: str, request: ResultRequest, fingerprint: str, actor: str
) -> Answer:
    """Settle every seat with the rules engine, award the progressive, and record it all."""
    with transaction.atomic():
        rnd = _locked_round(table, round_id)
        if rnd.state == RoundState.SETTLED:
            return _replay(rnd.close_fingerprint, fingerprint, rnd.close_response, 200, "settled")
        if rnd.state == RoundState.VOID:
            raise Conflict(
                "round_void", "this round was voided; it cannot be settled", param="round_id"
            )
        return _settle(table, rnd, request, fingerprint, actor)


def _settle(
    table: Table, rnd: Round, request: ResultRequest, fingerprint: str, actor: str
) -> Answer:
    now = timezone.now()
    # The bets as locked at open (the stored first answer; RoundSeat holds the same figures).
    seats: dict[int, dict[str, int]] = {
        entry["seat"]: entry["bets"] for entry in rnd.open_response["seats"]
    }
    posted = sorted(play.seat for play in request.seats)
    if posted != sorted(seats):
        raise RulesError(
            "seats_mismatch",
            f"the result must give exactly the seats that opened the round {sorted(seats)}, "
            f"got {posted}",
            param="seats",
        )
    pool: Pool | None = table.pool
    paytable = get_progressive_paytable(pool.paytable_version) if pool else None
    if paytable is not None and paytable.jackpot_percent_bp != 10_000:
        # domain.md: a jackpot royal wins the whole meter, which then resets to the seed. A
        # table paying a share would need rules for the rest that domain.md does not give.
        raise RuntimeError(f"pool {pool}: paytable {paytable.version} does not pay the whole meter")
    settlements: dict[int, Any] = {}
    dealt: dict[int, dict[str, Any]] = {}
    for play in request.seats:
        bets = seats[play.seat]
        if table.game == Game.UTH:
            assert isinstance(play.decision, UthDecision)
            settlements[play.seat] = settle_uth(
                player=play.cards,
                dealer=request.dealer,
                board=request.board,
                bets=UthBets(**bets),
                decision=play.decision,
                progressive_stake_cents=pool.stake_cents if pool else 0,
            )
        else:
            assert isinstance(play.decision, StudDecision)
            settlements[play.seat] = settle_stud(
                player=play.cards,
                dealer=request.dealer,
                bets=StudBets(**bets),
                decision=play.decision,
            )
        dealt[play.seat] = {
            "seat": play.seat,
            "cards": [str(card) for card in play.cards],
            "decision": _decision_json(play.decision),
        }

    entry = ledger.reserve(_chain(table))  # before the pool row: see jackpot.ledger
    awards: list[Award] = []
    postings: list[Posting] = []
    meter_body: dict[str, Any] | None = None
    if pool is not None and paytable is not None:
        plan = _award_plan(settlements, seats, paytable)
        if plan:
            awards, postings, meter_body = _grant(pool, rnd, plan, now)
            display.awards_changed(pool.pk)
            if any(award.kind == AwardKind.ROYAL_FLUSH for award in awards):
                display.meter_changed(pool.pk, meter_body)
        else:
            meter_body = pool_meter(pool_id=pool.pk)

    any_settlement = next(iter(settlements.values()))
    body = {
        "table": table.pk,
        "round_id": rnd.round_id,
        "state": RoundState.SETTLED.value,
        "settled_at": now.isoformat(),
        "board": [str(card) for card in request.board],
        "dealer": [str(card) for card in request.dealer],
        "dealer_hand": hand_json(any_settlement.dealer_hand),
        "dealer_qualifies": any_settlement.dealer_qualifies,
        "seats": [
            {**dealt[number], **settlement_json(settlements[number])} for number in sorted(seats)
        ],
        "awards": [_award_json(award) for award in awards],
        "meter": meter_body,
    }
    ledger.record(
        chain=entry,
        kind="round.settled",
        actor=actor,
        pool_id=table.pool_id,
        occurred_at=now,
        postings=postings,
        payload={
            "table": table.pk,
            "pool": table.pool_id,
            "round": rnd.pk,
            "round_id": rnd.round_id,
            "board": body["board"],
            "dealer": body["dealer"],
            "seats": [{**dealt[n], "net_cents": settlements[n].net_cents} for n in sorted(seats)],
            "awards": body["awards"],
            "meter_version": body["meter"]["sequence"]
            if any(award.kind == AwardKind.ROYAL_FLUSH for award in awards)
            else None,
        },
        also=rows.RowUpdate(
            Round,
            rnd.pk,
            {
                "state": RoundState.SETTLED,
                "closed_at": now,
                "close_fingerprint": fingerprint,
                "close_response": body,
                "result": {
                    "board": body["board"],
                    "dealer": body["dealer"],
                    "seats": [dealt[n] for n in sorted(seats)],
                },
            },
        ),
    )
    return Answer(200, body)


@dataclass(frozen=True, slots=True)
class _Planned:
    seat: int
    kind: AwardKind
    fixed_cents: int | None  # None: the jackpot, whose amount is the meter at the hit


def _award_plan(
    settlements: dict[int, Any], seats: dict[int, dict[str, int]], paytable: Any
) -> list[_Planned]:
    """Each betting seat's best award, plus envy for the others when a seat wins the jackpot."""
    bettors = sorted(number for number, bets in seats.items() if bets.get("progressive_cents"))
    best = {}
    for number in bettors:
        settlement = settlements[number]
        assert isinstance(settlement, UthSettlement) and settlement.progressive is not None
        best[number] = settlement.progressive.award
    envy = envy_seats(best, bettors)
    plan: list[_Planned] = []
    for number in bettors:
        if best[number] != ProgressiveAward.NONE:
            plan.append(
                _Planned(
                    number, AwardKind(best[number].value), fixed_award_cents(best[number], paytable)
                )
            )
        if number in envy:
            plan.append(_Planned(number, AwardKind.ENVY, paytable.envy_cents))
    return plan


def _grant(
    pool: Pool, rnd: Round, plan: list[_Planned], now: Any
) -> tuple[list[Award], list[Posting], dict[str, Any]]:
    """Take the pool row lock, number the awards, take any jackpot, and build the postings."""
    sequences = iter(meter.next_award_sequences(pool_id=pool.pk, count=len(plan)))
    awards: list[Award] = []
    hit: meter.Hit | None = None
    for item in plan:
        if item.fixed_cents is None:
            hit = meter.take_jackpot(pool_id=pool.pk, now=now)
            amount = hit.amount_cents
        else:
            amount = item.fixed_cents
        pending = item.fixed_cents is None or amount >= pool.verification_threshold_cents
        awards.append(
            Award(
                pool=pool,
                round=rnd,
                seat=item.seat,
                kind=item.kind,
                amount_cents=amount,
                status=AwardStatus.PENDING if pending else AwardStatus.APPROVED,
                sequence=next(sequences),
                created_at=now,
            )
        )
    awards = [award for award in awards if award.amount_cents > 0]
    Award.objects.bulk_create(awards)

    postings: list[Posting] = []
    for award in awards:
        target = (
            AccountKind.AWARDS_PENDING
            if award.status == AwardStatus.PENDING
            else AccountKind.PAYABLE
        )
        if award.kind == AwardKind.ROYAL_FLUSH:
            assert hit is not None
            postings += [
                Posting(
                    TransferCode.JACKPOT_HIT,
                    AccountKind.METER,
                    target,
                    award.amount_cents,
                    rnd.pk,
                    award.pk,
                ),
                Posting(
                    TransferCode.RESET_RESERVE,
                    AccountKind.RESERVE,
                    AccountKind.METER,
                    hit.reset_from_reserve_cents,
                    rnd.pk,
                    award.pk,
                ),
                Posting(
                    TransferCode.RESET_HOUSE,
                    AccountKind.HOUSE,
                    AccountKind.METER,
                    hit.reset_from_house_cents,
                    rnd.pk,
                    award.pk,
                ),
            ]
        else:
            code = TransferCode.ENVY if award.kind == AwardKind.ENVY else TransferCode.FIXED_AWARD
            postings.append(
                Posting(code, AccountKind.HOUSE, target, award.amount_cents, rnd.pk, award.pk)
            )
    if hit is not None:
        meter_body = meter_json(
            pool_id=pool.pk,
            currency=pool.currency,
            meter_cents=hit.meter_after_cents,
            version=hit.meter_version,
            as_of=now,
        )
    else:
        meter_body = pool_meter(pool_id=pool.pk)
    return awards, postings, meter_body


def _award_json(award: Award) -> dict[str, Any]:
    return {
        "id": award.pk,
        "seat": award.seat,
        "kind": award.kind,
        "amount_cents": award.amount_cents,
        "status": award.status,
        "sequence": award.sequence,
    }


def _decision_json(decision: UthDecision | StudDecision) -> dict[str, Any]:
    if isinstance(decision, UthDecision):
        if decision.street is None:
            return {"action": str(decision.action)}
        return {
            "action": str(decision.action),
            "street": str(decision.street),
            "multiple": decision.multiple,
        }
    body: dict[str, Any] = {"action": str(decision.action)}
    if decision.discard is not None and decision.draw is not None:
        body.update(discard=str(decision.discard), draw=str(decision.draw))
    return body


# --- void ------------------------------------------------------------------------------------


def round_void(*, table: Table, round_id: str, reason: str, fingerprint: str, actor: str) -> Answer:
    """Void an open round (a misdeal). Its progressive stakes are refunded in full by the house;
    the meter and reserve keep their shares, since the meter never goes down but for a hit."""
    with transaction.atomic():
        rnd = _locked_round(table, round_id)
        if rnd.state == RoundState.VOID:
            return _replay(rnd.close_fingerprint, fingerprint, rnd.close_response, 200, "voided")
        if rnd.state == RoundState.SETTLED:
            raise Conflict("round_settled", "a settled round cannot be voided", param="round_id")
        now = timezone.now()
        refund = sum(
            entry["bets"].get("progressive_cents", 0) for entry in rnd.open_response["seats"]
        )
        postings = (
            [
                Posting(
                    TransferCode.VOID_REFUND, AccountKind.HOUSE, AccountKind.STAKES, refund, rnd.pk
                )
            ]
            if refund
            else []
        )
        body = {
            "table": table.pk,
            "round_id": rnd.round_id,
            "state": RoundState.VOID.value,
            "voided_at": now.isoformat(),
            "reason": reason,
            "progressive_refund_cents": refund,
            "meter": pool_meter(pool_id=table.pool_id) if table.pool_id else None,
        }
        ledger.record(
            chain=_chain(table),
            kind="round.voided",
            actor=actor,
            pool_id=table.pool_id,
            occurred_at=now,
            postings=postings,
            payload={
                "table": table.pk,
                "round": rnd.pk,
                "round_id": rnd.round_id,
                "reason": reason,
                "progressive_refund_cents": refund,
            },
            also=rows.RowUpdate(
                Round,
                rnd.pk,
                {
                    "state": RoundState.VOID,
                    "closed_at": now,
                    "void_reason": reason,
                    "close_fingerprint": fingerprint,
                    "close_response": body,
                },
            ),
        )
        return Answer(200, body)
