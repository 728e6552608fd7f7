"""The full verification's cost per event, on one journal, for any tree: run it for two trees in
turn (before and after a change) to compare them in the same hour.

    .venv/bin/python bench/full_walk.py TREE [DATABASE]

TREE is a checkout of the project (`git worktree add /tmp/old <commit>`, or `.`); DATABASE (at
DATABASE_URL's server, default `jackpot_aging`: `bench/aging.py` builds it) is read, never
written. It times the tree's walk from the first event (`tables.audit.verification.verify_full`, or
`verify_journal` in trees before checkpoints) with no statement timeout and prints its verdict,
the events, the wall and process CPU time per event, and the load average.
"""

# ruff: noqa: E402 (the tree's modules are imported once Django is set up)

from __future__ import annotations

import os
import sys
import time
from urllib.parse import urlsplit, urlunsplit

tree = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
database = sys.argv[2] if len(sys.argv) > 2 else "jackpot_aging"
server = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
sys.path.insert(0, tree)
os.chdir(tree)
os.environ["DATABASE_URL"] = urlunsplit(urlsplit(server)._replace(path=f"/{database}"))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/2")

import django

django.setup()

from django.db import connection

import tables.audit.verification as verification

with connection.cursor() as cursor:
    cursor.execute("SET statement_timeout = 0")
# Trees before checkpoints named the walk `verify_journal`.
walk = getattr(verification, "verify_full", None) or getattr(verification, "verify_journal", None)
if walk is None:
    raise SystemExit(f"{tree}: tables.audit.verification has no full walk")
started, cpu = time.perf_counter(), time.process_time()
report = walk()
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
print(
    f"{tree}: {walk.__name__} ok={report.ok} events={report.events} wall={wall:.2f}s"
    f" cpu={cpu:.2f}s us/event={wall / report.events * 1e6:.1f}"
    f" cpu_us/event={cpu / report.events * 1e6:.1f} load={os.getloadavg()[0]:.2f}"
)
