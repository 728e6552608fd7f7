"""The tables' Celery tasks: entry points like views, as thin (see jackpot.tasks).

Sent by name (`config.dispatch`) or by beat (CELERY_BEAT_SCHEDULE); safe to run twice: the
integrity check stores each flag once (tables.integrity).
"""

from __future__ import annotations

from celery import shared_task

from tables.integrity import check_integrity as check


@shared_task(name="tables.check_integrity")
def check_integrity() -> int:
    """Compare every table's and pool's award counts with the exact odds; store new flags
    (beat, INTEGRITY_CHECK_SECONDS). Returns how many were stored."""
    return len(check())
