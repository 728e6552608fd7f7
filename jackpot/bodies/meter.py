"""The meter as terminals and signs read it, and what a jackpot sign shows (built by
`jackpot.money.meter` and `jackpot.sign.display`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.wire import Body, Instant
from jackpot.bodies.common import Cents, Currency, Id
from jackpot.models import AwardKind, PoolStatus


class Meter(Body):
    """The committed meter in whole cents, its version (`sequence`) and when it last moved."""

    pool: Id
    amount_cents: Cents
    currency: Currency
    sequence: Annotated[int, Field(ge=0)]
    as_of: Instant | None
    status: PoolStatus = Field(
        default=PoolStatus.ACTIVE,
        description="active; suspended (a technical fault: no progressive stake, nothing "
        "payable, the sign says so instead of the amount); stopped (for good: its meter moved out)",
    )


class Hit(Body):
    """An award as a sign lists it."""

    table: str
    kind: AwardKind
    amount_cents: Cents
    at: Instant


class SignAwards(Body):
    """The awards part of a sign (`jackpot.sign.display` caches it apart from the meter)."""

    last_hit: Hit | None
    recent_hits: list[Hit] = Field(max_length=5, description="the last five hits, newest first")
    jackpot_pending: bool
    pending_jackpot: Hit | None = Field(
        description="the newest jackpot waiting for its checks, if any"
    )


class DisplayMeter(SignAwards, Meter):  # the meter's fields first (pydantic: the last base's)
    """What a jackpot sign shows: the meter, the last hits and a jackpot awaiting its checks."""
