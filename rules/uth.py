"""Ultimate Texas Hold'em: one seat's bets and decision (checked against the rules), and its
settlement. Typed values only: the API reads JSON (`tables.bodies`). The rules as computed, and
the choices domain.md leaves open (boxes reported, `outcome`, bets, cards): docs/rules.md.

Invariants:
- every box nets +win, -stake or 0, so `net_cents >= -(total stake)`;
- `net_cents` is the sum of the box nets; all amounts are ints, wins rounded down to the cent;
- the progressive stake is no box and not in `net_cents`; envy is the table's
  (`rules.progressive.envy_seats`);
- cards are checked within the seat; across seats is the round's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rules.boxes import Box, BoxName, Outcome, Settled, check_stake_cents
from rules.cards import Card, ensure_distinct
from rules.errors import RulesError
from rules.hands import Category, HandValue, evaluate
from rules.paytables import CURRENT, Payout, PaytableSet
from rules.progressive import ProgressiveAward, award_of, fixed_award_cents

__all__ = [
    "DEFAULT_PROGRESSIVE_STAKE_CENTS",
    "Box",
    "BoxName",
    "Outcome",
    "SeatProgressive",
    "Street",
    "UthAction",
    "UthBets",
    "UthDecision",
    "UthSettlement",
    "settle_uth",
]

#: The pool's progressive stake unless the caller says otherwise: EUR 5.
DEFAULT_PROGRESSIVE_STAKE_CENTS = 500

_EVEN_MONEY = Payout(1)


class UthAction(StrEnum):
    PLAY = "play"
    FOLD = "fold"


class Street(StrEnum):
    """When Play was bet. Turn and river are dealt together, so the last chance is 'river'."""

    PREFLOP = "preflop"
    FLOP = "flop"
    RIVER = "river"


# Play multiples of the Ante allowed on each street, and how a message names the street.
_MULTIPLES: Mapping[Street, tuple[int, ...]] = {
    Street.PREFLOP: (3, 4),
    Street.FLOP: (2,),
    Street.RIVER: (1,),
}
_WHEN: Mapping[Street, str] = {
    Street.PREFLOP: "before the flop",
    Street.FLOP: "on the flop",
    Street.RIVER: "on the river",
}


def _multiples_text(street: Street) -> str:
    return " or ".join(f"{m}x" for m in _MULTIPLES[street])


@dataclass(frozen=True, slots=True)
class UthDecision:
    """A seat's decision: Play ``multiple`` x the Ante on ``street``, or fold (no street/multiple).

    >>> UthDecision.play(Street.FLOP, 2).play_multiple, UthDecision.fold().play_multiple
    (2, 0)
    >>> UthDecision.play(Street.FLOP, 3)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: on the flop Play must be 2x the Ante, got 3x
    """

    action: UthAction
    street: Street | None = None
    multiple: int | None = None

    def __post_init__(self) -> None:
        _check_decision(self.action, self.street, self.multiple, "decision")

    @classmethod
    def play(cls, street: Street, multiple: int) -> UthDecision:
        return cls(UthAction.PLAY, street, multiple)

    @classmethod
    def fold(cls) -> UthDecision:
        return cls(UthAction.FOLD)

    @property
    def play_multiple(self) -> int:
        """The Play bet as a multiple of the Ante; 0 on a fold."""
        return self.multiple if self.multiple is not None else 0


def _check_fold(street_given: bool, multiple_given: bool, param: str) -> None:
    if street_given:
        raise RulesError(
            "invalid_decision",
            "a fold takes no street: a player who has not played by the river folds",
            param=f"{param}.street",
        )
    if multiple_given:
        raise RulesError("invalid_decision", "a fold takes no multiple", param=f"{param}.multiple")


def _check_decision(
    action: UthAction, street: Street | None, multiple: int | None, param: str
) -> None:
    if action == UthAction.FOLD:
        _check_fold(street is not None, multiple is not None, param)
        return
    if street is None:
        raise RulesError(
            "invalid_decision",
            "Play needs a street: preflop, flop or river",
            param=f"{param}.street",
        )
    if multiple is None:
        raise RulesError(
            "invalid_decision",
            f"Play needs a multiple of the Ante: {_multiples_text(street)} {_WHEN[street]}",
            param=f"{param}.multiple",
        )
    if type(multiple) is not int:
        raise RulesError(
            "invalid_decision",
            f"multiple must be an integer, got {multiple!r}",
            param=f"{param}.multiple",
        )
    if multiple not in _MULTIPLES[street]:
        raise RulesError(
            "invalid_decision",
            f"{_WHEN[street]} Play must be {_multiples_text(street)} the Ante, got {multiple}x",
            param=f"{param}.multiple",
        )


_BET_FIELDS = ("ante_cents", "blind_cents", "trips_cents", "progressive_cents")


@dataclass(frozen=True, slots=True)
class UthBets:
    """A seat's bets in cents. Ante > 0 and Blind == Ante are required; Trips and the progressive
    are optional (0). Whether the progressive equals the pool's stake is checked by
    :func:`settle_uth` (and the round's reader), which know the stake.

    >>> UthBets(ante_cents=100, blind_cents=50)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: Blind must equal the Ante: ante_cents is 100, blind_cents is 50
    """

    ante_cents: int
    blind_cents: int
    trips_cents: int = 0
    progressive_cents: int = 0

    def __post_init__(self) -> None:
        _check_bets(
            {name: getattr(self, name) for name in _BET_FIELDS},
            param="bets",
            progressive_stake_cents=None,
        )

    @property
    def total_stake_cents(self) -> int:
        """Ante + Blind + Trips: what the seat has on the boxes before any Play (no progressive)."""
        return self.ante_cents + self.blind_cents + self.trips_cents


def _check_bets(raw: Mapping[str, int], *, param: str, progressive_stake_cents: int | None) -> None:
    """The bets' rules: stakes in range, Blind == Ante, the progressive 0 or the pool's stake."""
    check_stake_cents(raw["ante_cents"], param=f"{param}.ante_cents", minimum=1)
    check_stake_cents(raw["blind_cents"], param=f"{param}.blind_cents", minimum=1)
    check_stake_cents(raw["trips_cents"], param=f"{param}.trips_cents", minimum=0)
    check_stake_cents(raw["progressive_cents"], param=f"{param}.progressive_cents", minimum=0)
    if raw["blind_cents"] != raw["ante_cents"]:
        raise RulesError(
            "invalid_bet",
            f"Blind must equal the Ante: ante_cents is {raw['ante_cents']}, "
            f"blind_cents is {raw['blind_cents']}",
            param=f"{param}.blind_cents",
        )
    if progressive_stake_cents is not None:
        _check_progressive(raw["progressive_cents"], progressive_stake_cents, param)


def _check_progressive(progressive_cents: int, stake_cents: int, param: str) -> None:
    if progressive_cents not in (0, stake_cents):
        raise RulesError(
            "invalid_bet",
            f"progressive_cents must be 0 or the pool's stake of {stake_cents} cents, "
            f"got {progressive_cents}",
            param=f"{param}.progressive_cents",
        )


@dataclass(frozen=True, slots=True)
class SeatProgressive:
    """The seat's progressive: its stake, best award and the award's fixed amount in cents.

    ``fixed_cents`` is ``None`` for the jackpot royal (its amount is the meter at the hit) and 0
    for no award. Envy is not included (it depends on the other seats).
    """

    stake_cents: int
    award: ProgressiveAward
    fixed_cents: int | None


@dataclass(frozen=True, slots=True)
class UthSettlement(Settled):
    """One seat's settled hand. ``player_hand``/``dealer_hand`` are the best five of 7 cards;
    ``total_stake_cents`` counts the Play (the progressive is not a box)."""

    player_hand: HandValue
    dealer_hand: HandValue
    dealer_qualifies: bool
    outcome: Outcome
    boxes: tuple[Box, ...]
    progressive: SeatProgressive | None
    net_cents: int


def _check_count(cards: Sequence[Card], count: int, param: str) -> None:
    if len(cards) != count:
        raise RulesError(
            "wrong_card_count", f"{param} must hold {count} cards, got {len(cards)}", param=param
        )


def settle_uth(
    *,
    player: Sequence[Card],
    dealer: Sequence[Card],
    board: Sequence[Card],
    bets: UthBets,
    decision: UthDecision,
    paytables: PaytableSet = CURRENT,
    progressive_stake_cents: int = DEFAULT_PROGRESSIVE_STAKE_CENTS,
) -> UthSettlement:
    """Settle one seat: 2 ``player`` cards, 2 ``dealer`` cards, 5 ``board`` cards.

    Raises ``RulesError`` for a wrong card count (``wrong_card_count``), a card seen twice
    (``duplicate_card``) or a progressive stake other than 0 or ``progressive_stake_cents``.

    >>> from rules.cards import parse_cards
    >>> def cards(text: str) -> tuple[Card, ...]:
    ...     return parse_cards(text.split(), param="cards", count=(1, 5))
    >>> s = settle_uth(player=cards("Ah Kh"), dealer=cards("2c 7d"),
    ...                board=cards("Qh Jh 3h 9s 4d"), bets=UthBets(125, 125),
    ...                decision=UthDecision.play(Street.PREFLOP, 4))
    >>> str(s.outcome), [(str(b.name), b.net_cents) for b in s.boxes], s.net_cents
    ('player', [('ante', 0), ('blind', 187), ('play', 500)], 687)
    """
    _check_count(player, 2, "player")
    _check_count(dealer, 2, "dealer")
    _check_count(board, 5, "board")
    ensure_distinct({"player": player, "dealer": dealer, "board": board})
    _check_progressive(bets.progressive_cents, progressive_stake_cents, "bets")

    player_hand = evaluate([*player, *board])
    dealer_hand = evaluate([*dealer, *board])
    qualifies = dealer_hand.category >= Category.PAIR
    ante = bets.ante_cents

    if decision.action == UthAction.FOLD:
        outcome = Outcome.FOLD
        main = (
            Box.lose(BoxName.ANTE, ante),
            Box.lose(BoxName.BLIND, bets.blind_cents),
            Box.push(BoxName.PLAY, 0),
        )
    else:
        play = ante * decision.play_multiple
        if player_hand.rank > dealer_hand.rank:
            outcome = Outcome.PLAYER
            ante_box = (
                Box.win(BoxName.ANTE, ante, _EVEN_MONEY)
                if qualifies
                else Box.push(BoxName.ANTE, ante)
            )
            # The Blind table starts at a straight; below it the Blind pushes.
            blind_odds = paytables.uth_blind.pays(player_hand.category)
            blind_box = (
                Box.win(BoxName.BLIND, bets.blind_cents, blind_odds)
                if blind_odds is not None
                else Box.push(BoxName.BLIND, bets.blind_cents)
            )
            main = (ante_box, blind_box, Box.win(BoxName.PLAY, play, _EVEN_MONEY))
        elif player_hand.rank < dealer_hand.rank:
            outcome = Outcome.DEALER
            main = (
                # A dealer who does not qualify still beats the Blind and the Play; only the
                # Ante is returned.
                Box.lose(BoxName.ANTE, ante) if qualifies else Box.push(BoxName.ANTE, ante),
                Box.lose(BoxName.BLIND, bets.blind_cents),
                Box.lose(BoxName.PLAY, play),
            )
        else:
            outcome = Outcome.TIE
            main = (
                Box.push(BoxName.ANTE, ante),
                Box.push(BoxName.BLIND, bets.blind_cents),
                Box.push(BoxName.PLAY, play),
            )

    boxes: tuple[Box, ...] = main
    if bets.trips_cents > 0:
        trips_odds = paytables.uth_trips.pays(player_hand.category)
        boxes += (
            Box.win(BoxName.TRIPS, bets.trips_cents, trips_odds)
            if trips_odds is not None
            else Box.lose(BoxName.TRIPS, bets.trips_cents),
        )

    progressive = None
    if bets.progressive_cents > 0:
        award = award_of(player_hand, board)
        progressive = SeatProgressive(
            stake_cents=bets.progressive_cents,
            award=award,
            fixed_cents=fixed_award_cents(award, paytables.progressive),
        )

    return UthSettlement(
        player_hand=player_hand,
        dealer_hand=dealer_hand,
        dealer_qualifies=qualifies,
        outcome=outcome,
        boxes=boxes,
        progressive=progressive,
        net_cents=sum(box.net_cents for box in boxes),
    )
