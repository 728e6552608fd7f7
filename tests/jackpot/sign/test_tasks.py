"""The progressive's background work on a real Celery worker over the real Redis (issue 12).

The signs' cache is refreshed from PostgreSQL on a schedule, beside the publish after each commit:
a figure whose publish was lost (Redis down at the commit, or its key evicted) is back in the cache
within a period, and a refresh never puts an older version over a newer one.
"""

from __future__ import annotations

import pytest

from core.circuit import redis_client
from jackpot.models import Pool
from jackpot.sign import display
from tests.conftest import make_floor, uth_seat
from tests.workers import wait_for


def _cached_versions(pool_id: int) -> tuple[int, int] | None:
    _, _, identity, *_ = display._committed(pool_id) or (0, 0, "", 0, "")
    held = redis_client().hgetall(display._key(identity, pool_id))
    if b"meter:version" not in held or b"awards:version" not in held:
        return None
    return int(held[b"meter:version"]), int(held[b"awards:version"])


def _committed_versions(pool_id: int) -> tuple[int, int]:
    pool = Pool.objects.get(pk=pool_id)
    return pool.meter_version, pool.award_version


def test_beat_republishes_the_signs_figures_from_postgresql(celery_worker):
    floor = make_floor(uth_tables=1)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    # Redis lost the sign's key (evicted, restarted empty, or down when the round committed).
    _, _, identity, *_ = display._committed(floor.pool_id)
    redis_client().delete(display._key(identity, floor.pool_id))
    assert _cached_versions(floor.pool_id) is None

    celery_worker(beat=True, DISPLAY_REFRESH_SECONDS="1")

    wait_for(
        lambda: _cached_versions(floor.pool_id) == _committed_versions(floor.pool_id),
        within_s=60,
        what="beat's refresh put the committed figures back in the cache",
    )


@pytest.mark.django_db
def test_a_refresh_never_puts_an_older_figure_over_a_newer_one():
    floor = make_floor(uth_tables=1)
    _, _, identity, *_ = display._committed(floor.pool_id)
    key = display._key(identity, floor.pool_id)
    meter_version, award_version = _committed_versions(floor.pool_id)
    # A publisher already wrote a newer meter than this refresh reads (it committed after).
    redis_client().hset(key, mapping={"meter:version": meter_version + 1, "meter": "{}"})

    assert display.refresh(floor.pool_id) is True

    held = redis_client().hgetall(key)
    assert int(held[b"awards:version"]) == award_version
    # Not overwritten by the older committed figure; the reader's own check refuses a version
    # above the committed one (jackpot.sign.display), so the refresh drops it instead.
    assert b"meter" not in held or int(held[b"meter:version"]) == meter_version + 1
    assert display.refresh(999_999) is False
