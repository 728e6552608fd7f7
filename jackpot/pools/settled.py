"""A pool whose awards are settled: each paid or void. What a stop and a replacement wait for,
beside a pool at rest (`jackpot.pools.at_rest`): a pool that pays no more must owe no award."""

from __future__ import annotations

from core.errors import Conflict
from jackpot.models import AwardStatus, Pool

#: The awards a stop or a replacement waits for: not yet paid, not void.
UNPAID = (AwardStatus.PENDING, AwardStatus.VERIFIED, AwardStatus.APPROVED)


def refuse_unpaid_awards(pool: Pool, *, doing: str) -> None:
    """409 `pool_awards_unpaid` while an award of the pool is neither paid nor void: it is
    `doing` (stopped, replaced) only once each is settled."""
    unpaid = list(
        pool.awards.filter(status__in=UNPAID).order_by("number").values_list("pk", "status")
    )
    if unpaid:
        listed = ", ".join(f"award {pk} ({status})" for pk, status in unpaid[:10])
        raise Conflict(
            "pool_awards_unpaid",
            f"pool {pool.pk} is {doing} only once each of its awards is paid or void; unpaid "
            f"now: {listed}. Settle them (approve and pay, or void), then approve again",
            param="change",
        )
