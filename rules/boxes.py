"""The vocabulary both games' settlements share: outcomes, betting boxes, and the stake check.

Invariants: a :class:`Box`'s ``net_cents`` is ``+win``, ``-stake`` or ``0`` (push), so
``stake_cents + net_cents >= 0`` is what goes back to the player; a stake is whole cents from its
minimum to the table limit :data:`MAX_BET_CENTS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rules.errors import RulesError
from rules.paytables import Payout

__all__ = ["MAX_BET_CENTS", "Box", "BoxName", "Outcome", "Settled", "check_stake_cents"]

#: Table limit on any single bet: EUR 100,000. Refuses absurd amounts (typos, overflowed clients)
#: before they reach the ledger; a Play of 4x stays far below any integer limit of the database.
MAX_BET_CENTS = 10_000_000


class Outcome(StrEnum):
    """Who won the hand's main contest (Ante/Blind/Play or Ante/Raise); see each game's docs."""

    PLAYER = "player"
    DEALER = "dealer"
    TIE = "tie"
    FOLD = "fold"


class BoxName(StrEnum):
    """The betting boxes of both games."""

    ANTE = "ante"
    BLIND = "blind"
    PLAY = "play"
    TRIPS = "trips"
    RAISE = "raise"
    BONUS = "bonus"
    PURCHASE = "purchase"


@dataclass(frozen=True, slots=True)
class Box:
    """One settled betting box: ``net_cents`` is +win, -stake (lost) or 0 (push or no bet).

    >>> Box(BoxName.BLIND, 125, 187).return_cents
    312
    """

    name: BoxName
    stake_cents: int
    net_cents: int

    def __post_init__(self) -> None:
        if self.stake_cents < 0 or self.net_cents < -self.stake_cents:
            raise ValueError(f"a box cannot lose more than its stake: {self!r}")

    @property
    def return_cents(self) -> int:
        """What goes back to the player: stake plus win, the stake on a push, 0 when lost."""
        return self.stake_cents + self.net_cents

    @classmethod
    def win(cls, name: BoxName, stake_cents: int, odds: Payout) -> Box:
        return cls(name, stake_cents, odds.win_cents(stake_cents))

    @classmethod
    def lose(cls, name: BoxName, stake_cents: int) -> Box:
        return cls(name, stake_cents, -stake_cents)

    @classmethod
    def push(cls, name: BoxName, stake_cents: int) -> Box:
        return cls(name, stake_cents, 0)


def check_stake_cents(value: int, *, param: str, minimum: int) -> None:
    """A stake is an ``int`` (not a bool) of cents from ``minimum`` (0 for an optional box, 1
    for a required one) to the table limit :data:`MAX_BET_CENTS`; else ``RulesError('invalid_bet',
    ..., param=param)``. Readers of the wire refuse the same before the engine sees a value.

    >>> check_stake_cents(10**8, param="bets.ante_cents", minimum=1)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: bets.ante_cents must be at most 10000000 cents (the table \
limit), got 100000000
    """
    # type() rather than isinstance(): True/False are ints to Python but not amounts to us.
    if type(value) is not int:
        raise RulesError(
            "invalid_bet",
            f"{param} must be an integer number of cents, got {value!r}",
            param=param,
        )
    if value < minimum:
        raise RulesError(
            "invalid_bet", f"{param} must be at least {minimum}, got {value}", param=param
        )
    if value > MAX_BET_CENTS:
        raise RulesError(
            "invalid_bet",
            f"{param} must be at most {MAX_BET_CENTS} cents (the table limit), got {value}",
            param=param,
        )


class Settled:
    """What a settled seat of either game shares: its boxes."""

    __slots__ = ()
    boxes: tuple[Box, ...]

    def box(self, name: BoxName) -> Box:
        """The box called ``name``; ``KeyError`` if it was not bet (no Trips, no Bonus)."""
        for box in self.boxes:
            if box.name == name:
                return box
        raise KeyError(name)

    @property
    def total_stake_cents(self) -> int:
        """Everything staked on the seat's boxes."""
        return sum(box.stake_cents for box in self.boxes)
