"""The lock order of `jackpot.money.locks`, checked on the SQL the service really runs.

Each path's statements are recorded and every statement that takes a row lock is classified;
the locks must come in `jackpot.money.locks.Lock`'s order, never back to an earlier one.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jackpot.awards.workflow import award_void, award_void_confirm
from jackpot.models import Award, AwardKind
from jackpot.money.locks import Lock
from jackpot.pools.corrections import correction_approve, correction_propose
from jackpot.pools.parameters import change_approve, change_propose
from tables.pools import POOL_TABLES
from tables.services import table_update
from tests.conftest import ROOT, make_floor, uth_play, uth_seat
from tests.staff import person

pytestmark = pytest.mark.django_db

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
}


def _lock_of(sql: str) -> Lock | None:
    """The lock a statement takes, if it takes one."""
    flat = " ".join(sql.split()).replace('"', "")
    if re.match(r"INSERT INTO tables_round \(", flat):
        return Lock.ROUND
    if flat.startswith("SELECT") and ("FOR UPDATE" in flat or "FOR KEY SHARE" in flat):
        table = re.search(r" FROM (\w+)", flat)
        assert table is not None, flat
        return {
            "tables_table": Lock.TABLE,
            "tables_round": Lock.ROUND,
            "jackpot_award": Lock.AWARD,
            "jackpot_pool": Lock.POOL,
            # A change's row: only ever after the pool row, or alone (jackpot.money.locks).
            "jackpot_parameterchange": None,
        }[table.group(1)]
    # Alone, or first in a statement that writes with it (an award's numbers and its rows).
    if re.match(r"(WITH \w+ AS \()?UPDATE jackpot_pool ", flat):
        return Lock.POOL
    if flat.startswith("UPDATE jackpot_auditchain SET sequence"):
        key = re.search(r"WHERE key = '([^']+)'", flat)
        assert key is not None, flat
        if key.group(1).startswith("table-"):
            return Lock.TABLE_CHAIN
        chains = {"admin": Lock.ADMIN_CHAIN, "club": Lock.CLUB_CHAIN}
        return chains.get(key.group(1), Lock.POOL_CHAIN)
    return None


def _locks(queries: CaptureQueriesContext) -> list[Lock]:
    found = [_lock_of(query["sql"]) for query in queries.captured_queries]
    return [lock for lock in found if lock is not None]


def _in_order(locks: list[Lock]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(locks))


def test_open_settle_and_award_steps_take_their_locks_in_the_one_order(django_user_model):
    floor = make_floor()
    terminal = floor.uth[0]

    with CaptureQueriesContext(connection) as opening:
        response = terminal.post(
            "/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]}
        )
    assert response.status_code == 201
    with CaptureQueriesContext(connection) as settling:
        response = terminal.post("/rounds/r-1/result", ROYAL)
    assert response.status_code == 200
    assert {award["kind"] for award in response.json()["awards"]} == {"royal_flush", "envy"}
    supervisor, second = (django_user_model.objects.create(username=n) for n in ("sup", "sup2"))
    jackpot = Award.objects.get(kind=AwardKind.ROYAL_FLUSH)
    with CaptureQueriesContext(connection) as requesting:
        award_void(award_id=jackpot.pk, user=supervisor, reason="the cards were marked")
    with CaptureQueriesContext(connection) as voiding:
        award_void_confirm(award_id=jackpot.pk, user=second)

    assert sorted(set(_locks(opening))) == [Lock.TABLE, Lock.ROUND, Lock.TABLE_CHAIN, Lock.POOL]
    assert sorted(set(_locks(settling))) == [Lock.ROUND, Lock.TABLE_CHAIN, Lock.POOL]
    assert sorted(set(_locks(requesting))) == [Lock.AWARD, Lock.POOL, Lock.POOL_CHAIN]
    assert sorted(set(_locks(voiding))) == [Lock.AWARD, Lock.POOL, Lock.POOL_CHAIN]
    for path in (opening, settling, requesting, voiding):
        assert _in_order(_locks(path)), _locks(path)


def test_a_change_of_a_pool_locks_its_tables_before_the_pool(django_user_model):
    floor = make_floor()
    ana, bob = (django_user_model.objects.create(username=n) for n in ("ana", "bob"))
    for terminal in floor.uth:
        table_update(table_id=terminal.table_id, changes={"enabled": False}, actor="test")
    change = change_propose(
        pool_id=floor.pool_id,
        changes={"verification_threshold_cents": 200_000},
        reason="a higher threshold",
        user=ana,
    )
    with CaptureQueriesContext(connection) as approving:
        change_approve(
            pool_id=floor.pool_id, change_id=change.pk, user=bob, pool_tables=POOL_TABLES
        )
    locks = [lock for lock in _locks(approving) if lock is not None]
    assert sorted(set(locks)) == [Lock.TABLE, Lock.POOL, Lock.POOL_CHAIN]
    assert locks.count(Lock.TABLE) == 1  # one statement locks the pool's tables, in id order
    assert _in_order(locks), locks


def test_a_path_that_went_back_to_an_earlier_lock_would_be_caught():
    # The checker itself: a pool row taken before the table's chain is out of order.
    assert not _in_order([Lock.ROUND, Lock.POOL, Lock.TABLE_CHAIN])
    assert _lock_of("UPDATE jackpot_pool SET meter_units = 1 WHERE id = 1") == Lock.POOL
    numbering = "WITH numbered AS (UPDATE jackpot_pool SET last_award_number = 2) SELECT 1"
    assert _lock_of(numbering) == Lock.POOL
    assert (
        _lock_of("UPDATE jackpot_auditchain SET sequence = sequence + 1 WHERE key = 'pool-3'")
        == Lock.POOL_CHAIN
    )


def test_a_pools_suspension_and_its_stop_take_their_locks_in_the_one_order(django_user_model):
    from jackpot.pools.lifecycle import pool_stop_approve, pool_stop_propose, pool_suspend

    stopped, heir = make_floor(), make_floor()
    ana, bob = (django_user_model.objects.create(username=n) for n in ("ana", "bob"))
    with CaptureQueriesContext(connection) as suspending:
        pool_suspend(pool_id=stopped.pool_id, reason="a fault", user=ana)
    for terminal in stopped.uth:
        table_update(table_id=terminal.table_id, changes={"enabled": False}, actor="test")
    change = pool_stop_propose(
        pool_id=stopped.pool_id,
        to="pool",
        to_pool=heir.pool_id,
        reason="closing",
        user=ana,
        voluntary=False,
    )
    with CaptureQueriesContext(connection) as approving:
        pool_stop_approve(
            pool_id=stopped.pool_id, change_id=change.pk, user=bob, pool_tables=POOL_TABLES
        )
    # The pool's chain twice: its suspension, then its police notice (a head it holds already).
    assert _locks(suspending) == [Lock.POOL, Lock.POOL_CHAIN, Lock.POOL_CHAIN]
    locks = _locks(approving)
    assert sorted(set(locks)) == [Lock.TABLE, Lock.POOL, Lock.POOL_CHAIN]
    # The stopped pool's chain (its stop, then its police notice: a head it holds already), then
    # its heir's.
    assert locks.count(Lock.POOL_CHAIN) == 3
    assert _in_order(locks), locks


# What asks for a row lock, in the code: Django's `select_for_update`, a locking clause in SQL, an
# advisory lock.
_ASKS_FOR_A_LOCK = re.compile(
    r"FOR (NO KEY )?UPDATE|FOR (KEY )?SHARE|pg_advisory|select_for_update"
)


def _asks_for_a_lock(path: Path) -> set[str]:
    """Where a module asks for a lock: an attribute or name, or a string of its code (a
    docstring only describes, so it is left out)."""
    tree = ast.parse(path.read_text())
    described = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = set()
    for node in ast.walk(tree):
        text = (
            node.attr
            if isinstance(node, ast.Attribute)
            else node.value
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            else None
        )
        if text and id(node) not in described and _ASKS_FOR_A_LOCK.search(text):
            found.add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_row_lock_is_asked_for_by_jackpot_locks():
    """jackpot.money.locks is the one place that takes a lock (jackpot.money.rows builds the locking
    clause its helpers ask for), so the order it states is the whole story."""
    asking = [
        where
        for package in ("config", "core", "jackpot", "tables")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and path.name not in {"locks.py", "rows.py"}
        for where in _asks_for_a_lock(path)
    ]
    assert asking == []
    # The scan itself finds a lock where one is asked for.
    assert _asks_for_a_lock(ROOT / "jackpot" / "money" / "locks.py")


def test_a_corrections_approval_takes_its_locks_in_the_one_order(django_user_model):
    floor = make_floor()
    response = floor.uth[0].post(
        "/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]}
    )
    assert response.status_code == 201
    assert floor.uth[0].post("/rounds/r-1/result", ROYAL).status_code == 200
    jackpot = Award.objects.get(kind=AwardKind.ROYAL_FLUSH)
    sue, max_user = person("sue", "supervisor"), person("max", "manager")
    paths = []
    for target, award in (("meter", None), ("award", jackpot.pk)):
        change = correction_propose(
            pool_id=floor.pool_id,
            target=target,
            award_id=award,
            amount_cents=100,
            reason="a fault",
            reference="ANJ-1",
            evidence="ticket",
            user=sue,
        )
        with CaptureQueriesContext(connection) as approving:
            correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
        paths.append(_locks(approving))
    meter_path, award_path = paths
    assert sorted(set(meter_path)) == [Lock.POOL, Lock.POOL_CHAIN]
    assert sorted(set(award_path)) == [Lock.AWARD, Lock.POOL, Lock.POOL_CHAIN]
    for path in paths:
        assert _in_order(path), path
