"""Notices to the authorities and the register of orphans (`jackpot.pools.notices`,
`jackpot.pools.orphans`): as the API shows them, their queries, a notice's sending and an
orphans' recovery proposed."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from core.wire import DIGITS, Body, Instant, NonBlank, Query, TimeText
from jackpot.bodies.common import Cents, Id, Note, Offset, Page
from jackpot.models import Addressee, ChangeStatus, NoticeCause

Channel = Literal["letter", "email", "fax", "hand", "phone"]


class NoticeBody(Body):
    """A notice: to whom, why, by when, its text; who sent it, when and how, as its authentic
    journal event says (null: unsent); when it was reported overdue (SE22)."""

    model_config = ConfigDict(title="Notice")

    id: Id
    pool: Id
    change: Id | None = Field(description="the stop it announces (null: a suspension)")
    cause: NoticeCause
    addressee: Addressee
    text: str
    created_at: Instant
    deadline: Instant
    sent_at: Instant | None
    sent_by: str | None
    channel: str | None
    reference: str | None
    overdue: bool = Field(description="reported unsent past its deadline (SE22)")


class NoticePage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[NoticeBody]


class NoticeQuery(Query):
    pool: Annotated[int, Field(ge=1), DIGITS] | None = None
    unsent: Literal["true", "false"] | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class NoticeSending(Body):
    """How and when a notice was sent (`sent_at`: default now; not before the notice, not
    later than now)."""

    channel: Channel
    reference: Annotated[NonBlank, Field(max_length=100)]
    sent_at: TimeText | None = None


class OrphanRecoveryProposal(Body):
    """A stopped pool's orphans recovered into an active pool's meter; another manager
    approves it (`POST .../orphans/recoveries/{change}/approve`)."""

    to_pool: Id
    reason: Note


class OrphanRecoveryBody(Body):
    """A proposed recovery and what became of it."""

    model_config = ConfigDict(title="OrphanRecovery")

    id: Id
    pool: Id
    to_pool: Id
    status: ChangeStatus
    reason: str
    orphans_cents: Cents = Field(description="the orphans when it was proposed")
    proposed_by: str
    proposed_at: Instant
    decided_by: str | None
    decided_at: Instant | None
    decision_note: str


class OrphanLine(Body):
    """One stopped pool's line in the register of orphans."""

    pool: Id
    pool_name: str
    stopped_at: Instant
    decision: Id = Field(description="the stop's two-person change")
    orphans_cents: Cents = Field(description="entered at the stop")
    owed_cents: Cents = Field(description="still owed now: the journal's orphan account")
    deadline: Instant = Field(description="recoverable before it (the season's end), final after")
    recovered_at: Instant | None
    recovered_into: Id | None
    recovered_by: str | None = Field(description="who approved the recovery")
    recovery: Id | None
    final_at: Instant | None


class OrphanRegister(Body):
    results: list[OrphanLine]
