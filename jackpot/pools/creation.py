"""A pool created: its accounts, its meter at the seed funded by the house, its `pool.created`
event. Two admins create one (`jackpot.pools.parameters.pool_create_approve` calls `pool_insert`
with both people); `pool_create` is the operator's (`seed_demo`): no admin site or API calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from jackpot.models import UNITS_PER_CENT, Account, AccountKind, Pool
from jackpot.money import ledger, movements


class PoolChangeRefused(ValueError):
    """A pool the rules do not allow; the message says why."""


def check_seed(seed_cents: int) -> None:
    """A pool's seed is at least one cent: a jackpot wins the whole meter, which a hit resets to
    the seed, so a seed of 0 would make the next royal a jackpot of 0 cents (refused by
    `jackpot.money.movements.grant_awards`, and by the database's CHECK `pool_seed_positive`)."""
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
    pool = pool_row_insert(values=values)
    pool_created(pool, values=values, actor=actor, approval=approval)
    return pool


def pool_row_insert(*, values: Mapping[str, Any]) -> Pool:
    """A new pool's row, at its seed, and its accounts; nothing recorded yet (`pool_created`,
    in the same transaction): a caller that writes other pools' rows first (a replacement,
    `jackpot.pools.replacement`) takes the chains' heads after them."""
    seed_cents = int(values["seed_cents"])
    check_seed(seed_cents)
    pool = Pool.objects.create(
        **values, meter_units=seed_cents * UNITS_PER_CENT, meter_changed_at=timezone.now()
    )
    Account.objects.bulk_create(Account(pool=pool, kind=kind) for kind in AccountKind)
    return pool


def pool_created(
    pool: Pool, *, values: Mapping[str, Any], actor: str, approval: Mapping[str, Any] | None
) -> None:
    """The `pool.created` event of a row `pool_row_insert` wrote: its values and its seed."""
    ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind="pool.created",
        actor=actor,
        pool_id=pool.pk,
        occurred_at=pool.meter_changed_at,
        payload={
            "pool": pool.pk,
            **values,
            "paytable_version": pool.paytable_version,
            "surveillance_required": pool.surveillance_required,
            **(approval or {}),
        },
        postings=movements.seed_pool(seed_cents=pool.seed_cents),
    )
