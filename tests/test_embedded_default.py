"""`make run` works anywhere: the embedded default (SQLite, eager tasks, no Redis) moves money
the same way. PostgreSQL is where the suite proves correctness; this only shows the demo runs."""

from __future__ import annotations

import json

SCRIPT = """
import json, django
django.setup()
from io import StringIO
from django.core.management import call_command
from django.test import Client
call_command("migrate", "-v0")
out = StringIO()
call_command("seed_demo", "--json", "--tables", "1", stdout=out)
table = json.loads(out.getvalue())["tables"][0]
terminal = Client(HTTP_AUTHORIZATION="Bearer " + table["token"])
base = f"/api/v1/tables/{table['id']}/rounds"
bets = {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500}
opened = terminal.post(base, {"round_id": "demo-1", "seats": [{"seat": 1, "bets": bets},
    {"seat": 2, "bets": bets}]}, content_type="application/json")
result = {"board": ["Ah", "Kh", "Qh", "2c", "3d"], "dealer": ["9s", "9d"], "seats": [
    {"seat": 1, "cards": ["Jh", "Th"], "decision": {"action": "play", "street": "preflop",
     "multiple": 4}}, {"seat": 2, "cards": ["2s", "2d"], "decision": {"action": "fold"}}]}
settled = terminal.post(base + "/demo-1/result", result, content_type="application/json")
again = terminal.post(base + "/demo-1/result", result, content_type="application/json")
from tables.audit.verification import verify_full
print(json.dumps({
    "open": [opened.status_code, opened.json()["meter"]["amount_cents"]],
    "settle": [settled.status_code,
               [(a["kind"], a["amount_cents"]) for a in settled.json()["awards"]]],
    "replay_same": again.json() == settled.json(),
    "journal_ok": verify_full().ok,
    "health": Client().get("/healthz").json(),
}))
"""


def test_demo_floor_runs_on_sqlite_without_redis(python_subprocess, tmp_path):
    result = python_subprocess(
        SCRIPT,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL="",
        REDIS_URL="",
        SQLITE_PATH=str(tmp_path / "demo.sqlite3"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {
        "open": [201, 1_000_200],
        "settle": [200, [["royal_flush", 1_000_200], ["envy", 50_000]]],
        "replay_same": True,
        "journal_ok": True,
        "health": {"database": "ok", "redis": "disabled"},
    }
