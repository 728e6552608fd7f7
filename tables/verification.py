"""The journal's checks that need the rounds: the whole `verify_journal` and the pool report.

`jackpot.verification` and `jackpot.reports` know the journal alone; the tables sit above the
progressive and add what only they know, in the same snapshot:
- each table's chain may move the money of its table's pool, and of no other;
- per pool: the `stakes` account equals minus the progressive stakes of every round that was
  not voided (a voided round's stakes were refunded by the house);
- the report's stake count: every progressive stake of the pool's tables, voided rounds
  included (the meter keeps its share of those).
The command `verify_journal`, `GET /api/v1/journal/verify` and the pool report call these.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import Sum

from jackpot import reports
from jackpot import verification as journal
from jackpot.bodies import PoolReport
from jackpot.ledger import table_chain
from jackpot.models import Pool
from tables.models import RoundSeat, RoundState, Table


def _table_chains() -> dict[str, int | None]:
    return {table_chain(table): pool for table, pool in Table.objects.values_list("pk", "pool_id")}


def _round_stakes(pool: Pool, balances: Mapping[str, int]) -> list[tuple[str, int, int]]:
    stakes = (
        RoundSeat.objects.filter(round__table__pool=pool)
        .exclude(round__state=RoundState.VOID)
        .aggregate(s=Sum("progressive_cents"))["s"]
        or 0
    )
    return [("stakes account = -stakes of rounds not voided", balances["stakes"], -int(stakes))]


def verify_journal() -> journal.Report:
    """The journal's chains and balances, crossed with the tables' chains and rounds."""
    return journal.verify_journal(chain_pools=_table_chains, pool_checks=[_round_stakes])


def pool_report(pool: Pool) -> PoolReport:
    """The pool's reconciliation (`jackpot.reports`) with the stakes its tables took."""
    stakes = RoundSeat.objects.filter(round__table__pool=pool, progressive_cents__gt=0)
    return reports.pool_report(pool, stakes_count=stakes.count())
