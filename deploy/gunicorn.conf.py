"""gunicorn settings for the API (gunicorn -c deploy/gunicorn.conf.py config.wsgi).

Sync workers, one per core plus one: a round spends most of its time in Python, and threads in
one process take turns holding the GIL. On the 2-core reference machine bench/ingest.py measured
3 sync workers at about 150 rounds/s with p99 near 130 ms at 32 terminals, against about 125
rounds/s with p99 over 300 ms for 3 workers of 4 threads. Put a buffering proxy (nginx) in front:
a sync worker serves one connection at a time, so it must not wait on slow clients.

Metrics (core.metrics): with PROMETHEUS_MULTIPROC_DIR set, the workers write their counters to
files there, which any worker's /metrics adds up; the master empties it at start and drops a dead
worker's live gauges (`child_exit`). Logs (core.logs): LOG_FORMAT=json makes the error and
access logs JSON lines, the access line with the request id the response carried.

Before it binds its port, the master runs the start-up self-check (`on_starting`, compliance
requirement 27): a restarted service answers nothing until the check passes, and gunicorn exits
non-zero, never bound, when it fails.

Each worker builds the rules engine's lookup tables before its first request (`post_worker_init`):
about a second of CPU that a fresh worker would otherwise spend inside a terminal's first round,
past the terminal's 2 s of patience on a busy host (the drills of tests/cluster met it after an
instance's restart).
"""

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # core.logs and core.metrics: neither sets Django up

from core import metrics  # noqa: E402
from core.logs import ACCESS_LOGGER, formatter_config  # noqa: E402

bind = os.environ.get("BIND", "127.0.0.1:8000")
# Empty counts as unset: jackpot-terminals@.service passes WEB_WORKERS=${TERMINAL_WORKERS}.
workers = int(os.environ.get("WEB_WORKERS") or multiprocessing.cpu_count() + 1)
worker_class = "sync"
timeout = 30
graceful_timeout = 20
max_requests = 20_000  # recycle workers now and then; jitter avoids recycling all at once
max_requests_jitter = 2_000
accesslog = "-"
errorlog = "-"
# The request id Django answered with (core.request_id) ends each access line; with
# LOG_FORMAT=json both logs are core.logs's JSON lines, the access line with named fields.
access_log_format = (
    '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(M)sms %({x-request-id}o)s'
)
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text").strip().lower() or "text"
if LOG_FORMAT == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": formatter_config("json")},
        "handlers": {
            "error": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            },
            "access": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stdout",
            },
        },
        "root": {"level": "INFO", "handlers": ["error"]},
        "loggers": {
            # Not propagated: a worker's Django configures the root logger's handlers too.
            "gunicorn.error": {"level": "INFO", "handlers": ["error"], "propagate": False},
            ACCESS_LOGGER: {"level": "INFO", "handlers": ["access"], "propagate": False},
        },
    }


def on_starting(server):  # type: ignore[no-untyped-def]
    """Run `manage.py selfcheck` (tables.audit.selfcheck) before the port is bound; exit if it
    fails.

    In a child process, with the settings `config.wsgi` will run (production unless
    DJANGO_SETTINGS_MODULE says otherwise), so the master imports no Django and holds no
    database connection its workers would inherit. The check scans the whole journal: no
    statement timeout for it (each worker keeps its own).
    """
    metrics.clean_directory()  # PROMETHEUS_MULTIPROC_DIR: the last run's files (core.metrics)
    env = {**os.environ, "DATABASE_STATEMENT_TIMEOUT_MS": "0"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
    server.log.info("Running the start-up self-check before binding")
    check = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "selfcheck"], cwd=ROOT, env=env
    )
    if check.returncode != 0:
        server.log.error("Start-up self-check failed (exit %s): not serving", check.returncode)
        sys.exit(check.returncode if check.returncode > 0 else 1)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    """Evaluate one hand in the new worker, after the application loaded and before it accepts:
    the engine fills its tables on first use (rules.hands), once per process."""
    from rules.cards import parse_cards
    from rules.hands import evaluate

    evaluate(parse_cards(["As", "Ks", "Qs", "Js", "Ts", "2c", "3d"], param="cards", count=7))


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """A worker is gone (recycled, killed): its live gauges go, its counters stay."""
    metrics.process_exited(worker.pid)
