"""The tables' Celery tasks: entry points like views, as thin (see jackpot.tasks).

Sent by name (`config.dispatch`) or by beat (CELERY_BEAT_SCHEDULE); safe to run twice: the
integrity check stores each flag once (tables.integrity), a reconciliation stores one report per
scheduled run (its run key: the beat message's task id, which a redelivery keeps, or the UTC
date of the daily report; tables.reconciliation).
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.utils import timezone

from tables.integrity import check_integrity as check
from tables.reconciliation import reconcile as run_reconciliation


@shared_task(name="tables.check_integrity")
def check_integrity() -> int:
    """Compare every table's and pool's award counts with the exact odds; store new flags
    (beat, INTEGRITY_CHECK_SECONDS). Returns how many were stored."""
    return len(check())


@shared_task(name="tables.reconcile", bind=True)
def reconcile(self: Any) -> int:
    """Recompute every pool from the journal, verify the chains, check the meter identity, store
    the report and alert on any difference (beat, RECONCILE_SECONDS). Returns the report's id."""
    task_id = self.request.id
    key = f"periodic:{task_id}" if task_id else None
    return run_reconciliation(run_key=key).pk


@shared_task(name="tables.reconcile_daily")
def reconcile_daily() -> int:
    """The daily report (beat, RECONCILE_DAILY_AT UTC): the same run, stored with `daily`, at
    most one per UTC day. Returns the report's id."""
    today = timezone.now().date().isoformat()  # USE_TZ: now() is in UTC
    return run_reconciliation(run_key=f"daily:{today}", daily=True).pk
