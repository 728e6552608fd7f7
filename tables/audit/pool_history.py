"""A pool's history for auditors (`pool_history`): the meter, stakes and awards against the PAR
sheet from the pool's club days as `tables.audit.history` folds them, the range's day rows plus the
events since the last fold, never the range's rounds; the jackpots by an indexed query of the
royal awards; the documented corrections by an indexed query of the pool's correction transfers.

Invariants: read in one snapshot (a round settling meanwhile is in every chart or in none), with
a few aggregate queries whatever the size of the journal; every figure in whole cents.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from fractions import Fraction

from django.db.models import F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone as dj_timezone

from core.codes import ErrorCode
from core.errors import NotFound
from jackpot.models import (
    Award,
    AwardKind,
    AwardStatus,
    Pool,
    Transfer,
    TransferCode,
)
from jackpot.money import rows
from tables.audit.history import DayFigures, meter_before, pending_days, stored_days
from tables.audit.integrity import expected_awards
from tables.bodies.history import (
    AwardFrequency,
    HistoryCorrection,
    HistoryHit,
    MeterDay,
    PoolHistory,
    PoolHistoryQuery,
    StakeDay,
)
from tables.models import Reconciliation
from tables.selectors.reconciliation import latest_reconciliation, reconciled_pool

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
    after its cursors, folded here: `tables.audit.history`), and the meter's closing before the
    first
    (the sum of every earlier day's change: day rows, which are few)."""
    days = stored_days(pool.pk, query.from_, query.to)
    before = 0 if query.from_ is None else meter_before(pool.pk, query.from_)
    for (_, day), change in pending_days(pool.pk).items():
        if query.from_ is not None and day < query.from_:
            before += change.meter_change_cents
        elif query.to is None or day <= query.to:
            days.setdefault(day, DayFigures()).add(change)
    return before, dict(sorted(days.items()))


def _meter_days(
    before: int, days: dict[date, DayFigures], corrections: list[HistoryCorrection]
) -> list[MeterDay]:
    """The `meter` account's closing balance on each day it moved: the running sum of the days'
    changes from the closing before the first; of each change, the meter's corrections."""
    corrected: dict[date, int] = {}
    for correction in corrections:
        if correction.target == "meter":
            corrected[correction.day] = corrected.get(correction.day, 0) + correction.amount_cents
    found, closing = [], before
    for day, figures in days.items():
        closing += figures.meter_change_cents
        if figures.meter_moves:
            found.append(
                MeterDay.model_construct(
                    day=day,
                    closing_cents=closing,
                    change_cents=figures.meter_change_cents,
                    corrections_cents=corrected.get(day, 0),
                )
            )
    return found


def _corrections(pool: Pool, bounds: Q, zone: tzinfo) -> list[HistoryCorrection]:
    """The documented corrections approved in the range, oldest first: their `pool.corrected`
    events, found by the pool's `correction` transfers (the (pool, code) index: the cost of the
    pool's corrections, never of its chain)."""
    events = (
        Transfer.objects.filter(
            pool=pool, code=TransferCode.CORRECTION, event__kind="pool.corrected"
        )
        .alias(at=F("event__occurred_at"))
        .filter(bounds)
        .values_list("event__occurred_at", "event__payload")
        .order_by("event__sequence")
        .distinct()
    )
    found = []
    for at, said in events:
        found.append(
            HistoryCorrection.model_construct(
                change=said["change"],
                at=at,
                day=at.astimezone(zone).date(),
                target=said["target"],
                award=said.get("award"),
                amount_cents=said["amount_cents"],
                reason=said["reason"],
                reference=said["reference"],
                proposed_by=said["proposed_by"],
                approved_by=said["approved_by"],
                meter_after_cents=said["meter_after_cents"],
                reserve_after_cents=said["reserve_after_cents"],
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
        .order_by("number")
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
    corrections = _corrections(pool, bounds, zone)
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
        meter=_meter_days(before, days, corrections),
        stakes=_stake_days(days),
        awards=frequencies,
        hits=_hits(pool, bounds, zone),
        corrections=corrections,
        reconciliation=status,
        reconciled=reconciled_pool(figures) if figures is not None else None,
    )
