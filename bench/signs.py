"""Jackpot signs polling the meter through gunicorn while a table posts rounds.

Each sign (a client thread with its own keep-alive connection) polls `GET /pools/{pool}/meter`
with If-None-Match, as `/display/{pool}/` does, but without pausing, to find what the service can
serve. Meanwhile one terminal posts a round every `1/--rate` seconds. For each level the script
prints the meter requests served a second, the share of 304s, the p50/p99 latency of a poll, and
how long after the terminal's answer the signs first saw each new meter (freshness: the Redis
display cache is written after commit, so this is the cost of that path, not of polling).

    .venv/bin/python bench/signs.py [--via gunicorn|cluster] [--seconds 8] [--levels 1,16,64]

`--via` as for bench/ingest.py: the bench's own gunicorn (3 sync workers, nothing in front), or
the production topology `make cluster` starts (nginx, gunicorn instances for the terminals and
for the rest, pgbouncer).
Needs PostgreSQL and Redis (DATABASE_URL's server; a database jackpot_bench, or
jackpot_bench_cluster, is created anew). The figures go to bench/results/signs-<via>.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ingest import ROOT, SEATS, cluster, deal_result, own_gunicorn, verify_journal
from bench.results import write_result


class Sign(threading.Thread):
    """Polls the meter until `stop_at`; notes when it first saw each meter sequence."""

    def __init__(self, port: int, pool: int, stop_at: float) -> None:
        super().__init__(daemon=True)
        self.port, self.path, self.stop_at = port, f"/api/v1/pools/{pool}/meter", stop_at
        self.latencies: list[float] = []
        self.not_modified = 0
        self.errors = 0
        self.first_seen: dict[int, float] = {}

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        etag = ""
        while time.perf_counter() < self.stop_at:
            started = time.perf_counter()
            conn.request("GET", self.path, headers={"If-None-Match": etag} if etag else {})
            response = conn.getresponse()
            body = response.read()
            now = time.perf_counter()
            self.latencies.append(now - started)
            if response.status == 304:
                self.not_modified += 1
            elif response.status == 200:
                etag = response.getheader("ETag") or ""
                self.first_seen.setdefault(json.loads(body)["sequence"], now)
            else:
                self.errors += 1
        conn.close()


class Table(threading.Thread):
    """Posts a round every `interval` seconds; notes when each answer's meter came back."""

    def __init__(self, port: int, table: dict, tag: str, interval: float, stop_at: float) -> None:
        super().__init__(daemon=True)
        self.port, self.table, self.tag = port, table, tag
        self.interval, self.stop_at = interval, stop_at
        self.answered: dict[int, float] = {}  # meter sequence -> when the terminal had it

    def run(self) -> None:
        rng = random.Random(self.tag)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.table['token']}",
        }
        base = f"/api/v1/tables/{self.table['id']}/rounds"
        number = 0
        next_round = time.perf_counter()
        while next_round < self.stop_at:
            time.sleep(max(0.0, next_round - time.perf_counter()))
            number += 1
            round_id = f"{self.tag}-{number}"
            # Only the open moves the meter (the stakes); the result settles the round.
            conn.request("POST", base, json.dumps({"round_id": round_id, "seats": SEATS}), headers)
            opened = json.loads(conn.getresponse().read())
            self.answered[opened["meter"]["sequence"]] = time.perf_counter()
            conn.request("POST", f"{base}/{round_id}/result", json.dumps(deal_result(rng)), headers)
            conn.getresponse().read()
            next_round += self.interval
        conn.close()


def _level(port: int, pool: int, table: dict, signs: int, seconds: float, rate: float) -> dict:
    stop_at = time.perf_counter() + seconds
    pollers = [Sign(port, pool, stop_at) for _ in range(signs)]
    terminal = Table(port, table, f"signs{time.time_ns()}-{signs}", 1.0 / rate, stop_at)
    started = time.perf_counter()
    for thread in [*pollers, terminal]:
        thread.start()
    for thread in [*pollers, terminal]:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies = sorted(x for sign in pollers for x in sign.latencies)
    # Freshness: for each meter the terminal was answered, when did the first sign see it?
    lags = sorted(
        min(seen[sequence] for seen in (s.first_seen for s in pollers) if sequence in seen) - at
        for sequence, at in terminal.answered.items()
        if any(sequence in s.first_seen for s in pollers)
    )
    return {
        "signs": signs,
        "requests_per_s": len(latencies) / elapsed,
        "not_modified": sum(s.not_modified for s in pollers) / max(1, len(latencies)),
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "meters": len(terminal.answered),
        "seen": len(lags),
        "lag_p50_ms": statistics.median(lags) * 1000 if lags else float("nan"),
        "lag_max_ms": max(lags) * 1000 if lags else float("nan"),
        "errors": sum(s.errors for s in pollers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--via", default="gunicorn", choices=["gunicorn", "cluster"])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--levels", default="1,16,64")
    parser.add_argument("--rate", type=float, default=5.0, help="rounds a second from the table")
    parser.add_argument("--workers", type=int, default=3)
    args = parser.parse_args()

    started = cluster(1) if args.via == "cluster" else own_gunicorn(1, args.workers)
    rows = []
    with started as service:
        served_by = service.described or f"gunicorn sync {args.workers} workers"
        pool = service.floor["pools"][0]["id"]
        table = next(t for t in service.floor["tables"] if t["game"] == "uth")
        _level(service.port, pool, table, 4, 1.0, args.rate)  # warm up
        print(
            f"machine: {os.cpu_count()} cores; {served_by}; {args.seconds:.0f} s a level;"
            f" one table posting {args.rate:g} rounds/s"
        )
        columns = ("req/s", "304 share", "p50 ms", "p99 ms", "meters", "seen", "lag p50", "max")
        print(f"{'signs':>6}" + "".join(f"{column:>10}" for column in columns) + f"{'errors':>8}")
        for signs in (int(level) for level in args.levels.split(",")):
            row = _level(service.port, pool, table, signs, args.seconds, args.rate)
            rows.append(row)
            print(
                f"{row['signs']:>6}{row['requests_per_s']:>10.0f}{row['not_modified']:>10.0%}"
                f"{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}{row['meters']:>10}"
                f"{row['seen']:>10}{row['lag_p50_ms']:>10.1f}{row['lag_max_ms']:>10.1f}"
                f"{row['errors']:>8}"
            )
        print("lag: ms from the terminal's answer to the first sign showing that meter")
        verified = verify_journal(service)
        print("verify_journal:", verified)
    path = write_result(
        f"signs-{args.via}",
        {"levels": rows, "verify_journal": verified},
        via=args.via,
        served_by=served_by,
        seconds=args.seconds,
        table_rounds_per_s=args.rate,
    )
    print(f"written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
