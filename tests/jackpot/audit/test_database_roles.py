"""The application's PostgreSQL role, connected for real: it cannot alter history, owns nothing,
creates nothing, and still runs the whole service (compliance requirement 6).

The test server's `postgres` is a superuser: it plays the owner (it owns the test database's
tables, as the owner does in production), makes a fresh application role for this test, runs
`grant_app_role` as an operator does after `migrate`, and drops the role at the end. The refused
attempts leave a trace in the server's log (log_min_error_statement = error, PostgreSQL's
default): the test finds each one there, with the role's name, when the log can be read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from jackpot.audit import grants
from tests.conftest import Floor, make_floor
from tests.staff import person, staff_token

ROOT = Path(__file__).resolve().parents[3]


def _superuser(sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture
def app_role(transactional_db) -> Iterator[str]:
    """A new login role, granted as deploy/ says, dropped (with its grants) at the end."""
    role = f"jackpot_app_test_{uuid.uuid4().hex[:8]}"
    _superuser(f"CREATE ROLE {role} LOGIN")
    try:
        out = StringIO()
        call_command("grant_app_role", role, stdout=out)
        assert (
            out.getvalue().splitlines()[-1]
            == f"OK: {role} has exactly the privileges of jackpot.audit.grants"
        )
        yield role
    finally:
        _superuser(f"DROP OWNED BY {role}")
        _superuser(f"DROP ROLE {role}")


def app_url(role: str) -> str:
    """The test database's address for `role` (the test server trusts local connections)."""
    settings = connection.settings_dict
    host, port = settings["HOST"] or "127.0.0.1", settings["PORT"] or 5432
    return f"postgres://{role}@{host}:{port}/{settings['NAME']}"


def connect_as(role: str) -> psycopg.Connection:
    return psycopg.connect(app_url(role), autocommit=True)


def _server_log() -> str | None:
    """The server's log file as the server names it: the logging collector's current file, or
    (Debian's pg_ctlcluster sends stderr to a file) /var/log/postgresql/postgresql-<cluster>.log."""
    row = _superuser("SELECT pg_current_logfile(), current_setting('cluster_name')")[0]
    current, cluster = row
    if current:
        return str(current)
    if cluster:
        return f"/var/log/postgresql/postgresql-{str(cluster).replace('/', '-')}.log"
    return None


def _log_size(path: str) -> int | None:
    try:
        return int(_superuser("SELECT (pg_stat_file(%s)).size", [path])[0][0])
    except Exception:  # not there, or not readable by the server: no trace to check here
        return None


REFUSED = {
    "UPDATE jackpot_transfer SET amount_cents = amount_cents + 1": (
        "permission denied for table jackpot_transfer"
    ),
    "DELETE FROM jackpot_transfer": "permission denied for table jackpot_transfer",
    "TRUNCATE jackpot_transfer": "permission denied for table jackpot_transfer",
    "UPDATE jackpot_auditevent SET actor = 'x'": "permission denied for table jackpot_auditevent",
    "DELETE FROM jackpot_auditevent": "permission denied for table jackpot_auditevent",
    "TRUNCATE jackpot_auditevent": "permission denied for table jackpot_auditevent",
    "ALTER TABLE jackpot_transfer DISABLE TRIGGER ALL": "must be owner of table jackpot_transfer",
    "ALTER TABLE jackpot_auditevent DISABLE TRIGGER jackpot_auditevent_append_only": (
        "must be owner of table jackpot_auditevent"
    ),
    "DROP TRIGGER jackpot_transfer_append_only ON jackpot_transfer": (
        "must be owner of relation jackpot_transfer"
    ),
    "ALTER TABLE jackpot_transfer OWNER TO CURRENT_USER": "must be owner of table jackpot_transfer",
    "SET session_replication_role = replica": (
        'permission denied to set parameter "session_replication_role"'
    ),
    # Nothing the books rest on can be purged by the service's role (compliance 37): only the
    # owner could, and the verifier would then report what went missing.
    **{
        f"DELETE FROM {table}": f"permission denied for table {table}"
        for table in (
            "jackpot_award",
            "jackpot_pool",
            "jackpot_account",
            "jackpot_auditchain",
            "jackpot_parameterchange",
            "jackpot_exportjob",
            "jackpot_outboxmessage",
            "jackpot_webhookdelivery",
            "jackpot_stafftoken",
            "tables_round",
            "tables_roundseat",
            "tables_table",
            "tables_terminal",
            "tables_idempotencyrecord",
            "tables_integrityflag",
            "tables_reconciliation",
        )
    },
    "CREATE TABLE jackpot_shadow (id int)": "permission denied for schema public",
    "CREATE FUNCTION jackpot_shadow() RETURNS int AS 'SELECT 1' LANGUAGE sql": (
        "permission denied for schema public"
    ),
}


def test_the_app_role_cannot_alter_history_and_the_attempts_leave_a_trace(app_role):
    make_floor()  # a pool, tables: the journal has rows to attack
    log = _server_log()
    start = _log_size(log) if log else None
    marker = uuid.uuid4().hex
    with connect_as(app_role) as conn:
        for statement, refusal in REFUSED.items():
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
                conn.execute(f"{statement} /* {marker} */")  # type: ignore[arg-type]
            assert refusal in str(refused.value), statement
        # What it may do to the journal: read and append (the append proven by the round below).
        assert conn.execute("SELECT count(*) FROM jackpot_transfer").fetchone()[0] > 0

    # Owns nothing: not a table, a sequence, a function, the schema or the database.
    role = app_role
    assert _superuser("SELECT count(*) FROM pg_class WHERE relowner = %s::regrole", [role]) == [
        (0,)
    ]
    assert _superuser("SELECT count(*) FROM pg_proc WHERE proowner = %s::regrole", [role]) == [(0,)]
    assert _superuser("SELECT count(*) FROM pg_namespace WHERE nspowner = %s::regrole", [role]) == [
        (0,)
    ]
    assert _superuser(
        "SELECT datdba = %s::regrole FROM pg_database WHERE datname = current_database()", [role]
    ) == [(False,)]
    assert grants.problems(role) == []

    # The trace: PostgreSQL logs each refused statement, with the role and the database.
    if start is None:
        pytest.skip(f"the server's log ({log}) cannot be read here: see docs/operations.md")
    for _ in range(50):
        size = _log_size(log)
        text = str(_superuser("SELECT pg_read_file(%s, %s, %s)", [log, start, size - start])[0][0])
        if text.count(marker) >= len(REFUSED):
            break
        time.sleep(0.1)
    database = connection.settings_dict["NAME"]
    for statement, refusal in REFUSED.items():
        assert f"{role}@{database} ERROR:  {refusal}" in text, refusal
        assert f"STATEMENT:  {statement} /* {marker} */" in text, statement


@pytest.mark.django_db
def test_the_declared_privileges_name_real_tables_and_the_append_only_ones():
    """The one place that says what the app may do names tables that exist, and its append-only
    list is exactly the tables whose triggers refuse UPDATE and DELETE."""
    tables = {r.name for r in grants.relations() if r.kind == "table"}
    assert set(grants.PRIVILEGES) <= tables
    protected = _superuser(
        "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " WHERE t.tgname LIKE '%%append_only'"
    )
    assert {name for (name,) in protected} == grants.APPEND_ONLY
    for table in grants.APPEND_ONLY:
        assert grants.table_privileges(table) == {"SELECT", "INSERT"}
    assert grants.table_privileges("a_table_of_a_future_migration") == grants.DEFAULT


def test_grant_app_role_refuses_a_role_that_owns_or_inherits_the_tables(app_role):
    """A role that migrate ran as (it owns tables), or that inherits the owner's role, would
    keep the power to disable the triggers: the command says so and changes nothing."""
    _superuser("CREATE TABLE jackpot_owned_by_app (id int)")
    _superuser(f"ALTER TABLE jackpot_owned_by_app OWNER TO {app_role}")
    try:
        with pytest.raises(CommandError, match="owns 1 objects of the schema"):
            call_command("grant_app_role", app_role, stdout=StringIO())
    finally:
        _superuser("DROP TABLE jackpot_owned_by_app")
    with pytest.raises(CommandError, match="is the role running this command"):
        call_command("grant_app_role", connection.settings_dict["USER"], stdout=StringIO())

    # A table made by a later migration: the app has nothing on it until the command runs
    # again, then the default; --check reports the gap meanwhile.
    _superuser("CREATE TABLE jackpot_future (id int)")
    try:
        with pytest.raises(CommandError, match="1 privileges differ"):
            call_command(
                "grant_app_role", app_role, "--check", stdout=StringIO(), stderr=StringIO()
            )
        call_command("grant_app_role", app_role, stdout=StringIO())
        call_command("grant_app_role", app_role, "--check", stdout=StringIO())
        with connect_as(app_role) as conn:
            conn.execute("INSERT INTO jackpot_future VALUES (1)")
            conn.execute("DELETE FROM jackpot_future")
    finally:
        _superuser("DROP TABLE jackpot_future")


def _staff(floor: Floor) -> dict[str, str]:
    cast = (("ana", "supervisor"), ("bob", "supervisor"), ("ida", "auditor"))
    return {name: staff_token(person(name, role)) for name, role in cast}


# Run by the application's role, in another process: everything a round and an award need.
SERVICE = r"""
import json, sys
import django
django.setup()
from django.test import Client

given = json.loads(sys.argv[1])
table, token, staff = given["table"], given["token"], given["staff"]
terminal = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
def staff_client(name):
    return Client(HTTP_AUTHORIZATION=f"Bearer {staff[name]}")
def seat(n):
    return {"seat": n, "bets": {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500}}
def play(n, cards):
    return {"seat": n, "cards": cards.split(),
            "decision": {"action": "play", "street": "preflop", "multiple": 4}}
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT current_user")
    seen = {"user": cursor.fetchone()[0]}
base = f"/api/v1/tables/{table}/rounds"
seen["open"] = terminal.post(base, {"round_id": "app-1", "seats": [seat(1), seat(2)]},
                             content_type="application/json").status_code
result = terminal.post(f"{base}/app-1/result", {
    "board": ["7c", "7d", "7h", "Kd", "2s"], "dealer": ["3c", "4c"],
    "seats": [play(1, "7s Ac"), play(2, "Kc Ks")]}, content_type="application/json")
seen["result"] = result.status_code
pending = [a for a in result.json()["awards"] if a["status"] == "pending"][0]["id"]
for name, step, body in (("ana", "verify", {"note": "video checked"}), ("bob", "approve", {}),
                         ("ana", "pay", {"method": "cash"})):
    seen[step] = staff_client(name).post(f"/api/v1/awards/{pending}/{step}", body,
                                         content_type="application/json").status_code
seen["open-2"] = terminal.post(base, {"round_id": "app-2", "seats": [seat(1)]},
                               content_type="application/json").status_code
seen["void"] = terminal.post(f"{base}/app-2/void", {"reason": "misdeal"},
                             content_type="application/json").status_code
seen["meter"] = Client().get(f"/api/v1/pools/{given['pool']}/meter").status_code
started = staff_client("ida").post("/api/v1/journal/verify")
from tables.audit.verification_jobs import verification_run  # the worker's task, in this process
verification_run(started.json()["id"])
verify = staff_client("ida").get(started.json()["url"]).json()
seen["journal"] = [started.status_code, verify["status"], verify["ok"], verify["checkpoint"] > 0]
from tables.audit.selfcheck import selfcheck  # the start-up gate: a routine run and its checkpoint
seen["selfcheck"] = selfcheck().ok
print(json.dumps(seen))
"""


def test_the_app_role_runs_the_service_end_to_end(app_role):
    """A round opened and settled, an award verified, approved and paid, a round voided, the
    meter read and the journal verified, all as the application's role."""
    floor = make_floor(verification_threshold_cents=10_000)  # the four of a kind waits
    given = {
        "table": floor.uth[0].table_id,
        "token": floor.uth[0].token,
        "pool": floor.pool_id,
        "staff": _staff(floor),
    }
    result = subprocess.run(
        [sys.executable, "-c", SERVICE, json.dumps(given)],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": app_url(app_role)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen == {
        "user": app_role,
        "open": 201,
        "result": 200,
        "verify": 200,
        "approve": 200,
        "pay": 200,
        "open-2": 201,
        "void": 200,
        "meter": 200,
        "journal": [202, "done", True, True],
        "selfcheck": True,
    }


def _unit(name: str) -> str:
    return (ROOT / "deploy" / "systemd" / name).read_text()


def test_deploy_migrates_as_the_owner_and_serves_as_the_app_role():
    """The deploy files as an operator installs them: migrate and grant_app_role run with the
    owner's address in their own unit; the web and the worker never load it; no password is
    shipped."""
    migrate = _unit("jackpot-migrate.service")
    commands = [line for line in migrate.splitlines() if line.startswith("ExecStart=")]
    assert len(commands) == 2
    assert all("DATABASE_URL=${DATABASE_OWNER_URL}" in line for line in commands)
    # Neither the requests' statement limit nor their commit limit: a migration waits for the
    # synchronous standby rather than fail (deploy/env.example's DATABASE_COMMIT_TIMEOUT_MS).
    assert all("DATABASE_STATEMENT_TIMEOUT_MS=0" in line for line in commands)
    assert all("DATABASE_COMMIT_TIMEOUT_MS=0" in line for line in commands)
    assert "manage.py migrate" in commands[0]
    assert "manage.py grant_app_role ${DATABASE_APP_ROLE}" in commands[1]
    assert "EnvironmentFile=/etc/jackpot/owner.env" in migrate
    assert "User=jackpot-owner" in migrate
    for name in ("jackpot-web@.service", "jackpot-worker.service"):
        unit = _unit(name)
        assert "owner.env" not in unit and "migrate --no-input" not in unit, name
        assert "Requires=jackpot-migrate.service" in unit, name
        assert "User=jackpot\n" in unit, name
    roles = (ROOT / "deploy" / "postgres-roles.sql").read_text()
    statements = [line for line in roles.splitlines() if not line.startswith("--")]
    assert not any(re.search(r"PASSWORD\s+'", line, re.IGNORECASE) for line in statements)
    assert "\\password jackpot_app" in roles and "\\password jackpot_owner" in roles
    owner_env = (ROOT / "deploy" / "owner.env.example").read_text()
    assert "DATABASE_OWNER_URL=" in owner_env
