"""Notices to the authorities (compliance 57; arrêté of 14 May 2007 art. 66-4, 66-5).

A suspension or an involuntary stop is told to the police des jeux "without delay"
(NOTICE_WITHOUT_DELAY_HOURS); a voluntary stop to the minister 15 days before it takes effect.

Invariants:
- a notice is made in the transaction of the event that calls for it, with its `notice.made`
  event on the pool's chain (its text, addressee and deadline);
- a person records it sent once (`notice.sent`, who from the event's actor; 409 `notice_sent`);
  who sent it and when are read from that authentic event (`sent`), never from the row;
- an unsent notice past its deadline is told once (`notice.overdue`, SE22): the sweep reads the
  partial index of unsent, unreported notices, and claims each by one conditional `UPDATE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from jackpot.models import Addressee, AuditEvent, Notice, NoticeCause, ParameterChange, Pool
from jackpot.money import ledger

#: The notice a voluntary stop gives the minister: at least this long before it takes effect.
VOLUNTARY_NOTICE = timedelta(days=15)
#: How a notice may be sent.
CHANNELS = ("letter", "email", "fax", "hand", "phone")
MADE, SENT, OVERDUE = "notice.made", "notice.sent", "notice.overdue"

_CAUSES = {
    NoticeCause.SUSPENSION: "la suspension pour incident technique",
    NoticeCause.INVOLUNTARY_STOP: "l'arrêt involontaire (incident)",
    NoticeCause.VOLUNTARY_STOP: "l'arrêt volontaire",
}


def _text(pool: Pool, cause: NoticeCause, reason: str, when: datetime) -> str:
    """The notice's French text: the club, the pool, the cause and its date."""
    local = timezone.localtime(when).strftime("%d/%m/%Y %H:%M")
    verb = "prendra effet le" if cause == NoticeCause.VOLUNTARY_STOP else "est intervenu(e) le"
    return (
        f"{settings.CLUB_NAME} informe de {_CAUSES[cause]} du jackpot progressif "
        f"« {pool.name} » (n° {pool.pk}), qui {verb} {local}. Motif : {reason}"
    )


def notice_make(
    *,
    pool: Pool,
    cause: NoticeCause,
    reason: str,
    when: datetime,
    actor: str,
    now: datetime,
    change: ParameterChange | None = None,
) -> Notice:
    """The notice `cause` calls for, made inside the caller's transaction with its event: a
    voluntary stop to the minister by `when` less 15 days, any other to the police within
    NOTICE_WITHOUT_DELAY_HOURS of `now`."""
    if cause == NoticeCause.VOLUNTARY_STOP:
        addressee, deadline = Addressee.MINISTER, when - VOLUNTARY_NOTICE
    else:
        addressee = Addressee.POLICE
        deadline = now + timedelta(hours=settings.NOTICE_WITHOUT_DELAY_HOURS)
    notice = Notice.objects.create(
        pool=pool,
        change=change,
        cause=cause,
        addressee=addressee,
        text=_text(pool, cause, reason, when),
        created_at=now,
        deadline=deadline,
    )
    event = ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind=MADE,
        actor=actor,
        occurred_at=now,
        payload={
            "pool": pool.pk,
            "notice": notice.pk,
            "change": change.pk if change is not None else None,
            "cause": cause.value,
            "addressee": addressee.value,
            "deadline": deadline.isoformat(),
            "text": notice.text,
        },
    )
    Notice.objects.filter(pk=notice.pk).update(made_event=event)
    notice.made_event = event
    return notice


@dataclass(frozen=True, slots=True)
class Sent:
    """Who sent a notice, when and how, as its authentic `notice.sent` event says."""

    by: str
    at: datetime
    channel: str
    reference: str


def sent(notice: Notice) -> Sent | None:
    """The notice's sending as its authentic event says; None when unsent, or when the row's
    event is not an authentic `notice.sent` of this notice (the verification names it)."""
    if notice.sent_event_id is None:
        return None
    event = AuditEvent.objects.filter(pk=notice.sent_event_id).first()
    if event is None or event.kind != SENT or not ledger.authentic(event):
        return None
    payload = event.payload if isinstance(event.payload, dict) else {}
    if payload.get("notice") != notice.pk:
        return None
    return Sent(
        by=event.actor.removeprefix("user:"),
        at=datetime.fromisoformat(str(payload["sent_at"])),
        channel=str(payload["channel"]),
        reference=str(payload["reference"]),
    )


def _checked(
    channel: str, reference: str, sent_at: datetime, notice: Notice, now: datetime
) -> None:
    if channel not in CHANNELS:
        raise ApiError(
            "invalid_notice", f"channel is one of {', '.join(CHANNELS)}", param="channel"
        )
    if not reference.strip() or len(reference) > 100:
        raise ApiError(
            "invalid_notice",
            "reference is required: the letter's, the message's or the call's reference, at "
            "most 100 characters",
            param="reference",
        )
    if sent_at > now or sent_at < notice.created_at:
        raise ApiError(
            "invalid_notice",
            f"sent_at is between the notice's making ({notice.created_at.isoformat()}) and now",
            param="sent_at",
        )


@transaction.atomic
def notice_sent(
    *, notice_id: int, channel: str, reference: str, sent_at: datetime | None, user: User
) -> Notice:
    """A person records that the notice was sent, when (`sent_at`, default now: not before the
    notice, not in the future) and how; once (409 `notice_sent`)."""
    notice = Notice.objects.filter(pk=notice_id).first()
    if notice is None:
        raise NotFound("notice_not_found", f"no notice {notice_id}", param="notice")
    now = timezone.now()
    at = sent_at or now
    _checked(channel, reference, at, notice, now)
    event = ledger.record(
        chain=ledger.pool_chain(notice.pool_id),
        kind=SENT,
        actor=f"user:{user.get_username()}",
        occurred_at=now,
        payload={
            "pool": notice.pool_id,
            "notice": notice.pk,
            "addressee": notice.addressee,
            "sent_at": at.isoformat(),
            "channel": channel,
            "reference": reference.strip(),
        },
    )
    # Once: the row is claimed by one conditional statement; a second sender's finds it taken
    # and its event rolls back with this transaction.
    claimed = Notice.objects.filter(pk=notice.pk, sent_event__isnull=True).update(
        sent_event=event, sent_at=at, sent_by=user, channel=channel, reference=reference.strip()
    )
    if not claimed:
        raise Conflict(
            "notice_sent", f"notice {notice_id} is already recorded sent", param="notice"
        )
    return Notice.objects.get(pk=notice.pk)


def notices_overdue(*, now: datetime | None = None) -> list[int]:
    """Tell each notice unsent past its deadline once (`notice.overdue`, SE22); the notices
    told. Safe to run twice: a notice told is claimed, the second run finds none."""
    now = now or timezone.now()
    due = list(
        Notice.objects.filter(
            sent_event__isnull=True, overdue_event__isnull=True, deadline__lt=now
        ).values_list("pk", flat=True)[:500]
    )
    return [pk for pk in due if _tell_overdue(pk, now)]


@transaction.atomic
def _tell_overdue(notice_id: int, now: datetime) -> bool:
    notice = Notice.objects.get(pk=notice_id)
    event = ledger.record(
        chain=ledger.pool_chain(notice.pool_id),
        kind=OVERDUE,
        actor="system:notices_overdue",
        occurred_at=now,
        payload={
            "pool": notice.pool_id,
            "notice": notice.pk,
            "addressee": notice.addressee,
            "cause": notice.cause,
            "deadline": notice.deadline.isoformat(),
        },
    )
    claimed = Notice.objects.filter(
        pk=notice_id, sent_event__isnull=True, overdue_event__isnull=True
    ).update(overdue_event=event)
    if not claimed:  # sent or told meanwhile: nothing to tell, the event rolls back
        transaction.set_rollback(True)
    return bool(claimed)
