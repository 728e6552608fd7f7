"""What PostgreSQL knows, as Prometheus gauges read at scrape time: each pool's committed meter,
and the outbox's backlog.

Counters live in the processes (core.metrics); these figures live in the database, so they
are read when Prometheus asks, never kept in memory where they could drift from the truth.

Invariants:
- one cheap query per family: the pools (a handful of rows by primary key order) and the pending
  outbox messages (the partial index of pending messages, `outbox_pending_due`);
- a scrape never fails for the database: when a query fails, these figures are left out,
  `jackpot_metrics_database_error` is 1 (alert on it: the database is down, or the figures are
  missing), and /metrics still answers with the counters;
- the meter is the committed one in whole cents (`meter_units // UNITS_PER_CENT`, as
  `jackpot.money.meter` shows it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.db import connection
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from jackpot.models import UNITS_PER_CENT, OutboxMessage, OutboxStatus, Pool

logger = logging.getLogger(__name__)

_POOLS = (
    f"SELECT id, currency, meter_units / {UNITS_PER_CENT} FROM {Pool._meta.db_table} ORDER BY id"
)
# Ages on the database's clock, the one the outbox's times are written with.
_OUTBOX = {
    "postgresql": (
        "SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)"
        f" FROM {OutboxMessage._meta.db_table} WHERE status = %s"
    ),
    "sqlite": (
        "SELECT count(*), COALESCE((julianday('now') - julianday(min(created_at))) * 86400, 0)"
        f" FROM {OutboxMessage._meta.db_table} WHERE status = %s"
    ),
}


def _meters() -> Metric:
    family = GaugeMetricFamily(
        "jackpot_meter_cents",
        "The committed progressive meter of each pool, in whole cents.",
        labels=["pool", "currency"],
    )
    with connection.cursor() as cursor:
        cursor.execute(_POOLS)
        for pool_id, currency, meter_cents in cursor.fetchall():
            family.add_metric([str(pool_id), str(currency)], int(meter_cents))
    return family


def _outbox() -> Iterator[Metric]:
    sql = _OUTBOX.get(connection.vendor, _OUTBOX["sqlite"])
    with connection.cursor() as cursor:
        cursor.execute(sql, [OutboxStatus.PENDING])
        pending, oldest_seconds = cursor.fetchone() or (0, 0)
    yield GaugeMetricFamily(
        "jackpot_outbox_pending_messages",
        "Outbox messages not done yet (big-win webhooks and alerts waiting to be delivered).",
        value=int(pending),
    )
    yield GaugeMetricFamily(
        "jackpot_outbox_oldest_pending_age_seconds",
        "How long ago the oldest pending outbox message was written; 0 when none is pending.",
        value=max(float(oldest_seconds), 0.0),
    )


class DatabaseFigures(Collector):
    """The meters and the outbox's backlog, read now (see the module's invariants)."""

    def collect(self) -> Iterator[Metric]:
        try:
            # Both or neither: with the database unreachable, the second query would wait for
            # its own connection deadline (config.database) too.
            families = [_meters(), *_outbox()]
        except Exception as error:  # any driver error: the figures are missing, not the scrape
            logger.warning("metrics: the database's figures could not be read: %s", error)
            families = []
        yield from families
        yield GaugeMetricFamily(
            "jackpot_metrics_database_error",
            "1 when the database's figures (meters, outbox) could not be read at this scrape "
            "and are left out; 0 when they were read.",
            value=0 if families else 1,
        )
