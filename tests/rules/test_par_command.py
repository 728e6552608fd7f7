"""`manage.py par_sheet`: the sheets printed, the API's JSON, bad options, and the Stud Bonus
table checked and rewritten (with its recomputation stood in for: the real one is in
test_par.py, under the slow marker). No database is touched."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from rules import par
from tables.api.rules_bodies import par_answer
from tables.management.commands import par_sheet


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("par_sheet", *args, stdout=out)
    return out.getvalue()


def test_prints_the_three_sheets_in_force():
    text = run("--jackpot-cents", "1000000", "--other-bettors", "6")
    assert "uth_progressive uth-progressive/2026-1 at a meter of 1,000,000 cents, 6 other" in text
    assert "return to player 59.2800% (" in text
    assert "return to player 96.5020% (6455243/6689228), house edge 3.4980%" in text
    assert "stud_bonus stud-bonus/2026-1" in text
    full_house = next(line for line in text.splitlines() if line.startswith("full_house"))
    assert full_house.split()[1:5] == ["72,936,864", "2,809,475,760", "39", "EUR"]


def test_json_is_the_apis_answer():
    answer = json.loads(run("--version", "uth-trips/2026-1", "--json"))
    sheets = par.par_sheets(version="uth-trips/2026-1", jackpot_cents=0, other_bettors=0)
    assert answer == par_answer(sheets).model_dump(mode="json")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--version", "uth-blind/2026-1"], "--version: no PAR sheet for paytable version"),
        (["--other-bettors", "7"], "--other-bettors: other_bettors must be between 0 and 6"),
        (["--jackpot-cents", "-1"], "--jackpot-cents: jackpot_cents must be at least 0"),
    ],
)
def test_bad_options_are_named(args, message):
    with pytest.raises(CommandError) as caught:
        run(*args)
    assert str(caught.value).startswith(message)


def test_stud_table_checked_and_rewritten(monkeypatch, tmp_path):
    counts = {category: tuple(values) for category, values in par.STUD_BONUS_BEATEN.items()}
    monkeypatch.setattr(par, "stud_bonus_beaten_counts", lambda: counts)
    # The checked-in file is exactly what the command writes for the counts it holds.
    assert "OK: the checked-in Stud Bonus counts match" in run("--check-stud-table")
    target = tmp_path / "stud_bonus_table.py"
    monkeypatch.setattr(par_sheet, "TABLE_FILE", target)
    run("--write-stud-table")
    assert target.read_text() == par_sheet.TABLE_FILE.read_text()
    namespace: dict[str, object] = {}
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    assert {int(k): tuple(map(int, v.split())) for k, v in namespace["BEATEN"].items()} == {
        int(c): v for c, v in counts.items()
    }
    wrong = dict(counts)
    wrong[par.Category.FLUSH] = (1, *counts[par.Category.FLUSH][1:])
    monkeypatch.setattr(par, "stud_bonus_beaten_counts", lambda: wrong)
    with pytest.raises(CommandError, match="differs from the recomputed counts"):
        run("--check-stud-table")
