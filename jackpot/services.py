"""Writes to the progressive: pools and staff tokens. One transaction each, audit row included.

Round-level money (stakes, awards, refunds) is decided by `jackpot.movements` for the round
lifecycle (`tables.rounds`); this module holds what is not tied to a round.

A pool is created by two admins (one proposes, another approves: `jackpot.changes`
`pool_create_propose`, whose approval calls `pool_insert` with both people), and so is every
later change of its parameters and every table linked to it. `pool_create` is the operator's
(`seed_demo`, who holds the database): no admin site or API calls it.

A staff token is issued to its owner only (the signed-in person, for themselves), shown once:
no one ever sees a colleague's credential.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

from jackpot import ledger, movements
from jackpot.models import UNITS_PER_CENT, Account, AccountKind, Pool, StaffToken
from jackpot.tokens import issue_token

#: The staff's roles. `surveillance` reviews the video of a win before its approval
#: (`jackpot.surveillance`); it reads the award queue and records reviews, nothing else. A
#: `manager` takes the money decisions above a supervisor's (a referral's decision) and
#: configures nothing; an admin configures and decides no money (`jackpot.duties`).
ROLES = ("supervisor", "auditor", "admin", "surveillance", "manager")


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
    """The operator's pool (`seed_demo`): created at once, by one actor (`pool_insert`)."""
    values = {
        "name": name,
        "stake_cents": stake_cents,
        "meter_share_bp": meter_share_bp,
        "reserve_share_bp": reserve_share_bp,
        "seed_cents": seed_cents,
        "verification_threshold_cents": verification_threshold_cents,
    }
    return pool_insert(values=values, actor=actor)


@transaction.atomic
def pool_insert(
    *, values: Mapping[str, Any], actor: str, approval: Mapping[str, Any] | None = None
) -> Pool:
    """Create a pool, its accounts, and its first meter at the seed, funded by the house; the
    `pool.created` event carries `approval` (the change, both people) when two admins made it.
    PoolChangeRefused: a seed under one cent (`check_seed`)."""
    seed_cents = int(values["seed_cents"])
    check_seed(seed_cents)
    now = timezone.now()
    pool = Pool.objects.create(
        **values, meter_units=seed_cents * UNITS_PER_CENT, meter_changed_at=now
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
            **values,
            "paytable_version": pool.paytable_version,
            "surveillance_required": pool.surveillance_required,
            **(approval or {}),
        },
        postings=movements.seed_pool(seed_cents=seed_cents),
    )
    return pool


@transaction.atomic
def staff_token_issue(*, user: User, revoke_others: bool, actor: str) -> str:
    """Issue an API token for a staff account; returns the raw token (shown once). Only for the
    account's owner: the signed-in person's own page, or the demo's people (`seed_demo`). It
    expires STAFF_TOKEN_DAYS later, as its event says."""
    now = timezone.now()
    if revoke_others:
        StaffToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=now)
    token = issue_token("staff")
    expires_at = now + timedelta(days=settings.STAFF_TOKEN_DAYS)
    row = StaffToken.objects.create(
        user=user, token_hash=token.token_hash, prefix=token.prefix, expires_at=expires_at
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="staff_token.issued",
        actor=actor,
        occurred_at=now,
        payload={
            "user": user.get_username(),
            # Whose, by id too: a request's check of the token holds across renames
            # (`jackpot.authority.token_explained`).
            "user_id": user.pk,
            # The row and its SHA-256, as stored: the journal then covers whose token it is
            # (`jackpot.staff_records`); the token itself is never recoverable from them.
            "token": row.pk,
            "token_hash": token.token_hash,
            "prefix": token.prefix,
            "expires_at": expires_at.isoformat(),
            "revoked_others": revoke_others,
        },
    )
    return token.raw


def role_group(role: str) -> Group:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    group, _ = Group.objects.get_or_create(name=role)
    return group
