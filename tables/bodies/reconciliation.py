"""The reconciliation's reports (`tables.audit.reconciliation`): a run's figures for each pool, the
first chain that broke, the page of runs.

Invariant: `problems` holds at most the first 100 found, `problem_count` counts them all.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import Offset
from jackpot.models import AccountKind

# --- reconciliation reports (tables.audit.reconciliation)
# ---------------------------------------------


class ReconciliationQuery(Query):
    ok: Annotated[bool | None, Field(description="true: only ok runs; false: only failed")] = None
    daily: Annotated[
        bool | None, Field(description="true: only the daily reports; false: the periodic ones")
    ] = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class ReconciliationPool(Body):
    """A pool's figures as the run found them: `expected_units` is the meter identity's
    (the pool report's `meter_identity`); `identity` is `not_applicable` for a pool whose stake
    or meter share was changed (the identity assumes they never were)."""

    pool: int
    meter_cents: int
    meter_units: int
    expected_units: int
    identity: Literal["holds", "broken", "not_applicable"]
    balances: dict[AccountKind, int]


class ReconciliationBroken(Body):
    chain: str
    sequence: int | None


class ReconciliationBody(Body):
    """One reconciliation run's report: every pool recomputed from the journal, the chains (and
    their anchors) verified, each pool's meter identity checked. `problems` are the first 100,
    in the order found; `problem_count` counts them all; `first_broken` is the first chain that
    did not verify and the sequence where it broke."""

    model_config = ConfigDict(title="Reconciliation")  # its name in the schema (core.openapi)

    id: Annotated[int, Field(ge=1)]
    ok: bool
    daily: bool
    run_key: str | None = Field(
        description="periodic:<task id> or daily:<UTC date> for a scheduled run; null by hand"
    )
    started_at: Instant
    finished_at: Instant
    chains: Annotated[int, Field(ge=0)]
    events: Annotated[int, Field(ge=0)]
    transfers: Annotated[int, Field(ge=0)]
    pool_count: Annotated[int, Field(ge=0)]
    anchors: Annotated[int, Field(ge=0, description="anchor files checked (JOURNAL_ANCHOR_DIR)")]
    first_broken: ReconciliationBroken | None
    problem_count: Annotated[int, Field(ge=0)]
    problems: list[str] = Field(max_length=100)
    pools: list[ReconciliationPool]


class ReconciliationPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Annotated[int, Field(ge=0)]
    results: list[ReconciliationBody]
