"""Bets and deals: each round's seats, their bets and their cards, as a terminal posts them.

What this module guarantees:

- **Fair deals.** Every round is dealt from a full 52-card deck shuffled by `random.SystemRandom`
  (or by `random.Random` seeded per table with `--seed`, for a reproducible run: the same seed
  gives the same bets, cards and decisions at each table whatever the timing). The one exception
  is the demonstration royal (`force_royal`), dealt from a stacked deck, and only its royal cards
  are chosen: the rest of that deck is shuffled as usual.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.cards import DECK, Card, Rank, Suit
from simulator.strategy import decide, decision_json

# --- how the floor plays -------------------------------------------------------------------------

TABLE_SEATS = 7  # the demo tables' seats; the floor file does not say
# How many seats are occupied in a round: 3 to 7, mostly 5 or 6, as on a busy evening.
OCCUPIED_SEATS_WEIGHTS: Mapping[int, int] = {3: 2, 4: 4, 5: 7, 6: 7, 7: 3}
# Ante choices; repeats weight the usual table minimums. The Blind always equals the Ante.
ANTES_CENTS = (500, 500, 1000, 1000, 2500, 5000)
TRIPS_CENTS = (500, 1000)
TRIPS_SHARE = 0.30  # of seats betting Trips
PROGRESSIVE_SHARE = 0.80  # of seats staking the progressive


# --- bets and deals ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlacedBets:
    """One occupied seat's locked bets, in cents (the Blind equals the Ante)."""

    seat: int
    ante_cents: int
    trips_cents: int
    progressive_cents: int

    def as_json(self) -> dict[str, Any]:
        # Optional bets are left out when not placed, as a terminal sends them.
        bets = {"ante_cents": self.ante_cents, "blind_cents": self.ante_cents}
        if self.trips_cents:
            bets["trips_cents"] = self.trips_cents
        if self.progressive_cents:
            bets["progressive_cents"] = self.progressive_cents
        return {"seat": self.seat, "bets": bets}


@dataclass(frozen=True, slots=True)
class Deal:
    """The cards of one round: `holes[i]` belongs to the round's i-th seat."""

    board: tuple[Card, ...]
    dealer: tuple[Card, ...]
    holes: tuple[tuple[Card, ...], ...]


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """A round as a terminal posts it: the open's bets, then the result's cards and decisions."""

    round_id: str
    seats: tuple[PlacedBets, ...]
    deal: Deal

    def open_body(self) -> dict[str, Any]:
        return {"round_id": self.round_id, "seats": [seat.as_json() for seat in self.seats]}

    def result_body(self) -> dict[str, Any]:
        board = self.deal.board
        return {
            "board": [str(card) for card in board],
            "dealer": [str(card) for card in self.deal.dealer],
            "seats": [
                {
                    "seat": seat.seat,
                    "cards": [str(card) for card in hole],
                    "decision": decision_json(decide(hole, board)),
                }
                for seat, hole in zip(self.seats, self.deal.holes, strict=True)
            ],
        }


def place_bets(rng: random.Random, stake_cents: int) -> tuple[PlacedBets, ...]:
    """The occupied seats of a round and their bets, in seat order."""
    counts = list(OCCUPIED_SEATS_WEIGHTS)
    occupied = rng.choices(counts, weights=[OCCUPIED_SEATS_WEIGHTS[n] for n in counts])[0]
    return tuple(
        PlacedBets(
            seat=seat,
            ante_cents=rng.choice(ANTES_CENTS),
            trips_cents=rng.choice(TRIPS_CENTS) if rng.random() < TRIPS_SHARE else 0,
            progressive_cents=stake_cents if rng.random() < PROGRESSIVE_SHARE else 0,
        )
        for seat in sorted(rng.sample(range(1, TABLE_SEATS + 1), occupied))
    )


def deal_fair(rng: random.Random, seats: int) -> Deal:
    """Two hole cards per seat, the dealer's two and the board's five from a shuffled deck."""
    deck = list(DECK)
    rng.shuffle(deck)
    return _deal_from(deck, seats)


def _deal_from(deck: list[Card], seats: int) -> Deal:
    holes = tuple(tuple(deck[2 * n : 2 * n + 2]) for n in range(seats))
    rest = deck[2 * seats :]
    return Deal(board=tuple(rest[2:7]), dealer=tuple(rest[:2]), holes=holes)


def deal_royal(rng: random.Random, seats: int, royal_seat: int) -> Deal:
    """A stacked deal: the `royal_seat`-th seat (0-based) holds a royal flush made with one or two
    hole cards and three or four board cards (never the community royal); every other card comes
    from the shuffled rest of the deck."""
    suit = rng.choice(list(Suit))
    royal = [Card(rank, suit) for rank in (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.TEN)]
    rng.shuffle(royal)
    rest = [card for card in DECK if card not in royal]
    rng.shuffle(rest)
    in_hole = rng.choice((1, 2))
    hole = (*royal[:in_hole], *rest[: 2 - in_hole])
    rest = rest[2 - in_hole :]
    board = [*royal[in_hole:], *rest[:in_hole]]
    rng.shuffle(board)  # the royal's cards need not come first
    others = _deal_from(rest[in_hole:], seats - 1)
    holes = list(others.holes)
    holes.insert(royal_seat, hole)
    return Deal(board=tuple(board), dealer=others.dealer, holes=tuple(holes))


def plan_round(
    rng: random.Random, *, round_id: str, stake_cents: int, force_royal: bool = False
) -> RoundPlan:
    """Bets, then cards: a fair deal, or with `force_royal` the jackpot for a seat that staked
    the progressive (one is given the stake if no seat had it)."""
    seats = place_bets(rng, stake_cents)
    if not force_royal:
        return RoundPlan(round_id, seats, deal_fair(rng, len(seats)))
    bettors = [index for index, seat in enumerate(seats) if seat.progressive_cents]
    royal_seat = rng.choice(bettors) if bettors else 0
    if not bettors:
        first = seats[0]
        seats = (
            PlacedBets(first.seat, first.ante_cents, first.trips_cents, stake_cents),
            *seats[1:],
        )
    return RoundPlan(round_id, seats, deal_royal(rng, len(seats), royal_seat))
