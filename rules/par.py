"""PAR sheets: the exact odds and return of the progressive, the Trips box and the Stud Bonus.
A sheet lists, for one paytable version and every award kind, its combinations, probability,
pay, contribution to the return and share of it; then the return and the house edge. Where each
sheet's counts come from: docs/rules.md, "PAR sheets".

Invariants:
- pure (numpy and the standard library only), exact (integer counts and `Fraction`s), immutable;
- the only rounded figures are the 4-decimal percentages: return rounded down, house edge up;
- every sheet's contributions sum to its `rtp`; the probabilities of the lines not `on_top`
  sum to 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from rules import stud_bonus_table
from rules.batch import categories_batch, rank5_batch
from rules.enumeration import combinations_array
from rules.errors import RulesError
from rules.hands import Category
from rules.paytables import CURRENT, PAYTABLES, PROGRESSIVE_PAYTABLES, Paytable, ProgressiveSchedule
from rules.progressive import (
    AWARD_DEALS,
    ENVY,
    TOTAL_DEALS,
    ProgressiveAward,
    fixed_award_cents,
    progressive_return,
)

__all__ = [
    "SEVEN_CARD_HANDS",
    "SHEET_VERSIONS",
    "STUD_BONUS_BEATEN",
    "STUD_BONUS_PAIRS",
    "TRIPS_SEVEN_CARD_COUNTS",
    "ParSheet",
    "SheetLine",
    "par_sheets",
    "percent",
    "progressive_sheet",
    "stud_bonus_beaten_counts",
    "stud_bonus_sheet",
    "trips_sheet",
]

#: All 7-card hands, C(52, 7): the Trips sheet's denominator.
SEVEN_CARD_HANDS = comb(52, 7)

# The 7-card category counts (best five) of the categories Trips pays on, derived in closed form
# beside the progressive's (rules.progressive.SEVEN_CARD_COUNTS covers full house and up):
#   straight: 7-card hands with a straight and no flush and no full house or better;
#   flush: a suit with 5+ cards, no straight flush; three of a kind: one rank thrice, the other
#   four ranks distinct, no straight, no flush. Rather than a second set of closed forms (where a
#   slip would go unnoticed), these are the published figures, and the tests check them against
#   the numpy enumeration of all C(52, 7) hands.
TRIPS_SEVEN_CARD_COUNTS: Mapping[Category, int] = MappingProxyType(
    {
        Category.ROYAL_FLUSH: 4_324,
        Category.STRAIGHT_FLUSH: 37_260,
        Category.FOUR_OF_A_KIND: 224_848,
        Category.FULL_HOUSE: 3_473_184,
        Category.FLUSH: 4_047_644,
        Category.STRAIGHT: 6_180_020,
        Category.THREE_OF_A_KIND: 6_461_620,
    }
)

#: (player five, dealer five) pairs of one Stud deal: C(52, 5) x C(47, 5).
STUD_BONUS_PAIRS = comb(52, 5) * comb(47, 5)

#: The Stud Bonus categories (flush and up), weakest first.
_BONUS_CATEGORIES = tuple(c for c in Category if c >= Category.FLUSH)


@dataclass(frozen=True, slots=True)
class SheetLine:
    """One award kind of a sheet.

    ``combinations`` of ``out_of`` equally likely outcomes win it (``probability`` is their
    ratio). ``pays`` says what it pays (``"3:1"``, ``"100% of the meter"``, ``"EUR 500"``);
    ``pays_cents`` is the amount per stake for the progressive (``None`` on the box sheets, whose
    odds apply to any stake). ``rtp_contribution`` is what the line returns per unit staked (for
    an "n to 1" box: probability x (1 + n), the stake coming back with the win), and
    ``share_of_return`` that over the sheet's ``rtp`` (0 when the ``rtp`` is 0). ``on_top``
    marks envy, paid beside a seat's own award rather than instead of it.
    """

    kind: str
    combinations: int
    out_of: int
    probability: Fraction
    pays: str
    pays_cents: int | None
    rtp_contribution: Fraction
    share_of_return: Fraction
    on_top: bool = False


@dataclass(frozen=True, slots=True)
class ParSheet:
    """A paytable version's PAR sheet: its lines (best award first), the return and the edge.

    ``game`` is ``"uth_progressive"``, ``"uth_trips"`` or ``"stud_bonus"``; ``jackpot_cents``,
    ``other_bettors`` and ``stake_cents`` are set on the progressive's sheet only.
    ``rtp_percent`` is rounded down, ``house_edge_percent`` up, to 4 decimals.
    """

    game: str
    paytable_version: str
    lines: tuple[SheetLine, ...]
    rtp: Fraction
    house_edge: Fraction
    rtp_percent: str
    house_edge_percent: str
    jackpot_cents: int | None = None
    other_bettors: int | None = None
    stake_cents: int | None = None


def percent(value: Fraction, *, up: bool) -> str:
    """``value`` as a percentage with 4 decimals, rounded down (or up); sign kept."""
    scaled = value * 1_000_000
    whole = (
        -(-scaled.numerator // scaled.denominator) if up else scaled.numerator // scaled.denominator
    )
    sign, whole = ("-", -whole) if whole < 0 else ("", whole)
    return f"{sign}{whole // 10_000}.{whole % 10_000:04d}"


def _sheet(
    game: str,
    version: str,
    rows: list[tuple[str, int, int, str, int | None, Fraction, bool]],
    **extra: int,
) -> ParSheet:
    """Lines from ``(kind, combinations, out_of, pays, pays_cents, payout per unit, on_top)``."""
    contributions = [Fraction(n, d) * payout for _, n, d, _, _, payout, _ in rows]
    rtp = sum(contributions, start=Fraction(0))
    lines = tuple(
        SheetLine(
            kind=kind,
            combinations=n,
            out_of=d,
            probability=Fraction(n, d),
            pays=pays,
            pays_cents=cents,
            rtp_contribution=part,
            share_of_return=part / rtp if rtp else Fraction(0),
            on_top=on_top,
        )
        for (kind, n, d, pays, cents, _, on_top), part in zip(rows, contributions, strict=True)
    )
    edge = 1 - rtp
    return ParSheet(
        game=game,
        paytable_version=version,
        lines=lines,
        rtp=rtp,
        house_edge=edge,
        rtp_percent=percent(rtp, up=False),
        house_edge_percent=percent(edge, up=True),
        **extra,
    )


def _euros(cents: int) -> str:
    return f"EUR {cents // 100:,}" + (f".{cents % 100:02d}" if cents % 100 else "")


def progressive_sheet(
    paytable: ProgressiveSchedule,
    *,
    jackpot_cents: int,
    other_bettors: int,
    stake_cents: int = 500,
) -> ParSheet:
    """The progressive's sheet at a meter of ``jackpot_cents`` with ``other_bettors`` (0..6).

    Raises ``RulesError('invalid_parameter')`` as :func:`progressive_return` does.

    >>> from rules.paytables import PROGRESSIVE_2026_1 as table
    >>> sheet = progressive_sheet(table, jackpot_cents=100_000_00, other_bettors=6)
    >>> sheet.rtp == progressive_return(
    ...     jackpot_cents=100_000_00, other_bettors=6, paytable=table).rtp
    True
    """
    exact = progressive_return(
        jackpot_cents=jackpot_cents,
        other_bettors=other_bettors,
        paytable=paytable,
        stake_cents=stake_cents,
    )
    rows: list[tuple[str, int, int, str, int | None, Fraction, bool]] = []
    for award in ProgressiveAward:
        deals = AWARD_DEALS[award]
        fixed = fixed_award_cents(award, paytable)
        if fixed is None:
            cents = paytable.jackpot_award_cents(jackpot_cents)
            share = paytable.jackpot_percent_bp
            pays = f"{share // 100}{f'.{share % 100:02d}' if share % 100 else ''}% of the meter"
        else:
            cents, pays = fixed, _euros(fixed) if fixed else "nothing"
        rows.append(
            (str(award), deals, TOTAL_DEALS, pays, cents, Fraction(cents, stake_cents), False)
        )
        if award == ProgressiveAward.ROYAL_FLUSH:
            # Envy right after the jackpot it follows: each other bettor's jackpot deals.
            envy_pays = f"{_euros(paytable.envy_cents)} per jackpot hit by another bettor"
            rows.append(
                (
                    ENVY,
                    other_bettors * deals,
                    TOTAL_DEALS,
                    envy_pays,
                    paytable.envy_cents,
                    Fraction(paytable.envy_cents, stake_cents),
                    True,
                )
            )
    sheet = _sheet(
        "uth_progressive",
        paytable.version,
        rows,
        jackpot_cents=jackpot_cents,
        other_bettors=other_bettors,
        stake_cents=stake_cents,
    )
    # Two derivations of one figure: a difference is a bug in one of them, never a rounding.
    if sheet.rtp != exact.rtp:  # pragma: no cover - guarded by the tests
        raise AssertionError(f"PAR sheet return {sheet.rtp} != progressive_return {exact.rtp}")
    return sheet


def _box_rows(
    paytable: Paytable, counts: Mapping[Category, int], out_of: int
) -> list[tuple[str, int, int, str, int | None, Fraction, bool]]:
    """Each paying category, best first, then ``loses``: "n to 1" returns 1 + n per unit."""
    rows: list[tuple[str, int, int, str, int | None, Fraction, bool]] = []
    for category in sorted(paytable.odds, reverse=True):
        odds = paytable.odds[category]
        payout = 1 + Fraction(odds.numerator, odds.denominator)
        rows.append((category.label, counts[category], out_of, str(odds), None, payout, False))
    losing = out_of - sum(row[1] for row in rows)
    rows.append(("loses", losing, out_of, "loses the stake", None, Fraction(0), False))
    return rows


def _require_box(paytable: Paytable, name: str) -> None:
    if paytable.name != name:
        raise RulesError(
            "invalid_parameter",
            f"a {name} PAR sheet needs a {name} paytable, got {paytable.version!r}",
            param="version",
        )


def trips_sheet(paytable: Paytable) -> ParSheet:
    """The Trips box: paid on the player's 7-card hand, whatever the dealer holds."""
    _require_box(paytable, "uth_trips")
    return _sheet(
        "uth_trips",
        paytable.version,
        _box_rows(paytable, TRIPS_SEVEN_CARD_COUNTS, SEVEN_CARD_HANDS),
    )


# --- the Stud Bonus: the dealer hands each flush-or-better hand beats -------------------------


def _parse_counts(text: str) -> tuple[int, ...]:
    return tuple(int(word) for word in text.split())


#: For each Bonus category, weakest first: for every player five of that category (in the
#: lexicographic order of their card indices, as ``combinations_array(5)`` lists them), how many
#: of the C(47, 5) dealer fives from the other cards rank strictly below it.
STUD_BONUS_BEATEN: Mapping[Category, tuple[int, ...]] = MappingProxyType(
    {
        Category(int(category)): _parse_counts(text)
        for category, text in stud_bonus_table.BEATEN.items()
    }
)


def _binomials() -> NDArray[np.int64]:
    return np.array([[comb(n, k) for k in range(6)] for n in range(53)], dtype=np.int64)


def _subset_index(
    binomials: NDArray[np.int64], columns: list[NDArray[np.int64]]
) -> NDArray[np.int64]:
    """The colex index of each row's cards (ascending): sum of C(card, position + 1)."""
    index = np.zeros(len(columns[0]), dtype=np.int64)
    for position, column in enumerate(columns):
        index += binomials[column, position + 1]
    return index


def stud_bonus_beaten_counts() -> dict[Category, tuple[int, ...]]:
    """Recompute :data:`STUD_BONUS_BEATEN` exactly (some 15 s and 1 GB on 2 cores).

    All 2,598,960 fives are ranked once. For a player five H of rank r, the dealer fives from
    the other 47 cards ranking below r are, by inclusion-exclusion over the subsets S of H,
    sum over S of (-1)^|S| x #{fives containing S and ranking below r}. For |S| = 0 that is a
    cumulative count by rank; for |S| = 1..4, every five's C(5, |S|) subsets are keyed
    ``(subset index << 13) | rank`` and sorted, and a binary search counts the keys between
    ``S << 13`` and ``(S << 13) | r``; for S = H, H itself does not rank below r.
    """
    hands = combinations_array(5)
    ranks = rank5_batch(hands)
    categories = categories_batch(ranks)
    player = np.flatnonzero(categories >= Category.FLUSH)
    cards = hands.astype(np.int64)
    rank = ranks.astype(np.int64)
    player_cards, player_rank = cards[player], rank[player]
    binomials = _binomials()

    below_rank = np.concatenate(([0], np.cumsum(np.bincount(rank, minlength=7463))))
    beaten = below_rank[player_rank].astype(np.int64)
    for size in range(1, 5):
        subsets = list(combinations(range(5), size))
        keys = np.sort(
            np.concatenate(
                [
                    (_subset_index(binomials, [cards[:, j] for j in subset]) << 13) | rank
                    for subset in subsets
                ]
            )
        )
        found = np.zeros(len(player), dtype=np.int64)
        for subset in subsets:
            base = _subset_index(binomials, [player_cards[:, j] for j in subset]) << 13
            found += np.searchsorted(keys, base | player_rank) - np.searchsorted(keys, base)
        del keys
        beaten += found if size % 2 == 0 else -found
    player_categories = categories[player]
    return {
        category: tuple(int(n) for n in beaten[player_categories == category])
        for category in _BONUS_CATEGORIES
    }


@cache
def _bonus_pairs() -> Mapping[Category, int]:
    return MappingProxyType({c: sum(STUD_BONUS_BEATEN[c]) for c in _BONUS_CATEGORIES})


def stud_bonus_sheet(paytable: Paytable) -> ParSheet:
    """The Stud Bonus: per (player five, dealer five) pair, paid as the module docstring says."""
    _require_box(paytable, "stud_bonus")
    return _sheet(
        "stud_bonus", paytable.version, _box_rows(paytable, _bonus_pairs(), STUD_BONUS_PAIRS)
    )


def par_sheets(
    *, version: str | None, jackpot_cents: int, other_bettors: int
) -> tuple[ParSheet, ...]:
    """The sheets of the paytables in force (progressive, Trips, Stud Bonus), or of the one
    published ``version`` (a progressive, Trips or Stud Bonus paytable).

    An unknown version, or one without a PAR sheet (the Blind and the Raise, whose return
    depends on the player's strategy), raises ``RulesError('invalid_parameter', param='version')``;
    a bad meter or number of bettors as :func:`progressive_return` does.
    """
    if version is None:
        return (
            progressive_sheet(
                CURRENT.progressive, jackpot_cents=jackpot_cents, other_bettors=other_bettors
            ),
            trips_sheet(CURRENT.uth_trips),
            stud_bonus_sheet(CURRENT.stud_bonus),
        )
    if version in PROGRESSIVE_PAYTABLES:
        table = PROGRESSIVE_PAYTABLES[version]
        return (progressive_sheet(table, jackpot_cents=jackpot_cents, other_bettors=other_bettors),)
    box = PAYTABLES.get(version)
    if box is not None and box.name == "uth_trips":
        return (trips_sheet(box),)
    if box is not None and box.name == "stud_bonus":
        return (stud_bonus_sheet(box),)
    raise RulesError(
        "invalid_parameter",
        f"no PAR sheet for paytable version {version!r}; versions with one: "
        + ", ".join(SHEET_VERSIONS),
        param="version",
    )


#: The published versions that have a PAR sheet, sorted: every progressive table, Trips and the
#: Stud Bonus.
SHEET_VERSIONS: tuple[str, ...] = tuple(
    sorted(
        [
            *PROGRESSIVE_PAYTABLES,
            *(v for v, t in PAYTABLES.items() if t.name in ("uth_trips", "stud_bonus")),
        ]
    )
)
