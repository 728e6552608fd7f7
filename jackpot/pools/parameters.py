"""Two-person changes of a pool: its parameters and its creation, on the shared machinery of
`jackpot.approvals.changes` (propose, approve by another admin, reject, withdraw).

Invariants:
- the approver is neither the proposer nor the change's subject (403 `four_eyes`, and the row's
  CHECK `change_four_eyes`);
- a change is applied only while none of the pool's tables is open for play (409
  `pool_tables_open`) and none of its rounds is open (409 `pool_round_open`): the tables,
  handed in as `jackpot.pools.at_rest.PoolTables`, are locked before the pool row;
- a change applies only if every field it changes still holds its `before` value (409
  `change_stale`), and a proposal is decided once (409 `change_wrong_status`);
- the increment terms (`TERMS`) never change on a pool (409 `terms_fixed`, proposed or approved):
  a running progressive keeps its terms, a stopped one changes no more, and new terms start a new
  pool (`jackpot.pools.replacement`, compliance 56);
- each step is an audit event on the pool's chain (a creation on the `admin` chain), in the
  security log.

The states, the locks and the reasons: docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from jackpot.approvals.changes import applied, four_eyes, propose, proposed
from jackpot.approvals.presence import Presence
from jackpot.models import ChangeKind, ParameterChange, Pool, PoolStatus
from jackpot.money import ledger, locks
from jackpot.pools import at_rest
from jackpot.pools.creation import PoolChangeRefused, check_seed, pool_insert
from rules.errors import RulesError
from rules.paytables import get_progressive_paytable

#: Every parameter of a pool a change may set. The counters (meter, reserve, versions) are never
#: parameters: they move only by `jackpot.money.meter`.
POOL_FIELDS = (
    "name",
    "stake_cents",
    "meter_share_bp",
    "reserve_share_bp",
    "seed_cents",
    "verification_threshold_cents",
    "paytable_version",
    "surveillance_required",
)
#: The increment terms (compliance 56: stake, shares, start value, paytable; the rounding is the
#: code's, `jackpot.money.meter`, the same for every pool): fixed while the progressive runs.
TERMS = ("stake_cents", "meter_share_bp", "reserve_share_bp", "seed_cents", "paytable_version")
#: A new pool's parameters (its paytable and its surveillance are the model's defaults; a change
#: sets others).
CREATE_FIELDS = tuple(
    field for field in POOL_FIELDS if field not in ("paytable_version", "surveillance_required")
)
#: What a pool's parameter was before an event recorded it: the value migration jackpot 0018
#: gave the pools that existed then (their `pool.created` events do not name it).
FIELD_DEFAULTS: dict[str, object] = {"surveillance_required": True}
_COUNTERS = [
    "meter_units",
    "reserve_units",
    "meter_version",
    "meter_changed_at",
    "hit_count",
    "last_award_number",
    "award_version",
]


def _actor(user: User) -> str:
    return f"user:{user.get_username()}"


def _pool(pool_id: int, *, lock: bool = False) -> Pool:
    found = locks.pool_row(pool_id) if lock else Pool.objects.filter(pk=pool_id).first()
    if found is None:
        raise NotFound("pool_not_found", f"no pool {pool_id}", param="pool")
    return found


def refuse_terms(pool: Pool, changes: Mapping[str, Any]) -> None:
    """409 `terms_fixed` naming the first increment term `changes` would change on `pool`: a
    progressive keeps its terms while it runs; new terms start a new pool (its replacement)."""
    changed = [f for f in TERMS if f in changes and getattr(pool, f) != changes[f]]
    if changed:
        raise Conflict(
            "terms_fixed",
            f"pool {pool.pk}'s increment terms never change while it runs ({', '.join(changed)}): "
            f"propose its replacement with the new terms (POST /api/v1/pools/{pool.pk}/replace); "
            "nothing was written",
            param=f"changes.{changed[0]}",
        )


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


def change_propose(
    *, pool_id: int, changes: Mapping[str, Any], reason: str, user: User
) -> ParameterChange:
    """File a proposal to change `pool_id`'s parameters: the new values, the current ones (its
    `before`), who and why. Nothing about the pool changes until another admin approves."""
    pool = _pool(pool_id)
    if pool.status == PoolStatus.STOPPED:
        raise Conflict(
            "pool_stopped",
            f"pool {pool_id} was stopped for good: its parameters never change again",
            param="pool",
        )
    refuse_terms(pool, changes)
    changed = check_change(pool, changes)
    before = {field: getattr(pool, field) for field in changed}
    return propose(
        kind=ChangeKind.POOL_PARAMETERS,
        pool=pool,
        changes=changed,
        before=before,
        reason=reason,
        user=user,
    )


@locks.retried
def change_approve(
    *,
    pool_id: int,
    change_id: int,
    user: User,
    pool_tables: at_rest.PoolTables | None = None,
    note: str = "",
    presence: Presence | None = None,
) -> ParameterChange:
    """A second admin approves a proposed change: it is applied to the pool, now, if the pool's
    tables are all closed for play and the pool still holds the values the proposal saw."""
    with transaction.atomic():
        # Lock.TABLE before Lock.POOL: a table of the pool cannot open until this commits.
        pool_tables = pool_tables or at_rest.registered()
        tables = pool_tables.lock(pool_id)
        pool = _pool(pool_id, lock=True)
        change = proposed(change_id, kinds=(ChangeKind.POOL_PARAMETERS,), pool_id=pool_id)
        four_eyes(change, user, presence=presence)
        at_rest.refuse_unless_at_rest(pool_id, tables, pool_tables, doing="parameters change")
        if pool.status == PoolStatus.STOPPED:
            raise Conflict(
                "pool_stopped",
                f"pool {pool_id} was stopped for good: its parameters never change again",
                param="change",
            )
        # A proposal filed before the terms were fixed (compliance 56) is refused as a new one is.
        refuse_terms(pool, change.changes)
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
        for field, value in change.changes.items():
            setattr(pool, field, value)
        pool.save(update_fields=list(change.changes))
        now = timezone.now()
        ledger.record(
            chain=ledger.pool_chain(pool.pk),
            kind="pool.changed",
            actor=_actor(user),
            occurred_at=now,
            payload={
                "pool": pool.pk,
                "before": change.before,
                "after": change.changes,
                **applied(change, user, note, now),
            },
        )
        return change


def pool_create_propose(*, values: Mapping[str, Any], reason: str, user: User) -> ParameterChange:
    """Propose a new pool: its parameters (the model's defaults for those not given), checked as
    a change's are (400 `invalid_change` naming the field). Another admin creates it."""
    unknown = sorted(set(values) - set(CREATE_FIELDS))
    if unknown:
        raise ApiError(
            "invalid_change",
            f"a new pool's parameters are {', '.join(CREATE_FIELDS)}, not {', '.join(unknown)}",
            param=f"changes.{unknown[0]}",
        )
    blank = Pool()
    full = {field: values.get(field, getattr(blank, field)) for field in CREATE_FIELDS}
    check_change(blank, full)
    return propose(kind=ChangeKind.POOL_CREATE, changes=full, before={}, reason=reason, user=user)


@transaction.atomic
def pool_create_approve(
    *, change_id: int, user: User, note: str = "", presence: Presence | None = None
) -> ParameterChange:
    """A second admin approves a proposed pool: it is created now (its accounts, its meter at the
    seed, `pool.created` on its chain with both people), unless its name was taken meanwhile
    (409 `change_stale`). It takes no stake until a table is linked to it (`table.move`)."""
    change = proposed(change_id, kinds=(ChangeKind.POOL_CREATE,))
    four_eyes(change, user, presence=presence)
    if Pool.objects.filter(name=change.changes["name"]).exists():
        raise Conflict(
            "change_stale",
            f"a pool named {change.changes['name']!r} was created since change {change_id} was "
            "proposed: reject it and propose again",
            param="change",
        )
    now = timezone.now()
    facts = applied(change, user, note, now)
    change.pool = pool_insert(values=change.changes, actor=_actor(user), approval=facts)
    change.save(update_fields=["pool"])
    return change
