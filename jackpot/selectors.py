"""Reads of the progressive: pool configuration, award and journal pages (the meter as terminals
and signs see it is `jackpot.meter.pool_meter`)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from jackpot.bodies import AwardFilters, AwardListQuery, JournalQuery
from jackpot.models import Award, Pool, Transfer
from jackpot.render import award_json
from tables.rules.paytables import get_progressive_paytable, render_progressive_paytable


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


def awards_filtered(query: AwardFilters) -> QuerySet[Award]:
    """Awards matching the query's filters: pool, table, kind, status, from and to (on when the
    award was won; `to` excluded)."""
    awards = Award.objects.all()
    filters = {
        "pool_id": query.pool,
        "round__table_id": query.table,
        "kind": query.kind,
        "status": query.status,
        "created_at__gte": query.from_,
        "created_at__lt": query.to,
    }
    return awards.filter(
        **{lookup: value for lookup, value in filters.items() if value is not None}
    )


def award_list(query: AwardListQuery) -> dict[str, Any]:
    """A page of awards, newest first."""
    awards = awards_filtered(query).select_related(
        "verified_by", "approved_by", "paid_by", "voided_by"
    )
    limit, offset = query.limit, query.offset
    page = list(awards.order_by("-pk")[offset : offset + limit])
    return {
        "count": awards.count(),
        "limit": limit,
        "offset": offset,
        "results": [award_json(award) for award in page],
    }


def journal_page(filters: JournalQuery) -> dict[str, Any]:
    """A page of transfers, newest first, with their accounts and audit event; filters: pool,
    code, round (the round's database id), from and to."""
    query = Transfer.objects.select_related("debit", "credit", "event")
    lookups = {
        "pool_id": filters.pool,
        "round_id": filters.round,
        "code": filters.code,
        "created_at__gte": filters.from_,
        "created_at__lt": filters.to,
    }
    query = query.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None}
    )
    limit, offset = filters.limit, filters.offset
    return {
        "count": query.count(),
        "limit": limit,
        "offset": offset,
        "results": [
            {
                "id": t.pk,
                "pool": t.pool_id,
                "code": t.code,
                "debit": t.debit.kind,
                "credit": t.credit.kind,
                "amount_cents": t.amount_cents,
                "round": t.round_id,
                "award": t.award_id,
                "at": t.created_at.isoformat(),
                "event": {
                    "chain": t.event.chain,
                    "sequence": t.event.sequence,
                    "kind": t.event.kind,
                    "hash": t.event.hash,
                },
            }
            for t in query.order_by("-pk")[offset : offset + limit]
        ],
    }
