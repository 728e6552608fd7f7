"""The Python side of a round, in process: the CPU one open and one result cost the service.

    .venv/bin/python bench/round_cpu.py [--rounds 300]

Plays rounds of 7 UTH seats (every bet, the progressive on each) through Django's test client on
PostgreSQL (a database jackpot_cpu is created anew at DATABASE_URL's server) and prints the wall
time and the process CPU per round; then the stack's floor for the same two requests
(bench/trivial.py `RoundShapeView`: the same bodies, authentication, throttle, parser, number of
statements and answers, none of the round's work) and its rungs (the same two requests as plain
Django, then DRF's view, then the terminal's checks, then the statements); then what one
statement's round trip costs the process (libpq alone, psycopg's cursor, Django's); then how long
reading each request body takes. No HTTP
server and no other process: what it measures is this code, not the machine's network or
gunicorn. Run it on two trees with the same interpreter to compare them.

DEBUG is off, as in production, unless the environment sets it (config.settings.local turns it on
for `make run`; figures before 2026-12-02 evening were taken with it on, which made no difference
measurable here: docs/benchmarks.md).
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
SERVER = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
os.environ["DATABASE_URL"] = urlunsplit(urlsplit(SERVER)._replace(path="/jackpot_cpu"))
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
os.environ.setdefault("DEBUG", "0")
# Counted still (a Redis script a request), never reached: back-to-back runs post thousands.
os.environ.setdefault("THROTTLE_TERMINAL", "1000000/min")

import psycopg

with psycopg.connect(urlunsplit(urlsplit(SERVER)._replace(path="/postgres")), autocommit=True) as c:
    c.execute("DROP DATABASE IF EXISTS jackpot_cpu WITH (FORCE)")
    c.execute("CREATE DATABASE jackpot_cpu")

import django

django.setup()

from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client

import config.celery  # noqa: F401  (as gunicorn and manage.py do: the app that sends tasks)
from bench import machine_cpu
from bench.shape import ROUND_STATEMENTS
from bench.trivial import RoundShapeView
from jackpot.pools.creation import pool_create
from tables.bodies.round_requests import parse_open, parse_result
from tables.models import Game
from tables.services import operator_terminal_issue, table_create

DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
SEATS = range(1, 8)


def _open_body(round_id: str) -> dict[str, object]:
    bets = {"ante_cents": 500, "blind_cents": 500, "trips_cents": 500, "progressive_cents": 500}
    return {"round_id": round_id, "seats": [{"seat": seat, "bets": bets} for seat in SEATS]}


def _result_body(deck: list[str]) -> dict[str, object]:
    play = {"action": "play", "street": "preflop", "multiple": 4}
    return {
        "board": deck[:5],
        "dealer": deck[5:7],
        "seats": [
            {"seat": seat, "cards": deck[7 + 2 * seat : 9 + 2 * seat], "decision": play}
            for seat in SEATS
        ],
    }


def _backend_cpu() -> float:
    """The CPU seconds the connection's PostgreSQL backend has used (its /proc entry: the server
    runs on this machine)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    cpu = machine_cpu.cpu_s(pid)
    assert cpu is not None, "the backend serving this connection is alive"
    return cpu


def _wal_bytes() -> int:
    """Where PostgreSQL's write-ahead log is now, in bytes (nothing else writes to this server
    during a run: what it moves is the rounds' rows, their indexes and the commits)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
        (position,) = cursor.fetchone()
    return int(position)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    pool = pool_create(name="CPU", actor="bench")
    table = table_create(name="CPU 1", game=Game.UTH, pool=pool, actor="bench")
    token = operator_terminal_issue(table=table, name="t", revoke_others=False, actor="bench").token
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    shuffler = random.Random(2026)
    base = f"/api/v1/tables/{table.pk}/rounds"

    def play(number: int) -> None:
        opened = client.post(base, json.dumps(_open_body(f"r{number}")), "application/json")
        assert opened.status_code == 201, opened.content
        deck = DECK[:]
        shuffler.shuffle(deck)
        result = json.dumps(_result_body(deck))
        settled = client.post(f"{base}/r{number}/result", result, "application/json")
        assert settled.status_code == 200, settled.content

    for number in range(50):  # warm up: caches, prepared statements, the evaluator's tables
        play(number)
    backend, wal = _backend_cpu(), _wal_bytes()
    wall, cpu = time.perf_counter(), time.process_time()
    for number in range(50, 50 + args.rounds):
        play(number)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    per_round = cpu / args.rounds
    print(
        f"{args.rounds} rounds of 7 seats: {wall / args.rounds * 1000:.2f} ms wall, "
        f"{per_round * 1000:.2f} ms CPU per round (open + result), "
        f"DEBUG {'on' if settings.DEBUG else 'off'}; PostgreSQL's backend "
        f"{(_backend_cpu() - backend) / args.rounds * 1000:.2f} ms CPU and"
        f" {(_wal_bytes() - wal) / args.rounds / 1024:.1f} KiB of WAL per round"
    )

    # The floor: one more real round, its statements counted and its answers kept, then the same
    # two requests through bench/trivial.py's RoundShapeView.
    counted: list[str] = []

    def count(execute: Any, sql: str, *rest: Any) -> Any:
        counted.append(sql)
        return execute(sql, *rest)

    deck = DECK[:]
    shuffler.shuffle(deck)
    opening, result = json.dumps(_open_body("floor")), json.dumps(_result_body(deck))
    with connection.execute_wrapper(count):
        opened = client.post(base, opening, "application/json")
        open_statements = len(counted)
        settled = client.post(f"{base}/floor/result", result, "application/json")
    result_statements = len(counted) - open_statements
    shape_now = {"open": open_statements, "result": result_statements}
    assert shape_now == ROUND_STATEMENTS, f"a round sends {shape_now}: update ROUND_STATEMENTS"
    RoundShapeView.answers.update(
        open=(opened.status_code, opened.json()), result=(settled.status_code, settled.json())
    )
    settings.ROOT_URLCONF = "bench.urls"  # read per request: the floor's URL is bench's

    def floor_cpu(url: Callable[[str, int], str], statements: tuple[int, int]) -> float:
        """CPU a round of the two steps posted to bench's `url(step, statements)`."""
        steps = list(zip(("open", "result"), (opening, result), statements, strict=True))

        def shape() -> None:
            for step, body, count in steps:
                answer = client.post(url(step, count), body, "application/json")
                assert answer.status_code in (200, 201), answer.content

        for _ in range(50):
            shape()
        cpu = time.process_time()
        for _ in range(args.rounds):
            shape()
        return (time.process_time() - cpu) / args.rounds

    # The ladder, each rung the one below plus one layer: plain Django (the project's
    # middleware, the body read and the answer written), DRF's view with its parser and
    # renderer, the terminal's authentication, permission and throttle, the round's statements.
    floor = f"/bench/floor/tables/{table.pk}"
    rungs = {
        "django": floor_cpu(lambda step, _: f"/bench/floor/django/{step}", (0, 0)),
        "drf": floor_cpu(lambda step, n: f"/bench/floor/drf/tables/{table.pk}/{step}/{n}", (0, 0)),
        "checks": floor_cpu(lambda step, n: f"{floor}/{step}/{n}", (0, 0)),
        "statements": floor_cpu(
            lambda step, n: f"{floor}/{step}/{n}", (open_statements, result_statements)
        ),
    }
    full, bare = rungs["statements"], rungs["checks"]
    print(
        f"the stack's floor for the same two requests (the same bodies and answers, none of the"
        f" work): {full * 1000:.2f} ms CPU with the round's {open_statements} + {result_statements}"
        f" statements, {bare * 1000:.2f} ms without them (the terminal's look-up only); the"
        f" round's own code {(per_round - full) * 1000:.2f} ms"
    )
    print(
        f"the floor's rungs: plain Django (the same client, middleware, body and answer)"
        f" {rungs['django'] * 1000:.2f} ms; DRF's view, parser and renderer"
        f" +{(rungs['drf'] - rungs['django']) * 1000:.2f} ms; the terminal's authentication,"
        f" permission and throttle +{(bare - rungs['drf']) * 1000:.2f} ms; the steps' own"
        f" statements +{(full - bare) * 1000:.2f} ms"
    )

    # What one statement's round trip costs this process, from the C library up: the floor
    # under every statement the round sends.
    with connection.cursor() as cursor:
        raw = cursor.connection  # psycopg's own connection, under Django's cursor

        def libpq() -> None:
            raw.pgconn.exec_(b"SELECT 1")

        def psycopg_cursor() -> None:
            with raw.cursor() as own:
                own.execute("SELECT %s", [1])
                own.fetchone()

        def django_cursor() -> None:
            cursor.execute("SELECT %s", [1])
            cursor.fetchone()

        trips = {}
        for name, trip in (
            ("libpq", libpq),
            ("psycopg", psycopg_cursor),
            ("Django", django_cursor),
        ):
            trip()
            cpu = time.process_time()
            for _ in range(2000):
                trip()
            trips[name] = (time.process_time() - cpu) / 2000
    print(
        "one statement's round trip (SELECT 1, autocommit), CPU: "
        + ", ".join(f"{name} {cost * 1e6:.0f} us" for name, cost in trips.items())
    )

    deck = DECK[:]
    shuffler.shuffle(deck)
    to_open, to_settle = _open_body("r"), _result_body(deck)
    for name, read in (
        ("open", lambda: parse_open(to_open, game=Game.UTH, seats=7, progressive_stake_cents=500)),
        ("result", lambda: parse_result(to_settle, game=Game.UTH, seats=7)),
    ):
        best = min(timeit.repeat(read, number=2000, repeat=5)) / 2000
        print(f"reading a 7-seat {name} body: {best * 1e6:.1f} us")


if __name__ == "__main__":
    main()
