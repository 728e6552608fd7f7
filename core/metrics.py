"""The service's Prometheus metrics: their one declaration, and the text /metrics serves.

Every metric the processes update is declared here (a service counts with `ROUNDS_SETTLED...inc()`),
so the names, labels and units are in one place; docs/operations.md "Metrics" says what each means
and what to alert on. What PostgreSQL knows (the meters, the outbox) is not counted here but read
at scrape time (`jackpot.reporting.gauges`).

Invariants:
- bounded labels only: a route is the URL pattern (`api/v1/tables/<int:table>/rounds`), never
  a path; a pool is a pool's id (a club has a handful), a task its registered name, a kind an
  award kind;
- money counters count committed transactions only: the services increment them from
  `transaction.on_commit`, so a rolled-back round (or a replayed one, whose transaction rolls
  back) counts nothing;
- one process or many: with PROMETHEUS_MULTIPROC_DIR set (gunicorn's workers, the Celery worker's
  pool), each process writes its values to files in that directory, and `exposition` adds up the
  files of every process, live or dead (a recycled gunicorn worker's requests still count); the
  directory is emptied by its master at start (`clean_directory`: deploy/gunicorn.conf.py, the
  Celery worker's main process in config.celery), and a dead child's live gauges are dropped
  (`process_exited`). Without it (`make run`, the tests), this process's own registry.
  METRICS_EXTRA_DIRS (comma-separated) names the directories of other process groups on the host
  whose files the same /metrics adds (the Celery worker's, beside the web's): each group keeps its
  own directory, so restarting one never wipes the other's counters.

This module imports nothing of Django: gunicorn's master uses it (it never sets Django up).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
EXTRA_DIRS = "METRICS_EXTRA_DIRS"
# The text format every Prometheus reads (0.0.4; our names need none of 1.0.0's UTF-8 escapes).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

if os.environ.get(MULTIPROCESS_DIR):
    # prometheus_client opens its files there as the metrics below are declared: before any
    # master could make it (the Celery worker's main process imports this first).
    os.makedirs(os.environ[MULTIPROCESS_DIR], exist_ok=True)

#: This process's own metrics (without PROMETHEUS_MULTIPROC_DIR, what /metrics serves).
REGISTRY = CollectorRegistry(auto_describe=True)

# --- HTTP (config.monitoring) --------------------------------------------------------------------

HTTP_REQUEST_SECONDS = Histogram(
    "jackpot_http_request_duration_seconds",
    "Time from the request reaching Django to its response, by URL pattern, method and status; "
    "its _count is the number of requests.",
    ["route", "method", "status"],
    # A round answers in tens of milliseconds; a terminal gives up after 2 s (docs/api.md 2.11).
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 5.0),
    registry=REGISTRY,
)

# --- money, counted after commit (tables.rounds, jackpot.money.movements)
# -----------------------------

ROUNDS_SETTLED = Counter(
    "jackpot_rounds_settled_total",
    "Rounds settled (their result committed), by game.",
    ["game"],
    registry=REGISTRY,
)
STAKES = Counter(
    "jackpot_progressive_stakes_total",
    "Progressive stakes taken (committed), by pool.",
    ["pool"],
    registry=REGISTRY,
)
STAKES_CENTS = Counter(
    "jackpot_progressive_stakes_cents_total",
    "Cents of the progressive stakes taken (committed), by pool.",
    ["pool"],
    registry=REGISTRY,
)
POOL_ROW_RETAKEN = Counter(
    "jackpot_pool_row_retaken_total",
    "Round steps whose guess another table made stale between their read and their pool UPDATE "
    "(an open's counters, a settle's award numbers): the event written first was rolled back "
    "and written again with the row held (committed), by pool.",
    ["pool"],
    registry=REGISTRY,
)
AWARDS = Counter(
    "jackpot_awards_total",
    "Progressive awards granted (committed), by pool and kind.",
    ["pool", "kind"],
    registry=REGISTRY,
)
AWARDS_CENTS = Counter(
    "jackpot_awards_cents_total",
    "Cents of the progressive awards granted (committed), by pool and kind.",
    ["pool", "kind"],
    registry=REGISTRY,
)
JACKPOT_HITS = Counter(
    "jackpot_hits_total",
    "Jackpots won (a royal flush with the progressive; committed, before verification), by pool.",
    ["pool"],
    registry=REGISTRY,
)
SIGNIFICANT_EVENTS = Counter(
    "jackpot_significant_events_total",
    "Significant events recorded (committed), by their catalogue code "
    '(jackpot.notifications.significant; docs/operations.md "Significant events").',
    ["code"],
    registry=REGISTRY,
)

# --- Celery (config.celery's signals, in the worker) --------------------------------------------

TASK_RUNS = Counter(
    "jackpot_celery_task_runs_total",
    "Celery task runs, by task name (each delivery that ran, retries included).",
    ["task"],
    registry=REGISTRY,
)
TASK_FAILURES = Counter(
    "jackpot_celery_task_failures_total",
    "Celery task runs that raised, by task name.",
    ["task"],
    registry=REGISTRY,
)

# --- Redis: the signs' cache and the circuit breaker ---------------------------------------------

SIGN_CACHE = Counter(
    "jackpot_sign_cache_lookups_total",
    "Reads of a sign's figures: result=hit served from Redis, miss read from PostgreSQL, forged "
    "read from PostgreSQL because Redis held a figure that failed its signature (dropped).",
    ["result"],
    registry=REGISTRY,
)
REDIS_CIRCUIT_OPENED = Counter(
    "jackpot_redis_circuit_opened_total",
    "Times a process stopped using Redis for REDIS_BREAKER_SECONDS after a failure.",
    registry=REGISTRY,
)
REDIS_CIRCUIT_OPEN_UNTIL = Gauge(
    "jackpot_redis_circuit_open_until_timestamp_seconds",
    "Until when (Unix time) a process skips Redis, the latest of all processes; the circuit is "
    "open while this is after time().",
    registry=REGISTRY,
    multiprocess_mode="max",  # a dead process's value is a past time: harmless
)


# --- exposition ---------------------------------------------------------------------------------


def _directories() -> list[str]:
    own = os.environ.get(MULTIPROCESS_DIR, "")
    extra = [d.strip() for d in os.environ.get(EXTRA_DIRS, "").split(",") if d.strip()]
    return [d for d in (own, *extra) if d]


class _ProcessFiles(Collector):
    """Every process's values, from the files of each directory, added up per label set."""

    def __init__(self, directories: Iterable[str]) -> None:
        self.directories = list(directories)

    def collect(self) -> Iterable[Metric]:
        files = [f for d in self.directories for f in glob.glob(os.path.join(d, "*.db"))]
        return MultiProcessCollector.merge(files, accumulate=True)


class _Together(Collector):
    def __init__(self, *collectors: Collector) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def exposition(*at_scrape: Collector) -> bytes:
    """The text format of every metric: the processes' (their files, or this process's registry)
    and those `at_scrape` reads now (jackpot.reporting.gauges)."""
    counted: Collector = (
        _ProcessFiles(_directories()) if os.environ.get(MULTIPROCESS_DIR) else REGISTRY
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Together(counted, *at_scrape))
    return generate_latest(registry)


# --- the multiprocess directory's life (masters) ------------------------------------------------


def clean_directory() -> None:
    """Empty this process group's directory, if it has one: its master calls this at start,
    before any child writes (the counters of the previous run would be added to the new ones)."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if not directory:
        return
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):  # only the metrics' files: the operator chose the directory
        stale.unlink(missing_ok=True)


def process_exited(pid: int) -> None:
    """Drop the live gauges of child `pid`, dead (gunicorn's child_exit, a Celery pool child at
    its shutdown); its counters stay, so the totals never go down."""
    if os.environ.get(MULTIPROCESS_DIR):
        mark_process_dead(pid)
