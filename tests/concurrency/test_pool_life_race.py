"""A suspension racing a round's stakes on real PostgreSQL connections (jackpot.pools.lifecycle).

The round's open reads its pool's terms without locking the pool row, so a status read there
would let a stake through a suspension committed in between. The meter's own `UPDATE` takes the
stake only from an active pool, under the row lock: an open that waits on a suspension's lock is
refused once it commits, with nothing written.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from jackpot.models import AuditEvent, Pool, Transfer
from jackpot.pools.lifecycle import pool_suspend
from tables.models import Round
from tests.concurrency.test_one_open_round import _post_open, _waiting_on_a_lock
from tests.conftest import assert_journal_ok, make_floor

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_open_waiting_on_a_suspension_is_refused_when_it_commits():
    floor = make_floor(1)
    admin = User.objects.create(username="ana")
    before = Pool.objects.values_list("meter_units", "reserve_units").get(pk=floor.pool_id)
    transfers = Transfer.objects.count()
    with ThreadPoolExecutor(max_workers=1) as executor:
        with transaction.atomic():
            # The suspension holds the pool row until this block commits.
            pool_suspend(pool_id=floor.pool_id, reason="a fault", user=admin)
            opening = executor.submit(_post_open, floor.uth[0], "r-1")
            _waiting_on_a_lock(1)  # the open stops at the pool row, its round row written
        status, body = opening.result(timeout=30)

    assert status == 409, body
    assert body["error"]["code"] == "pool_suspended"
    assert "a fault" in body["error"]["message"]
    assert not Round.objects.exists()
    assert Transfer.objects.count() == transfers
    assert not AuditEvent.objects.filter(kind="round.opened").exists()
    after = Pool.objects.values_list("meter_units", "reserve_units").get(pk=floor.pool_id)
    assert after == before
    assert_journal_ok()
