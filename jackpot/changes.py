"""A pool's parameters change by two people: one admin proposes, a different one approves.

Compliance 16, 17, 40 (and issue 11 item 5). What a pool pays and takes (stake, meter and reserve
shares, seed, paytable), its name and its verification threshold are changed only here:

    propose   (an admin)                      -> proposed   `pool.change_proposed`
    approve   (another admin)   proposed      -> applied    `pool.changed` (before, after, both)
    reject    (any admin)       proposed      -> rejected   `pool.change_rejected`
    withdraw  (the proposer)    proposed      -> withdrawn  `pool.change_withdrawn`

each an audit event on the pool's chain in the transaction that writes the `ParameterChange`
row, and in the security log (`jackpot.ledger.SECURITY_KINDS`).

Invariants:
- the approver is not the proposer (403 `four_eyes`, and the row's CHECK `change_four_eyes`);
- a change is applied only while none of the pool's tables is open for play, whatever the field
  (409 `pool_tables_open`): raising the verification threshold while tables play would let awards
  through unverified, lowering the stake would refuse rounds in flight. The pool's tables are
  locked (`Lock.TABLE`, exclusive, in id order) before the pool row, so no table opens between the
  check and the commit;
- a change is applied only to the pool it was proposed against: every field it changes must still
  hold the value recorded in `before` (409 `change_stale` otherwise: propose again), and the values
  are checked again against the pool as it now is;
- a proposal is decided once: its status leaves `proposed` under the pool row lock (approval) or
  its own row lock (reject, withdraw), and any second decision is a 409 `change_wrong_status`.

Locks: approval takes the pool's table rows, the pool row, the change's row, then the pool's chain
(`jackpot.locks`); reject and withdraw the change's row then the pool's chain; a proposal only the
pool's chain. A pool's creation stays one admin's act (`jackpot.services.pool_create`): a new pool
has no table, so it takes no stake and pays nothing until a table is linked to it, and linking or
opening a table is itself audited.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from config.errors import ApiError, Conflict, Forbidden, NotFound
from jackpot import ledger, locks
from jackpot.models import ChangeStatus, ParameterChange, Pool
from jackpot.services import PoolChangeRefused, check_seed
from tables.rules.errors import RulesError
from tables.rules.paytables import get_progressive_paytable

#: Every parameter of a pool a change may set. The counters (meter, reserve, versions) are never
#: parameters: they move only by `jackpot.meter`.
POOL_FIELDS = (
    "name",
    "stake_cents",
    "meter_share_bp",
    "reserve_share_bp",
    "seed_cents",
    "verification_threshold_cents",
    "paytable_version",
)
_COUNTERS = [
    "meter_units",
    "reserve_units",
    "meter_version",
    "meter_changed_at",
    "hit_count",
    "award_sequence",
    "award_version",
]


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def _pool(pool_id: int, *, lock: bool = False) -> Pool:
    query = Pool.objects.select_for_update() if lock else Pool.objects
    found = query.filter(pk=pool_id).first()
    if found is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    return found


def check_change(pool: Pool, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The fields `changes` really changes on `pool`, each valid with the others, or a 400:
    `invalid_change` naming the field (`changes.<field>`), `no_change` when nothing differs."""
    unknown = sorted(set(changes) - set(POOL_FIELDS))
    if unknown:
        raise ApiError(
            "invalid_change",
            f"these fields are not a pool's parameters: {', '.join(unknown)}",
            param=f"changes.{unknown[0]}",
        )
    changed = {field: value for field, value in changes.items() if getattr(pool, field) != value}
    if not changed:
        raise ApiError(
            "no_change",
            f"pool {pool.pk} already has these values: nothing to change",
            param="changes",
        )
    if "seed_cents" in changed and type(changed["seed_cents"]) is int:
        try:
            check_seed(changed["seed_cents"])
        except PoolChangeRefused as refused:
            raise ApiError("invalid_change", str(refused), param="changes.seed_cents") from None
    if "paytable_version" in changed:
        try:
            paytable = get_progressive_paytable(str(changed["paytable_version"]))
        except RulesError as unknown_table:
            raise ApiError(
                "invalid_change", unknown_table.message, param="changes.paytable_version"
            ) from None
        if paytable.jackpot_percent_bp != 10_000:
            raise ApiError(
                "invalid_change",
                f"paytable {paytable.version} does not pay the whole meter",
                param="changes.paytable_version",
            )
    candidate = Pool(**{f.attname: getattr(pool, f.attname) for f in Pool._meta.concrete_fields})
    candidate._state.adding = False  # the pool itself, not a new one (its name is its own)
    for field, value in changed.items():
        setattr(candidate, field, value)
    try:  # the model's own rules: field bounds, shares at most 10,000 together, a unique name
        candidate.full_clean(exclude=_COUNTERS)
    except ValidationError as invalid:
        errors = invalid.message_dict
        field = next((f for f in errors if f in changed), next(iter(errors)))
        named = field if field in POOL_FIELDS else next(iter(changed))
        raise ApiError(
            "invalid_change",
            f"{named}: {' '.join(errors[field])}",
            param=f"changes.{named}",
        ) from None
    return changed


@transaction.atomic
def change_propose(
    *, pool_id: int, changes: Mapping[str, Any], reason: str, user: User
) -> ParameterChange:
    """File a proposal to change `pool_id`'s parameters: the new values, the current ones (its
    `before`), who and why. Nothing about the pool changes until another admin approves."""
    pool = _pool(pool_id)
    changed = check_change(pool, changes)
    now = timezone.now()
    change = ParameterChange.objects.create(
        pool=pool,
        changes=changed,
        before={field: getattr(pool, field) for field in changed},
        reason=reason,
        proposed_by=user,
        proposed_at=now,
    )
    ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind="pool.change_proposed",
        actor=_actor(user),
        occurred_at=now,
        payload={
            "pool": pool.pk,
            "change": change.pk,
            "changes": change.changes,
            "before": change.before,
            "reason": reason,
        },
    )
    return change


def _proposed(pool_id: int, change_id: int) -> ParameterChange:
    """The change's row, locked; 404 if the pool has no such change, 409 if it was decided."""
    change = (
        ParameterChange.objects.select_for_update()
        .select_related("proposed_by")
        .filter(pk=change_id, pool_id=pool_id)
        .first()
    )
    if change is None:
        raise NotFound(
            "change_not_found", f"pool {pool_id} has no change {change_id}", param="change"
        )
    if change.status != ChangeStatus.PROPOSED:
        raise Conflict(
            "change_wrong_status",
            f"change {change_id} is already {change.status}: only a proposed change is decided",
            param="change",
        )
    return change


def _decided(
    change: ParameterChange, user: User, status: ChangeStatus, note: str, now: datetime
) -> None:
    change.status = status
    change.decided_by = user
    change.decided_at = now
    change.decision_note = note
    change.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])


@locks.retried
def change_approve(*, pool_id: int, change_id: int, user: User, note: str = "") -> ParameterChange:
    """A second admin approves a proposed change: it is applied to the pool, now, if the pool's
    tables are all closed for play and the pool still holds the values the proposal saw."""
    with transaction.atomic():
        # Lock.TABLE before Lock.POOL: a table of the pool cannot open until this commits.
        tables = list(
            Pool(pk=pool_id)
            .tables.select_for_update()
            .order_by("pk")
            .values_list("name", "enabled")
        )
        pool = _pool(pool_id, lock=True)
        change = _proposed(pool_id, change_id)
        if change.proposed_by_id == user.pk:
            raise Forbidden(
                "four_eyes",
                "the admin who proposed a change cannot also approve it: another admin approves",
                param="change",
            )
        open_tables = [name for name, enabled in tables if enabled]
        if open_tables:
            raise Conflict(
                "pool_tables_open",
                f"pool {pool_id}'s parameters change only while its tables are closed for play; "
                f"open now: {', '.join(open_tables)}. Close them (PATCH /api/v1/tables/{{table}} "
                '{"enabled": false}) and approve again',
                param="change",
            )
        now_values = {field: getattr(pool, field) for field in change.before}
        if now_values != change.before:
            moved = sorted(f for f in change.before if now_values[f] != change.before[f])
            raise Conflict(
                "change_stale",
                f"the pool changed since change {change_id} was proposed ({', '.join(moved)}): "
                "reject it and propose again",
                param="change",
            )
        try:
            check_change(pool, change.changes)
        except ApiError as refusal:
            raise Conflict(
                "change_stale",
                f"change {change_id} no longer fits the pool as it is: {refusal.message}",
                param="change",
            ) from None
        seed = change.changes.get("seed_cents")
        if seed is not None and seed > pool.meter_cents:
            # The meter is never below its reset (compliance 12): a higher seed waits until the
            # meter has grown to it (the meter never goes down but by a hit).
            raise Conflict(
                "seed_above_meter",
                f"the meter ({pool.meter_cents} cents) is below the new seed ({seed} cents): it "
                "would be under its own reset until the next hit. Approve when the meter has "
                "reached the new seed",
                param="change",
            )
        for field, value in change.changes.items():
            setattr(pool, field, value)
        pool.save(update_fields=list(change.changes))
        now = timezone.now()
        _decided(change, user, ChangeStatus.APPLIED, note, now)
        ledger.record(
            chain=ledger.pool_chain(pool.pk),
            kind="pool.changed",
            actor=_actor(user),
            occurred_at=now,
            payload={
                "pool": pool.pk,
                "before": change.before,
                "after": change.changes,
                "change": change.pk,
                "proposed_by": change.proposed_by.get_username(),
                "proposed_at": change.proposed_at.isoformat(),
                "approved_by": user.get_username(),
                "note": note,
            },
        )
        return change


def _close(
    *, pool_id: int, change_id: int, user: User, note: str, status: ChangeStatus
) -> ParameterChange:
    with transaction.atomic():
        change = _proposed(pool_id, change_id)
        if status == ChangeStatus.WITHDRAWN and change.proposed_by_id != user.pk:
            raise Forbidden(
                "not_the_proposer",
                f"only {change.proposed_by.get_username()}, who proposed change {change_id}, "
                "may withdraw it; another admin rejects it",
                param="change",
            )
        now = timezone.now()
        _decided(change, user, status, note, now)
        ledger.record(
            chain=ledger.pool_chain(pool_id),
            kind=f"pool.change_{status}",
            actor=_actor(user),
            occurred_at=now,
            payload={
                "pool": pool_id,
                "change": change.pk,
                "changes": change.changes,
                "proposed_by": change.proposed_by.get_username(),
                "note": note,
            },
        )
        return change


def change_reject(*, pool_id: int, change_id: int, user: User, note: str) -> ParameterChange:
    """An admin (any, the proposer too) rejects a proposed change, saying why."""
    return _close(
        pool_id=pool_id, change_id=change_id, user=user, note=note, status=ChangeStatus.REJECTED
    )


def change_withdraw(*, pool_id: int, change_id: int, user: User, note: str = "") -> ParameterChange:
    """The proposer takes the proposal back."""
    return _close(
        pool_id=pool_id, change_id=change_id, user=user, note=note, status=ChangeStatus.WITHDRAWN
    )
