"""The two-person engine: one person proposes a change, a different one approves it.

Whatever one admin must not do alone is a `ParameterChange` of a kind (`ChangeKind`): a pool's
parameters, its stop or a new pool (`jackpot.pools`), a table linked or moved and a terminal's
token (`tables.services`), a staff account's creation, roles, flags or second-factor reset
(`jackpot.staff.accounts`). This module is what they share; each kind's own module checks and
applies it, in the same transaction, with its own audit event.

Invariants:
- every step is an audit event in the transaction that writes the row: `<prefix>.change_proposed`,
  `.change_rejected`, `.change_withdrawn` (a pool's parameters and stop on the pool's chain, every
  other kind on the `admin` chain), all in the security log;
- the approver is neither the proposer nor the change's subject, as the authentic proposal event
  says (403 `four_eyes`, the row's CHECK `change_four_eyes`; 409 `change_unexplained` when the
  row differs from its event), and shows a fresh second-factor code (`presence`);
- a proposal is decided once, under its row's lock (409 `change_wrong_status`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models.fields.json import KT
from django.utils import timezone

from core.errors import Conflict, Forbidden, NotFound
from jackpot.approvals.presence import Presence, presence_refused
from jackpot.models import AuditEvent, ChangeKind, ChangeStatus, ParameterChange, Pool
from jackpot.money import ledger, locks

security_log = logging.getLogger("jackpot.security")


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


#: The kinds written on their pool's own chain.
POOL_CHAIN_KINDS = (
    ChangeKind.POOL_PARAMETERS,
    ChangeKind.POOL_STOP,
    ChangeKind.POOL_CORRECTION,
    ChangeKind.POOL_REPLACE,
    ChangeKind.POOL_ORPHANS_RECOVER,
)
#: The money decisions of supervisors and managers, never of an admin: a correction
#: (`jackpot.pools.corrections`) and an orphans' recovery (`jackpot.pools.orphans`).
MONEY_KINDS = (ChangeKind.POOL_CORRECTION, ChangeKind.POOL_ORPHANS_RECOVER)
#: The kinds an admin decides: all but the money decisions.
CONFIGURATION_KINDS = tuple(kind for kind in ChangeKind if kind not in MONEY_KINDS)


def change_chain(change: ParameterChange) -> str:
    """A pool's parameters, its stop and its corrections change on the pool's chain; every other
    kind on the `admin` chain."""
    if change.kind in POOL_CHAIN_KINDS and change.pool_id is not None:
        return ledger.pool_chain(change.pool_id)
    return ledger.ADMIN_CHAIN


def _about(change: ParameterChange) -> dict[str, Any]:
    """What each event of a change names: the change, its pool, its subject, its kind."""
    about: dict[str, Any] = {"change": change.pk, "kind": change.kind}
    if change.pool_id is not None:
        about["pool"] = change.pool_id
    if change.subject is not None:
        about["user"] = change.subject.get_username()
    return about


def _record(change: ParameterChange, step: str, user: User, now: datetime, **facts: Any) -> None:
    ledger.record(
        chain=change_chain(change),
        kind=f"{change.kind.partition('.')[0]}.change_{step}",
        actor=_actor(user),
        occurred_at=now,
        payload={**_about(change), "changes": change.changes, **facts},
    )


@transaction.atomic
def propose(
    *,
    kind: ChangeKind,
    changes: Mapping[str, Any],
    before: Mapping[str, Any],
    reason: str,
    user: User,
    pool: Pool | None = None,
    subject: User | None = None,
) -> ParameterChange:
    """File a two-person change of `kind`, already checked by its module: the new values, the
    current ones (`before`), who and why, and its audit event. Nothing changes until another
    admin approves."""
    now = timezone.now()
    change = ParameterChange.objects.create(
        kind=kind,
        pool=pool,
        subject=subject,
        changes=dict(changes),
        before=dict(before),
        reason=reason,
        proposed_by=user,
        proposed_at=now,
    )
    _record(
        change,
        "proposed",
        user,
        now,
        before=change.before,
        reason=reason,
        # Who filed it and about whom, by id: its approval checks the row against them
        # (`jackpot.approvals.changes.proposal_matches`) whatever the names become meanwhile.
        proposed_by_id=user.pk,
        subject_id=change.subject_id,
    )
    return change


def proposed(
    change_id: int, *, kinds: tuple[ChangeKind, ...], pool_id: int | None = None
) -> ParameterChange:
    """The change's row, locked; 404 if there is no such change of these kinds (of the pool, when
    one is named), 409 if it was decided."""
    found = locks.parameter_changes().select_related("proposed_by")
    if pool_id is not None:
        found = found.filter(pool_id=pool_id)
    change = found.filter(pk=change_id, kind__in=kinds).first()
    if change is None:
        where = f"pool {pool_id} has" if pool_id is not None else "there is"
        raise NotFound("change_not_found", f"{where} no change {change_id}", param="change")
    if change.status != ChangeStatus.PROPOSED:
        raise Conflict(
            "change_wrong_status",
            f"change {change_id} is already {change.status}: only a proposed change is decided",
            param="change",
        )
    return change


def four_eyes(change: ParameterChange, user: User, *, presence: Presence | None) -> None:
    """403 `four_eyes` unless `user` may approve `change`: not its proposer, not its subject,
    as its proposal event says (409 `change_unexplained` when the row differs from it: a row
    the service's role can write proves nothing about who proposed what), and present with a
    fresh code (`second_factor.presence_refused`)."""
    presence_refused(user, presence)
    if not proposal_matches(change):
        raise Conflict(
            "change_unexplained",
            f"change {change.pk} is not what its proposal in the journal filed: it cannot be "
            "approved (the journal's verification names the difference)",
            param="change",
        )
    if change.proposed_by_id == user.pk:
        raise Forbidden(
            "four_eyes",
            "the admin who proposed a change cannot also approve it: another admin approves",
            param="change",
        )
    if change.subject_id == user.pk:
        raise Forbidden(
            "four_eyes",
            "no one approves a change of their own account: another admin approves",
            param="change",
        )


def _decided(
    change: ParameterChange, user: User, status: ChangeStatus, note: str, now: datetime
) -> None:
    change.status = status
    change.decided_by = user
    change.decided_at = now
    change.decision_note = note
    change.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])


def applied(change: ParameterChange, user: User, note: str, now: datetime) -> dict[str, Any]:
    """Mark `change` applied by `user` (its module has applied it); the facts its applied event
    carries: the change, both people, when it was proposed, the approver's note."""
    _decided(change, user, ChangeStatus.APPLIED, note, now)
    return {
        "change": change.pk,
        "proposed_by": change.proposed_by.get_username(),
        "proposed_at": change.proposed_at.isoformat(),
        "approved_by": user.get_username(),
        "note": note,
    }


def _close(
    *,
    pool_id: int | None,
    change_id: int,
    user: User,
    note: str,
    status: ChangeStatus,
    kinds: tuple[ChangeKind, ...] | None,
) -> ParameterChange:
    """Reject or withdraw a proposed change of `kinds`; by default an admin's: of a pool's
    parameters or stop when `pool_id` is named, any but a correction otherwise (the admin's
    list of changes)."""
    if kinds is None:
        pooled = pool_id is not None
        kinds = tuple(k for k in CONFIGURATION_KINDS if not pooled or k in POOL_CHAIN_KINDS)
    with transaction.atomic():
        change = proposed(change_id, kinds=kinds, pool_id=pool_id)
        if status == ChangeStatus.WITHDRAWN and change.proposed_by_id != user.pk:
            raise Forbidden(
                "not_the_proposer",
                f"only {change.proposed_by.get_username()}, who proposed change {change_id}, "
                "may withdraw it; another admin rejects it",
                param="change",
            )
        now = timezone.now()
        _decided(change, user, status, note, now)
        _record(change, status, user, now, proposed_by=change.proposed_by.get_username(), note=note)
        return change


def change_reject(
    *,
    change_id: int,
    user: User,
    note: str,
    pool_id: int | None = None,
    kinds: tuple[ChangeKind, ...] | None = None,
) -> ParameterChange:
    """An admin (any, the proposer too) rejects a proposed change, saying why; `kinds`: the
    kinds the caller decides (`_close`)."""
    return _close(
        pool_id=pool_id,
        change_id=change_id,
        user=user,
        note=note,
        status=ChangeStatus.REJECTED,
        kinds=kinds,
    )


def change_withdraw(
    *,
    change_id: int,
    user: User,
    note: str = "",
    pool_id: int | None = None,
    kinds: tuple[ChangeKind, ...] | None = None,
) -> ParameterChange:
    """The proposer takes the proposal back."""
    return _close(
        pool_id=pool_id,
        change_id=change_id,
        user=user,
        note=note,
        status=ChangeStatus.WITHDRAWN,
        kinds=kinds,
    )


#: The events that file a two-person proposal, one per prefix of `ChangeKind`.
PROPOSED_EVENTS = (
    "pool.change_proposed",
    "staff.change_proposed",
    "table.change_proposed",
    "terminal.change_proposed",
)


def proposal_matches(change: ParameterChange) -> bool:
    """Whether `change`'s row is what its authentic proposal event filed: its kind, content,
    `before`, pool, subject and proposer (by id; by name in the events written before ids)."""
    events = list(
        AuditEvent.objects.filter(kind__in=PROPOSED_EVENTS)
        .alias(change=KT("payload__change"))
        .filter(change=str(change.pk))
    )
    if len(events) != 1 or not ledger.authentic(events[0]):
        security_log.warning(
            "journal does not explain %s: %s", f"change {change.pk}", "no authentic proposal event"
        )
        return False
    event, said = events[0], events[0].payload
    if "proposed_by_id" in said:
        proposer = said["proposed_by_id"] == change.proposed_by_id
        # A new account's change names its subject once applied: never before.
        subject = said["subject_id"] == change.subject_id
    else:
        proposer = event.actor == f"user:{change.proposed_by.get_username()}"
        subject = said.get("user") == (change.subject.get_username() if change.subject else None)
    matches = (
        proposer
        and subject
        and said.get("kind") == change.kind
        and said.get("changes") == change.changes
        and said.get("before") == change.before
        and said.get("pool") == change.pool_id
    )
    if not matches:
        security_log.warning(
            "journal does not explain %s: %s",
            f"change {change.pk}",
            "its row differs from its proposal event",
        )
    return matches
