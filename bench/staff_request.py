"""What a staff request costs the process: the same read as a token and as a browser session.

    .venv/bin/python bench/staff_request.py [--requests 300]

Plays `GET /api/v1/awards?limit=1` through Django's test client on PostgreSQL (a database
jackpot_staff is created anew at DATABASE_URL's server) for an auditor given the role as the
service gives it (`jackpot.staff.accounts.operator_grant`: the account's event on the journal), once
with its staff token and once with its session, and prints the CPU and the wall time per request.
What it isolates is the staff's authentication and authorization, which check every request
against the journal (`jackpot.staff.authority`: the account's newest event, the token's issue).
Run it on two trees with the same interpreter to compare them.
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
SERVER = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
os.environ["DATABASE_URL"] = urlunsplit(urlsplit(SERVER)._replace(path="/jackpot_staff"))
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("THROTTLE_RULES", "1000000/min")

import psycopg

with psycopg.connect(urlunsplit(urlsplit(SERVER)._replace(path="/postgres")), autocommit=True) as c:
    c.execute("DROP DATABASE IF EXISTS jackpot_staff WITH (FORCE)")
    c.execute("CREATE DATABASE jackpot_staff")

import django

django.setup()

from django.core.management import call_command
from django.test import Client

from jackpot.staff.accounts import operator_grant, staff_token_issue

WARM = 20


def _per_request(client: Client, requests: int) -> tuple[float, float]:
    for _ in range(WARM):
        assert client.get("/api/v1/awards?limit=1").status_code == 200
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(requests):
        client.get("/api/v1/awards?limit=1")
    return (
        (time.process_time() - cpu) / requests * 1000,
        (time.perf_counter() - wall) / requests * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    ida = operator_grant(username="ida", role="auditor", actor="bench")
    token = staff_token_issue(user=ida, revoke_others=False, actor="bench")
    session = Client()
    session.force_login(ida)
    clients = {"token": Client(HTTP_AUTHORIZATION=f"Bearer {token}"), "session": session}
    for name, client in clients.items():
        cpu, wall = _per_request(client, args.requests)
        print(f"{name}: {cpu:.2f} ms CPU, {wall:.2f} ms wall per GET /api/v1/awards?limit=1")


if __name__ == "__main__":
    main()
