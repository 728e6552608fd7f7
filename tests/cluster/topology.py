"""The topology of `make cluster`, started by that very command for the drills, on parts of its own.

What this module guarantees:

- **The operator's command, nothing else.** `Topology.make("cluster")` runs `make cluster` (and
  `make cluster-down`) in the project, with only the environment deploy/cluster/up.sh documents:
  its own directory for logs, pids and configuration, free ports for nginx (public and metrics
  listeners), pgbouncer, the terminals' gunicorn instance and two others, the cluster's own Redis
  (with its ACL: `ClusterRedis` speaks to it as its users), and a private PostgreSQL
  (tests/faults/harness.py `PrivateCluster`). The shared services on 5432 and 6379 are never
  stopped, restarted or written to.
- **The service's environment as the cluster wrote it.** `Topology.service` is the cluster's
  `env` file (what /etc/jackpot/env is on a server): the web's address through pgbouncer, the
  pooler mode, the keys. Commands the drills run as the operator (seeding, `verify_journal`) use
  it; the books are read with SQL as the private cluster's superuser, straight to PostgreSQL.
- **Teardown whatever happened.** `make cluster-down` (the cluster's Redis with it), then the
  private PostgreSQL is stopped and removed, even when a drill failed half-way with a part
  killed.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.faults.harness import (
    Burst,
    Floor,
    PrivateCluster,
    Terminal,
    alive,
    burst,
    check_books,
    children,
    verify_journal,
    wait_dead,
)
from tests.jackpot.webhook_receiver import Receiver
from tests.ports import free_port
from tests.test_production import ROOT

DATABASE = "jackpot_topo_drills"
APP_ROLE = f"{DATABASE}_app"


class ClusterRedis:
    """The cluster's redis-server (deploy/redis, started by up.sh), spoken to as its users: the
    service's `jackpot` or the `operator`, with the passwords of the cluster's secrets.env. No
    persistence: killed, it comes back empty."""

    def __init__(self, directory: Path, port: int) -> None:
        self.dir = directory  # the cluster's directory
        self.port = port

    def _secret(self, name: str) -> str:
        for line in (self.dir / "secrets.env").read_text().splitlines():
            key, _, value = line.partition("=")
            if key == name:
                return value
        raise KeyError(name)

    def command(self, *words: str, user: str | None = "jackpot") -> bytes:
        """One command (after AUTH as `user`, unless None); Redis's raw answer to it."""
        password = {"jackpot": "REDIS_PASSWORD", "operator": "REDIS_OPERATOR_PASSWORD"}
        commands = [("AUTH", user, self._secret(password[user]))] if user else []
        commands.append(words)
        wire = b"".join(
            b"*%d\r\n" % len(parts)
            + b"".join(b"$%d\r\n%s\r\n" % (len(p.encode()), p.encode()) for p in parts)
            for parts in commands
        )
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(wire)
            answer = b""
            sock.settimeout(0.3)
            with contextlib.suppress(TimeoutError):
                while chunk := sock.recv(65536):
                    answer += chunk
        if user:
            assert answer.startswith(b"+OK\r\n"), answer
            answer = answer[len(b"+OK\r\n") :]
        return answer

    def answers(self) -> bool:
        with contextlib.suppress(OSError, AssertionError, KeyError):
            return self.command("PING") == b"+PONG\r\n"
        return False

    def keys(self) -> int:
        """DBSIZE of database 0."""
        return int(self.command("DBSIZE").strip().lstrip(b":"))

    def kill(self) -> None:
        """SIGKILL: everything it held is gone."""
        pid = int((self.dir / "redis.pid").read_text())
        os.kill(pid, signal.SIGKILL)
        wait_dead([pid])

    def start(self, timeout: float = 10.0) -> None:
        """Started again as up.sh starts it (it writes its own pid file)."""
        with (self.dir / "redis.log").open("ab") as log:
            subprocess.Popen(
                ["redis-server", str(self.dir / "redis" / "redis.conf")],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, env={"PATH": os.environ["PATH"]},
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self.answers():
            if time.monotonic() > deadline:
                raise AssertionError(f"redis-server on {self.port} does not answer")
            time.sleep(0.05)


@dataclass
class Seated:
    """A pool of the drill's own, its tables and their terminals' tokens."""

    pool: int
    stake_cents: int
    tables: list[tuple[int, str]]


class Topology:
    def __init__(self, base: Path, postgres: PrivateCluster | None, receiver: Receiver) -> None:
        self.base = base
        self.dir = base / "cluster"
        self.postgres = postgres
        self.receiver = receiver  # where the worker posts the big-win webhooks
        self.public_port = free_port()
        self.metrics_port = free_port()
        self.pgbouncer_port = free_port()
        self.redis = ClusterRedis(self.dir, free_port())
        self.terminal_ports = [free_port()]  # the terminals' round API (nginx routes it there)
        self.web_ports = [free_port(), free_port()]  # everything else
        self.settings: dict[str, str] = {}  # CLUSTER_SET_*: more of the service's environment
        self._seated: list[Seated] = []

    @property
    def database_url(self) -> str:
        """The drill database as PostgreSQL's superuser sees it: for reading the books."""
        assert self.postgres is not None
        return self.postgres.url(DATABASE)

    def environment(self) -> dict[str, str]:
        """What the operator sets for `make cluster` (deploy/cluster/up.sh's variables)."""
        return {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", "/tmp"),
            "VENV": str(Path(sys.executable).parent.parent),
            "CLUSTER_DIR": str(self.dir),
            **({"CLUSTER_PG_URL": self.postgres.url("postgres")} if self.postgres else {}),
            "CLUSTER_DATABASE": DATABASE,
            "REDIS_PORT": str(self.redis.port),
            "PUBLIC_LISTEN": f"127.0.0.1:{self.public_port}",
            "METRICS_LISTEN": f"127.0.0.1:{self.metrics_port}",
            "PGBOUNCER_PORT": str(self.pgbouncer_port),
            "WEB_PORTS": " ".join(str(port) for port in self.web_ports),
            "WEB_WORKERS": "2",
            "TERMINAL_PORTS": " ".join(str(port) for port in self.terminal_ports),
            "TERMINAL_WORKERS": "2",
            # `make test` runs a drill beside the suite's other processes, which take the CPU
            # from the staff's instances (nice 10) while they start.
            "READY_SECONDS": "480",
            **{f"CLUSTER_SET_{name}": value for name, value in self.settings.items()},
        }

    def make(self, target: str, timeout: float = 600) -> str:
        """`make cluster` or `make cluster-down`, as an operator types it; its output."""
        done = subprocess.run(
            ["make", "--no-print-directory", target],
            cwd=ROOT,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"make {target}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    @property
    def service(self) -> dict[str, str]:
        """The cluster's env file: the environment of its web, worker and beat."""
        values = {}
        for line in (self.dir / "env").read_text().splitlines():
            name, _, value = line.partition("=")
            if name and not name.startswith("#"):
                values[name] = value
        return values

    def pid(self, name: str) -> int:
        return int((self.dir / f"{name}.pid").read_text())

    def group(self, name: str) -> list[int]:
        """The process `name` and its children (gunicorn's workers, celery's pool)."""
        leader = self.pid(name)
        return [leader, *children(leader)]

    def kill(self, name: str) -> list[int]:
        """SIGKILL to the process group of `name` (it leads one: up.sh starts it with setsid),
        as when the host process dies; the pids killed, once they are gone."""
        victims = self.group(name)
        os.killpg(victims[0], signal.SIGKILL)
        wait_dead(victims)
        return victims

    def manage(self, *args: str, **env: str) -> str:
        """manage.py with the cluster's environment (through pgbouncer, as its app role)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**self.service, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    def seat(self, pools: int, tables: int) -> None:
        """`pools` new pools of `tables` Ultimate Hold'em tables each, one per drill (so each
        drill's books are its own), made by the services as the app role through pgbouncer, in
        one process (Django starts once). The worked example's shares: sub-cent remainders, so
        the books are exact or wrong.

        Its commits wait for a synchronous standby however long it takes, as up.sh's migrations
        do (DATABASE_COMMIT_TIMEOUT_MS=0): it is the setup, not the money path the drills test,
        and on a busy machine the pair's first commits can wait past the service's 200 ms."""
        code = f"""
import json
from jackpot.pools.creation import pool_create
from tables.models import Game
from tables.services import table_create, operator_terminal_issue
seated = []
for n in range({pools}):
    pool = pool_create(name=f"Drill {{n}}", actor="drill", meter_share_bp=1250,
                       reserve_share_bp=625)
    seats = []
    for number in range({tables}):
        table = table_create(name=f"UTH {{pool.pk}}-{{number}}", game=Game.UTH, pool=pool,
                             actor="drill")
        token = operator_terminal_issue(table=table, name="t", revoke_others=False, actor="drill")
        seats.append([table.pk, token.token])
    seated.append({{"pool": pool.pk, "stake_cents": pool.stake_cents, "tables": seats}})
print(json.dumps(seated))
"""
        out = self.manage("shell", "-c", code, DATABASE_COMMIT_TIMEOUT_MS="0")
        out = out.strip().splitlines()[-1]
        self._seated = [
            Seated(s["pool"], s["stake_cents"], [(t, token) for t, token in s["tables"]])
            for s in json.loads(out)
        ]

    def next_seat(self) -> Seated:
        """A pool of its own for the next drill."""
        return self._seated.pop(0)

    def peek_seat(self) -> Seated:
        """The next drill's pool, for a test that only reads."""
        return self._seated[0]

    def get(
        self, path: str, port: int | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """GET through nginx's public listener (or `port`)."""
        connection = http.client.HTTPConnection("127.0.0.1", port or self.public_port, timeout=5)
        try:
            connection.request("GET", path, headers={"Host": "127.0.0.1", **(headers or {})})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def healthy(self, port: int) -> bool:
        with contextlib.suppress(OSError, http.client.HTTPException):
            return self.get("/healthz", port=port)[0] == 200
        return False

    def alive(self, name: str) -> bool:
        with contextlib.suppress(OSError, ValueError):
            return alive(self.pid(name))
        return False

    def play(
        self,
        seated: Seated,
        fault: Callable[[], dict[str, Any]],
        *,
        rounds: int,
        give_up_s: float = 40.0,
        timeout: float = 90.0,
    ) -> tuple[Burst, dict[str, Any]]:
        """A terminal per table of `seated` plays `rounds` rounds through nginx as docs/api.md
        2.11 says; once a third are acknowledged, `fault` runs (its figures are returned)."""
        floor = Floor()
        run_id = f"topo-{uuid.uuid4().hex[:8]}"
        terminals = [
            Terminal(
                port=self.public_port,
                table=table,
                token=token,
                stake_cents=seated.stake_cents,
                rounds=rounds,
                run_id=run_id,
                floor=floor,
                give_up_s=give_up_s,
            )
            for table, token in seated.tables
        ]
        fault_after = len(terminals) * rounds // 3
        done, happened = burst(
            terminals, floor, fault_after=fault_after, fault=fault, timeout=timeout
        )
        assert not done.failures(), "\n".join(done.failures())
        return done, happened

    def books(self, seated: Seated, done: Burst) -> None:
        """Every round played stored once, the books exact, the journal verified."""
        books = check_books(self.database_url, seated.pool, done)
        assert books["rounds"] == sum(len(t.plans) for t in done.terminals)
        assert verify_journal(self.service)["ok"]


def refusals_of(done: Burst) -> Counter[str]:
    """Every attempt not answered 2xx, by status and error code (an exception's name when there
    was no HTTP answer; nginx's own pages have no code: their status alone)."""
    return Counter(
        f"{a.status} {a.error if a.status is None or a.error.isidentifier() else ''}".strip()
        for a in done.attempts
        if not (a.status or 0) < 300
    )


def report(name: str, figures: dict[str, Any]) -> None:
    print(f"\n{name}: {figures}")  # shown with `pytest -s`: the figures the docs quote
