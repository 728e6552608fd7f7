"""kill -9 of the web service mid-burst (compliance requirement 26).

The real gunicorn of deploy/systemd/jackpot-web@.service (2 sync workers) serves the test
database; 8 terminals play their rounds over HTTP as docs/api.md 2.11 says. Once a third of the
rounds are acknowledged, the drill kills:

- the whole service: SIGKILL to the master and both workers at once, as when the host process
  dies; then it starts again as systemd's Restart=always does with jackpot-web@.service (its
  RestartSec, its ExecStartPre: the start-up self-check, then ExecStart, whose gunicorn runs the
  self-check again before it binds), on the same address;
- one worker only: gunicorn's master replaces it.

Then, from outside: every round is in the journal once, settled once, with the answer its
terminal was given; the counters equal seed + the stakes' shares to the 1/10,000 cent; and
`manage.py verify_journal` is green.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from typing import Any

import pytest

from tests.conftest import make_floor
from tests.faults.conftest import service_env
from tests.faults.harness import (
    WEB_UNIT,
    Floor,
    Terminal,
    Web,
    burst,
    check_books,
    restart_of,
    verify_journal,
)
from tests.test_production import ROOT

pytestmark = pytest.mark.faults

TABLES = 8
ROUNDS = 18  # per table: 144 rounds, 288 posts
FAULT_AFTER = TABLES * ROUNDS // 3
# The worked example's shares (docs/accounting.md): 62.5 cents a stake to the meter, so the
# counters carry sub-cent remainders and the recomputation below is exact or wrong, not close.
SHARES = {"meter_share_bp": 1250, "reserve_share_bp": 625}


def _terminals(web: Web, floor: Floor, pool_floor: Any) -> list[Terminal]:
    run_id = f"kill-{uuid.uuid4().hex[:8]}"
    return [
        Terminal(
            port=web.port,
            table=table.table_id,
            token=table.token,
            stake_cents=500,
            rounds=ROUNDS,
            run_id=run_id,
            floor=floor,
        )
        for table in pool_floor.uth
    ]


def _report(name: str, figures: dict[str, Any], replays: list[str]) -> None:
    # Shown with `pytest -s`: the figures docs/operations.md quotes.
    print(f"\n{name}: {figures}", *replays, sep="\n  ")


def test_the_whole_web_service_killed_mid_burst_loses_and_doubles_nothing(test_database, tmp_path):
    pool_floor = make_floor(TABLES, **SHARES)
    env = service_env(test_database)
    web = Web(env, tmp_path / "gunicorn.log")
    web.start()
    floor = Floor()
    terminals = _terminals(web, floor, pool_floor)

    def crash_and_restart() -> dict[str, Any]:
        killed = web.crash()
        down = time.monotonic()
        restart_sec, before = restart_of(WEB_UNIT)
        time.sleep(restart_sec)
        for command in before:  # the self-check: the books verify after the crash, or no start
            checked = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            assert checked.returncode == 0, checked.stdout + checked.stderr
        checked_s = time.monotonic() - down - restart_sec
        web.start()
        return {
            "killed": len(killed),
            "restart_sec": restart_sec,
            "selfcheck_s": round(checked_s, 2),
            "restart_s": round(time.monotonic() - down, 2),
        }

    try:
        done, happened = burst(terminals, floor, fault_after=FAULT_AFTER, fault=crash_and_restart)
    finally:
        web.stop()

    assert not done.failures(), "\n".join(done.failures())
    figures = {**done.figures(), **happened}
    _report("whole service killed", figures, done.replays())
    assert happened["killed"] == 3  # the master and its 2 workers
    # The crash was felt: requests met a closed port (or a cut connection) and were resent.
    assert figures["retries"] > 0, figures
    books = check_books(test_database, pool_floor.pool_id, done)
    assert books["rounds"] == TABLES * ROUNDS
    verify_journal(env)


def test_one_worker_killed_mid_burst_is_replaced_and_loses_and_doubles_nothing(
    test_database, tmp_path
):
    pool_floor = make_floor(TABLES, **SHARES)
    env = service_env(test_database)
    web = Web(env, tmp_path / "gunicorn.log")
    web.start()
    before = web.wait_workers(2)
    floor = Floor()
    terminals = _terminals(web, floor, pool_floor)

    def kill_one_worker() -> dict[str, Any]:
        victim = web.kill_worker()
        killed = time.monotonic()
        after = [pid for pid in web.wait_workers(2) if pid != victim]
        while len(after) < 2:
            time.sleep(0.02)
            after = [pid for pid in web.workers() if pid != victim]
        return {"victim": victim, "replaced_s": round(time.monotonic() - killed, 2)}

    try:
        done, happened = burst(terminals, floor, fault_after=FAULT_AFTER, fault=kill_one_worker)
        workers = web.workers()
        master_alive = web.process is not None and web.process.poll() is None
    finally:
        web.stop()

    assert not done.failures(), "\n".join(done.failures())
    figures = {**done.figures(), **happened}
    _report("one worker killed", figures, done.replays())
    # The master stayed, and the killed worker was replaced by a new one.
    assert master_alive
    assert happened["victim"] in before and happened["victim"] not in workers
    assert len(workers) == 2
    books = check_books(test_database, pool_floor.pool_id, done)
    assert books["rounds"] == TABLES * ROUNDS
    verify_journal(env)
