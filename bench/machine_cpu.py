"""Where a machine's CPU goes, by kind of process, read from Linux's /proc: what a bench's load
cost each part of the stack, the load generator included, since they all share the same cores.

`read()` takes every process's CPU (user and system time) and the machine's busy and idle time;
`spent(before, after)` gives what each kind spent in between, summed over the processes alive at
the second reading (one that exited in between is left out: the stack's processes live through a
bench's level). A process's kind comes from its command line (`KINDS`, first match); the bench's
own process is the load generator. What no process accounts for (interrupts, the kernel's own
threads) is the machine's busy time less the processes' sum.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")

#: (kind, a word its command line holds), the first match wins: pgbouncer's names the user it
#: runs as (`-u postgres`), so it comes before PostgreSQL.
KINDS = (
    ("gunicorn (the service)", "gunicorn"),
    ("celery (worker, beat)", "celery"),
    ("pgbouncer", "pgbouncer"),
    ("PostgreSQL", "postgres"),
    ("nginx", "nginx"),
    ("Redis", "redis-server"),
    ("Patroni, HAProxy", "patroni"),
    ("Patroni, HAProxy", "haproxy"),
)
LOAD = "the bench's terminals (load generator)"
OTHER = "other processes"


@dataclass(frozen=True)
class Reading:
    processes: dict[int, tuple[str, float]]  # pid -> (kind, CPU seconds so far)
    busy_s: float
    idle_s: float


def _kind(pid: int) -> str:
    if pid == os.getpid():
        return LOAD
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return OTHER
    return next((kind for kind, word in KINDS if word in command), OTHER)


def cpu_s(pid: int) -> float | None:
    """The CPU seconds (user and system) process `pid` has used so far; None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # After the command's name, which may hold spaces and closes with the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def read() -> Reading:
    processes = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            pid = int(entry.name)
            cpu = cpu_s(pid)
            if cpu is not None:
                processes[pid] = (_kind(pid), cpu)
    # /proc/stat's first line: user nice system idle iowait irq softirq steal ...
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = ticks[3] + ticks[4]
    busy = sum(ticks[:8]) - idle
    return Reading(processes, busy / _TICK, idle / _TICK)


def spent(before: Reading, after: Reading) -> tuple[dict[str, float], float]:
    """CPU seconds each kind spent between the readings (the unaccounted as `OTHER` too), and
    the share of the machine's time that was busy."""
    by_kind: dict[str, float] = {}
    for pid, (kind, cpu) in after.processes.items():
        earlier = before.processes.get(pid)
        by_kind[kind] = by_kind.get(kind, 0.0) + cpu - (earlier[1] if earlier else 0.0)
    busy = after.busy_s - before.busy_s
    by_kind[OTHER] = by_kind.get(OTHER, 0.0) + max(0.0, busy - sum(by_kind.values()))
    elapsed = busy + after.idle_s - before.idle_s
    return by_kind, busy / elapsed if elapsed else 0.0
