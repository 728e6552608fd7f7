"""The walk of docs/architecture.md ("A result request, as it runs") is the order a real result
request runs in: the calls of one are recorded, and the modules the walk names must be entered,
first, in the walk's order.

One request on PostgreSQL through Django's test client with a terminal's token (its client made
and used for the open first, so what the recording sees is the result's own run, not the client's
loading of the middleware): every call into a module of the project's packages is recorded
(`sys.setprofile`), Django, DRF, the libraries and the tests left out.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.conftest import make_floor, uth_play, uth_seat

ROOT = Path(__file__).resolve().parents[1]
WALK = ROOT / "docs" / "architecture.md"
SECTION = "## A result request, as it runs"
PACKAGES = frozenset({"config", "core", "floor", "jackpot", "tables", "rules"})

# Four nines for seat 1: a fixed progressive award, no jackpot (the walk's request).
QUADS = {
    "board": ["9h", "9c", "2d", "5s", "Kd"],
    "dealer": ["3c", "4c"],
    "seats": [uth_play(1, "9s 9d")],
}


def walk(text: str) -> list[str]:
    """The module each numbered step of the section names: the first path in backticks of its
    line (`1. \\`tables/api/views.py\\`: ...`)."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d+\. `([\w/]+\.py)`", section, flags=re.MULTILINE)
    numbered = re.findall(r"^\d+\. ", section, flags=re.MULTILINE)
    assert len(steps) == len(numbered), "every step starts with its module's path in backticks"
    return steps


def first_entries(run: Any) -> list[str]:
    """The project's modules `run()` enters, as paths from the root, in the order first
    entered."""
    prefix = f"{ROOT}/"
    entered: list[str] = []
    seen: set[str] = set()

    def record(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        if filename in seen:
            return
        seen.add(filename)
        path = filename.removeprefix(prefix)
        if path != filename and path.split("/", 1)[0] in PACKAGES:
            entered.append(path)

    sys.setprofile(record)
    try:
        run()
    finally:
        sys.setprofile(None)
    return entered


def test_the_sections_steps_are_read_one_module_a_line() -> None:
    text = f"{SECTION}\n\n1. `a/b.py`: one.\n2. `c/d.py`: two,\n   still two.\n\n## Next\n3. x"
    assert walk(text) == ["a/b.py", "c/d.py"]


@pytest.mark.django_db
def test_a_result_request_runs_in_the_order_of_the_walk() -> None:
    named = walk(WALK.read_text())
    assert len(named) == len(set(named)), "a module is named once, where it is first entered"
    assert all((ROOT / path).is_file() for path in named), named
    terminal = make_floor(1).uth[0]
    client = terminal.client()
    rounds = f"/api/v1/tables/{terminal.table_id}/rounds"
    opening = {"round_id": "r-1", "seats": [uth_seat(1)]}
    opened = client.post(rounds, opening, content_type="application/json")
    assert opened.status_code == 201, opened.json()

    answers: list[Any] = []
    entered = first_entries(
        lambda: answers.append(
            client.post(f"{rounds}/r-1/result", QUADS, content_type="application/json")
        )
    )

    (settled,) = answers
    assert settled.status_code == 200, settled.json()
    assert [award["kind"] for award in settled.json()["awards"]] == ["four_of_a_kind"]
    missing = [path for path in named if path not in entered]
    assert not missing, f"named by the walk, never entered: {missing}"
    order = [path for path in entered if path in named]
    assert order == named, f"the walk's modules, as the request first entered them: {order}"
