"""The backup-restore drill (compliance requirement 30), run as the operator runs it:
`pg_dump --format=custom`, then `deploy/restore-drill.sh` into an empty scratch database.

A restored backup reproduces the meter, the hit count, the awards won and the chain heads as
they were at the dump, the self-check passes on it, and a process pointed at it (with the same
Redis, which holds a newer figure of the original database) shows the sign the restored meter,
never the cached newer one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection

from jackpot.selectors import book_figures
from jackpot.sign import display
from tests.conftest import make_floor, uth_play, uth_seat
from tests.test_production import approved_code_digest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db(transaction=True)


def _url(database: str) -> str:
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{database}"))


def _play_before_the_dump(floor) -> None:
    a, b = floor.uth
    a.post("/rounds", {"round_id": "a-1", "seats": [uth_seat(1), uth_seat(2), uth_seat(3)]})
    b.post("/rounds", {"round_id": "b-1", "seats": [uth_seat(1), uth_seat(2)]})
    settled = a.post(  # a full house on seat 1, four of a kind on seat 2
        "/rounds/a-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["9s", "8d"],
            "seats": [uth_play(1, "Kc Ks"), uth_play(2, "7s Ac"), uth_play(3, "9h 8h", "fold")],
        },
    )
    assert settled.status_code == 200, settled.content
    royal = b.post(  # the jackpot, and envy for seat 2
        "/rounds/b-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "2h 2d", "fold")],
        },
    )
    assert royal.status_code == 200, royal.content


def _cached_meter(key: str) -> int:
    """The meter Redis holds for a sign under `key` (its value: the part's tag, then its JSON)."""
    value = display._redis().hget(key, "meter")
    return int(json.loads(value[display._TAG_LENGTH :])["amount_cents"])


def test_a_backup_restored_into_an_empty_database_reproduces_the_books_and_the_sign(tmp_path):
    floor = make_floor(2, seed_cents=100_000)
    _play_before_the_dump(floor)
    at_dump = book_figures()
    pool = at_dump["pools"][str(floor.pool_id)]
    assert pool["hit_count"] == 1
    assert set(pool["won"]) == {"royal_flush", "envy", "four_of_a_kind", "full_house"}
    expected = tmp_path / "figures-at-backup.json"
    # The operator's file: `manage.py book_figures --json` with the backup
    expected.write_text(json.dumps(at_dump, indent=2, sort_keys=True))

    # The backup, as docs/operations.md takes it
    original = connection.settings_dict["NAME"]
    backup = tmp_path / "jackpot.dump"
    subprocess.run(
        ["pg_dump", "--format=custom", f"--file={backup}", _url(original)],
        check=True,
        timeout=120,
    )

    # Play goes on: the meter rises, and the sign's cache in Redis holds the newer figure
    more = floor.uth[0].post("/rounds", {"round_id": "a-2", "seats": [uth_seat(1), uth_seat(2)]})
    assert more.status_code == 201, more.content
    newer = more.json()["meter"]["amount_cents"]
    assert newer > pool["meter_cents"]
    body, _ = display.display_meter(floor.pool_id)
    assert body["amount_cents"] == newer
    cached_key = display._key(display._committed(floor.pool_id)[2], floor.pool_id)
    assert _cached_meter(cached_key) == newer

    scratch = f"drill_{uuid.uuid4().hex[:12]}"
    env = {
        **os.environ,
        "DATABASE_URL": _url("postgres"),
        "PYTHON": sys.executable,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        # The service's approved code (compliance 59), computed from these files, as deployed
        "JACKPOT_CODE_SHA256": approved_code_digest(),
    }
    try:
        # The drill, word for word as the operator runs it
        drill = subprocess.run(
            ["deploy/restore-drill.sh", str(backup), scratch, str(expected)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        output = drill.stdout + drill.stderr
        assert drill.returncode == 0, output
        assert "selfcheck passed" in output
        assert "journal        ok" in output
        assert "figures equal" in output and "restore drill passed" in output
        assert f"meter {pool['meter_cents']} cents" in output and f"meter {newer} " not in output

        # Its figures, read again: the dump's, to the cent; the admin chain one event longer,
        # the self-check's record of the code it ran (compliance 59), which the drill's figures,
        # taken before it, do not hold
        restored = subprocess.run(
            [sys.executable, "manage.py", "book_figures", "--json"],
            cwd=ROOT,
            env={**env, "DATABASE_URL": _url(scratch)},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        figures = json.loads(restored.stdout)
        admin = figures["chains"].pop("admin")
        at_dump_admin = at_dump["chains"].pop("admin")
        assert figures == at_dump
        assert admin["sequence"] == at_dump_admin["sequence"] + 1
        assert f"code           ok        sha256 {approved_code_digest()}" in output
        assert f"is the approved one (code.verified, admin #{admin['sequence']})" in output
        assert output.index("== 3. its figures") < output.index("selfcheck passed")

        # A process pointed at the restored database, with the same Redis and cache keys, shows
        # the sign the restored meter, not the newer one cached for the original database
        sign = subprocess.run(
            [
                sys.executable,
                "-c",
                "import json, django; django.setup(); from jackpot.sign import display;"
                f"print(json.dumps(display.display_meter({floor.pool_id})[0]))",
            ],
            cwd=ROOT,
            env={
                **env,
                "DATABASE_URL": _url(scratch),
                "DJANGO_SETTINGS_MODULE": "config.settings.local",
                "CACHE_KEY_PREFIX": settings.CACHES["default"]["KEY_PREFIX"],
                "DEBUG": "0",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert sign.returncode == 0, sign.stderr
        shown = json.loads(sign.stdout.strip().splitlines()[-1])
        assert shown["amount_cents"] == pool["meter_cents"] != newer
        assert shown["sequence"] == pool["meter_version"]
        assert shown["jackpot_pending"] is True
        assert shown["pending_jackpot"]["amount_cents"] == pool["won"]["royal_flush"]["cents"]
        # and the newer figure is still there, under the original database's key only
        assert _cached_meter(cached_key) == newer
    finally:
        subprocess.run(
            ["dropdb", f"--maintenance-db={_url('postgres')}", "--if-exists", "--force", scratch],
            check=True,
            timeout=120,
        )
