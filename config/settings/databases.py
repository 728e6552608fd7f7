"""PostgreSQL (or the embedded SQLite file) and the bounds that make the service fail closed.

DATABASE_URL is PostgreSQL in production and tests; unset, an SQLite file with IMMEDIATE
transactions (`make run`'s first default). With PostgreSQL unreachable or stuck, a terminal
gets 503 `progressive_closed` within its 2 s (compliance 28): connect deadline, statement, lock,
TCP and commit timeouts, each from the environment (0 turns one off). Behind pgbouncer
(DATABASE_POOLER=transaction) nothing lives in the session.

Invariants: every PostgreSQL alias, the replica's too, goes through `_postgresql`, so each has
the deadline backend and this process's limits; the replica is never pooled.

Each setting and its default: docs/operations.md, "The modules, in detail".
"""

from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.settings.application import VAR_DIR
from config.settings.env import env_int, env_str
from core.replicas import REPLICA

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
# The auditors' heavy reads on a standby (core.replicas, docs/operations.md "High
# availability"): straight to PostgreSQL (HAProxy's standby port), never through the pooler.
# Unset (the terminals' instances, tests, `make run`): everything reads the primary.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL")
if DATABASE_REPLICA_URL:
    DATABASES[REPLICA] = _postgresql(DATABASE_REPLICA_URL, pooled=False)
DATABASE_ROUTERS = ["core.replicas.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
