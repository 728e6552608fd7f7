"""The journal: the key of its hash chain, the full verifications run by workers, the fold of its
events into the history days, the reconciliations, and the anchor files they check against.

A pool's history by club day (tables.audit.history, docs/operations.md "The history's fold"):
HISTORY_FOLD_SECONDS (60), how often beat folds the new audit events into the day rows;
HISTORY_FOLD_LIMIT (20000), the most events one fold's transaction takes; HISTORY_FOLD_PAGE
(2000), events read per statement.

Reconciliation (tables.audit.reconciliation, docs/operations.md "Reconciliation"): RECONCILE_SECONDS
(300), how often beat recomputes every pool from the journal; RECONCILE_DAILY_AT (06:45), the
UTC time HH:MM of the daily report; JOURNAL_ANCHOR_DIR (unset), the directory of the journal's
anchor files (anchor_journal) each run also checks the chains against.

Invariants: the development key below is public, so production refuses it (and any key under 32
bytes); every period and limit is 1 or more; RECONCILE_DAILY_AT is a valid HH:MM
(config.settings.schedule reads its hour and minute from it).
"""

import re

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_bool, env_int, env_str

# The key of the journal's hash chain (HMAC-SHA256, jackpot.money.canonical.chain_hash): kept
# outside the database, so a database password alone cannot recompute the hashes of an edited
# history. Every process that writes or verifies the journal (web, worker, verify_journal) needs the
# same key. Production refuses this development key, the example of deploy/env.example, and any key
# under 32 bytes (config.settings.production).
DEVELOPMENT_JOURNAL_HMAC_KEY = "insecure-development-journal-key-never-used-in-production"
JOURNAL_HMAC_KEY = env_str("JOURNAL_HMAC_KEY", DEVELOPMENT_JOURNAL_HMAC_KEY)

# Full verifications of the journal run by a worker (tables.audit.verification_jobs): a run whose
# heartbeat is older than this is dead, and run again; the sweeper looks every minute.
VERIFICATION_STALL_SECONDS = env_int("VERIFICATION_STALL_SECONDS", 600)
VERIFICATION_SWEEP_SECONDS = env_int("VERIFICATION_SWEEP_SECONDS", 60)
for _name in ("VERIFICATION_STALL_SECONDS", "VERIFICATION_SWEEP_SECONDS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
# The history's fold (tables.audit.history): the new events into the day rows, at most a limit per
# transaction (a first fold on an old journal is many short ones); between two folds a history
# read folds the rest itself, so this sets what a read costs, never whether it is exact.
HISTORY_FOLD_SECONDS = env_int("HISTORY_FOLD_SECONDS", 60)
HISTORY_FOLD_LIMIT = env_int("HISTORY_FOLD_LIMIT", 20_000)
HISTORY_FOLD_PAGE = env_int("HISTORY_FOLD_PAGE", 2000)
for _name in ("HISTORY_FOLD_SECONDS", "HISTORY_FOLD_LIMIT", "HISTORY_FOLD_PAGE"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
RECONCILE_SECONDS = env_int("RECONCILE_SECONDS", 300)
if RECONCILE_SECONDS < 1:
    raise ImproperlyConfigured("RECONCILE_SECONDS must be 1 or more")
RECONCILE_DAILY_AT = env_str("RECONCILE_DAILY_AT", "06:45")
_daily = re.fullmatch(r"([01][0-9]|2[0-3]):([0-5][0-9])", RECONCILE_DAILY_AT)
if _daily is None:
    raise ImproperlyConfigured("RECONCILE_DAILY_AT must be a UTC time HH:MM, e.g. 06:45")
# The journal's anchor files (jackpot.audit.anchors), checked by each reconciliation when set.
JOURNAL_ANCHOR_DIR = env_str("JOURNAL_ANCHOR_DIR") or None
# Whether the anchors must be another system user's (tables.audit.selfcheck, item `anchors`): on in
# production, where jackpot-anchor writes them and this service may only read; off here, and in
# `make cluster`, whose processes are all one user (the self-check then checks the modes alone).
ANCHORS_SEPARATE_USER = env_bool("ANCHORS_SEPARATE_USER", default=False)
