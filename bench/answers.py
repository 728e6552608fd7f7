"""What building a round's answers costs, in process: no HTTP, no database.

Run from the repository root: ``.venv/bin/python bench/answers.py [--repeat 7] [--number 2000]``.

Builds, from fixed values, the answer to an open (7 seats, each with the progressive), to a
result (7 UTH seats settled by the rules engine beforehand, two awards, the meter) and to a void,
exactly as `tables.rounds.answers` does on the round path, and prints the best of `--repeat`
runs of `--number` builds of each, in microseconds per answer. The engine's settlement, the
meter's read and the database are outside the timing: this is the cost of the answer's shape.
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import os
import random
import sys
import timeit
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django

django.setup()

from jackpot.bodies.meter import Meter
from jackpot.models import Award, AwardKind, AwardStatus, Pool
from jackpot.money.meter import meter_body
from jackpot.money.movements import AwardsGranted, StakesTaken
from rules.cards import DECK
from rules.uth import Street, UthBets, UthDecision, UthSettlement, settle_uth
from tables.bodies.round_requests import OpenRequest, ResultRequest, SeatBets, SeatPlay
from tables.models import Table
from tables.rounds import answers

SEATS = 7
NOW = datetime(2026, 11, 29, 21, 41, 1, 249331, tzinfo=UTC)


@dataclass(frozen=True)
class Fixtures:
    table: Table
    opening: OpenRequest
    result: ResultRequest
    settlements: dict[int, UthSettlement]
    granted: AwardsGranted
    stakes: StakesTaken
    meter: Meter


def fixtures() -> Fixtures:
    """One table of a pool, a round's open and result (7 seats), its settlements and awards."""
    pool = Pool(pk=1, name="bench", currency="EUR", stake_cents=500)
    table = Table(pk=1, name="T1", pool=pool)
    bets = UthBets(500, 500, 500, 500)
    opening = OpenRequest("bench-1", tuple(SeatBets(seat, bets) for seat in range(1, SEATS + 1)))
    cards = random.Random(7).sample(DECK, 5 + 2 + 2 * SEATS)
    board, dealer = tuple(cards[:5]), tuple(cards[5:7])
    decisions = [UthDecision.play(Street.PREFLOP, 4), UthDecision.fold()]
    plays = tuple(
        SeatPlay(seat, tuple(cards[5 + 2 * seat : 7 + 2 * seat]), decisions[seat % 2])
        for seat in range(1, SEATS + 1)
    )
    result = ResultRequest(board=board, dealer=dealer, seats=plays)
    settlements = {
        play.seat: settle_uth(
            player=play.cards,
            dealer=dealer,
            board=board,
            bets=bets,
            decision=play.decision,  # type: ignore[arg-type]
            progressive_stake_cents=500,
        )
        for play in plays
    }
    meter = meter_body(
        pool_id=1, currency="EUR", meter_cents=1_234_567, meter_version=42, as_of=NOW
    )
    awards = tuple(
        Award(
            pk=pk,
            pool=pool,
            round_id=1,
            seat=seat,
            kind=kind,
            amount_cents=amount,
            status=AwardStatus.APPROVED,
            number=pk,
            created_at=NOW,
        )
        for pk, seat, kind, amount in (
            (1, 2, AwardKind.FULL_HOUSE, 5000),
            (2, 5, AwardKind.ENVY, 500),
        )
    )
    stakes = StakesTaken(7, 500, 2450, 350, 700, meter, 42, ())
    return Fixtures(
        table=table,
        opening=opening,
        result=result,
        settlements=settlements,
        granted=AwardsGranted(awards, (), meter, None),
        stakes=stakes,
        meter=meter,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    options = parser.parse_args()
    f = fixtures()
    builds = {
        "open (7 seats)": lambda: answers.opened(
            table=f.table, request=f.opening, now=NOW, stakes=f.stakes, meter=f.meter
        ),
        "result (7 seats, 2 awards)": lambda: answers.settled(
            table=f.table,
            round_id="bench-1",
            request=f.result,
            now=NOW,
            settlements=f.settlements,
            granted=f.granted,
            meter=f.meter,
        ),
        "void": lambda: answers.voided(
            table=f.table,
            round_id="bench-1",
            reason="misdeal",
            now=NOW,
            refund_cents=3500,
            meter=f.meter,
        ),
    }
    for name, build in builds.items():
        best = min(timeit.repeat(build, repeat=options.repeat, number=options.number))
        print(f"{name:<28} {best / options.number * 1e6:8.1f} us per answer")


if __name__ == "__main__":
    main()
