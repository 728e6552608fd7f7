"""Writes to the progressive: pools and staff tokens. One transaction each, audit row included.

Round-level money (stakes, awards, refunds) is decided by `jackpot.movements` for the round
lifecycle (`tables.rounds`); this module holds what is not tied to a round.

A pool is created by one admin; every later change of its parameters takes two (one proposes,
another approves: `jackpot.changes`). Creation needs no second person because a new pool can
neither take nor pay anything: it has no table, and a table is linked to it (and opened for
play) only by the table's own administration, which is audited on the `admin` chain, and only
the pool's parameters as created are ever in play until another admin approves a change.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

from jackpot import ledger, movements
from jackpot.models import UNITS_PER_CENT, Account, AccountKind, Pool, StaffToken
from jackpot.tokens import issue_token

ROLES = ("supervisor", "auditor", "admin")


class PoolChangeRefused(ValueError):
    """A pool the rules do not allow; the message says why."""


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
