"""Reads of a table's rounds: the list a terminal recovers from, and the stale rounds of a pool;
the integrity flags (`tables.integrity`) and the reconciliation reports
(`tables.reconciliation`), listed and as the pool report shows them.

A round is stale once it has been open for `settings.ROUND_STALE_AFTER_SECONDS` (15 minutes by
default) by the service's clock: a UTH hand takes minutes, so its result is not coming (the
terminal crashed, or lost the round's id) and its stakes sit in the meter until it is voided, by
the terminal or by a supervisor. Ages are the service's: a terminal's clock is never read.
The bets shown are the round's `RoundSeat` rows, as locked at open, never its stored answer.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Sum

from config.codes import ErrorCode
from config.errors import NotFound
from jackpot.bodies import IntegrityFlag as IntegrityFlagBody
from jackpot.bodies import OpenRounds, ReconciliationStatus, StaleRound
from jackpot.models import AccountKind, AwardKind, Pool
from tables.bodies import (
    IntegrityFlagPage,
    IntegrityFlagQuery,
    ReconciliationBroken,
    ReconciliationPage,
    ReconciliationPool,
    ReconciliationQuery,
    RoundListQuery,
    RoundPage,
    RoundSummary,
)
from tables.bodies import Reconciliation as ReconciliationBody
from tables.models import Game, IntegrityFlag, Reconciliation, Round, RoundSeat, RoundState, Table
from tables.render import seat_bets_body
from tables.rules.stud import StudBets
from tables.rules.uth import UthBets

#: The stale rounds a pool report names, oldest first.
OLDEST_STALE = 10


def stale_after() -> timedelta:
    return timedelta(seconds=settings.ROUND_STALE_AFTER_SECONDS)


def _age_seconds(opened_at: datetime, now: datetime) -> int:
    return max(0, int((now - opened_at).total_seconds()))


def _seats(round_pks: list[int], game: Game) -> dict[int, list[tuple[int, UthBets | StudBets]]]:
    """Each round's seats and their bets, by round, in one query."""
    found: dict[int, list[tuple[int, UthBets | StudBets]]] = {pk: [] for pk in round_pks}
    rows = (
        RoundSeat.objects.filter(round_id__in=round_pks)
        .order_by("round_id", "seat")
        .values_list(
            "round_id",
            "seat",
            "ante_cents",
            "blind_cents",
            "trips_cents",
            "bonus_cents",
            "progressive_cents",
        )
    )
    for round_pk, seat, ante, blind, trips, bonus, progressive in rows:
        bets: UthBets | StudBets = (
            UthBets(ante, blind, trips, progressive) if game == Game.UTH else StudBets(ante, bonus)
        )
        found[round_pk].append((seat, bets))
    return found


def round_page(*, table: Table, query: RoundListQuery, now: datetime) -> RoundPage:
    """The table's rounds, newest first, `query.state` only if given."""
    rounds = Round.objects.filter(table=table)
    if query.state is not None:
        rounds = rounds.filter(state=query.state)
    page = list(
        rounds.order_by("-opened_at", "-pk").only("round_id", "state", "opened_at", "closed_at")[
            query.offset : query.offset + query.limit
        ]
    )
    seats = _seats([found.pk for found in page], Game(table.game))
    limit = stale_after()
    results = []
    for found in page:
        bets = seats[found.pk]
        staked = [b.progressive_cents for _, b in bets if isinstance(b, UthBets)]
        results.append(
            RoundSummary.model_construct(
                round_id=found.round_id,
                state=found.state,
                opened_at=found.opened_at,
                closed_at=found.closed_at,
                age_seconds=_age_seconds(found.opened_at, now),
                stale=found.state == RoundState.OPEN and now - found.opened_at >= limit,
                seats=[seat_bets_body(seat, seat_bets) for seat, seat_bets in bets],
                progressive_stakes=sum(1 for cents in staked if cents),
                progressive_cents=sum(staked),
            )
        )
    return RoundPage.model_construct(
        table=table.pk,
        stale_after_seconds=settings.ROUND_STALE_AFTER_SECONDS,
        count=rounds.count(),
        limit=query.limit,
        offset=query.offset,
        results=results,
    )


def pool_open_rounds(pool: Pool, *, now: datetime) -> OpenRounds:
    """The pool's rounds still open (their stakes are in its meter), and the oldest stale ones."""
    open_rounds = Round.objects.filter(pool=pool, state=RoundState.OPEN)
    stale = open_rounds.filter(opened_at__lte=now - stale_after())
    oldest = (
        stale.select_related("table")
        .annotate(progressive=Sum("seats__progressive_cents"))
        .order_by("opened_at", "pk")[:OLDEST_STALE]
    )
    return OpenRounds.model_construct(
        count=open_rounds.count(),
        stale_after_seconds=settings.ROUND_STALE_AFTER_SECONDS,
        stale_count=stale.count(),
        oldest_stale=[
            StaleRound.model_construct(
                table=found.table_id,
                table_name=found.table.name,
                round_id=found.round_id,
                opened_at=found.opened_at,
                age_seconds=_age_seconds(found.opened_at, now),
                progressive_cents=int(found.progressive or 0),
            )
            for found in oldest
        ],
    )


def _flag(flag: IntegrityFlag) -> IntegrityFlagBody:
    return IntegrityFlagBody.model_construct(
        id=flag.pk,
        pool=flag.pool_id,
        table=flag.table_id,
        table_name=flag.table.name if flag.table else None,
        kind=AwardKind(flag.kind),
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
        pools=[_reconciled_pool(figures) for figures in report.pools],
    )


def _reconciled_pool(figures: dict[str, Any]) -> ReconciliationPool:
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
