"""The auditors' background exports (jackpot.reporting.export_jobs, docs/operations.md).

EXPORT_DIR (var/exports), where workers write the files and the web reads them (one directory both
see); EXPORT_RETENTION_HOURS (72), how long a finished file is kept; EXPORT_BATCH_SIZE (2000),
awards read per statement; EXPORT_SWEEP_SECONDS (60), how often beat's sweeper runs;
EXPORT_RESEND_AFTER_SECONDS (60), after which a job still queued is sent again;
EXPORT_STALL_SECONDS (600), after which a running job that wrote no progress is built anew;
EXPORT_SYNC_MAX_DAYS (31), the longest from-to range the synchronous export.csv streams (longer
or open ranges: 400 range_too_large, a background export instead).

Invariant: every figure here is 1 or more (start-up stops otherwise).
"""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.settings.application import VAR_DIR
from config.settings.env import env_int, env_str

# The auditors' background exports (jackpot.reporting.export_jobs).
EXPORT_DIR = Path(env_str("EXPORT_DIR", str(VAR_DIR / "exports")))
EXPORT_RETENTION_HOURS = env_int("EXPORT_RETENTION_HOURS", 72)
EXPORT_BATCH_SIZE = env_int("EXPORT_BATCH_SIZE", 2000)
EXPORT_SWEEP_SECONDS = env_int("EXPORT_SWEEP_SECONDS", 60)
EXPORT_RESEND_AFTER_SECONDS = env_int("EXPORT_RESEND_AFTER_SECONDS", 60)
# Longer than a batch can take (a worker's statement_timeout, deploy/systemd): a builder that
# wrote no progress for this long is dead, and its job is built anew.
EXPORT_STALL_SECONDS = env_int("EXPORT_STALL_SECONDS", 600)
# export.csv holds a web worker while it streams: a range longer than this goes to a background
# export (docs/api.md 5.2), so a request never costs more than a month of awards.
EXPORT_SYNC_MAX_DAYS = env_int("EXPORT_SYNC_MAX_DAYS", 31)
for _name in (
    "EXPORT_SYNC_MAX_DAYS",
    "EXPORT_RETENTION_HOURS",
    "EXPORT_BATCH_SIZE",
    "EXPORT_SWEEP_SECONDS",
    "EXPORT_RESEND_AFTER_SECONDS",
    "EXPORT_STALL_SECONDS",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
