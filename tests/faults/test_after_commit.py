"""A committed round step is never answered as if nothing had been recorded.

Found by the backend drill (test_kill_database.py): a round's open was answered 503
`progressive_closed` ("Nothing was recorded") and the terminal's resend got the stored answer
back (`Idempotent-Replayed: true`): the open had committed. The connection was lost between the
COMMIT and the sign's publish, which runs after commit (`jackpot.sign.display`) and reads PostgreSQL
(the database's identity, once per connection); its error went up through the request and
became the 503. A publish to the signs' cache is not the money: it must never turn a committed
answer into a refusal (the beat's refresh and the next reader repair the cache).

Here the fault is put at that exact instant: the request's own backend is terminated with
`pg_terminate_backend` just before the publish runs. PostgreSQL itself stays up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from django.db import connection

from jackpot.sign import display
from tests.conftest import make_floor, uth_play, uth_seat

pytestmark = pytest.mark.faults


def _connection_lost_before(publish: Callable[..., Any], database_url: str) -> Callable[..., Any]:
    """`publish`, run once this request's database connection has been cut."""

    def lost_then_publish(*args: Any, **kwargs: Any) -> Any:
        pid = connection.connection.info.backend_pid
        with psycopg.connect(database_url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
            while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                time.sleep(0.01)
        return publish(*args, **kwargs)

    return lost_then_publish


# What runs first after the commit: the open's meter is published (reading the database's
# identity on a new connection); the result's awards are read back from PostgreSQL.
@pytest.mark.parametrize(
    ("step", "first_after_commit"), [("open", "_publish"), ("result", "_awards_part")]
)
def test_a_connection_lost_after_the_commit_leaves_the_committed_answer(
    test_database, monkeypatch, step, first_after_commit
):
    terminal = make_floor(1).uth[0]
    open_body = {"round_id": "r-1", "seats": [uth_seat(1)]}
    # A full house: its award is published to the signs after the commit.
    result_body = {
        "board": ["Ac", "Kd", "Ks", "2c", "7h"],
        "dealer": ["3c", "4d"],
        "seats": [uth_play(1, "Ah Ad")],
    }
    if step == "result":
        assert terminal.post("/rounds", open_body).status_code == 201
    path, body = ("/rounds", open_body) if step == "open" else ("/rounds/r-1/result", result_body)

    cut = _connection_lost_before(getattr(display, first_after_commit), test_database)
    monkeypatch.setattr(display, first_after_commit, cut)
    answered = terminal.post(path, body)
    monkeypatch.undo()
    connection.close()  # the lost one

    # The step committed, and the terminal is told so: not "nothing was recorded".
    assert answered.status_code in (200, 201), answered.content
    resent = terminal.post(path, body)
    assert resent["Idempotent-Replayed"] == "true"
    assert (resent.status_code, resent.json()) == (answered.status_code, answered.json())
