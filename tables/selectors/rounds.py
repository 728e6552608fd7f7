"""Reads of a table's rounds: the list a terminal recovers from, and the open and stale rounds of a
pool as its report shows them.

A round is stale once it has been open for `settings.ROUND_STALE_AFTER_SECONDS` (15 minutes by
default) by the service's clock: a UTH hand takes minutes, so its result is not coming (the
terminal crashed, or lost the round's id) and its stakes sit in the meter until it is voided, by
the terminal or by a supervisor. Ages are the service's: a terminal's clock is never read.
The bets shown are the round's `RoundSeat` rows, as locked at open, never its stored answer.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Sum

from jackpot.bodies.pools import OpenRounds, StaleRound
from jackpot.models import (
    Pool,
)
from rules.stud import StudBets
from rules.uth import UthBets
from tables.bodies.render import seat_bets_body
from tables.bodies.round_reads import RoundListQuery, RoundPage, RoundSummary
from tables.models import Game, Round, RoundSeat, RoundState, Table

#: The stale rounds a pool report names, oldest first.
OLDEST_STALE = 10


def stale_after() -> timedelta:
    return timedelta(seconds=settings.ROUND_STALE_AFTER_SECONDS)


def _age_seconds(opened_at: datetime, now: datetime) -> int:
    return max(0, int((now - opened_at).total_seconds()))


def _seats(round_pks: list[int], game: Game) -> dict[int, list[tuple[int, UthBets | StudBets]]]:
    """Each round's seats and their bets, by round, in one query."""
    found: dict[int, list[tuple[int, UthBets | StudBets]]] = {pk: [] for pk in round_pks}
    rows = (
        RoundSeat.objects.filter(round_id__in=round_pks)
        .order_by("round_id", "seat")
        .values_list(
            "round_id",
            "seat",
            "ante_cents",
            "blind_cents",
            "trips_cents",
            "bonus_cents",
            "progressive_cents",
        )
    )
    for round_pk, seat, ante, blind, trips, bonus, progressive in rows:
        bets: UthBets | StudBets = (
            UthBets(ante, blind, trips, progressive) if game == Game.UTH else StudBets(ante, bonus)
        )
        found[round_pk].append((seat, bets))
    return found


def round_page(*, table: Table, query: RoundListQuery, now: datetime) -> RoundPage:
    """The table's rounds, newest first, `query.state` only if given."""
    rounds = Round.objects.filter(table=table)
    if query.state is not None:
        rounds = rounds.filter(state=query.state)
    page = list(
        rounds.order_by("-opened_at", "-pk").only("round_id", "state", "opened_at", "closed_at")[
            query.offset : query.offset + query.limit
        ]
    )
    seats = _seats([found.pk for found in page], Game(table.game))
    limit = stale_after()
    results = []
    for found in page:
        bets = seats[found.pk]
        staked = [b.progressive_cents for _, b in bets if isinstance(b, UthBets)]
        results.append(
            RoundSummary.model_construct(
                round_id=found.round_id,
                state=found.state,
                opened_at=found.opened_at,
                closed_at=found.closed_at,
                age_seconds=_age_seconds(found.opened_at, now),
                stale=found.state == RoundState.OPEN and now - found.opened_at >= limit,
                seats=[seat_bets_body(seat, seat_bets) for seat, seat_bets in bets],
                progressive_stakes=sum(1 for cents in staked if cents),
                progressive_cents=sum(staked),
            )
        )
    return RoundPage.model_construct(
        table=table.pk,
        stale_after_seconds=settings.ROUND_STALE_AFTER_SECONDS,
        count=rounds.count(),
        limit=query.limit,
        offset=query.offset,
        results=results,
    )


def pool_open_rounds(pool: Pool, *, now: datetime) -> OpenRounds:
    """The pool's rounds still open (their stakes are in its meter), and the oldest stale ones."""
    open_rounds = Round.objects.filter(pool=pool, state=RoundState.OPEN)
    stale = open_rounds.filter(opened_at__lte=now - stale_after())
    oldest = (
        stale.select_related("table")
        .annotate(progressive=Sum("seats__progressive_cents"))
        .order_by("opened_at", "pk")[:OLDEST_STALE]
    )
    return OpenRounds.model_construct(
        count=open_rounds.count(),
        stale_after_seconds=settings.ROUND_STALE_AFTER_SECONDS,
        stale_count=stale.count(),
        oldest_stale=[
            StaleRound.model_construct(
                table=found.table_id,
                table_name=found.table.name,
                round_id=found.round_id,
                opened_at=found.opened_at,
                age_seconds=_age_seconds(found.opened_at, now),
                progressive_cents=int(found.progressive or 0),
            )
            for found in oldest
        ],
    )
