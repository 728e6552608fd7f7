"""Transactions PostgreSQL rolls back for a deadlock or a serialization failure are run again,
a bounded number of times, on the round and award paths (`jackpot.money.locks.retried`): the failure
is injected into the transaction's last write, after its stakes and locks were taken."""

from __future__ import annotations

import psycopg
import pytest
from django.db import OperationalError

from jackpot.models import AuditEvent, Award, AwardKind, Pool, Transfer
from jackpot.money import ledger, locks
from tables.models import Round
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db(transaction=True)


def _failing(times: int, error: type[psycopg.Error], monkeypatch) -> list[int]:
    """Make the ledger's write fail `times` times as PostgreSQL would, then work; returns the
    list that counts the writes tried."""
    real = ledger._insert
    tried: list[int] = []

    def insert(*args, **kwargs):
        tried.append(1)
        if len(tried) <= times:
            raise OperationalError("injected") from error("injected by the test")
        return real(*args, **kwargs)

    monkeypatch.setattr(ledger, "_insert", insert)
    return tried


@pytest.mark.parametrize(
    "error", [psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure]
)
def test_an_open_rolled_back_by_postgresql_is_run_again_and_written_once(monkeypatch, error):
    floor = make_floor()
    meter = Pool.objects.get(pk=floor.pool_id).meter_units
    tried = _failing(locks.ATTEMPTS - 1, error, monkeypatch)

    response = floor.uth[0].post(
        "/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]}
    )

    assert response.status_code == 201, response.json()
    assert len(tried) == locks.ATTEMPTS
    assert Round.objects.count() == 1
    assert AuditEvent.objects.filter(kind="round.opened").count() == 1
    assert Transfer.objects.filter(round__isnull=False).count() == 3
    # The stakes the rolled-back runs took were rolled back with them: counted once.
    assert Pool.objects.get(pk=floor.pool_id).meter_units == meter + 2 * 500 * 2000
    assert_journal_ok()


def test_an_award_step_is_run_again_too(monkeypatch, django_user_model):
    floor = make_floor()
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    royal = {
        "board": ["Ah", "Kh", "Qh", "2c", "3d"],
        "dealer": ["9s", "9d"],
        "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
    }
    assert terminal.post("/rounds/r-1/result", royal).status_code == 200
    staff = token_client(person("sup", "supervisor"))
    jackpot = Award.objects.get(kind=AwardKind.ROYAL_FLUSH)
    tried = _failing(1, psycopg.errors.DeadlockDetected, monkeypatch)

    response = staff.post(
        f"/api/v1/awards/{jackpot.pk}/verify", {"note": "video"}, content_type="application/json"
    )

    assert response.status_code == 200 and response.json()["status"] == "verified"
    assert len(tried) == 2
    assert AuditEvent.objects.filter(kind="award.verified").count() == 1
    assert_journal_ok()


def test_the_runs_are_bounded_and_other_errors_are_not_retried(monkeypatch):
    floor = make_floor()
    tried = _failing(99, psycopg.errors.DeadlockDetected, monkeypatch)

    response = floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})

    assert response.status_code >= 500
    assert len(tried) == locks.ATTEMPTS
    assert not Round.objects.exists()

    runs: list[int] = []

    def lock_wait_timed_out() -> None:
        runs.append(1)
        raise OperationalError("injected") from psycopg.errors.LockNotAvailable("55P03")

    with pytest.raises(OperationalError):
        locks.retried(lock_wait_timed_out)()
    assert len(runs) == 1  # not a failure PostgreSQL asks to run again
