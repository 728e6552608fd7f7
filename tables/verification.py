"""The journal's checks that need the rounds: the whole `verify_journal` and the pool report.

`jackpot.verification` and `jackpot.reports` know the journal alone; the tables sit above the
progressive and add what only they know, in the same snapshot:
- each table's chain may move the money of the pools of record of its table's rounds, and of no
  other; a transfer for a round moves the money of that round's pool of record (a table moved
  to another pool keeps its old rounds' journal where it was);
- per pool: the `stakes` account equals minus the progressive stakes of every round of the pool
  that was not voided (a voided round's stakes were refunded by the house);
- the report's stake count: every progressive stake of the pool's rounds, voided rounds
  included (the meter keeps its share of those); and the pool's rounds still open, the stale
  ones named (`tables.selectors.pool_open_rounds`), its latest integrity flags
  (`tables.selectors.pool_integrity_flags`), and the latest reconciliation's status
  (`tables.selectors.latest_reconciliation`).
The command `verify_journal`, `GET /api/v1/journal/verify` and the pool report call these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db.models import Sum
from django.utils import timezone

from jackpot import reports
from jackpot import verification as journal
from jackpot.anchors import Anchor
from jackpot.bodies import PoolReport
from jackpot.ledger import table_chain
from jackpot.models import Pool, Transfer
from tables.models import Round, RoundSeat, RoundState, Table
from tables.selectors import latest_reconciliation, pool_integrity_flags, pool_open_rounds


def _table_chains() -> dict[str, frozenset[int]]:
    pools: dict[str, set[int]] = {
        table_chain(pk): set() for pk in Table.objects.values_list("pk", flat=True)
    }
    for table, pool in (
        Round.objects.filter(pool__isnull=False).values_list("table_id", "pool_id").distinct()
    ):
        pools[table_chain(table)].add(pool)
    return {chain: frozenset(found) for chain, found in pools.items()}


def _rounds_own_pool(pool: Pool, balances: Mapping[str, int]) -> list[tuple[str, int, int]]:
    strays = Transfer.objects.filter(pool=pool, round__isnull=False).exclude(round__pool=pool)
    return [("transfers for rounds of another pool", strays.count(), 0)]


def _round_stakes(pool: Pool, balances: Mapping[str, int]) -> list[tuple[str, int, int]]:
    stakes = (
        RoundSeat.objects.filter(round__pool=pool)
        .exclude(round__state=RoundState.VOID)
        .aggregate(s=Sum("progressive_cents"))["s"]
        or 0
    )
    return [("stakes account = -stakes of rounds not voided", balances["stakes"], -int(stakes))]


def verify_journal(anchors: Sequence[Anchor] = ()) -> journal.Report:
    """The journal's chains and balances, crossed with the tables' chains and rounds (and with
    chain heads anchored outside the database, when given)."""
    return journal.verify_journal(
        chain_pools=_table_chains, pool_checks=[_round_stakes, _rounds_own_pool], anchors=anchors
    )


def pool_report(pool: Pool) -> PoolReport:
    """The pool's reconciliation (`jackpot.reports`) with the stakes its tables took, its
    rounds still open, its latest integrity flags (`tables.integrity`) and the latest scheduled
    reconciliation's status (`tables.reconciliation`)."""
    stakes = RoundSeat.objects.filter(round__pool=pool, progressive_cents__gt=0)
    return reports.pool_report(
        pool,
        stakes_count=stakes.count(),
        open_rounds=pool_open_rounds(pool, now=timezone.now()),
        integrity_flags=pool_integrity_flags(pool),
        reconciliation=latest_reconciliation(),
    )
