"""Reads of the reconciliation reports (`tables.audit.reconciliation`): listed, one by id, the
latest's status as the pool report shows it, and a pool's figures in a report.

Invariant: a report is read as stored, never recomputed here.
"""

from __future__ import annotations

from typing import Any

from core.codes import ErrorCode
from core.errors import NotFound
from jackpot.bodies.pools import ReconciliationStatus
from jackpot.models import (
    AccountKind,
)
from tables.bodies.reconciliation import (
    ReconciliationBody,
    ReconciliationBroken,
    ReconciliationPage,
    ReconciliationPool,
    ReconciliationQuery,
)
from tables.models import Reconciliation


def _reconciliation(report: Reconciliation) -> ReconciliationBody:
    return ReconciliationBody.model_construct(
        id=report.pk,
        ok=report.ok,
        daily=report.daily,
        run_key=report.run_key,
        started_at=report.started_at,
        finished_at=report.finished_at,
        chains=report.chains,
        events=report.events,
        transfers=report.transfers,
        pool_count=report.pool_count,
        anchors=report.anchors,
        first_broken=None
        if not report.broken_chain
        else ReconciliationBroken.model_construct(
            chain=report.broken_chain, sequence=report.broken_sequence
        ),
        problem_count=report.problem_count,
        problems=list(report.problems),
        pools=[reconciled_pool(figures) for figures in report.pools],
    )


def reconciled_pool(figures: dict[str, Any]) -> ReconciliationPool:
    return ReconciliationPool.model_construct(
        pool=figures["pool"],
        meter_cents=figures["meter_cents"],
        meter_units=figures["meter_units"],
        expected_units=figures["expected_units"],
        identity=figures["identity"],
        balances={AccountKind(kind): cents for kind, cents in figures["balances"].items()},
    )


def reconciliation_page(filters: ReconciliationQuery) -> ReconciliationPage:
    """Reconciliation reports, newest first; filters: ok, daily."""
    lookups = {"ok": filters.ok, "daily": filters.daily}
    query = Reconciliation.objects.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None}
    )
    limit, offset = filters.limit, filters.offset
    return ReconciliationPage.model_construct(
        count=query.count(),
        limit=limit,
        offset=offset,
        results=[
            _reconciliation(found) for found in query.order_by("-pk")[offset : offset + limit]
        ],
    )


def reconciliation_get(report_id: int) -> ReconciliationBody:
    """One report; `reconciliation_not_found` if there is none."""
    found = Reconciliation.objects.filter(pk=report_id).first()
    if found is None:
        raise NotFound(
            ErrorCode.RECONCILIATION_NOT_FOUND,
            f"no reconciliation {report_id}",
            param="reconciliation",
        )
    return _reconciliation(found)


def latest_reconciliation() -> ReconciliationStatus | None:
    """The latest report's status, as the pool report shows it (None before the first run)."""
    found = Reconciliation.objects.order_by("-pk").first()
    if found is None:
        return None
    return ReconciliationStatus.model_construct(
        id=found.pk,
        ok=found.ok,
        daily=found.daily,
        finished_at=found.finished_at,
        problem_count=found.problem_count,
        first_problem=found.problems[0] if found.problems else None,
    )
