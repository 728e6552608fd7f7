"""The players' decisions: a plausible basic strategy for Ultimate Texas Hold'em.

What this module guarantees: a decision depends only on the seat's hole cards and the round's
board, so the same cards always get the same decision (a seeded run is reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rules.cards import Card, Rank
from rules.hands import Category, evaluate
from rules.uth import Street, UthAction, UthDecision

# --- the players' decisions ----------------------------------------------------------------------


def raises_preflop(hole: Sequence[Card]) -> bool:
    """The usual basic strategy's 4x raise before the flop.

    Any pair of 3s or better, any ace, K with any suited card or K5+ offsuit, Q8+ offsuit or Q6+
    suited, JT offsuit or J8+ suited.
    """
    high, low = sorted((hole[0].rank, hole[1].rank), reverse=True)
    suited = hole[0].suit == hole[1].suit
    if high == low:
        return high >= Rank.THREE
    if high == Rank.ACE:
        return True
    if high == Rank.KING:
        return suited or low >= Rank.FIVE
    if high == Rank.QUEEN:
        return low >= (Rank.SIX if suited else Rank.EIGHT)
    if high == Rank.JACK:
        return low >= (Rank.EIGHT if suited else Rank.TEN)
    return False


def _hidden_pair(hole: Sequence[Card], board: Sequence[Card]) -> bool:
    """A pair that uses a hole card: a pocket pair, or a hole card matching a board card."""
    board_ranks = {card.rank for card in board}
    return hole[0].rank == hole[1].rank or any(card.rank in board_ranks for card in hole)


def _four_flush_with_hidden_ten(hole: Sequence[Card], flop: Sequence[Card]) -> bool:
    cards = [*hole, *flop]
    return any(
        card.rank >= Rank.TEN and sum(other.suit == card.suit for other in cards) >= 4
        for card in hole
    )


def bets_flop(hole: Sequence[Card], flop: Sequence[Card]) -> bool:
    """2x on the flop: two pair or better, a hidden pair but pocket 2s, or four to a flush with a
    hidden 10 or better of that suit."""
    if evaluate([*hole, *flop]).category >= Category.TWO_PAIR:
        return True
    pocket_twos = hole[0].rank == hole[1].rank == Rank.TWO
    return (_hidden_pair(hole, flop) and not pocket_twos) or _four_flush_with_hidden_ten(hole, flop)


def bets_river(hole: Sequence[Card], board: Sequence[Card]) -> bool:
    """1x at the river with a hidden pair or better: a pair using a hole card, or a hand the hole
    cards lift above the board's own (a straight or flush they complete)."""
    if _hidden_pair(hole, board):
        return True
    return evaluate([*hole, *board]).category > evaluate(board).category


def decide(hole: Sequence[Card], board: Sequence[Card]) -> UthDecision:
    """A seat's decision by a plausible basic strategy: 4x preflop (3x never), else 2x on the
    flop, else 1x at the river, else fold. `board` is the round's five board cards."""
    if raises_preflop(hole):
        return UthDecision.play(Street.PREFLOP, 4)
    if bets_flop(hole, board[:3]):
        return UthDecision.play(Street.FLOP, 2)
    if bets_river(hole, board):
        return UthDecision.play(Street.RIVER, 1)
    return UthDecision.fold()


def decision_json(decision: UthDecision) -> dict[str, Any]:
    if decision.action == UthAction.FOLD:
        return {"action": "fold"}
    return {"action": "play", "street": str(decision.street), "multiple": decision.multiple}
