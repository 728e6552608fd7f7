"""An aged journal: what the service runs as a matter of routine, timed as the journal grows.

    .venv/bin/python bench/aging.py --sizes 10000,100000,1000000 [--fresh] [--per-day 2740]
        [--between 300] [--seed 2026] [--timeout-ms 3600000]

Builds the journal through the real services, never by copying rows past the hash chain: full
7-seat Ultimate Texas Hold'em rounds (Ante, Blind, Trips and the progressive on every seat, Play
by the simulator's basic strategy, fair shuffles from a `random.Random` seeded per round) on 10
tables of one pool, each request read by `tables.bodies.round_requests.parse_open` /
`parse_result` and run by
`round_open` / `round_settle` (no Idempotency-Key), with the body's fingerprint and the terminal's
actor, exactly as `tables.api.views` runs them: real settlement, awards, chains and transfers.
At the end of every simulated club day, each award waiting for a supervisor (a jackpot, or one
at or over the pool's verification threshold) is verified by one supervisor, approved by another
and paid (`jackpot.awards.workflow`), so the journal has award steps too.

The clock is moved with `time_machine` (the services read `timezone.now()`; PostgreSQL is
real): round n is played on club day n // per_day from START_DAY, the day's rounds spread
evenly from 12:00 to 23:30 in the service's TIME_ZONE (a round opens at its slot and settles
half a slot later, so time never goes back); the day's award steps at 23:45. 2,740 rounds a day
(the default) is 1,000,000 rounds in 365 days: a year of a busy club of 10 tables, 274 rounds a
table a day. The density and the seed are kept in the pool's name: a grown journal refuses
another density, so its times stay in order.

The database (AGING_DATABASE, default jackpot_aging, at DATABASE_URL's server; created if
missing, and migrated) is kept
between runs and grown: `--sizes` grows it to each size in turn, playing only the rounds
missing (a round an interrupted run left open is settled first), and is rebuilt only with
`--fresh` (a size the journal already passed is skipped). Where the server runs without
autovacuum (this CI machine's PostgreSQL has it off), the bench runs VACUUM (ANALYZE) after
each club day and before measuring, out of the play's time, as autovacuum would: without it the
planner never learns the tables' sizes and the rounds slow down on plans made for empty tables.
Redis is DB 2 (AGING_REDIS_URL, default redis://127.0.0.1:6379/2): the big wins'
relays sent after commit wait there, no worker takes them.

At each size it prints and records (bench/results/aging-<UTC time>.json):
- `journal`: rounds, audit events, transfers, awards (by status), chains;
- `play`: the rounds played to reach the size, their wall time and rounds/s;
- (0) `catch_up`: the journal is built without beat, so first what a service that has run all
  along has done already, timed: a scheduled reconciliation
  (`tables.audit.reconciliation.reconcile()`; from no checkpoint it walks the whole journal, once:
  the first run after this build is installed) and the history's fold
  (`tables.audit.history.fold_history`, in its limited steps);
- (1) `selfcheck`: the start-up gate, `tables.audit.selfcheck.selfcheck()`, as `manage.py selfcheck`
  runs it before gunicorn binds (no statement timeout), `--between` rounds after the newest
  checkpoint (a restart 5 minutes after the last scheduled reconciliation);
- (2) `reconcile`: the next scheduled reconciliation, `--between` more rounds after that
  (about 5 minutes of play at a busy floor's peak), and the history's fold after it (`fold`);
- (3) `verify`: the full verification from genesis, `tables.audit.verification.verify_full()`, with
  events/s and microseconds per event (the daily run's walk, and the one (1) and (2) made before
  checkpoints: the "before" figures of docs/benchmarks.md);
- (4) `history_day`, `history_range`: `tables.audit.pool_history` over the last full club
  day, and over every day from the first to the last (a year at 1,000,000 rounds);
- (5) `export_day`: `GET /api/v1/awards/export.csv?from=&to=` over the last full club day,
  through django.test.Client with an auditor's staff token: time, bytes, rows.
Each figure is one timed call on a warm cache: wall seconds, the process's CPU seconds (the
rest is PostgreSQL, on the same 2 cores), and the 1-minute load average before it. Every
measured call runs with a session statement_timeout of `--timeout-ms` (the rounds keep the
requests' 1.5 s); a call that sets its own `SET LOCAL` (reconcile's 300 s, pool_history's 20 s)
keeps it, and a call that fails is recorded with its error, not retried. The timed calls are
the table `CALLS` below.
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as clock_time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
SERVER = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/jackpot")
DATABASE = os.environ.get("AGING_DATABASE", "jackpot_aging")
os.environ["DATABASE_URL"] = urlunsplit(urlsplit(SERVER)._replace(path=f"/{DATABASE}"))
os.environ["REDIS_URL"] = os.environ.get("AGING_REDIS_URL", "redis://127.0.0.1:6379/2")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
os.environ.setdefault("DEBUG", "0")  # no query log kept for a million rounds
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django

django.setup()

import psycopg
import time_machine
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from django.test import Client

import config.celery  # noqa: F401  (as gunicorn and manage.py do: the app that sends tasks)
from bench.results import write_result
from core.wire import read_query
from jackpot.awards.workflow import award_approve, award_pay, award_verify
from jackpot.bodies.awards import WinnerIdentityBody
from jackpot.models import AuditEvent, Award, AwardStatus, PaymentMethod, Pool, Transfer
from jackpot.money.canonical import fingerprint
from jackpot.pools.creation import pool_create
from jackpot.staff.accounts import staff_token_issue
from jackpot.staff.roles import role_group
from simulator.deals import ANTES_CENTS, TRIPS_CENTS, PlacedBets, RoundPlan, deal_fair
from tables.audit.history import fold_history
from tables.audit.pool_history import pool_history
from tables.audit.reconciliation import reconcile
from tables.audit.selfcheck import selfcheck
from tables.audit.verification import verify_full
from tables.bodies.history import PoolHistoryQuery
from tables.bodies.round_requests import parse_open, parse_result
from tables.models import Game, Round, RoundState, Table, Terminal
from tables.rounds import RoundOpened, RoundSettled, round_open, round_settle
from tables.services import operator_terminal_issue, table_create

# --- what is timed: one place, so a faster sibling replaces an entry -----------------------------


def qualified(call: Callable[..., Any]) -> str:
    return f"{call.__module__}.{call.__qualname__}"


@dataclass(frozen=True)
class Calls:
    """The service's routine calls this bench times, by name."""

    selfcheck: Callable[[], Any]  # the start-up gate (manage.py selfcheck)
    reconcile: Callable[..., Any]  # the scheduled reconciliation (beat, every 5 minutes)
    verify_full: Callable[[], Any]  # the whole walk from genesis
    fold_history: Callable[[], int]  # the history's days kept as the journal grows (beat)
    pool_history: Callable[[int, PoolHistoryQuery], Any]  # the auditor's charts
    export_path: str  # a day's payout log, through the API


CALLS = Calls(
    selfcheck=selfcheck,
    reconcile=reconcile,
    verify_full=verify_full,
    fold_history=fold_history,
    pool_history=pool_history,
    export_path="/api/v1/awards/export.csv",
)

# --- the floor ---------------------------------------------------------------------------------

TABLES = 10
SEATS = tuple(range(1, 8))
START_DAY = date(2025, 11, 1)  # 365 days of 2,740 rounds end on 2026-10-31, before this run
OPENS = clock_time(12, 0)
PLAY_SECONDS = 11.5 * 3600  # 12:00 to 23:30
AWARD_STEPS = clock_time(23, 45)
ACTOR = "system:bench-aging"
POOL_NAME = "Aging ({per_day} rounds/day, seed {seed})"
POOL_NAME_RE = re.compile(r"Aging \((\d+) rounds/day, seed (\d+)\)")
SUPERVISORS = ("aging-supervisor-a", "aging-supervisor-b")
AUDITOR = "aging-auditor"
PROGRESS_EVERY = 2000
REQUEST_BUDGET_S = settings.DATABASE_STATEMENT_TIMEOUT_MS / 1000


@dataclass(frozen=True)
class Floor:
    pool: Pool
    tables: tuple[Table, ...]
    actors: tuple[str, ...]  # each table's terminal, as the views name it: terminal:<pk>
    supervisors: tuple[User, User]
    auditor_token: str
    per_day: int
    seed: int

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(settings.TIME_ZONE)

    def day_of(self, number: int) -> date:
        return START_DAY + timedelta(days=number // self.per_day)

    def opened_at(self, number: int) -> datetime:
        day, slot = divmod(number, self.per_day)
        opens = datetime.combine(START_DAY + timedelta(days=day), OPENS, tzinfo=self.zone)
        return opens + timedelta(seconds=slot * PLAY_SECONDS / self.per_day)

    def settled_at(self, number: int) -> datetime:
        return self.opened_at(number) + timedelta(seconds=PLAY_SECONDS / self.per_day / 2)

    def steps_at(self, day: date) -> datetime:
        return datetime.combine(day, AWARD_STEPS, tzinfo=self.zone)


def _database(fresh: bool) -> None:
    """Create the bench's database if it is missing (drop it first with --fresh)."""
    maintenance = urlunsplit(urlsplit(SERVER)._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as admin:
        if fresh:
            admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE])
        if found.fetchone() is None:
            admin.execute(f'CREATE DATABASE "{DATABASE}"')
            print(f"created database {DATABASE}")


def _staff(username: str, role: str) -> User:
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.groups.add(role_group(role))
    return user


def _floor(per_day: int, seed: int) -> Floor:
    """The pool, its 10 tables and their terminals, two supervisors and an auditor: made on the
    first run, found on the next (a density or seed other than the journal's is refused)."""
    pool = Pool.objects.filter(name__startswith="Aging (").order_by("pk").first()
    if pool is None:
        created = datetime.combine(START_DAY, clock_time(10), ZoneInfo(settings.TIME_ZONE))
        with time_machine.travel(created.timestamp(), tick=False):
            pool = pool_create(name=POOL_NAME.format(per_day=per_day, seed=seed), actor=ACTOR)
            for number in range(1, TABLES + 1):
                table = table_create(name=f"Aging {number}", game=Game.UTH, pool=pool, actor=ACTOR)
                operator_terminal_issue(table=table, name="t", revoke_others=False, actor=ACTOR)
    built = POOL_NAME_RE.fullmatch(pool.name)
    if built is None or (int(built[1]), int(built[2])) != (per_day, seed):
        raise SystemExit(
            f"{DATABASE} was built as {pool.name!r}: run with its --per-day and --seed, or --fresh"
        )
    tables = tuple(Table.objects.select_related("pool").filter(pool=pool).order_by("pk"))
    actors = tuple(
        f"terminal:{Terminal.objects.filter(table=t, revoked_at__isnull=True).order_by('pk')[0].pk}"
        for t in tables
    )
    supervisors = (_staff(SUPERVISORS[0], "supervisor"), _staff(SUPERVISORS[1], "supervisor"))
    auditor = _staff(AUDITOR, "auditor")
    token = staff_token_issue(user=auditor, revoke_others=True, actor=ACTOR)
    return Floor(pool, tables, actors, supervisors, token, per_day, seed)


# --- playing ----------------------------------------------------------------------------------


def _plan(floor: Floor, number: int) -> RoundPlan:
    """Round `number`'s bets and cards: every bet on every seat, a fair shuffle. Its generator is
    seeded by (seed, number), so a round is the same whichever run plays it."""
    rng = random.Random(f"aging:{floor.seed}:{number}")
    stake = floor.pool.stake_cents
    seats = tuple(
        PlacedBets(seat, rng.choice(ANTES_CENTS), rng.choice(TRIPS_CENTS), stake) for seat in SEATS
    )
    return RoundPlan(f"a{number}", seats, deal_fair(rng, len(seats)))


def _wire(body: dict[str, Any]) -> dict[str, Any]:
    """The body as the view's parser hands it over (JSON in, JSON out)."""
    return dict(json.loads(json.dumps(body)))


def _open(floor: Floor, number: int, plan: RoundPlan) -> RoundOpened:
    """POST /tables/{table}/rounds, as TableRoundsView.post runs it."""
    table, actor = floor.tables[number % TABLES], floor.actors[number % TABLES]
    data = _wire(plan.open_body())
    parsed = parse_open(
        data,
        game=Game(table.game),
        seats=table.seats,
        progressive_stake_cents=table.pool.stake_cents if table.pool else None,
    )
    body = fingerprint(data)
    return round_open(table=table, request=parsed, fingerprint=body, actor=actor)


def _settle(floor: Floor, number: int, plan: RoundPlan) -> RoundSettled:
    """POST /tables/{table}/rounds/{round_id}/result, as RoundResultView.post runs it."""
    table, actor = floor.tables[number % TABLES], floor.actors[number % TABLES]
    data = _wire(plan.result_body())
    parsed = parse_result(data, game=Game(table.game), seats=table.seats)
    body = fingerprint(data)
    return round_settle(
        table=table, round_id=plan.round_id, request=parsed, fingerprint=body, actor=actor
    )


def _award_steps(floor: Floor) -> int:
    """Every award waiting for a supervisor: verified by one, approved by the other, paid."""
    first, second = floor.supervisors
    waiting = list(
        Award.objects.filter(status=AwardStatus.PENDING, void_requested_by__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for award_id in waiting:
        award_verify(award_id=award_id, user=first, note="cards and video checked (aging bench)")
        award_approve(award_id=award_id, user=second)
        award_pay(
            award_id=award_id,
            user=first,
            method=PaymentMethod.BANK_TRANSFER,
            reference=f"BENCH-{award_id}",
            winner=BENCH_WINNER,  # a jackpot is above the identification threshold
        )
    return len(waiting)


#: A made-up winner: every jackpot the bench pays is at or above the identification threshold.
BENCH_WINNER = WinnerIdentityBody.model_validate(
    {
        "name": "Bench Player",
        "date_of_birth": "1970-01-01",
        "document_type": "passport",
        "document_number": "BENCH0001",
        "nationality": "FR",
    }
)


def autovacuum_off() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        row = cursor.fetchone()
    return row is not None and row[0] == "off"


def maintain() -> float:
    """VACUUM (ANALYZE) the database, as autovacuum would have by now; its seconds.

    Only where the server runs without autovacuum (a CI server's conf.d may turn it off): the
    planner then never learns the tables' sizes, and the rounds slow down on plans made for
    empty tables (the sign's awards query sorted every award of the pool after each award).
    """
    began = time.perf_counter()
    with _statement_timeout(0), connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    return time.perf_counter() - began


@dataclass
class Played:
    vacuum: bool
    rounds: int = 0
    seconds: float = 0.0
    vacuum_seconds: float = 0.0
    award_steps: int = 0
    resumed: int = 0
    chunks: list[dict[str, float]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.rounds / self.seconds if self.seconds else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "seconds": round(self.seconds, 2),
            "rounds_per_s": round(self.rate, 2),
            "vacuum_analyze_seconds": round(self.vacuum_seconds, 2),
            "awards_through_supervisors": self.award_steps,
            "resumed_open_rounds": self.resumed,
            "chunks": self.chunks,
        }


def _rounds() -> int:
    return Round.objects.count()


def _resume(floor: Floor, traveller: time_machine.Traveller) -> int:
    """Settle the rounds an interrupted run left open (their plan is known from their number)."""
    left = list(Round.objects.filter(state=RoundState.OPEN).values_list("round_id", flat=True))
    for round_id in left:
        number = int(round_id.removeprefix("a"))
        traveller.move_to(floor.settled_at(number).timestamp())
        _settle(floor, number, _plan(floor, number))
    return len(left)


def play(floor: Floor, until: int, played: Played) -> None:
    """Play rounds until the journal holds `until` rounds, printing the rate as it goes."""
    start = _rounds()
    if start >= until:
        return
    began = chunk_began = time.perf_counter()
    chunk_rounds = 0
    with time_machine.travel(floor.opened_at(start).timestamp(), tick=False) as traveller:
        played.resumed += _resume(floor, traveller)
        for number in range(start, until):
            plan = _plan(floor, number)
            traveller.move_to(floor.opened_at(number).timestamp())
            opened = _open(floor, number, plan)
            assert not opened.replayed, opened.answer
            traveller.move_to(floor.settled_at(number).timestamp())
            settled = _settle(floor, number, plan)
            assert not settled.replayed, settled.answer
            if (number + 1) % floor.per_day == 0:  # the day's last round: its award steps
                traveller.move_to(floor.steps_at(floor.day_of(number)).timestamp())
                played.award_steps += _award_steps(floor)
                if played.vacuum:  # not play: out of the rate, as autovacuum would be
                    spent = maintain()
                    played.vacuum_seconds += spent
                    chunk_began += spent
                    began += spent
            chunk_rounds += 1
            if chunk_rounds == PROGRESS_EVERY or number + 1 == until:
                now = time.perf_counter()
                rate = chunk_rounds / (now - chunk_began)
                played.chunks.append(
                    {"up_to": number + 1, "rounds_per_s": round(rate, 2), "load_1m": _load()}
                )
                print(
                    f"  {number + 1:>9,} rounds  {rate:6.1f} rounds/s  "
                    f"club day {floor.day_of(number)}  load {_load():.2f}",
                    flush=True,
                )
                chunk_began, chunk_rounds = now, 0
    played.rounds += until - start
    played.seconds += time.perf_counter() - began


# --- measuring ---------------------------------------------------------------------------------


def _load() -> float:
    return round(os.getloadavg()[0], 2)


@contextmanager
def _statement_timeout(milliseconds: int) -> Iterator[None]:
    """The session's statement_timeout for one measured call (the rounds keep the requests')."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET statement_timeout = {int(milliseconds)}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")


def timed(call: Callable[[], Any], timeout_ms: int) -> tuple[dict[str, Any], Any]:
    """One call's wall and CPU seconds (and the load before it); an error is a figure too."""
    figure: dict[str, Any] = {"load_1m": _load()}
    result = None
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with _statement_timeout(timeout_ms):
            result = call()
    except Exception as error:  # a timeout at this size is a finding, not the end of the run
        figure["error"] = f"{type(error).__name__}: {str(error).strip()[:300]}"
        connection.close()  # a cancelled statement may leave the connection in a failed state
    figure["seconds"] = round(time.perf_counter() - wall, 4)
    figure["cpu_seconds"] = round(time.process_time() - cpu, 4)
    return figure, result


def journal_size() -> dict[str, Any]:
    by_status = dict(Award.objects.values_list("status").annotate(n=Count("pk")).order_by())
    return {
        "rounds": Round.objects.count(),
        "events": AuditEvent.objects.count(),
        "transfers": Transfer.objects.count(),
        "awards": sum(by_status.values()),
        "awards_by_status": by_status,
        "chains": AuditEvent.objects.values("chain").distinct().count(),
    }


def _last_full_day(floor: Floor, rounds: int) -> date:
    """The last club day whose rounds were all played (the first day if none was)."""
    full_days = rounds // floor.per_day
    return START_DAY + timedelta(days=max(full_days - 1, 0))


def _history(floor: Floor, first: date, last: date, timeout_ms: int) -> dict[str, Any]:
    query = read_query(PoolHistoryQuery, {"from": first.isoformat(), "to": last.isoformat()})
    figure, history = timed(lambda: CALLS.pool_history(floor.pool.pk, query), timeout_ms)
    figure.update(first_day=first.isoformat(), last_day=last.isoformat())
    if history is not None:
        figure.update(meter_days=len(history.meter), settled_rounds=history.settled_rounds)
    return figure


def _export(floor: Floor, day: date, timeout_ms: int) -> dict[str, Any]:
    """The day's payout log through the API, read to its last byte."""
    zone = floor.zone
    bounds = {
        "from": datetime.combine(day, clock_time(0), tzinfo=zone).isoformat(),
        "to": datetime.combine(day + timedelta(days=1), clock_time(0), tzinfo=zone).isoformat(),
    }
    client = Client(HTTP_AUTHORIZATION=f"Bearer {floor.auditor_token}")
    link = id(connection.connection)

    def fetch(query: dict[str, str]) -> bytes:
        response = client.get(f"{CALLS.export_path}?{urlencode(query)}")
        assert response.status_code == 200, response.status_code
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]

    # Untimed first, over no time at all: a view's first request in a process loads things.
    fetch({"from": bounds["from"], "to": bounds["from"]})
    figure, body = timed(lambda: fetch(bounds), timeout_ms)
    # The test client keeps the connection (and the session's timeout) through the request.
    assert id(connection.connection) == link or "error" in figure
    figure["day"] = day.isoformat()
    if body is not None:
        figure.update(bytes=len(body), rows=body.count(b"\n") - 2)
    figure["over_request_budget"] = figure["seconds"] > REQUEST_BUDGET_S
    return figure


def _fold_all() -> int:
    """The history's fold as beat runs it, until nothing is left: the events folded."""
    folded = total = CALLS.fold_history()
    while folded:
        folded = CALLS.fold_history()
        total += folded
    return total


def measure(floor: Floor, size: int, between: int, timeout_ms: int, played: Played) -> dict:
    """Everything timed at one size (the module's docstring, items 0 to 5)."""
    figures: dict[str, Any] = {"size": size}
    print(f"[{size:,}] catching up: the first reconciliation and the history's fold ...")
    figures["catch_up_reconcile"], first = timed(
        lambda: CALLS.reconcile(run_key=f"aging-{uuid.uuid4()}"), timeout_ms
    )
    if first is not None:
        figures["catch_up_reconcile"].update(ok=first.ok, problems=first.problems[:5])
    figures["catch_up_fold"], _ = timed(_fold_all, timeout_ms)

    print(f"[{size:,}] {between} rounds, then the start-up gate (selfcheck) ...", flush=True)
    play(floor, _rounds() + between, played)
    figures["journal_at_gate"] = journal_size()
    figures["selfcheck"], report = timed(CALLS.selfcheck, timeout_ms)
    if report is not None:
        figures["selfcheck"]["ok"] = report.ok
        figures["selfcheck"]["items"] = {i.name: i.detail for i in report.items}

    print(f"[{size:,}] {between} rounds, then the next reconciliation ...", flush=True)
    play(floor, _rounds() + between, played)
    figures["reconcile"], stored = timed(
        lambda: CALLS.reconcile(run_key=f"aging-{uuid.uuid4()}"), timeout_ms
    )
    if stored is not None:
        figures["reconcile"].update(ok=stored.ok, events=stored.events, problems=stored.problems)
    figures["fold"], _ = timed(_fold_all, timeout_ms)
    figures["between_rounds"] = between

    print(f"[{size:,}] full verification from genesis ...", flush=True)
    figures["verify"], walked = timed(CALLS.verify_full, timeout_ms)
    if walked is not None:
        seconds = figures["verify"]["seconds"]
        figures["verify"].update(
            ok=walked.ok,
            events=walked.events,
            transfers=walked.transfers,
            chains=walked.chains,
            events_per_s=round(walked.events / seconds, 1),
            us_per_event=round(seconds / walked.events * 1e6, 2),
            cpu_us_per_event=round(figures["verify"]["cpu_seconds"] / walked.events * 1e6, 2),
        )

    rounds = _rounds()
    last_day, day = floor.day_of(rounds - 1), _last_full_day(floor, rounds)
    print(f"[{size:,}] pool history (a day, the whole range), a day's export ...", flush=True)
    figures["history_day"] = _history(floor, day, day, timeout_ms)
    figures["history_range"] = _history(floor, START_DAY, last_day, timeout_ms)
    figures["export_day"] = _export(floor, day, timeout_ms)
    figures["journal"] = journal_size()
    figures["club_days"] = (last_day - START_DAY).days + 1
    return figures


# --- reporting ---------------------------------------------------------------------------------


def _seconds(figure: dict[str, Any]) -> str:
    return "error" if "error" in figure else f"{figure['seconds']:.3f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    lines = [
        ("rounds", lambda f: f"{f['journal']['rounds']:,}"),
        ("audit events", lambda f: f"{f['journal']['events']:,}"),
        ("transfers", lambda f: f"{f['journal']['transfers']:,}"),
        ("awards", lambda f: f"{f['journal']['awards']:,}"),
        ("club days", lambda f: f"{f['club_days']:,}"),
        ("play, rounds/s", lambda f: f"{f['play']['rounds_per_s']:.1f}"),
        ("(0) first reconcile, s", lambda f: _seconds(f["catch_up_reconcile"])),
        ("    first fold, s", lambda f: _seconds(f["catch_up_fold"])),
        ("(1) selfcheck, s", lambda f: _seconds(f["selfcheck"])),
        ("(2) next reconcile, s", lambda f: _seconds(f["reconcile"])),
        ("    next fold, s", lambda f: _seconds(f["fold"])),
        ("(3) verify_full, s", lambda f: _seconds(f["verify"])),
        ("    events/s", lambda f: f"{f['verify'].get('events_per_s', 0):,.0f}"),
        ("    us per event", lambda f: f"{f['verify'].get('us_per_event', 0):.1f}"),
        ("    CPU us per event", lambda f: f"{f['verify'].get('cpu_us_per_event', 0):.1f}"),
        ("(4) history, last day, s", lambda f: _seconds(f["history_day"])),
        ("    history, all days, s", lambda f: _seconds(f["history_range"])),
        ("(5) export a day, s", lambda f: _seconds(f["export_day"])),
        (
            "    bytes (rows)",
            lambda f: f"{f['export_day'].get('bytes', 0):,} ({f['export_day'].get('rows', 0):,})",
        ),
        ("load (1 min) at verify", lambda f: f"{f['verify']['load_1m']:.2f}"),
    ]
    width = 16
    print()
    print(f"{'size':<26}" + "".join(f"{f['size']:>{width},}" for f in rows))
    for label, cell in lines:
        print(f"{label:<26}" + "".join(f"{cell(f):>{width}}" for f in rows))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000,10000", help="rounds, comma-separated, growing")
    parser.add_argument("--fresh", action="store_true", help="drop the database and start again")
    parser.add_argument("--per-day", type=int, default=2740, help="rounds per simulated club day")
    parser.add_argument("--between", type=int, default=300, help="rounds between reconciliations")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--timeout-ms", type=int, default=3_600_000, help="measured calls' statement_timeout"
    )
    args = parser.parse_args()
    sizes = sorted({int(size.replace("_", "")) for size in args.sizes.split(",")})

    _database(args.fresh)
    with _statement_timeout(0):
        call_command("migrate", verbosity=0)
    floor = _floor(args.per_day, args.seed)
    vacuum = autovacuum_off()
    if vacuum:
        print("autovacuum is off on this server: VACUUM (ANALYZE) after each club day instead")
    name = f"aging-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    print(
        f"{DATABASE}: {_rounds():,} rounds; {TABLES} tables of 7 seats, every bet on every seat; "
        f"{args.per_day:,} rounds per club day from {START_DAY} "
        f"(1,000,000 rounds = {1_000_000 / args.per_day:.0f} days)",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    for size in sizes:
        if _rounds() > size:
            print(f"[{size:,}] skipped: the journal already holds {_rounds():,} rounds")
            continue
        played = Played(vacuum=vacuum)
        print(f"[{size:,}] growing the journal ...", flush=True)
        play(floor, size, played)
        print(f"[{size:,}] played {played.rounds:,} rounds at {played.rate:.1f} rounds/s")
        if played.vacuum:
            print(f"[{size:,}] VACUUM (ANALYZE) ... {maintain():.1f} s", flush=True)
        figures = measure(floor, size, args.between, args.timeout_ms, played)
        figures["play"] = played.as_json()
        rows.append(figures)
        path = write_result(
            name,
            {"sizes": rows},
            command=" ".join([".venv/bin/python", "bench/aging.py", *sys.argv[1:]]),
            database=DATABASE,
            tables=TABLES,
            seats=len(SEATS),
            per_day=args.per_day,
            start_day=START_DAY.isoformat(),
            seed=args.seed,
            between=args.between,
            vacuum_analyze_each_day=vacuum,
            timeout_ms=args.timeout_ms,
            calls={
                "selfcheck": qualified(CALLS.selfcheck),
                "reconcile": qualified(CALLS.reconcile),
                "verify_full": qualified(CALLS.verify_full),
                "fold_history": qualified(CALLS.fold_history),
                "pool_history": qualified(CALLS.pool_history),
                "export": f"GET {CALLS.export_path}",
            },
        )
        print_table(rows)
        print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
