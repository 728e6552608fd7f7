"""What a round step returns: which step it was, the answer it gave, and whether that answer is
the stored first one of an earlier request (a replay) rather than this request's own.

No HTTP here: the view chooses the status from the step (`RoundOpened` is a creation, the others
are not) and renders the answer. The answer is the wire JSON the step stored with its rows, in
its transaction, so that a replay gives the terminal exactly the first answer; the step renders
it once (`tables.rounds.answers`) and hands it over here rather than the view rendering it again.
What is hashed into the audit chain is not taken from it (`answers.opened_event` and the others
are built from the step's domain values), so the wire's shape never reaches the chain.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A JSON object as the API answers it.
JsonObject = dict[str, object]


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
