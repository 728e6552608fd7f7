"""Writes to the progressive: pools and staff tokens. One transaction each, audit row included.

Round-level money (stakes, awards, refunds) is decided by `jackpot.movements` for the round
lifecycle (`tables.rounds`); this module holds what is not tied to a round.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

from jackpot import ledger, movements
from jackpot.models import UNITS_PER_CENT, Account, AccountKind, Pool, StaffToken
from jackpot.tokens import issue_token
from tables.rules.paytables import get_progressive_paytable

ROLES = ("supervisor", "auditor", "admin")
# What a pool pays and takes: regulators require them fixed while its tables are open for play.
MONEY_FIELDS = (
    "stake_cents",
    "meter_share_bp",
    "reserve_share_bp",
    "seed_cents",
    "paytable_version",
)
POOL_FIELDS = ("name", "verification_threshold_cents", *MONEY_FIELDS)


class PoolChangeRefused(ValueError):
    """A change the rules do not allow now; the message says what to do."""


def check_seed(seed_cents: int) -> None:
    """A pool's seed is at least one cent: a jackpot wins the whole meter, which a hit resets to
    the seed, so a seed of 0 would make the next royal a jackpot of 0 cents (refused by
    `jackpot.movements.grant_awards`, and by the database's CHECK `pool_seed_positive`)."""
    if seed_cents < 1:
        raise PoolChangeRefused(
            f"seed_cents must be at least 1 cent, got {seed_cents}: the meter resets to the seed "
            "after a jackpot, and a jackpot of 0 cents cannot be won"
        )


@transaction.atomic
def pool_create(
    *,
    name: str,
    actor: str,
    stake_cents: int = 500,
    meter_share_bp: int = 2000,
    reserve_share_bp: int = 800,
    seed_cents: int = 1_000_000,
    verification_threshold_cents: int = 100_000,
) -> Pool:
    """Create a pool, its accounts, and its first meter at the seed, funded by the house.
    PoolChangeRefused: a seed under one cent (`check_seed`)."""
    check_seed(seed_cents)
    now = timezone.now()
    pool = Pool.objects.create(
        name=name,
        stake_cents=stake_cents,
        meter_share_bp=meter_share_bp,
        reserve_share_bp=reserve_share_bp,
        seed_cents=seed_cents,
        verification_threshold_cents=verification_threshold_cents,
        meter_units=seed_cents * UNITS_PER_CENT,
        meter_changed_at=now,
    )
    Account.objects.bulk_create(Account(pool=pool, kind=kind) for kind in AccountKind)
    ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind="pool.created",
        actor=actor,
        pool_id=pool.pk,
        occurred_at=now,
        payload={
            "pool": pool.pk,
            "name": name,
            "stake_cents": stake_cents,
            "meter_share_bp": meter_share_bp,
            "reserve_share_bp": reserve_share_bp,
            "seed_cents": seed_cents,
            "verification_threshold_cents": verification_threshold_cents,
            "paytable_version": pool.paytable_version,
        },
        postings=movements.seed_pool(seed_cents=seed_cents),
    )
    return pool


def check_pool_change(pool: Pool, changes: dict[str, Any]) -> dict[str, Any]:
    """The fields `changes` really changes, or PoolChangeRefused saying why it may not."""
    unknown = set(changes) - set(POOL_FIELDS)
    if unknown:
        raise PoolChangeRefused(
            f"these fields cannot be changed here: {', '.join(sorted(unknown))}"
        )
    changed = {field: value for field, value in changes.items() if getattr(pool, field) != value}
    money = [field for field in changed if field in MONEY_FIELDS]
    if money and pool.tables.filter(enabled=True).exists():
        raise PoolChangeRefused(
            f"{', '.join(money)} cannot change while the pool's tables are open for play: "
            "close (disable) its tables first"
        )
    if "seed_cents" in changed:
        check_seed(int(changed["seed_cents"]))
    if "paytable_version" in changed:
        paytable = get_progressive_paytable(str(changed["paytable_version"]))
        if paytable.jackpot_percent_bp != 10_000:
            raise PoolChangeRefused(f"paytable {paytable.version} does not pay the whole meter")
    return changed


@transaction.atomic
def pool_update(*, pool_id: int, changes: dict[str, Any], actor: str) -> Pool:
    """Change a pool's settings, with its audit event (before and after).

    Money parameters (stake, shares, seed, paytable) cannot change while any of the pool's
    tables is enabled: close the tables first. The pool row is locked, then its chain.
    """
    pool = Pool.objects.select_for_update().get(pk=pool_id)
    changed = check_pool_change(pool, changes)
    if not changed:
        return pool
    before = {field: getattr(pool, field) for field in changed}
    for field, value in changed.items():
        setattr(pool, field, value)
    pool.full_clean(exclude=["meter_units", "reserve_units"])
    pool.save(update_fields=list(changed))
    ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind="pool.changed",
        actor=actor,
        payload={"pool": pool.pk, "before": before, "after": changed},
    )
    return pool


@transaction.atomic
def staff_token_issue(*, user: User, revoke_others: bool, actor: str) -> str:
    """Issue an API token for a staff account; returns the raw token (shown once)."""
    now = timezone.now()
    if revoke_others:
        StaffToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=now)
    token = issue_token("staff")
    StaffToken.objects.create(user=user, token_hash=token.token_hash, prefix=token.prefix)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff_token.issued",
        actor=actor,
        occurred_at=now,
        payload={
            "user": user.get_username(),
            "prefix": token.prefix,
            "revoked_others": revoke_others,
        },
    )
    return token.raw


def role_group(role: str) -> Group:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    group, _ = Group.objects.get_or_create(name=role)
    return group
