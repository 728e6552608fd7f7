"""Playing cards: the 52-card deck, strict parsing of card text, distinctness checks.

Invariants:

- A card's text is exactly two characters: a rank ``2 3 4 5 6 7 8 9 T J Q K A`` (uppercase
  letters only) followed by a suit ``c d h s`` (lowercase only). Nothing else is a card: no
  ``10``, no lowercase ranks, no uppercase suits, no surrounding spaces.
- ``Card.index`` numbers the deck 0..51 as ``(rank - 2) * 4 + suit position`` (c=0, d=1, h=2,
  s=3), so ``DECK[card.index] == card`` and index order equals ``Card`` ordering (rank first,
  then suit). The hand evaluator works on these indices.
- A card appears at most once in a round; :func:`parse_cards` and :func:`ensure_distinct` reject
  duplicates with the path of the second occurrence as ``param``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from rules.errors import RulesError

__all__ = [
    "CARD_PATTERN",
    "DECK",
    "Card",
    "Rank",
    "Suit",
    "ensure_distinct",
    "parse_card",
    "parse_cards",
]

_RANK_SYMBOLS = "23456789TJQKA"
_SUIT_SYMBOLS = "cdhs"
#: A card's text as the API writes it, a rank symbol then a suit symbol: the wire's pattern for
#: every card field (tests/rules/test_cards.py: exactly the 52 cards' texts match it).
CARD_PATTERN = r"^[2-9TJQKA][cdhs]$"


class Rank(IntEnum):
    """A card rank; the value is the rank's strength with the ace high (2..14)."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        """The rank's character in card text.

        >>> Rank.TEN.symbol, Rank.ACE.symbol, Rank.SEVEN.symbol
        ('T', 'A', '7')
        """
        return _RANK_SYMBOLS[self - 2]


class Suit(StrEnum):
    """A card suit; the value is the suit's character in card text."""

    CLUBS = "c"
    DIAMONDS = "d"
    HEARTS = "h"
    SPADES = "s"


# Position of each suit in the deck numbering (c=0, d=1, h=2, s=3).
_SUIT_POSITION: dict[Suit, int] = {suit: position for position, suit in enumerate(Suit)}


@dataclass(frozen=True, slots=True, order=True, repr=False)
class Card:
    """One playing card. Ordered by rank, then suit (c < d < h < s), as deck indices are.

    >>> card = parse_card("As")
    >>> str(card), card.index, Card.from_index(card.index) == card
    ('As', 51, True)
    >>> Card(Rank.TWO, Suit.CLUBS) < Card(Rank.TWO, Suit.DIAMONDS) < Card(Rank.THREE, Suit.CLUBS)
    True
    """

    rank: Rank
    suit: Suit

    def __str__(self) -> str:
        return _RANK_SYMBOLS[self.rank - 2] + self.suit.value

    def __repr__(self) -> str:
        return f"parse_card({str(self)!r})"

    @property
    def index(self) -> int:
        """This card's position 0..51 in :data:`DECK`: ``(rank - 2) * 4 + suit position``."""
        return (self.rank - 2) * 4 + _SUIT_POSITION[self.suit]

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card at ``index`` (0..51) in :data:`DECK`.

        >>> str(Card.from_index(0)), str(Card.from_index(51))
        ('2c', 'As')
        """
        if not 0 <= index < 52:
            raise ValueError(f"{index!r} is not a card index: expected 0..51")
        return DECK[index]


DECK: tuple[Card, ...] = tuple(Card(rank, suit) for rank in Rank for suit in Suit)
"""The 52 cards in index order: 2c 2d 2h 2s 3c ... As."""

# Exact text of every card -> the shared Card instance; parsing is one dictionary lookup.
_CARD_BY_TEXT: dict[str, Card] = {str(card): card for card in DECK}

_CARD_SYNTAX = "expected a rank 2-9, T, J, Q, K or A followed by a suit c, d, h or s"


def parse_card(text: str, *, param: str = "card") -> Card:
    """Parse one card from its two-character text, strictly.

    >>> parse_card("Td")
    parse_card('Td')
    >>> parse_card("1x", param="board[0]")
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: '1x' is not a card: expected a rank 2-9, T, J, Q, K or A \
followed by a suit c, d, h or s
    """
    card = _CARD_BY_TEXT.get(text)
    if card is not None:
        return card
    raise RulesError("invalid_card", f"{text!r} is not a card: {_CARD_SYNTAX}", param=param)


def _describe_count(count: int | tuple[int, int]) -> str:
    if isinstance(count, int):
        return f"{count} card" if count == 1 else f"{count} cards"
    low, high = count
    return f"{low} to {high} cards"


def parse_cards(
    texts: Sequence[str], *, param: str, count: int | tuple[int, int]
) -> tuple[Card, ...]:
    """Cards from their texts, checking the count and that no card repeats (the notation of a
    hand; the API's readers check a body's shape before).

    ``count`` is an exact number of cards or an inclusive ``(low, high)`` range. Each card is
    parsed with ``param=f"{param}[{i}]"``; a repeated card is reported at its second position.

    >>> [str(card) for card in parse_cards(["As", "Kd"], param="hole", count=2)]
    ['As', 'Kd']
    >>> parse_cards(["As"], param="hole", count=2)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: hole must hold 2 cards, got 1
    >>> parse_cards(["As", "As"], param="hole", count=2)
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: card As appears twice: in hole[0] and hole[1]
    """
    expected = _describe_count(count)
    low, high = (count, count) if isinstance(count, int) else count
    if not low <= len(texts) <= high:
        raise RulesError(
            "wrong_card_count",
            f"{param} must hold {expected}, got {len(texts)}",
            param=param,
        )
    cards = tuple(
        parse_card(text, param=f"{param}[{position}]") for position, text in enumerate(texts)
    )
    ensure_distinct({param: cards})
    return cards


def ensure_distinct(groups: Mapping[str, Sequence[Card]]) -> None:
    """Check that no card appears twice across all groups (board, dealer, every seat).

    Groups are scanned in mapping order, cards in list order; the error's ``param`` is the
    path of the second occurrence.

    >>> ace, king = parse_card("Ah"), parse_card("Kd")
    >>> ensure_distinct({"dealer": [king, ace], "seats[1].cards": [ace]})
    Traceback (most recent call last):
    ...
    rules.errors.RulesError: card Ah appears twice: in dealer[1] and seats[1].cards[0]
    """
    seen: dict[Card, str] = {}
    for name, cards in groups.items():
        for position, card in enumerate(cards):
            where = f"{name}[{position}]"
            first = seen.setdefault(card, where)
            if first is not where:
                raise RulesError(
                    "duplicate_card",
                    f"card {card} appears twice: in {first} and {where}",
                    param=where,
                )
