"""A real Celery worker for the tests that need one: `celery -A config worker` in a subprocess, as
deploy/systemd starts it, on the test database and the test run's own Redis queue.

Tests that use it take the `celery_worker` fixture, which needs `transactional_db`: the worker is
another process and sees only what is committed. `celery_worker()` starts a worker (with
`beat=True`, the scheduler inside it too) and waits until it is ready; every worker is stopped at
the end of the test. `Worker.kill()` is kill -9 of the process that runs the task (the pool's
child), as a crash or the OOM killer would do it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app

ROOT = Path(__file__).resolve().parent.parent
CELERY = Path(sys.executable).parent / "celery"
READY_WITHIN_S = 30.0


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def logged(self, text: str, *, within_s: float = 30) -> None:
        """Wait until the worker's log holds `text`. A task logs after what it did is committed
        (and a sweep after the task it sent may have finished), so a test that saw the database
        change can be ahead of the line on a busy machine: wait, do not race."""
        wait_for(lambda: text in self.output(), within_s=within_s, what=f"{text!r} in its log")

    def children(self) -> list[int]:
        """The pool's worker processes (the ones that run tasks)."""
        found = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in found.read_text().split()] if found.exists() else []

    def kill(self) -> None:
        """kill -9 of the processes that run tasks, then of the worker itself."""
        for pid in self.children():
            os.kill(pid, signal.SIGKILL)
        self.process.kill()
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # warm shutdown: finishes its task
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def _test_database_url() -> str:
    """DATABASE_URL with the test database's name (pytest-django's `test_...`)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def start_worker(log: Path, *, beat: bool = False, **env: str) -> Worker:
    name = f"test-{uuid.uuid4().hex[:8]}@%h"
    command = [str(CELERY), "-A", "config", "worker", "--loglevel=INFO", "--concurrency=1"]
    command += ["-n", name, "--without-gossip", "--without-mingle", "--without-heartbeat"]
    if beat:
        command += ["--beat", "--schedule", str(log.with_suffix(".schedule"))]
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": os.environ["REDIS_URL"],
        "TEST_RUN_ID": settings.RUN,
        **env,
    }
    handle = log.open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT
    )
    worker = Worker(process, log)
    deadline = time.monotonic() + READY_WITHIN_S
    while " ready." not in worker.output():
        if process.poll() is not None or time.monotonic() > deadline:
            worker.stop()
            raise RuntimeError(f"the Celery worker did not start:\n{worker.output()[-3000:]}")
        time.sleep(0.1)
    return worker


@pytest.fixture
def celery_worker(transactional_db, tmp_path) -> Iterator[Callable[..., Worker]]:
    # The run's queue emptied first: the tests before this one in this process, without a worker,
    # left their tasks in it, and a task for another test's row may find a row of this test's with
    # the same id (a stale `build_export(1)` once built this test's export 1 before the sweeper
    # the test waited for had sent it).
    app.control.purge()
    started: list[Worker] = []

    def start(*, beat: bool = False, **env: str) -> Worker:
        worker = start_worker(tmp_path / f"worker-{len(started)}.log", beat=beat, **env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_for(condition: Callable[[], object], *, within_s: float, what: str) -> None:
    """Return as soon as `condition()` holds; fail after `within_s`. That is a wait, not a
    bound the test claims: it costs nothing while things work, so it is set far past what a
    busy machine takes (a test that claims a time measures it and asserts on the figure)."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within_s} s: {what}")
        time.sleep(0.1)
