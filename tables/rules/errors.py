"""The single error type of the rules engine.

Every rejection of bad input by ``tables.rules`` raises :class:`RulesError`, carrying a
machine-readable ``code``, an exact human message and the ``param`` (the input field at fault,
as a dotted/indexed path such as ``'seats[2].cards[1]'``), so an API layer can turn it into a
400 response ``{"error": {"type", "code", "message", "param"}}`` without parsing text.

Codes used across the engine:

- ``invalid_card``: a card string is not two characters rank+suit (``As``, ``Td``, ``7h``).
- ``duplicate_card``: a card appears twice in a round (board, dealer and all seats together).
- ``wrong_card_count``: a hand or board has the wrong number of cards.
- ``invalid_decision``: a player decision the game rules do not allow.
- ``invalid_bet``: a bet amount or combination the game rules do not allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["RulesError", "read_object"]


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


def read_object(
    value: object,
    *,
    param: str | None,
    fields: Sequence[str],
    example: str,
    code: str,
    unknown_code: str | None = None,
) -> Mapping[str, object]:
    """``value`` as a JSON object whose keys are all among ``fields``, or a ``RulesError``.

    ``code`` names a value that is not an object, ``unknown_code`` (default ``code``) an unknown
    field; ``param`` is the object's path (``None`` for a request body).

    >>> read_object([1], param="bets", fields=("ante_cents",), example="{...}", code="invalid_bet")
    Traceback (most recent call last):
    ...
    tables.rules.errors.RulesError: bets must be an object such as {...}, got [1]
    """
    where = param or "the body"
    if not isinstance(value, Mapping):
        raise RulesError(
            code, f"{where} must be an object such as {example}, got {value!r}", param=param
        )
    for key in value:
        if key not in fields:
            raise RulesError(
                unknown_code or code,
                f"unknown field {key!r} in {where}; expected {', '.join(fields)}",
                param=f"{param}.{key}" if param else str(key),
            )
    return value
