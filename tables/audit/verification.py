"""The journal's checks that need the rounds, and the runs: routine (`verify_routine`, from the
newest checkpoint) and full (`verify_full`, from the first event).

`jackpot.audit.verification` knows the journal alone; the tables add what only they know, in the
same snapshot (`RoundsCheck`).

Invariants:
- a table's chain moves only the money of its rounds' pools of record;
- per pool, the `stakes` account equals minus the stakes of its rounds not voided;
- every round row made since the checkpoint is announced by a `round.opened` event;
- the rows the register prints say what their events say (`tables.audit.records`), and so do
  the club's sessions, snapshots and drop counts (`tables.audit.sessions`);
- a passing run stores a checkpoint unless the newest already reaches as far.

The checks in full: docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db.models import Count, F, Max, Q, Sum
from django.utils import timezone

from jackpot.audit import checkpoints
from jackpot.audit import verification as journal
from jackpot.audit.anchors import Anchor
from jackpot.audit.projections import Event
from jackpot.bodies.pools import PoolReport
from jackpot.models import Pool, Transfer
from jackpot.money import rows
from jackpot.money.ledger import table_chain
from jackpot.reporting import reports
from tables.audit.history import history_problems
from tables.audit.records import FloorProjection
from tables.audit.sessions import SessionProjection
from tables.models import Round, RoundSeat, RoundState, Table
from tables.selectors.integrity import pool_integrity_flags
from tables.selectors.reconciliation import latest_reconciliation
from tables.selectors.rounds import pool_open_rounds

STAKES = "stakes account = -stakes of rounds not voided"
STRAYS = "transfers for rounds of another pool"
UNANNOUNCED = "rounds made without a round.opened event"


class RoundsCheck:
    """The tables' side of one walk (`jackpot.audit.verification.Crosscheck`); `carried` is what the
    checkpoint it starts from carried (None: from the first event)."""

    def __init__(self, carried: dict[str, Any] | None) -> None:
        self.full = carried is None
        carried = carried or {"stakes": {}, "chains": {}, "round_id": 0}
        self.stakes: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # [live cents, count]
        for pool, figures in carried["stakes"].items():
            self.stakes[int(pool)] = list(figures)
        self.chains = {chain: set(pools) for chain, pools in carried["chains"].items()}
        #: The highest round key walked (checkpoints carry it as "round_id", as stored ones say).
        self.round_pk = int(carried["round_id"])
        self.opened: set[int] = set()
        self.voided: set[int] = set()
        self.moved: set[tuple[int, int]] = set()  # (transfer's pool, its round)
        self.problems: dict[int, dict[str, int]] | None = None
        self.records = FloorProjection(carried.get("records") if not self.full else None)
        self.sessions = SessionProjection(carried.get("sessions", {}) if not self.full else None)

    def chain_pools(self) -> Mapping[str, frozenset[int]]:
        for pk in Table.objects.values_list("pk", flat=True):
            self.chains.setdefault(table_chain(pk), set())
        made = Round.objects.filter(pool__isnull=False, pk__gt=self.round_pk)
        for table, pool in made.values_list("table_id", "pool_id").distinct():
            self.chains[table_chain(table)].add(pool)
        return {chain: frozenset(pools) for chain, pools in self.chains.items()}

    def observe(self, event: Event, transfers: Sequence[journal.TransferRow]) -> None:
        self.records.observe(event)
        self.sessions.observe(event)
        if self.full:
            return
        if event.kind == "round.opened":
            self.opened.add(int(event.payload["round"]))
        elif event.kind == "round.voided":
            self.voided.add(int(event.payload["round"]))
        self.moved.update((t[1], t[6]) for t in transfers if t[6] is not None)

    def pool_checks(
        self, pool: Pool, balances: Mapping[str, int]
    ) -> Iterable[tuple[str, int, int]]:
        if self.problems is None:
            self.problems = self._from_genesis() if self.full else self._since()
        found = self.problems.get(pool.pk, {})
        return [
            (STAKES, balances["stakes"], -self.stakes[pool.pk][0]),
            (STRAYS, found.get(STRAYS, 0), 0),
            (UNANNOUNCED, found.get(UNANNOUNCED, 0), 0),
        ]

    def _from_genesis(self) -> dict[int, dict[str, int]]:
        seats = RoundSeat.objects.filter(round__pool__isnull=False)
        for pool, live, count in seats.values_list("round__pool").annotate(
            live=Sum("progressive_cents", filter=~Q(round__state=RoundState.VOID)),
            count=Count("pk", filter=Q(progressive_cents__gt=0)),
        ):
            self.stakes[pool] = [int(live or 0), int(count)]
        self.round_pk = Round.objects.aggregate(top=Max("pk"))["top"] or 0
        strays = (
            Transfer.objects.filter(round__isnull=False)
            .exclude(round__pool=F("pool"))
            .values_list("pool")
            .annotate(n=Count("pk"))
        )
        return {pool: {STRAYS: n} for pool, n in strays}

    def _since(self) -> dict[int, dict[str, int]]:
        found: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        rounds = self.opened | self.voided | {r for _pool, r in self.moved}
        pools = dict(Round.objects.filter(pk__in=rounds).values_list("pk", "pool_id"))
        seats = RoundSeat.objects.filter(round__in=self.opened | self.voided)
        totals = {
            pk: (int(cents or 0), int(count))
            for pk, cents, count in seats.values_list("round").annotate(
                cents=Sum("progressive_cents"), count=Count("pk", filter=Q(progressive_cents__gt=0))
            )
        }
        for pk in self.opened:
            if pools.get(pk) is not None and pk in totals:
                figures = self.stakes[pools[pk]]
                figures[0] += totals[pk][0]
                figures[1] += totals[pk][1]
        for pk in self.voided:
            if pools.get(pk) is not None and pk in totals:
                self.stakes[pools[pk]][0] -= totals[pk][0]
        for pool, round_pk in self.moved:
            if pools.get(round_pk) != pool:
                found[pool][STRAYS] += 1
        made = Round.objects.filter(pool__isnull=False, pk__gt=self.round_pk)
        for pk, pool in made.values_list("pk", "pool_id"):
            if pk not in self.opened:
                found[pool][UNANNOUNCED] += 1
            self.round_pk = max(self.round_pk, pk)
        return found

    def row_problems(self, broken: bool) -> list[str]:
        return [*self.records.problems(broken), *self.sessions.problems()]

    def carried(self) -> dict[str, Any]:
        return {
            "stakes": {str(pool): figures for pool, figures in sorted(self.stakes.items())},
            "chains": {chain: sorted(pools) for chain, pools in sorted(self.chains.items())},
            "round_id": self.round_pk,
            "records": self.records.carried(),
            "sessions": self.sessions.carried(),
        }


def verify_routine(anchors: Sequence[Anchor] = ()) -> journal.VerificationReport:
    """The journal since the newest checkpoint, crossed with the rounds (and with the chain
    heads anchored outside the database, when given). `keep_checkpoint` stores what it found."""
    return journal.verify_journal(full=False, crosscheck=RoundsCheck, anchors=anchors)


def verify_full(
    anchors: Sequence[Anchor] = (), *, progress: journal.Progress | None = None
) -> journal.VerificationReport:
    """The journal from the first event, crossed with the rounds (and the anchors, when
    given), and the pools' history days recomputed from it (`tables.audit.history`), in one
    snapshot;
    `progress` is told the counts after each batch. `keep_checkpoint` stores it."""
    with rows.snapshot():
        report = journal.verify_journal(
            full=True, crosscheck=RoundsCheck, anchors=anchors, progress=progress
        )
        for problem in history_problems():
            report.fail(f"history: {problem}")
    return report


def keep_checkpoint(report: journal.VerificationReport) -> int | None:
    """Store a passing run's state as the next checkpoint, in a transaction of its own (after
    the run's read-only snapshot); none when the newest checkpoint already reaches as far. The
    checkpoint's id, or None."""
    state = report.state
    if report.ok and state is not None and not checkpoints.covers(state):
        report.checkpoint = checkpoints.store(state, full=report.full).pk
    return report.checkpoint


def pool_report(pool: Pool, found: journal.VerificationReport | None = None) -> PoolReport:
    """The pool's reconciliation (`jackpot.reporting.reports`) with the stakes its tables took, its
    rounds still open, its latest integrity flags (`tables.audit.integrity`) and the latest
    scheduled reconciliation's status (`tables.audit.reconciliation`). `found`: the walk of a
    caller's snapshot (the reconciliation's); None: a routine walk in a snapshot of its own (no
    checkpoint
    stored), which costs what was added since the newest checkpoint."""
    if found is not None:
        return _pool_report(pool, found)
    with rows.snapshot():
        found = verify_routine()
        return _pool_report(Pool.objects.get(pk=pool.pk), found)


def _pool_report(pool: Pool, found: journal.VerificationReport) -> PoolReport:
    rounds = (found.state.rounds if found.state else None) or {}
    stakes = rounds.get("stakes", {}).get(str(pool.pk), [0, 0])
    return reports.journal_pool_report(
        pool,
        found=found,
        stakes_count=int(stakes[1]),
        open_rounds=pool_open_rounds(pool, now=timezone.now()),
        integrity_flags=pool_integrity_flags(pool),
        reconciliation=latest_reconciliation(),
    )
