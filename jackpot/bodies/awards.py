"""An award and its steps: its answer, its page, the notes, reasons, reviews and approvals
sent at each step, the winner's identity and the register's record, and the award list's
query string (answers built by `jackpot.bodies.render`).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field

from core.codes import ErrorCode
from core.wire import DIGITS, Body, Instant, Moment, NonBlank, Query, Refusal, TimeText
from jackpot.bodies.common import (
    ENUM_TEXT,
    Cents,
    From,
    Id,
    Note,
    Offset,
    OptionalNote,
    Page,
    QueryId,
    RecordedCard,
    SecondPersonCode,
    To,
)
from jackpot.models import (
    AwardKind,
    AwardStatus,
    DocumentType,
    PaymentMethod,
    ReferralOutcome,
    Verdict,
)


class ReferralDecided(Body):
    """A manager's decision on a referral: clear (on to approval) or void (the void started)."""

    outcome: ReferralOutcome
    decided_by: str
    decided_at: Instant
    reason: str


class Review(Body):
    """Surveillance's latest video review of an award: who, when, the camera and the footage
    range (UTC), the verdict, and for a referral its reason and the manager's decision."""

    model_config = ConfigDict(serialize_by_alias=True)  # `from` in answers too

    id: Id
    reviewer: str
    reviewed_at: Instant
    camera: str
    from_: Annotated[Instant, Field(alias="from", description="the footage reviewed, from")]
    to: Annotated[Instant, Field(description="the footage reviewed, to")]
    verdict: Verdict
    reason: str = Field(description="why it was referred (empty for a confirmation)")
    note: str
    decision: ReferralDecided | None = Field(description="a referral's decision; null: none yet")


class AwardBody(Body):
    """An award and its way to payment: who verified, approved, paid or voided it, and when; for
    a jackpot whose void is requested and not yet confirmed, who requested it, when and why;
    surveillance's latest review, and whether one is required before approval."""

    model_config = ConfigDict(title="Award")  # its name in the schema (core.openapi)

    id: Id
    pool: Id
    round: Id
    round_id: Annotated[str, Field(description="the round's id, as its terminal named it")]
    table: Id
    table_name: str
    game: str
    seat: Annotated[int, Field(ge=1, le=7)]
    cards: list[RecordedCard] = Field(description="the seat's own cards, as dealt")
    board: list[RecordedCard] = Field(
        max_length=5, description="the board as dealt; empty for Stud"
    )
    winning_five: list[RecordedCard] = Field(
        max_length=5,
        description="the five of cards and board that make the award; empty for an envy (won "
        "by another seat's jackpot)",
    )
    kind: AwardKind
    amount_cents: Cents = Field(description="the amount granted, as the round won it")
    corrected_cents: Cents = Field(
        description="the sum of its documented corrections, signed (docs/accounting.md, "
        "Corrections)"
    )
    due_cents: Cents = Field(
        description="what is approved and paid: amount_cents + corrected_cents"
    )
    status: AwardStatus
    sequence: Annotated[int, Field(ge=1)]
    created_at: Instant
    follows: Id | None = Field(
        description="the award this one follows (an envy: its round's jackpot): it is approved "
        "or paid only once that one is approved, and is voided with it; null: none"
    )
    waits_on_follows: bool = Field(
        description="true: not payable yet, the award it follows is not approved (409 "
        "award_follows_unapproved until it is)"
    )
    verified_by: str | None
    verified_at: Instant | None
    verification_note: str
    approved_by: str | None
    approved_at: Instant | None
    paid_by: str | None
    paid_at: Instant | None
    voided_by: str | None
    voided_at: Instant | None
    void_reason: str
    void_requested_by: str | None = Field(
        description="a jackpot's void: the supervisor who requested it; a different one confirms"
    )
    void_requested_at: Instant | None
    void_request_reason: str
    approval_note: str = Field(description="the approver's note (empty: none)")
    payment_method: PaymentMethod | None = Field(description="how it was paid; null until paid")
    payment_reference: str = Field(description="the cheque's or transfer's number (empty: none)")
    payment_note: str = Field(description="the cashier's note (empty: none)")
    winner_identified: bool = Field(
        description="the winner's identity is on the register (auditors and admins read it: "
        "GET /api/v1/awards/{id}/winner); the identity itself is never in this body"
    )
    surveillance_required: bool = Field(
        description="a jackpot of a pool requiring it: approved only after a confirmed review"
    )
    review: Review | None = Field(description="surveillance's latest review; null: none")


class AwardPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[AwardBody]


class AwardNote(Body):
    """A verification's note (required: what the supervisor checked)."""

    note: Note


class AwardReason(Body):
    """A void's reason (required)."""

    reason: Note


class AwardApproval(SecondPersonCode):
    """An approval, with an optional note, and the approver's fresh code."""

    note: OptionalNote = None


def _date_text(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError(f"must be a date YYYY-MM-DD in a string, got {type(value).__name__}")
    return value


def _born(value: date) -> date:
    if not date(1900, 1, 1) <= value < date.today():
        raise ValueError("must be a date of birth between 1900-01-01 and yesterday")
    return value


#: A date YYYY-MM-DD in a JSON body (strict models take no text for a date).
DateText = Annotated[date, Field(strict=False), BeforeValidator(_date_text), AfterValidator(_born)]


class WinnerIdentityBody(Body):
    """A winner's identity, as the French register records it (anti-money-laundering: required
    for an award at or above WINNER_IDENTIFICATION_THRESHOLD_CENTS). Stored encrypted; a refusal
    names the field and never repeats what was sent."""

    model_config = ConfigDict(title="WinnerIdentity")  # its name in the schema (core.openapi)

    name: Annotated[NonBlank, Field(max_length=200, description="the name as on the document")]
    date_of_birth: DateText
    document_type: Annotated[DocumentType, Field(strict=False)]
    document_number: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 -]{0,39}$", description="1 to 40 characters")
    ]
    nationality: Annotated[
        str, Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2, e.g. FR")
    ]


class AwardPayment(Body):
    """How an award was paid: the method, the cheque's or transfer's reference (required for
    those, optional for cash), an optional note, and the winner's identity (required at or above
    the identification threshold, optional below)."""

    #: A refusal never repeats the value sent (a document number would be in the error body).
    withheld: ClassVar[bool] = True

    method: Annotated[PaymentMethod, Field(strict=False)]
    reference: (
        Annotated[
            NonBlank,
            Field(
                max_length=100, description="the cheque's or transfer's number; optional for cash"
            ),
        ]
        | None
    ) = None
    note: OptionalNote = None
    winner: WinnerIdentityBody | None = None


class WinnerRecord(Body):
    """A winner's identity as the register keeps it (auditors and admins)."""

    award: Id
    name: str
    date_of_birth: date
    document_type: DocumentType
    document_number: str
    nationality: str
    recorded_at: Instant
    recorded_by: str
    keep_until: Instant


class RegisterQuery(Query):
    """The register's period (on when each award was paid) and its format."""

    from_: Annotated[Moment, Field(alias="from", description="ISO 8601 time, included")]
    to: Annotated[Moment, Field(description="ISO 8601 time, excluded")]
    format: Literal["csv", "pdf"] = "csv"


class AwardReview(Body):
    """A surveillance officer's video review: the camera, the footage range reviewed (ISO 8601
    times with their offset, `from` before `to`), the verdict, a referral's reason (required
    then) and an optional note."""

    camera: Annotated[NonBlank, Field(max_length=80), Refusal(ErrorCode.INVALID_TEXT)]
    from_: Annotated[TimeText, Field(alias="from", description="the footage reviewed, from")]
    to: Annotated[TimeText, Field(description="the footage reviewed, to (after from)")]
    verdict: Annotated[Verdict, ENUM_TEXT]
    reason: Note | None = Field(default=None, description="required when referred")
    note: Note | None = None


class AwardReferral(SecondPersonCode):
    """A manager's decision on surveillance's referral, and why, with the manager's fresh code."""

    decision: Annotated[ReferralOutcome, ENUM_TEXT]
    reason: Note


class AwardFilters(Query):
    """The filters of the award list and the payout export (on when the award was won)."""

    status: AwardStatus | None = None
    pool: QueryId | None = None
    table: QueryId | None = None
    kind: AwardKind | None = None
    from_: From = None
    to: To = None


class AwardListQuery(AwardFilters):
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0
