"""The words every round shape is made of: the round id (and its reader for a URL path), the seat
number, card texts and card lists, stakes, and the hand categories.

Invariants: a round id has one pattern (ROUND_ID_PATTERN), in a body as in a path (`round_id_of`);
a card list refuses a card twice (`uniqueItems`) and a wrong count with `wrong_card_count`; a
stake is whole cents within the engine's MAX_BET_CENTS.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from core.codes import ErrorCode
from core.wire import Refusal
from rules.boxes import MAX_BET_CENTS
from rules.cards import CARD_PATTERN
from rules.errors import RulesError

ROUND_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$"
_ROUND_ID = re.compile(ROUND_ID_PATTERN)
MAXSEATS = 7
MAX_REASON = 200

# --- the vocabulary ---------------------------------------------------------------------------

RoundId = Annotated[
    str,
    Field(
        pattern=ROUND_ID_PATTERN,
        description="1 to 64 characters: letters, digits and . _ : - (a letter or digit first)",
    ),
    Refusal(ErrorCode.INVALID_ROUND_ID),
]
SeatNumber = Annotated[int, Field(ge=1, le=MAXSEATS), Refusal(ErrorCode.INVALID_SEAT)]
CardText = Annotated[
    str,
    Field(pattern=CARD_PATTERN, description="rank 2-9 T J Q K A, then suit c d h s"),
    Refusal(ErrorCode.INVALID_CARD),
]
CARD_COUNT = Refusal(
    ErrorCode.INVALID_CARD,
    too_short=ErrorCode.WRONG_CARD_COUNT,
    too_long=ErrorCode.WRONG_CARD_COUNT,
)
#: No card twice in one list (uniqueItems; the reader's `duplicate_card` names the second).
DISTINCT = Field(json_schema_extra={"uniqueItems": True})
TwoCards = Annotated[list[CardText], Field(min_length=2, max_length=2), DISTINCT, CARD_COUNT]
FiveCards = Annotated[list[CardText], Field(min_length=5, max_length=5), DISTINCT, CARD_COUNT]
BET = Refusal(ErrorCode.INVALID_BET)
RequiredStake = Annotated[int, Field(ge=1, le=MAX_BET_CENTS), BET]
OptionalStake = Annotated[int, Field(ge=0, le=MAX_BET_CENTS), BET]
SEATS = Refusal(ErrorCode.INVALID_REQUEST, too_long=ErrorCode.TOO_MANY_SEATS)
CategoryName = Literal[
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "royal_flush",
]


def round_id_of(value: object, *, param: str = "round_id") -> str:
    """A round id from a path: the same pattern as the bodies' `round_id`."""
    if not isinstance(value, str) or not _ROUND_ID.fullmatch(value):
        raise RulesError(
            "invalid_round_id",
            "round_id must be 1 to 64 characters: letters, digits and . _ : - "
            f"(starting with a letter or digit), got {value!r}",
            param=param,
        )
    return value
