"""What Celery beat starts, and how often: each entry's period is read from the settings module of
its concern; the crontab entries are in UTC (CELERY_TIMEZONE, config.settings.cache_and_celery).

DISPLAY_REFRESH_SECONDS (30): how often beat republishes every sign's figures from PostgreSQL.

Invariant: every periodic task of jackpot.tasks and tables.tasks has exactly one entry here.
"""

from celery.schedules import crontab

from config.settings.club import CLUB_SESSION_CHECK_SECONDS
from config.settings.env import env_int
from config.settings.exports import EXPORT_SWEEP_SECONDS
from config.settings.integrity import INTEGRITY_CHECK_SECONDS, WATCH_SECONDS
from config.settings.journal import (
    HISTORY_FOLD_SECONDS,
    RECONCILE_DAILY_AT,
    RECONCILE_SECONDS,
    VERIFICATION_SWEEP_SECONDS,
)
from config.settings.notifications import OUTBOX_SWEEP_SECONDS
from config.settings.progressive import NOTICE_CHECK_SECONDS, ORPHANS_CHECK_SECONDS

# What beat starts, and how often (seconds).
DISPLAY_REFRESH_SECONDS = env_int("DISPLAY_REFRESH_SECONDS", 30)
# RECONCILE_DAILY_AT is a valid HH:MM (config.settings.journal refuses any other).
_daily_hour, _daily_minute = (int(part) for part in RECONCILE_DAILY_AT.split(":"))
CELERY_BEAT_SCHEDULE = {
    "refresh-displays": {
        "task": "jackpot.refresh_displays",
        "schedule": float(DISPLAY_REFRESH_SECONDS),
    },
    "check-integrity": {
        "task": "tables.check_integrity",
        "schedule": float(INTEGRITY_CHECK_SECONDS),
    },
    # Silent terminals and another copy of the database, as significant events (tables.watch).
    "watch-floor": {
        "task": "tables.watch",
        "schedule": float(WATCH_SECONDS),
    },
    # Export jobs whose task was never sent (Redis down) or whose builder died; files past their
    # retention deleted.
    "sweep-exports": {
        "task": "jackpot.sweep_exports",
        "schedule": float(EXPORT_SWEEP_SECONDS),
    },
    # Every pool recomputed from the journal, the chains verified since the newest checkpoint
    # (the daily run below, from the first event); alerts on any difference.
    "reconcile": {
        "task": "tables.reconcile",
        "schedule": float(RECONCILE_SECONDS),
    },
    # The new audit events folded into the pools' history days (tables.audit.history).
    "fold-history": {
        "task": "tables.fold_history",
        "schedule": float(HISTORY_FOLD_SECONDS),
    },
    "reconcile-daily": {
        "task": "tables.reconcile_daily",
        "schedule": crontab(hour=_daily_hour, minute=_daily_minute),
    },
    # Full verifications asked for whose task Redis never got, or whose worker died.
    "sweep-verifications": {
        "task": "tables.sweep_verifications",
        "schedule": float(VERIFICATION_SWEEP_SECONDS),
    },
    # Outbox messages whose relay was never sent (Redis down at the commit), whose relay died, or
    # whose webhook deliveries are due for a retry.
    "sweep-outbox": {
        "task": "jackpot.sweep_outbox",
        "schedule": float(OUTBOX_SWEEP_SECONDS),
    },
    # The open session closed once its club day has ended (tables.club.sessions).
    "close-club-day": {
        "task": "tables.close_club_day",
        "schedule": float(CLUB_SESSION_CHECK_SECONDS),
    },
    # Winners' identities past WINNER_IDENTITY_RETENTION_DAYS deleted, once a day
    # (jackpot.awards.winners).
    "purge-winner-identities": {
        "task": "jackpot.purge_winner_identities",
        "schedule": crontab(hour=5, minute=30),
    },
    # Notices unsent past their deadline, each told once (jackpot.pools.notices, SE22).
    "notices-overdue": {
        "task": "jackpot.notices_overdue",
        "schedule": float(NOTICE_CHECK_SECONDS),
    },
    # Orphans past their season made final, once (jackpot.pools.orphans, SE23).
    "orphans-final": {
        "task": "jackpot.orphans_final",
        "schedule": float(ORPHANS_CHECK_SECONDS),
    },
}
