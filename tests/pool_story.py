"""A pool's story over three club days, played through the terminal API with the service's
clock moved to each day (time-machine: the services read `timezone.now()`, the database is real),
for the auditor's history and its page. Every figure below follows from the default pool
(stake 500 cents, 2,000 bp to the meter: exactly 100 cents a stake, 800 bp to the reserve: 40).

- day 1: r1, two stakes, nothing; r2, three stakes, seat 1 a full house (5,000 cents);
- day 2: r3, two stakes, seat 1 the jackpot (the meter, 1,000,700), seat 2 its envy (50,000);
  the reset: 280 cents from the reserve (7 stakes x 40), 999,720 from the house; r4, one
  stake, voided (refunded, its meter share kept);
- day 3: r5, four stakes, nothing.
"""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import time_machine

from tests.conftest import Floor, make_floor, uth_play, uth_seat

PARIS = ZoneInfo("Europe/Paris")
DAYS = (date(2026, 11, 10), date(2026, 11, 11), date(2026, 11, 12))
SEED_CENTS = 1_000_000
#: Each day's closing meter and its change (the first day's: the seed too), and its stakes:
#: (count, cents, refunded count, refunded cents).
METER = {DAYS[0]: (1_000_500, 1_000_500), DAYS[1]: (1_000_100, -400), DAYS[2]: (1_000_500, 400)}
STAKES = {DAYS[0]: (5, 2_500, 0, 0), DAYS[1]: (3, 1_500, 1, 500), DAYS[2]: (4, 2_000, 0, 0)}
JACKPOT_CENTS = 1_000_700
RESET_RESERVE_CENTS, RESET_HOUSE_CENTS = 280, 999_720
#: Staked seats of each settled round (r4 was voided): the expected counts' rounds.
SETTLED_SIZES = (2, 3, 2, 4)


def _at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=PARIS)


def _round(floor: Floor, round_id: str, board: str, dealer: str, hands: list[str]) -> dict:
    terminal = floor.uth[0]
    seats = [uth_seat(seat) for seat in range(1, len(hands) + 1)]
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": seats})
    assert opened.status_code == 201, opened.json()
    plays = [uth_play(seat, cards) for seat, cards in enumerate(hands, start=1)]
    result = {"board": board.split(), "dealer": dealer.split(), "seats": plays}
    settled = terminal.post(f"/rounds/{round_id}/result", result)
    assert settled.status_code == 200, settled.json()
    return settled.json()


def play_story() -> Floor:
    """The floor (one UTH table) and its three days, as the module's docstring tells them."""
    with time_machine.travel(_at(DAYS[0], 14), tick=True):
        floor = make_floor(1)
        _round(floor, "r1", "2c 7d 9h Js 4s", "Kd Qc", ["3h 5h", "8c 8d"])
        _round(floor, "r2", "Ks Kd 7c 7h 2d", "Qs Jd", ["Kc 3s", "4c 5d", "9c 9d"])
    with time_machine.travel(_at(DAYS[1], 21), tick=True):
        _round(floor, "r3", "Ah Kh Qh 2c 3d", "9s 9d", ["Jh Th", "4c 5c"])
        terminal = floor.uth[0]
        assert (
            terminal.post("/rounds", {"round_id": "r4", "seats": [uth_seat(1)]}).status_code == 201
        )
        assert terminal.post("/rounds/r4/void", {"reason": "misdeal"}).status_code == 200
    with time_machine.travel(_at(DAYS[2], 10), tick=True):
        _round(floor, "r5", "2c 7d 9h Js 4s", "Kd Qc", ["3h 5h", "8c 8d", "Ac 6d", "Tc Td"])
    return floor
