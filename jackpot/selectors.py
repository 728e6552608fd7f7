"""Reads of the progressive: the meter as displays see it, pool configuration."""

from __future__ import annotations

from typing import Any

from jackpot import rows
from jackpot.models import Pool
from tables.rules.paytables import get_progressive_paytable, render_progressive_paytable


def meter_json(
    *, pool_id: int, currency: str, meter_cents: int, version: int, as_of: Any
) -> dict[str, Any]:
    """The meter as displays and terminals see it: whole cents, its version and time."""
    return {
        "pool": pool_id,
        "amount_cents": meter_cents,
        "currency": currency,
        "sequence": version,
        "as_of": as_of.isoformat() if as_of else None,
    }


def pool_meter(*, pool_id: int) -> dict[str, Any]:
    """The committed meter in whole cents, with its version (`sequence`) and time.

    Read with plain SQL (jackpot.rows): terminals get it with every answer, and building the
    ORM query cost more than the query.
    """
    pool = rows.select_one(
        Pool,
        "id = %s",
        [pool_id],
        for_update=False,
        only=("currency", "meter_units", "meter_version", "meter_changed_at"),
    )
    if pool is None:
        raise Pool.DoesNotExist(pool_id)
    return meter_json(
        pool_id=pool_id,
        currency=pool.currency,
        meter_cents=pool.meter_cents,
        version=pool.meter_version,
        as_of=pool.meter_changed_at,
    )


def pool_configuration(*, pool: Pool) -> dict[str, Any]:
    """What regulators want posted: the stake, its split, the seed and the paytable."""
    return {
        "id": pool.pk,
        "name": pool.name,
        "currency": pool.currency,
        "stake_cents": pool.stake_cents,
        "meter_share_bp": pool.meter_share_bp,
        "reserve_share_bp": pool.reserve_share_bp,
        "house_share_bp": pool.house_share_bp,
        "seed_cents": pool.seed_cents,
        "verification_threshold_cents": pool.verification_threshold_cents,
        "paytable": render_progressive_paytable(get_progressive_paytable(pool.paytable_version)),
        "tables": list(
            pool.tables.filter(enabled=True).order_by("pk").values_list("pk", flat=True)
        ),
    }
