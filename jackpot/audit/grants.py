"""What the application's PostgreSQL role may do, declared in one place, and the grants that make
it so (`manage.py grant_app_role`, run as the owner after every `migrate`).

Two roles (docs/operations.md, "PostgreSQL"): the owner, which runs the migrations and owns every
table, sequence and the schema; the application's role, which the web and the worker use and
which owns nothing. A table's owner can disable its triggers, drop them, or truncate it, so the
journal's protection holds only while the application's role owns nothing.

Invariants, checked by `problems()` (and `tests/jackpot/audit/test_database_roles.py`):
- the append-only tables (`APPEND_ONLY`, the tables whose triggers refuse UPDATE and DELETE)
  are granted SELECT and INSERT only: no UPDATE, DELETE, TRUNCATE, REFERENCES or TRIGGER;
- every other table gets what the code needs (`PRIVILEGES`), and a table not named there (a new
  model's, a future migration's) gets `DEFAULT`, so a migration never leaves the service without
  access, and the append-only list never depends on a default;
- sequences: USAGE (the identity columns' next values), nothing else;
- the schema: USAGE, never CREATE; the application's role owns no object in it, is not a
  superuser, and is not a member of the owner's role (it would inherit the ownership).
Grants are computed from the catalog each run, not from a list of the tables of today: running
the command after every migrate covers the tables that migrate made.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from psycopg import sql

ALL = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
READ_APPEND = frozenset({"SELECT", "INSERT"})
#: The journal and its verification's checkpoints: read and append only (the triggers of
#: migrations jackpot/0003_append_only, 0013_checkpoints, 0020_surveillance_review, and
#: tables/0014_session_rows_append_only).
APPEND_ONLY = frozenset(
    {
        "jackpot_transfer",
        "jackpot_auditevent",
        "jackpot_checkpoint",
        # surveillance's reviews and referral decisions (migration jackpot/0020)
        "jackpot_surveillancereview",
        "jackpot_referraldecision",
        # a session's snapshot, registers models 8 and 8 ter (migration tables/0014)
        "tables_sessiontable",
        "tables_sessionpool",
    }
)
#: A table not named below.
DEFAULT = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})
#: Tables the code never deletes from (or never changes), given less than the default.
PRIVILEGES: dict[str, frozenset[str]] = {
    **dict.fromkeys(APPEND_ONLY, READ_APPEND),
    # A chain's head: created at its first event, then moved by one UPDATE per event.
    "jackpot_auditchain": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Accounts are made with their pool and never change.
    "jackpot_account": READ_APPEND,
    # The database's identity: one row, made at first use when missing.
    "jackpot_databaseidentity": READ_APPEND,
    # Pools (their counters), awards (their way to payment), rounds: updated, never deleted.
    "jackpot_pool": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "jackpot_award": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_round": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_roundseat": READ_APPEND,
    # The club's sessions (their close) and drop counts (a recount, the confirmation): updated,
    # never deleted.
    "tables_clubsession": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_dropcount": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Parameter changes (their decision) and export jobs (their progress): never deleted.
    "jackpot_parameterchange": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "jackpot_exportjob": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Verification runs (a full run's progress and verdict): never deleted.
    "jackpot_verification": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # The outbox and its webhook deliveries (their claims and outcomes): never deleted, so every
    # notification and each attempt's outcome stays on record for the auditors.
    "jackpot_outboxmessage": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "jackpot_webhookdelivery": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Winners' identities: written once, never changed; deleted by the purge alone, and only past
    # their retention (the trigger of migration jackpot 0018_award_payment refuses the rest).
    "jackpot_winneridentity": frozenset({"SELECT", "INSERT", "DELETE"}),
    # Integrity flags: written once, never changed.
    "tables_integrityflag": READ_APPEND,
    # Tables, terminals, staff tokens (revoked, never deleted) and the answers stored for
    # terminals' retries (kept: a replay must find them): updated, never deleted.
    "tables_table": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_terminal": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "jackpot_stafftoken": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_idempotencyrecord": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Reconciliation reports: written once, whole, never changed.
    "tables_reconciliation": READ_APPEND,
    # A pool's history days and the fold's cursors (tables.audit.history): not append-only, the fold
    # adds each new event to its day's row and moves its chain's cursor; never deleted.
    "tables_historyday": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "tables_historycursor": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Notices (their sending, their overdue report) and the register of orphans (recovered or
    # final): updated, never deleted (jackpot.pools.notices, jackpot.pools.orphans).
    "jackpot_notice": frozenset({"SELECT", "INSERT", "UPDATE"}),
    "jackpot_orphanentry": frozenset({"SELECT", "INSERT", "UPDATE"}),
    # Migrations run as the owner; the service only reads which were applied.
    "django_migrations": frozenset({"SELECT"}),
}
SEQUENCE_PRIVILEGES = frozenset({"USAGE"})


def table_privileges(table: str) -> frozenset[str]:
    """What the application's role may do on `table`."""
    return PRIVILEGES.get(table, DEFAULT)


@dataclass(frozen=True)
class Relation:
    name: str
    kind: str  # "table" or "sequence"
    owner: str


def _schema() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        (schema,) = cursor.fetchone()
    return str(schema)


def relations() -> list[Relation]:
    """The tables (and views) and sequences of the service's schema, from the catalog."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, CASE WHEN c.relkind = 'S' THEN 'sequence' ELSE 'table' END,"
            " pg_get_userbyid(c.relowner)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')"
            " ORDER BY c.relname"
        )
        return [Relation(name, kind, owner) for name, kind, owner in cursor.fetchall()]


def role_problems(role: str) -> list[str]:
    """Why `role` cannot be the application's role as it stands (empty: it can)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb,"
            " pg_has_role(%s, current_user, 'USAGE'), %s = current_user"
            " FROM pg_roles WHERE rolname = %s",
            [role, role, role],
        )
        row = cursor.fetchone()
        if row is None:
            return [f"role {role} does not exist: create it first (deploy/postgres-roles.sql)"]
        superuser, bypass, create_role, create_db, inherits, is_owner = row
        problems = []
        if is_owner:
            problems.append(
                f"{role} is the role running this command: run it as the owner, "
                "naming the application's role"
            )
        elif inherits:
            problems.append(f"{role} is a member of the owner's role: it would own the tables")
        for flag, what in (
            (superuser, "SUPERUSER"),
            (bypass, "BYPASSRLS"),
            (create_role, "CREATEROLE"),
            (create_db, "CREATEDB"),
        ):
            if flag:
                problems.append(f"{role} has {what}: ALTER ROLE {role} NO{what}")
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND pg_get_userbyid(c.relowner) = %s",
            [role],
        )
        (owned,) = cursor.fetchone()
        if owned:
            problems.append(
                f"{role} owns {owned} objects of the schema (migrate ran as it): as a superuser, "
                f"REASSIGN OWNED BY {role} TO <owner>; then run this command again"
            )
        cursor.execute(
            "SELECT pg_get_userbyid(nspowner) = %s FROM pg_namespace"
            " WHERE nspname = current_schema()",
            [role],
        )
        (owns_schema,) = cursor.fetchone()
        if owns_schema:
            problems.append(f"{role} owns the schema: ALTER SCHEMA ... OWNER TO <owner>")
    return problems


def grant(role: str) -> list[tuple[str, str, frozenset[str]]]:
    """Give `role` exactly its privileges on every relation of the schema, and no CREATE in it.
    Call inside a transaction: the role keeps its old grants until the new ones commit."""
    who = sql.Identifier(role)
    schema = sql.Identifier(_schema())
    done: list[tuple[str, str, frozenset[str]]] = []
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(connection.settings_dict["NAME"]), who
            )
        )
        # PUBLIC may CREATE in `public` in a database made before PostgreSQL 15.
        cursor.execute(sql.SQL("REVOKE CREATE ON SCHEMA {} FROM PUBLIC, {}").format(schema, who))
        cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, who))
        for relation in relations():
            name = sql.Identifier(relation.name)
            if relation.kind == "sequence":
                wanted = SEQUENCE_PRIVILEGES
                target = sql.SQL("SEQUENCE {}").format(name)
            else:
                wanted = table_privileges(relation.name)
                target = sql.SQL("TABLE {}").format(name)
            cursor.execute(sql.SQL("REVOKE ALL ON {} FROM PUBLIC, {}").format(target, who))
            cursor.execute(
                sql.SQL("GRANT {} ON {} TO {}").format(
                    sql.SQL(", ").join(sql.SQL(p) for p in sorted(wanted)), target, who
                )
            )
            done.append((relation.name, relation.kind, wanted))
    return done


def problems(role: str) -> list[str]:
    """Every way `role`'s privileges differ from the declared ones (empty: they are exact)."""
    found = role_problems(role)
    if found and found[0].startswith(f"role {role} does not exist"):
        return found
    with connection.cursor() as cursor:
        cursor.execute("SELECT has_schema_privilege(%s, current_schema(), 'CREATE')", [role])
        if cursor.fetchone()[0]:
            found.append(f"{role} may CREATE in the schema")
        for relation in relations():
            if relation.kind == "sequence":
                cursor.execute(
                    "SELECT has_sequence_privilege(%s, quote_ident(%s)::regclass, 'USAGE'),"
                    " has_sequence_privilege(%s, quote_ident(%s)::regclass, 'SELECT'),"
                    " has_sequence_privilege(%s, quote_ident(%s)::regclass, 'UPDATE')",
                    [role, relation.name] * 3,
                )
                usage, select, update = cursor.fetchone()
                held = {
                    p
                    for p, has in (("USAGE", usage), ("SELECT", select), ("UPDATE", update))
                    if has
                }
                wanted = SEQUENCE_PRIVILEGES
            else:
                cursor.execute(
                    "SELECT "
                    + ", ".join(
                        ["has_table_privilege(%s, quote_ident(%s)::regclass, %s)"] * len(ALL)
                    ),
                    [value for p in ALL for value in (role, relation.name, p)],
                )
                held = {p for p, has in zip(ALL, cursor.fetchone(), strict=True) if has}
                wanted = table_privileges(relation.name)
            if held != wanted:
                has, should = ", ".join(sorted(held)) or "nothing", ", ".join(sorted(wanted))
                found.append(
                    f"{relation.kind} {relation.name}: {role} has {has}, should have {should}"
                )
    return found
