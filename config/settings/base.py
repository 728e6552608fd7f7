"""Settings shared by every environment.

Where things run is read from the environment:
- DATABASE_URL: PostgreSQL in production and tests. Unset: an SQLite file with IMMEDIATE
  transactions (every write transaction takes the database lock up front, so the service's
  locking stays correct), the embedded default for a first `make run`.
- REDIS_URL: the Celery broker and the cache. Unset: tasks run eagerly in-process and the cache is
  local memory. Redis is never the truth: money moves the same with it down.

Failing closed (compliance requirement 28): with PostgreSQL unreachable or stuck, a terminal gets
503 `progressive_closed` within its 2 s of patience (`config.handlers`), never a wait without end.
The bounds, each from the environment (0 turns one off):
- DATABASE_CONNECT_DEADLINE_MS (1500): how long a request waits for a new connection in all
  (`config.database`; libpq's own `connect_timeout` cannot go under 2 s);
- DATABASE_CONNECT_TIMEOUT (2, seconds): libpq's `connect_timeout`, for each address tried, and
  for connections made outside requests;
- DATABASE_STATEMENT_TIMEOUT_MS (1500): the server cancels a statement that runs longer (give
  long commands more: `DATABASE_STATEMENT_TIMEOUT_MS=0 manage.py migrate`);
- DATABASE_LOCK_TIMEOUT_MS (1000): the server gives up waiting for a row lock, before the
  statement's own limit;
- DATABASE_TCP_USER_TIMEOUT_MS (1500): the kernel drops a connection whose data the server has
  not acknowledged for that long (a server gone from the network mid-request);
- DATABASE_COMMIT_TIMEOUT_MS (0: none): a COMMIT still waiting for the synchronous standby
  after this long is cancelled and answered 503 (`config.database`; `make cluster HA=1` sets
  500: a commit on a healthy pair takes a millisecond);
- DATABASE_REPLICA_URL (unset): the standby the auditors' heavy reads use (`config.replicas`);
- PROGRESSIVE_CLOSED_RETRY_AFTER (2, seconds): the 503's Retry-After;
- DATABASE_POOLER ("" or "transaction"): "transaction" when DATABASE_URL is pgbouncer in
  transaction pooling (`make cluster`, docs/operations.md "Topology"). A server connection then
  serves another client after every transaction, so nothing may live in the session: no
  server-side cursors, no prepared statements (pgbouncer 1.18, Debian bookworm's, does not
  track them; 1.21 would), and the limits above cannot ride on the libpq `options` startup
  parameter (pgbouncer refuses it). They are applied twice instead, neither of which outlives a
  transaction or leaks to another client: the application role's own defaults (`ALTER ROLE ..
  SET`, deploy/postgres-roles.sql) bound every statement, a lone autocommit read included; and
  `config.database` opens every transaction with `SET LOCAL` of this process's figures (the
  worker's longer limit, a check's none), so the money path's bound does not hang on a role
  setting an operator could forget;
- REDIS_BREAKER_SECONDS (5): how long Redis is skipped after it failed (`config.circuit`).

Background work (Celery, docs/operations.md): CELERY_QUEUE (jackpot), the queue the web sends to
and the worker takes from; CELERY_VISIBILITY_TIMEOUT_SECONDS (3600), after which Redis gives an
unacknowledged task of a dead worker to another; BEAT_SCHEDULE_FILE (var/celerybeat-schedule);
DISPLAY_REFRESH_SECONDS (30), how often beat republishes every sign's figures from PostgreSQL.

Integrity monitoring (tables.integrity, docs/operations.md "Integrity flags"): INTEGRITY_ALPHA
(0.001), the family-wise level below which an award count is flagged, a decimal in (0, 1);
INTEGRITY_WINDOW_HOURS (0: since each pool was created), the rounds looked at;
INTEGRITY_CHECK_SECONDS (3600), how often beat runs the check. Its void watch (tables.voids):
SHIFT_HOURS (8, a divisor of 24), the shifts the club day is cut into from midnight;
INTEGRITY_VOID_SHIFTS (21), the shifts it reads, the current one included;
INTEGRITY_VOID_MIN_ROUNDS (30), the decided rounds a table needs in a shift (or the window) to
be tested.

The auditors' background exports (jackpot.export_jobs, docs/operations.md): EXPORT_DIR
(var/exports), where workers write the files and the web reads them (one directory both see);
EXPORT_RETENTION_HOURS (72), how long a finished file is kept; EXPORT_BATCH_SIZE (2000), awards
read per statement; EXPORT_SWEEP_SECONDS (60), how often beat's sweeper runs;
EXPORT_RESEND_AFTER_SECONDS (60), after which a job still queued is sent again;
EXPORT_STALL_SECONDS (600), after which a running job that wrote no progress is built anew;
EXPORT_SYNC_MAX_DAYS (31), the longest from-to range the synchronous export.csv streams (longer
or open ranges: 400 range_too_large, a background export instead).

A pool's history by club day (tables.history, docs/operations.md "The history's fold"):
HISTORY_FOLD_SECONDS (60), how often beat folds the new audit events into the day rows;
HISTORY_FOLD_LIMIT (20000), the most events one fold's transaction takes; HISTORY_FOLD_PAGE
(2000), events read per statement.

The floor's watch (tables.watch, docs/operations.md "Significant events"): WATCH_SECONDS (60), how
often beat looks; TERMINAL_SILENT_SECONDS (900), how long a table open for play may go without a
round before its terminal's silence is a significant event.

Reconciliation (tables.reconciliation, docs/operations.md "Reconciliation"): RECONCILE_SECONDS
(300), how often beat recomputes every pool from the journal; RECONCILE_DAILY_AT (06:45), the
UTC time HH:MM of the daily report; JOURNAL_ANCHOR_DIR (unset), the directory of the journal's
anchor files (anchor_journal) each run also checks the chains against.
"""

import ipaddress
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from config.logs import formatter_config
from config.replicas import REPLICA
from config.settings.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

# Production refuses this key (config.settings.production): it is public.
DEVELOPMENT_SECRET_KEY = "insecure-development-key-never-used-in-production"
SECRET_KEY = env_str("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
DEBUG = env_bool("DEBUG", default=False)

# The key of the journal's hash chain (HMAC-SHA256, jackpot.canonical.chain_hash): kept outside
# the database, so a database password alone cannot recompute the hashes of an edited history.
# Every process that writes or verifies the journal (web, worker, verify_journal) needs the same
# key. Production refuses this development key, the example of deploy/env.example, and any key
# under 32 bytes (config.settings.production).
DEVELOPMENT_JOURNAL_HMAC_KEY = "insecure-development-journal-key-never-used-in-production"
JOURNAL_HMAC_KEY = env_str("JOURNAL_HMAC_KEY", DEVELOPMENT_JOURNAL_HMAC_KEY)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The staff's second factor (TOTP) and its recovery codes (django-otp's static tokens).
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "jackpot",
    "tables",
]

MIDDLEWARE = [
    # First: every later line of the request's logs carries its id (config.request_id), and the
    # request is timed from here (config.monitoring).
    "config.request_id.RequestIdMiddleware",
    "config.monitoring.MetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): whether this session signed in with its second factor
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_CONNECT_DEADLINE_MS = env_int("DATABASE_CONNECT_DEADLINE_MS", 1500)
DATABASE_CONNECT_TIMEOUT = env_int("DATABASE_CONNECT_TIMEOUT", 2)
DATABASE_STATEMENT_TIMEOUT_MS = env_int("DATABASE_STATEMENT_TIMEOUT_MS", 1500)
DATABASE_LOCK_TIMEOUT_MS = env_int("DATABASE_LOCK_TIMEOUT_MS", 1000)
DATABASE_TCP_USER_TIMEOUT_MS = env_int("DATABASE_TCP_USER_TIMEOUT_MS", 1500)
DATABASE_COMMIT_TIMEOUT_MS = env_int("DATABASE_COMMIT_TIMEOUT_MS", 0)
PROGRESSIVE_CLOSED_RETRY_AFTER = env_int("PROGRESSIVE_CLOSED_RETRY_AFTER", 2)

POSTGRESQL = "config.database"
DATABASE_POOLER = env_str("DATABASE_POOLER").strip().lower()
if DATABASE_POOLER not in ("", "transaction"):
    raise ImproperlyConfigured(
        "DATABASE_POOLER must be empty (PostgreSQL itself) or 'transaction' (pgbouncer in"
        " transaction pooling)"
    )


def _postgresql(url: str, *, pooled: bool) -> dict[str, Any]:
    """One PostgreSQL alias: Django's backend with a deadline on new connections
    (config.database), and this process's limits (the docstring above)."""
    database: dict[str, Any] = dict(dj_database_url.parse(url))
    if database["ENGINE"] != "django.db.backends.postgresql":
        return database
    database["ENGINE"] = POSTGRESQL
    options = database.setdefault("OPTIONS", {})
    if pooled:
        # A named cursor lives across the transactions that fetch it; psycopg prepares a
        # statement on a server connection the next one may not get (docstring above).
        database["DISABLE_SERVER_SIDE_CURSORS"] = True
        options["prepare_threshold"] = None
    else:
        server = (
            f"-c statement_timeout={DATABASE_STATEMENT_TIMEOUT_MS}"
            f" -c lock_timeout={DATABASE_LOCK_TIMEOUT_MS}"
        )
        options["options"] = f"{options.get('options', '')} {server}".strip()
    options.setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT)
    options.setdefault("tcp_user_timeout", DATABASE_TCP_USER_TIMEOUT_MS)
    return database


DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": _postgresql(DATABASE_URL, pooled=DATABASE_POOLER == "transaction")}
else:
    VAR_DIR.mkdir(exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH", str(VAR_DIR / "db.sqlite3")),
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
        }
    }
# The auditors' heavy reads on a standby (config.replicas, docs/operations.md "High
# availability"): straight to PostgreSQL (HAProxy's standby port), never through the pooler.
# Unset (the terminals' instances, tests, `make run`): everything reads the primary.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL")
if DATABASE_REPLICA_URL:
    DATABASES[REPLICA] = _postgresql(DATABASE_REPLICA_URL, pooled=False)
DATABASE_ROUTERS = ["config.replicas.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
REDIS_BREAKER_SECONDS = env_int("REDIS_BREAKER_SECONDS", 5)
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "jackpot"),
            # A cache that is down must fail fast: the service falls back to PostgreSQL.
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
# At least once: a task is acknowledged when it has run, and one whose worker died (kill -9, OOM)
# is given back to the queue, so tasks must be idempotent (jackpot.tasks). Redis redelivers an
# unacknowledged task after the visibility timeout: longer than any task runs.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT_SECONDS", 3600),
    # A web process sends a task once, and must not wait on a broker that is down
    # (config.dispatch): connecting gives up as fast as the cache's Redis calls do.
    "socket_connect_timeout": 0.25,
    "max_retries": 0,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 0.5
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# The worker logs with LOGGING (config.celery answers setup_logging): never Celery's own handlers.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TASK_IGNORE_RESULT = True  # no result backend: a task's outcome is in PostgreSQL
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "jackpot")
# Beat's crontab entries (the daily reconciliation) are read in UTC, whatever TIME_ZONE says.
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = env_str("BEAT_SCHEDULE_FILE", str(VAR_DIR / "celerybeat-schedule"))
# The auditors' background exports (jackpot.export_jobs).
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
# The outbox (jackpot.outbox): work recorded in the money's transaction, relayed after commit.
# The sweeper (beat, every OUTBOX_SWEEP_SECONDS) sends again a pending message whose relay has not
# finished it OUTBOX_RESEND_AFTER_SECONDS after the commit (Redis was down), or whose retry is due.
# A relay holds a message, and a webhook send its delivery, for OUTBOX_LEASE_SECONDS: longer than
# a send can take (WEBHOOK_TIMEOUT_SECONDS), so a lease runs out only when its worker died.
OUTBOX_SWEEP_SECONDS = env_int("OUTBOX_SWEEP_SECONDS", 15)
OUTBOX_RESEND_AFTER_SECONDS = env_int("OUTBOX_RESEND_AFTER_SECONDS", 30)
OUTBOX_LEASE_SECONDS = env_int("OUTBOX_LEASE_SECONDS", 60)
# Big-win notifications (jackpot.notifications, jackpot.webhooks): every award of at least
# NOTIFY_AWARD_CENTS, and every jackpot hit, posted to each receiver of WEBHOOK_RECEIVERS, signed
# with that receiver's own secret, retried with exponential backoff (WEBHOOK_BACKOFF_SECONDS,
# doubled per attempt up to WEBHOOK_BACKOFF_MAX_SECONDS) until a 2xx.
# WEBHOOK_RECEIVERS: comma-separated `name=url` (cage=https://cage.club.internal/hooks/jackpot);
# receiver `name`'s secret is WEBHOOK_SECRET_<NAME>, required. Each receiver holds its own secret
# only, so none can make, or verify, another's deliveries (docs/operations.md "Big-win
# notifications"). Read here as {url: secret}.
NOTIFY_AWARD_CENTS = env_int("NOTIFY_AWARD_CENTS", 100_000)
for _name in ("WEBHOOK_URLS", "WEBHOOK_SECRET"):  # one secret shared by every receiver, before
    if env_str(_name):
        raise ImproperlyConfigured(
            f"{_name} is replaced by WEBHOOK_RECEIVERS (name=url, comma-separated) and a secret "
            "per receiver, WEBHOOK_SECRET_<NAME> (docs/operations.md, Big-win notifications)."
        )
WEBHOOK_RECEIVERS: dict[str, str] = {}
_receiver_names: set[str] = set()
for _receiver in env_list("WEBHOOK_RECEIVERS", []):
    _name, _, _url = _receiver.partition("=")
    _name, _url = _name.strip(), _url.strip()
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", _name) or _name in _receiver_names:
        raise ImproperlyConfigured(
            f"WEBHOOK_RECEIVERS: {_receiver!r} is not name=url with a name of its own, of"
            " lower-case letters, digits and _ (cage=https://cage.club.internal/hooks/jackpot)"
        )
    _receiver_names.add(_name)
    if not re.fullmatch(r"https?://[^/\s]+(/\S*)?", _url):
        raise ImproperlyConfigured(f"WEBHOOK_RECEIVERS: {_url!r} is not an http(s):// URL")
    _secret = env_str(f"WEBHOOK_SECRET_{_name.upper()}")
    if not _secret:
        raise ImproperlyConfigured(
            f"WEBHOOK_SECRET_{_name.upper()} must be set: the secret of receiver {_name!r}"
        )
    if _url in WEBHOOK_RECEIVERS:
        raise ImproperlyConfigured(f"WEBHOOK_RECEIVERS: {_url!r} is named twice")
    WEBHOOK_RECEIVERS[_url] = _secret
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 5)
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", 10)
WEBHOOK_BACKOFF_MAX_SECONDS = env_int("WEBHOOK_BACKOFF_MAX_SECONDS", 3600)
for _name in (
    "OUTBOX_SWEEP_SECONDS",
    "OUTBOX_RESEND_AFTER_SECONDS",
    "OUTBOX_LEASE_SECONDS",
    "NOTIFY_AWARD_CENTS",
    "WEBHOOK_TIMEOUT_SECONDS",
    "WEBHOOK_BACKOFF_SECONDS",
    "WEBHOOK_BACKOFF_MAX_SECONDS",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
if OUTBOX_LEASE_SECONDS <= WEBHOOK_TIMEOUT_SECONDS:
    raise ImproperlyConfigured("OUTBOX_LEASE_SECONDS must be longer than WEBHOOK_TIMEOUT_SECONDS")
# What beat starts, and how often (seconds).
DISPLAY_REFRESH_SECONDS = env_int("DISPLAY_REFRESH_SECONDS", 30)
INTEGRITY_CHECK_SECONDS = env_int("INTEGRITY_CHECK_SECONDS", 3600)
RECONCILE_SECONDS = env_int("RECONCILE_SECONDS", 300)
# The floor's watch (tables.watch): how often it looks, and how long a table open for play may
# go without a round before its silence is a significant event (SE01).
WATCH_SECONDS = env_int("WATCH_SECONDS", 60)
TERMINAL_SILENT_SECONDS = env_int("TERMINAL_SILENT_SECONDS", 900)
for _name in ("WATCH_SECONDS", "TERMINAL_SILENT_SECONDS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
# Full verifications of the journal run by a worker (tables.verification_jobs): a run whose
# heartbeat is older than this is dead, and run again; the sweeper looks every minute.
VERIFICATION_STALL_SECONDS = env_int("VERIFICATION_STALL_SECONDS", 600)
VERIFICATION_SWEEP_SECONDS = env_int("VERIFICATION_SWEEP_SECONDS", 60)
for _name in ("VERIFICATION_STALL_SECONDS", "VERIFICATION_SWEEP_SECONDS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
# The history's fold (tables.history): the new events into the day rows, at most a limit per
# transaction (a first fold on an old journal is many short ones); between two folds a history
# read folds the rest itself, so this sets what a read costs, never whether it is exact.
HISTORY_FOLD_SECONDS = env_int("HISTORY_FOLD_SECONDS", 60)
HISTORY_FOLD_LIMIT = env_int("HISTORY_FOLD_LIMIT", 20_000)
HISTORY_FOLD_PAGE = env_int("HISTORY_FOLD_PAGE", 2000)
for _name in ("HISTORY_FOLD_SECONDS", "HISTORY_FOLD_LIMIT", "HISTORY_FOLD_PAGE"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
if RECONCILE_SECONDS < 1:
    raise ImproperlyConfigured("RECONCILE_SECONDS must be 1 or more")
RECONCILE_DAILY_AT = env_str("RECONCILE_DAILY_AT", "06:45")
_daily = re.fullmatch(r"([01][0-9]|2[0-3]):([0-5][0-9])", RECONCILE_DAILY_AT)
if _daily is None:
    raise ImproperlyConfigured("RECONCILE_DAILY_AT must be a UTC time HH:MM, e.g. 06:45")
# The journal's anchor files (jackpot.anchors), checked by each reconciliation when set.
JOURNAL_ANCHOR_DIR = env_str("JOURNAL_ANCHOR_DIR") or None
# Whether the anchors must be another system user's (tables.selfcheck, item `anchors`): on in
# production, where jackpot-anchor writes them and this service may only read; off here, and in
# `make cluster`, whose processes are all one user (the self-check then checks the modes alone).
ANCHORS_SEPARATE_USER = env_bool("ANCHORS_SEPARATE_USER", default=False)
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
    # The new audit events folded into the pools' history days (tables.history).
    "fold-history": {
        "task": "tables.fold_history",
        "schedule": float(HISTORY_FOLD_SECONDS),
    },
    "reconcile-daily": {
        "task": "tables.reconcile_daily",
        "schedule": crontab(hour=int(_daily[1]), minute=int(_daily[2])),
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
    # Winners' identities past WINNER_IDENTITY_RETENTION_DAYS deleted, once a day (jackpot.winners).
    "purge-winner-identities": {
        "task": "jackpot.purge_winner_identities",
        "schedule": crontab(hour=5, minute=30),
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"  # the API speaks English; the display page chooses its own language
LANGUAGES = [("fr", "Français"), ("en", "English")]
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

# Terminals post small JSON bodies; anything larger is refused before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.StrictJSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "EXCEPTION_HANDLER": "config.handlers.api_exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("THROTTLE_ANON", "600/min"),
        "rules": env_str("THROTTLE_RULES", "1200/min"),
        "terminal": env_str("THROTTLE_TERMINAL", "6000/min"),
        # Per person (per address for the schema): the staff's reads that take seconds
        # (config.throttling.HeavyReadThrottle).
        "heavy_read": env_str("THROTTLE_HEAVY_READ", "60/min"),
    },
    "UNAUTHENTICATED_USER": None,
    # How many proxies in front of the service add to X-Forwarded-For: 0 means the client's
    # address is REMOTE_ADDR and a forged header cannot dodge the per-address throttle.
    "NUM_PROXIES": int(env_str("NUM_PROXIES", "0")),
}

# Mutual TLS for terminals (compliance requirement 39; docs/operations.md "Terminals' client
# certificates"): when on, the proxy in front ends each terminal's TLS with a client certificate
# it verified against the club's CA and says so in two headers it always sets itself
# (X-Client-Verify: its verification, SUCCESS or why not; X-Client-Subject: the certificate's
# subject, RFC 2253), and a terminal's request is refused unless the subject's CN names the
# table of its token (`table-<id>`).
TERMINAL_CLIENT_CERTIFICATES = env_bool("TERMINAL_CLIENT_CERTIFICATES", default=False)

SPECTACULAR_SETTINGS = {
    "TITLE": "Progressive jackpot service",
    "DESCRIPTION": "Ultimate Texas Hold'em and Stud Poker rules engine and the progressive ledger.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # JSON Schema 2020-12, pydantic's dialect: a null is said as strict validators read it
    # (config/openapi.py; OpenAPI 3.0's `nullable` beside a lone `$ref` meant nothing).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_responses",
    ],
    # A decision's `action` is a one-value enum in each of its shapes: one name per value.
    # A round's state is one enum wherever it appears (a round, the round list and its filter).
    "ENUM_NAME_OVERRIDES": {
        "FoldActionEnum": ["fold"],
        "PlayActionEnum": ["play"],
        "RoundStateEnum": ["open", "settled", "void"],
    },
    # Swagger UI's files are served from the installed package: no internet at run time.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# How long a round may stay open before it is "stale" (its result is not coming): the table's
# round list marks it and the pool report counts it (docs/api.md 2.10). A UTH hand takes a few
# minutes; 15 by default.
INTEGRITY_ALPHA = env_str("INTEGRITY_ALPHA", "0.001")
try:
    _alpha = Fraction(INTEGRITY_ALPHA)
except ValueError:
    raise ImproperlyConfigured("INTEGRITY_ALPHA must be a decimal number") from None
if not 0 < _alpha < 1:
    raise ImproperlyConfigured("INTEGRITY_ALPHA must lie strictly between 0 and 1")
INTEGRITY_WINDOW_HOURS = env_int("INTEGRITY_WINDOW_HOURS", 0)
if INTEGRITY_WINDOW_HOURS < 0:
    raise ImproperlyConfigured("INTEGRITY_WINDOW_HOURS must be 0 (since the pool began) or more")
SHIFT_HOURS = env_int("SHIFT_HOURS", 8)
if SHIFT_HOURS < 1 or 24 % SHIFT_HOURS:
    raise ImproperlyConfigured("SHIFT_HOURS must divide 24 (1, 2, 3, 4, 6, 8, 12 or 24)")
INTEGRITY_VOID_SHIFTS = env_int("INTEGRITY_VOID_SHIFTS", 21)
INTEGRITY_VOID_MIN_ROUNDS = env_int("INTEGRITY_VOID_MIN_ROUNDS", 30)
if INTEGRITY_VOID_SHIFTS < 1:
    raise ImproperlyConfigured("INTEGRITY_VOID_SHIFTS must be 1 or more")
if INTEGRITY_VOID_MIN_ROUNDS < 1:
    raise ImproperlyConfigured("INTEGRITY_VOID_MIN_ROUNDS must be 1 or more")
ROUND_STALE_AFTER_SECONDS = env_int("ROUND_STALE_AFTER_SECONDS", 15 * 60)
if ROUND_STALE_AFTER_SECONDS < 1:
    raise ImproperlyConfigured("ROUND_STALE_AFTER_SECONDS must be 1 or more (seconds)")

# The start-up self-check (`manage.py selfcheck`, compliance requirement 27; docs/operations.md):
# the approved checksum of what decides money in this build (`manage.py selfcheck
# --print-checksum` prints it), pinned by the operator. Production refuses to serve without it
# (config.settings.production); here a missing pin is reported, not fatal.
JACKPOT_CONFIG_SHA256 = env_str("JACKPOT_CONFIG_SHA256").strip().lower()
SELFCHECK_REQUIRE_PIN = False
# The settings that decide money, by name: their values are part of that checksum
# (jackpot.configuration). None does today: a pool's parameters live in its row, changed by
# audited events only. A setting that comes to decide money is named here.
MONEY_SETTINGS: tuple[str, ...] = ()

# The staff's failed logins allowed per user name and per address, the admin's and the floor
# pages' together (config.admin_login).
THROTTLE_ADMIN_LOGIN = env_str("THROTTLE_ADMIN_LOGIN", "5/min")

# The staff pages (tables.pages): where a session signs in, and the club named on payment slips.
LOGIN_URL = "/floor/login/"
CLUB_NAME = env_str("CLUB_NAME", "Cercle de jeux")

# Paying a winner (jackpot.winners, docs/operations.md "Winners' identities"): an award at or
# above WINNER_IDENTIFICATION_THRESHOLD_CENTS (EUR 2,000, where French anti-money-laundering rules
# make a gaming club identify a winner) is paid only with the winner's identity, stored encrypted
# under WINNER_IDENTITY_KEYS (comma-separated Fernet keys, kept outside the database: the first
# encrypts, every one decrypts, so a key is rotated by putting the new one first) and kept
# WINNER_IDENTITY_RETENTION_DAYS (5 years) after its recording, then purged
# (`manage.py purge_winner_identities`). No key here: production requires one, the test and local
# settings give their own.
WINNER_IDENTIFICATION_THRESHOLD_CENTS = env_int("WINNER_IDENTIFICATION_THRESHOLD_CENTS", 200_000)
WINNER_IDENTITY_KEYS = env_list("WINNER_IDENTITY_KEYS", [])
WINNER_IDENTITY_RETENTION_DAYS = env_int("WINNER_IDENTITY_RETENTION_DAYS", 1826)

# The staff's second factor (jackpot.second_factor): whoever signs in, at the floor's door or the
# admin's, gives a TOTP code or a recovery code after the password, and enrolls a device at their
# first sign-in; the API refuses a session without it (403 second_factor_required). Always on in
# production (which takes no environment value for it); config.settings.local turns it off for
# `make run`'s demo unless STAFF_SECOND_FACTOR_REQUIRED=1.
STAFF_SECOND_FACTOR_REQUIRED = True
# The issuer an authenticator app shows beside the account (the otpauth:// URI's).
OTP_TOTP_ISSUER = CLUB_NAME
# How long a sign-in may wait between its password and its last step (a code, a new password,
# an enrollment) before it starts again from the password.
STAFF_SIGN_IN_STEPS_SECONDS = 600

# The security log (`jackpot.security`): refusals of the API (config.handlers) and of Django
# (`django.security`: hosts not allowed, CSRF failures), the admin's logins and failed logins
# (config.admin_login), changes of parameters and access (jackpot.ledger).
# SECURITY_LOG=stderr (the default) writes it with the other logs, to stderr (the journal under
# systemd); a file path writes it there alone, reopened when logrotate moves it. Times are UTC.
SECURITY_LOG = env_str("SECURITY_LOG", "stderr").strip() or "stderr"
_security_handlers: dict[str, dict[str, object]] = {}
if SECURITY_LOG != "stderr":
    _security_handlers["security_file"] = {
        "class": "logging.handlers.WatchedFileHandler",
        "filename": SECURITY_LOG,
        "formatter": "plain",
    }

# Who may read /metrics (config.monitoring): the client's address (the peer's, REMOTE_ADDR) must be
# in one of these networks (comma-separated CIDRs). Loopback by default: Prometheus on the host,
# or nginx's internal listener (docs/operations.md "Metrics").
METRICS_ALLOWED_NETS = env_list("METRICS_ALLOWED_NETS", ["127.0.0.0/8", "::1/128"])
for _net in METRICS_ALLOWED_NETS:
    try:
        ipaddress.ip_network(_net, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"METRICS_ALLOWED_NETS: {_net!r} is not a network (CIDR, e.g. 10.0.0.0/8)"
        ) from None

# LOG_FORMAT (config.logs): "json", one JSON object per line with the request id (production,
# deploy/env.example), or "text" (the default: `make run`, the tests). Every handler uses it; the
# Celery worker (config.celery) and gunicorn (deploy/gunicorn.conf.py) too.
LOG_FORMAT = env_str("LOG_FORMAT", "text").strip().lower() or "text"
try:
    _formatter = formatter_config(LOG_FORMAT)
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None

LOGGING_CONFIG = "config.logs.configure"  # dictConfig, each record stamped with its request id
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": _formatter},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        **_security_handlers,
    },
    "loggers": {
        # Django's own refusals (a host not allowed, a CSRF failure, a suspicious request) too.
        name: {
            "level": "INFO",
            "handlers": list(_security_handlers),
            "propagate": not _security_handlers,
        }
        for name in ("jackpot.security", "django.security")
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
