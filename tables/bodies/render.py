"""The rules engine's values as the wire declares them (`tables.bodies`): hands, settlements and
decisions, shared by the rules API and the round API.

Built with `model_construct`: the values come from the engine, already checked, and validation is
for input. The reverse way, from the wire to the engine, is the readers' (`tables.bodies`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from rules.hands import HandValue
from rules.stud import StudAction, StudBets, StudDecision, StudSettlement
from rules.uth import Street, UthBets, UthDecision, UthSettlement
from tables.bodies.seats import (
    BoxResult,
    Hand,
    ProgressiveResult,
    Settlement,
    StudBetsBody,
    StudBuy,
    StudFold,
    StudRaise,
    StudSeatBets,
    UthBetsBody,
    UthFold,
    UthPlayFlop,
    UthPlayPreflop,
    UthPlayRiver,
    UthSeatBets,
)

H = TypeVar("H", bound=Hand)
S = TypeVar("S", bound=Settlement)


def seat_bets_body(seat: int, bets: UthBets | StudBets) -> UthSeatBets | StudSeatBets:
    """A seat's bets as an open's answer and the round list show them (every box, 0 included)."""
    if isinstance(bets, UthBets):
        uth = UthBetsBody.model_construct(
            ante_cents=bets.ante_cents,
            blind_cents=bets.blind_cents,
            trips_cents=bets.trips_cents,
            progressive_cents=bets.progressive_cents,
        )
        return UthSeatBets.model_construct(seat=seat, bets=uth)
    stud = StudBetsBody.model_construct(ante_cents=bets.ante_cents, bonus_cents=bets.bonus_cents)
    return StudSeatBets.model_construct(seat=seat, bets=stud)


def hand_body(hand: HandValue, model: type[H], **more: object) -> H:
    """`hand` as `model`: a `Hand`, or a shape that adds `more` fields to it."""
    fields: dict[str, Any] = more
    return model.model_construct(
        category=hand.category.label, best_five=[str(card) for card in hand.best_five], **fields
    )


def settlement_body(
    settlement: UthSettlement | StudSettlement,
    model: type[S],
    *,
    dealer_hand: Hand | None = None,
    **seat: object,
) -> S:
    """`settlement` as `model`: a `Settlement`, or a round's settled seat given its `seat`,
    `cards` and `decision`. `progressive` is left unset (absent) when the seat did not stake it.

    `dealer_hand` is the settlement's dealer hand already built: every seat of a round faces the
    same one, built once."""
    fields: dict[str, Any] = seat
    if isinstance(settlement, UthSettlement) and settlement.progressive is not None:
        progressive = settlement.progressive
        fields["progressive"] = ProgressiveResult.model_construct(
            stake_cents=progressive.stake_cents,
            award=str(progressive.award),
            fixed_cents=progressive.fixed_cents,
        )
    return model.model_construct(
        player_hand=hand_body(settlement.player_hand, Hand),
        dealer_hand=dealer_hand or hand_body(settlement.dealer_hand, Hand),
        dealer_qualifies=settlement.dealer_qualifies,
        outcome=str(settlement.outcome),
        boxes={
            str(box.name): BoxResult.model_construct(
                stake_cents=box.stake_cents, net_cents=box.net_cents
            )
            for box in settlement.boxes
        },
        net_cents=settlement.net_cents,
        **fields,
    )


_PLAYS: dict[Street, type[UthPlayPreflop | UthPlayFlop | UthPlayRiver]] = {
    Street.PREFLOP: UthPlayPreflop,
    Street.FLOP: UthPlayFlop,
    Street.RIVER: UthPlayRiver,
}
_STUD: dict[StudAction, type[StudFold | StudRaise]] = {
    StudAction.FOLD: StudFold,
    StudAction.RAISE: StudRaise,
}


def decision_body(
    decision: UthDecision | StudDecision,
) -> UthFold | UthPlayPreflop | UthPlayFlop | UthPlayRiver | StudFold | StudRaise | StudBuy:
    """A seat's decision as the terminal posted it (the inverse of `tables.bodies`'
    `uth_decision_of` and `stud_decision_of`)."""
    if isinstance(decision, UthDecision):
        if decision.street is None:
            return UthFold.model_construct(action=str(decision.action))
        return _PLAYS[decision.street].model_construct(
            action=str(decision.action), street=str(decision.street), multiple=decision.multiple
        )
    if decision.discard is not None and decision.draw is not None:
        return StudBuy.model_construct(
            action=str(decision.action), discard=str(decision.discard), draw=str(decision.draw)
        )
    return _STUD[decision.action].model_construct(action=str(decision.action))
