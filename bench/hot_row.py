"""Where one pool stops scaling: how long a round holds the pool row, and how many commits a
second PostgreSQL makes on that one row.

    .venv/bin/python bench/hot_row.py [--rounds 300] [--clients 1,2,4,8,16,32,64] [--seconds 8]
                                      [--keys]

Every table linked to a pool takes the pool's row (jackpot.money.locks: POOL) for the last part of a
round's open, and of a settle that grants awards: from the `UPDATE jackpot_pool` to the COMMIT.
Those transactions run one after the other, whatever the number of web processes, so one pool
can never take more rounds a second than 1 / (that hold time). Two measurements:

1. **The service's hold time.** Rounds of 7 UTH seats (every seat with the progressive) played in
   process through Django's test client, as bench/round_cpu.py does; a database hook notes when
   the pool's UPDATE starts and when the transaction's commit returns. Prints the median, p99,
   max and mean hold, the ceiling their sum implies, and how many of a round's transactions take
   the row. With `--keys`, every request carries an Idempotency-Key, as docs/api.md's examples
   send them.
2. **PostgreSQL's commits a second on the row.** pgbench replays the last part of a real round's
   open (copied from the rows part 1 wrote): the round.opened event with its transfers in one
   statement, then the pool UPDATE, COMMIT (fsync on, as configured), from 1 to 64 clients at
   once; then the same without the pool UPDATE, to show what the shared row itself costs.

Needs PostgreSQL (DATABASE_URL's server; a database jackpot_hotrow is created anew) and pgbench.
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
SERVER = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
BENCH_URL = urlunsplit(urlsplit(SERVER)._replace(path="/jackpot_hotrow"))
os.environ["DATABASE_URL"] = BENCH_URL
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"

import psycopg

with psycopg.connect(urlunsplit(urlsplit(SERVER)._replace(path="/postgres")), autocommit=True) as c:
    c.execute("DROP DATABASE IF EXISTS jackpot_hotrow WITH (FORCE)")
    c.execute("CREATE DATABASE jackpot_hotrow")

import django

django.setup()

from django.core.management import call_command
from django.db import connection
from django.test import Client

import config.celery  # noqa: F401  (as gunicorn and manage.py do: the app that sends tasks)
from bench.results import write_result
from jackpot.pools.creation import pool_create
from tables.models import Game
from tables.services import operator_terminal_issue, table_create

DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
SEATS = range(1, 8)
# The statement that takes the pool row: its UPDATE, run after the round's event is written
# (jackpot.money.ledger.Gate), alone or first in a statement that writes with it (an award's numbers
# and its rows: jackpot.money.movements.grant_awards_last).
POOL_UPDATE = re.compile(r"^\s*(WITH\s+\w+\s+AS\s+\(\s*)?UPDATE\s+jackpot_pool\b", re.IGNORECASE)


class HoldClock:
    """The time from a transaction's first `UPDATE jackpot_pool` (the start of the statement
    that runs it) to the return of its COMMIT. (An open whose guess of the counters was wrong
    rolls its first UPDATE back and takes the row again: counted from the first, a little
    longer than it held the row. One terminal at a time, as here, never guesses wrong.)

    A database hook (`connection.execute_wrapper`) sees the UPDATE; the COMMIT is not a statement
    Django executes but the driver's `commit()`, reached through the connection's `_commit`, so the
    clock wraps that one method of this bench's connection (`on_commit` would run after the other
    after-commit work, the sign's publish among it, and count that too).
    """

    def __init__(self) -> None:
        self.holds: list[float] = []
        self.updates: list[float] = []  # each hold's UPDATE alone (its round trip)
        self.commits: list[float] = []  # each hold's COMMIT alone (its round trip and fsync)
        self._since: float | None = None
        self._commit = connection._commit  # type: ignore[attr-defined]
        connection._commit = self._timed_commit  # type: ignore[attr-defined]

    def __call__(self, execute, sql, params, many, context):
        if self._since is not None or not POOL_UPDATE.match(sql):
            return execute(sql, params, many, context)
        self._since = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.updates.append(time.perf_counter() - self._since)

    def _timed_commit(self) -> None:
        committing = time.perf_counter()
        self._commit()
        if self._since is not None:
            done = time.perf_counter()
            self.holds.append(done - self._since)
            self.commits.append(done - committing)
            self._since = None


def _bodies(number: int, shuffler: random.Random) -> tuple[str, str]:
    bets = {"ante_cents": 500, "blind_cents": 500, "trips_cents": 500, "progressive_cents": 500}
    opened = {"round_id": f"r{number}", "seats": [{"seat": s, "bets": bets} for s in SEATS]}
    deck = DECK[:]
    shuffler.shuffle(deck)
    play = {"action": "play", "street": "preflop", "multiple": 4}
    result = {
        "board": deck[:5],
        "dealer": deck[5:7],
        "seats": [
            {"seat": s, "cards": deck[7 + 2 * s : 9 + 2 * s], "decision": play} for s in SEATS
        ],
    }
    return json.dumps(opened), json.dumps(result)


def service_holds(rounds: int, *, keyed: bool) -> tuple[dict[str, float], int]:
    """Play `rounds` rounds on a new pool (with `keyed`, each request with an Idempotency-Key);
    the pool row's hold figures, and the pool's id."""
    call_command("migrate", verbosity=0)
    pool = pool_create(name="Hot row", actor="bench")
    table = table_create(name="Hot 1", game=Game.UTH, pool=pool, actor="bench")
    token = operator_terminal_issue(table=table, name="t", revoke_others=False, actor="bench").token
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    shuffler = random.Random(2026)
    base = f"/api/v1/tables/{table.pk}/rounds"

    def key(step: str, number: int) -> dict[str, str]:
        return {"Idempotency-Key": f"{step}-r{number}"} if keyed else {}

    def play(number: int) -> None:
        opened, result = _bodies(number, shuffler)
        answer = client.post(base, opened, "application/json", headers=key("open", number))
        assert answer.status_code == 201, answer.content
        path = f"{base}/r{number}/result"
        answer = client.post(path, result, "application/json", headers=key("result", number))
        assert answer.status_code == 200, answer.content

    for number in range(50):  # warm up: caches, the evaluator's tables
        play(number)
    clock = HoldClock()
    with connection.execute_wrapper(clock):
        for number in range(50, 50 + rounds):
            play(number)
    holds = sorted(clock.holds)
    median = statistics.median(holds)
    # What the service does with the row held before it asks to commit: the statements and the
    # Python between them (the COMMIT's own round trip and fsync are PostgreSQL's and the disk's).
    before = sorted(hold - commit for hold, commit in zip(clock.holds, clock.commits, strict=True))
    return {
        "rounds": rounds,
        "pool_transactions": len(holds),
        "pool_transactions_per_round": len(holds) / rounds,
        "hold_p50_ms": median * 1000,
        "hold_p99_ms": holds[int(len(holds) * 0.99) - 1] * 1000,
        "hold_max_ms": holds[-1] * 1000,
        "before_commit_p50_ms": statistics.median(before) * 1000,
        "before_commit_p99_ms": before[int(len(before) * 0.99) - 1] * 1000,
        "update_p50_ms": statistics.median(clock.updates) * 1000,
        "commit_p50_ms": statistics.median(clock.commits) * 1000,
        "hold_mean_ms": statistics.fmean(holds) * 1000,
        # The row's whole time a round, the long holds of the settles that grant awards
        # included: the median alone (as until 2026-12-04) made the ceiling look higher.
        "ceiling_rounds_per_s": rounds / sum(holds),
    }, pool.pk


def pgbench_script(pool_id: int, *, with_pool_row: bool) -> str:
    """The last part of a real round's open, replayed: the round.opened event and its transfers
    (copied from the last one part 1 wrote, into a chain of each pgbench client's own), then the
    pool row's UPDATE, which holds the row to the COMMIT.

    The copies have no round of their own, so the index that keeps a round's transfer codes
    unique would refuse the second copy: in this throwaway database it is swapped for the same
    index without uniqueness, which costs each insert the same.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, payload::text FROM jackpot_auditevent WHERE kind = 'round.opened'"
            " ORDER BY id DESC LIMIT 1"
        )
        event_id, payload = cursor.fetchone()
        cursor.execute("CREATE SEQUENCE IF NOT EXISTS bench_hot_sequence")
        cursor.execute("DROP INDEX IF EXISTS transfer_once_per_round_code_award")
        cursor.execute(
            "CREATE INDEX IF NOT EXISTS bench_transfer_round_code_award ON jackpot_transfer"
            " (pool_id, code, COALESCE(round_id, 0), COALESCE(award_id, 0))"
            " WHERE NOT code = 'correction'"
        )
    literal = payload.replace("'", "''")
    update = (
        f"UPDATE jackpot_pool SET meter_units = meter_units + 7 * stake_cents * meter_share_bp,"
        f" reserve_units = reserve_units + 7 * stake_cents * reserve_share_bp,"
        f" meter_version = meter_version + 1, meter_changed_at = now()"
        f" WHERE id = {pool_id} RETURNING meter_units, reserve_units, meter_version;\n"
    )
    insert = (
        "WITH event AS (INSERT INTO jackpot_auditevent"
        " (chain, sequence, kind, actor, occurred_at, payload, prev_hash, hash)"
        " VALUES ('bench-' || :client_id, nextval('bench_hot_sequence'), 'round.opened', 'bench',"
        f" now(), '{literal}'::jsonb, repeat('0', 64), md5(random()::text) || md5(random()::text))"
        " RETURNING id)"
        " INSERT INTO jackpot_transfer"
        " (pool_id, event_id, code, debit_id, credit_id, amount_cents, round_id, award_id,"
        " created_at)"
        " SELECT t.pool_id, event.id, t.code, t.debit_id, t.credit_id, t.amount_cents, NULL,"
        f" NULL, now() FROM jackpot_transfer t, event WHERE t.event_id = {event_id};\n"
    )
    return "BEGIN;\n" + insert + (update if with_pool_row else "") + "COMMIT;\n"


def pgbench(script: str, clients: int, seconds: float) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as file:
        file.write(script)
        file.flush()
        run = subprocess.run(
            [
                shutil.which("pgbench") or "pgbench",
                "--no-vacuum",
                f"--file={file.name}",
                f"--client={clients}",
                f"--jobs={min(clients, 2)}",
                f"--time={max(1, round(seconds))}",
                BENCH_URL,
            ],
            capture_output=True,
            text=True,
        )
    if run.returncode != 0:
        raise SystemExit(f"pgbench failed: {run.stderr.strip()}")
    tps = re.search(r"tps = ([\d.]+)", run.stdout)
    latency = re.search(r"latency average = ([\d.]+) ms", run.stdout)
    if tps is None or latency is None:
        raise SystemExit(f"pgbench printed no figures: {run.stdout}")
    return {
        "clients": clients,
        "commits_per_s": float(tps.group(1)),
        "latency_ms": float(latency.group(1)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--clients", default="1,2,4,8,16,32,64")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument(
        "--keys", action="store_true", help="every request with an Idempotency-Key (part 1)"
    )
    args = parser.parse_args()
    clients = [int(n) for n in args.clients.split(",")]

    holds, pool_id = service_holds(args.rounds, keyed=args.keys)
    print(f"machine: {os.cpu_count()} cores; PostgreSQL {SERVER.rsplit('@', 1)[-1]}")
    print(
        f"1. the service, in process, {holds['rounds']} rounds of 7 seats with the progressive"
        f"{', each request with an Idempotency-Key' if args.keys else ''}:"
        f" {holds['pool_transactions_per_round']:.2f} transactions a round take the pool row,"
        f" each holds it p50 {holds['hold_p50_ms']:.2f} ms, p99 {holds['hold_p99_ms']:.2f} ms,"
        f" max {holds['hold_max_ms']:.2f} ms, mean {holds['hold_mean_ms']:.2f} ms: at most"
        f" {holds['ceiling_rounds_per_s']:.0f} rounds/s for one pool (its whole hold a round)"
    )
    print(
        f"   of it, before the COMMIT: p50 {holds['before_commit_p50_ms']:.2f} ms, p99"
        f" {holds['before_commit_p99_ms']:.2f} ms (the UPDATE's own round trip p50"
        f" {holds['update_p50_ms']:.2f} ms); the COMMIT itself p50 {holds['commit_p50_ms']:.2f} ms"
    )
    print("2. pgbench, the last part of an open replayed (commits/s, mean latency ms)")
    print(f"{'clients':>8}{'one pool row':>16}{'latency':>10}{'no shared row':>16}{'latency':>10}")
    rows = []
    for count in clients:
        hot = pgbench(pgbench_script(pool_id, with_pool_row=True), count, args.seconds)
        free = pgbench(pgbench_script(pool_id, with_pool_row=False), count, args.seconds)
        rows.append({"clients": count, "one_pool_row": hot, "no_shared_row": free})
        print(
            f"{count:>8}{hot['commits_per_s']:>16.0f}{hot['latency_ms']:>10.2f}"
            f"{free['commits_per_s']:>16.0f}{free['latency_ms']:>10.2f}"
        )
    path = write_result("hot_row", {"service": holds, "pgbench": rows})
    print(f"written: {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")


if __name__ == "__main__":
    main()
