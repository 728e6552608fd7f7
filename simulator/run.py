"""The run: one thread per table playing its share of the rounds, paced, until done or stopped.

What this module guarantees:

- **Unique round ids.** `sim-<8 hex of a uuid4>-<n>`, new for each run, so runs against the same
  database never collide, and within the 64 characters the API accepts.
- **Clean stops.** A table stops between rounds, never between an open and its result while the
  service answers, so an interrupted run leaves no round open; a round whose state is in doubt
  (the service went away during it, or its result was refused) is listed in the summary.
- **Clean starts.** A table begins as a restarted terminal does (docs/api.md 2.11): it lists its
  table's open rounds and voids them, so a round an earlier run left open (the run was killed)
  does not stop it on 409 `round_in_progress`. The voids are in the summary.
- **Reproducible with a seed.** Each table has its own generator (`random.Random` seeded per
  table with `--seed`, else `random.SystemRandom`), so the same seed gives the same bets, cards
  and decisions at each table whatever the timing.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence

from simulator.deals import plan_round
from simulator.floor import FloorPlan, FloorTable
from simulator.tally import PoolMeter, Progress, Summary, TableError, Tally
from simulator.terminal import (
    MAX_RETRY_DELAY_S,
    REQUEST_TIMEOUT_S,
    Halted,
    PoolState,
    RequestRefused,
    ServiceGone,
    TerminalClient,
    read_pools,
)

PROGRESS_INTERVAL_S = 0.2
LEFT_OPEN_REASON = "simulator restarted: round left open by an earlier run"


# --- pacing --------------------------------------------------------------------------------------


class Pacer:
    """A schedule of round starts shared by every table: at most `rate` rounds a second in all.

    Each caller takes the next free slot under a lock, then sleeps on the stop event until it
    comes (no busy-wait; a stop wakes it at once). A floor that falls behind does not burst to
    catch up: a slot is never earlier than the moment it is taken. A rate of 0 means no pacing.
    """

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = 1.0 / rate if rate > 0 else 0.0
        self._clock = clock
        self._lock = threading.Lock()
        self._next_slot: float | None = None

    def wait_turn(self, stop: threading.Event) -> bool:
        """Wait for this caller's slot; False if the floor was stopped meanwhile."""
        if not self._interval:
            return not stop.is_set()
        with self._lock:
            now = self._clock()
            slot = now if self._next_slot is None else max(now, self._next_slot)
            self._next_slot = slot + self._interval
        if slot > now:
            stop.wait(slot - now)
        return not stop.is_set()


# --- the run -------------------------------------------------------------------------------------


class _TablePlayer:
    """One table's terminal: plays its share of the rounds one after the other, as a table does."""

    def __init__(
        self,
        table: FloorTable,
        rounds: int,
        *,
        plan: FloorPlan,
        run_id: str,
        rng: random.Random,
        stake_cents: int,
        royal_round: int | None,
        pacer: Pacer,
        stop: threading.Event,
        tally: Tally,
    ) -> None:
        self.table, self.rounds, self.run_id, self.rng = table, rounds, run_id, rng
        self.stake_cents, self.royal_round = stake_cents, royal_round
        self.pacer, self.stop, self.tally = pacer, stop, tally
        self.client = TerminalClient(
            plan.base_url,
            table.token,
            stop=stop,
            give_up_s=plan.give_up_s,
            on_retry=tally.record_retry,
        )

    def run(self) -> None:
        round_id, step = "", "open"
        try:
            step = "recovery"
            for round_id in self._left_open():
                self.client.post(self._path(f"/{round_id}/void"), {"reason": LEFT_OPEN_REASON})
                self.tally.record_left_open_voided(self.table, round_id)
            for number in range(1, self.rounds + 1):
                if not self.pacer.wait_turn(self.stop):
                    return
                round_id = f"{self.run_id}-{number}"
                step = "open"
                plan = plan_round(
                    self.rng,
                    round_id=round_id,
                    stake_cents=self.stake_cents,
                    force_royal=number == self.royal_round,
                )
                self.tally.record_start(self.table, round_id)
                self.tally.record_open(self.client.post(self._path(""), plan.open_body()))
                step = "result"
                result = self.client.post(self._path(f"/{round_id}/result"), plan.result_body())
                self.tally.record_result(self.table, round_id, result)
        except RequestRefused as refused:
            if step == "open":
                self.tally.record_never_opened(self.table, round_id)
            self.tally.record_error(
                TableError(self.table, round_id, step, refused.status, refused.body)
            )
        except Halted as halted:
            if step == "open" and not halted.maybe_delivered:
                self.tally.record_never_opened(self.table, round_id)
            if isinstance(halted, ServiceGone):
                self.tally.record_service_gone(str(halted))
                self.stop.set()  # the service is gone for every table, not just this one
        except Exception as error:  # a bug of the simulator: report it in the summary, stop here
            self.tally.record_error(
                TableError(self.table, round_id, step, None, f"{type(error).__name__}: {error}")
            )
        finally:
            self.client.close()

    def _path(self, rest: str) -> str:
        return f"/api/v1/tables/{self.table.id}/rounds{rest}"

    def _left_open(self) -> list[str]:
        """The round ids open at this table (at most one: the service opens one at a time)."""
        page = self.client.get(self._path("?state=open&limit=200"))
        return [str(found["round_id"]) for found in page["results"]]


def _table_rng(seed: int | None, index: int) -> random.Random:
    # One generator per table, so a seeded run deals the same cards whatever the threads' timing.
    return random.SystemRandom() if seed is None else random.Random(f"{seed}:{index}")


def run_floor(
    plan: FloorPlan,
    pools: Mapping[int, PoolState],
    *,
    on_progress: Callable[[Progress], None] = lambda progress: None,
) -> Summary:
    """Play the floor: one thread per table, `on_progress` from this thread every 0.2 s.

    Ctrl-C (a KeyboardInterrupt here, or raised by `on_progress`) stops the tables between
    rounds; the summary then says what was done.
    """
    run_id = f"sim-{uuid.uuid4().hex[:8]}"
    stop = threading.Event()
    tally = Tally(meters={pool: (-1, state.meter_cents) for pool, state in pools.items()})
    pacer = Pacer(plan.rate)
    players = [
        _TablePlayer(
            table,
            share,
            plan=plan,
            run_id=run_id,
            rng=_table_rng(plan.seed, index),
            stake_cents=pools[table.pool].stake_cents,
            # The first table's last round, so the meter has grown before the demonstration hit.
            royal_round=share if plan.force_royal and index == 0 else None,
            pacer=pacer,
            stop=stop,
            tally=tally,
        )
        for index, (table, share) in enumerate(zip(plan.tables, plan.shares, strict=True))
    ]
    threads = [
        threading.Thread(target=player.run, name=f"table-{player.table.id}", daemon=True)
        for player in players
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    interrupted = _watch(threads, lambda: on_progress(tally.progress(plan.rounds, _since(started))))
    if interrupted:
        stop.set()
        _join(threads)
    elapsed = _since(started)
    on_progress(tally.progress(plan.rounds, elapsed))
    outcome, message = _outcome(tally, interrupted)
    meters = _meters_after(plan, pools, readable=tally.service_gone is None)
    return Summary(plan, run_id, outcome, message, tally, elapsed, meters)


def _since(started: float) -> float:
    return time.monotonic() - started


def _watch(threads: Sequence[threading.Thread], report: Callable[[], None]) -> bool:
    """Wait for the tables, reporting progress; True if interrupted by Ctrl-C."""
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(PROGRESS_INTERVAL_S)
                report()
    except KeyboardInterrupt:
        return True
    return False


def _join(threads: Sequence[threading.Thread]) -> None:
    """Let each table finish the round in play; a second Ctrl-C abandons them (daemon threads)."""
    try:
        for thread in threads:
            thread.join(REQUEST_TIMEOUT_S + MAX_RETRY_DELAY_S)
    except KeyboardInterrupt:
        pass


def _outcome(tally: Tally, interrupted: bool) -> tuple[str, str]:
    with tally.lock:
        if tally.service_gone:
            return "service_gone", f"stopped: the service is gone ({tally.service_gone})"
        if interrupted:
            return "interrupted", "interrupted: the tables stopped between rounds"
        if tally.errors:
            return "table_error", f"{len(tally.errors)} table(s) stopped on an error"
        return "completed", "completed"


def _meters_after(
    plan: FloorPlan, pools: Mapping[int, PoolState], *, readable: bool
) -> tuple[PoolMeter, ...]:
    after: dict[int, int | None] = dict.fromkeys(pools)
    if readable:
        # A short give-up: the run is over, and the summary must not wait long for a meter.
        with contextlib.suppress(RequestRefused, ServiceGone):
            after = {
                pool: state.meter_cents
                for pool, state in read_pools(
                    plan.base_url, list(pools), give_up_s=min(plan.give_up_s, 5.0)
                ).items()
            }
    return tuple(
        PoolMeter(pool, state.stake_cents, state.meter_cents, after[pool])
        for pool, state in sorted(pools.items())
    )
