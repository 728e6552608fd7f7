"""What a round step writes with its event (`Written`) and what it returns (`RoundOpened`,
`RoundSettled`, `RoundVoided`): the answer it gave, and whether that is the stored first answer
of an earlier request (a replay).

Invariants: no HTTP here (the view chooses the status and renders the answer); the answer is the
wire JSON stored with the step's rows, so a replay gives exactly the first answer; the event's
payload is never taken from it (`tables.rounds.answers` builds both from the domain values).
"""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.money.rows import RowWrite

#: A JSON object as the API answers it.
JsonObject = dict[str, object]


@dataclass(frozen=True, slots=True)
class Written:
    """What a step writes with its audit event: the event's `payload`, the rows written in the
    event's statement (`also`: the round's answer, the Idempotency-Key's record) and the
    `answer` they store."""

    payload: JsonObject
    also: tuple[RowWrite, ...]
    answer: JsonObject


@dataclass(frozen=True, slots=True)
class StepResult:
    """A round step's outcome: `answer` as stored for replays; `replayed` when it is the stored
    first answer of an earlier request (by round id or by Idempotency-Key)."""

    answer: JsonObject
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class RoundOpened(StepResult):
    """A round's bets locked (`tables.rounds.opening`)."""


@dataclass(frozen=True, slots=True)
class RoundSettled(StepResult):
    """A round's seats and progressive awards settled (`tables.rounds.settlement`)."""


@dataclass(frozen=True, slots=True)
class RoundVoided(StepResult):
    """A round voided and its progressive stakes refunded (`tables.rounds.voiding`)."""
