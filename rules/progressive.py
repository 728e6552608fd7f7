"""The Ultimate Texas Hold'em progressive: a seat's award, envy, and the bet's exact return.

A seat's progressive is judged on its 7-card hand (2 hole cards + the 5 board cards), also after a
fold, and only its best award is paid (domain.md, "The progressive"):

- ``royal_flush``: a royal flush using at least one hole card: the jackpot, a share of the meter
  (100% by default) at the moment of the hit;
- ``community_royal``: the 5 board cards alone are a royal flush (every seat holds it): fixed;
- ``straight_flush``, ``four_of_a_kind``, ``full_house``: fixed; anything less: ``none``.

Envy ("La Garantie") is separate: when a seat wins the jackpot, every OTHER seat at that table with
a progressive stake in that round gets ``envy_cents`` on top of its own award.

Invariants:

- The stake is always collected (it is the contribution, never returned); awards come on top, so
  the bet's return is the expected award, and nothing here ever returns the stake.
- At most one seat per table and round can win the jackpot (proof in :func:`envy_seats`).
- :func:`progressive_return` is exact: integer counts of deals and ``Fraction`` arithmetic, no
  floats; rounded figures (basis points, the 4-decimal percentage) are rounded DOWN.

Bad numeric parameters of :func:`progressive_return` raise ``RulesError('invalid_parameter')``:
they are not bets (a meter, a number of seats), so ``invalid_bet`` would mislead the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from math import comb
from types import MappingProxyType
from typing import Literal

from rules.cards import Card, ensure_distinct
from rules.errors import RulesError
from rules.hands import Category, HandValue, evaluate
from rules.paytables import ProgressiveSchedule

__all__ = [
    "AWARD_DEALS",
    "ENVY",
    "SEVEN_CARD_COUNTS",
    "TOTAL_DEALS",
    "OwedAward",
    "ProgressiveAward",
    "ProgressiveReturn",
    "award_of",
    "envy_seats",
    "fixed_award_cents",
    "progressive_award",
    "progressive_return",
    "round_awards",
]


class ProgressiveAward(StrEnum):
    """A seat's best progressive award (envy is not a hand's award: see :func:`envy_seats`)."""

    ROYAL_FLUSH = "royal_flush"
    COMMUNITY_ROYAL = "community_royal"
    STRAIGHT_FLUSH = "straight_flush"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    NONE = "none"


_BY_CATEGORY: Mapping[Category, ProgressiveAward] = MappingProxyType(
    {
        Category.STRAIGHT_FLUSH: ProgressiveAward.STRAIGHT_FLUSH,
        Category.FOUR_OF_A_KIND: ProgressiveAward.FOUR_OF_A_KIND,
        Category.FULL_HOUSE: ProgressiveAward.FULL_HOUSE,
    }
)


def _check_count(cards: Sequence[Card], count: int, param: str) -> None:
    if len(cards) != count:
        raise RulesError(
            "wrong_card_count",
            f"{param} must hold {count} cards, got {len(cards)}",
            param=param,
        )


def award_of(seven: HandValue, board: Sequence[Card]) -> ProgressiveAward:
    """The award of a 7-card hand value whose board is ``board`` (no validation; see below)."""
    if seven.category == Category.ROYAL_FLUSH:
        # The board alone can only be a royal if the 7-card hand is one, so the 5-card evaluation
        # is needed only here. With a royal on the board the hole cards cannot make a better
        # hand (nothing beats a royal) nor a second royal (that needs 5 more cards of a suit), so
        # a board royal is always the community royal, whatever the hole cards add.
        if evaluate(board).category == Category.ROYAL_FLUSH:
            return ProgressiveAward.COMMUNITY_ROYAL
        return ProgressiveAward.ROYAL_FLUSH
    return _BY_CATEGORY.get(seven.category, ProgressiveAward.NONE)


def progressive_award(*, hole: Sequence[Card], board: Sequence[Card]) -> ProgressiveAward:
    """The seat's best progressive award on its 7-card hand (folded or not).

    Raises ``RulesError`` (``wrong_card_count`` with param ``'hole'``/``'board'``,
    ``duplicate_card``) on bad input.
    """
    _check_count(hole, 2, "hole")
    _check_count(board, 5, "board")
    ensure_distinct({"hole": hole, "board": board})
    return award_of(evaluate([*hole, *board]), board)


def fixed_award_cents(award: ProgressiveAward, paytable: ProgressiveSchedule) -> int | None:
    """The house-paid amount of ``award``; ``None`` for the jackpot royal (its amount is the meter).

    ``ProgressiveAward.NONE`` is worth 0.
    """
    match award:
        case ProgressiveAward.ROYAL_FLUSH:
            return None
        case ProgressiveAward.COMMUNITY_ROYAL:
            return paytable.community_royal_cents
        case ProgressiveAward.STRAIGHT_FLUSH:
            return paytable.straight_flush_cents
        case ProgressiveAward.FOUR_OF_A_KIND:
            return paytable.four_of_a_kind_cents
        case ProgressiveAward.FULL_HOUSE:
            return paytable.full_house_cents
        case ProgressiveAward.NONE:
            return 0


def envy_seats(awards: Mapping[int, ProgressiveAward], bettors: Iterable[int]) -> frozenset[int]:
    """The seats owed envy this round: every bettor other than the jackpot winner, if there is one.

    ``awards`` maps a seat to its award (seats without a progressive stake may be absent or
    ``NONE``); ``bettors`` are the seats with a progressive stake this round. A community royal
    pays no envy. Raises ``ValueError`` if two seats won the jackpot (impossible with distinct
    cards, see below) or a seat without a stake did: both mean the caller's input is corrupt.

    >>> sorted(envy_seats({1: ProgressiveAward.ROYAL_FLUSH, 2: ProgressiveAward.NONE}, [1, 2, 5]))
    [2, 5]
    """
    bettor_set = frozenset(bettors)
    winners = [seat for seat, award in awards.items() if award == ProgressiveAward.ROYAL_FLUSH]
    # Two jackpot royals at one table in one round are impossible. A jackpot royal R is 5 cards
    # taken from 2 hole cards + the board, so R has at least 3 cards on the board, and fewer than
    # 5 (5 would be the community royal). Two seats' royals R1, R2 each need >= 3 of the 5 board
    # cards; 3 + 3 > 5, so they share a board card and hence their suit, so R1 == R2 == R (a
    # royal is fixed by its suit). R has k in {3, 4} cards on the board; both seats then need the
    # same 5 - k >= 1 remaining cards of R in their hole cards, but a card is dealt only once.
    if len(winners) > 1:
        raise ValueError(f"two jackpot royals in one round is impossible: seats {sorted(winners)}")
    if not winners:
        return frozenset()
    (winner,) = winners
    if winner not in bettor_set:
        raise ValueError(f"seat {winner} won the jackpot without a progressive stake")
    return bettor_set - {winner}


#: The kind of an envy award (not a hand's award, so not a :class:`ProgressiveAward`).
ENVY: Literal["envy"] = "envy"


@dataclass(frozen=True, slots=True)
class OwedAward:
    """One award a round owes: a seat's own best award (never ``NONE``) or its envy."""

    seat: int
    kind: ProgressiveAward | Literal["envy"]


def round_awards(best: Mapping[int, ProgressiveAward]) -> tuple[OwedAward, ...]:
    """Every award of a round, given each bettor's best award (``best`` has one entry per seat
    with a progressive stake): seats in ascending order, each seat's own award before its envy.

    >>> [(a.seat, str(a.kind)) for a in round_awards({
    ...     1: ProgressiveAward.FULL_HOUSE, 3: ProgressiveAward.ROYAL_FLUSH,
    ...     5: ProgressiveAward.NONE})]
    [(1, 'full_house'), (1, 'envy'), (3, 'royal_flush'), (5, 'envy')]
    """
    envy = envy_seats(best, best)
    owed: list[OwedAward] = []
    for seat in sorted(best):
        if best[seat] != ProgressiveAward.NONE:
            owed.append(OwedAward(seat, best[seat]))
        if seat in envy:
            owed.append(OwedAward(seat, ENVY))
    return tuple(owed)


# --- exact return of the bet -----------------------------------------------------------------

#: Every (hole, board) deal for one seat: C(52, 2) hole pairs x C(50, 5) boards = 2,809,475,760.
TOTAL_DEALS = comb(52, 2) * comb(50, 5)

# Each 7-card set is dealt as C(7, 2) = 21 different (hole, board) splits, and the award depends
# only on the 7-card category except for the royal (community or not), so deal counts are 21 x
# the 7-card counts below, derived from first principles:
_SPLITS = comb(7, 2)

# Royal flush: 4 suits x the 2 other cards from the 47 left. (7 cards cannot hold two royals.)
_ROYAL_7 = 4 * comb(47, 2)
# Straight flush below royal: 4 suits x 9 top ranks (5-high wheel .. king-high), and the 2 other
# cards from the 46 that are not the card one rank above the top in the same suit (that card
# would make a higher straight flush, or a royal above a king-high one). A card below the bottom
# only makes a lower straight flush, which does not change the best hand.
_STRAIGHT_FLUSH_7 = 4 * 9 * comb(46, 2)
# Four of a kind: 13 ranks x any 3 of the 48 other cards. No straight flush can coexist: it would
# need 5 cards of one suit, at most one of them of the quads' rank, from only 3 other cards.
_FOUR_OF_A_KIND_7 = 13 * comb(48, 3)
# Full house, by rank pattern (no pattern can hold a flush: every suit appears at most once per
# rank, and there are at most 4 ranks; quads are excluded by construction):
#   3+2+1+1: trips rank x C(4,3) suits, pair rank x C(4,2), 2 single ranks of the 11 left x 4 x 4;
#   3+2+2:   trips rank x C(4,3), 2 pair ranks of the 12 left x C(4,2)^2;
#   3+3+1:   2 trips ranks x C(4,3)^2, a single of the 11 ranks left x 4.
_FULL_HOUSE_7 = (
    13 * comb(4, 3) * 12 * comb(4, 2) * comb(11, 2) * 4 * 4
    + 13 * comb(4, 3) * comb(12, 2) * comb(4, 2) ** 2
    + comb(13, 2) * comb(4, 3) ** 2 * 11 * 4
)

#: 7-card sets (of the C(52, 7) = 133,784,560) whose best hand is each progressive category.
SEVEN_CARD_COUNTS: Mapping[Category, int] = MappingProxyType(
    {
        Category.ROYAL_FLUSH: _ROYAL_7,
        Category.STRAIGHT_FLUSH: _STRAIGHT_FLUSH_7,
        Category.FOUR_OF_A_KIND: _FOUR_OF_A_KIND_7,
        Category.FULL_HOUSE: _FULL_HOUSE_7,
    }
)

# Community royal: the board is one of the 4 royals and the hole pair any 2 of the 47 others.
# It is exactly one of the 21 splits of each 7-card royal set (both non-royal cards in the hole).
_COMMUNITY_ROYAL_DEALS = 4 * comb(47, 2)
_JACKPOT_ROYAL_DEALS = _SPLITS * _ROYAL_7 - _COMMUNITY_ROYAL_DEALS
_PAYING_DEALS = {
    ProgressiveAward.ROYAL_FLUSH: _JACKPOT_ROYAL_DEALS,
    ProgressiveAward.COMMUNITY_ROYAL: _COMMUNITY_ROYAL_DEALS,
    ProgressiveAward.STRAIGHT_FLUSH: _SPLITS * _STRAIGHT_FLUSH_7,
    ProgressiveAward.FOUR_OF_A_KIND: _SPLITS * _FOUR_OF_A_KIND_7,
    ProgressiveAward.FULL_HOUSE: _SPLITS * _FULL_HOUSE_7,
}
#: (hole, board) deals, out of :data:`TOTAL_DEALS`, that win each award.
AWARD_DEALS: Mapping[ProgressiveAward, int] = MappingProxyType(
    {**_PAYING_DEALS, ProgressiveAward.NONE: TOTAL_DEALS - sum(_PAYING_DEALS.values())}
)


@dataclass(frozen=True, slots=True)
class ProgressiveReturn:
    """The exact theoretical return of one progressive stake at a given meter.

    ``probabilities`` gives each award's probability for one seat; ``envy_probability`` is the
    probability that this seat is paid envy (one of ``other_bettors`` hits the jackpot).
    ``expected_return_cents`` is the expected amount paid per stake (awards + envy; the stake is
    never returned), ``rtp`` that over ``stake_cents``. ``rtp_bp`` (basis points) and
    ``rtp_percent`` (e.g. ``"87.1234"``, 4 decimals) are rounded down from the exact ``rtp``.
    ``break_even_jackpot_cents`` is the smallest whole-cent meter at which
    ``expected_return_cents >= stake_cents``, or ``None`` if no meter gets there (a table that
    pays no share of the meter).
    """

    paytable_version: str
    jackpot_cents: int
    other_bettors: int
    stake_cents: int
    probabilities: Mapping[ProgressiveAward, Fraction]
    envy_probability: Fraction
    expected_return_cents: Fraction
    rtp: Fraction
    rtp_bp: int
    rtp_percent: str
    break_even_jackpot_cents: int | None


def _require_int(value: object, *, param: str, low: int, high: int | None = None) -> int:
    if type(value) is not int:
        raise RulesError(
            "invalid_parameter", f"{param} must be an integer, got {value!r}", param=param
        )
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"between {low} and {high}"
        raise RulesError("invalid_parameter", f"{param} must be {bounds}, got {value}", param=param)
    return value


def _expected_fixed_cents(
    paytable: ProgressiveSchedule, other_bettors: int
) -> tuple[Fraction, Fraction]:
    """Expected fixed awards + envy per stake, and the probability of being paid envy."""
    fixed = sum(
        (
            Fraction(deals, TOTAL_DEALS) * (fixed_award_cents(award, paytable) or 0)
            for award, deals in AWARD_DEALS.items()
        ),
        start=Fraction(0),
    )
    # Envy: at most one jackpot royal per table and round (see envy_seats), so "seat j hits" are
    # disjoint events for the other seats j and P(envy) is the sum of their probabilities; by
    # exchangeability of the seats each is the single-seat jackpot probability.
    envy_probability = other_bettors * Fraction(_JACKPOT_ROYAL_DEALS, TOTAL_DEALS)
    return fixed + envy_probability * paytable.envy_cents, envy_probability


def progressive_return(
    *,
    jackpot_cents: int,
    other_bettors: int,
    paytable: ProgressiveSchedule,
    stake_cents: int = 500,
) -> ProgressiveReturn:
    """The exact return of a progressive stake when the meter shows ``jackpot_cents``.

    ``other_bettors`` (0..6) is how many other seats at the table also stake the progressive
    (they bring envy). Raises ``RulesError('invalid_parameter')`` on a non-int (bool included),
    negative meter, ``other_bettors`` outside 0..6 or a stake below 1 cent.

    >>> r = progressive_return(jackpot_cents=0, other_bettors=0,
    ...                        paytable=ProgressiveSchedule(version="x"))
    >>> r.break_even_jackpot_cents is not None and r.rtp < 1
    True
    """
    _require_int(jackpot_cents, param="jackpot_cents", low=0)
    _require_int(other_bettors, param="other_bettors", low=0, high=6)
    _require_int(stake_cents, param="stake_cents", low=1)

    p_jackpot = Fraction(_JACKPOT_ROYAL_DEALS, TOTAL_DEALS)
    fixed, envy_probability = _expected_fixed_cents(paytable, other_bettors)
    expected = fixed + p_jackpot * paytable.jackpot_award_cents(jackpot_cents)
    rtp = expected / stake_cents
    # Both rounded down: never overstate the return. rtp >= 0, so // is truncation.
    rtp_bp = rtp.numerator * 10_000 // rtp.denominator
    millionths = rtp.numerator * 1_000_000 // rtp.denominator
    rtp_percent = f"{millionths // 10_000}.{millionths % 10_000:04d}"

    return ProgressiveReturn(
        paytable_version=paytable.version,
        jackpot_cents=jackpot_cents,
        other_bettors=other_bettors,
        stake_cents=stake_cents,
        probabilities=MappingProxyType(
            {award: Fraction(deals, TOTAL_DEALS) for award, deals in AWARD_DEALS.items()}
        ),
        envy_probability=envy_probability,
        expected_return_cents=expected,
        rtp=rtp,
        rtp_bp=rtp_bp,
        rtp_percent=rtp_percent,
        break_even_jackpot_cents=_break_even(paytable, fixed, p_jackpot, stake_cents),
    )


def _break_even(
    paytable: ProgressiveSchedule, fixed: Fraction, p_jackpot: Fraction, stake_cents: int
) -> int | None:
    """Smallest meter m with fixed + p_jackpot * jackpot_award_cents(m) >= stake, or None.

    The return is non-decreasing in m, so: the award needed is A = ceil((stake - fixed) / p), and
    since the award is floor(m * bp / 10000), the smallest m giving at least A is
    ceil(A * 10000 / bp).
    """
    shortfall = stake_cents - fixed
    if shortfall <= 0:
        return 0
    if paytable.jackpot_percent_bp == 0:
        return None
    needed = shortfall / p_jackpot
    award = -(-needed.numerator // needed.denominator)
    return -(-award * 10_000 // paytable.jackpot_percent_bp)
