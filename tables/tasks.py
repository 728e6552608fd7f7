"""The tables' Celery tasks: entry points like views, as thin (see jackpot.tasks).

Sent by name (`core.dispatch`) or by beat (CELERY_BEAT_SCHEDULE); safe to run twice: the
integrity check stores each flag once (tables.audit.integrity), a reconciliation stores one report
per scheduled run (its run key: the beat message's task id, which a redelivery keeps, or the UTC
date of the daily report; tables.audit.reconciliation), the history's fold folds each event once
(its cursors move in the transaction that folds; tables.audit.history), the watch records each
silence and each new life of the database once (tables.watch), the club day's end closes the
open session once (tables.club.sessions).
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from tables.audit import award_odds
from tables.audit.history import fold_history as fold
from tables.audit.integrity import check_integrity as check
from tables.audit.reconciliation import reconcile as run_reconciliation
from tables.audit.verification_jobs import verification_run, verification_sweep
from tables.club.sessions import close_at_day_end
from tables.watch import watch as watch_floor


@shared_task(name="tables.check_integrity")
def check_integrity() -> int:
    """Compare every table's and pool's award counts with the exact odds; store new flags
    (beat, INTEGRITY_CHECK_SECONDS). Returns how many were stored."""
    return len(check())


@shared_task(name=award_odds.TASK)
def check_award_odds(table_id: int) -> int:
    """Test a table's and its terminals' award counts against the PAR sheet's odds, sent after
    a settlement that wrote fixed awards commits (tables.audit.award_odds). Returns how many
    alarms were recorded."""
    return len(award_odds.check_award_odds([table_id]))


@shared_task(name="tables.reconcile", bind=True)
def reconcile(self: Any) -> int:
    """Recompute every pool from the journal, verify the chains, check the meter identity, store
    the report and alert on any difference (beat, RECONCILE_SECONDS). Returns the report's id."""
    task_id = self.request.id
    key = f"periodic:{task_id}" if task_id else None
    return run_reconciliation(run_key=key).pk


@shared_task(name="tables.reconcile_daily")
def reconcile_daily() -> int:
    """The daily report (beat, RECONCILE_DAILY_AT UTC): the same checks from the first event
    (the daily full verification), stored with `daily`, at most one per UTC day. Returns the
    report's id."""
    today = timezone.now().date().isoformat()  # USE_TZ: now() is in UTC
    return run_reconciliation(run_key=f"daily:{today}", daily=True).pk


#: The most folds (transactions) one run makes before leaving the rest to the next run.
FOLDS_PER_RUN = 50


@shared_task(name="tables.fold_history")
def fold_history() -> int:
    """Fold the new audit events into the pools' history days (beat, HISTORY_FOLD_SECONDS), a
    transaction of at most HISTORY_FOLD_LIMIT events at a time until none is left (or
    FOLDS_PER_RUN). Returns how many events were folded."""
    folded = 0
    for _ in range(FOLDS_PER_RUN):
        done = fold()
        folded += done
        if done < settings.HISTORY_FOLD_LIMIT:
            break
    return folded


@shared_task(name="tables.verify_journal")
def run_verification(job_id: int) -> bool | None:
    """Run a full verification asked for (`tables.audit.verification_jobs`): a job finished or whose
    runner is alive is left alone (None); otherwise its verdict."""
    run = verification_run(job_id)
    return None if run is None else run.ok


@shared_task(name="tables.sweep_verifications")
def sweep_verifications() -> list[int]:
    """Send again the full verifications Redis never got or whose worker died (beat,
    VERIFICATION_SWEEP_SECONDS)."""
    return verification_sweep()


@shared_task(name="tables.watch")
def watch() -> list[int]:
    """Record the significant events the floor's watch sees: silent terminals, another copy of
    the database (beat, WATCH_SECONDS). Returns the tables found silent."""
    return watch_floor().silent_tables


@shared_task(name="tables.close_club_day")
def close_club_day() -> int | None:
    """Close the open session once the club day it opened on has ended (beat,
    CLUB_SESSION_CHECK_SECONDS; tables.club.sessions). Safe to run twice and on two workers: the
    `club` chain's head serializes them. Returns the closed session's id, or None."""
    session = close_at_day_end()
    return None if session is None else session.pk
