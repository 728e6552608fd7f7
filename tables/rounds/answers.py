"""What a round step writes as JSON: the terminal's answer and the audit event's payload.

Every figure comes from the step's results (the rules engine's settlements, the progressive's
`jackpot.movements` results); nothing here decides money or reads the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from jackpot.models import Award, Pool
from jackpot.movements import AwardsGranted, StakesTaken
from tables.bodies import OpenRequest, ResultRequest, SeatPlay
from tables.models import RoundState, Table
from tables.render import hand_json, settlement_json
from tables.rounds.replay import JsonObject
from tables.rounds.store import bets_columns
from tables.rules.stud import StudDecision, StudSettlement
from tables.rules.uth import UthDecision, UthSettlement

Settlement = UthSettlement | StudSettlement


def _seats(request: OpenRequest) -> list[JsonObject]:
    return [{"seat": entry.seat, "bets": bets_columns(entry.bets)} for entry in request.seats]


def _progressive(pool: Pool | None, stakes: StakesTaken | None) -> JsonObject | None:
    if pool is None:
        return None
    return {
        "stakes": stakes.stakes if stakes else 0,
        "stake_cents": pool.stake_cents,
        "meter_cents": stakes.meter_cents if stakes else 0,
        "reserve_cents": stakes.reserve_cents if stakes else 0,
        "house_cents": stakes.house_cents if stakes else 0,
    }


def opened(
    *,
    table: Table,
    request: OpenRequest,
    now: datetime,
    stakes: StakesTaken | None,
    meter: JsonObject | None,
) -> JsonObject:
    """The answer to an open: the bets as locked, where the stakes went, the meter after."""
    return {
        "table": table.pk,
        "round_id": request.round_id,
        "state": RoundState.OPEN.value,
        "opened_at": now.isoformat(),
        "seats": _seats(request),
        "progressive": _progressive(table.pool, stakes),
        "meter": meter,
    }


def opened_event(
    *, table: Table, round_pk: int, request: OpenRequest, stakes: StakesTaken | None
) -> JsonObject:
    return {
        "table": table.pk,
        "pool": table.pool_id,
        "round": round_pk,
        "round_id": request.round_id,
        "seats": _seats(request),
        "progressive": _progressive(table.pool, stakes),
        # Orders this event's meter change among every table's (see accounting.md).
        "meter_version": stakes.meter_version if stakes else None,
    }


def _decision(decision: UthDecision | StudDecision) -> JsonObject:
    if isinstance(decision, UthDecision):
        if decision.street is None:
            return {"action": str(decision.action)}
        return {
            "action": str(decision.action),
            "street": str(decision.street),
            "multiple": decision.multiple,
        }
    body: JsonObject = {"action": str(decision.action)}
    if decision.discard is not None and decision.draw is not None:
        body.update(discard=str(decision.discard), draw=str(decision.draw))
    return body


def dealt(play: SeatPlay) -> JsonObject:
    """What a seat was dealt and decided, as the round records it."""
    return {
        "seat": play.seat,
        "cards": [str(card) for card in play.cards],
        "decision": _decision(play.decision),
    }


def _award(award: Award) -> JsonObject:
    return {
        "id": award.pk,
        "seat": award.seat,
        "kind": award.kind,
        "amount_cents": award.amount_cents,
        "status": award.status,
        "sequence": award.sequence,
    }


def settled(
    *,
    table: Table,
    round_id: str,
    request: ResultRequest,
    now: datetime,
    settlements: Mapping[int, Settlement],
    granted: AwardsGranted | None,
    meter: JsonObject | None,
) -> JsonObject:
    """The answer to a result: every seat's settlement, the awards, the meter after."""
    plays = {play.seat: play for play in request.seats}
    any_settlement = next(iter(settlements.values()))
    return {
        "table": table.pk,
        "round_id": round_id,
        "state": RoundState.SETTLED.value,
        "settled_at": now.isoformat(),
        "board": [str(card) for card in request.board],
        "dealer": [str(card) for card in request.dealer],
        "dealer_hand": hand_json(any_settlement.dealer_hand),
        "dealer_qualifies": any_settlement.dealer_qualifies,
        "seats": [
            {**dealt(plays[seat]), **settlement_json(settlements[seat])}
            for seat in sorted(settlements)
        ],
        "awards": [_award(award) for award in granted.awards] if granted else [],
        "meter": meter,
    }


def settled_event(
    *,
    table: Table,
    round_pk: int,
    answer: JsonObject,
    request: ResultRequest,
    settlements: Mapping[int, Settlement],
    granted: AwardsGranted | None,
) -> JsonObject:
    plays = {play.seat: play for play in request.seats}
    return {
        "table": table.pk,
        "pool": table.pool_id,
        "round": round_pk,
        "round_id": answer["round_id"],
        "board": answer["board"],
        "dealer": answer["dealer"],
        "seats": [
            {**dealt(plays[seat]), "net_cents": settlements[seat].net_cents}
            for seat in sorted(settlements)
        ],
        "awards": answer["awards"],
        "meter_version": granted.hit_meter_version if granted else None,
    }


def result_record(answer: JsonObject, plays: Sequence[SeatPlay]) -> JsonObject:
    """What the terminal dealt (board, dealer, seats' cards and decisions), kept on the round."""
    return {
        "board": answer["board"],
        "dealer": answer["dealer"],
        "seats": [dealt(play) for play in sorted(plays, key=lambda play: play.seat)],
    }


def voided(
    *,
    table: Table,
    round_id: str,
    reason: str,
    now: datetime,
    refund_cents: int,
    meter: JsonObject | None,
) -> JsonObject:
    """The answer to a void: the progressive stakes refunded, the meter (unchanged)."""
    return {
        "table": table.pk,
        "round_id": round_id,
        "state": RoundState.VOID.value,
        "voided_at": now.isoformat(),
        "reason": reason,
        "progressive_refund_cents": refund_cents,
        "meter": meter,
    }


def voided_event(*, table: Table, round_pk: int, answer: JsonObject) -> JsonObject:
    return {
        "table": table.pk,
        "round": round_pk,
        "round_id": answer["round_id"],
        "reason": answer["reason"],
        "progressive_refund_cents": answer["progressive_refund_cents"],
    }
