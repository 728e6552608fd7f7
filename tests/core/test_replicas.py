"""Which database a query reads (core.replicas): the router's decisions, with a standby
configured or not. The reads on a real standby are played by tests/cluster/test_failover.py."""

from __future__ import annotations

import pytest
from django.db import router

from core import replicas
from core.replicas import (
    REPLICA,
    ReplicaRouter,
    on_replica,
    reading,
    reading_alias,
    replica_reads,
)
from jackpot.models import AuditEvent, Pool


@pytest.fixture
def standby(monkeypatch, settings):
    """A standby configured (no connection is made: the decisions only) and caught up."""
    settings.DATABASES = {**settings.DATABASES, REPLICA: dict(settings.DATABASES["default"])}
    caught_up = {"value": True}
    monkeypatch.setattr(replicas, "_caught_up", lambda: caught_up["value"])
    return caught_up


def test_without_a_standby_everything_reads_the_primary():
    with replica_reads():
        assert Pool.objects.all().db == "default"
        assert reading().alias == "default"
    assert router.db_for_read(Pool) == "default"


def test_a_block_reads_the_standby_and_writes_the_primary(standby):
    assert Pool.objects.all().db == "default"  # outside a block
    with replica_reads():
        assert Pool.objects.all().db == REPLICA
        assert AuditEvent.objects.filter(chain="x").db == REPLICA
        assert reading_alias() == REPLICA  # raw SQL's connection (`reading()`) too
        # a locking read and every write are the primary's, inside the block too
        assert Pool.objects.select_for_update().db == "default"
        assert router.db_for_write(Pool) == "default"
    assert Pool.objects.all().db == "default"
    router_ = ReplicaRouter()
    assert router_.allow_migrate("default", "jackpot")
    assert not router_.allow_migrate(REPLICA, "jackpot")


def test_a_standby_behind_or_unreachable_leaves_the_block_on_the_primary(standby):
    standby["value"] = False
    with replica_reads():
        assert Pool.objects.all().db == "default"


def test_a_stream_reads_the_standby_at_each_step_and_only_then(standby):
    def rows():
        for _ in range(3):
            yield Pool.objects.all().db

    stream = on_replica(rows())
    assert list(stream) == [REPLICA] * 3
    assert Pool.objects.all().db == "default"  # between and after the steps


def test_an_inner_block_keeps_the_outer_choice(standby):
    with replica_reads():
        standby["value"] = False  # would choose the primary if asked again
        with replica_reads():
            assert Pool.objects.all().db == REPLICA
