"""What a round step writes as JSON: the terminal's answer and the audit event's payload.

Each answer is built from the model that declares it (`OpenAnswer`, `ResultAnswer`, `VoidAnswer` of
`tables.bodies.round_answers`) with `model_construct`, every value coming from the step's results
(the rules engine's settlements, the progressive's `jackpot.movements` results), and dumped once as
JSON: the shape is the model's, written nowhere else. The audit payloads are records, not answers:
their JSON is hashed into the chain and never changes; they take the parts they share with the
answer from its JSON. Nothing here decides money or reads the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from jackpot.bodies import Meter
from jackpot.models import Award, AwardKind, AwardStatus, Pool
from jackpot.movements import AwardsGranted, StakesTaken, Terms
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
from tables.render import decision_body, hand_body, seat_bets_body, settlement_body
from tables.rounds.replay import JsonObject
from tables.rules.stud import StudSettlement
from tables.rules.uth import UthSettlement

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
    answer: JsonObject,
    stakes: StakesTaken | None,
    terms: Terms | None,
) -> JsonObject:
    return {
        "table": table.pk,
        "pool": table.pool_id,
        "round": round_pk,
        "round_id": answer["round_id"],
        "seats": answer["seats"],
        "progressive": answer["progressive"],
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
        sequence=award.sequence,
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


def _dealt(seat: JsonObject) -> JsonObject:
    """What a seat was dealt and decided, from the answer's settled seat."""
    return {"seat": seat["seat"], "cards": seat["cards"], "decision": seat["decision"]}


def _answer_seats(answer: JsonObject) -> list[JsonObject]:
    seats = answer["seats"]
    assert isinstance(seats, list)
    return seats


def settled_event(
    *, table: Table, found: Round, answer: JsonObject, granted: AwardsGranted | None
) -> JsonObject:
    return {
        "table": table.pk,
        "pool": found.pool_id,  # the round's pool of record
        "round": found.pk,
        "round_id": answer["round_id"],
        "board": answer["board"],
        "dealer": answer["dealer"],
        "seats": [
            {**_dealt(seat), "net_cents": seat["net_cents"]} for seat in _answer_seats(answer)
        ],
        "awards": answer["awards"],
        "meter_version": granted.hit_meter_version if granted else None,
    }


def result_record(answer: JsonObject) -> JsonObject:
    """What the terminal dealt (board, dealer, seats' cards and decisions), kept on the round."""
    return {
        "board": answer["board"],
        "dealer": answer["dealer"],
        "seats": [_dealt(seat) for seat in _answer_seats(answer)],
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


def voided_event(*, table: Table, round_pk: int, answer: JsonObject) -> JsonObject:
    return {
        "table": table.pk,
        "round": round_pk,
        "round_id": answer["round_id"],
        "reason": answer["reason"],
        "progressive_refund_cents": answer["progressive_refund_cents"],
    }
