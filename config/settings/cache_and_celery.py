"""Redis, as the cache and as Celery's broker, and how tasks are delivered.

REDIS_URL is the Celery broker and the cache. Unset: tasks run eagerly in-process and the cache is
local memory. Redis is never the truth: money moves the same with it down.
REDIS_BREAKER_SECONDS (5): how long Redis is skipped after it failed (`core.circuit`).
Background work (Celery, docs/operations.md): CELERY_QUEUE (jackpot), the queue the web sends to
and the worker takes from; CELERY_VISIBILITY_TIMEOUT_SECONDS (3600), after which Redis gives an
unacknowledged task of a dead worker to another; BEAT_SCHEDULE_FILE (var/celerybeat-schedule).
What beat runs, and how often, is config.settings.schedule.

Invariants: delivery is at least once (acks late, rejected on a lost worker, one task prefetched),
so every task is idempotent; a web process never waits on a broker or cache that is down (their
socket timeouts are a quarter second).
"""

from config.settings.application import VAR_DIR
from config.settings.env import env_int, env_str

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
    # (core.dispatch): connecting gives up as fast as the cache's Redis calls do.
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
