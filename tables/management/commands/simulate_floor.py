"""simulate_floor: a floor of Ultimate Texas Hold'em tables posting realistic rounds over HTTP.

``python manage.py simulate_floor --tables N --rounds M [--rate R] [--base-url URL]`` plays M
rounds in all, shared among the first N pool-linked tables of the demo floor file (``seed_demo
--json``; tokens are stored hashed, so that file is where they are read), one thread per table,
through the real API as terminals would. It shows a progress bar on stderr (a plain line every
5% or 10 s when stderr is not a terminal, e.g. a log file) and ends with a summary on stdout,
also after Ctrl-C. The logic is in :mod:`simulator`; this command only parses, reports
and prints. It never touches the database: it works against any server.

Exit status: 0 when every round was posted, 1 when a table stopped on an error or the service
never answered or went away, 2 for a usage error (a missing or short floor file), 130 on Ctrl-C
or SIGTERM (both stop the tables between rounds and print the summary).
"""

from __future__ import annotations

import json
import math
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from simulator.floor import FloorFileError, FloorPlan, eur, load_floor
from simulator.run import run_floor
from simulator.tally import Progress
from simulator.terminal import (
    PoolState,
    RequestRefused,
    ServiceGone,
    ServiceUnavailable,
    base_url_of,
    read_pools,
    wait_for_service,
)

BAR_WIDTH = 20
TTY_REDRAW_S = 0.2
LOG_EVERY_S = 10.0
LOG_EVERY_SHARE = 20  # a log line every 1/20 (5%) of the rounds


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


class _ProgressBar:
    """`[#####.....] 120/600 rounds  3.9/s  meter EUR 12,345.67` on stderr.

    On a terminal the line is redrawn in place; otherwise (a log file) a plain line is written
    every 5% of the rounds or every 10 s, so a log stays readable.
    """

    def __init__(self, stream: OutputWrapper) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._last_write = 0.0
        self._next_share = 0
        self._last_line = ""

    def update(self, progress: Progress) -> None:
        now = time.monotonic()
        if self._tty:
            if now - self._last_write >= TTY_REDRAW_S:
                self._redraw(_line(progress), now=now)
            return
        step = max(1, progress.planned // LOG_EVERY_SHARE)
        if progress.settled >= self._next_share or now - self._last_write >= LOG_EVERY_S:
            self._next_share = (progress.settled // step + 1) * step
            self._write(_line(progress), ending="\n", now=now)

    def finish(self, progress: Progress) -> None:
        """The final state, once; on a terminal the cursor then leaves the bar's line."""
        line, now = _line(progress), time.monotonic()
        if self._tty:
            self._redraw(line, now=now)
            self._write("", ending="\n", now=now)
        elif line != self._last_line:
            self._write(line, ending="\n", now=now)

    def _redraw(self, line: str, *, now: float) -> None:
        # Padded to the previous line's length, so a shorter line leaves nothing behind.
        if line != self._last_line:
            self._write("\r" + line.ljust(len(self._last_line)), ending="", now=now)
            self._last_line = line

    def _write(self, text: str, *, ending: str, now: float) -> None:
        # No style: on a terminal stderr is styled as an error, and progress is not one.
        self._stream.write(text, style_func=lambda message: message, ending=ending)
        self._stream.flush()
        self._last_write = now
        if not self._tty:
            self._last_line = text


def _line(progress: Progress) -> str:
    done = progress.settled * BAR_WIDTH // progress.planned if progress.planned else BAR_WIDTH
    rate = progress.settled / progress.elapsed_s if progress.elapsed_s > 0 else 0.0
    meters = "  ".join(
        (f"meter pool {pool} " if len(progress.meters) > 1 else "meter ") + eur(amount)
        for pool, amount in progress.meters
    )
    return (
        f"[{'#' * done}{'.' * (BAR_WIDTH - done)}] {progress.settled:,}/{progress.planned:,} "
        f"rounds  {rate:.1f}/s  {meters}  {progress.elapsed_s:.0f} s"
    )


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the floor as Ctrl-C does: `make run` ends its background simulator with it,
    and a killed run would otherwise leave a round open and print no summary."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set signal handlers (e.g. a test calling the command)
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Command(BaseCommand):
    help = (
        "Play M rounds in all on the first N Ultimate Texas Hold'em tables of the demo floor "
        "file, posted over HTTP as terminals would; print a summary."
    )
    # HTTP only: no database, so neither the system checks nor the migrations concern it.
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tables", type=_positive_int, required=True, help="tables to play")
        parser.add_argument(
            "--rounds", type=_positive_int, required=True, help="rounds in all, shared out"
        )
        parser.add_argument(
            "--rate", type=_seconds, default=0.0, help="rounds a second in all; 0: no limit"
        )
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--floor",
            type=Path,
            default=Path("var/demo-floor.json"),
            help="the output of `manage.py seed_demo --json` (tables and their tokens)",
        )
        parser.add_argument(
            "--wait", type=_seconds, default=10.0, help="seconds to wait for /healthz at start"
        )
        parser.add_argument("--seed", type=int, help="a reproducible simulation (not fair play)")
        parser.add_argument(
            "--force-royal",
            action="store_true",
            help="deal the jackpot royal in the first table's last round (a demonstration)",
        )
        parser.add_argument(
            "--give-up",
            type=_seconds,
            default=30.0,
            help="seconds of failed resends after which the server is taken as gone",
        )
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        plan = self._plan(options)
        with _terminate_as_interrupt():
            self._simulate(plan, options)

    def _simulate(self, plan: FloorPlan, options: dict[str, Any]) -> None:
        try:
            pools = self._prepare(plan, options["wait"], options["floor"])
        except KeyboardInterrupt:
            raise CommandError("interrupted before the first round", returncode=130) from None
        self.stderr.write(
            f"simulate_floor: {plan.rounds:,} rounds on {len(plan.tables)} tables at "
            f"{f'{plan.rate:g}/s' if plan.rate else 'full speed'} against {plan.base_url}",
            style_func=lambda message: message,
        )
        bar = _ProgressBar(self.stderr)
        summary = run_floor(plan, pools, on_progress=bar.update)
        bar.finish(summary.tally.progress(plan.rounds, summary.elapsed_s))
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_json()))
        else:
            for line in summary.lines():
                self.stdout.write(line)
        if summary.exit_status:
            raise CommandError(summary.message, returncode=summary.exit_status)

    def _plan(self, options: dict[str, Any]) -> FloorPlan:
        try:
            base_url = base_url_of(options["base_url"])
        except ValueError as error:
            raise CommandError(f"--base-url: {error}", returncode=2) from None
        try:
            tables = load_floor(options["floor"], options["tables"])
        except FloorFileError as error:
            raise CommandError(str(error), returncode=2) from None
        return FloorPlan(
            base_url=base_url,
            tables=tables,
            rounds=options["rounds"],
            rate=options["rate"],
            seed=options["seed"],
            force_royal=options["force_royal"],
            give_up_s=options["give_up"],
        )

    def _prepare(self, plan: FloorPlan, wait_s: float, floor: Path) -> dict[int, PoolState]:
        """Wait for the service, then read each pool's stake and meter."""
        try:
            wait_for_service(plan.base_url, wait_s)
            return read_pools(
                plan.base_url, [table.pool for table in plan.tables], give_up_s=plan.give_up_s
            )
        except (ServiceUnavailable, ServiceGone) as error:
            raise CommandError(str(error), returncode=1) from None
        except RequestRefused as refused:
            raise CommandError(
                f"{refused}: {floor} does not match the server's database; make a new one with "
                f"`python manage.py seed_demo --tables {len(plan.tables)} --json > {floor}`",
                returncode=2,
            ) from None
