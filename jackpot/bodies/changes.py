"""A pool's parameter changes (`jackpot.pools.parameters`), their steps and query string,
and a pool's status changes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from core.wire import DIGITS, Body, Instant, NonBlank, Query, TimeText
from jackpot.bodies.common import Id, Note, Offset, Page, SecondPersonCode
from jackpot.models import ChangeStatus, PoolStatus


class PoolParameters(Body):
    """The parameters a proposal sets: each left out (or null) stays as it is."""

    name: Annotated[NonBlank, Field(max_length=80)] | None = None
    stake_cents: Annotated[int, Field(ge=1, le=2_147_483_647)] | None = None
    meter_share_bp: Annotated[int, Field(ge=0, le=10_000)] | None = None
    reserve_share_bp: Annotated[int, Field(ge=0, le=10_000)] | None = None
    seed_cents: Annotated[int, Field(ge=0, le=2**62)] | None = None
    verification_threshold_cents: Annotated[int, Field(ge=0, le=2**62)] | None = None
    paytable_version: Annotated[NonBlank, Field(max_length=40)] | None = None
    surveillance_required: bool | None = None


class ChangeProposal(Body):
    """A proposal: the new values and why. Another admin approves it."""

    changes: PoolParameters
    reason: Note


class ChangeApproval(SecondPersonCode):
    """An approval, with an optional note, and the approver's fresh code."""

    note: Note | None = None


class ChangeWithdrawal(Body):
    """A proposer's withdrawal, with an optional note."""

    note: Note | None = None


class ChangeRejection(Body):
    """A rejection says why."""

    note: Note


ParameterValue = bool | int | str | None


class ParameterChangeBody(Body):
    """A proposed two-person change and what became of it: the new values, the values when it was
    proposed (`before`), who proposed it and who decided, when (UTC). `kind` `pool.parameters`:
    a pool's parameters; `table.move`: a table linked to `pool` (`changes.table`, `changes.pool`;
    null: unlinked); `terminal.issue`: a terminal token for `changes.table` (`changes.name`,
    `changes.revoke_others`), made when another admin approves and shown to that admin only;
    `pool.replace`: the pool replaced by a new one, `changes` its name and terms, `before` the
    old pool's status and terms."""

    model_config = ConfigDict(title="ParameterChange")  # its name in the schema (core.openapi)

    id: Id
    kind: Literal["pool.parameters", "pool.stop", "pool.replace", "table.move", "terminal.issue"]
    pool: Id | None
    status: ChangeStatus
    changes: dict[str, ParameterValue]
    before: dict[str, ParameterValue]
    reason: str
    proposed_by: str
    proposed_at: Instant
    decided_by: str | None = Field(description="who approved, rejected or withdrew it")
    decided_at: Instant | None
    decision_note: str


class PoolStatusChange(Body):
    """A pool suspended (a technical fault) or resumed: why."""

    reason: Note


class PoolLife(Body):
    """A pool's status: what it is, why and since when (UTC; null: active since its creation)."""

    pool: Id
    status: PoolStatus
    reason: str
    since: Instant | None


class PoolStopProposal(Body):
    """A pool stopped for good, proposed by one admin, approved by another: where its liability
    (meter and reserve) goes: `pool` (another active pool, `to_pool`) or `orphan` (the stopped
    pool's orphan account, unclaimed progressive money)."""

    to: Literal["pool", "orphan"]
    to_pool: Id | None = None
    reason: Note
    # The notice it calls for (jackpot.pools.notices, compliance 57).
    voluntary: bool = Field(
        description="true: the club's decision, told to the minister, effective_at 15 days on at "
        "least; false: a fault, told to the police, effective at its approval"
    )
    effective_at: TimeText | None = Field(
        default=None, description="a voluntary stop's date, at least 15 days after its proposal"
    )


class NewPoolTerms(Body):
    """A replacing pool's name and terms: each term left out (or null) is the old pool's, and at
    least one increment term differs from it; its threshold and surveillance likewise."""

    name: Annotated[NonBlank, Field(max_length=80)]
    stake_cents: Annotated[int, Field(ge=1, le=2_147_483_647)] | None = None
    meter_share_bp: Annotated[int, Field(ge=0, le=10_000)] | None = None
    reserve_share_bp: Annotated[int, Field(ge=0, le=10_000)] | None = None
    seed_cents: Annotated[int, Field(ge=1, le=2**62)] | None = None
    paytable_version: Annotated[NonBlank, Field(max_length=40)] | None = None
    verification_threshold_cents: Annotated[int, Field(ge=0, le=2**62)] | None = None
    surveillance_required: bool | None = None


class PoolReplaceProposal(Body):
    """A pool's replacement, proposed by one admin, approved by another (`POST
    .../changes/{change}/approve`): the new pool's name and terms, and why. The old pool stops,
    its increment (meter less its seed) and reserve move to the new pool, its tables too."""

    changes: NewPoolTerms
    reason: Note


class ParameterChangePage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[ParameterChangeBody]


class ParameterChangeQuery(Query):
    status: ChangeStatus | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0
