"""The tables of a pool, as the progressive needs them: which are open for play, and whether the
pool is at rest (no table of it open for play, none of its rounds open) for a change of its
parameters or its stop.

The progressive (`jackpot`) sits below the tables and never reads their rows: a table's and a
round's foreign keys to their pool have no reverse accessor (`related_name="+"`), and what a pool
change needs of its tables is handed to it by its caller as `POOL_TABLES`
(`jackpot.pools.at_rest.PoolTables`, registered at start-up by `tables.apps`). Its lock is
`jackpot.money.locks.pool_tables` (`Lock.TABLE`, exclusive, in id order, before the pool's row).
"""

from __future__ import annotations

from jackpot.money import locks
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


POOL_TABLES = _PoolTables()
