"""A pool at rest: none of its tables open for play, none of its rounds open. What a change of
its parameters, its stop or its replacement waits for (a stop and a replacement also wait for
its awards: `jackpot.pools.settled`).

The progressive sits below the tables and never reads their rows: the tables app hands its answer
in at start-up (`register`, called by `tables.apps.TablesConfig.ready`), a `PoolTables`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from core.errors import Conflict

_REGISTERED: list[PoolTables] = []


def register(tables: PoolTables) -> None:
    """The tables app's answer, registered once at start-up."""
    _REGISTERED[:] = [tables]


def registered() -> PoolTables:
    if not _REGISTERED:
        raise RuntimeError("no PoolTables registered: the tables app is not installed")
    return _REGISTERED[0]


class PoolTables(Protocol):
    """The tables' side of a change that needs its pool at rest (its parameters, its stop). The
    progressive does not read the tables' rows: they sit above it (docs/architecture.md, "The
    layers"), so whoever asks for the change hands the tables' own answer in, or the one the
    tables app registered at start-up (`register`, from `tables.apps`): the progressive never
    imports the tables."""

    def lock(self, pool_id: int) -> list[tuple[str, bool]]:
        """Lock the pool's tables (`Lock.TABLE`, exclusive, in id order: none opens for play
        until the caller commits); their (name, open for play)."""
        ...

    def open_rounds(self, pool_id: int) -> list[tuple[str, str]]:
        """Up to ten of the pool's open rounds, by table: (the table's name, the round's id)."""
        ...

    def in_play(self, pool_id: int) -> list[int]:
        """The ids of the pool's tables open for play, in id order."""
        ...

    def move_all(
        self, from_pool: int, to_pool: int, *, actor: str, facts: Mapping[str, Any]
    ) -> list[int]:
        """Move every table of `from_pool` (locked by `lock`, at rest) to `to_pool`, each with
        its `table.changed` event carrying `facts` (the two-person change that decided it: a
        pool's replacement); the tables' ids, in id order."""
        ...


def refuse_unless_at_rest(
    pool_id: int, tables: list[tuple[str, bool]], pool_tables: PoolTables, *, doing: str
) -> None:
    """409 while a table of the pool (`tables`, as `pool_tables.lock` locked them) is open for
    play (`pool_tables_open`) or a round of the pool is open, even at a closed table
    (`pool_round_open`). `doing` names what waits for it."""
    open_tables = [name for name, enabled in tables if enabled]
    if open_tables:
        raise Conflict(
            "pool_tables_open",
            f"pool {pool_id}'s {doing} only while its tables are closed for play; "
            f"open now: {', '.join(open_tables)}. Close them (PATCH /api/v1/tables/{{table}} "
            '{"enabled": false}) and approve again',
            param="change",
        )
    # A round settles with the terms it opened with, and none of the pool's is open across a
    # change: with every table of the pool closed and locked above, none opens before the
    # caller commits (a table moves to another pool only without an open round).
    open_rounds = pool_tables.open_rounds(pool_id)
    if open_rounds:
        named = ", ".join(f"{table} round {round_id!r}" for table, round_id in open_rounds)
        raise Conflict(
            "pool_round_open",
            f"pool {pool_id}'s {doing} only while none of its rounds is open; open "
            f"now: {named}. Their terminals post their results or void them (a closed table "
            "still may), then approve again",
            param="change",
        )
