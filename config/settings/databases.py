"""PostgreSQL (or the embedded SQLite file) and the bounds that make the service fail closed.

Where things run is read from the environment: DATABASE_URL is PostgreSQL in production and tests.
Unset: an SQLite file with IMMEDIATE transactions (every write transaction takes the database
lock up front, so the service's locking stays correct), the embedded default for a first
`make run`.

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
- DATABASE_REPLICA_URL (unset): the standby the auditors' heavy reads use (`core.replicas`);
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
  setting an operator could forget.

Invariants: every PostgreSQL alias, the replica's too, goes through `_postgresql`, so each has the
deadline backend (POSTGRESQL) and this process's limits; the replica is never pooled.
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
