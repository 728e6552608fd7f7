"""Reads of a table's rounds: the list a terminal recovers from, and the stale rounds of a pool;
the integrity flags (`tables.integrity`), the void watch (`tables.voids`: the counts the check
tests, over its window) and the reconciliation reports
(`tables.reconciliation`), listed and as the pool report shows them; a pool's history for
auditors (`pool_history`: the meter, stakes and awards against the PAR sheet from the pool's
club days as `tables.history` folds them, the range's day rows plus the events since the last
fold, never the range's rounds; the jackpots by an indexed query of the royal awards).

A round is stale once it has been open for `settings.ROUND_STALE_AFTER_SECONDS` (15 minutes by
default) by the service's clock: a UTH hand takes minutes, so its result is not coming (the
terminal crashed, or lost the round's id) and its stakes sit in the meter until it is voided, by
the terminal or by a supervisor. Ages are the service's: a terminal's clock is never read.
The bets shown are the round's `RoundSeat` rows, as locked at open, never its stored answer.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from fractions import Fraction
from typing import Any

from django.conf import settings
from django.db.models import F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone as dj_timezone

from config.codes import ErrorCode
from config.errors import NotFound
from jackpot import rows
from jackpot.bodies import IntegrityFlag as IntegrityFlagBody
from jackpot.bodies import OpenRounds, ReconciliationStatus, StaleRound
from jackpot.models import (
    AccountKind,
    Award,
    AwardKind,
    AwardStatus,
    Pool,
    Transfer,
    TransferCode,
)
from tables.bodies.history import (
    AwardFrequency,
    HistoryHit,
    MeterDay,
    PoolHistory,
    PoolHistoryQuery,
    StakeDay,
)
from tables.bodies.integrity import (
    IntegrityFlagPage,
    IntegrityFlagQuery,
    VoidCell,
    VoidShift,
    VoidTable,
    VoidWatch,
)
from tables.bodies.reconciliation import Reconciliation as ReconciliationBody
from tables.bodies.reconciliation import (
    ReconciliationBroken,
    ReconciliationPage,
    ReconciliationPool,
    ReconciliationQuery,
)
from tables.bodies.round_reads import RoundListQuery, RoundPage, RoundSummary
from tables.history import DayFigures, meter_before, pending_days, stored_days
from tables.integrity import expected_awards
from tables.models import Game, IntegrityFlag, Reconciliation, Round, RoundSeat, RoundState, Table
from tables.render import seat_bets_body
from tables.rules.stud import StudBets
from tables.rules.uth import UthBets
from tables.voids import IN_SHIFT, IN_WINDOW, Cell, PoolVoids, read_window

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
    reads them (`tables.voids.read_window`: bounded by the window, whatever the journal's age),
    with the latest flag of each cell and the pool's latest void flags. `pool_not_found` if there
    is no such pool."""
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


# --- a pool's history for auditors -------------------------------------------------------------

_HISTORY_TIMEOUT_MS = 20_000


def _day_bounds(first: date | None, last: date | None, zone: tzinfo) -> Q:
    """The club days `first` to `last` (None: open) as a filter on the alias `at`: from the
    first day's midnight, before the midnight after the last. A day too far from today for a
    time to exist (year 1, 9999) leaves its side open: nothing is recorded there anyway."""
    bounds = Q()
    for day, lookup, shift in ((first, "gte", 0), (last, "lt", 1)):
        if day is None:
            continue
        try:
            midnight = datetime.combine(day + timedelta(days=shift), time.min, tzinfo=zone)
            midnight.astimezone(UTC)
        except OverflowError:
            continue
        bounds &= Q(**{f"at__{lookup}": midnight})
    return bounds


def _history_days(pool: Pool, query: PoolHistoryQuery) -> tuple[int, dict[date, DayFigures]]:
    """The pool's days from `query.from_` to `query.to` (the fold's stored rows plus the events
    after its cursors, folded here: `tables.history`), and the meter's closing before the first
    (the sum of every earlier day's change: day rows, which are few)."""
    days = stored_days(pool.pk, query.from_, query.to)
    before = 0 if query.from_ is None else meter_before(pool.pk, query.from_)
    for (_, day), change in pending_days(pool.pk).items():
        if query.from_ is not None and day < query.from_:
            before += change.meter_change_cents
        elif query.to is None or day <= query.to:
            days.setdefault(day, DayFigures()).add(change)
    return before, dict(sorted(days.items()))


def _meter_days(before: int, days: dict[date, DayFigures]) -> list[MeterDay]:
    """The `meter` account's closing balance on each day it moved: the running sum of the days'
    changes from the closing before the first."""
    found, closing = [], before
    for day, figures in days.items():
        closing += figures.meter_change_cents
        if figures.meter_moves:
            found.append(
                MeterDay.model_construct(
                    day=day, closing_cents=closing, change_cents=figures.meter_change_cents
                )
            )
    return found


def _stake_days(days: dict[date, DayFigures]) -> list[StakeDay]:
    """The stakes of the rounds opened each day (the seats' bets as locked at open, which the
    journal's check holds equal to the `stakes` account), and of those voided since."""
    return [
        StakeDay.model_construct(
            day=day,
            count=figures.stakes_count,
            stakes_cents=figures.stakes_cents,
            refunded_count=figures.refunded_count,
            refunded_cents=figures.refunded_cents,
        )
        for day, figures in days.items()
        if figures.stakes_count
    ]


def _decimal(value: Fraction) -> str:
    """A non-negative fraction rounded half up to 4 decimals, in integers."""
    scaled = (value * 10_000 * 2 + 1) // 2
    return f"{scaled // 10_000}.{scaled % 10_000:04d}"


def _award_frequencies(days: dict[date, DayFigures]) -> tuple[int, int, list[AwardFrequency]]:
    """Settled rounds with a stake, their stakes, and each kind observed beside expected (the
    integrity check's probabilities, over the days' rounds by number of staked seats)."""
    total = DayFigures()
    for figures in days.values():
        total.add(figures)
    sizes = total.settled
    stakes = sum(size * count for size, count in sizes.items())
    won = total.awards
    frequencies = []
    for kind in AwardKind:
        expected = expected_awards(kind, sizes)
        observed, voided, cents = won.get(kind.value, [0, 0, 0])
        rate = expected / stakes if stakes else Fraction(0)
        frequencies.append(
            AwardFrequency.model_construct(
                kind=kind,
                observed=observed,
                voided=voided,
                amount_cents=cents,
                expected=f"{expected.numerator}/{expected.denominator}",
                expected_decimal=_decimal(expected),
                expected_rate=f"{rate.numerator}/{rate.denominator}",
            )
        )
    return sum(sizes.values()), stakes, frequencies


def _hits(pool: Pool, bounds: Q, zone: tzinfo) -> list[HistoryHit]:
    """The jackpots won, oldest first, each with its reset as its own transfers recorded it."""

    def reset(code: TransferCode) -> Coalesce:
        # A subquery per hit (hits are few): a join to the transfers would group the journal.
        amount = Transfer.objects.filter(award=OuterRef("pk"), code=code).values("amount_cents")
        return Coalesce(Subquery(amount[:1]), 0)

    hits = (
        Award.objects.filter(pool=pool, kind=AwardKind.ROYAL_FLUSH)
        .alias(at=F("created_at"))
        .filter(bounds)
        .select_related("round__table")
        .annotate(
            reset_reserve=reset(TransferCode.RESET_RESERVE),
            reset_house=reset(TransferCode.RESET_HOUSE),
        )
        .order_by("sequence")
    )
    return [
        HistoryHit.model_construct(
            award=hit.pk,
            at=hit.created_at,
            day=hit.created_at.astimezone(zone).date(),
            table=hit.round.table.name,
            round=hit.round.round_id,
            seat=hit.seat,
            amount_cents=hit.amount_cents,
            status=AwardStatus(hit.status),
            reset_reserve_cents=hit.reset_reserve,
            reset_house_cents=hit.reset_house,
        )
        for hit in hits
    ]


def pool_history(pool_id: int, query: PoolHistoryQuery) -> PoolHistory:
    """A pool's history over the club days of `query` (the service's TIME_ZONE): the meter's
    closing balance per day, the stakes per day, each award kind observed beside its exact
    expectation, the jackpots with their resets, the latest reconciliation. Reads only, a few
    aggregate queries whatever the size of the journal, in one snapshot (a round settling
    meanwhile is in every chart or in none); every figure in whole cents.
    `pool_not_found` if there is no such pool."""
    # The day rows keep a year well under the requests' 1.5 s; a first read before the fold has
    # caught up folds the journal in memory: these reads lock nothing a round waits for, and
    # stay under gunicorn's 30 s.
    with rows.snapshot(statement_timeout_ms=_HISTORY_TIMEOUT_MS):
        return _pool_history(pool_id, query)


def _pool_history(pool_id: int, query: PoolHistoryQuery) -> PoolHistory:
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(ErrorCode.POOL_NOT_FOUND, f"no pool {pool_id}", param="pool")
    zone = dj_timezone.get_default_timezone()
    bounds = _day_bounds(query.from_, query.to, zone)
    before, days = _history_days(pool, query)
    rounds, stakes, frequencies = _award_frequencies(days)
    status = latest_reconciliation()
    figures = None
    if status is not None:
        report = Reconciliation.objects.only("pools").get(pk=status.id)
        figures = next((f for f in report.pools if f["pool"] == pool.pk), None)
    return PoolHistory.model_construct(
        pool=pool.pk,
        currency=pool.currency,
        time_zone=str(zone),
        first_day=query.from_,
        last_day=query.to,
        settled_rounds=rounds,
        settled_stakes=stakes,
        meter=_meter_days(before, days),
        stakes=_stake_days(days),
        awards=frequencies,
        hits=_hits(pool, bounds, zone),
        reconciliation=status,
        reconciled=_reconciled_pool(figures) if figures is not None else None,
    )
