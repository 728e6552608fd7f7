"""JSON shapes of hands and settlements, shared by the rules API and the round API."""

from __future__ import annotations

from typing import Any

from tables.rules.hands import HandValue
from tables.rules.stud import StudSettlement
from tables.rules.uth import UthSettlement


def hand_json(hand: HandValue) -> dict[str, Any]:
    return {"category": hand.category.label, "best_five": [str(card) for card in hand.best_five]}


def settlement_json(settlement: UthSettlement | StudSettlement) -> dict[str, Any]:
    body: dict[str, Any] = {
        "player_hand": hand_json(settlement.player_hand),
        "dealer_hand": hand_json(settlement.dealer_hand),
        "dealer_qualifies": settlement.dealer_qualifies,
        "outcome": str(settlement.outcome),
        "boxes": {
            str(box.name): {"stake_cents": box.stake_cents, "net_cents": box.net_cents}
            for box in settlement.boxes
        },
        "net_cents": settlement.net_cents,
    }
    if isinstance(settlement, UthSettlement) and settlement.progressive is not None:
        progressive = settlement.progressive
        body["progressive"] = {
            "stake_cents": progressive.stake_cents,
            "award": str(progressive.award),
            "fixed_cents": progressive.fixed_cents,
        }
    return body
