"""A pool's documented corrections (`jackpot.pools.corrections`): the proposal, the correction
as the API shows it, its page and its query string. Approved, rejected and withdrawn with the
changes' bodies (`jackpot.bodies.changes`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from core.codes import ErrorCode
from core.wire import DIGITS, Body, Instant, NonBlank, Query, Refusal
from jackpot.bodies.common import Cents, Id, Note, Offset, Page
from jackpot.models import ChangeStatus

Target = Literal["meter", "reserve", "award"]
#: The regulator's approval reference: not blank, at most 100 characters.
Reference = Annotated[NonBlank, Field(max_length=100), Refusal(ErrorCode.INVALID_TEXT)]
SignedCents = Annotated[
    int,
    Field(
        ge=-(2**62),
        le=2**62,
        description="signed cents, not zero: + raises the target, - lowers it",
    ),
]


class CorrectionProposal(Body):
    """A correction proposed by a supervisor or a manager; another manager approves it
    (`POST .../corrections/{change}/approve`)."""

    target: Target
    award: Id | None = Field(default=None, description="the award corrected (target award)")
    amount_cents: SignedCents
    reason: Note
    reference: Reference = Field(description="the regulator's approval reference")
    evidence: Note = Field(description="what proves it: a ticket, a file, a report's reference")


class CorrectionBody(Body):
    """A correction and what became of it: what it corrects and by how much, why, the
    regulator's reference and the evidence, the figures when it was proposed (`before`), who
    proposed and who decided, when (UTC)."""

    model_config = ConfigDict(title="Correction")  # its name in the schema (core.openapi)

    id: Id
    pool: Id
    status: ChangeStatus
    target: Target
    award: Id | None
    amount_cents: SignedCents
    reason: str
    reference: str
    evidence: str
    before: dict[str, Cents] = Field(
        description="meter_cents, reserve_cents (and award_due_cents) when it was proposed"
    )
    proposed_by: str
    proposed_at: Instant
    decided_by: str | None = Field(description="who approved, rejected or withdrew it")
    decided_at: Instant | None
    decision_note: str


class CorrectionPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[CorrectionBody]


class CorrectionQuery(Query):
    status: ChangeStatus | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0
