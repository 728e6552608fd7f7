"""The tables of a pool, as the progressive needs them: which are open for play, and whether the
pool is at rest (no table of it open for play, none of its rounds open) for a change of its
parameters, its stop or its replacement, and the move of all its tables to the pool replacing it.

The progressive (`jackpot`) sits below the tables and never reads their rows: a table's and a
round's foreign keys to their pool have no reverse accessor (`related_name="+"`), and what a pool
change needs of its tables is handed to it by its caller as `POOL_TABLES`
(`jackpot.pools.at_rest.PoolTables`, registered at start-up by `tables.apps`). Its lock is
`jackpot.money.locks.pool_tables` (`Lock.TABLE`, exclusive, in id order, before the pool's row).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jackpot.money import ledger, locks
from tables.models import Round, RoundState, Table


def tables_in_play(pool_id: int) -> list[int]:
    """The ids of the pool's tables open for play, in id order (what its configuration lists)."""
    in_play = Table.objects.filter(pool_id=pool_id, enabled=True).order_by("pk")
    return list(in_play.values_list("pk", flat=True))


class _PoolTables:
    """`jackpot.pools.at_rest.PoolTables`, from the tables' rows (registered by `tables.apps`)."""

    def in_play(self, pool_id: int) -> list[int]:
        return tables_in_play(pool_id)

    def lock(self, pool_id: int) -> list[tuple[str, bool]]:
        return locks.pool_tables(Table, pool_id=pool_id)

    def open_rounds(self, pool_id: int) -> list[tuple[str, str]]:
        # Through the index `round_open_per_pool` (tables.models).
        open_rounds = Round.objects.filter(pool_id=pool_id, state=RoundState.OPEN)
        return list(open_rounds.order_by("table_id").values_list("table__name", "round_id")[:10])

    def move_all(
        self, from_pool: int, to_pool: int, *, actor: str, facts: Mapping[str, Any]
    ) -> list[int]:
        # The rows were locked by `lock` (the caller's first lock): one statement moves them, then
        # each move is recorded as a table's move is (`tables.services.table_move_approve`).
        moved = list(Table.objects.filter(pool_id=from_pool).order_by("pk").values_list("pk"))
        Table.objects.filter(pool_id=from_pool).update(pool_id=to_pool)
        for (table,) in moved:
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind="table.changed",
                actor=actor,
                payload={
                    "table": table,
                    "before": {"pool": from_pool},
                    "after": {"pool": to_pool},
                    **facts,
                },
            )
        return [table for (table,) in moved]


POOL_TABLES = _PoolTables()
