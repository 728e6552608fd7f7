"""A club's sessions played through the terminal API: rounds, voids and a jackpot at two tables,
and the staff who open, close and count (the cast of tests/staff.py)."""

from __future__ import annotations

from collections import defaultdict

from tests.conftest import Floor, Terminal, uth_play, uth_seat

NOTHING = {"board": ["2c", "7d", "9h", "Js", "4s"], "dealer": ["Kd", "Qc"]}
ROYAL = {"board": ["Ah", "Kh", "Qh", "2c", "3d"], "dealer": ["9s", "9d"]}


def open_round(terminal: Terminal, round_id: str, stakes: int) -> None:
    seats = [uth_seat(seat) for seat in range(1, stakes + 1)]
    opened = terminal.post("/rounds", {"round_id": round_id, "seats": seats})
    assert opened.status_code == 201, opened.json()


def settle(terminal: Terminal, round_id: str, stakes: int, *, royal: bool = False) -> None:
    spare = ["3h 5h", "8c 8d", "4c 6d", "3s 5s", "6c 8h", "4d 6s", "3c 5c"]
    hands = (["Jh Th"] if royal else []) + spare
    hands = hands[:stakes]
    plays = [uth_play(seat, hand) for seat, hand in enumerate(hands, start=1)]
    body = {**(ROYAL if royal else NOTHING), "seats": plays}
    settled = terminal.post(f"/rounds/{round_id}/result", body)
    assert settled.status_code == 200, settled.json()


def void(terminal: Terminal, round_id: str) -> None:
    voided = terminal.post(f"/rounds/{round_id}/void", {"reason": "misdeal"})
    assert voided.status_code == 200, voided.json()


def play(terminal: Terminal, round_id: str, stakes: int, *, royal: bool = False) -> None:
    open_round(terminal, round_id, stakes)
    settle(terminal, round_id, stakes, royal=royal)


class Recount:
    """What a session's lines must be, recomputed from the rounds as the story plays them:
    (table, pool) -> [rounds, stakes, stakes_cents, voided, voided_cents]."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.lines: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])

    def staked(self, terminal: Terminal, stakes: int) -> None:
        line = self.lines[(terminal.table_id, self.floor.pool_id)]
        line[0] += 1
        line[1] += stakes
        line[2] += 500 * stakes

    def voided(self, terminal: Terminal, stakes: int) -> None:
        line = self.lines[(terminal.table_id, self.floor.pool_id)]
        line[3] += 1
        line[4] += 500 * stakes

    def expected(self) -> list[dict[str, int]]:
        return [
            {
                "table": table,
                "pool": pool,
                "rounds": line[0],
                "stakes": line[1],
                "stakes_cents": line[2],
                "voided": line[3],
                "voided_cents": line[4],
                "withheld_cents": line[2] - line[4],
            }
            for (table, pool), line in sorted(self.lines.items())
        ]
