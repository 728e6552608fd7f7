"""Deadlines on a connection's statement: past its deadline, the statement is cancelled.

`cancelled_after(connection, limit_ms)` bounds a COMMIT's wait for the synchronous standby
(`config.database.base`). Invariants:
- the block's statement is cancelled (psycopg's `cancel()`) once it has run `limit_ms`, at most
  a scheduler's tick later; 0 means never;
- a deadline is withdrawn when its block ends, under the lock the cancel is sent under: a late
  cancel never reaches whatever the connection runs next;
- one watchdog thread per process keeps every deadline, started at the first one (again in a
  forked child, which inherits no thread). A deadline costs a lock and a heap push: a thread
  started per commit (a `threading.Timer`) cost 0.2 to 0.3 ms, spent after the pool row's
  UPDATE and before its COMMIT, so within the row's hold.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg


@dataclass(eq=False, slots=True)
class _Deadline:
    at: float  # time.monotonic()
    connection: psycopg.Connection[Any]
    pending: bool = True


class _Watchdog:
    """The process's deadlines, earliest first, and the thread that cancels the ones due.

    A withdrawn deadline stays in the heap, no longer pending, until it is due: removing it
    would cost a search at every commit, and the heap holds at most a limit's worth of them."""

    def __init__(self) -> None:
        self._due = threading.Condition()
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._order = itertools.count()  # ties: never compare two deadlines
        self._thread: threading.Thread | None = None

    def add(self, connection: psycopg.Connection[Any], seconds: float) -> _Deadline:
        deadline = _Deadline(time.monotonic() + seconds, connection)
        with self._due:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="database-deadlines", daemon=True
                )
                self._thread.start()
            earliest = not self._heap or deadline.at < self._heap[0][0]
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if earliest:  # the watchdog sleeps until a later deadline, or without one
                self._due.notify()
        return deadline

    def withdraw(self, deadline: _Deadline) -> None:
        with self._due:  # waits for a cancel being sent to this connection, if one is
            deadline.pending = False

    def _run(self) -> None:
        with self._due:
            while True:
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    _at, _order, due = heapq.heappop(self._heap)
                    if due.pending:
                        due.pending = False
                        # A connection whose server went away cannot be cancelled (the cancel
                        # opens a connection of its own), and the watchdog lives on for the rest.
                        with contextlib.suppress(psycopg.Error, OSError):
                            due.connection.cancel()
                self._due.wait(self._heap[0][0] - now if self._heap else None)


_watchdog = _Watchdog()


def _forked() -> None:
    # The child has no watchdog thread, and the parent's lock may have been held at the fork.
    global _watchdog
    _watchdog = _Watchdog()


os.register_at_fork(after_in_child=_forked)


@contextmanager
def cancelled_after(connection: psycopg.Connection[Any], limit_ms: int) -> Iterator[None]:
    """The block's statement (a COMMIT) is cancelled if it runs past `limit_ms` (0: never)."""
    if limit_ms <= 0:
        yield
        return
    watchdog = _watchdog
    deadline = watchdog.add(connection, limit_ms / 1000)
    try:
        yield
    finally:
        watchdog.withdraw(deadline)
