"""The floor file that `seed_demo --json` writes, the plan of a run, and money as text.

What this module guarantees:

- **Money is integer cents**, printed by `eur` with `divmod`, never through a float.
- Only Ultimate Texas Hold'em tables linked to a pool are played, and a floor file that is
  missing, unreadable or short of them raises `FloorFileError` saying how to make one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


def eur(cents: int) -> str:
    """Whole cents as euros, with thousands separators.

    >>> eur(1234567), eur(5), eur(-250)
    ('EUR 12,345.67', 'EUR 0.05', '-EUR 2.50')
    """
    euros, rest = divmod(abs(cents), 100)
    return f"{'-' if cents < 0 else ''}EUR {euros:,}.{rest:02d}"


# --- the floor file ------------------------------------------------------------------------------


class FloorFileError(Exception):
    """The floor file is missing, unreadable or short of tables; the message says what to do."""


@dataclass(frozen=True, slots=True)
class FloorTable:
    """An Ultimate Texas Hold'em table linked to a pool, with its terminal's token."""

    id: int
    name: str
    pool: int
    token: str


def _make_one(path: Path | str, tables: int) -> str:
    return (
        f"make one with `python manage.py seed_demo --tables {tables} --json > {path}` "
        "(against the server's database; `make run` saves one in var/demo-floor.json)"
    )


def load_floor(path: Path, tables: int) -> tuple[FloorTable, ...]:
    """The first `tables` UTH tables of the floor file that `seed_demo --json` writes.

    Tables of another game or linked to no pool are skipped: they feed no progressive.
    """
    try:
        floor = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FloorFileError(f"no floor file at {path}: {_make_one(path, tables)}") from None
    except (OSError, ValueError) as error:
        raise FloorFileError(f"cannot read {path} ({error}): {_make_one(path, tables)}") from None
    entries = floor.get("tables") if isinstance(floor, dict) else None
    if not isinstance(entries, list):
        raise FloorFileError(f"{path} holds no tables list: {_make_one(path, tables)}")
    linked = [
        FloorTable(int(entry["id"]), str(entry["name"]), int(entry["pool"]), str(entry["token"]))
        for entry in entries
        if isinstance(entry, dict) and entry.get("game") == "uth" and entry.get("pool") is not None
    ]
    if len(linked) < tables:
        raise FloorFileError(
            f"{path} has {len(linked)} Ultimate Texas Hold'em tables linked to a pool, "
            f"--tables {tables} needs {tables}: {_make_one(path, tables)}"
        )
    return tuple(linked[:tables])


def share_rounds(rounds: int, tables: int) -> tuple[int, ...]:
    """Share the floor's rounds among its tables, the first tables taking the remainder.

    >>> share_rounds(10, 3)
    (4, 3, 3)
    """
    each, remainder = divmod(rounds, tables)
    return tuple(each + (1 if index < remainder else 0) for index in range(tables))


@dataclass(frozen=True, slots=True)
class FloorPlan:
    """Everything a run needs, read from the command line and the floor file."""

    base_url: str
    tables: tuple[FloorTable, ...]
    rounds: int
    rate: float = 0.0
    seed: int | None = None
    force_royal: bool = False
    give_up_s: float = 30.0

    @property
    def shares(self) -> tuple[int, ...]:
        return share_rounds(self.rounds, len(self.tables))
