"""What every wire shape of the progressive is made of: money, ids, pages, a note, the
second person's code, an enum sent as text, and the query strings' ids, offsets and times."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.codes import ErrorCode
from core.wire import DIGITS, Body, Moment, NonBlank, Refusal
from rules.cards import CARD_PATTERN

MAX_TEXT = 500  # a note's or a reason's characters

# An enum in a JSON body is its value as text (strict models would want the enum object itself).
ENUM_TEXT = Field(strict=False)

Cents = int  # integer euro cents, everywhere
Id = Annotated[int, Field(ge=1)]
Page = Annotated[int, Field(ge=0)]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
#: A card as an award records and answers it (a card a terminal sends is tables' `CardText`).
RecordedCard = Annotated[str, Field(pattern=CARD_PATTERN)]

#: A note or a reason: not blank, at most MAX_TEXT characters.
Note = Annotated[NonBlank, Field(max_length=MAX_TEXT), Refusal(ErrorCode.INVALID_TEXT)]
OptionalNote = Note | None


#: The second person's fresh code at a two-person step (`jackpot.staff.second_factor.present`).
SecondFactorCode = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        # No NUL: the JSON parser refuses it in any text (core.parsers), as NonBlank says too.
        pattern=r"^[^\u0000]+$",
        description="A fresh code of the second person's authenticator (or a recovery code): "
        "required wherever staff sign in with a second factor (always in production), since "
        "a session or a staff token never proves who is at the screen at this step; a code "
        "used already (the sign-in's) is refused",
    ),
]


class SecondPersonCode(Body):
    """What the second person of a two-person step sends to prove presence."""

    second_factor_code: SecondFactorCode | None = None


class NoBody(Body):
    """An empty object (or no body at all)."""


QueryId = Annotated[int, Field(ge=0, le=2**62), DIGITS]
Offset = Annotated[int, Field(ge=0, le=2**62, description="default 0"), DIGITS]
From = Annotated[Moment | None, Field(alias="from", description="ISO 8601 time, included")]
To = Annotated[Moment | None, Field(description="ISO 8601 time, excluded")]
