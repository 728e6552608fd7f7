"""The progressive's wire shapes, each declared once (see `core.wire`).

The meter (terminals and signs), awards and their steps, the journal and its verification, a pool's
configuration and report, the query strings of the award list, the export and the journal, a
background export's request and job, and the webhook deliveries (notifications). The views read
requests with these models and the schema documents them. Answers are built from them too, with
`model_construct` and dumped with `model_dump(mode="json")`: the meter by `jackpot.money.meter`, an
award and an export job by `jackpot.render`, the sign's parts by `jackpot.sign.display`, the pages
and the configuration by `jackpot.selectors`, the report by `jackpot.reporting.reports`, the
journal's check by `jackpot.audit.verification`, and the progressive paytable here
(`progressive_paytable_of`).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, JsonValue

from core.codes import ErrorCode
from core.wire import DIGITS, Body, Instant, Moment, NonBlank, Query, Refusal, TimeText
from jackpot.models import (
    AccountKind,
    AwardKind,
    AwardStatus,
    ChangeStatus,
    DeliveryStatus,
    DocumentType,
    ExportStatus,
    PaymentMethod,
    PoolStatus,
    ReferralOutcome,
    TransferCode,
    Verdict,
    VerificationStatus,
    VerificationTrigger,
)
from jackpot.notifications.significant import EventCode
from rules import paytables as rules
from rules.cards import CARD_PATTERN

MAX_TEXT = 500  # a note's or a reason's characters

# An enum in a JSON body is its value as text (strict models would want the enum object itself).
_Text = Field(strict=False)

Cents = int  # integer euro cents, everywhere
Id = Annotated[int, Field(ge=1)]
Page = Annotated[int, Field(ge=0)]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
CardText = Annotated[str, Field(pattern=CARD_PATTERN)]

# --- the meter --------------------------------------------------------------------------------


class Meter(Body):
    """The committed meter in whole cents, its version (`sequence`) and when it last moved."""

    pool: Id
    amount_cents: Cents
    currency: Currency
    sequence: Annotated[int, Field(ge=0)]
    as_of: Instant | None
    status: PoolStatus = Field(
        default=PoolStatus.ACTIVE,
        description="active; suspended (a technical fault: no progressive stake, nothing "
        "payable, the sign says so instead of the amount); stopped (for good: its meter moved out)",
    )


class Hit(Body):
    """An award as a sign lists it."""

    table: str
    kind: AwardKind
    amount_cents: Cents
    at: Instant


class SignAwards(Body):
    """The awards part of a sign (`jackpot.sign.display` caches it apart from the meter)."""

    last_hit: Hit | None
    recent_hits: list[Hit] = Field(max_length=5, description="the last five hits, newest first")
    jackpot_pending: bool
    pending_jackpot: Hit | None = Field(
        description="the newest jackpot waiting for its checks, if any"
    )


class DisplayMeter(SignAwards, Meter):  # the meter's fields first (pydantic: the last base's)
    """What a jackpot sign shows: the meter, the last hits and a jackpot awaiting its checks."""


# --- awards -----------------------------------------------------------------------------------


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
    cards: list[CardText] = Field(description="the seat's own cards, as dealt")
    board: list[CardText] = Field(max_length=5, description="the board as dealt; empty for Stud")
    winning_five: list[CardText] = Field(
        max_length=5,
        description="the five of cards and board that make the award; empty for an envy (won "
        "by another seat's jackpot)",
    )
    kind: AwardKind
    amount_cents: Cents
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


Note = Annotated[NonBlank, Field(max_length=MAX_TEXT), Refusal(ErrorCode.INVALID_TEXT)]


class AwardNote(Body):
    """A verification's note (required: what the supervisor checked)."""

    note: Note


class AwardReason(Body):
    """A void's reason (required)."""

    reason: Note


OptionalNote = Note | None


#: The second person's fresh code at a two-person step (`jackpot.staff.second_factor.present`).
SecondFactorCode = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        description="A fresh code of the second person's authenticator (or a recovery code): "
        "required wherever staff sign in with a second factor (always in production), since "
        "a session or a staff token never proves who is at the screen at this step; a code "
        "used already (the sign-in's) is refused",
    ),
]


class SecondPersonCode(Body):
    """What the second person of a two-person step sends to prove presence."""

    second_factor_code: SecondFactorCode | None = None


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


class NoBody(Body):
    """An empty object (or no body at all)."""


class AwardReview(Body):
    """A surveillance officer's video review: the camera, the footage range reviewed (ISO 8601
    times with their offset, `from` before `to`), the verdict, a referral's reason (required
    then) and an optional note."""

    camera: Annotated[NonBlank, Field(max_length=80), Refusal(ErrorCode.INVALID_TEXT)]
    from_: Annotated[TimeText, Field(alias="from", description="the footage reviewed, from")]
    to: Annotated[TimeText, Field(description="the footage reviewed, to (after from)")]
    verdict: Annotated[Verdict, _Text]
    reason: Note | None = Field(default=None, description="required when referred")
    note: Note | None = None


class AwardReferral(SecondPersonCode):
    """A manager's decision on surveillance's referral, and why, with the manager's fresh code."""

    decision: Annotated[ReferralOutcome, _Text]
    reason: Note


# --- the journal ------------------------------------------------------------------------------


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


# --- pools ------------------------------------------------------------------------------------


class ProgressiveAwardLine(Body):
    award: Literal[
        "royal_flush", "community_royal", "straight_flush", "four_of_a_kind", "full_house"
    ]
    # Only the jackpot's line has a share of the meter; the others leave the key out.
    jackpot_percent_bp: Annotated[int, Field(ge=0, le=10_000)] | None = Field(
        default=None, exclude_if=lambda share: share is None
    )
    amount_cents: Cents | None = Field(description="null for the jackpot: its amount is the meter")


class ProgressivePaytable(Body):
    name: Literal["uth_progressive"]
    version: str
    awards: list[ProgressiveAwardLine]
    envy_cents: Cents


def progressive_paytable_of(table: rules.ProgressiveSchedule) -> ProgressivePaytable:
    """The engine's progressive table as the wire shows it, best award first: the jackpot royal
    with its share of the meter and `amount_cents: null`, the others a fixed amount."""
    line = ProgressiveAwardLine.model_construct
    return ProgressivePaytable.model_construct(
        name="uth_progressive",
        version=table.version,
        awards=[
            line(
                award="royal_flush",
                jackpot_percent_bp=table.jackpot_percent_bp,
                amount_cents=None,
            ),
            line(award="community_royal", amount_cents=table.community_royal_cents),
            line(award="straight_flush", amount_cents=table.straight_flush_cents),
            line(award="four_of_a_kind", amount_cents=table.four_of_a_kind_cents),
            line(award="full_house", amount_cents=table.full_house_cents),
        ],
        envy_cents=table.envy_cents,
    )


class PoolConfiguration(Body):
    """What regulators want posted: the stake, its split (basis points), the seed, the paytable."""

    id: Id
    name: str
    currency: Currency
    stake_cents: Cents
    meter_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    reserve_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    house_share_bp: Annotated[int, Field(ge=0, le=10_000)]
    seed_cents: Cents
    verification_threshold_cents: Cents
    surveillance_required: bool = Field(
        description="a jackpot is approved only after surveillance confirmed it on video"
    )
    paytable: ProgressivePaytable
    tables: list[Id]


class StakeTotals(Body):
    count: Annotated[int, Field(ge=0)]
    in_cents: Cents
    refunded_cents: Cents


class AwardTotal(Body):
    count: Annotated[int, Field(ge=0)]
    amount_cents: Cents


class ReportHit(Body):
    award: Id
    table: str
    round: str
    seat: int
    amount_cents: Cents
    status: AwardStatus
    at: Instant


class MeterIdentity(Body):
    formula: str
    expected_units: int
    meter_units: int
    holds: bool


class StaleRound(Body):
    """A round of the pool open for too long: its result is not coming."""

    table: Annotated[Id, Field(description="the table's id (a supervisor's void names it)")]
    table_name: str
    round_id: str
    opened_at: Instant
    age_seconds: Annotated[int, Field(ge=0)]
    progressive_cents: Annotated[Cents, Field(ge=0, description="what a void refunds")]


class OpenRounds(Body):
    """The pool's rounds still open (their stakes are in the meter), and the stale ones: open
    for `stale_after_seconds` or longer (the setting ROUND_STALE_AFTER_SECONDS)."""

    count: Annotated[int, Field(ge=0)]
    stale_after_seconds: Annotated[int, Field(ge=1)]
    stale_count: Annotated[int, Field(ge=0)]
    oldest_stale: list[StaleRound] = Field(max_length=10, description="oldest first")


#: The void watch's flags (tables.selectors.voids): a table's voids in one shift, or over the
# window's.
VoidSignal = Literal["voids_in_shift", "voids_in_window"]


class IntegrityFlagBody(Body):
    """An award count that fair deals make improbable, at a table (or in the whole pool: `table`
    null), over a window: `observed` of the `rounds` (settled, with a progressive stake) paid
    at least one award of `kind` where `expected` (exact, "n/d") were expected; `tail` bounds
    P(count >= observed) from above, `adjusted` is Holm's over the `family` of tests of that
    check, below `alpha`. Stored by the integrity check (tables.audit.integrity); the tables own
    them, the pool report shows them. A void flag (`kind` a `VoidSignal`) is a table's voids:
    `observed` of its `rounds` (decided: settled or voided) were voided where the other tables'
    rate made `expected` likely, `seats` the stakes those voids refunded, `awards` 0."""

    model_config = ConfigDict(title="IntegrityFlag")  # its name in the schema (core.openapi)

    id: Id
    pool: Id
    table: Id | None
    table_name: str | None
    kind: AwardKind | VoidSignal
    window_from: Instant
    window_to: Instant
    rounds: Annotated[int, Field(ge=0)]
    seats: Annotated[int, Field(ge=0)]
    observed: Annotated[int, Field(ge=0)]
    awards: Annotated[int, Field(ge=0)]
    expected: Annotated[str, Field(pattern=r"^[0-9]+/[0-9]+$")]
    tail: str
    adjusted: str
    family: Annotated[int, Field(ge=1)]
    alpha: str
    checked_at: Instant


class ReconciliationStatus(Body):
    """The latest scheduled reconciliation (tables.audit.reconciliation) as the pool report shows
    it:
    the whole report is `GET /api/v1/reconciliations/{id}`. Null before the first run."""

    id: Id
    ok: bool
    daily: bool
    finished_at: Instant
    problem_count: Annotated[int, Field(ge=0)]
    first_problem: str | None


class PoolReport(Body):
    """A pool's reconciliation: balances, stakes, awards by kind, the last hits, the identity,
    the rounds still open, the latest integrity flags, the latest scheduled reconciliation."""

    pool: Id
    currency: Currency
    meter_cents: Cents
    seed_cents: Annotated[int, Field(ge=1, description="the reset: the meter after a hit")]
    reserve_cents: Cents
    house_cents: Cents
    balances: dict[AccountKind, Cents]
    stakes: StakeTotals
    awards_by_kind: dict[AwardKind, AwardTotal]
    hit_count: Annotated[int, Field(ge=0)]
    last_hits: list[ReportHit]
    meter_identity: MeterIdentity
    open_rounds: OpenRounds
    integrity_flags: list[IntegrityFlagBody] = Field(max_length=25, description="newest first")
    reconciliation: ReconciliationStatus | None


# --- a pool's parameter changes (jackpot.pools.parameters)
# ---------------------------------------------


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
    `changes.revoke_others`), made when another admin approves and shown to that admin only."""

    model_config = ConfigDict(title="ParameterChange")  # its name in the schema (core.openapi)

    id: Id
    kind: Literal["pool.parameters", "pool.stop", "table.move", "terminal.issue"]
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


class ParameterChangePage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Page
    results: list[ParameterChangeBody]


# --- query strings ----------------------------------------------------------------------------

QueryId = Annotated[int, Field(ge=0, le=2**62), DIGITS]
Offset = Annotated[int, Field(ge=0, le=2**62, description="default 0"), DIGITS]
From = Annotated[Moment | None, Field(alias="from", description="ISO 8601 time, included")]
To = Annotated[Moment | None, Field(description="ISO 8601 time, excluded")]


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


class JournalQuery(Query):
    pool: QueryId | None = None
    code: TransferCode | None = None
    round: Annotated[QueryId | None, Field(description="the round's database id")] = None
    from_: From = None
    to: To = None
    limit: Annotated[int, Field(ge=1, le=500, description="1 to 500 (default 100)"), DIGITS] = 100
    offset: Offset = 0


class ParameterChangeQuery(Query):
    status: ChangeStatus | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


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


# --- background exports -----------------------------------------------------------------------

FilterId = Annotated[int, Field(ge=0, le=2**62)]  # as in the query string (QueryId)


class ExportRequest(Body):
    """The filters of a background export, as a JSON object: those of `export.csv` (on when the
    award was won; all optional)."""

    model_config = ConfigDict(serialize_by_alias=True)  # `from` in answers too

    status: Annotated[AwardStatus, _Text] | None = None
    pool: FilterId | None = None
    table: FilterId | None = None
    kind: Annotated[AwardKind, _Text] | None = None
    from_: Annotated[TimeText | None, Field(alias="from", description="ISO 8601, included")] = None
    to: Annotated[TimeText | None, Field(description="ISO 8601 time, excluded")] = None


class ExportJobBody(Body):
    """A background export: its request, its progress, and its file once done."""

    model_config = ConfigDict(title="ExportJob")  # its name in the schema (core.openapi)

    id: Id
    status: ExportStatus
    filters: ExportRequest
    requested_by: str
    rows_written: Annotated[int, Field(ge=0)]
    rows_total: Annotated[int, Field(ge=0)] | None = Field(
        description="the awards to write, known once a worker has started"
    )
    size_bytes: Annotated[int, Field(ge=0)] | None = Field(description="the file's, once done")
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = Field(
        description="the SHA-256 of the whole file, once done (the download's X-Content-SHA256)"
    )
    error: str | None = Field(description="why it failed")
    created_at: Instant
    started_at: Instant | None
    finished_at: Instant | None
    expires_at: Instant | None = Field(description="when the file is deleted")
    url: str = Field(description="this job (poll it)")
    download_url: str | None = Field(description="the file, once done")


# --- notifications (signed webhooks) -----------------------------------------------------------


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
