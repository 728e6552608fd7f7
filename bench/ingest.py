"""Round ingestion through HTTP, 1 to 64 terminals posting at once.

Each terminal (a client thread with its own keep-alive connection) posts rounds of 7 seats, all
with the progressive: an open, then the result. For each level the script prints rounds/s,
hands/s and the p50/p99 latency of a request, and the CPU a round cost each kind of process on
the machine, this script's terminals included, which share its cores (bench/machine_cpu.py).
Two services to post to:

- `--via gunicorn` (the default): one gunicorn on PostgreSQL, nothing in front, and beside each
  level the same figures for two floors (bench/trivial.py): a trivial endpoint (insert one row,
  update one counter row), with our request rate as a share of it, and the round's shape (the
  same two bodies, the terminal's authentication and throttle and the round's number of
  statements, none of its work): the most rounds this stack could ingest here;
- `--via cluster`: the production topology that `make cluster` starts (nginx, the terminals'
  gunicorn instance and two others, pgbouncer in transaction pooling, its own Redis, a worker
  and beat; docs/operations.md "Topology"), started by that command with its own directory and
  database, and stopped after;
- `--via ha`: the same topology on the PostgreSQL pair of `make cluster HA=1` (Patroni, strict
  synchronous replication, HAProxy; docs/operations.md "High availability: Patroni"), made anew
  in var/bench-cluster-ha: what synchronous replication costs, against `--via cluster` run in
  the same hour.

    .venv/bin/python bench/ingest.py [--via gunicorn|cluster|ha] [--seconds 8] [--levels 1,8,32,64]

Needs PostgreSQL and Redis (DATABASE_URL's server; a database jackpot_bench, or
jackpot_bench_cluster, is created anew). The figures go to bench/results/ingest-<via>.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import machine_cpu  # noqa: E402
from bench.results import write_result  # noqa: E402
from bench.shape import ROUND_STATEMENTS  # noqa: E402

DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
PORT = 8765
TRIVIAL_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS bench_row (id bigserial PRIMARY KEY, body jsonb NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bench_counter (id int PRIMARY KEY, hits bigint NOT NULL)",
    "INSERT INTO bench_counter VALUES (1, 0) ON CONFLICT DO NOTHING",
]


@dataclass(frozen=True)
class Service:
    """Where the terminals post (127.0.0.1:`port`), the floor seeded in its database, and the
    environment its `manage.py` commands run with."""

    port: int
    floor: dict
    env: dict[str, str]
    floors: bool  # serves bench/trivial.py's floors (the bench's own settings only)
    metrics_port: int | None = None  # the whole host's /metrics (the topology's listener)
    described: str = ""  # what serves it, for the figures' record


def _env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "CACHE_KEY_PREFIX": "bench",
    }


def prepare(database_url: str, tables: int) -> dict:
    """Create the bench database anew at `database_url`'s server, migrate it, seed the floor."""
    admin_url = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS jackpot_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE jackpot_bench")
    env = _env(database_url)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [python, "manage.py", "seed_demo", "--json", "--tables", str(tables)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with psycopg.connect(database_url) as conn:
        for statement in TRIVIAL_SCHEMA:
            conn.execute(statement)
    return json.loads(out)


@contextmanager
def gunicorn(
    bench_url: str, workers: int, threads: int = 1, worker_class: str = "sync"
) -> Iterator[None]:
    """The service under gunicorn on PORT with the bench settings, until the block ends."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-b",
            f"127.0.0.1:{PORT}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--worker-class",
            worker_class,
            "--keep-alive",
            "30",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=_env(bench_url),
    )
    try:
        for _ in range(100):
            try:
                http.client.HTTPConnection("127.0.0.1", PORT, timeout=1).request("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        yield
    finally:
        server.terminate()
        server.wait(10)


@contextmanager
def own_gunicorn(
    tables: int, workers: int, threads: int = 1, worker_class: str = "sync"
) -> Iterator[Service]:
    """A database jackpot_bench made anew with `tables` tables, served by gunicorn on PORT."""
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
    bench_url = urlunsplit(urlsplit(database_url)._replace(path="/jackpot_bench"))
    floor = prepare(bench_url, tables)
    with gunicorn(bench_url, workers, threads, worker_class):
        yield Service(port=PORT, floor=floor, env=_env(bench_url), floors=True)


WARMUP_TERMINALS = 4
CLUSTER_DIR = ROOT / "var" / "bench-cluster"
HA_CLUSTER_DIR = ROOT / "var" / "bench-cluster-ha"
CLUSTER_PORT = 8780


@contextmanager
def cluster(
    tables: int, up: dict[str, str] | None = None, *, ha: bool = False, **settings: str
) -> Iterator[Service]:
    """The topology as `make cluster` starts it, in var/bench-cluster with a database
    jackpot_bench_cluster made anew, on ports of its own (its Redis too); `make cluster-down`
    after the block. `up`: more of deploy/cluster/up.sh's variables; `settings`: more of the
    service's environment (CLUSTER_SET_<NAME>). `ha`: on a Patroni pair of its own, made anew
    in var/bench-cluster-ha (`make cluster HA=1`).

    Its throttles are raised (CLUSTER_SET_): the bench's terminals and signs all come from one
    address, which a club's would not."""
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
    admin_url = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS jackpot_bench_cluster WITH (FORCE)")
    directory = HA_CLUSTER_DIR if ha else CLUSTER_DIR
    pair = {
        "HA": "1",
        "HA_ETCD_PORT": str(CLUSTER_PORT + 7),
        "HA_ETCD_PEER_PORT": str(CLUSTER_PORT + 8),
        "HA_PG_PORTS": f"{CLUSTER_PORT + 9} {CLUSTER_PORT + 10}",
        "HA_API_PORTS": f"{CLUSTER_PORT + 11} {CLUSTER_PORT + 12}",
        "HA_PRIMARY_PORT": str(CLUSTER_PORT + 13),
        "HA_REPLICA_PORT": str(CLUSTER_PORT + 14),
    }
    options = {
        **(pair if ha else {}),
        "CLUSTER_DIR": str(directory),
        "CLUSTER_PG_URL": admin_url,
        "CLUSTER_DATABASE": "jackpot_bench_cluster",
        "PUBLIC_LISTEN": f"127.0.0.1:{CLUSTER_PORT}",
        "METRICS_LISTEN": f"127.0.0.1:{CLUSTER_PORT + 1}",
        "PGBOUNCER_PORT": str(CLUSTER_PORT + 2),
        "WEB_PORTS": f"{CLUSTER_PORT + 3} {CLUSTER_PORT + 4}",
        "TERMINAL_PORTS": str(CLUSTER_PORT + 5),
        "REDIS_PORT": str(CLUSTER_PORT + 6),
        "CLUSTER_SET_THROTTLE_ANON": "1000000/min",
        "CLUSTER_SET_THROTTLE_TERMINAL": "1000000/min",
        **{f"CLUSTER_SET_{name}": value for name, value in settings.items()},
        **(up or {}),
        "LOG_LEVEL": "WARNING",
    }
    make_env = {**os.environ, **options}
    subprocess.run(["make", "cluster-down"], cwd=ROOT, env=make_env, capture_output=True)
    if ha:  # a pair made anew: its database is its own, not DATABASE_URL's server's
        shutil.rmtree(directory, ignore_errors=True)
    subprocess.run(
        ["make", "cluster"], cwd=ROOT, env=make_env, check=True, stdout=subprocess.DEVNULL
    )
    try:
        service_env = dict(
            line.split("=", 1)
            for line in (directory / "env").read_text().splitlines()
            if line and not line.startswith("#")
        )
        out = subprocess.run(
            [sys.executable, "manage.py", "seed_demo", "--json", "--tables", str(tables)],
            cwd=ROOT,
            env=service_env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        terminals = _workers(directory, f"terminals-{CLUSTER_PORT + 5}")
        staff = _workers(directory, f"web-{CLUSTER_PORT + 3}")
        yield Service(
            port=CLUSTER_PORT,
            floor=json.loads(out),
            env=service_env,
            floors=False,
            metrics_port=CLUSTER_PORT + 1,
            described=(
                f"make cluster: nginx, the terminals' gunicorn instance ({terminals} sync"
                f" workers) and 2 others ({staff} each), pgbouncer, Redis, a worker and beat"
                + (", the PostgreSQL pair under Patroni (strict synchronous)" if ha else "")
            ),
        )
    finally:
        subprocess.run(["make", "cluster-down"], cwd=ROOT, env=make_env, check=True)


def _workers(directory: Path, name: str) -> int:
    """How many workers the gunicorn instance `make cluster` started as `name` runs (its
    master's children): what the figures ran on, whatever up.sh's defaults are today."""
    pid = (directory / f"{name}.pid").read_text().strip()
    return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())


def retaken(service: Service) -> tuple[float, float] | None:
    """How many opens took the pool row again (`jackpot_pool_row_retaken_total`: another table
    moved the counters between their read and their UPDATE) and how many rounds settled, all
    levels and the warm-up together, from the topology's /metrics; None without it."""
    if service.metrics_port is None:
        return None
    connection = http.client.HTTPConnection("127.0.0.1", service.metrics_port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()

    def total(name: str) -> float:
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith((f"{name}{{", f"{name} "))
        )

    return total("jackpot_pool_row_retaken_total"), total("jackpot_rounds_settled_total")


def verify_journal(service: Service) -> str:
    """The first line of `manage.py verify_journal` on the service's database."""
    verify = subprocess.run(
        [sys.executable, "manage.py", "verify_journal"],
        cwd=ROOT,
        env={**service.env, "DATABASE_STATEMENT_TIMEOUT_MS": "0"},
        capture_output=True,
        text=True,
    )
    return verify.stdout.strip().splitlines()[0] if verify.stdout else verify.stderr


def deal_result(rng: random.Random) -> dict:
    deck = DECK.copy()
    rng.shuffle(deck)
    street, multiple = rng.choice([("preflop", 4), ("preflop", 3), ("flop", 2), ("river", 1)])
    return {
        "board": deck[:5],
        "dealer": deck[5:7],
        "seats": [
            {
                "seat": n + 1,
                "cards": deck[7 + 2 * n : 9 + 2 * n],
                "decision": {"action": "play", "street": street, "multiple": multiple}
                if rng.random() < 0.8
                else {"action": "fold"},
            }
            for n in range(7)
        ],
    }


SEATS = [
    {
        "seat": n,
        "bets": {
            "ante_cents": 1000,
            "blind_cents": 1000,
            "trips_cents": 500,
            "progressive_cents": 500,
        },
    }
    for n in range(1, 8)
]


#: What a terminal posts to: the round API, or one of bench/trivial.py's floors.
ENDPOINTS = ("rounds", "trivial", "shape")


class Terminal(threading.Thread):
    def __init__(self, port: int, table: dict, tag: str, stop_at: float, endpoint: str) -> None:
        super().__init__(daemon=True)
        self.port, self.table, self.tag = port, table, tag
        self.stop_at, self.endpoint = stop_at, endpoint
        self.latencies: list[float] = []
        self.rounds = 0
        self.errors = 0
        self.rng = random.Random(f"{tag}-{table['id']}")

    def _post(self, conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict) -> int:
        started = time.perf_counter()
        conn.request("POST", path, body, headers)
        response = conn.getresponse()
        response.read()
        self.latencies.append(time.perf_counter() - started)
        return response.status

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.table['token']}",
        }
        base = f"/api/v1/tables/{self.table['id']}/rounds"
        number = 0
        while time.perf_counter() < self.stop_at:
            number += 1
            round_id = f"{self.tag}-{number}"
            opened = json.dumps({"round_id": round_id, "seats": SEATS}).encode()
            result = json.dumps(deal_result(self.rng)).encode()
            if self.endpoint == "trivial":
                ok = self._post(conn, "/bench/trivial", b'{"n": 1}', headers) == 201
                ok = self._post(conn, "/bench/trivial", b'{"n": 2}', headers) == 201 and ok
            elif self.endpoint == "shape":
                shape = f"/bench/floor/tables/{self.table['id']}"
                open_path = f"{shape}/open/{ROUND_STATEMENTS['open']}"
                result_path = f"{shape}/result/{ROUND_STATEMENTS['result']}"
                ok = self._post(conn, open_path, opened, headers) == 201
                ok = self._post(conn, result_path, result, headers) == 200 and ok
            else:
                ok = self._post(conn, base, opened, headers) == 201
                ok = self._post(conn, f"{base}/{round_id}/result", result, headers) == 200 and ok
            if ok:
                self.rounds += 1
            else:
                self.errors += 1
        conn.close()


def _level(service: Service, count: int, seconds: float, endpoint: str, tag: str) -> dict:
    tables = [t for t in service.floor["tables"] if t["game"] == "uth"]
    stop_at = time.perf_counter() + seconds
    terminals = [
        Terminal(service.port, tables[i], f"{tag}-{count}", stop_at, endpoint) for i in range(count)
    ]
    before = machine_cpu.read()
    started = time.perf_counter()
    for terminal in terminals:
        terminal.start()
    for terminal in terminals:
        terminal.join()
    elapsed = time.perf_counter() - started
    by_kind, busy = machine_cpu.spent(before, machine_cpu.read())
    latencies = sorted(x for t in terminals for x in t.latencies)
    rounds = sum(t.rounds for t in terminals)
    return {
        "cpu_ms_a_round": {
            kind: cpu / rounds * 1000 if rounds else 0.0
            for kind, cpu in sorted(by_kind.items(), key=lambda item: -item[1])
            if cpu > 0
        },
        "machine_busy": busy,
        "terminals": count,
        "rounds_per_s": rounds / elapsed,
        "requests_per_s": len(latencies) / elapsed,
        "hands_per_s": rounds * 7 / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else 0.0,
        "errors": sum(t.errors for t in terminals),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--via", default="gunicorn", choices=["gunicorn", "cluster", "ha"])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--levels", default="1,8,32,64")
    # Sync workers, one per core and one more: measured best on 2 cores (gthread's threads
    # contend for the GIL; see docs/operations.md). The cluster has its own (make cluster).
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--worker-class", default="sync", choices=["gthread", "sync"])
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    tables = max([*levels, WARMUP_TERMINALS])

    if args.via in ("cluster", "ha"):
        started = cluster(tables, ha=args.via == "ha")
    else:
        started = own_gunicorn(tables, args.workers, args.threads, args.worker_class)
    with started as service:
        served_by = (
            service.described
            or f"gunicorn {args.worker_class} {args.workers} workers x {args.threads} threads"
        )
        endpoints = ENDPOINTS if service.floors else ENDPOINTS[:1]
        for endpoint in endpoints:
            _level(service, WARMUP_TERMINALS, 1.0, endpoint, f"warmup-{endpoint}")
        print(f"machine: {os.cpu_count()} cores; {served_by}; {args.seconds:.0f} s a level")
        columns = ("terminals", "rounds/s", "hands/s", "req/s", "p50 ms", "p99 ms", "errors")
        print(f"{'endpoint':<10}" + "".join(f"{column:>10}" for column in columns))
        rows = []
        for count in levels:
            tag = f"run{time.time_ns()}"
            row = {
                endpoint: _level(service, count, args.seconds, endpoint, f"{tag}-{endpoint}")
                for endpoint in endpoints
            }
            if service.floors:
                ours = row["rounds"]["requests_per_s"]
                row["share_of_trivial"] = ours / row["trivial"]["requests_per_s"]
                row["share_of_shape"] = ours / row["shape"]["requests_per_s"]
            rows.append(row)
            for name in endpoints:
                figures = row[name]
                print(
                    f"{name:<10}{figures['terminals']:>10}{figures['rounds_per_s']:>10.1f}"
                    f"{figures['hands_per_s']:>10.0f}{figures['requests_per_s']:>10.1f}"
                    f"{figures['p50_ms']:>10.1f}{figures['p99_ms']:>10.1f}{figures['errors']:>10}"
                )
                shares = ", ".join(f"{k} {ms:.2f}" for k, ms in figures["cpu_ms_a_round"].items())
                print(
                    f"{'':<10}CPU a round, ms: {shares}"
                    f" (the machine {figures['machine_busy']:.0%} busy)"
                )
            if service.floors:
                print(
                    f"{'':<10}our request rate is {row['share_of_trivial']:.0%} of the trivial"
                    f" endpoint's, {row['share_of_shape']:.0%} of the round's shape's"
                )
        counted = retaken(service)
        if counted is not None:
            print(
                f"opens that took the pool row again: {counted[0]:.0f} of {counted[1]:.0f} rounds"
            )
        verified = verify_journal(service)
        print("verify_journal:", verified)
    path = write_result(
        f"ingest-{args.via}",
        {
            "levels": rows,
            "verify_journal": verified,
            "pool_row_retaken": None if counted is None else counted[0],
            "rounds_settled": None if counted is None else counted[1],
        },
        via=args.via,
        served_by=served_by,
        seconds=args.seconds,
    )
    print(f"written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
