"""A jackpot is never zero (issue 11, item 11).

A royal on a meter of 0 cents used to be dropped with the zero-cent paytable lines after
`meter.take_jackpot` had counted the hit and reset the meter: the pool's counters moved with no
award and no transfer to say so. Now a pool's seed is at least one cent (the service says so, the
database refuses anything else), so the meter never falls under a cent; and should a zero
jackpot come all the same, `movements.grant_awards` refuses it loudly and nothing is written.
"""

from __future__ import annotations

import logging

import pytest
from django.db import IntegrityError, connection, transaction

from core.errors import ApiError
from jackpot.models import Award, Pool, Transfer
from jackpot.money import meter
from jackpot.pools.creation import PoolChangeRefused, pool_create
from jackpot.pools.parameters import change_propose
from jackpot.pools.replacement import pool_replace_propose
from tables.audit.verification import verify_full
from tables.models import Round, RoundState, Table
from tests.conftest import make_floor, uth_play, uth_seat

pytestmark = pytest.mark.django_db

ROYAL = {
    "board": ["Ah", "Kh", "Qh", "2c", "3d"],
    "dealer": ["9s", "9d"],
    "seats": [uth_play(1, "Jh Th")],
}


def test_a_pool_is_not_created_with_a_seed_under_one_cent():
    with pytest.raises(PoolChangeRefused, match="seed_cents must be at least 1 cent"):
        pool_create(name="No seed", actor="test", seed_cents=0)
    assert not Pool.objects.filter(name="No seed").exists()
    assert pool_create(name="One cent", actor="test", seed_cents=1).seed_cents == 1


def test_a_pool_seed_cannot_be_changed_to_zero(floor, django_user_model):
    """A running pool's seed never changes (409 `terms_fixed`); a replacement's new seed is
    checked as a new pool's (400 `invalid_change`, at least one cent)."""
    Table.objects.filter(pool_id=floor.pool_id).update(enabled=False)  # money may change now
    admin = django_user_model.objects.create(username="club-admin")
    with pytest.raises(ApiError) as refused:
        change_propose(
            pool_id=floor.pool_id, changes={"seed_cents": 0}, reason="no seed", user=admin
        )
    assert (refused.value.code, refused.value.param) == ("terms_fixed", "changes.seed_cents")
    with pytest.raises(ApiError) as refused:
        pool_replace_propose(
            pool_id=floor.pool_id,
            values={"name": "No seed", "seed_cents": 0},
            reason="no seed",
            user=admin,
        )
    assert (refused.value.code, refused.value.param) == ("invalid_change", "changes.seed_cents")
    assert "at least 1" in refused.value.message
    assert Pool.objects.get(pk=floor.pool_id).seed_cents == 1_000_000


def test_the_database_refuses_a_seed_under_one_cent(floor):
    with pytest.raises(IntegrityError, match="pool_seed_positive"), transaction.atomic():
        Pool.objects.filter(pk=floor.pool_id).update(seed_cents=0)


def test_a_zero_jackpot_is_refused_loudly_and_nothing_is_written(client, caplog):
    # Given a pool that nothing raises (no meter share) and whose seed is one cent: its first
    # royal wins that cent; then its seed is made 0, as a pool made before the database refused
    # it could have (the constraint is dropped for this test's transaction only).
    floor = make_floor(1, meter_share_bp=0, reserve_share_bp=0, seed_cents=1)
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    first = terminal.post("/rounds/r-1/result", ROYAL)
    assert first.status_code == 200, first.content
    assert Award.objects.get(round__round_id="r-1").amount_cents == 1
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE jackpot_pool DROP CONSTRAINT IF EXISTS pool_seed_positive")
        cursor.execute("UPDATE jackpot_pool SET seed_cents = 0 WHERE id = %s", [floor.pool_id])
    # the first hit reset the meter to the seed of the time, one cent: take it out of the books'
    # way by a second royal, which wins it and resets the meter to 0
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    assert terminal.post("/rounds/r-2/result", ROYAL).status_code == 200
    assert Pool.objects.get(pk=floor.pool_id).meter_cents == 0

    # When a royal is posted on the empty meter
    terminal.post("/rounds", {"round_id": "r-3", "seats": [uth_seat(1)]})
    opened = Pool.objects.get(pk=floor.pool_id)
    before = (opened.hit_count, opened.meter_version, opened.meter_units, opened.reserve_units)
    transfers, awards = Transfer.objects.count(), Award.objects.count()
    with caplog.at_level(logging.ERROR):
        refused = terminal.post("/rounds/r-3/result", ROYAL)

    # Then it is refused loudly (a logged 500 naming the zero jackpot), and nothing moved: no
    # hit counted, no meter reset, no award, no transfer, the round still open
    assert refused.status_code == 500
    assert refused.json()["error"]["code"] == "internal_error"
    assert any(isinstance(r.exc_info and r.exc_info[1], meter.ZeroJackpot) for r in caplog.records)
    after = Pool.objects.get(pk=floor.pool_id)
    assert (after.hit_count, after.meter_version, after.meter_units, after.reserve_units) == before
    assert (Transfer.objects.count(), Award.objects.count()) == (transfers, awards)
    assert Round.objects.get(round_id="r-3").state == RoundState.OPEN
    # The books balance; the one thing the journal check finds is this test's own edit of the
    # seed behind the journal's back (jackpot.audit.projections).
    report = verify_full()
    assert [problem.split(" (chain")[0] for problem in report.problems] == [
        f"pool {floor.pool_id}: seed_cents is 0, the journal says 1"
    ]
