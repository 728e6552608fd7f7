"""Recompute the audit chains and every pool balance from the journal.

Checks, in order, and reports the first failure:
1. each chain's events have sequences 1, 2, 3, ... with no gap, each `prev_hash` is the previous
   event's hash, each `hash` equals SHA-256(prev_hash + canonical content incl. transfers), and
   the chain's head row names the last event (so events cut off the end are found too);
2. every transfer belongs to an event of a chain allowed to move its pool's money (the pool's own
   chain, or a chain the caller names for that pool);
3. with anchors (`jackpot.anchors`, files written outside the database): each anchored chain
   head is still there with its anchored hash, so a chain rewritten whole with the key, or cut
   short with its head row, is found at the anchored sequence;
4. every award row and every pool's parameters equal what the chains say of them
   (`jackpot.projections`): an award or a pool edited in place is named, at its last event;
5. per pool: balances (credits - debits) sum to zero; the meter and reserve accounts equal the
   pool's counters rounded down to the cent; the pending and payable accounts equal the awards
   in those states; then the caller's own checks of the pool.
Each link is an HMAC under the journal's key (`jackpot.ledger.journal_key`), which is not in the
database: rows rewritten there cannot be given hashes that verify.
The database refuses UPDATE and DELETE on the journal, so a failure here means someone went
around the database's own protection.

This module knows the journal alone. What only the layer above knows, the chains of the tables
and the stakes of their rounds, comes in through `chain_pools` and `pool_checks`:
`tables.verification.verify_journal` is the whole check, the one the command and the API run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Sum

from jackpot import anchors as anchoring
from jackpot.bodies import BrokenAt, JournalReport
from jackpot.canonical import chain_hash
from jackpot.ledger import event_content, journal_key, pool_chain
from jackpot.models import (
    UNITS_PER_CENT,
    Account,
    AccountKind,
    AuditChain,
    AuditEvent,
    Award,
    AwardStatus,
    Pool,
    Transfer,
)
from jackpot.models.audit import GENESIS_HASH
from jackpot.projections import Projections

BATCH = 2000

# A check of one pool from above: given the pool and its balances, (label, actual, wanted) rows;
# each row whose actual differs from its wanted is a problem.
PoolCheck = Callable[[Pool, Mapping[str, int]], Iterable[tuple[str, int, int]]]


@dataclass
class Report:
    ok: bool = True
    events: int = 0
    transfers: int = 0
    chains: int = 0
    broken_chain: str | None = None
    broken_sequence: int | None = None
    problems: list[str] = field(default_factory=list)
    balances: dict[int, dict[str, int]] = field(default_factory=dict)

    def fail(self, problem: str, *, chain: str | None = None, sequence: int | None = None) -> None:
        if self.ok and chain is not None:
            self.broken_chain, self.broken_sequence = chain, sequence
        self.ok = False
        self.problems.append(problem)

    def as_body(self) -> JournalReport:
        """The report as the API and `verify_journal --json` show it: the first 20 problems."""
        return JournalReport.model_construct(
            ok=self.ok,
            events=self.events,
            transfers=self.transfers,
            chains=self.chains,
            first_broken=None
            if self.broken_chain is None
            else BrokenAt.model_construct(chain=self.broken_chain, sequence=self.broken_sequence),
            problems=self.problems[:20],
            balances={
                str(pool): {AccountKind(kind): cents for kind, cents in kinds.items()}
                for pool, kinds in self.balances.items()
            },
        )


def _events(chain: str) -> Iterator[AuditEvent]:
    after = 0
    while True:
        batch = list(
            AuditEvent.objects.filter(chain=chain, sequence__gt=after).order_by("sequence")[:BATCH]
        )
        if not batch:
            return
        yield from batch
        after = batch[-1].sequence


def _verify_chain(
    chain: str, pools: frozenset[int], report: Report, projections: Projections
) -> bool:
    """Walk one chain; `pools` are the only pools whose money its events may move. Each event
    whose link verified is shown to `projections`. False: the chain is broken."""
    head = AuditChain.objects.filter(key=chain).first()
    prev_hash, expected, key = GENESIS_HASH, 1, journal_key()
    for event in _events(chain):
        report.events += 1
        transfers = list(Transfer.objects.filter(event=event).order_by("pk"))
        report.transfers += len(transfers)
        where = f"chain {chain} sequence {event.sequence}"
        if event.sequence != expected:
            report.fail(f"{where}: expected sequence {expected}", chain=chain, sequence=expected)
            return False
        if event.prev_hash != prev_hash:
            report.fail(f"{where}: prev_hash does not link", chain=chain, sequence=event.sequence)
            return False
        if chain_hash(key, prev_hash, event_content(event, transfers)) != event.hash:
            report.fail(
                f"{where}: content does not match its hash", chain=chain, sequence=event.sequence
            )
            return False
        if any(t.pool_id not in pools for t in transfers):
            report.fail(
                f"{where}: a transfer of another pool", chain=chain, sequence=event.sequence
            )
            return False
        projections.observe(event)
        prev_hash, expected = event.hash, expected + 1
    # The chain head row must point at the last event: events cut off the end show here.
    if head is None or (head.sequence, head.head_hash) != (expected - 1, prev_hash):
        report.fail(
            f"chain {chain}: the head row does not match its last event {expected - 1}",
            chain=chain,
            sequence=expected,
        )
        return False
    return True


def pool_balances(pool: Pool) -> dict[str, int]:
    """Every account's balance (credits - debits), computed from the transfers."""
    kinds = dict(Account.objects.filter(pool=pool).values_list("pk", "kind"))
    balance: dict[str, int] = defaultdict(int)
    transfers = Transfer.objects.filter(pool=pool)
    for account, total in transfers.values_list("credit").annotate(total=Sum("amount_cents")):
        balance[kinds[account]] += total
    for account, total in transfers.values_list("debit").annotate(total=Sum("amount_cents")):
        balance[kinds[account]] -= total
    return {kind.value: balance.get(kind.value, 0) for kind in AccountKind}


def _verify_pool(pool: Pool, report: Report, pool_checks: Sequence[PoolCheck]) -> None:
    balances = pool_balances(pool)
    report.balances[pool.pk] = balances
    name = f"pool {pool.pk}"

    def award_total(status: AwardStatus) -> int:
        total = Award.objects.filter(pool=pool, status=status).aggregate(s=Sum("amount_cents"))["s"]
        return int(total or 0)

    checks = [
        ("balances sum to zero", sum(balances.values()), 0),
        ("meter account = meter counter", balances["meter"], pool.meter_units // UNITS_PER_CENT),
        (
            "reserve account = reserve counter",
            balances["reserve"],
            pool.reserve_units // UNITS_PER_CENT,
        ),
        (
            "pending account = pending and verified awards",
            balances["awards_pending"],
            award_total(AwardStatus.PENDING) + award_total(AwardStatus.VERIFIED),
        ),
        (
            "payable account = approved awards",
            balances["payable"],
            award_total(AwardStatus.APPROVED),
        ),
        ("paid account = paid awards", balances["paid"], award_total(AwardStatus.PAID)),
    ]
    for check in pool_checks:
        checks.extend(check(pool, balances))
    for label, actual, wanted in checks:
        if actual != wanted:
            report.fail(f"{name}: {label}: {actual} != {wanted}")


def _chain_pools(more: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Which pools each chain may move money of: a pool's own chain its pool, and the chains the
    caller names (each table's chain, its rounds' pools). Any other chain may move no money."""
    chains = {pool_chain(pk): frozenset([pk]) for pk in Pool.objects.values_list("pk", flat=True)}
    chains.update(more)
    return chains


def verify_journal(
    *,
    chain_pools: Callable[[], Mapping[str, frozenset[int]]] = dict,
    pool_checks: Sequence[PoolCheck] = (),
    anchors: Sequence[anchoring.Anchor] = (),
) -> Report:
    """Verify everything in one consistent snapshot, so live traffic cannot cause false alarms.

    `chain_pools` (called inside the snapshot) names the chains beside the pools' own that may
    move a pool's money; `pool_checks` run after each pool's own checks, in the same snapshot;
    `anchors` (`jackpot.anchors.read_anchors`) are checked against the live chains.
    """
    snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic():
        if snapshot:  # inside a caller's transaction, its own snapshot rules
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _verify(chain_pools(), pool_checks, anchors)


def _verify(
    more_chains: Mapping[str, frozenset[int]],
    pool_checks: Sequence[PoolCheck],
    anchors: Sequence[anchoring.Anchor],
) -> Report:
    report = Report()
    chains = list(AuditEvent.objects.values_list("chain", flat=True).distinct().order_by("chain"))
    report.chains = len(chains)
    pools = _chain_pools(more_chains)
    projections = Projections()
    broken = {
        chain
        for chain in chains
        if not _verify_chain(chain, pools.get(chain, frozenset()), report, projections)
    }
    if anchors:
        for found in anchoring.check(list(anchors)):
            report.fail(found.message, chain=found.chain, sequence=found.sequence)
    for problem in projections.problems(broken):
        report.fail(problem.message, chain=problem.chain, sequence=problem.sequence)
    orphans = Transfer.objects.filter(event__isnull=True).count()
    if orphans:
        report.fail(f"{orphans} transfers without an audit event")
    for pool in Pool.objects.order_by("pk"):
        _verify_pool(pool, report, pool_checks)
    return report
