"""A session's figures read from the journal: register model 8 per table and pool, model 8 ter
per pool (compliance 54).

The journal's cut is the head of every `table-*` and `pool-*` chain, read in one statement with
the pools' committed meters (one snapshot). A chain's events take their sequence under its head's
lock and keep it until they commit, so a committed head is an exact cut: every event at or below
it is committed, and an event still in flight when the cut is read lands above it, in the next
session. A session's events of a chain are those in (its opening's head, its close's head].

Invariants:
- the figures come from the events alone (`round.opened`, `round.voided` and the refund's
  transfer, `pool.corrected`); each range is read down the (chain, sequence) index, so a close
  costs the session's events, never the journal's age;
- a void counts in the session it happens in: a round voided after its session closed reduces
  the next session's withheld stakes, since that is where the journal's cut puts it;
- `withheld_cents = stakes_cents - voided_cents`, per table and pool.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from jackpot.models import UNITS_PER_CENT, PoolStatus, TransferCode
from jackpot.money.canonical import loads

#: The chains whose heads make the cut: the tables' (stakes, voids) and the pools' (corrections).
CUT_CHAINS = ("table-", "pool-")
#: The kinds the snapshot reads, and the meter's corrections' target it counts.
OPENED, VOIDED, CORRECTED = "round.opened", "round.voided", "pool.corrected"
METER_TARGET = "meter"

_CUT = (
    "SELECT 'chain', key, sequence, 0, '', NULL FROM jackpot_auditchain"
    " WHERE key LIKE 'table-%%' OR key LIKE 'pool-%%'"
    " UNION ALL"
    " SELECT 'pool', id::text, meter_units / %s, meter_version, status, status_since"
    " FROM jackpot_pool"
)

# The events of each range, down the (chain, sequence) unique index; a void's pool is its
# refund's transfer's (the event names none, its transfers carry it under the event's hash).
# Each range is read by its own scan (a LATERAL subquery that OFFSET 0 keeps from being
# flattened): as a plain join, the planner cannot see the ranges' bounds, guesses a third of the
# journal per range, and past about 60,000 events hashes a sequential scan of the whole journal
# (bench/session_close.py, docs/benchmarks.md "Issue 39").
_EVENTS = (
    "SELECT e.chain, e.kind, e.payload, t.pool_id"
    " FROM unnest(%s::varchar[], %s::bigint[], %s::bigint[]) AS r(chain, low, high)"
    " CROSS JOIN LATERAL ("
    "   SELECT a.id, a.chain, a.sequence, a.kind, a.payload FROM jackpot_auditevent a"
    "   WHERE a.chain = r.chain AND a.sequence > r.low AND a.sequence <= r.high"
    "     AND a.kind IN (%s, %s, %s)"
    "   OFFSET 0"
    " ) e"
    " LEFT JOIN jackpot_transfer t ON t.event_id = e.id AND t.code = %s"
    " ORDER BY e.chain, e.sequence"
)


@dataclass(frozen=True, slots=True)
class PoolAtCut:
    pool: int
    displayed_cents: int
    meter_version: int
    status: str
    status_since: datetime | None


@dataclass(frozen=True, slots=True)
class Cut:
    """The journal's cut (`heads`: `{chain: sequence}`) and the pools' meters at it."""

    heads: dict[str, int]
    pools: list[PoolAtCut]


def cut() -> Cut:
    """The heads of the table and pool chains and the pools' committed meters, in one
    statement (one snapshot of the database)."""
    heads: dict[str, int] = {}
    pools: list[PoolAtCut] = []
    with connection.cursor() as cursor:
        cursor.execute(_CUT, [UNITS_PER_CENT])
        for what, key, first, second, status, since in cursor.fetchall():
            if what == "chain":
                heads[str(key)] = int(first)
            else:
                pools.append(PoolAtCut(int(key), int(first), int(second), str(status), since))
    return Cut(dict(sorted(heads.items())), sorted(pools, key=lambda p: p.pool))


@dataclass(slots=True)
class TableLine:
    """One line of register model 8, as `SessionTable` holds it."""

    table: int
    pool: int
    rounds: int = 0
    stakes: int = 0
    stakes_cents: int = 0
    meter_cents: int = 0
    reserve_cents: int = 0
    house_cents: int = 0
    voided: int = 0
    voided_cents: int = 0
    withheld_cents: int = 0

    def as_payload(self) -> dict[str, int]:
        return asdict(self)


@dataclass(slots=True)
class PoolLine:
    """One line of register model 8 ter, as `SessionPool` holds it."""

    pool: int
    status: str
    displayed_cents: int
    meter_version: int
    corrections: int = 0
    corrections_cents: int = 0

    def as_payload(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Figures:
    tables: list[TableLine]
    pools: list[PoolLine]


def _ranges(opened: dict[str, int], closed: dict[str, int]) -> list[tuple[str, int, int]]:
    """The session's range of each chain that moved: (chain, opened head, closed head)."""
    return [
        (chain, opened.get(chain, 0), high)
        for chain, high in sorted(closed.items())
        if high > opened.get(chain, 0)
    ]


def _events(ranges: list[tuple[str, int, int]]) -> list[tuple[str, str, Any, int | None]]:
    if not ranges:
        return []
    chains, lows, highs = (list(column) for column in zip(*ranges, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            _EVENTS,
            [chains, lows, highs, OPENED, VOIDED, CORRECTED, TransferCode.VOID_REFUND.value],
        )
        return [
            (chain, kind, payload if isinstance(payload, dict) else loads(payload), pool)
            for chain, kind, payload, pool in cursor.fetchall()
        ]


def figures(*, opened_at: datetime, opened_heads: dict[str, int], at: Cut) -> Figures:
    """The session's lines from its events between `opened_heads` and the cut `at`, and the
    pools not stopped before it opened (`opened_at`) as the cut shows them."""
    lines: dict[tuple[int, int], TableLine] = {}
    pools = {
        p.pool: PoolLine(p.pool, p.status, p.displayed_cents, p.meter_version)
        for p in at.pools
        if not (
            p.status == PoolStatus.STOPPED
            and p.status_since is not None
            and p.status_since < opened_at
        )
    }
    for chain, kind, payload, refund_pool in _events(_ranges(opened_heads, at.heads)):
        if kind == OPENED and chain.startswith("table-"):
            _opened(lines, payload)
        elif kind == VOIDED and chain.startswith("table-"):
            refund = int(payload.get("progressive_refund_cents") or 0)
            if refund > 0 and refund_pool is not None:
                line = lines.setdefault(
                    (int(payload["table"]), refund_pool),
                    TableLine(int(payload["table"]), refund_pool),
                )
                line.voided += 1
                line.voided_cents += refund
        elif kind == CORRECTED and payload.get("target") == METER_TARGET:
            pool = pools.get(int(payload["pool"]))
            if pool is not None:
                pool.corrections += 1
                pool.corrections_cents += int(payload["amount_cents"])
    for line in lines.values():
        line.withheld_cents = line.stakes_cents - line.voided_cents
    return Figures(
        tables=[lines[key] for key in sorted(lines)],
        pools=[pools[key] for key in sorted(pools)],
    )


def _opened(lines: dict[tuple[int, int], TableLine], payload: dict[str, Any]) -> None:
    progressive = payload.get("progressive")
    pool = payload.get("pool")
    if progressive is None or pool is None or int(progressive["stakes"]) <= 0:
        return
    key = (int(payload["table"]), int(pool))
    line = lines.setdefault(key, TableLine(*key))
    stakes = int(progressive["stakes"])
    line.rounds += 1
    line.stakes += stakes
    line.stakes_cents += stakes * int(progressive["stake_cents"])
    line.meter_cents += int(progressive["meter_cents"])
    line.reserve_cents += int(progressive["reserve_cents"])
    line.house_cents += int(progressive["house_cents"])
