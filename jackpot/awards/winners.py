"""Winners' identities: encrypted at rest, tied to the journal by a keyed digest, read by auditors.

French anti-money-laundering rules make a gaming club identify a winner paid at or above EUR 2,000
(`settings.WINNER_IDENTIFICATION_THRESHOLD_CENTS`). Invariants:
- an award at or above the threshold is paid only with its winner's identity (`required`, called
  by `jackpot.awards.workflow.award_pay` in the payment's transaction); below it an identity may be
  given and is kept the same way;
- the identity is stored only as a Fernet token under `settings.WINNER_IDENTITY_KEYS` (keys kept
  outside the database; MultiFernet: the first key encrypts, every key decrypts, so a key is
  rotated by putting a new one first and re-encrypting nothing: old tokens still open);
- the payment's `award.paid` event records `winner_digest`, an HMAC-SHA256 of the identity and
  the award under a key derived from the journal's (`settings.JOURNAL_HMAC_KEY`), never the
  identity: the journal, its exports, the outbox and webhooks built from events, and the logs
  carry no identity, and an identity row edited, swapped to another award, forged or deleted by
  SQL differs from its event (`problems`, run by the journal's verification, routine and full);
- a row is kept `WINNER_IDENTITY_RETENTION_DAYS` from its recording (`keep_until`) and deleted
  only by `purge_expired`, which records the awards it purged (`winner.purged`, admin chain) so
  the verification knows a digest without a row is a purge, not a deletion; the database refuses
  any UPDATE and any DELETE before `keep_until` (migration jackpot 0018_award_payment);
- decrypted identities are read through `identity_of` and `identities` (the auditors' and
  admins' endpoints, `jackpot.api.awards`; the slip, which prints the name and the number
  masked, to the auditors and admins and to the supervisor or manager who paid the award,
  `paid_and_recorded_by`); who read them is written to the security log, the identities never
  are.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Iterable
from datetime import date, datetime, timedelta

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from core.codes import ErrorCode
from core.errors import ApiError, NotFound
from jackpot.bodies.awards import WinnerIdentityBody, WinnerRecord
from jackpot.models import (
    AuditEvent,
    Award,
    AwardStatus,
    DocumentType,
    Transfer,
    TransferCode,
    WinnerIdentity,
)
from jackpot.money import ledger, locks
from jackpot.money.canonical import canonical_json, chain_hash_matches

PURGED = "winner.purged"
security_log = logging.getLogger("jackpot.security")


def _fernet() -> MultiFernet:
    keys = list(settings.WINNER_IDENTITY_KEYS)
    if not keys:
        raise ImproperlyConfigured("WINNER_IDENTITY_KEYS is empty: winners cannot be identified")
    return MultiFernet([Fernet(key.encode()) for key in keys])


def _digest_key() -> bytes:
    # Derived, so the digest's key is not the chain's own and a digest links no chain.
    return hmac.digest(ledger.journal_key(), b"jackpot.winner-identity", "sha256")


def _plain(identity: WinnerIdentityBody) -> dict[str, str]:
    return {
        "name": identity.name.strip(),
        "date_of_birth": identity.date_of_birth.isoformat(),
        "document_type": identity.document_type.value,
        "document_number": identity.document_number.strip().upper(),
        "nationality": identity.nationality,
    }


def digest(award_id: int, plain: dict[str, str]) -> str:
    """The keyed digest the `award.paid` event records of the identity of `award_id`'s winner."""
    content = canonical_json({"award": award_id, "identity": plain})
    return hmac.digest(_digest_key(), content, "sha256").hex()


def required(award: Award, identity: WinnerIdentityBody | None) -> None:
    """Refuse the payment of an award at or above the threshold without its winner's identity."""
    threshold = int(settings.WINNER_IDENTIFICATION_THRESHOLD_CENTS)
    if identity is None and award.due_cents >= threshold:  # what is paid, corrections included
        raise ApiError(
            ErrorCode.WINNER_IDENTITY_REQUIRED,
            f"award {award.pk} is {award.due_cents} cents, at or above the identification "
            f"threshold ({threshold} cents): the winner's identity (winner: name, date_of_birth, "
            "document_type, document_number, nationality) is required to pay it",
            param="winner",
        )


def record(
    award: Award, identity: WinnerIdentityBody, *, user: User, now: datetime
) -> dict[str, object]:
    """Store `identity` for `award`, encrypted (inside the payment's transaction); what the
    payment's event records of it."""
    plain = _plain(identity)
    token = _fernet().encrypt(json.dumps(plain, sort_keys=True).encode()).decode()
    WinnerIdentity.objects.create(
        award=award,
        ciphertext=token,
        recorded_at=now,
        recorded_by=user,
        keep_until=now + timedelta(days=int(settings.WINNER_IDENTITY_RETENTION_DAYS)),
    )
    return {"winner_identified": True, "winner_digest": digest(award.pk, plain)}


def _opened(row: WinnerIdentity) -> dict[str, str]:
    try:
        value = json.loads(_fernet().decrypt(row.ciphertext.encode()))
    except (InvalidToken, ValueError) as error:
        raise ImproperlyConfigured(
            f"the identity of award {row.award_id} opens with none of WINNER_IDENTITY_KEYS"
        ) from error
    return {str(key): str(item) for key, item in value.items()}


def identity_of(award_id: int, *, reader: str) -> WinnerRecord:
    """The decrypted identity of an award's winner (auditors and admins), or 404; the read is
    written to the security log (who read whose award: never the identity)."""
    row = WinnerIdentity.objects.select_related("recorded_by").filter(award_id=award_id).first()
    if row is None:
        raise NotFound(
            ErrorCode.WINNER_NOT_IDENTIFIED,
            f"award {award_id} has no winner identified",
            param="award",
        )
    plain = _opened(row)
    security_log.info("winner identity of award %s read by %s", award_id, reader)
    return WinnerRecord.model_construct(
        award=award_id,
        name=plain["name"],
        date_of_birth=date.fromisoformat(plain["date_of_birth"]),
        document_type=DocumentType(plain["document_type"]),
        document_number=plain["document_number"],
        nationality=plain["nationality"],
        recorded_at=row.recorded_at,
        recorded_by=row.recorded_by.get_username(),
        keep_until=row.keep_until,
    )


def identities(award_ids: Iterable[int], *, reader: str | None = None) -> dict[int, dict[str, str]]:
    """The decrypted identities of the awards among `award_ids` that have one (the register,
    the payment slip); a `reader`'s read (the register's) is written to the security log."""
    rows = WinnerIdentity.objects.filter(award_id__in=list(award_ids)).order_by("award_id")
    found = {row.award_id: _opened(row) for row in rows}
    if reader is not None and found:
        security_log.info("winner identities of awards %s read by %s", sorted(found), reader)
    return found


def paid_and_recorded_by(award_id: int, user: User) -> bool:
    """Whether `user` paid `award_id` and recorded its winner's identity: the identity row names
    the account (by id) and the payment's `award.paid` event, whose HMAC verifies, names it as
    its actor. Rows the service's own role can write prove nothing alone (issue 37), so both
    must agree; an event that does not verify answers no (fail closed)."""
    recorder = (
        WinnerIdentity.objects.filter(award_id=award_id)
        .values_list("recorded_by_id", flat=True)
        .first()
    )
    if recorder is None or recorder != user.pk:
        return False
    events = AuditEvent.objects.filter(
        kind="award.paid", transfers__code=TransferCode.AWARD_PAID, transfers__award_id=award_id
    ).distinct()
    if len(events) != 1 or events[0].actor != f"user:{user.get_username()}":
        return False
    event = events[0]
    content = ledger.event_content(event, list(event.transfers.order_by("pk")))
    return chain_hash_matches(ledger.journal_key(), event.prev_hash, content, event.hash)


def purge_expired(*, actor: str, now: datetime | None = None) -> list[int]:
    """Delete the identities past their retention, recording which on the journal (one event,
    admin chain, in the same transaction); the awards whose identity was purged."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        expired = list(
            locks.winner_identities(WinnerIdentity.objects.filter(keep_until__lte=now))
            .order_by("award_id")
            .values_list("award_id", flat=True)
        )
        if not expired:
            return []
        WinnerIdentity.objects.filter(award_id__in=expired).delete()
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind=PURGED,
            actor=actor,
            occurred_at=now,
            payload={"awards": expired, "before": now.isoformat()},
        )
    return expired


def problems(*, identified: set[int], purged: set[int]) -> list[str]:
    """Every identity row that differs from the digest its payment's event recorded, or that no
    payment recorded; and every award among `identified` (the payments with a digest that the
    verification's walk read) whose row is missing though not among `purged` (the purges the walk
    read). What is compared is the identities the club holds now (bounded by the retention),
    read with their payments' events by award; never the journal's age."""
    rows = {row.award_id: row for row in WinnerIdentity.objects.order_by("award_id")}
    said: dict[int, str] = {}
    for award_id, payload in (
        Transfer.objects.filter(code=TransferCode.AWARD_PAID, award_id__in=list(rows))
        .filter(event__kind="award.paid")
        .values_list("award_id", "event__payload")
    ):
        if isinstance(payload, dict) and "winner_digest" in payload:
            said[int(award_id)] = str(payload["winner_digest"])
    paid = set(
        Award.objects.filter(pk__in=list(rows), status=AwardStatus.PAID).values_list(
            "pk", flat=True
        )
    )
    found = []
    for award_id in sorted(identified - purged - rows.keys()):
        found.append(
            f"winner of award {award_id}: the payment's event identified a winner, no identity "
            "row holds it (deleted before its purge)"
        )
    for award_id, row in sorted(rows.items()):
        wanted = said.get(award_id)
        if wanted is None or award_id not in paid:
            found.append(f"winner of award {award_id}: an identity row no payment recorded")
            continue
        try:
            plain = _opened(row)
        except ImproperlyConfigured:
            found.append(f"winner of award {award_id}: the identity opens with no key")
            continue
        if not hmac.compare_digest(digest(award_id, plain), wanted):
            found.append(
                f"winner of award {award_id}: the identity differs from its payment's event"
            )
    return found
