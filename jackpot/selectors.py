"""Reads of the progressive: pool configuration, award, journal and parameter-change pages, each
as the model of `jackpot.bodies` that declares it (the meter as terminals and signs see it is
`jackpot.money.meter.pool_meter`); an export job and its file; and the figures a restored backup
must reproduce (`book_figures`)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, Sum

from core.codes import ErrorCode
from core.errors import Conflict, Gone, NotFound
from jackpot.awards import winners
from jackpot.bodies.awards import AwardBody, AwardListQuery, AwardPage
from jackpot.bodies.changes import ParameterChangePage, ParameterChangeQuery
from jackpot.bodies.corrections import CorrectionPage, CorrectionQuery
from jackpot.bodies.journal import EventRef, JournalPage, JournalQuery, JournalTransfer
from jackpot.bodies.notifications import (
    NotificationPage,
    NotificationQuery,
    SignificantEvent,
    SignificantEventPage,
    SignificantEventQuery,
)
from jackpot.bodies.orphans import (
    NoticeBody,
    NoticePage,
    NoticeQuery,
    OrphanLine,
    OrphanRecoveryBody,
    OrphanRegister,
)
from jackpot.bodies.pools import PoolConfiguration, progressive_paytable_of
from jackpot.bodies.render import (
    AWARD_PREFETCH,
    AWARD_RELATED,
    award_body,
    change_body,
    correction_body,
    notification_body,
)
from jackpot.models import (
    AWARD_GRANTED_BY,
    AccountKind,
    AuditChain,
    AuditEvent,
    Award,
    AwardStatus,
    ChangeKind,
    DatabaseIdentity,
    DocumentType,
    ExportJob,
    ExportStatus,
    Notice,
    OrphanEntry,
    ParameterChange,
    Pool,
    Transfer,
    TransferCode,
    Verification,
    VerificationStatus,
    WebhookDelivery,
    WinnerIdentity,
)
from jackpot.money import ledger, rows
from jackpot.money.ledger import CHECKPOINT_CHAIN
from jackpot.notifications import significant
from jackpot.pools import notices, orphans
from jackpot.reporting.exports import OutsideExportDir, awards_filtered, export_file
from rules.paytables import get_progressive_paytable

logger = logging.getLogger(__name__)


def pool_get(pool_id: int) -> Pool:
    """The pool, or a 404 `pool_not_found` naming it (every view of a pool's path starts here)."""
    found = Pool.objects.filter(pk=pool_id).first()
    if found is None:
        raise NotFound(ErrorCode.POOL_NOT_FOUND, f"no pool {pool_id}", param="pool")
    return found


def pool_configuration(*, pool: Pool, tables: list[int]) -> PoolConfiguration:
    """What regulators want posted: the stake, its split, the seed and the paytable; `tables`
    are the pool's tables open for play, as the tables say (`tables.pools.tables_in_play`)."""
    return PoolConfiguration.model_construct(
        id=pool.pk,
        name=pool.name,
        currency=pool.currency,
        stake_cents=pool.stake_cents,
        meter_share_bp=pool.meter_share_bp,
        reserve_share_bp=pool.reserve_share_bp,
        house_share_bp=pool.house_share_bp,
        seed_cents=pool.seed_cents,
        verification_threshold_cents=pool.verification_threshold_cents,
        surveillance_required=pool.surveillance_required,
        paytable=progressive_paytable_of(get_progressive_paytable(pool.paytable_version)),
        tables=tables,
    )


@dataclass(frozen=True, slots=True)
class PaymentSlip:
    """What a paid award's payment slip shows (the French register's fields): the award as the
    API shows it (table, round, seat, cards, the people and times of each step), where it was
    played, and its two entries in the journal: the transfer that granted it and the one that
    paid it, each with its audit event (chain, position, hash). The winner is None when the
    payment identified none, or when it did and the slip's reader may not read it
    (`winner_withheld`)."""

    award: AwardBody
    club: str
    pool_name: str
    currency: str
    granted: EventRef
    paid: EventRef
    winner: SlipWinner | None = None
    winner_withheld: bool = False


@dataclass(frozen=True, slots=True)
class SlipWinner:
    """The winner as the slip prints it for the player to sign: the name, the document's type
    and its number masked but its last three characters (the whole identity stays with the
    auditors and admins, `GET /api/v1/awards/{id}/winner`)."""

    name: str
    document_type: DocumentType
    document_masked: str


def masked(number: str) -> str:
    """A document number with all but its last three characters hidden.

    >>> masked("QX7K4Z91")
    '*****Z91'
    >>> masked("12")
    '**'
    """
    if len(number) <= 3:
        return "*" * len(number)
    return "*" * (len(number) - 3) + number[-3:]


class NoSlip(Exception):
    """No slip for this award: there is no such award (`status` None), or it is not paid."""

    def __init__(self, award_id: int, status: str | None) -> None:
        super().__init__(f"award {award_id} is {status or 'unknown'}")
        self.award_id = award_id
        self.status = status


def _event_ref(event: AuditEvent) -> EventRef:
    return EventRef.model_construct(
        chain=event.chain, sequence=event.sequence, kind=event.kind, hash=event.hash
    )


def payment_slip(award_id: int, *, reader: str | None = None) -> PaymentSlip:
    """The slip of a paid award; `NoSlip` for an award that does not exist or is not paid.

    The winner's identity is decrypted only for a `reader` (`user:<name>`) the caller found may
    read it, through `winners.identity_of`, which writes the read to the security log as the
    auditors' endpoint does; without one an identified winner is withheld, and nothing opened."""
    award = (
        Award.objects.select_related(*AWARD_RELATED)
        .prefetch_related(*AWARD_PREFETCH)
        .filter(pk=award_id)
        .first()
    )
    if award is None or award.status != AwardStatus.PAID:
        raise NoSlip(award_id, None if award is None else award.status)
    events = {
        transfer.code: transfer.event
        for transfer in Transfer.objects.filter(
            award=award, code__in=[*AWARD_GRANTED_BY, TransferCode.AWARD_PAID]
        ).select_related("event")
    }
    granted = next(events[code] for code in AWARD_GRANTED_BY if code in events)
    identified = WinnerIdentity.objects.filter(award_id=award.pk).exists()
    winner = None
    if identified and reader is not None:
        identity = winners.identity_of(award.pk, reader=reader)
        winner = SlipWinner(
            name=identity.name,
            document_type=identity.document_type,
            document_masked=masked(identity.document_number),
        )
    return PaymentSlip(
        award=award_body(award),
        club=settings.CLUB_NAME,
        pool_name=award.pool.name,
        currency=award.pool.currency,
        granted=_event_ref(granted),
        paid=_event_ref(events[TransferCode.AWARD_PAID]),
        winner=winner,
        winner_withheld=identified and winner is None,
    )


def pool_currencies() -> dict[int, str]:
    """Each pool's currency, by id: what the staff pages write amounts in."""
    return dict(Pool.objects.values_list("pk", "currency"))


def award_list(query: AwardListQuery) -> AwardPage:
    """A page of awards, newest first."""
    awards = awards_filtered(query).select_related(*AWARD_RELATED).prefetch_related(*AWARD_PREFETCH)
    limit, offset = query.limit, query.offset
    page = list(awards.order_by("-pk")[offset : offset + limit])
    return AwardPage.model_construct(
        count=awards.count(),
        limit=limit,
        offset=offset,
        results=[award_body(award) for award in page],
    )


def award_list_etag(query: AwardListQuery) -> str:
    """The ETag of `award_list(query)`, without reading a single award: the query, this
    database's identity token and every pool's `award_version`, which a new award and each step
    of one raise in the same transaction (`jackpot.money.meter`). Polling the queue with
    If-None-Match thus costs two small reads (the identity row, the pools' versions) while nothing
    moves. What an award shows that no step changes (its round's cards, its table) never changes,
    except a table's name: a renamed table shows in the list at the next step of any award."""
    token = DatabaseIdentity.objects.filter(pk=1).values_list("token", flat=True).first()
    versions = Pool.objects.order_by("pk").values_list("pk", "award_version")
    state = f"{token}|{list(versions)}|{query.model_dump_json()}"
    return f'"awards-{hashlib.sha256(state.encode()).hexdigest()[:32]}"'


def _transfer(transfer: Transfer) -> JournalTransfer:
    event = transfer.event
    return JournalTransfer.model_construct(
        id=transfer.pk,
        pool=transfer.pool_id,
        code=TransferCode(transfer.code),
        debit=AccountKind(transfer.debit.kind),
        credit=AccountKind(transfer.credit.kind),
        amount_cents=transfer.amount_cents,
        round=transfer.round_id,
        award=transfer.award_id,
        at=transfer.created_at,
        event=EventRef.model_construct(
            chain=event.chain, sequence=event.sequence, kind=event.kind, hash=event.hash
        ),
    )


def journal_page(filters: JournalQuery) -> JournalPage:
    """A page of transfers, newest first, with their accounts and audit event; filters: pool,
    code, round (the round's database id), from and to."""
    query = Transfer.objects.select_related("debit", "credit", "event")
    lookups = {
        "pool_id": filters.pool,
        "round_id": filters.round,
        "code": filters.code,
        "created_at__gte": filters.from_,
        "created_at__lt": filters.to,
    }
    query = query.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None}
    )
    limit, offset = filters.limit, filters.offset
    return JournalPage.model_construct(
        count=query.count(),
        limit=limit,
        offset=offset,
        results=[_transfer(found) for found in query.order_by("-pk")[offset : offset + limit]],
    )


def change_list(*, pool: Pool, query: ParameterChangeQuery) -> ParameterChangePage:
    """A page of the pool's changes (its parameters, the tables moved to it), newest first, of
    one status if asked."""
    changes = ParameterChange.objects.filter(
        pool=pool,
        kind__in=[ChangeKind.POOL_PARAMETERS, ChangeKind.POOL_STOP, ChangeKind.TABLE_MOVE],
    ).select_related("proposed_by", "decided_by")
    if query.status is not None:
        changes = changes.filter(status=query.status)
    limit, offset = query.limit, query.offset
    return ParameterChangePage.model_construct(
        count=changes.count(),
        limit=limit,
        offset=offset,
        results=[
            change_body(change) for change in changes.order_by("-pk")[offset : offset + limit]
        ],
    )


def correction_list(*, pool: Pool, query: CorrectionQuery) -> CorrectionPage:
    """A page of the pool's corrections (proposed, applied, rejected, withdrawn), newest first,
    of one status if asked."""
    found = ParameterChange.objects.filter(
        pool=pool, kind=ChangeKind.POOL_CORRECTION
    ).select_related("proposed_by", "decided_by")
    if query.status is not None:
        found = found.filter(status=query.status)
    limit, offset = query.limit, query.offset
    return CorrectionPage.model_construct(
        count=found.count(),
        limit=limit,
        offset=offset,
        results=[correction_body(c) for c in found.order_by("-pk")[offset : offset + limit]],
    )


def book_figures() -> dict[str, Any]:
    """The figures a restored backup must reproduce (compliance requirement 30), read in one
    snapshot: per pool its meter (cents, units, version), reserve, hit count, the awards won
    by kind (count and cents; voided awards apart) and by status; and every chain's head
    (sequence and hash) but the `checkpoints` chain's, which records the verifications run on a
    database (a restored one's own start-up adds to it). Plain JSON values, equal for two
    databases holding the same books."""
    with rows.snapshot():
        pools: dict[str, Any] = {}
        for pool in Pool.objects.order_by("pk"):
            awards = Award.objects.filter(pool=pool).order_by()
            won = {
                kind: {"count": count, "cents": int(cents)}
                for kind, count, cents in awards.exclude(status=AwardStatus.VOID)
                .values_list("kind")
                .annotate(count=Count("pk"), cents=Sum("amount_cents"))
                .order_by("kind")
            }
            statuses = {
                status: {"count": count, "cents": int(cents)}
                for status, count, cents in awards.values_list("status")
                .annotate(count=Count("pk"), cents=Sum("amount_cents"))
                .order_by("status")
            }
            pools[str(pool.pk)] = {
                "name": pool.name,
                "meter_cents": pool.meter_cents,
                "meter_units": pool.meter_units,
                "meter_version": pool.meter_version,
                "reserve_units": pool.reserve_units,
                "hit_count": pool.hit_count,
                "won": won,
                "won_cents": sum(each["cents"] for each in won.values()),
                "awards_by_status": statuses,
            }
        chains = {
            key: {"sequence": sequence, "head_hash": head}
            for key, sequence, head in AuditChain.objects.exclude(key=CHECKPOINT_CHAIN)
            .order_by("key")
            .values_list("key", "sequence", "head_hash")
        }
    return {"pools": pools, "chains": chains}


def verification_get(run_id: int) -> Verification:
    """A verification run, with who asked for it; `verification_not_found` if there is none."""
    run = Verification.objects.select_related("requested_by").filter(pk=run_id).first()
    if run is None:
        raise NotFound(
            ErrorCode.VERIFICATION_NOT_FOUND, f"no verification {run_id}", param="verification"
        )
    return run


@dataclass(frozen=True)
class VerificationRuns:
    latest: Verification | None
    latest_full: Verification | None
    running: Verification | None


def verification_runs() -> VerificationRuns:
    """The newest finished run (any kind), the newest finished full one, and a full one queued
    or going on: three short indexed reads, whatever the journal's age."""
    runs = Verification.objects.select_related("requested_by").order_by("-pk")
    finished = runs.filter(status__in=[VerificationStatus.DONE, VerificationStatus.FAILED])
    return VerificationRuns(
        latest=finished.first(),
        latest_full=finished.filter(full=True).first(),
        running=runs.filter(
            status__in=[VerificationStatus.QUEUED, VerificationStatus.RUNNING]
        ).first(),
    )


def export_job_get(job_id: int) -> ExportJob:
    """An export job, with who asked for it; `export_not_found` if there is none."""
    job = ExportJob.objects.select_related("requested_by").filter(pk=job_id).first()
    if job is None:
        raise NotFound(ErrorCode.EXPORT_NOT_FOUND, f"no export {job_id}", param="export")
    return job


def export_job_file(job_id: int) -> tuple[ExportJob, Path]:
    """A done export's job and file; refused while it is not done, and once its file is gone."""
    job = export_job_get(job_id)
    if job.status in (ExportStatus.QUEUED, ExportStatus.RUNNING):
        written = (
            "" if job.rows_total is None else f" ({job.rows_written} of {job.rows_total} rows)"
        )
        raise Conflict(
            ErrorCode.EXPORT_NOT_READY,
            f"export {job_id} is {job.status}{written}: poll it until it is done",
            param="export",
        )
    if job.status == ExportStatus.FAILED:
        raise Conflict(
            ErrorCode.EXPORT_FAILED,
            f"export {job_id} failed ({job.error}): start another",
            param="export",
        )
    try:
        path: Path | None = export_file(job.pk)  # from its id, never from its row
    except OutsideExportDir:
        logger.warning("export %s: its file resolves outside EXPORT_DIR: not served", job_id)
        path = None
    if job.status == ExportStatus.EXPIRED or path is None or not path.is_file():
        # A done job whose file is missing (deleted by hand, or EXPORT_DIR not shared with the
        # workers) is as gone as an expired one: only a new export makes it again.
        kept = f" (kept until {job.expires_at.isoformat()})" if job.expires_at else ""
        raise Gone(
            ErrorCode.EXPORT_EXPIRED,
            f"export {job_id}'s file was deleted{kept}: start another",
            param="export",
        )
    return job, path


def notification_list(query: NotificationQuery) -> NotificationPage:
    """A page of webhook deliveries, newest first, filtered by status and URL."""
    deliveries = WebhookDelivery.objects.all()
    if query.status is not None:
        deliveries = deliveries.filter(status=query.status)
    if query.url is not None:
        deliveries = deliveries.filter(url=query.url)
    limit, offset = query.limit, query.offset
    page = list(deliveries.select_related("message").order_by("-pk")[offset : offset + limit])
    return NotificationPage.model_construct(
        count=deliveries.count(),
        limit=limit,
        offset=offset,
        results=[notification_body(delivery) for delivery in page],
    )


def event_page(filters: SignificantEventQuery) -> SignificantEventPage:
    """A page of significant events, newest first: the journal's events of the catalogue's kinds
    (one kind when a code is asked), read through the index on (kind, occurred_at)."""
    kinds = [significant.BY_CODE[filters.code].kind] if filters.code else sorted(significant.KINDS)
    query = AuditEvent.objects.filter(kind__in=kinds)
    lookups = {
        "payload__table": filters.table,
        "occurred_at__gte": filters.from_,
        "occurred_at__lt": filters.to,
    }
    query = query.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None}
    )
    if filters.pool is not None:
        query = query.filter(
            Q(payload__pool=filters.pool) | Q(chain=ledger.pool_chain(filters.pool))
        )
    limit, offset = filters.limit, filters.offset
    return SignificantEventPage.model_construct(
        count=query.count(),
        limit=limit,
        offset=offset,
        results=[
            SignificantEvent.model_construct(**significant.told(event))
            for event in query.order_by("-occurred_at", "-pk")[offset : offset + limit]
        ],
    )


# The notices and the register of orphans (jackpot.pools.notices, jackpot.pools.orphans).


def notice_body(notice: Notice) -> NoticeBody:
    """A notice as the API shows it: its sending as its authentic event says."""
    told = notices.sent(notice)
    return NoticeBody.model_construct(
        id=notice.pk,
        pool=notice.pool_id,
        change=notice.change_id,
        cause=notice.cause,
        addressee=notice.addressee,
        text=notice.text,
        created_at=notice.created_at,
        deadline=notice.deadline,
        sent_at=told.at if told else None,
        sent_by=told.by if told else None,
        channel=told.channel if told else None,
        reference=told.reference if told else None,
        overdue=notice.overdue_event_id is not None,
    )


def notice_list(query: NoticeQuery) -> NoticePage:
    """A page of notices, newest first: of one pool, the unsent ones only, if asked."""
    found = Notice.objects.all()
    if query.pool is not None:
        found = found.filter(pool_id=query.pool)
    if query.unsent is not None:
        found = found.filter(sent_event__isnull=query.unsent == "true")
    limit, offset = query.limit, query.offset
    return NoticePage.model_construct(
        count=found.count(),
        limit=limit,
        offset=offset,
        results=[notice_body(n) for n in found.order_by("-pk")[offset : offset + limit]],
    )


def _approved_by(event_id: int | None) -> str | None:
    event = AuditEvent.objects.filter(pk=event_id).first() if event_id else None
    if event is None or not ledger.authentic_with_transfers(event):
        return None
    return str(event.payload.get("approved_by")) if isinstance(event.payload, dict) else None


def orphan_register() -> OrphanRegister:
    """The register of orphans: each pool stopped to orphans, oldest first, what it still owes
    (its orphan account in the journal), its recovery (who approved, from the authentic event)
    or its finality."""
    lines = []
    for entry in OrphanEntry.objects.select_related("pool").order_by("stopped_at", "pk"):
        lines.append(
            OrphanLine.model_construct(
                pool=entry.pool_id,
                pool_name=entry.pool.name,
                stopped_at=entry.stopped_at,
                decision=entry.change_id,
                orphans_cents=entry.orphans_cents,
                owed_cents=orphans.orphans_held(entry.pool_id),
                deadline=entry.deadline,
                recovered_at=entry.recovered_at,
                recovered_into=entry.recovered_into_id,
                recovered_by=_approved_by(entry.closed_event_id) if entry.recovered_at else None,
                recovery=entry.recovery_id,
                final_at=entry.final_at,
            )
        )
    return OrphanRegister.model_construct(results=lines)


def orphan_recovery_body(change: ParameterChange) -> OrphanRecoveryBody:
    return OrphanRecoveryBody.model_construct(
        id=change.pk,
        pool=change.pool_id,
        to_pool=change.changes["to_pool"],
        status=change.status,
        reason=change.reason,
        orphans_cents=change.before.get("orphans_cents", 0),
        proposed_by=change.proposed_by.get_username(),
        proposed_at=change.proposed_at,
        decided_by=change.decided_by.get_username() if change.decided_by else None,
        decided_at=change.decided_at,
        decision_note=change.decision_note,
    )
