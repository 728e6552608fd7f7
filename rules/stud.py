"""Stud Poker: one seat's bets and decision (checked against the rules), and its settlement.
Typed values only: the API reads JSON (`tables.bodies`). The rules as computed, and the choices
domain.md leaves open (boxes reported, `outcome`, the drawn card): docs/rules.md.

Invariants:
- every box nets +win, -stake or 0, so `net_cents >= -(total stake)`;
- `net_cents` is the sum of the box nets; amounts are ints, wins rounded down to the cent;
- a buy costs a fee equal to the Ante, forfeits the Bonus and must raise;
- cards are checked within the seat; across seats is the round's job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from rules.boxes import Box, BoxName, Outcome, Settled, check_stake_cents
from rules.cards import Card, Rank, ensure_distinct
from rules.errors import RulesError
from rules.hands import Category, HandValue, evaluate
from rules.paytables import CURRENT, Payout, PaytableSet

__all__ = [
    "Box",
    "BoxName",
    "Outcome",
    "StudAction",
    "StudBets",
    "StudDecision",
    "StudSettlement",
    "dealer_qualifies",
    "settle_stud",
]

_EVEN_MONEY = Payout(1)
_RAISE_MULTIPLE = 2


class StudAction(StrEnum):
    FOLD = "fold"
    RAISE = "raise"
    BUY = "buy"


@dataclass(frozen=True, slots=True)
class StudDecision:
    """Fold, raise, or buy (discard one card of the hand, draw a new one) and raise.

    >>> from rules.cards import parse_card
    >>> StudDecision.buy(parse_card("2c"), parse_card("Ah")).raises
    True
    >>> StudDecision(StudAction.RAISE, discard=parse_card("2c"))
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: only a buy takes a discard
    """

    action: StudAction
    discard: Card | None = None
    draw: Card | None = None

    def __post_init__(self) -> None:
        buying = self.action == StudAction.BUY
        for name, card in (("discard", self.discard), ("draw", self.draw)):
            if buying and card is None:
                raise RulesError(
                    "invalid_decision",
                    f"a buy needs a {name} card",
                    param=f"decision.{name}",
                )
            if not buying and card is not None:
                raise RulesError(
                    "invalid_decision", f"only a buy takes a {name}", param=f"decision.{name}"
                )

    @classmethod
    def fold(cls) -> StudDecision:
        return cls(StudAction.FOLD)

    @classmethod
    def raise_bet(cls) -> StudDecision:
        return cls(StudAction.RAISE)

    @classmethod
    def buy(cls, discard: Card, draw: Card) -> StudDecision:
        return cls(StudAction.BUY, discard, draw)

    @property
    def raises(self) -> bool:
        """True when a Raise is placed (raise, or buy which must raise)."""
        return self.action != StudAction.FOLD


@dataclass(frozen=True, slots=True)
class StudBets:
    """A seat's bets in cents: Ante > 0 required, Bonus optional (0).

    >>> StudBets(100, True)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: bets.bonus_cents must be an integer number of cents, got True
    """

    ante_cents: int
    bonus_cents: int = 0

    def __post_init__(self) -> None:
        _check_bets(self.ante_cents, self.bonus_cents, param="bets")


def _check_bets(ante: int, bonus: int, *, param: str) -> None:
    check_stake_cents(ante, param=f"{param}.ante_cents", minimum=1)
    check_stake_cents(bonus, param=f"{param}.bonus_cents", minimum=0)


@dataclass(frozen=True, slots=True)
class StudSettlement(Settled):
    """One seat's settled hand; ``player_hand`` is the final hand (after a buy);
    ``total_stake_cents`` counts the Ante, the Raise, the Bonus and the purchase fee."""

    player_hand: HandValue
    dealer_hand: HandValue
    dealer_qualifies: bool
    outcome: Outcome
    boxes: tuple[Box, ...]
    net_cents: int


def dealer_qualifies(hand: HandValue) -> bool:
    """Ace-King high or better: any pair, or a high-card hand holding both an ace and a king.

    >>> from rules.cards import parse_cards
    >>> dealer_qualifies(evaluate(parse_cards("Ac Kd 7h 4s 2c".split(), param="d", count=5)))
    True
    >>> dealer_qualifies(evaluate(parse_cards("Ac Qd Jh 4s 2c".split(), param="d", count=5)))
    False
    """
    if hand.category >= Category.PAIR:
        return True
    ranks = {card.rank for card in hand.best_five}
    return Rank.ACE in ranks and Rank.KING in ranks


def _check_count(cards: Sequence[Card], param: str) -> None:
    if len(cards) != 5:
        raise RulesError(
            "wrong_card_count", f"{param} must hold 5 cards, got {len(cards)}", param=param
        )


def _final_hand(
    player: Sequence[Card], dealer: Sequence[Card], decision: StudDecision
) -> tuple[Card, ...]:
    """The player's hand after the decision: unchanged, or the discard replaced by the draw."""
    if decision.discard is None or decision.draw is None:
        return tuple(player)
    discard, draw = decision.discard, decision.draw
    if discard not in player:
        raise RulesError(
            "invalid_decision",
            f"cannot discard {discard}: it is not in the player's hand",
            param="decision.discard",
        )
    # The discarded card is out of the deck too, so drawing it back is a duplicate.
    for name, cards in (("player", player), ("dealer", dealer)):
        if draw in cards:
            raise RulesError(
                "duplicate_card",
                f"card {draw} cannot be drawn: it is already dealt, in "
                f"{name}[{list(cards).index(draw)}]",
                param="decision.draw",
            )
    return tuple(draw if card == discard else card for card in player)


def settle_stud(
    *,
    player: Sequence[Card],
    dealer: Sequence[Card],
    bets: StudBets,
    decision: StudDecision,
    paytables: PaytableSet = CURRENT,
) -> StudSettlement:
    """Settle one seat: the player's 5 dealt cards, the dealer's 5, the bets and the decision.

    Raises ``RulesError``: ``wrong_card_count``, ``duplicate_card`` (a card dealt twice, or a
    draw already dealt), ``invalid_decision`` (a discard not in the hand).

    >>> from rules.cards import parse_cards
    >>> def cards(text: str) -> tuple[Card, ...]:
    ...     return parse_cards(text.split(), param="cards", count=5)
    >>> s = settle_stud(player=cards("9h 9d 5c 4s 2h"), dealer=cards("Ac Qd Jh 8s 3c"),
    ...                 bets=StudBets(100), decision=StudDecision.raise_bet())
    >>> str(s.outcome), s.dealer_qualifies, [(str(b.name), b.net_cents) for b in s.boxes]
    ('player', False, [('ante', 100), ('raise', 0)])
    """
    _check_count(player, "player")
    _check_count(dealer, "dealer")
    ensure_distinct({"player": player, "dealer": dealer})
    final = _final_hand(player, dealer, decision)

    player_hand = evaluate(final)
    dealer_hand = evaluate(dealer)
    qualifies = dealer_qualifies(dealer_hand)
    ante = bets.ante_cents

    boxes: tuple[Box, ...]
    if not decision.raises:
        outcome = Outcome.FOLD
        boxes = (Box.lose(BoxName.ANTE, ante), Box.push(BoxName.RAISE, 0))
    else:
        stake = ante * _RAISE_MULTIPLE
        if not qualifies:
            outcome = Outcome.PLAYER
            boxes = (Box.win(BoxName.ANTE, ante, _EVEN_MONEY), Box.push(BoxName.RAISE, stake))
        elif player_hand.category == Category.HIGH_CARD:
            outcome = Outcome.DEALER
            boxes = (Box.lose(BoxName.ANTE, ante), Box.lose(BoxName.RAISE, stake))
        elif player_hand.rank > dealer_hand.rank:
            outcome = Outcome.PLAYER
            raise_odds = paytables.stud_raise.pays(player_hand.category)
            if raise_odds is None:  # unreachable: PaytableSet checks pair..royal are covered
                raise ValueError(f"{paytables.stud_raise.version} has no odds for a pair or better")
            boxes = (
                Box.win(BoxName.ANTE, ante, _EVEN_MONEY),
                Box.win(BoxName.RAISE, stake, raise_odds),
            )
        elif player_hand.rank < dealer_hand.rank:
            outcome = Outcome.DEALER
            boxes = (Box.lose(BoxName.ANTE, ante), Box.lose(BoxName.RAISE, stake))
        else:
            outcome = Outcome.TIE
            boxes = (Box.push(BoxName.ANTE, ante), Box.push(BoxName.RAISE, stake))

    if bets.bonus_cents > 0:
        # The table pays from a flush up; it applies only to a raise without a buy whose hand
        # beats the dealer's, qualifying or not.
        bonus_odds = (
            paytables.stud_bonus.pays(player_hand.category)
            if decision.action == StudAction.RAISE and player_hand.rank > dealer_hand.rank
            else None
        )
        boxes += (
            Box.win(BoxName.BONUS, bets.bonus_cents, bonus_odds)
            if bonus_odds is not None
            else Box.lose(BoxName.BONUS, bets.bonus_cents),
        )
    if decision.action == StudAction.BUY:
        # The fee buys the card; the house keeps it whatever happens.
        boxes += (Box.lose(BoxName.PURCHASE, ante),)

    return StudSettlement(
        player_hand=player_hand,
        dealer_hand=dealer_hand,
        dealer_qualifies=qualifies,
        outcome=outcome,
        boxes=boxes,
        net_cents=sum(box.net_cents for box in boxes),
    )
