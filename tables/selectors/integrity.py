"""Reads of the integrity monitoring: the integrity flags (`tables.audit.integrity`) listed and as
the pool report shows them, and the void watch (`tables.selectors.voids`: the counts the check
tests, over its window).

Invariant: the void watch reads the window exactly as the check does
(`tables.selectors.voids.read_window`), so what an auditor sees is what was tested.
"""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction

from django.conf import settings

from core.codes import ErrorCode
from core.errors import NotFound
from jackpot.bodies.pools import IntegrityFlagBody
from jackpot.models import (
    AwardKind,
    Pool,
)
from tables.bodies.integrity import (
    IntegrityFlagPage,
    IntegrityFlagQuery,
    VoidCell,
    VoidShift,
    VoidTable,
    VoidWatch,
)
from tables.models import IntegrityFlag, Table
from tables.selectors.voids import IN_SHIFT, IN_WINDOW, Cell, PoolVoids, read_window


def _flag(flag: IntegrityFlag) -> IntegrityFlagBody:
    return IntegrityFlagBody.model_construct(
        id=flag.pk,
        pool=flag.pool_id,
        table=flag.table_id,
        table_name=flag.table.name if flag.table else None,
        kind=AwardKind(flag.kind) if flag.kind in AwardKind.values else flag.kind,
        window_from=flag.window_from,
        window_to=flag.window_to,
        rounds=flag.rounds,
        seats=flag.seats,
        observed=flag.observed,
        awards=flag.awards,
        expected=flag.expected,
        tail=flag.tail,
        adjusted=flag.adjusted,
        family=flag.family,
        alpha=flag.alpha,
        checked_at=flag.checked_at,
    )


def integrity_flag_page(filters: IntegrityFlagQuery) -> IntegrityFlagPage:
    """Integrity flags, newest first; filters: pool, table, kind."""
    lookups = {"pool_id": filters.pool, "table_id": filters.table, "kind": filters.kind}
    query = IntegrityFlag.objects.select_related("table").filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None}
    )
    limit, offset = filters.limit, filters.offset
    return IntegrityFlagPage.model_construct(
        count=query.count(),
        limit=limit,
        offset=offset,
        results=[_flag(flag) for flag in query.order_by("-pk")[offset : offset + limit]],
    )


POOL_REPORT_FLAGS = 25


def pool_integrity_flags(pool: Pool) -> list[IntegrityFlagBody]:
    """The pool's latest integrity flags (its tables' and its own), newest first."""
    flags = IntegrityFlag.objects.select_related("table").filter(pool=pool).order_by("-pk")
    return [_flag(flag) for flag in flags[:POOL_REPORT_FLAGS]]


def _void_cell(cell: Cell, expected: Fraction, flag: int | None) -> VoidCell:
    scaled = (expected * 100 * 2 + 1) // 2  # half up, 2 decimals
    return VoidCell.model_construct(
        rounds=cell.rounds,
        voids=cell.voids,
        refunded_stakes=cell.refunded_stakes,
        refunded_cents=cell.refunded_cents,
        expected=f"{scaled // 100}.{scaled % 100:02d}",
        flag=flag,
    )


def void_watch(pool_id: int, *, now: datetime | None = None) -> VoidWatch:
    """A pool's voids by table and shift over the void watch's window, as the integrity check
    reads them (`tables.selectors.voids.read_window`: bounded by the window, whatever the journal's
    age), with the latest flag of each cell and the pool's latest void flags. `pool_not_found` if
    there is no such pool."""
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(ErrorCode.POOL_NOT_FOUND, f"no pool {pool_id}", param="pool")
    window = read_window(now=now, pool_id=pool.pk)
    void_flags = IntegrityFlag.objects.select_related("table").filter(
        pool=pool, kind__in=(IN_SHIFT, IN_WINDOW)
    )
    # The latest flag of each (table, shift) and of each table's window (any window that began
    # within this one: the window slides a shift at a time).
    latest: dict[tuple[int | None, str, datetime | None], int] = {}
    for table_id, kind, start, flag_id in void_flags.filter(
        window_from__gte=window.start
    ).values_list("table_id", "kind", "window_from", "pk"):
        key = (table_id, kind, start if kind == IN_SHIFT else None)
        latest[key] = max(flag_id, latest.get(key, 0))
    watched = window.pools.get(pool.pk) or PoolVoids()
    names = dict(Table.objects.filter(pk__in=list(watched.cells)).values_list("pk", "name"))
    tables = []
    for table_id, cells in sorted(watched.cells.items()):
        summed, expected = Cell(), Fraction(0)
        row: list[VoidCell | None] = []
        for shift in window.shifts:
            cell = cells.get(shift)
            if cell is None:
                row.append(None)
                continue
            mean = watched.expected(table_id, shift)
            summed.add(cell)
            expected += mean
            flag = latest.get((table_id, IN_SHIFT, shift.start(window.zone)))
            row.append(_void_cell(cell, mean, flag))
        tables.append(
            VoidTable.model_construct(
                table=table_id,
                table_name=names[table_id],
                window=_void_cell(summed, expected, latest.get((table_id, IN_WINDOW, None))),
                shifts=row,
            )
        )
    totals = watched.totals
    return VoidWatch.model_construct(
        pool=pool.pk,
        currency=pool.currency,
        time_zone=str(window.zone),
        shift_hours=settings.SHIFT_HOURS,
        min_rounds=settings.INTEGRITY_VOID_MIN_ROUNDS,
        window_from=window.start,
        window_to=window.now,
        shifts=[
            VoidShift.model_construct(
                day=shift.day,
                index=shift.index,
                start=shift.start(window.zone),
                end=shift.end(window.zone),
                rounds=totals[shift].rounds if shift in totals else 0,
                voids=totals[shift].voids if shift in totals else 0,
            )
            for shift in window.shifts
        ],
        tables=tables,
        flags=[_flag(flag) for flag in void_flags.order_by("-pk")[:POOL_REPORT_FLAGS]],
    )
