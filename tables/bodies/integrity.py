"""The integrity monitoring's reads: the integrity flags listed, and a pool's void watch (its voids
by table and by shift, as `tables.selectors.voids` reads them).

Invariant: the void watch's expected figures are shown rounded for reading; the flags carry the
exact ones.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from core.wire import DIGITS, Body, Instant, Query
from jackpot.bodies.common import Cents, Offset
from jackpot.bodies.pools import IntegrityFlagBody, VoidSignal
from jackpot.models import AwardKind

# --- integrity flags ----------------------------------------------------------------------------


class IntegrityFlagQuery(Query):
    pool: Annotated[int | None, Field(ge=1, le=2**62), DIGITS] = None
    table: Annotated[int | None, Field(ge=1, le=2**62), DIGITS] = None
    kind: AwardKind | VoidSignal | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="1 to 200 (default 50)"), DIGITS] = 50
    offset: Offset = 0


class IntegrityFlagPage(Body):
    count: Annotated[int, Field(ge=0)]
    limit: Annotated[int, Field(ge=1, le=200)]
    offset: Annotated[int, Field(ge=0)]
    results: list[IntegrityFlagBody]


# --- the void watch (tables.selectors.voids)
# --------------------------------------------------------------


class VoidShift(Body):
    """A shift of the window: the `index`-th (from 0, at midnight) of the club day `day`, from
    `start` to `end` (the current shift ends in the future); the pool's decided rounds opened in
    it and their voids."""

    day: date
    index: Annotated[int, Field(ge=0, le=23)]
    start: Instant
    end: Instant
    rounds: Annotated[int, Field(ge=0)]
    voids: Annotated[int, Field(ge=0)]


class VoidCell(Body):
    """A table's figures in one shift (or over the window): its decided rounds, their voids, the
    stakes those voids refunded (count and cents), and the voids expected at the shift's rate
    over all of the pool's tables (n x V / N, summed over the shifts for the window; 2 decimals,
    for reading: the flags carry the exact figure). `flag`: the latest integrity flag stored for
    this table and shift (or window), null if none."""

    rounds: Annotated[int, Field(ge=0)]
    voids: Annotated[int, Field(ge=0)]
    refunded_stakes: Annotated[int, Field(ge=0)]
    refunded_cents: Annotated[Cents, Field(ge=0)]
    expected: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]{2}$")]
    flag: Annotated[int | None, Field(ge=1)]


class VoidTable(Body):
    """A table of the pool with decided rounds in the window: its figures over the window, and in
    each shift (`shifts`, in the order of the watch's `shifts`: null where it had no round)."""

    table: Annotated[int, Field(ge=1)]
    table_name: str
    window: VoidCell
    shifts: list[VoidCell | None]


class VoidWatch(Body):
    """A pool's voids by table and by shift over the void watch's window (the last
    `INTEGRITY_VOID_SHIFTS` shifts of `shift_hours`, the current one included, in `time_zone`),
    as the integrity check reads them, and the pool's latest void flags."""

    pool: Annotated[int, Field(ge=1)]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    time_zone: str
    shift_hours: Annotated[int, Field(ge=1, le=24)]
    min_rounds: Annotated[int, Field(ge=1, description="fewer decided rounds: not tested")]
    window_from: Instant
    window_to: Instant
    shifts: list[VoidShift]
    tables: list[VoidTable]
    flags: list[IntegrityFlagBody]
