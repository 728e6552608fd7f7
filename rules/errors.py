"""The single error type of the rules engine.

Every rejection of bad input by ``rules`` raises :class:`RulesError`, carrying a
machine-readable ``code``, an exact human message and the ``param`` (the input field at fault,
as a dotted/indexed path such as ``'seats[2].cards[1]'``), so an API layer can turn it into a
400 response ``{"error": {"type", "code", "message", "param"}}`` without parsing text.

Codes used across the engine:

- ``invalid_card``: a card string is not two characters rank+suit (``As``, ``Td``, ``7h``).
- ``duplicate_card``: a card appears twice in a round (board, dealer and all seats together).
- ``wrong_card_count``: a hand or board has the wrong number of cards.
- ``invalid_decision``: a player decision the game rules do not allow.
- ``invalid_bet``: a bet amount or combination the game rules do not allow.
- ``invalid_parameter``: an argument out of its range (an unknown paytable, a negative meter).

The engine reads no JSON: its inputs are typed values built by the API's readers
(``tables.bodies``), which refuse what is not of the declared shape before the engine sees it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RulesCode", "RulesError"]


class RulesCode(StrEnum):
    """The engine's codes: a subset of the API's registry, ``core.codes.ErrorCode``."""

    INVALID_CARD = "invalid_card"
    DUPLICATE_CARD = "duplicate_card"
    WRONG_CARD_COUNT = "wrong_card_count"
    INVALID_DECISION = "invalid_decision"
    INVALID_BET = "invalid_bet"
    INVALID_PARAMETER = "invalid_parameter"


class RulesError(ValueError):
    """A rule was broken by the input.

    ``code`` is the machine code, ``message`` the exact human message and ``param`` the input
    field at fault (dotted/indexed path like ``'seats[2].cards[1]'``) or ``None``.

    >>> err = RulesError("invalid_card", "'1x' is not a card", param="board[0]")
    >>> (err.code, err.param, str(err))
    ('invalid_card', 'board[0]', "'1x' is not a card")
    """

    code: str
    message: str
    param: str | None

    def __init__(self, code: str, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param

    def __repr__(self) -> str:
        return f"RulesError({self.code!r}, {self.message!r}, param={self.param!r})"
