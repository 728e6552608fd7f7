"""The topology of `make cluster HA=1`, started by that very command for the failover drills.

What this module guarantees:

- **The operator's command.** `HaTopology` is `Topology` (tests/cluster/topology.py) with the
  variables deploy/cluster/ha-up.sh documents, on free ports: etcd, two Patroni nodes, HAProxy.
  No private PostgreSQL: the pair is the cluster's own (its data under the cluster's directory).
- **The pair seen from outside.** `Pair` reads Patroni's REST API (`/cluster`: who leads, who is
  the synchronous standby, their timelines) and acts as a fault or an operator would: SIGKILL to
  a node's postmaster or to its agent, a switchover through the REST API. SQL as PostgreSQL's
  superuser, straight to a node, reads what each node holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psycopg

from tests.cluster.topology import DATABASE, Topology
from tests.faults.harness import alive, children, wait_dead
from tests.jackpot.webhook_receiver import Receiver
from tests.ports import free_port

NODES = ("pg1", "pg2")


class Pair:
    """The two Patroni nodes of `make cluster HA=1`."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory  # the cluster's directory (its ha/ holds the pair)
        self.pg_ports = {name: free_port() for name in NODES}
        self.api_ports = {name: free_port() for name in NODES}

    def secret(self, name: str) -> str:
        for line in (self.dir / "secrets.env").read_text().splitlines():
            key, _, value = line.partition("=")
            if key == name:
                return value
        raise KeyError(name)

    def url(self, node: str, database: str = DATABASE) -> str:
        """PostgreSQL's superuser, straight to `node`."""
        password = self.secret("PG_SUPERUSER_PASSWORD")
        return f"postgres://postgres:{password}@127.0.0.1:{self.pg_ports[node]}/{database}"

    def rows(self, node: str, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url(node), autocommit=True, connect_timeout=3) as connection:
            return connection.execute(sql, params or []).fetchall()

    def members(self) -> dict[str, dict[str, Any]]:
        """Patroni's view of the cluster, asked of whichever agent answers; {} when none does."""
        for name in NODES:
            with contextlib.suppress(OSError, ValueError):
                url = f"http://127.0.0.1:{self.api_ports[name]}/cluster"
                with urllib.request.urlopen(url, timeout=1) as answer:
                    return {m["name"]: m for m in json.load(answer)["members"]}
        return {}

    def leader(self) -> str | None:
        found = [n for n, m in self.members().items() if m["role"] == "leader"]
        return found[0] if found else None

    def other(self, node: str) -> str:
        return NODES[1 - NODES.index(node)]

    def synchronous(self) -> bool:
        """A leader and its synchronous standby, both running, on one timeline, no lag."""
        members = self.members()
        roles = sorted((m["role"], m["state"]) for m in members.values())
        timelines = {m.get("timeline") for m in members.values()}
        lags = {m.get("lag", 0) for m in members.values() if m["role"] != "leader"}
        return (
            roles == [("leader", "running"), ("sync_standby", "running")]
            and len(timelines) == 1
            and lags == {0}
        )

    def wait(self, condition: Any, what: str, within_s: float = 120.0) -> float:
        started = time.monotonic()
        while not condition():
            if time.monotonic() - started > within_s:
                raise AssertionError(f"not within {within_s} s: {what}; members {self.members()}")
            time.sleep(0.1)
        return time.monotonic() - started

    def postmaster(self, node: str) -> int:
        pidfile = self.dir / "ha" / node / "data" / "postmaster.pid"
        return int(pidfile.read_text().split()[0])

    def kill_postmaster(self, node: str) -> int:
        """SIGKILL to `node`'s postmaster (its backends leave when they see it gone)."""
        postmaster = self.postmaster(node)
        backends = children(postmaster)
        os.kill(postmaster, signal.SIGKILL)
        wait_dead([postmaster, *backends])
        return postmaster

    def agent(self, node: str) -> int:
        return int((self.dir / "ha" / f"{node}.pid").read_text())

    def kill_agent(self, node: str) -> int:
        """SIGKILL to `node`'s Patroni agent alone: its PostgreSQL keeps running, as it was."""
        agent = self.agent(node)
        os.kill(agent, signal.SIGKILL)
        wait_dead([agent])
        assert alive(self.postmaster(node)), "the postmaster went with its agent"
        return agent

    def switchover(self, leader: str, candidate: str) -> None:
        """A planned switchover, as `patronictl switchover` asks for it (Patroni's REST API)."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.api_ports[leader]}/switchover",
            data=json.dumps({"leader": leader, "candidate": candidate}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 200, answer.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"switchover refused: {error.code} {error.read()!r}") from error


class HaTopology(Topology):
    """`make cluster HA=1` on free ports of its own."""

    def __init__(self, base: Path, receiver: Receiver) -> None:
        super().__init__(base, None, receiver)
        self.pair = Pair(self.dir)
        self.etcd_ports = (free_port(), free_port())
        self.primary_port = free_port()  # HAProxy: the primary
        self.replica_port = free_port()  # HAProxy: the standby

    def environment(self) -> dict[str, str]:
        return {
            **super().environment(),
            # 8 terminals: a worker each while a failover makes every request wait its limits
            "TERMINAL_WORKERS": "8",
            "HA": "1",
            "HA_ETCD_PORT": str(self.etcd_ports[0]),
            "HA_ETCD_PEER_PORT": str(self.etcd_ports[1]),
            "HA_PG_PORTS": " ".join(str(self.pair.pg_ports[name]) for name in NODES),
            "HA_API_PORTS": " ".join(str(self.pair.api_ports[name]) for name in NODES),
            "HA_PRIMARY_PORT": str(self.primary_port),
            "HA_REPLICA_PORT": str(self.replica_port),
        }

    @property
    def database_url(self) -> str:
        """The drill database as PostgreSQL's superuser sees it through HAProxy: the primary."""
        password = self.pair.secret("PG_SUPERUSER_PASSWORD")
        return f"postgres://postgres:{password}@127.0.0.1:{self.primary_port}/{DATABASE}"
