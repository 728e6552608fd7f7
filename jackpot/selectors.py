"""Reads of the progressive: pool configuration, award and journal pages (the meter as terminals
and signs see it is `jackpot.meter.pool_meter`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils.dateparse import parse_datetime

from config.errors import ApiError
from jackpot.models import Award, AwardKind, AwardStatus, Pool, Transfer, TransferCode
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


_CHOICES = {"kind": tuple(AwardKind.values), "status": tuple(AwardStatus.values)}
_AWARD_FILTERS = {"pool": "pool_id", "table": "round__table_id", "kind": "kind", "status": "status"}


def awards_filtered(params: Mapping[str, str]) -> QuerySet[Award]:
    """Awards matching the query's filters: pool, table, kind, status, from and to (ISO 8601
    times, on when the award was won; `to` excluded)."""
    query = Award.objects.all()
    for name, lookup in _AWARD_FILTERS.items():
        if name in params:
            value: object = params[name]
            if lookup.endswith("_id"):
                value = _whole(params, name, default=0, high=2**62)
            elif value not in _CHOICES[name]:
                choices = ", ".join(_CHOICES[name])
                raise ApiError("invalid_parameter", f"{name} must be one of {choices}", param=name)
            query = query.filter(**{lookup: value})
    for name, lookup in (("from", "created_at__gte"), ("to", "created_at__lt")):
        if name in params:
            query = query.filter(**{lookup: _moment(params, name)})
    return query


def award_list(params: Mapping[str, str]) -> dict[str, Any]:
    """A page of awards, newest first; `params` are the query's filters, limit and offset."""
    query = awards_filtered(params).select_related(
        "verified_by", "approved_by", "paid_by", "voided_by"
    )
    limit = _whole(params, "limit", default=50, high=200, low=1)
    offset = _whole(params, "offset", default=0, high=2**62)
    page = list(query.order_by("-pk")[offset : offset + limit])
    return {
        "count": query.count(),
        "limit": limit,
        "offset": offset,
        "results": [award_json(award) for award in page],
    }


def _whole(params: Mapping[str, str], name: str, *, default: int, high: int, low: int = 0) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
        raise ApiError(
            "invalid_parameter", f"{name} must be a whole number from {low} to {high}", param=name
        )
    return int(raw)


def journal_page(params: Mapping[str, str]) -> dict[str, Any]:
    """A page of transfers, newest first, with their accounts and audit event; filters: pool,
    code, round (the round's database id), from and to (ISO 8601 times)."""
    query = Transfer.objects.select_related("debit", "credit", "event")
    if "pool" in params:
        query = query.filter(pool_id=_whole(params, "pool", default=0, high=2**62))
    if "round" in params:
        query = query.filter(round_id=_whole(params, "round", default=0, high=2**62))
    if "code" in params:
        if params["code"] not in TransferCode.values:
            raise ApiError("invalid_parameter", "code must be a transfer code", param="code")
        query = query.filter(code=params["code"])
    for name, lookup in (("from", "created_at__gte"), ("to", "created_at__lt")):
        if name in params:
            query = query.filter(**{lookup: _moment(params, name)})
    limit = _whole(params, "limit", default=100, high=500, low=1)
    offset = _whole(params, "offset", default=0, high=2**62)
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


def _moment(params: Mapping[str, str], name: str) -> datetime:
    moment = parse_datetime(params[name]) if len(params[name]) <= 40 else None
    if moment is None or moment.tzinfo is None:
        raise ApiError(
            "invalid_parameter",
            f"{name} must be an ISO 8601 time with its offset, e.g. 2026-11-29T20:00:00Z",
            param=name,
        )
    return moment
