"""The club's sessions as the API and the floor's page read them (`tables.bodies.sessions`)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet, Sum

from core.errors import NotFound
from tables.bodies.sessions import (
    DropCountBody,
    SessionBody,
    SessionPage,
    SessionPoolLine,
    SessionQuery,
    SessionSummary,
    SessionTableLine,
)
from tables.models import ClubSession, DropCount, SessionPool, SessionTable


def _summary_fields(session: ClubSession) -> dict[str, Any]:
    return {
        "id": session.pk,
        "number": session.number,
        "club_day": session.club_day,
        "status": session.status,
        "opened_at": session.opened_at,
        "opened_by": session.opened_by,
        "closed_at": session.closed_at,
        "closed_by": session.closed_by,
        "closed_how": session.closed_how,
    }


def session_page(query: SessionQuery) -> SessionPage:
    """Sessions, newest first, by club day (the index on it)."""
    found: QuerySet[ClubSession] = ClubSession.objects.order_by("-number")
    if query.from_ is not None:
        found = found.filter(club_day__gte=query.from_)
    if query.to is not None:
        found = found.filter(club_day__lte=query.to)
    page = found[query.offset : query.offset + query.limit]
    return SessionPage.model_construct(
        count=found.count(),
        limit=query.limit,
        offset=query.offset,
        results=[SessionSummary.model_construct(**_summary_fields(s)) for s in page],
    )


def _drops(session: ClubSession) -> list[DropCountBody]:
    expected = dict(
        SessionTable.objects.filter(session=session)
        .values_list("table")
        .annotate(total=Sum("withheld_cents"))
        .order_by("table")
    )
    counts = {c.table_id: c for c in DropCount.objects.filter(session=session)}
    drops = []
    for table, total in sorted(expected.items()):
        count = counts.get(table)
        confirmed = count is not None and count.confirmed_at is not None
        drops.append(
            DropCountBody.model_construct(
                table=table,
                expected_cents=int(total or 0),
                counted=count is not None,
                counted_by=count.counted_by if count else "",
                counted_at=count.counted_at if count else None,
                confirmed=confirmed,
                confirmed_by=count.confirmed_by if count else "",
                confirmed_at=count.confirmed_at if count else None,
                counted_cents=count.counted_cents if count and confirmed else None,
                difference_cents=count.difference_cents if count and confirmed else None,
            )
        )
    return drops


def session_detail(session_id: int) -> SessionBody:
    """One session, its snapshot's lines and its drop boxes (404 `session_not_found`)."""
    session = ClubSession.objects.filter(pk=session_id).first()
    if session is None:
        raise NotFound("session_not_found", f"no session {session_id}", param="session")
    tables = SessionTable.objects.filter(session=session).order_by("table", "pool")
    pools = SessionPool.objects.filter(session=session).order_by("pool")
    return SessionBody.model_construct(
        **_summary_fields(session),
        tables=[
            SessionTableLine.model_construct(
                table=line.table_id,
                pool=line.pool_id,
                **{
                    name: getattr(line, name)
                    for name in SessionTableLine.model_fields
                    if name not in ("table", "pool")
                },
            )
            for line in tables
        ],
        pools=[
            SessionPoolLine.model_construct(
                pool=line.pool_id,
                **{
                    name: getattr(line, name)
                    for name in SessionPoolLine.model_fields
                    if name != "pool"
                },
            )
            for line in pools
        ],
        drops=_drops(session),
    )
