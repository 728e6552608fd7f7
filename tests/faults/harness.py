"""What the kill -9 drills are made of: the service started as systemd starts it, terminals that
behave as docs/api.md 2.11 tells them to, a throwaway PostgreSQL cluster, and the books checked
from outside (SQL on the rows, and `manage.py verify_journal` in its own process).

What this module guarantees:

- **The production process.** `Web` runs deploy/systemd/jackpot-web@.service's ExecStart
  (`gunicorn -c deploy/gunicorn.conf.py config.wsgi`) with deploy/env.example's environment
  (`tests.test_production.operator_env`), in a session of its own, so that `crash()` is one
  SIGKILL to the master and every worker at once, as when the host process dies. Its log goes to
  a file (a pipe nobody reads would stall it).
- **Terminals as the integration guide says.** Each `Terminal` plays its table's rounds one after
  the other over real HTTP, behind what a proxy would add (`Host`, `X-Forwarded-Proto: https`, the
  verdict on the terminal's client certificate): a
  fresh `round_id` per round, and every unanswered request (a connection error, a timeout, any
  5xx, 409 `idempotency_key_busy`) sent again with the same bytes after a backoff of 0.1 s
  doubling to 2 s with a random part. Every attempt is recorded with its time and answer.
- **Books checked from the rows, never from the service's own figures.** `check_books` reads the
  rows with SQL and recomputes: every round the terminals played is stored once, settled once,
  with the answer the terminal was given; one `round.opened` and one `round.settled` event each;
  no transfer code twice for a round; each round's stakes taken in full; the meter and the
  reserve counters equal to seed + the stakes' shares - the jackpots, to the 1/10,000 cent.
- **The throwaway cluster is ours alone.** `PrivateCluster` runs initdb into a new temporary
  directory, on a free port, listening on 127.0.0.1 and a socket in that directory; `destroy()`
  stops it and removes the directory whatever state it is in. The shared server on 5432 is never
  touched.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from simulator.deals import RoundPlan, plan_round
from tests.ports import free_port
from tests.test_production import BIN, HOST, ROOT

UNITS_PER_CENT = 10_000  # jackpot.models.pool: the meter and the reserve in 1/10,000 cent

# docs/api.md 2.11: connect within 3 s, 10 s for an answer, resend after 0.1 s doubling to 2 s.
CONNECT_TIMEOUT_S = 3.0
REQUEST_TIMEOUT_S = 10.0
FIRST_RETRY_S = 0.1
MAX_RETRY_S = 2.0
PATIENCE_S = 2.0  # compliance requirement 28: "progressive closed" within 2 s


# --- processes -----------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (state, ppid, ...); None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def alive(pid: int) -> bool:
    """Running, or at least not yet dead (a zombie is dead: it holds no port, file or memory)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[0] != "Z" and int(stat[1]) == pid:
                found.append(int(entry))
    return sorted(found)


def wait_dead(pids: Iterable[int], timeout: float = 30.0) -> None:
    pids = list(pids)
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"still alive after {timeout:g} s: {[p for p in pids if alive(p)]}"
            )
        time.sleep(0.02)


WEB_UNIT = ROOT / "deploy" / "systemd" / "jackpot-web@.service"
VENV_IN_UNITS = "/opt/jackpot/.venv/bin/"


def restart_of(unit: Path) -> tuple[float, list[list[str]]]:
    """What systemd's Restart= does after a crash, read from the unit: its RestartSec, then its
    ExecStartPre commands (with this run's venv for the unit's), before ExecStart again."""
    delay, commands = 0.1, []  # systemd's default RestartSec is 100 ms
    for line in unit.read_text().splitlines():
        name, _, value = line.strip().partition("=")
        if name == "RestartSec":
            delay = float(value.removesuffix("s"))
        elif name == "ExecStartPre":
            commands.append(
                [
                    str(BIN / word.removeprefix(VENV_IN_UNITS))
                    if word.startswith(VENV_IN_UNITS)
                    else word
                    for word in shlex.split(value)
                ]
            )
    return delay, commands


def http_get(port: int, path: str, timeout: float = 2.0) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": HOST})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Web:
    """The service's web process as systemd runs it, on a port of its own that survives restarts."""

    def __init__(self, env: dict[str, str], log: Path, workers: int = 2) -> None:
        self.port = free_port()
        self.env = {**env, "BIND": f"127.0.0.1:{self.port}", "WEB_WORKERS": str(workers)}
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> float:
        """Start it and wait for `/healthz` to answer 200; the seconds that took."""
        started = time.monotonic()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "config.wsgi"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: the crash kills them all
            )
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if http_get(self.port, "/healthz")[0] == 200:
                    return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError(f"/healthz not 200 after {timeout:g} s:\n{self.log_tail()}")
            time.sleep(0.05)

    @property
    def master(self) -> int:
        assert self.process is not None
        return self.process.pid

    def workers(self) -> list[int]:
        return children(self.master)

    def wait_workers(self, count: int, timeout: float = 30.0) -> list[int]:
        deadline = time.monotonic() + timeout
        while len(workers := self.workers()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(workers)} workers, not {count}:\n{self.log_tail()}")
            time.sleep(0.05)
        return workers

    def crash(self) -> list[int]:
        """SIGKILL to the master and every worker at once; the pids killed."""
        assert self.process is not None
        victims = [self.master, *self.workers()]
        os.killpg(self.master, signal.SIGKILL)
        self.process.wait()
        wait_dead(victims)
        return victims

    def kill_worker(self) -> int:
        """SIGKILL to one worker; its pid."""
        victim = self.workers()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.master, signal.SIGKILL)
            self.process.wait()

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""


# --- terminals -----------------------------------------------------------------------------------


@dataclass
class Attempt:
    at: float  # time.monotonic() when sent
    seconds: float  # until answered or failed
    status: int | None  # None: no HTTP answer at all
    error: str  # the JSON error body's code, or the exception's name; "" for a 2xx
    replayed: bool  # a 2xx carrying Idempotent-Replayed: true

    @property
    def closed(self) -> bool:
        return self.status == 503 and self.error == "progressive_closed"


@dataclass
class Step:
    """One request of a round (its open or its result) and every attempt to get it answered."""

    table: int
    round_id: str
    kind: str  # "open" or "result"
    attempts: list[Attempt] = field(default_factory=list)
    answer: dict[str, Any] | None = None  # the 2xx body the terminal was given

    @property
    def replayed(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].replayed


class Floor:
    """What every terminal of a burst shares: acknowledgements counted for the drill's trigger."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acknowledged = 0  # rounds whose result was answered 2xx
        self.stop = threading.Event()

    def acknowledge(self) -> None:
        with self.lock:
            self.acknowledged += 1

    def wait_acknowledged(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.acknowledged < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.acknowledged} rounds acknowledged, not {count}")
            time.sleep(0.005)


class Terminal(threading.Thread):
    """A table's terminal playing `rounds` rounds as docs/api.md 2.11 says, recording everything."""

    def __init__(
        self,
        *,
        port: int,
        table: int,
        token: str,
        stake_cents: int,
        rounds: int,
        run_id: str,
        floor: Floor,
        give_up_s: float = 40.0,
    ) -> None:
        super().__init__(name=f"terminal-{table}", daemon=True)
        self.port, self.table, self.token = port, table, token
        self.stake_cents, self.rounds, self.run_id = stake_cents, rounds, run_id
        self.floor, self.give_up_s = floor, give_up_s
        self.deals = random.Random(f"{run_id}:{table}")  # the same cards for the same run id
        self.jitter = random.Random()
        self.plans: list[RoundPlan] = []
        self.steps: list[Step] = []
        self.failure: str | None = None

    def run(self) -> None:
        try:
            for number in range(1, self.rounds + 1):
                plan = plan_round(
                    self.deals,
                    round_id=f"{self.run_id}-{self.table}-{number}",
                    stake_cents=self.stake_cents,
                )
                self.plans.append(plan)
                path = f"/api/v1/tables/{self.table}/rounds"
                self._send(Step(self.table, plan.round_id, "open"), path, plan.open_body())
                self._send(
                    Step(self.table, plan.round_id, "result"),
                    f"{path}/{plan.round_id}/result",
                    plan.result_body(),
                )
                self.floor.acknowledge()
        except Exception as error:
            self.failure = f"table {self.table}: {type(error).__name__}: {error}"

    def _send(self, step: Step, path: str, body: dict[str, Any]) -> None:
        self.steps.append(step)
        payload = json.dumps(body, separators=(",", ":")).encode()  # one encoding: resent as is
        delay = FIRST_RETRY_S
        first = time.monotonic()
        while True:
            attempt = self._attempt(path, payload)
            step.attempts.append(attempt[0])
            if attempt[1] is not None:
                step.answer = attempt[1]
                return
            answered = attempt[0]
            retried_4xx = answered.status == 429 or answered.error == "idempotency_key_busy"
            if answered.status is not None and 400 <= answered.status < 500 and not retried_4xx:
                raise AssertionError(
                    f"{step.kind} {step.round_id} refused: {answered.status} {answered.error}"
                    f" (attempt {len(step.attempts)}; before: {[a.error for a in step.attempts]})"
                )
            if time.monotonic() - first > self.give_up_s:
                raise AssertionError(
                    f"{step.kind} {step.round_id}: no answer in {self.give_up_s} s"
                )
            time.sleep(delay * (0.5 + self.jitter.random() / 2))  # a room does not resend in step
            delay = min(delay * 2, MAX_RETRY_S)

    def _attempt(self, path: str, payload: bytes) -> tuple[Attempt, dict[str, Any] | None]:
        at = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=CONNECT_TIMEOUT_S)
        try:
            connection.connect()
            assert connection.sock is not None
            connection.sock.settimeout(REQUEST_TIMEOUT_S)
            connection.request(
                "POST",
                path,
                payload,
                {
                    "Host": HOST,
                    "X-Forwarded-Proto": "https",  # what the TLS proxy sets (deploy/env.example)
                    # and its verdict on the terminal's client certificate (TERMINAL_CLIENT_
                    # CERTIFICATES=1 there; deploy/nginx/terminals-tls.conf.in)
                    "X-Client-Verify": "SUCCESS",
                    "X-Client-Subject": f"OU=Terminals,CN=table-{self.table}",
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                },
            )
            response = connection.getresponse()
            raw = response.read()
            status = response.status
            replayed = response.getheader("Idempotent-Replayed") == "true"
        except (OSError, http.client.HTTPException) as error:
            # Refused, reset or cut: the request may have been committed; only a resend can tell.
            return Attempt(at, time.monotonic() - at, None, type(error).__name__, False), None
        finally:
            connection.close()
        seconds = time.monotonic() - at
        if 200 <= status < 300:
            return Attempt(at, seconds, status, "", replayed), json.loads(raw)
        try:
            code = str(json.loads(raw)["error"]["code"])
        except (ValueError, KeyError, TypeError):
            code = raw[:80].decode("utf-8", "replace")
        return Attempt(at, seconds, status, code, False), None


@dataclass
class Burst:
    """The terminals of one drill, once they are done."""

    terminals: list[Terminal]
    started: float
    fault_at: float  # when the fault was set off
    ended: float

    @property
    def steps(self) -> list[Step]:
        return [step for terminal in self.terminals for step in terminal.steps]

    @property
    def attempts(self) -> list[Attempt]:
        return [attempt for step in self.steps for attempt in step.attempts]

    def failures(self) -> list[str]:
        return [t.failure for t in self.terminals if t.failure] + [
            f"{t.name} still running" for t in self.terminals if t.is_alive()
        ]

    def figures(self) -> dict[str, Any]:
        steps, attempts = self.steps, self.attempts
        answered = sorted(a.at + a.seconds for a in attempts if a.status and a.status < 300)
        # The floor's longest wait for any 2xx, and when it began (seconds after the fault).
        gap, since = max(
            ((later - earlier, earlier) for earlier, later in itertools.pairwise(answered)),
            default=(0.0, self.fault_at),
        )
        return {
            "rounds": sum(len(t.plans) for t in self.terminals),
            "requests": len(steps),
            "attempts": len(attempts),
            "retries": len(attempts) - len(steps),
            "outcomes": dict(Counter(a.error or str(a.status) for a in attempts)),
            "worst_closed_s": round(max((a.seconds for a in attempts if a.closed), default=0), 3),
            "longest_pause_s": round(gap, 3),
            "pause_began_s": round(since - self.fault_at, 3),
            # Steps committed whose answer was lost: their first attempt failed, a resend got
            # the stored answer back (Idempotent-Replayed). By how the first attempt failed.
            "committed_unanswered": dict(
                Counter(step.attempts[0].error for step in steps if step.replayed)
            ),
            "seconds": round(self.ended - self.started, 2),
        }

    def replays(self) -> list[str]:
        """Each step answered by a replay: which, and how each attempt went (seconds after the
        fault), to find the commit behind a lost answer in the service's log."""
        return [
            f"{step.kind} {step.round_id} table {step.table}: "
            + ", ".join(
                f"{a.error or a.status}@{a.at - self.fault_at:+.3f}s" for a in step.attempts
            )
            for step in self.steps
            if step.replayed
        ]


def burst(
    terminals: list[Terminal],
    floor: Floor,
    *,
    fault_after: int,
    fault: Callable[[], dict[str, Any]],
    timeout: float = 90.0,
) -> tuple[Burst, dict[str, Any]]:
    """Start the terminals; once `fault_after` rounds are acknowledged, run `fault` (it returns
    its own figures); wait for the terminals to finish their retries and rounds."""
    started = time.monotonic()
    for terminal in terminals:
        terminal.start()
    fault_at = started
    try:
        floor.wait_acknowledged(fault_after)
        fault_at = time.monotonic()
        happened = fault()
    finally:
        deadline = time.monotonic() + timeout
        for terminal in terminals:
            terminal.join(max(0.0, deadline - time.monotonic()))
    return Burst(terminals, started, fault_at, time.monotonic()), happened


# --- the books, from outside ---------------------------------------------------------------------


#: How long the books' reader tries to reach the database after a drill: a proxy in front of it
#: (HAProxy after a switchover) may not send connections to the new primary yet.
BOOKS_REACHABLE_WITHIN_S = 60.0


def _rows(database_url: str, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + BOOKS_REACHABLE_WITHIN_S
    while True:
        try:
            connection = psycopg.connect(database_url, autocommit=True)
            break
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    with connection:
        return connection.execute(sql, list(params)).fetchall()


def check_books(database_url: str, pool: int, done: Burst) -> dict[str, Any]:
    """Every problem found in the rows of `pool` after the burst `done`; AssertionError listing
    them all, else the figures checked."""
    problems: list[str] = []
    planned = {(t.table, plan.round_id): plan for t in done.terminals for plan in t.plans}
    tables = sorted({t.table for t in done.terminals})

    rounds = {
        (table, round_id): (pk, state, stake, opened, closed)
        for pk, table, round_id, state, stake, opened, closed in _rows(
            database_url,
            "SELECT id, table_id, round_id, state, stake_cents, open_response, close_response"
            " FROM tables_round WHERE table_id = ANY(%s)",
            [tables],
        )
    }
    # Every round the terminals played is there, and nothing else; each settled, none left open.
    for key in sorted(planned.keys() - rounds.keys()):
        problems.append(f"round {key} played but not stored")
    for key in sorted(rounds.keys() - planned.keys()):
        problems.append(f"round {key} stored but never played")
    for key, (_, state, _, _, _) in sorted(rounds.items()):
        if state != "settled":
            problems.append(f"round {key} is {state}, not settled")

    # Each answer a terminal was given is the one stored with the round (a replay included).
    for step in done.steps:
        stored = rounds.get((step.table, step.round_id))
        if step.answer is None or stored is None:
            problems.append(f"{step.kind} of {step.round_id} unanswered or not stored")
            continue
        kept = stored[3] if step.kind == "open" else stored[4]
        if kept != step.answer:
            problems.append(f"{step.kind} of {step.round_id}: the answer given is not the stored")

    # One event per step: round.opened and round.settled once each, nothing voided.
    events = Counter(
        {
            (chain, kind, round_id): count
            for chain, kind, round_id, count in _rows(
                database_url,
                "SELECT chain, kind, payload->>'round_id', count(*) FROM jackpot_auditevent"
                " WHERE chain = ANY(%s) AND kind LIKE 'round.%%' GROUP BY 1, 2, 3",
                [[f"table-{table}" for table in tables]],
            )
        }
    )
    for table, round_id in planned:
        for kind in ("round.opened", "round.settled"):
            count = events.pop((f"table-{table}", kind, round_id), 0)
            if count != 1:
                problems.append(f"{kind} of {round_id} written {count} times")
    for extra, count in events.items():
        problems.append(f"unexpected event {extra} x{count}")

    # The stakes: as the terminal sent them, as the seats hold them, as the journal took them.
    seats = {
        round_pk: (count, cents)
        for round_pk, count, cents in _rows(
            database_url,
            "SELECT round_id, count(*) FILTER (WHERE progressive_cents > 0),"
            " coalesce(sum(progressive_cents), 0) FROM tables_roundseat"
            " WHERE round_id = ANY(%s) GROUP BY round_id",
            [[stored[0] for stored in rounds.values()]],
        )
    }
    taken = dict(
        _rows(
            database_url,
            "SELECT t.round_id, sum(t.amount_cents) FROM jackpot_transfer t"
            " JOIN jackpot_account a ON a.id = t.debit_id"
            " WHERE t.pool_id = %s AND a.kind = 'stakes' AND t.round_id IS NOT NULL"
            " GROUP BY t.round_id",
            [pool],
        )
    )
    stakes_total = 0
    for key, plan in planned.items():
        stored = rounds.get(key)
        if stored is None:
            continue
        sent = sum(1 for seat in plan.seats if seat.progressive_cents)
        count, cents = seats.get(stored[0], (0, 0))
        if (count, cents) != (sent, sent * stored[2]):
            problems.append(f"{key}: {sent} stakes sent, seats hold {count} for {cents} cents")
        if taken.get(stored[0], 0) != count * stored[2]:
            problems.append(
                f"{key}: stakes taken {taken.get(stored[0], 0)}, not {count * stored[2]}"
            )
        stakes_total += count

    # No transfer code twice for one round and award (the database also refuses it).
    for round_pk, code, award, count in _rows(
        database_url,
        "SELECT round_id, code, award_id, count(*) FROM jackpot_transfer WHERE pool_id = %s"
        " AND code <> 'correction' GROUP BY 1, 2, 3 HAVING count(*) > 1",
        [pool],
    ):
        problems.append(f"transfer {code} of round {round_pk} award {award} written {count} times")

    # The counters, recomputed from the rows: seed + the stakes' shares - the jackpots.
    ((seed, stake, meter_bp, reserve_bp, meter_units, reserve_units, hits),) = _rows(
        database_url,
        "SELECT seed_cents, stake_cents, meter_share_bp, reserve_share_bp, meter_units,"
        " reserve_units, hit_count FROM jackpot_pool WHERE id = %s",
        [pool],
    )
    (all_stakes,) = _rows(
        database_url,
        "SELECT count(*) FROM tables_roundseat s JOIN tables_round r ON r.id = s.round_id"
        " WHERE r.pool_id = %s AND s.progressive_cents > 0",
        [pool],
    )[0]
    moved = Counter(
        dict(
            _rows(
                database_url,
                "SELECT code, sum(amount_cents) FROM jackpot_transfer WHERE pool_id = %s"
                " GROUP BY code",
                [pool],
            )
        )
    )
    if all_stakes != stakes_total:
        problems.append(f"the pool holds {all_stakes} stakes, the terminals staked {stakes_total}")
    meter = (
        seed * UNITS_PER_CENT * (1 + hits)
        + all_stakes * stake * meter_bp
        - moved["jackpot_hit"] * UNITS_PER_CENT
        + moved["award_void_meter"] * UNITS_PER_CENT
    )
    reserve = all_stakes * stake * reserve_bp - moved["reset_reserve"] * UNITS_PER_CENT
    if meter_units != meter:
        problems.append(f"meter_units {meter_units}, recomputed {meter}")
    if reserve_units != reserve:
        problems.append(f"reserve_units {reserve_units}, recomputed {reserve}")

    if problems:
        raise AssertionError(f"{len(problems)} problem(s):\n" + "\n".join(problems[:50]))
    return {"rounds": len(rounds), "stakes": all_stakes, "meter_units": meter_units, "hits": hits}


def verify_journal(env: dict[str, str]) -> dict[str, Any]:
    """`manage.py verify_journal --json` in its own process, as the nightly timer runs it. A run
    that printed no report never reached the database (a proxy not yet sending connections to a
    new primary, BOOKS_REACHABLE_WITHIN_S): it is run again; a report, good or bad, is final."""
    deadline = time.monotonic() + BOOKS_REACHABLE_WITHIN_S
    while True:
        result = subprocess.run(
            [sys.executable, "manage.py", "verify_journal", "--json"],
            cwd=ROOT,
            env={**env, "DATABASE_STATEMENT_TIMEOUT_MS": "0"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert result.stdout.strip(), result.stderr[-3000:]
    report: dict[str, Any] = json.loads(result.stdout)
    assert result.returncode == 0 and report["ok"], result.stdout[-3000:] + result.stderr[-3000:]
    return report


# --- a PostgreSQL cluster of our own -------------------------------------------------------------

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))


class PrivateCluster:
    """A PostgreSQL 15 cluster in a temporary directory, on a free port, trust auth.

    initdb and pg_ctl refuse to run as root: as root they run as the `postgres` system user.
    """

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="jackpot-faults-pg-"))
        self.data = self.base / "data"
        self.logfile = self.base / "postgres.log"
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            shutil.chown(self.base, self.user)
        try:
            self._run(
                "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"
            )
        except BaseException:
            shutil.rmtree(self.base, ignore_errors=True)
            raise

    def _run(self, program: str, *args: str, timeout: float = 120) -> None:
        result = subprocess.run(
            [str(PG_BIN / program), *args],
            user=self.user,
            cwd=self.base,
            env={"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, f"{program}: {result.stdout}{result.stderr}{self.log()}"

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> float:
        """pg_ctl start, waiting until it accepts connections (after crash recovery, if any)."""
        started = time.monotonic()
        options = f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1"
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60",
            "-o", options,
        )  # fmt: skip
        return time.monotonic() - started

    def stop(self, mode: str = "fast") -> float:
        """pg_ctl stop -m `mode` (fast: every session ended, its transaction rolled back, then a
        clean shutdown), waiting until it is down; the seconds that took."""
        started = time.monotonic()
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "60")
        return time.monotonic() - started

    def postmaster(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill_postmaster(self) -> tuple[int, list[int]]:
        """kill -9 the postmaster; wait for its children (they leave when they see it gone)."""
        postmaster = self.postmaster()
        orphans = children(postmaster)
        os.kill(postmaster, signal.SIGKILL)
        wait_dead([postmaster, *orphans])
        return postmaster, orphans

    def kill_backend(self, database: str) -> tuple[int, str]:
        """kill -9 one backend serving `database`, preferably one inside a statement or a
        transaction; the postmaster then ends every other backend and recovers by itself."""
        deadline = time.monotonic() + 2.0
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            while True:
                rows = connection.execute(
                    "SELECT pid, state FROM pg_stat_activity WHERE datname = %s"
                    " AND backend_type = 'client backend' ORDER BY state = 'idle', pid",
                    [database],
                ).fetchall()
                if rows and (rows[0][1] != "idle" or time.monotonic() > deadline):
                    break
                time.sleep(0.002)
        pid, state = rows[0]
        os.kill(pid, signal.SIGKILL)
        return pid, str(state)

    def wait_recovered(self, timeout: float = 60.0) -> float:
        """After a backend was killed: seconds until the postmaster has refused a connection (it
        is resetting; 2 s at most to see it) and then accepts one again."""
        started = time.monotonic()
        while time.monotonic() - started < 2.0:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
            except psycopg.OperationalError:
                break
            time.sleep(0.005)
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return time.monotonic() - started
            except psycopg.OperationalError:
                if time.monotonic() - started > timeout:
                    raise
                time.sleep(0.05)

    def create_database(self, name: str) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return self.logfile.read_text(errors="replace")[-4000:]
        return ""

    def destroy(self) -> None:
        """Stop it however it is (running, killed, half-started) and remove its directory."""
        with contextlib.suppress(Exception):
            if (self.data / "postmaster.pid").exists() and alive(self.postmaster()):
                self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", timeout=30)
        with contextlib.suppress(Exception):  # pg_ctl could not: the postmaster goes anyway
            if (self.data / "postmaster.pid").exists() and alive(self.postmaster()):
                self.kill_postmaster()
        shutil.rmtree(self.base, ignore_errors=True)
