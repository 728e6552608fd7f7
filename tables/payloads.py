"""Strict readers for what a terminal posts: the open (bets) and the result (cards, decisions).

They turn untrusted JSON into frozen values or raise `RulesError` naming the field path
(`seats[2].bets.ante_cents`) and the reason, so a bad request is refused before anything is
written. Unknown fields are refused too: a terminal that sends them is misconfigured. Checks that
need the stored round (the result's seats equal the open's seats) belong to the services.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tables.models import Game
from tables.rules.cards import Card, ensure_distinct, parse_cards
from tables.rules.errors import RulesError, read_object
from tables.rules.stud import StudBets, StudDecision, parse_stud_decision
from tables.rules.uth import UthBets, UthDecision, parse_uth_decision

ROUND_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
MAX_REASON = 200


@dataclass(frozen=True, slots=True)
class SeatBets:
    seat: int
    bets: UthBets | StudBets


@dataclass(frozen=True, slots=True)
class OpenRequest:
    round_id: str
    seats: tuple[SeatBets, ...]


@dataclass(frozen=True, slots=True)
class SeatPlay:
    seat: int
    cards: tuple[Card, ...]
    decision: UthDecision | StudDecision


@dataclass(frozen=True, slots=True)
class ResultRequest:
    board: tuple[Card, ...]  # empty for Stud Poker
    dealer: tuple[Card, ...]
    seats: tuple[SeatPlay, ...]


def _object(
    value: object, param: str | None, fields: Sequence[str], example: str
) -> Mapping[str, Any]:
    return read_object(
        value,
        param=param,
        fields=fields,
        example=example,
        code="invalid_request",
        unknown_code="unknown_field",
    )


def _seat_number(value: object, *, param: str, seats: int) -> int:
    if type(value) is not int or not 1 <= value <= seats:
        raise RulesError(
            "invalid_seat", f"seat must be an integer from 1 to {seats}, got {value!r}", param=param
        )
    return value


def _seat_list(value: object, *, param: str, seats: int) -> list[object]:
    if not isinstance(value, list) or not value:
        raise RulesError("invalid_request", "seats must be a non-empty list", param=param)
    if len(value) > seats:
        raise RulesError(
            "too_many_seats", f"this table has {seats} seats, got {len(value)}", param=param
        )
    return value


def _check_unique_seats(numbers: list[int]) -> None:
    seen: set[int] = set()
    for index, number in enumerate(numbers):
        if number in seen:
            raise RulesError(
                "duplicate_seat", f"seat {number} appears twice", param=f"seats[{index}].seat"
            )
        seen.add(number)


def round_id_of(value: object, *, param: str = "round_id") -> str:
    if not isinstance(value, str) or not ROUND_ID.fullmatch(value):
        raise RulesError(
            "invalid_round_id",
            "round_id must be 1 to 64 characters: letters, digits and . _ : - "
            f"(starting with a letter or digit), got {value!r}",
            param=param,
        )
    return value


def parse_open(
    body: object, *, game: Game, seats: int, progressive_stake_cents: int | None
) -> OpenRequest:
    """Read an open: `{"round_id", "seats": [{"seat", "bets": {...}}]}`.

    `progressive_stake_cents` is the pool's stake, or None when the table feeds no pool (then no
    progressive bet is accepted).
    """
    root = _object(body, None, ("round_id", "seats"), '{"round_id": "r-1", "seats": [...]}')
    round_id = round_id_of(root.get("round_id"))
    entries = _seat_list(root.get("seats"), param="seats", seats=seats)
    parsed: list[SeatBets] = []
    for index, entry in enumerate(entries):
        param = f"seats[{index}]"
        seat = _object(entry, param, ("seat", "bets"), '{"seat": 1, "bets": {...}}')
        number = _seat_number(seat.get("seat"), param=f"{param}.seat", seats=seats)
        bets: UthBets | StudBets
        if game == Game.UTH:
            bets = UthBets.from_mapping(
                seat.get("bets"),
                progressive_stake_cents=progressive_stake_cents or 0,
                param=f"{param}.bets",
            )
            if progressive_stake_cents is None and bets.progressive_cents:
                raise RulesError(
                    "invalid_bet",
                    "this table is linked to no progressive pool",
                    param=f"{param}.bets.progressive_cents",
                )
        else:
            bets = StudBets.from_mapping(seat.get("bets"), param=f"{param}.bets")
        parsed.append(SeatBets(number, bets))
    _check_unique_seats([seat.seat for seat in parsed])
    return OpenRequest(round_id=round_id, seats=tuple(parsed))


def parse_result(body: object, *, game: Game, seats: int) -> ResultRequest:
    """Read a result. UTH: `{"board": [5], "dealer": [2], "seats": [{"seat", "cards": [2],
    "decision"}]}`; Stud: `{"dealer": [5], "seats": [{"seat", "cards": [5], "decision"}]}`.
    Every card of the round must be distinct, a Stud draw card included."""
    uth = game == Game.UTH
    fields = ("board", "dealer", "seats") if uth else ("dealer", "seats")
    root = _object(body, None, fields, '{"dealer": [...], "seats": [...]}')
    board = parse_cards(root.get("board"), param="board", count=5) if uth else ()
    dealer = parse_cards(root.get("dealer"), param="dealer", count=2 if uth else 5)
    entries = _seat_list(root.get("seats"), param="seats", seats=seats)
    plays: list[SeatPlay] = []
    groups: dict[str, Sequence[Card]] = {"board": board, "dealer": dealer}
    for index, entry in enumerate(entries):
        param = f"seats[{index}]"
        seat = _object(entry, param, ("seat", "cards", "decision"), '{"seat": 1, "cards": [...]}')
        number = _seat_number(seat.get("seat"), param=f"{param}.seat", seats=seats)
        cards = parse_cards(seat.get("cards"), param=f"{param}.cards", count=2 if uth else 5)
        decision: UthDecision | StudDecision
        if uth:
            decision = parse_uth_decision(seat.get("decision"), param=f"{param}.decision")
        else:
            decision = parse_stud_decision(seat.get("decision"), param=f"{param}.decision")
        groups[f"{param}.cards"] = cards
        if isinstance(decision, StudDecision) and decision.draw is not None:
            groups[f"{param}.decision.draw"] = (decision.draw,)
        plays.append(SeatPlay(number, cards, decision))
    _check_unique_seats([play.seat for play in plays])
    ensure_distinct(groups)
    return ResultRequest(board=board, dealer=dealer, seats=tuple(plays))


def parse_void(body: object) -> str:
    root = _object(body, None, ("reason",), '{"reason": "misdeal"}')
    reason = root.get("reason")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise RulesError(
            "invalid_reason",
            f"reason must be a non-empty text of at most {MAX_REASON} characters",
            param="reason",
        )
    return reason.strip()
