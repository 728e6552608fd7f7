"""kill -9 of the database mid-burst (compliance requirements 26 and 28).

A PostgreSQL 15 cluster of the test's own (initdb in a temporary directory, a free port), migrated
and seeded as an operator would (`manage.py migrate`, `manage.py seed_demo --json`); the real
gunicorn (2 workers) serves it, and 8 terminals play their rounds over HTTP. Once a third of the
rounds are acknowledged, a database process is killed with SIGKILL:

- the postmaster (the brief's "database process"): its backends leave when they see it gone;
  it stays down a few seconds and is started again with `pg_ctl start`, which runs crash
  recovery;
- one backend serving the service, inside a statement or a transaction when one can be caught:
  the postmaster then ends every other backend, cutting the transactions in flight, and runs
  crash recovery by itself.

The shared server on 5432 is never touched. During the outage every terminal is answered 503
`progressive_closed` within 2 s (the worst latency is measured); gunicorn stays up throughout, so
no connection error is expected at all. Then play resumes, the terminals' resends complete every
round once, and the books are checked from the rows and by `manage.py verify_journal` against
the private cluster.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from typing import Any

import psycopg
import pytest

from tests.faults.conftest import migrate, service_env
from tests.faults.harness import (
    PATIENCE_S,
    Floor,
    PrivateCluster,
    Terminal,
    Web,
    burst,
    check_books,
    verify_journal,
)
from tests.test_production import ROOT

pytestmark = pytest.mark.faults

TABLES = 8
ROUNDS = 18  # per table: 144 rounds, 288 posts
FAULT_AFTER = TABLES * ROUNDS // 3
DOWN_S = 3.0  # how long the database stays dead before pg_ctl start


def _seed_floor(env: dict[str, str]) -> dict[str, Any]:
    """`manage.py seed_demo --json`: a pool, its tables and their terminals' tokens."""
    result = subprocess.run(
        [sys.executable, "manage.py", "seed_demo", "--tables", str(TABLES), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    floor: dict[str, Any] = json.loads(result.stdout)
    return floor


@pytest.mark.parametrize("victim", ["postmaster", "backend"])
def test_the_database_killed_mid_burst_closes_the_progressive_then_loses_and_doubles_nothing(
    cluster: PrivateCluster, tmp_path, victim
):
    cluster.create_database("jackpot")
    database = cluster.url("jackpot")
    env = service_env(database)
    migrate(env)
    seeded = _seed_floor(env)
    pool = seeded["pools"][0]["id"]
    with psycopg.connect(database) as connection:
        row = connection.execute("SELECT stake_cents FROM jackpot_pool WHERE id = %s", [pool])
        (stake_cents,) = row.fetchone() or (0,)

    web = Web(env, tmp_path / "gunicorn.log")
    web.start()
    floor = Floor()
    run_id = f"pgkill-{uuid.uuid4().hex[:8]}"
    terminals = [
        Terminal(
            port=web.port,
            table=table["id"],
            token=table["token"],
            stake_cents=stake_cents,
            rounds=ROUNDS,
            run_id=run_id,
            floor=floor,
        )
        for table in seeded["tables"]
        if table["game"] == "uth" and table["pool"] == pool
    ]
    assert len(terminals) == TABLES

    def kill_the_postmaster() -> dict[str, Any]:
        _, orphans = cluster.kill_postmaster()
        gone = time.monotonic()
        time.sleep(DOWN_S)
        recovery_s = cluster.start()  # pg_ctl start -w: crash recovery, then connections
        return {
            "postmaster_children": len(orphans),
            "gone": gone,
            "up": time.monotonic(),
            "pg_start_s": round(recovery_s, 2),
        }

    def kill_a_backend() -> dict[str, Any]:
        _, state = cluster.kill_backend("jackpot")
        gone = time.monotonic()
        recovery_s = cluster.wait_recovered()  # the postmaster's own reset and recovery
        return {
            "backend_state": state,
            "gone": gone,
            "up": time.monotonic(),
            "pg_start_s": round(recovery_s, 2),
        }

    fault = kill_the_postmaster if victim == "postmaster" else kill_a_backend
    try:
        done, happened = burst(terminals, floor, fault_after=FAULT_AFTER, fault=fault)
        web_survived = web.process is not None and web.process.poll() is None
    finally:
        web.stop()

    assert not done.failures(), "\n".join(done.failures())
    attempts = done.attempts
    refusals = [a for a in attempts if not (a.status and a.status < 300)]
    closed = [a for a in refusals if a.closed]
    resumed = min(
        a.at + a.seconds for a in attempts if a.status and a.status < 300 and a.at > happened["up"]
    )
    figures = {
        **done.figures(),
        "closed_answers": len(closed),
        "pg_start_s": happened["pg_start_s"],
        **{
            key: happened[key]
            for key in ("backend_state", "postmaster_children")
            if key in happened
        },
        "resumed_after_pg_up_s": round(resumed - happened["up"], 3),
        "outage_s": round(resumed - happened["gone"], 2),
    }
    print(f"\n{victim} killed: {figures}", *done.replays(), sep="\n  ")

    # The web process never went away: every refusal was the explicit closed answer, in time.
    assert web_survived
    assert closed, "no terminal met the closed progressive: the kill was not felt"
    assert refusals == closed, {a.error or str(a.status) for a in refusals}
    worst = max(a.seconds for a in closed)
    assert worst < PATIENCE_S, f"503 progressive_closed after {worst:.2f} s"

    books = check_books(database, pool, done)
    assert books["rounds"] == TABLES * ROUNDS
    report = verify_journal(env)
    assert report["transfers"] > 0
