"""A pool's history by club day, kept as the journal grows: the fold of the audit events into one
`HistoryDay` row per (pool, club day), so `tables.audit.pool_history` reads a range's days, never
its rounds (a year in under a second on a million rounds).

Invariants:
- `fold_history` folds each event exactly once, under its own advisory lock, after per-chain
  cursors (`HistoryCursor`), at most HISTORY_FOLD_LIMIT events a transaction;
- an event's effect is read from the rows it wrote, which never change afterwards;
- reading costs what was added since the last fold: stored days plus `pending_days` are exactly
  what the journal says, whenever the fold last ran;
- `history_problems` recomputes every day from genesis: the full verification's check of it.

What a day holds and how the events are read: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, F, OuterRef, Q, Subquery, Sum, When
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone as dj_timezone

from jackpot.models import (
    Account,
    AccountKind,
    AuditChain,
    AuditEvent,
    Award,
    AwardStatus,
    Transfer,
)
from jackpot.money import locks, rows
from tables.models import HistoryCursor, HistoryDay, Round, RoundSeat, RoundState

#: The event kinds whose rows the fold reads (the meter's transfers are read for every event).
_ROUND_KINDS = ("round.opened", "round.voided", "round.settled")
AWARD_VOID = "award.void"

Key = tuple[int, date]  # (pool id, club day)


@dataclass
class DayFigures:
    """One pool's figures of one club day (or the change of them an event makes)."""

    meter_moves: int = 0
    meter_change_cents: int = 0
    stakes_count: int = 0
    stakes_cents: int = 0
    refunded_count: int = 0
    refunded_cents: int = 0
    #: staked seats -> settled rounds
    settled: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    #: award kind -> [observed, voided, cents of the non-void]
    awards: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))

    COUNTS = (
        "meter_moves",
        "meter_change_cents",
        "stakes_count",
        "stakes_cents",
        "refunded_count",
        "refunded_cents",
    )

    def add(self, other: DayFigures) -> None:
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for size, rounds in other.settled.items():
            self.settled[size] += rounds
        for kind, figures in other.awards.items():
            mine = self.awards[kind]
            for at, value in enumerate(figures):
                mine[at] += value

    def figures(self) -> dict[str, int]:
        """Every figure by name, zeros left out: what two days are compared by."""
        found = {name: getattr(self, name) for name in self.COUNTS}
        found.update({f"settled[{size}]": n for size, n in self.settled.items()})
        for kind, (observed, voided, cents) in self.awards.items():
            found.update(
                {
                    f"awards[{kind}].observed": observed,
                    f"awards[{kind}].voided": voided,
                    f"awards[{kind}].cents": cents,
                }
            )
        return {name: value for name, value in found.items() if value}

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> DayFigures:
        """From `_ROW` columns after (pool, day)."""
        *counts, settled, awards = row
        day = cls(**dict(zip(cls.COUNTS, counts, strict=True)))
        for size, rounds in settled.items():
            day.settled[int(size)] = rounds
        for kind, figures in awards.items():
            day.awards[kind] = list(figures)
        return day

    def row_fields(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in self.COUNTS},
            "settled": {str(size): n for size, n in sorted(self.settled.items()) if n},
            "awards": {kind: f for kind, f in sorted(self.awards.items()) if any(f)},
        }


_ROW = ("pool_id", "day", *DayFigures.COUNTS, "settled", "awards")


def _days() -> defaultdict[Key, DayFigures]:
    return defaultdict(DayFigures)


def _zone() -> tzinfo:
    return dj_timezone.get_default_timezone()


def _day(moment: datetime, zone: tzinfo) -> date:
    return moment.astimezone(zone).date()


# --- the events after the cursors ---------------------------------------------------------------


def _cursors() -> dict[str, int]:
    return dict(HistoryCursor.objects.values_list("chain", "sequence"))


def _pages(
    cursors: dict[str, int], *, page_size: int, limit: int | None
) -> Iterator[list[tuple[Any, ...]]]:
    """The events after `cursors`, a chain at a time, in keyset pages of `page_size`, at most
    `limit` in all (None: every one). Each row: (id, chain, sequence, kind, round, award)."""
    heads = AuditChain.objects.order_by("key").values_list("key", "sequence")
    pending = [(key, cursors.get(key, 0)) for key, head in heads if head > cursors.get(key, 0)]
    left = limit
    for chain, after in pending:
        while left is None or left > 0:
            size = page_size if left is None else min(page_size, left)
            page = list(
                AuditEvent.objects.filter(chain=chain, sequence__gt=after)
                .order_by("sequence")
                .values_list("pk", "chain", "sequence", "kind", "payload__round", "payload__award")[
                    :size
                ]
            )
            if not page:
                break
            yield page
            after = page[-1][2]
            if left is not None:
                left -= len(page)
            if len(page) < size:
                break


class _Folder:
    """The effect of pages of events on the days, read from their rows (one query each)."""

    def __init__(self) -> None:
        self.zone = _zone()
        self.days = _days()
        self.cursors: dict[str, int] = {}
        self.events = 0
        self._meters: dict[int, int] | None = None

    def meters(self) -> dict[int, int]:
        """meter account id -> its pool (read at the first page: accounts never change)."""
        if self._meters is None:
            self._meters = dict(
                Account.objects.filter(kind=AccountKind.METER).values_list("pk", "pool_id")
            )
        return self._meters

    def fold(self, page: list[tuple[Any, ...]]) -> None:
        zone, days = self.zone, self.days
        self.events += len(page)
        for _, chain, sequence, *_rest in page:
            self.cursors[chain] = max(sequence, self.cursors.get(chain, 0))
        meters = self.meters()
        ids = [event for event, *_ in page]
        for pool, credit, cents, at in Transfer.objects.filter(
            Q(debit_id__in=list(meters)) | Q(credit_id__in=list(meters)), event_id__in=ids
        ).values_list("pool_id", "credit_id", "amount_cents", "created_at"):
            day = days[(pool, _day(at, zone))]
            day.meter_moves += 1
            # A transfer between two meters (none is made) would count once, as a credit.
            day.meter_change_cents += cents if meters.get(credit) == pool else -cents
        kinds: dict[str, list[int]] = defaultdict(list)
        voided_awards = []
        for _, _, _, kind, round_pk, award_pk in page:
            if kind in _ROUND_KINDS and round_pk is not None:
                kinds[kind].append(round_pk)
            elif kind == AWARD_VOID and award_pk is not None:
                voided_awards.append(award_pk)
        touched = {pk for pks in kinds.values() for pk in pks}
        if touched:
            self._rounds(kinds, touched)
        settled = kinds.get("round.settled", [])
        if settled or voided_awards:
            self._awards(settled, voided_awards)

    def _rounds(self, kinds: dict[str, list[int]], touched: set[int]) -> None:
        zone, days = self.zone, self.days
        rounds = {
            pk: (pool, opened, closed)
            for pk, pool, opened, closed in Round.objects.filter(
                pk__in=touched, pool__isnull=False
            ).values_list("pk", "pool_id", "opened_at", "closed_at")
        }
        stakes = {
            round_pk: (count, cents)
            for round_pk, count, cents in RoundSeat.objects.filter(
                round_id__in=list(rounds), progressive_cents__gt=0
            )
            .values("round_id")
            .annotate(count=Count("pk"), cents=Sum("progressive_cents"))
            .values_list("round_id", "count", "cents")
        }
        for kind, pks in kinds.items():
            for pk in pks:
                if pk not in rounds or pk not in stakes:
                    continue  # a Stud table's round, or one without a progressive stake
                pool, opened, closed = rounds[pk]
                count, cents = stakes[pk]
                if kind == "round.opened":
                    day = days[(pool, _day(opened, zone))]
                    day.stakes_count += count
                    day.stakes_cents += cents
                elif kind == "round.voided":
                    day = days[(pool, _day(opened, zone))]
                    day.refunded_count += count
                    day.refunded_cents += cents
                elif closed is not None:  # settled: closed in the same transaction
                    days[(pool, _day(closed, zone))].settled[count] += 1

    def _awards(self, settled: list[int], voided: list[int]) -> None:
        zone, days = self.zone, self.days
        settled_set, voided_set = set(settled), set(voided)
        for pk, pool, kind, cents, at, round_pk in Award.objects.filter(
            Q(round_id__in=settled) | Q(pk__in=voided)
        ).values_list("pk", "pool_id", "kind", "amount_cents", "created_at", "round_id"):
            figures = days[(pool, _day(at, zone))].awards[kind]
            if round_pk in settled_set:
                figures[0] += 1
                figures[2] += cents
            if pk in voided_set:
                figures[1] += 1
                figures[2] -= cents


def _read_pending(cursors: dict[str, int], *, limit: int | None) -> _Folder:
    folder = _Folder()
    for page in _pages(cursors, page_size=settings.HISTORY_FOLD_PAGE, limit=limit):
        folder.fold(page)
    return folder


def pending_days(pool_id: int | None = None) -> dict[Key, DayFigures]:
    """The effect of every event after the fold's cursors, folded in memory (reads only, in the
    caller's transaction): what the stored days lack. Of one pool when `pool_id` is given."""
    days = _read_pending(_cursors(), limit=None).days
    return {key: day for key, day in days.items() if pool_id is None or key[0] == pool_id}


def stored_days(
    pool_id: int, first: date | None = None, last: date | None = None
) -> dict[date, DayFigures]:
    """A pool's stored days from `first` to `last` (None: open)."""
    rows = HistoryDay.objects.filter(pool_id=pool_id)
    if first is not None:
        rows = rows.filter(day__gte=first)
    if last is not None:
        rows = rows.filter(day__lte=last)
    return {row[1]: DayFigures.from_row(row[2:]) for row in rows.values_list(*_ROW)}


def meter_before(pool_id: int, first: date) -> int:
    """The sum of the pool's stored meter changes before `first` (one aggregate of day rows)."""
    total = HistoryDay.objects.filter(pool_id=pool_id, day__lt=first).aggregate(
        total=Coalesce(Sum("meter_change_cents"), 0)
    )["total"]
    return int(total)


# --- the fold ----------------------------------------------------------------------------------


def fold_history(*, limit: int | None = None) -> int:
    """Fold the events after the cursors into the day rows, at most `limit` (default
    HISTORY_FOLD_LIMIT), and move the cursors past them, in one transaction under the fold's
    advisory lock. Returns how many events were folded: fewer than the limit means none is left
    (as of this transaction), or another fold holds the lock (0), which goes on while it finds a
    full page; waiting for it could only end in a timeout (the lock and statement timeouts bound
    every wait) and fold nothing it will not fold."""
    limit = settings.HISTORY_FOLD_LIMIT if limit is None else limit
    with transaction.atomic():
        # The lock first, so that the cursors read are those the last fold moved.
        if not locks.advisory_if_free(locks.Advisory.HISTORY_FOLD):
            return 0
        folder = _read_pending(_cursors(), limit=limit)
        if folder.days:
            _write_days(folder.days)
        if folder.cursors:
            HistoryCursor.objects.bulk_create(
                [HistoryCursor(chain=c, sequence=s) for c, s in folder.cursors.items()],
                update_conflicts=True,
                unique_fields=["chain"],
                update_fields=["sequence"],
            )
        return folder.events


def _write_days(days: dict[Key, DayFigures]) -> None:
    """Each touched day's row, its stored figures plus the fold's (one read, one upsert)."""
    pools = {pool for pool, _ in days}
    dates = {day for _, day in days}
    stored = {
        (row[0], row[1]): DayFigures.from_row(row[2:])
        for row in HistoryDay.objects.filter(pool_id__in=pools, day__in=dates).values_list(*_ROW)
    }
    rows = []
    for key, change in days.items():
        total = stored.get(key, DayFigures())
        total.add(change)
        rows.append(HistoryDay(pool_id=key[0], day=key[1], **total.row_fields()))
    HistoryDay.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["pool", "day"],
        update_fields=[name for name in _ROW if name not in ("pool_id", "day")],
    )


# --- the check ---------------------------------------------------------------------------------


def recomputed_days() -> dict[Key, DayFigures]:
    """Every pool's days from genesis, recomputed from the journal and the rows by aggregate
    queries (one per chart, grouped by pool and day in the database): what the fold must say."""
    zone = _zone()
    days = _days()
    meter = AccountKind.METER
    credited = Q(credit__kind=meter, credit__pool=F("pool"))
    debited = Q(debit__kind=meter, debit__pool=F("pool"))
    for pool, day, moves, change in (
        Transfer.objects.filter(credited | debited)
        .annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("pool_id", "day")
        .annotate(
            moves=Count("pk"),
            change=Sum(Case(When(credited, then=F("amount_cents")), default=-F("amount_cents"))),
        )
        .values_list("pool_id", "day", "moves", "change")
    ):
        days[(pool, day)].meter_moves = moves
        days[(pool, day)].meter_change_cents = change
    voided = Q(round__state=RoundState.VOID)
    for pool, day, count, cents, refunded, refunded_cents in (
        RoundSeat.objects.filter(round__pool__isnull=False, progressive_cents__gt=0)
        .annotate(day=TruncDate("round__opened_at", tzinfo=zone))
        .values("round__pool_id", "day")
        .annotate(
            count=Count("pk"),
            cents=Sum("progressive_cents"),
            refunded=Count("pk", filter=voided),
            refunded_cents=Coalesce(Sum("progressive_cents", filter=voided), 0),
        )
        .values_list("round__pool_id", "day", "count", "cents", "refunded", "refunded_cents")
    ):
        figures = days[(pool, day)]
        figures.stakes_count, figures.stakes_cents = count, cents
        figures.refunded_count, figures.refunded_cents = refunded, refunded_cents
    size = (
        RoundSeat.objects.filter(round=OuterRef("pk"), progressive_cents__gt=0)
        .values("round")
        .annotate(n=Count("pk"))
        .values("n")
    )
    for pool, day, staked, rounds in (
        Round.objects.filter(state=RoundState.SETTLED, pool__isnull=False)
        .annotate(size=Subquery(size), day=TruncDate("closed_at", tzinfo=zone))
        .filter(size__gt=0)
        .values("pool_id", "day", "size")
        .annotate(rounds=Count("pk"))
        .values_list("pool_id", "day", "size", "rounds")
    ):
        days[(pool, day)].settled[staked] = rounds
    void = Q(status=AwardStatus.VOID)
    for pool, day, kind, observed, voided_count, cents in (
        Award.objects.annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("pool_id", "day", "kind")
        .annotate(
            observed=Count("pk"),
            voided=Count("pk", filter=void),
            cents=Coalesce(Sum("amount_cents", filter=~void), 0),
        )
        .values_list("pool_id", "day", "kind", "observed", "voided", "cents")
    ):
        days[(pool, day)].awards[kind] = [observed, voided_count, cents]
    return days


def folded_days() -> dict[Key, DayFigures]:
    """Every pool's days as the history reads them: the stored rows plus the pending events."""
    days = _days()
    for row in HistoryDay.objects.values_list(*_ROW):
        days[(row[0], row[1])].add(DayFigures.from_row(row[2:]))
    for key, change in pending_days().items():
        days[key].add(change)
    return days


def history_problems() -> list[str]:
    """Every (pool, day, figure) whose folded value differs from the journal's, recomputed from
    genesis; empty when the fold is right. Reads only, in one snapshot of its own when the
    caller has no transaction (the stored days, the pending events and the journal agree)."""
    with rows.snapshot():
        return _problems()


def _problems() -> list[str]:
    want, have = recomputed_days(), folded_days()
    problems = []
    # A row edited behind the journal can have no day (a round closed with no time): sorted
    # last, reported as such, never a crash of the check meant to find it.
    for pool, day in sorted(set(want) | set(have), key=lambda key: (key[0], key[1] or date.max)):
        wanted = want[(pool, day)].figures() if (pool, day) in want else {}
        found = have[(pool, day)].figures() if (pool, day) in have else {}
        for name in sorted(set(wanted) | set(found)):
            if wanted.get(name, 0) != found.get(name, 0):
                problems.append(
                    f"history of pool {pool} on {day.isoformat() if day else 'no day'}: {name} is"
                    f" {found.get(name, 0)}, the journal says {wanted.get(name, 0)}"
                )
    return problems
