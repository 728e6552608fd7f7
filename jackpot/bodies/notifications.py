"""The significant events listed and their query string, and the webhook deliveries
(notifications) and theirs.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import From, Id, Offset, Page, QueryId, To
from jackpot.models import DeliveryStatus
from jackpot.notifications.significant import EventCode


class SignificantEventQuery(Query):
    """The filters of the significant events' list (on when the event was recorded)."""

    code: EventCode | None = None
    table: QueryId | None = None
    pool: QueryId | None = None
    from_: From = None
    to: To = None
    limit: Annotated[int, Field(ge=1, le=500, description="1 to 500 (default 100)"), DIGITS] = 100
    offset: Offset = 0


class SignificantEvent(Body):
    """One significant event (docs/operations.md "Significant events"): its catalogue code, when
    (server UTC time), its table and pool where it has them, who or what recorded it, and its
    journal entry. The webhook `significant_event` carries the same object."""

    code: EventCode
    name: str = Field(description="the code's name, e.g. terminal_silent")
    kind: str = Field(description="the journal event that records it")
    occurred_at: Instant
    table: Id | None
    pool: Id | None
    actor: str
    chain: str
    sequence: Annotated[int, Field(ge=1)]
    hash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    detail: dict[str, JsonValue] = Field(description="the journal event's payload")


class SignificantEventPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=500)]
    offset: Page
    results: list[SignificantEvent]


class NotificationQuery(Query):
    status: DeliveryStatus | None = None
    # Without NUL: PostgreSQL's text cannot hold one, so the lookup would fail (a 500).
    url: Annotated[
        str | None,
        Field(
            max_length=500,
            pattern=r"^[^\u0000]*$",
            description="a receiver's URL (WEBHOOK_RECEIVERS)",
        ),
    ] = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class Notification(Body):
    """One event posted to one URL (a delivery): its attempts and outcome."""

    delivery_id: str = Field(description="the Jackpot-Delivery header: the receiver dedups on it")
    event_id: str = Field(description="the Jackpot-Event header, e.g. award:42")
    topic: str = Field(description="award.jackpot_hit or award.big_win")
    award: Id | None = Field(description="the award it announces")
    url: str
    status: DeliveryStatus
    attempts: Annotated[int, Field(ge=0)]
    last_status: Annotated[int, Field(ge=100, le=599)] | None = Field(
        description="the last answer's HTTP status; null: none yet, or no answer"
    )
    last_error: str | None = Field(description="the last failure: HTTP status and text, or why")
    created_at: Instant
    last_attempt_at: Instant | None
    next_attempt_at: Instant | None = Field(description="the next retry, while pending")
    delivered_at: Instant | None = Field(description="when a 2xx was recorded")


class NotificationPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[Notification]
