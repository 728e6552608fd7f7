"""The terminals' rounds through the production topology while staff hammer the heavy reads.

`--terminals` terminals (client threads, each with its own keep-alive connection) play rounds of
7 seats with the progressive (an open, then the result) through nginx, each at `--rate` rounds a
second (a real table plays about one a minute; 0 plays without pause, as bench/ingest.py does),
on the topology `make cluster` starts: nginx sends their round API to a gunicorn instance of
their own, and everything else to two others (docs/operations.md "Topology"). Phases alternate
in one run, `--pairs` times each: `quiet` (the terminals alone) and `staff` (the same terminals
while `--staff` clients read without pause, each in turn: a pool's history and a chart of it as
CSV, the payout log's export.csv over 30 days, the journal's verification, the OpenAPI
schema). Each phase prints the terminals' rounds/s and the p50/p99 of their requests, and what
the staff got: answers a second by status, their p50.

With `--shared`, each pair also has the two phases of the topology before it (`shared-quiet`,
`shared-staff`): the terminals post straight to one of the staff's instances (nginx bypassed),
so their rounds and the staff's reads queue for the same sync workers, as when every request
went to one upstream. That instance runs at the staff's niceness (`--staff-nice`, up.sh's
STAFF_NICE, 10 by default): compare with `--staff-nice 0`, as before the topology.

The staff's heavy reads are throttled per person in production (THROTTLE_HEAVY_READ, 60/min);
the bench's staff are one auditor, so by default (`--heavy-rate 1000000/min`) that throttle is
lifted and every read reaches the staff's instances: the topology alone keeps the floor open.
`--heavy-rate 60/min` measures the production setting instead (most reads then answer 429).

    .venv/bin/python bench/terminals_under_staff.py [--terminals 8] [--rate 0.5] [--staff 8]
        [--seconds 10] [--pairs 3] [--heavy-rate 1000000/min] [--staff-nice 10] [--shared]

Needs PostgreSQL (DATABASE_URL's server; a database jackpot_bench_cluster is made anew); the
cluster runs its own Redis. The figures go to bench/results/terminals-under-staff.json
(`-shared` with `--shared`, `-throttled` with another `--heavy-rate`).
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ingest import CLUSTER_PORT, ROOT, Terminal, cluster, verify_journal
from bench.results import write_result

LIFTED = "1000000/min"  # THROTTLE_HEAVY_READ by default here: no staff read refused


def staff_paths(pool: int) -> list[str]:
    """The heavy reads, in the order each staff client takes them (from its own offset)."""
    now = datetime.now(UTC)
    since = (now - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        f"/api/v1/pools/{pool}/history",
        f"/api/v1/pools/{pool}/history.csv?chart=awards",
        f"/api/v1/awards/export.csv?from={since}&to={until}",
        "/api/v1/journal/verify",
        "/api/schema/",
    ]


class PacedTerminal(Terminal):
    """bench/ingest.py's terminal, a round every `interval` seconds (none: without pause)."""

    def __init__(self, port: int, table: dict, tag: str, stop_at: float, interval: float):
        super().__init__(port, table, tag, stop_at, "rounds")
        self.interval = interval
        self.next_round = time.perf_counter()

    def _post(self, conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict) -> int:
        if path.endswith("/rounds"):  # an open: the round's slot
            time.sleep(max(0.0, self.next_round - time.perf_counter()))
            self.next_round = max(self.next_round + self.interval, time.perf_counter() - 1)
        return super()._post(conn, path, body, headers)


class Staff(threading.Thread):
    """GETs the heavy reads one after the other until `stop_at`; notes each answer."""

    def __init__(self, port: int, token: str, paths: list[str], offset: int, stop_at: float):
        super().__init__(daemon=True)
        self.port, self.paths, self.offset, self.stop_at = port, paths, offset, stop_at
        self.headers = {"Authorization": f"Bearer {token}"}
        self.latencies: list[float] = []
        self.statuses: Counter[str] = Counter()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        number = self.offset
        while time.perf_counter() < self.stop_at:
            path = self.paths[number % len(self.paths)]
            number += 1
            started = time.perf_counter()
            try:
                conn.request("GET", path, headers=self.headers)
                response = conn.getresponse()
                response.read()
                self.statuses[str(response.status)] += 1
            except (OSError, http.client.HTTPException) as error:
                self.statuses[type(error).__name__] += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            self.latencies.append(time.perf_counter() - started)
        conn.close()


def _phase(
    service, tables: list[dict], rate: float, staff: int, seconds: float, tag: str, port: int = 0
) -> dict:
    """One phase; the terminals post to nginx, or to `port` (a staff instance: `shared`)."""
    stop_at = time.perf_counter() + seconds
    interval = 1 / rate if rate else 0.0
    terminals = [
        PacedTerminal(port or service.port, table, tag, stop_at, interval) for table in tables
    ]
    paths = staff_paths(service.floor["pools"][0]["id"])
    token = service.floor["auditor"]["token"]
    readers = [Staff(service.port, token, paths, n, stop_at) for n in range(staff)]
    started = time.perf_counter()
    for thread in [*terminals, *readers]:
        thread.start()
    for thread in [*terminals, *readers]:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies = sorted(x for t in terminals for x in t.latencies)
    read = sorted(x for r in readers for x in r.latencies)
    statuses: Counter[str] = Counter()
    for reader in readers:
        statuses.update(reader.statuses)
    return {
        "phase": ("shared-" if port else "") + ("staff" if staff else "quiet"),
        "rounds_per_s": sum(t.rounds for t in terminals) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "max_ms": latencies[-1] * 1000,
        "terminal_errors": sum(t.errors for t in terminals),
        "staff_per_s": {status: count / elapsed for status, count in sorted(statuses.items())},
        "staff_p50_ms": statistics.median(read) * 1000 if read else None,
    }


def _check_reads(service) -> dict[str, float]:
    """Every heavy read answers 200 (each staff worker builds the schema meanwhile); then each
    alone on the quiet cluster: ms, the best of three."""
    headers = {"Authorization": f"Bearer {service.floor['auditor']['token']}"}
    paths = staff_paths(service.floor["pools"][0]["id"])
    alone: dict[str, float] = {}
    for path in paths + ["/api/schema/"] * 4 + paths * 3:
        conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=120)
        started = time.perf_counter()
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        took = (time.perf_counter() - started) * 1000
        conn.close()
        if response.status != 200:
            raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
        alone[path.split("?")[0]] = min(alone.get(path.split("?")[0], took), took)
    return alone


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminals", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.5, help="rounds a second per terminal")
    parser.add_argument("--staff", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--heavy-rate", default=LIFTED)
    parser.add_argument("--shared", action="store_true", help="also the topology before")
    parser.add_argument("--staff-nice", type=int, default=10, help="up.sh's STAFF_NICE")
    args = parser.parse_args()

    rows = []
    up = {"STAFF_NICE": str(args.staff_nice)}
    with cluster(args.terminals, up, THROTTLE_HEAVY_READ=args.heavy_rate) as service:
        tables = [t for t in service.floor["tables"] if t["game"] == "uth"][: args.terminals]
        _phase(service, tables, 0, 0, 3.0, f"warm{time.time_ns()}")  # rounds for the reads
        alone = _check_reads(service)
        print(
            f"machine: {os.cpu_count()} cores; {service.described}; {args.terminals} terminals at"
            f" {args.rate:g} rounds/s each; {args.staff} staff clients;"
            f" THROTTLE_HEAVY_READ={args.heavy_rate}; STAFF_NICE={args.staff_nice};"
            f" {args.seconds:.0f} s a phase"
        )
        print("each heavy read alone (ms):", {path: round(ms) for path, ms in alone.items()})
        print(
            f"{'phase':<14}{'rounds/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'errors':>8}"
            f"{'staff p50':>11}  staff answers/s"
        )
        ports = [0, CLUSTER_PORT + 3] if args.shared else [0]  # nginx; the first staff instance
        for pair in range(args.pairs):
            for port, staff in ((port, staff) for port in ports for staff in (0, args.staff)):
                tag = f"p{pair}-{port}-{staff}-{time.time_ns()}"
                row = _phase(service, tables, args.rate, staff, args.seconds, tag, port)
                rows.append(row)
                answers = ", ".join(f"{s}: {n:.1f}" for s, n in row["staff_per_s"].items())
                staff_p50 = f"{row['staff_p50_ms']:.0f}" if row["staff_p50_ms"] else "-"
                print(
                    f"{row['phase']:<14}{row['rounds_per_s']:>10.1f}{row['p50_ms']:>10.1f}"
                    f"{row['p99_ms']:>10.1f}{row['max_ms']:>10.0f}{row['terminal_errors']:>8}"
                    f"{staff_p50:>11}"
                    f"  {answers or '-'}"
                )
        verified = verify_journal(service)
        print("verify_journal:", verified)
    summary = {
        phase: {
            "p99_ms_median": statistics.median(r["p99_ms"] for r in rows if r["phase"] == phase),
            "p50_ms_median": statistics.median(r["p50_ms"] for r in rows if r["phase"] == phase),
        }
        for phase in sorted({row["phase"] for row in rows})
    }
    print(f"medians over the pairs: {summary}")
    variant = ("-shared" if args.shared else "") + (
        "-throttled" if args.heavy_rate != LIFTED else ""
    )
    path = write_result(
        f"terminals-under-staff{variant}",
        {"reads_alone_ms": alone, "phases": rows, "summary": summary, "verify_journal": verified},
        served_by=service.described,
        terminals=args.terminals,
        rate=args.rate,
        staff=args.staff,
        seconds=args.seconds,
        pairs=args.pairs,
        throttle_heavy_read=args.heavy_rate,
        shared=args.shared,
        staff_nice=args.staff_nice,
    )
    print(f"written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
