"""What a round step writes as JSON: the terminal's answer, the audit event's payload and the
round's result record.

Each answer is built from the model that declares it (`OpenAnswer`, `ResultAnswer`, `VoidAnswer`
of `tables.bodies.round_answers`) with `model_construct`, every value coming from the step's
results (the rules engine's settlements, the progressive's `jackpot.money.movements` results), and
dumped once as JSON: the shape is the model's, written nowhere else. The audit payloads
(`opened_event`, `settled_event`, `voided_event`) and the round's result record (`result_record`)
are records, not answers: their JSON is hashed into the chain (or re-derived from it,
`tables.audit.records`) and never changes, so they are built here from the same domain values, never
from the answer's JSON, and a change of the wire's shape cannot reach the chain
(`tests/tables/rounds/test_round_payloads.py` pins them). Nothing here decides money or reads the
database.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from jackpot.bodies.meter import Meter
from jackpot.models import Award, AwardKind, AwardStatus, Pool
from jackpot.money.movements import AwardsGranted, StakesTaken, Terms
from rules.stud import StudDecision, StudSettlement
from rules.uth import UthDecision, UthSettlement
from tables.bodies.render import decision_body, hand_body, seat_bets_body, settlement_body
from tables.bodies.round_answers import (
    Contribution,
    OpenAnswer,
    ResultAnswer,
    RoundAward,
    VoidAnswer,
)
from tables.bodies.round_requests import OpenRequest, ResultRequest, SeatPlay
from tables.bodies.seats import (
    Hand,
    StudSeatBets,
    StudSeatSettlement,
    UthSeatBets,
    UthSeatSettlement,
)
from tables.models import Round, RoundState, Table
from tables.rounds.results import JsonObject
from tables.rounds.store import bets_columns

Settlement = UthSettlement | StudSettlement


def _seat_bets(request: OpenRequest) -> list[UthSeatBets | StudSeatBets]:
    return [seat_bets_body(entry.seat, entry.bets) for entry in request.seats]


def _contribution(pool: Pool | None, stakes: StakesTaken | None) -> Contribution | None:
    if pool is None:
        return None
    return Contribution.model_construct(
        stakes=stakes.stakes if stakes else 0,
        stake_cents=pool.stake_cents,
        meter_cents=stakes.meter_cents if stakes else 0,
        reserve_cents=stakes.reserve_cents if stakes else 0,
        house_cents=stakes.house_cents if stakes else 0,
    )


def opened(
    *,
    table: Table,
    request: OpenRequest,
    now: datetime,
    stakes: StakesTaken | None,
    meter: Meter | None,
) -> JsonObject:
    """The answer to an open: the bets as locked, where the stakes went, the meter after."""
    return OpenAnswer.model_construct(
        table=table.pk,
        round_id=request.round_id,
        state=RoundState.OPEN.value,
        opened_at=now,
        seats=_seat_bets(request),
        progressive=_contribution(table.pool, stakes),
        meter=meter,
    ).model_dump(mode="json")


def opened_event(
    *,
    table: Table,
    round_pk: int,
    request: OpenRequest,
    stakes: StakesTaken | None,
    terms: Terms | None,
) -> JsonObject:
    """The `round.opened` payload: the bets as locked, where the stakes went, the terms."""
    pool = table.pool
    return {
        "table": table.pk,
        "pool": table.pool_id,
        "round": round_pk,
        "round_id": request.round_id,
        "seats": [
            {"seat": entry.seat, "bets": bets_columns(entry.bets)} for entry in request.seats
        ],
        "progressive": None
        if pool is None
        else {
            "stakes": stakes.stakes if stakes else 0,
            "stake_cents": pool.stake_cents,
            "meter_cents": stakes.meter_cents if stakes else 0,
            "reserve_cents": stakes.reserve_cents if stakes else 0,
            "house_cents": stakes.house_cents if stakes else 0,
        },
        # What the round settles with, as its row records it: in the chain with the round.
        "terms": None
        if terms is None
        else {
            "stake_cents": terms.stake_cents,
            "paytable_version": terms.paytable_version,
            "verification_threshold_cents": terms.verification_threshold_cents,
        },
        # Orders this event's meter change among every table's (see accounting.md).
        "meter_version": stakes.meter_version if stakes else None,
    }


def _award(award: Award) -> RoundAward:
    return RoundAward.model_construct(
        id=award.pk,
        seat=award.seat,
        kind=AwardKind(award.kind),
        amount_cents=award.amount_cents,
        status=AwardStatus(award.status),
        sequence=award.number,
    )


def _settled_seat(
    play: SeatPlay, settlement: Settlement, dealer_hand: Hand
) -> UthSeatSettlement | StudSeatSettlement:
    """What a seat was dealt and decided, as the terminal posted it, then its settlement."""
    cards = [str(card) for card in play.cards]
    decision = decision_body(play.decision)
    if isinstance(settlement, UthSettlement):
        return settlement_body(
            settlement,
            UthSeatSettlement,
            dealer_hand=dealer_hand,
            seat=play.seat,
            cards=cards,
            decision=decision,
        )
    return settlement_body(
        settlement,
        StudSeatSettlement,
        dealer_hand=dealer_hand,
        seat=play.seat,
        cards=cards,
        decision=decision,
    )


def settled(
    *,
    table: Table,
    round_id: str,
    request: ResultRequest,
    now: datetime,
    settlements: Mapping[int, Settlement],
    granted: AwardsGranted | None,
    meter: Meter | None,
) -> JsonObject:
    """The answer to a result: every seat's settlement, the awards, the meter after."""
    plays = {play.seat: play for play in request.seats}
    any_settlement = next(iter(settlements.values()))
    # Every seat faces the same dealer hand (the dealer's cards and the board are the round's).
    dealer_hand = hand_body(any_settlement.dealer_hand, Hand)
    return ResultAnswer.model_construct(
        table=table.pk,
        round_id=round_id,
        state=RoundState.SETTLED.value,
        settled_at=now,
        board=[str(card) for card in request.board],
        dealer=[str(card) for card in request.dealer],
        dealer_hand=dealer_hand,
        dealer_qualifies=any_settlement.dealer_qualifies,
        seats=[
            _settled_seat(plays[seat], settlements[seat], dealer_hand)
            for seat in sorted(settlements)
        ],
        awards=[_award(award) for award in granted.awards] if granted else [],
        meter=meter,
    ).model_dump(mode="json")


def _decision_record(decision: UthDecision | StudDecision) -> JsonObject:
    """A seat's decision as the terminal posted it: the action, and a play's street and
    multiple or a buy's discard and draw."""
    if isinstance(decision, UthDecision):
        if decision.street is None:
            return {"action": str(decision.action)}
        return {
            "action": str(decision.action),
            "street": str(decision.street),
            "multiple": decision.multiple,
        }
    if decision.discard is not None and decision.draw is not None:
        return {
            "action": str(decision.action),
            "discard": str(decision.discard),
            "draw": str(decision.draw),
        }
    return {"action": str(decision.action)}


def _dealt(play: SeatPlay, settlement: Settlement) -> JsonObject:
    """What a seat was dealt and decided, and the best five cards the rules engine settled it
    with (its 7-card hand's for Ultimate Hold'em, on which the progressive is judged too; its
    final 5 for Stud), so that nothing downstream evaluates the hand again. Rounds settled
    before this was recorded have no `best_five` (their awards' winning five were worked out
    once, by jackpot's migration 0021)."""
    return {
        "seat": play.seat,
        "cards": [str(card) for card in play.cards],
        "decision": _decision_record(play.decision),
        "best_five": [str(card) for card in settlement.player_hand.best_five],
    }


def _plays(request: ResultRequest) -> list[SeatPlay]:
    """The seats' plays by seat number (the order of the answer's and the records' seats)."""
    return sorted(request.seats, key=lambda play: play.seat)


def settled_event(
    *,
    table: Table,
    found: Round,
    request: ResultRequest,
    settlements: Mapping[int, Settlement],
    granted: AwardsGranted | None,
) -> JsonObject:
    """The `round.settled` payload: the cards and decisions, each seat's net, the awards, each
    with what it shows of the round as its row records it (`jackpot.money.movements.Dealt`: the
    verification compares the row with it, `jackpot.audit.projections.RECORD_FIELDS`)."""
    return {
        "table": table.pk,
        "pool": found.pool_id,  # the round's pool of record
        "round": found.pk,
        "round_id": found.round_id,
        "board": [str(card) for card in request.board],
        "dealer": [str(card) for card in request.dealer],
        "seats": [
            {**_dealt(play, settlements[play.seat]), "net_cents": settlements[play.seat].net_cents}
            for play in _plays(request)
        ],
        "awards": [
            {
                "id": award.pk,
                "seat": award.seat,
                "kind": AwardKind(award.kind).value,
                "amount_cents": award.amount_cents,
                "status": AwardStatus(award.status).value,
                "sequence": award.number,
                # Without them a database writer could change what the slip shows unseen.
                "table_pk": award.table_pk,
                "table_name": award.table_name,
                "game": award.game,
                "round_name": award.round_name,
                "hole_cards": list(award.hole_cards),
                "board": list(award.board),
                "winning_five": list(award.winning_five),
            }
            for award in (granted.awards if granted else ())
        ],
        "meter_version": granted.hit_meter_version if granted else None,
    }


def result_record(request: ResultRequest, settlements: Mapping[int, Settlement]) -> JsonObject:
    """What the terminal dealt (board, dealer, seats' cards and decisions) and each seat's best
    five, kept on the round (`tables.audit.records` derives the same from the settled event)."""
    return {
        "board": [str(card) for card in request.board],
        "dealer": [str(card) for card in request.dealer],
        "seats": [_dealt(play, settlements[play.seat]) for play in _plays(request)],
    }


def voided(
    *,
    table: Table,
    round_id: str,
    reason: str,
    now: datetime,
    refund_cents: int,
    meter: Meter | None,
) -> JsonObject:
    """The answer to a void: the progressive stakes refunded, the meter (unchanged)."""
    return VoidAnswer.model_construct(
        table=table.pk,
        round_id=round_id,
        state=RoundState.VOID.value,
        voided_at=now,
        reason=reason,
        progressive_refund_cents=refund_cents,
        meter=meter,
    ).model_dump(mode="json")


def voided_event(*, table: Table, found: Round, reason: str, refund_cents: int) -> JsonObject:
    """The `round.voided` payload: the reason and the progressive stakes refunded."""
    return {
        "table": table.pk,
        "round": found.pk,
        "round_id": found.round_id,
        "reason": reason,
        "progressive_refund_cents": refund_cents,
    }
