"""What the floor did: the running totals the tables report to, their errors, and the summary.

What this module guarantees:

- **Money is integer cents**, summed as integers and printed with `divmod`; rates and times are
  the only floats.
- Every total is read from the service's own answers, under one lock shared by all the tables.
- A round begun and not known settled (the service went away during it, or its result was
  refused) is kept in `Tally.in_play` and listed in the summary as in doubt.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.progressive import ProgressiveAward
from simulator.floor import FloorPlan, FloorTable, eur

# Every kind of award a result can carry: a hand's progressive awards, best first, then envy.
AWARD_KINDS = (*(str(kind) for kind in ProgressiveAward if kind != ProgressiveAward.NONE), "envy")


# --- what the floor did --------------------------------------------------------------------------


@dataclass
class AwardCount:
    count: int = 0
    cents: int = 0


@dataclass(frozen=True, slots=True)
class Progress:
    """What the progress bar shows: rounds settled so far and the meters as last answered."""

    settled: int
    planned: int
    elapsed_s: float
    meters: tuple[tuple[int, int], ...]  # (pool, amount_cents), by pool


@dataclass(frozen=True, slots=True)
class TableError:
    """Why a table stopped: a refused request (with the service's body) or a simulator bug."""

    table: FloorTable
    round_id: str
    step: str  # "recovery" (voiding what an earlier run left open), "open" or "result"
    status: int | None
    body: object

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table.id,
            "round_id": self.round_id,
            "step": self.step,
            "status": self.status,
            "body": self.body,
        }

    def describe(self) -> str:
        status = f"HTTP {self.status}" if self.status is not None else "error"
        text = f"{self.table.name} (table {self.table.id}) stopped at the {self.step} of round "
        text += f"{self.round_id}: {status} {json.dumps(self.body)}"
        if self.status == 401:
            text += " (the floor file's tokens are revoked or from another database)"
        return text


@dataclass
class Tally:
    """The floor's running totals; every method takes the lock, as all the tables report here."""

    meters: dict[int, tuple[int, int]]  # pool -> (meter sequence, amount_cents)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rounds_opened: int = 0
    rounds_settled: int = 0
    settled_by_table: dict[int, int] = field(default_factory=dict)
    seats: int = 0
    wagers_cents: int = 0
    stakes: int = 0
    stakes_cents: int = 0
    awards: dict[str, AwardCount] = field(
        default_factory=lambda: {kind: AwardCount() for kind in AWARD_KINDS}
    )
    jackpots: list[dict[str, Any]] = field(default_factory=list)
    retries: int = 0
    # Rounds an earlier run left open at these tables (killed, or cut off mid-round), voided at
    # the start as a restarted terminal does: (table, round_id).
    left_open_voided: list[tuple[int, str]] = field(default_factory=list)
    errors: list[TableError] = field(default_factory=list)
    # Rounds begun and not known settled; those left at the end are in doubt (the service went
    # away, or a result was refused) and are listed for the operator to read back.
    in_play: dict[tuple[int, str], FloorTable] = field(default_factory=dict)
    service_gone: str | None = None

    def record_retry(self) -> None:
        with self.lock:
            self.retries += 1

    def record_left_open_voided(self, table: FloorTable, round_id: str) -> None:
        with self.lock:
            self.left_open_voided.append((table.id, round_id))

    def record_start(self, table: FloorTable, round_id: str) -> None:
        with self.lock:
            self.in_play[(table.id, round_id)] = table

    def record_open(self, opened: Mapping[str, Any]) -> None:
        progressive = opened.get("progressive") or {}
        with self.lock:
            self.rounds_opened += 1
            self.stakes += int(progressive.get("stakes", 0))
            self.stakes_cents += int(progressive.get("stakes", 0)) * int(
                progressive.get("stake_cents", 0)
            )
            self._see_meter(opened.get("meter"))

    def record_result(self, table: FloorTable, round_id: str, result: Mapping[str, Any]) -> None:
        seats = result["seats"]
        wagers = sum(int(box["stake_cents"]) for seat in seats for box in seat["boxes"].values())
        with self.lock:
            self.in_play.pop((table.id, round_id), None)
            self.rounds_settled += 1
            self.settled_by_table[table.id] = self.settled_by_table.get(table.id, 0) + 1
            self.seats += len(seats)
            self.wagers_cents += wagers
            for award in result.get("awards", []):
                tally = self.awards.setdefault(str(award["kind"]), AwardCount())
                tally.count += 1
                tally.cents += int(award["amount_cents"])
                if award["kind"] == "royal_flush":
                    self.jackpots.append(_jackpot(table, round_id, award))
            self._see_meter(result.get("meter"))

    def record_never_opened(self, table: FloorTable, round_id: str) -> None:
        # A refused open is not stored (docs/api.md 1.4), and an open that never reached the
        # service opened nothing: either way the round does not exist.
        with self.lock:
            self.in_play.pop((table.id, round_id), None)

    def record_error(self, error: TableError) -> None:
        with self.lock:
            self.errors.append(error)

    def record_service_gone(self, message: str) -> None:
        with self.lock:
            self.service_gone = self.service_gone or message

    def progress(self, planned: int, elapsed_s: float) -> Progress:
        with self.lock:
            meters = tuple((pool, amount) for pool, (_, amount) in sorted(self.meters.items()))
            return Progress(self.rounds_settled, planned, elapsed_s, meters)

    def _see_meter(self, meter: Mapping[str, Any] | None) -> None:
        # Answers from several tables arrive in any order: the highest sequence is the newest.
        if not meter:
            return
        pool, sequence = int(meter["pool"]), int(meter["sequence"])
        if sequence >= self.meters.get(pool, (-1, 0))[0]:
            self.meters[pool] = (sequence, int(meter["amount_cents"]))


def _jackpot(table: FloorTable, round_id: str, award: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "table": table.id,
        "table_name": table.name,
        "round_id": round_id,
        "seat": award["seat"],
        "amount_cents": award["amount_cents"],
        "status": award["status"],
    }


@dataclass(frozen=True)
class PoolMeter:
    pool: int
    stake_cents: int
    before_cents: int
    after_cents: int | None  # None when the service could not be asked


@dataclass(frozen=True)
class Summary:
    """What the floor did, from the service's own answers."""

    plan: FloorPlan
    run_id: str
    outcome: str  # completed, table_error, service_gone or interrupted
    message: str
    tally: Tally
    elapsed_s: float
    pools: tuple[PoolMeter, ...]

    @property
    def exit_status(self) -> int:
        """0 when every round was posted, 1 when a table stopped on an error, 130 on Ctrl-C."""
        return {"completed": 0, "interrupted": 130}.get(self.outcome, 1)

    @property
    def rounds_per_s(self) -> float:
        return self.tally.rounds_settled / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        tally = self.tally
        return {
            "outcome": self.outcome,
            "message": self.message,
            "base_url": self.plan.base_url,
            "run_id": self.run_id,
            "seed": self.plan.seed,
            "tables": [
                {
                    "id": table.id,
                    "name": table.name,
                    "pool": table.pool,
                    "rounds_planned": share,
                    "rounds_settled": tally.settled_by_table.get(table.id, 0),
                }
                for table, share in zip(self.plan.tables, self.plan.shares, strict=True)
            ],
            "rounds_planned": self.plan.rounds,
            "rounds_opened": tally.rounds_opened,
            "rounds_settled": tally.rounds_settled,
            "seats": tally.seats,
            "wagers_cents": tally.wagers_cents,
            "progressive_stakes": {"count": tally.stakes, "cents": tally.stakes_cents},
            "awards": {
                kind: {"count": award.count, "cents": award.cents}
                for kind, award in tally.awards.items()
            },
            "jackpots": list(tally.jackpots),
            "retries": tally.retries,
            "left_open_voided": [
                {"table": table_id, "round_id": round_id}
                for table_id, round_id in tally.left_open_voided
            ],
            "errors": [error.as_json() for error in tally.errors],
            "rounds_in_doubt": [
                {"table": table_id, "round_id": round_id} for table_id, round_id in tally.in_play
            ],
            "elapsed_s": round(self.elapsed_s, 3),
            "rounds_per_s": round(self.rounds_per_s, 2),
            "pools": [
                {
                    "pool": meter.pool,
                    "stake_cents": meter.stake_cents,
                    "meter_before_cents": meter.before_cents,
                    "meter_after_cents": meter.after_cents,
                }
                for meter in self.pools
            ],
        }

    def lines(self) -> list[str]:
        """The summary for people, one line each."""
        tally = self.tally
        names = ", ".join(table.name for table in self.plan.tables)
        lines = [
            f"Floor simulation against {self.plan.base_url}: {self.message}",
            f"  tables              {len(self.plan.tables)} ({names})",
            f"  rounds settled      {tally.rounds_settled:,} of {self.plan.rounds:,}"
            f" ({tally.rounds_opened:,} opened)",
            f"  seats               {tally.seats:,}",
            f"  wagers              {eur(tally.wagers_cents)} (Ante, Blind, Play, Trips)",
            f"  progressive stakes  {tally.stakes:,} ({eur(tally.stakes_cents)})",
            "  awards",
        ]
        for kind, award in tally.awards.items():
            lines.append(f"    {kind:<17} {award.count:>6,}  {eur(award.cents)}")
        for jackpot in tally.jackpots:
            lines.append(
                f"  jackpot             {jackpot['table_name']} round {jackpot['round_id']} "
                f"seat {jackpot['seat']}: {eur(jackpot['amount_cents'])} ({jackpot['status']})"
            )
        lines.append(f"  retries             {tally.retries:,}")
        if tally.left_open_voided:
            lines.append(
                f"  voided at start     {len(tally.left_open_voided):,} round(s) an earlier run "
                "left open (their stakes refunded)"
            )
        lines.append(f"  errors              {len(tally.errors):,}")
        lines.extend(f"    {error.describe()}" for error in tally.errors)
        for table_id, round_id in tally.in_play:
            lines.append(
                f"  in doubt            table {table_id} round {round_id}: read it with "
                f"GET /api/v1/tables/{table_id}/rounds/{round_id}"
            )
        lines.append(
            f"  elapsed             {self.elapsed_s:.1f} s ({self.rounds_per_s:.1f} rounds/s)"
        )
        for meter in self.pools:
            after = eur(meter.after_cents) if meter.after_cents is not None else "unknown"
            lines.append(f"  meter pool {meter.pool:<8} {eur(meter.before_cents)} -> {after}")
        return lines
