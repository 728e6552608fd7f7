"""The void watch: voids counted by table and by shift, and the tables whose void rate the other
tables' make improbable (an integrity signal: `tables.audit.integrity`).

A terminal alone can void its open round and the house refunds its stakes, so voids are tested:
each table's voids in each shift of the window (INTEGRITY_VOID_SHIFTS), and summed over the
window, against the pool's other tables (Fisher's exact conditional test, its tail bounded by
`rules.tails`), joining the award counts' Holm family.

Invariants: reads only (two aggregate queries bounded by the window); every expectation and tail
is an exact Fraction; a shift's figures are those of the rounds opened in it.

Shifts, the window, the test and why it is valid: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from fractions import Fraction
from typing import Literal

from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import ExtractHour, TruncDate
from django.utils import timezone

from rules.tails import poisson_upper_tail_bound
from tables.models import Round, RoundSeat, RoundState

VoidKind = Literal["voids_in_shift", "voids_in_window"]
IN_SHIFT: VoidKind = "voids_in_shift"
IN_WINDOW: VoidKind = "voids_in_window"


@dataclass(frozen=True, slots=True, order=True)
class Shift:
    """The ``index``-th shift (from 0, at midnight) of the club day ``day``."""

    day: date
    index: int

    def start(self, zone: tzinfo) -> datetime:
        return datetime.combine(self.day, time(self.index * settings.SHIFT_HOURS), tzinfo=zone)

    def end(self, zone: tzinfo) -> datetime:
        following = self.index + 1
        if following * settings.SHIFT_HOURS == 24:
            return datetime.combine(self.day + timedelta(days=1), time(0), tzinfo=zone)
        return datetime.combine(self.day, time(following * settings.SHIFT_HOURS), tzinfo=zone)

    def before(self) -> Shift:
        if self.index:
            return Shift(self.day, self.index - 1)
        return Shift(self.day - timedelta(days=1), 24 // settings.SHIFT_HOURS - 1)


def shift_of(moment: datetime, zone: tzinfo) -> Shift:
    local = moment.astimezone(zone)
    return Shift(local.date(), local.hour // settings.SHIFT_HOURS)


def window_shifts(now: datetime, zone: tzinfo) -> list[Shift]:
    """The window's shifts, oldest first; the last is the current one."""
    shifts = [shift_of(now, zone)]
    while len(shifts) < settings.INTEGRITY_VOID_SHIFTS:
        shifts.append(shifts[-1].before())
    return shifts[::-1]


@dataclass(slots=True)
class Cell:
    """A table's decided rounds of one shift (or of the window), their voids, and the stakes
    those voids refunded (count and cents)."""

    rounds: int = 0
    voids: int = 0
    refunded_stakes: int = 0
    refunded_cents: int = 0

    def add(self, other: Cell) -> None:
        self.rounds += other.rounds
        self.voids += other.voids
        self.refunded_stakes += other.refunded_stakes
        self.refunded_cents += other.refunded_cents


@dataclass(slots=True)
class PoolVoids:
    """One pool's counts over the window: ``cells[table][shift]``, and each shift's totals."""

    cells: dict[int, dict[Shift, Cell]] = field(default_factory=lambda: defaultdict(dict))
    totals: dict[Shift, Cell] = field(default_factory=lambda: defaultdict(Cell))

    def expected(self, table: int, shift: Shift) -> Fraction:
        """The table's mean number of voids in the shift given the shift's totals: n x V / N."""
        cell, total = self.cells[table].get(shift), self.totals.get(shift)
        if cell is None or total is None or not total.rounds:
            return Fraction(0)
        return Fraction(cell.rounds * total.voids, total.rounds)

    def fixed(self, table: int, shift: Shift) -> bool:
        """Whether the shift's totals fix the table's voids there: no void, or every round
        voided, or the table alone."""
        cell, total = self.cells[table].get(shift), self.totals[shift]
        return cell is None or total.voids in (0, total.rounds) or cell.rounds == total.rounds


@dataclass(slots=True)
class Window:
    """Every pool's counts over the window's shifts (oldest first), read at ``now``."""

    zone: tzinfo
    now: datetime
    shifts: list[Shift]
    pools: dict[int, PoolVoids]

    @property
    def start(self) -> datetime:
        return self.shifts[0].start(self.zone)


def window_reads(
    start: datetime, end: datetime, pool_id: int | None = None
) -> tuple[QuerySet[Round], QuerySet[RoundSeat]]:
    """The decided rounds of a pool (of record) opened in [start, end), and the progressive stakes
    of those voided: both ranges of the index on ``Round.opened_at``."""
    rounds = Round.objects.filter(
        opened_at__gte=start,
        opened_at__lt=end,
        pool__isnull=False,
        state__in=(RoundState.SETTLED, RoundState.VOID),
    )
    seats = RoundSeat.objects.filter(
        round__opened_at__gte=start,
        round__opened_at__lt=end,
        round__pool__isnull=False,
        round__state=RoundState.VOID,
        progressive_cents__gt=0,
    )
    if pool_id is not None:
        rounds = rounds.filter(pool_id=pool_id)
        seats = seats.filter(round__pool_id=pool_id)
    return rounds, seats


def read_window(*, now: datetime | None = None, pool_id: int | None = None) -> Window:
    """The counts of the rounds opened in the window, by pool, table and shift (of one pool when
    ``pool_id`` is given): one aggregate query for the rounds, one for the stakes their voids
    refunded."""
    now = now or timezone.now()
    zone = timezone.get_default_timezone()
    shifts = window_shifts(now, zone)
    rounds, seats = window_reads(shifts[0].start(zone), now, pool_id)
    pools: dict[int, PoolVoids] = defaultdict(PoolVoids)
    by_hour = (
        rounds.annotate(
            day=TruncDate("opened_at", tzinfo=zone), hour=ExtractHour("opened_at", tzinfo=zone)
        )
        .values("pool_id", "table_id", "day", "hour")
        .annotate(n=Count("pk"), voids=Count("pk", filter=Q(state=RoundState.VOID)))
        .values_list("pool_id", "table_id", "day", "hour", "n", "voids")
    )
    for pool, table, day, hour, n, voids in by_hour:
        _cell(pools[pool], table, Shift(day, hour // settings.SHIFT_HOURS)).add(
            Cell(rounds=n, voids=voids)
        )
    refunds = (
        seats.annotate(
            day=TruncDate("round__opened_at", tzinfo=zone),
            hour=ExtractHour("round__opened_at", tzinfo=zone),
        )
        .values("round__pool_id", "round__table_id", "day", "hour")
        .annotate(stakes=Count("pk"), cents=Sum("progressive_cents"))
        .values_list("round__pool_id", "round__table_id", "day", "hour", "stakes", "cents")
    )
    for pool, table, day, hour, stakes, cents in refunds:
        _cell(pools[pool], table, Shift(day, hour // settings.SHIFT_HOURS)).add(
            Cell(refunded_stakes=stakes, refunded_cents=int(cents))
        )
    for watched in pools.values():
        for cells in watched.cells.values():
            for shift, cell in cells.items():
                watched.totals[shift].add(cell)
    return Window(zone=zone, now=now, shifts=shifts, pools=dict(pools))


def _cell(pool: PoolVoids, table: int, shift: Shift) -> Cell:
    return pool.cells[table].setdefault(shift, Cell())


@dataclass(frozen=True, slots=True)
class VoidTest:
    """One scope's test: a table's voids in one shift, or over the window's shifts."""

    pool_id: int
    table_id: int
    kind: VoidKind
    window_from: datetime
    window_to: datetime
    cell: Cell
    expected: Fraction
    tail: Fraction


def void_tests(window: Window) -> list[VoidTest]:
    """Every test the window allows (module docstring: what is left out, and why)."""
    tests = []
    minimum = settings.INTEGRITY_VOID_MIN_ROUNDS
    for pool_id, watched in sorted(window.pools.items()):
        for table_id, cells in sorted(watched.cells.items()):
            summed, expected, informative = Cell(), Fraction(0), False
            for shift, cell in sorted(cells.items()):
                summed.add(cell)
                mean = watched.expected(table_id, shift)
                expected += mean
                if watched.fixed(table_id, shift):
                    continue
                informative = True
                if cell.rounds >= minimum:
                    tests.append(
                        VoidTest(
                            pool_id=pool_id,
                            table_id=table_id,
                            kind=IN_SHIFT,
                            window_from=shift.start(window.zone),
                            window_to=min(shift.end(window.zone), window.now),
                            cell=cell,
                            expected=mean,
                            tail=poisson_upper_tail_bound(mean, cell.voids),
                        )
                    )
            if informative and summed.rounds >= minimum:
                tests.append(
                    VoidTest(
                        pool_id=pool_id,
                        table_id=table_id,
                        kind=IN_WINDOW,
                        window_from=window.start,
                        window_to=window.now,
                        cell=summed,
                        expected=expected,
                        tail=poisson_upper_tail_bound(expected, summed.voids),
                    )
                )
    return tests
