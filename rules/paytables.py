"""Paytables as versioned data: the odds each box pays on each hand, by version.

A paytable is data, never a code branch: settling a box looks the player's hand category up in
the box's :class:`Paytable`; a category that is not in the table does not pay (the box loses or
pushes, as the game's rules say). Changing a payout means adding a new version to
:data:`PAYTABLES` / :data:`PROGRESSIVE_PAYTABLES` and pointing :data:`CURRENT` (or a pool's stored
version string) at it; a published version is never edited, so a settlement or a pool that names
a version can always be re-derived. How the API shows a table is the wire's business
(`tables.api.rules_bodies.paytables_of`, `jackpot.bodies.pools.progressive_paytable_of`), not the
engine's.

Invariants:

- Money is integer euro cents; no float is ever involved. ``Payout(n, d)`` pays ``n:d`` ("to 1" when
  ``d == 1``): the win on a stake is ``stake_cents * n // d``, i.e. rounded DOWN to the cent
  (3:2 on 125 cents pays 187).
- Payouts are positive and in lowest terms, so their text (``"3:2"``) is unique and stable.
- Every table is immutable (frozen dataclasses, read-only mappings) and keyed by ``version``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rules.errors import RulesError
from rules.hands import Category

__all__ = [
    "CURRENT",
    "PAYTABLES",
    "PROGRESSIVE_PAYTABLES",
    "Payout",
    "Paytable",
    "PaytableSet",
    "ProgressiveSchedule",
    "get_paytable",
    "get_progressive_paytable",
]


@dataclass(frozen=True, slots=True)
class Payout:
    """A payout of ``numerator:denominator``; ``Payout(3, 2).win_cents(125) == 187`` (rounded down).

    >>> str(Payout(3, 2)), str(Payout(500))
    ('3:2', '500:1')
    >>> Payout(3, 2).win_cents(125)
    187
    """

    numerator: int
    denominator: int = 1

    def __post_init__(self) -> None:
        for value in (self.numerator, self.denominator):
            # bool is an int subclass; True:1 is not a payout anyone meant to write.
            if type(value) is not int or value <= 0:
                raise ValueError(f"odds terms must be positive integers, got {value!r}")
        if math.gcd(self.numerator, self.denominator) != 1:
            # Lowest terms keep the rendering unique: 6:4 and 3:2 would be the same table.
            raise ValueError(f"odds {self.numerator}:{self.denominator} are not in lowest terms")

    def win_cents(self, stake_cents: int) -> int:
        """The win on ``stake_cents`` (stake not included), rounded down to the cent."""
        return stake_cents * self.numerator // self.denominator

    def __str__(self) -> str:
        return f"{self.numerator}:{self.denominator}"


@dataclass(frozen=True)
class Paytable:
    """One box's table: ``name`` says which box (``'uth_blind'``...), ``version`` which edition.

    ``odds`` maps the categories that pay to their :class:`Payout`; a category absent from it does
    not pay. The mapping is copied into a read-only, weakest-first mapping at construction.
    """

    name: str
    version: str
    odds: Mapping[Category, Payout]

    def __post_init__(self) -> None:
        ordered = dict(sorted(self.odds.items(), key=lambda item: item[0]))
        object.__setattr__(self, "odds", MappingProxyType(ordered))

    def pays(self, category: Category) -> Payout | None:
        """The odds for ``category``, or ``None`` when that category does not pay."""
        return self.odds.get(category)


@dataclass(frozen=True, slots=True)
class ProgressiveSchedule:
    """The progressive's awards: a share of the meter for a jackpot royal, fixed cents otherwise.

    ``jackpot_percent_bp`` is the share of the meter paid for a royal flush using at least one
    hole card, in basis points (10000 = 100%). Fixed awards and envy are paid by the house.
    """

    version: str
    jackpot_percent_bp: int = 10_000
    community_royal_cents: int = 500_000
    straight_flush_cents: int = 150_000
    four_of_a_kind_cents: int = 50_000
    full_house_cents: int = 5_000
    envy_cents: int = 50_000

    def __post_init__(self) -> None:
        if not 0 <= self.jackpot_percent_bp <= 10_000:
            raise ValueError(f"jackpot_percent_bp must be 0..10000, got {self.jackpot_percent_bp}")
        for name in (
            "community_royal_cents",
            "straight_flush_cents",
            "four_of_a_kind_cents",
            "full_house_cents",
            "envy_cents",
        ):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")

    def jackpot_award_cents(self, meter_cents: int) -> int:
        """The jackpot paid on a meter of ``meter_cents`` whole cents, rounded down."""
        return meter_cents * self.jackpot_percent_bp // 10_000


def _table(name: str, version: str, odds: Mapping[Category, Payout]) -> Paytable:
    return Paytable(name=name, version=version, odds=odds)


UTH_BLIND_2026_1 = _table(
    "uth_blind",
    "uth-blind/2026-1",
    {
        Category.STRAIGHT: Payout(1),
        Category.FLUSH: Payout(3, 2),
        Category.FULL_HOUSE: Payout(3),
        Category.FOUR_OF_A_KIND: Payout(10),
        Category.STRAIGHT_FLUSH: Payout(50),
        Category.ROYAL_FLUSH: Payout(500),
    },
)
UTH_TRIPS_2026_1 = _table(
    "uth_trips",
    "uth-trips/2026-1",
    {
        Category.THREE_OF_A_KIND: Payout(3),
        Category.STRAIGHT: Payout(4),
        Category.FLUSH: Payout(7),
        Category.FULL_HOUSE: Payout(8),
        Category.FOUR_OF_A_KIND: Payout(30),
        Category.STRAIGHT_FLUSH: Payout(40),
        Category.ROYAL_FLUSH: Payout(50),
    },
)
STUD_RAISE_2026_1 = _table(
    "stud_raise",
    "stud-raise/2026-1",
    {
        Category.PAIR: Payout(1),
        Category.TWO_PAIR: Payout(2),
        Category.THREE_OF_A_KIND: Payout(3),
        Category.STRAIGHT: Payout(4),
        Category.FLUSH: Payout(5),
        Category.FULL_HOUSE: Payout(7),
        Category.FOUR_OF_A_KIND: Payout(20),
        Category.STRAIGHT_FLUSH: Payout(50),
        Category.ROYAL_FLUSH: Payout(100),
    },
)
STUD_BONUS_2026_1 = _table(
    "stud_bonus",
    "stud-bonus/2026-1",
    {
        Category.FLUSH: Payout(100),
        Category.FULL_HOUSE: Payout(150),
        Category.FOUR_OF_A_KIND: Payout(1000),
        Category.STRAIGHT_FLUSH: Payout(2000),
        Category.ROYAL_FLUSH: Payout(5000),
    },
)
PROGRESSIVE_2026_1 = ProgressiveSchedule(version="uth-progressive/2026-1")

#: Every published box paytable, by version. Append new versions; never edit or remove one.
PAYTABLES: Mapping[str, Paytable] = MappingProxyType(
    {
        table.version: table
        for table in (UTH_BLIND_2026_1, UTH_TRIPS_2026_1, STUD_RAISE_2026_1, STUD_BONUS_2026_1)
    }
)
#: Every published progressive paytable, by version (a pool stores one of these keys).
PROGRESSIVE_PAYTABLES: Mapping[str, ProgressiveSchedule] = MappingProxyType(
    {PROGRESSIVE_2026_1.version: PROGRESSIVE_2026_1}
)

# The categories each box's table must cover, so that a wrong table cannot silently change a
# rule: the Raise always pays a player who beats a qualifying dealer with a pair or better, and
# the Blind/Bonus/Trips tables start exactly where the rules say the box starts paying.
_REQUIRED_CATEGORIES: Mapping[str, frozenset[Category]] = MappingProxyType(
    {
        "uth_blind": frozenset(c for c in Category if c >= Category.STRAIGHT),
        "uth_trips": frozenset(c for c in Category if c >= Category.THREE_OF_A_KIND),
        "stud_raise": frozenset(c for c in Category if c >= Category.PAIR),
        "stud_bonus": frozenset(c for c in Category if c >= Category.FLUSH),
    }
)


@dataclass(frozen=True, slots=True)
class PaytableSet:
    """The paytable in force for each box, as a settlement uses them.

    Construction checks each table is the right box's and covers exactly the categories the rules
    say the box pays on (e.g. the Blind pays from a straight up, never on a pair).
    """

    uth_blind: Paytable = UTH_BLIND_2026_1
    uth_trips: Paytable = UTH_TRIPS_2026_1
    stud_raise: Paytable = STUD_RAISE_2026_1
    stud_bonus: Paytable = STUD_BONUS_2026_1
    progressive: ProgressiveSchedule = PROGRESSIVE_2026_1

    def __post_init__(self) -> None:
        for box, required in _REQUIRED_CATEGORIES.items():
            table: Paytable = getattr(self, box)
            if table.name != box:
                raise ValueError(f"{box} must be a {box!r} paytable, got {table.name!r}")
            if frozenset(table.odds) != required:
                raise ValueError(
                    f"paytable {table.version} must pay on exactly "
                    f"{sorted(c.label for c in required)}"
                )

    def versions(self) -> dict[str, str]:
        """The version string of each table, by box name (``'progressive'`` included)."""
        return {
            "uth_blind": self.uth_blind.version,
            "uth_trips": self.uth_trips.version,
            "stud_raise": self.stud_raise.version,
            "stud_bonus": self.stud_bonus.version,
            "progressive": self.progressive.version,
        }


#: The tables in force. Settlement functions default to it.
CURRENT = PaytableSet()


def get_paytable(version: str, *, param: str = "paytable") -> Paytable:
    """The published box paytable ``version``; unknown -> ``RulesError('invalid_parameter')``.

    >>> get_paytable("uth-blind/2026-1").pays(Category.FLUSH)
    Payout(numerator=3, denominator=2)
    """
    try:
        return PAYTABLES[version]
    except (KeyError, TypeError):
        raise RulesError(
            "invalid_parameter",
            f"unknown paytable version {version!r}; known: {', '.join(sorted(PAYTABLES))}",
            param=param,
        ) from None


def get_progressive_paytable(version: str, *, param: str = "paytable") -> ProgressiveSchedule:
    """The published progressive paytable ``version`` (as a pool stores it); unknown -> error."""
    try:
        return PROGRESSIVE_PAYTABLES[version]
    except (KeyError, TypeError):
        raise RulesError(
            "invalid_parameter",
            f"unknown progressive paytable version {version!r}; "
            f"known: {', '.join(sorted(PROGRESSIVE_PAYTABLES))}",
            param=param,
        ) from None
