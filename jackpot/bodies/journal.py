"""The journal: its transfers and events as listed, its query string, and its verification
(built by `jackpot.audit.verification`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import Cents, From, Id, Offset, Page, QueryId, To
from jackpot.models import AccountKind, TransferCode, VerificationStatus, VerificationTrigger


class EventRef(Body):
    chain: str
    sequence: Annotated[int, Field(ge=1)]
    kind: str
    hash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class JournalTransfer(Body):
    """One transfer: an amount from one account to another, the code saying why."""

    id: Id
    pool: Id
    code: TransferCode
    debit: AccountKind
    credit: AccountKind
    amount_cents: Annotated[int, Field(ge=1)]
    round: Id | None
    award: Id | None
    at: Instant
    event: EventRef


class JournalPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=500)]
    offset: Page
    results: list[JournalTransfer]


class BrokenAt(Body):
    chain: str
    sequence: int | None


class JournalReport(Body):
    """The journal recomputed: every chain's hashes and every pool's balances."""

    ok: bool
    events: Annotated[int, Field(ge=0)]
    transfers: Annotated[int, Field(ge=0)]
    chains: Annotated[int, Field(ge=0)]
    first_broken: BrokenAt | None
    problems: list[str] = Field(max_length=20)
    balances: dict[str, dict[AccountKind, Cents]] = Field(
        description="per pool id, each account's balance in cents"
    )


class VerificationRun(Body):
    """One run of the journal's verification: routine (from the newest checkpoint: the start-up
    gate, the scheduled reconciliation) or full (from the first event: daily, or asked for)."""

    id: Id
    full: bool = Field(description="from the first event; false: from the newest checkpoint")
    trigger: VerificationTrigger
    status: VerificationStatus
    requested_by: str | None = Field(description="who asked for it (a full run over the API)")
    created_at: Instant
    started_at: Instant | None
    finished_at: Instant | None
    events_total: Annotated[int, Field(ge=0)] | None = Field(
        description="a full run: about how many events it reads, when it was asked for"
    )
    events_checked: Annotated[int, Field(ge=0)] = Field(
        description="events verified up to where the run reached, since the first event (a "
        "routine run counts its checkpoint's too); while running, its last heartbeat"
    )
    transfers_checked: Annotated[int, Field(ge=0)]
    chains: Annotated[int, Field(ge=0)]
    started_from: Id | None = Field(description="the checkpoint it started from (null: genesis)")
    checkpoint: Id | None = Field(description="the checkpoint it stored, having passed")
    ok: bool | None = Field(description="the verdict, once done")
    first_broken: BrokenAt | None
    problem_count: Annotated[int, Field(ge=0)]
    problems: list[str] = Field(max_length=20, description="the first 20")
    failure: str | None = Field(description="why the run itself failed (status `failed`)")
    url: str = Field(description="this run (poll it)")


class JournalVerification(Body):
    """What the journal's verification last found, without reading the journal."""

    latest: VerificationRun | None = Field(description="the newest finished run, of either kind")
    latest_full: VerificationRun | None = Field(description="the newest finished full run")
    running: VerificationRun | None = Field(description="a full run queued or going on")


class JournalQuery(Query):
    pool: QueryId | None = None
    code: TransferCode | None = None
    round: Annotated[QueryId | None, Field(description="the round's database id")] = None
    from_: From = None
    to: To = None
    limit: Annotated[int, Field(ge=1, le=500, description="1 to 500 (default 100)"), DIGITS] = 100
    offset: Offset = 0
