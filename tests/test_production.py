"""Production as an operator runs it: the commands of deploy/systemd with the environment of
deploy/env.example, run in subprocesses and checked from outside.

- `gunicorn -c deploy/gunicorn.conf.py config.wsgi` with no DJANGO_SETTINGS_MODULE runs the
  production settings: DEBUG off (an unknown URL is the JSON 404, no debug page), persistent
  database connections (one backend serves every request), HTTPS enforced, the security log in
  the file SECURITY_LOG names;
- it refuses to start with the example SECRET_KEY or JOURNAL_HMAC_KEY, with DEBUG=1, without
  ALLOWED_HOSTS;
- `celery -A config` runs the web's settings, `manage.py` the local ones unless told;
- `manage.py check --deploy` finds nothing to fix;
- gunicorn runs the start-up self-check before it binds (compliance requirement 27): a journal
  edited behind the database's back, a configuration checksum that is not the approved one, or
  none pinned, and it exits non-zero without ever answering; a sound database is served;
- the same for the installed code's digest (compliance 59): a wrong, missing or malformed
  JACKPOT_CODE_SHA256 and it never answers, with SE21 `code.mismatch` in the journal.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HOST = "jackpot.club.internal"  # deploy/env.example's ALLOWED_HOSTS
EXAMPLE_KEY = "change-me-to-50-random-characters"
EXAMPLE_JOURNAL_KEY = "change-me-to-48-random-characters-of-your-own-key"


#: The operator's own key of the winners' identities (deploy/env.example's is refused).
OPERATOR_WINNER_KEY = "b3BlcmF0b3Itd2lubmVyLWtleS1vZi0zMi1ieXRlcyE="


def env_example() -> dict[str, str]:
    """deploy/env.example as systemd's EnvironmentFile reads it."""
    values = {}
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value
    return values


@cache
def approved_checksum() -> str:
    """This build's configuration checksum, as the operator approving it prints it."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    env.update(env_example())
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        JOURNAL_HMAC_KEY=settings.JOURNAL_HMAC_KEY,
        WINNER_IDENTITY_KEYS=OPERATOR_WINNER_KEY,
        DATABASE_URL=os.environ["DATABASE_URL"],
        DATABASE_POOLER="",
        SECURITY_LOG="stderr",
    )
    printed = subprocess.run(
        [sys.executable, "manage.py", "selfcheck", "--print-checksum"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    return printed.stdout.strip()


@cache
def approved_code_digest() -> str:
    """This build's code digest, as the operator approving it prints it (`manage.py
    code_digest`, no database): computed from the files here, never written down."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    env.update(env_example())
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        JOURNAL_HMAC_KEY=settings.JOURNAL_HMAC_KEY,
        WINNER_IDENTITY_KEYS=OPERATOR_WINNER_KEY,
        SECURITY_LOG="stderr",
    )
    printed = subprocess.run(
        [sys.executable, "manage.py", "code_digest"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    return printed.stdout.strip()


def operator_env(**changes: str | None) -> dict[str, str]:
    """The environment of deploy/env.example on this machine: our database and Redis, a real
    secret key, one worker, this build's checksum and code digest approved; `changes` set (or,
    as None, remove) variables. Nothing is inherited from the test run but PATH and HOME:
    DJANGO_SETTINGS_MODULE is the test's there."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    env.update(env_example())
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        JOURNAL_HMAC_KEY=settings.JOURNAL_HMAC_KEY,  # the one the test database is written with
        WINNER_IDENTITY_KEYS=OPERATOR_WINNER_KEY,
        DATABASE_URL=os.environ["DATABASE_URL"],
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        WEB_WORKERS="1",
        DATABASE_POOLER="",  # the test database straight, not through pgbouncer (tests/cluster)
        SECURITY_LOG="stderr",  # systemd's LogsDirectory makes /var/log/jackpot; not here
        JACKPOT_CONFIG_SHA256=approved_checksum(),
        JACKPOT_CODE_SHA256=approved_code_digest(),
    )
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def start_gunicorn(env: dict[str, str]) -> subprocess.Popen[str]:
    # deploy/systemd/jackpot-web@.service's ExecStart, word for word but the path of the venv.
    return subprocess.Popen(
        [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "config.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def refused_start(env: dict[str, str]) -> str:
    """gunicorn's exit with `env`, which must come without ever accepting a connection on its
    port (asked all along until it exits); its output."""
    port = free_port()
    server = start_gunicorn({**env, "BIND": f"127.0.0.1:{port}"})
    answered = False
    try:
        deadline = time.monotonic() + 90
        while server.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                answered = True
            except OSError:
                time.sleep(0.05)
        output, _ = server.communicate(timeout=5)
    finally:
        server.kill()
    assert server.returncode not in (0, None), output
    assert not answered, output
    return output


class Gunicorn:
    """A started gunicorn; `get` asks it over a new connection, as a proxy or a probe would."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.process = start_gunicorn({**env, "BIND": f"127.0.0.1:{self.port}"})
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise AssertionError(self.process.communicate()[0])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def get(self, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
        # The port accepts as soon as the master listens, before its workers have booted; on a
        # busy machine the first answer took over 10 s (a CI run, 2026-12-05). What it answers is
        # the test, not how fast: a minute, and no answer fails it.
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request("GET", path, headers={"Host": HOST, **headers})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def stop(self) -> str:
        self.process.terminate()
        try:
            return self.process.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.communicate()[0]


def _with_application_name(url: str, name: str) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&" if parts.query else ""
    return urlunsplit(parts._replace(query=f"{query}application_name={name}"))


def _backends(database_url: str, name: str) -> list[int]:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s ORDER BY pid", [name]
        ).fetchall()
    return [row[0] for row in rows]


@pytest.fixture
def test_database_url(db) -> str:
    """DATABASE_URL pointed at the test database pytest-django created (it exists)."""
    from django.db import connection

    name = connection.settings_dict["NAME"]
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


def test_gunicorn_config_wsgi_runs_the_production_settings(tmp_path, test_database_url):
    # Given the operator's environment without DJANGO_SETTINGS_MODULE, its proxy trusted for
    # X-Forwarded-Proto, the security log in a file, and a name to find its database backends
    application = f"prod-test-{uuid.uuid4().hex[:12]}"
    security_log = tmp_path / "security.log"
    env = operator_env(
        DJANGO_SETTINGS_MODULE=None,
        DATABASE_URL=_with_application_name(test_database_url, application),
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
        SECURITY_LOG=str(security_log),
    )
    server = Gunicorn(env)
    try:
        # When an unknown URL is asked through the proxy (HTTPS)
        status, headers, body = server.get("/no/such/page", **{"X-Forwarded-Proto": "https"})
        # Then DEBUG is off: the JSON 404, no debug page; and HSTS is sent
        assert status == 404
        assert headers["Content-Type"] == "application/json"
        assert json.loads(body)["error"]["code"] == "not_found"
        assert b"DEBUG" not in body and b"Traceback" not in body and b"urlpatterns" not in body
        assert headers["Strict-Transport-Security"] == (
            "max-age=31536000; includeSubDomains; preload"
        )

        # Plain HTTP is redirected to HTTPS, but for the load balancer's probe of /healthz
        status, headers, _ = server.get("/no/such/page")
        assert (status, headers["Location"]) == (301, f"https://{HOST}/no/such/page")
        # A host that is not ALLOWED_HOSTS' is refused
        status, _, _ = server.get("/healthz", Host="evil.example")
        assert status == 400

        # Persistent connections: one database backend answers every request, and stays
        pids = []
        for _ in range(4):
            status, _, body = server.get("/healthz")
            assert (status, json.loads(body)["database"]) == (200, "ok")
            pids.append(_backends(test_database_url, application))
        assert len(pids[0]) == 1 and pids == [pids[0]] * 4, pids

        # The security log is in the file the operator named, with who and from where
        status, _, _ = server.get(
            "/api/v1/journal", Authorization="Bearer not-a-token", **{"X-Forwarded-Proto": "https"}
        )
        assert status == 401
        # one JSON object a line (LOG_FORMAT=json, deploy/env.example), with its request id
        logged = [json.loads(line) for line in security_log.read_text().splitlines()]
        refusal = next(line for line in logged if line["logger"] == "jackpot.security")
        assert refusal["message"].startswith("refused GET /api/v1/journal")
        assert "from=127.0.0.1" in refusal["message"]
        assert len(refusal["request_id"]) == 32 and refusal["time"].endswith("Z")
        assert any(
            line["logger"] == "django.security.DisallowedHost"
            and line["message"].startswith("Invalid HTTP_HOST header: 'evil.example'")
            for line in logged
        )
    finally:
        output = server.stop()
    assert "Booting worker" in output and "Worker failed to boot" not in output, output


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"SECRET_KEY": EXAMPLE_KEY}, "SECRET_KEY is the example shipped with the service"),
        (
            {"JOURNAL_HMAC_KEY": EXAMPLE_JOURNAL_KEY},
            "JOURNAL_HMAC_KEY is the example shipped with the service",
        ),
        ({"DEBUG": "1"}, "DEBUG must be off in production"),
        ({"ALLOWED_HOSTS": None}, "ALLOWED_HOSTS must be set in production"),
    ],
    ids=["example-secret-key", "example-journal-key", "debug", "no-allowed-hosts"],
)
def test_gunicorn_refuses_to_start_on_an_unsafe_environment(changes, message):
    assert env_example()["SECRET_KEY"] == EXAMPLE_KEY  # the file ships the key refused here
    assert env_example()["JOURNAL_HMAC_KEY"] == EXAMPLE_JOURNAL_KEY  # and this one
    output = refused_start(operator_env(DJANGO_SETTINGS_MODULE=None, **changes))
    assert message in output
    # The start-up self-check, with the production settings, is the first to refuse them
    assert "Start-up self-check failed" in output


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"SECRET_KEY": ""}, "SECRET_KEY must be set"),
        ({"SECRET_KEY": "short-but-random-9f8e7d"}, "SECRET_KEY is too weak"),
        ({"SECRET_KEY": "ab" * 40}, "SECRET_KEY is too weak"),
        ({"SECRET_KEY": "django-insecure-" + "x1y2z3" * 10}, "SECRET_KEY is too weak"),
        (
            {"SECRET_KEY": "insecure-development-key-never-used-in-production"},
            "SECRET_KEY is the example",
        ),
        ({"WINNER_IDENTITY_KEYS": ""}, "WINNER_IDENTITY_KEYS must be set"),
        ({"WINNER_IDENTITY_KEYS": None}, "WINNER_IDENTITY_KEYS must be set"),
        ({"WINNER_IDENTITY_KEYS": "change-me-to-a-fernet-key"}, "each key is a Fernet key"),
        (
            {"WINNER_IDENTITY_KEYS": "dGVzdC13aW5uZXItaWRlbnRpdHkta2V5LTMyYnl0ZXM="},
            "never the test settings' key",
        ),
        ({"JOURNAL_HMAC_KEY": ""}, "JOURNAL_HMAC_KEY must be set"),
        ({"JOURNAL_HMAC_KEY": None}, "JOURNAL_HMAC_KEY must be set"),
        ({"JOURNAL_HMAC_KEY": "31-bytes-is-one-byte-too-short!"}, "JOURNAL_HMAC_KEY is too short"),
        (
            {"JOURNAL_HMAC_KEY": "insecure-development-journal-key-never-used-in-production"},
            "JOURNAL_HMAC_KEY is the example",
        ),
        (
            {"WEBHOOK_RECEIVERS": "cage=https://cage.club.internal/hooks/jackpot"},
            "WEBHOOK_SECRET_CAGE must be set",
        ),
        (
            {
                "WEBHOOK_RECEIVERS": "cage=https://cage.club.internal/h",
                "WEBHOOK_SECRET_CAGE": "x" * 31,
            },
            "the secret of https://cage.club.internal/h is under 32 bytes",
        ),
        (
            {
                "WEBHOOK_RECEIVERS": "cage=ftp://cage.club.internal/",
                "WEBHOOK_SECRET_CAGE": "x" * 48,
            },
            "is not an http(s):// URL",
        ),
        ({"ALLOWED_HOSTS": "*"}, "not '*'"),
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must be set"),
        ({"CSRF_TRUSTED_ORIGINS": "http://jackpot.club.internal"}, "not an https:// origin"),
        ({"SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https"}, "is not a header name"),
        ({"SECURE_HSTS_SECONDS": "a year"}, "is not a whole number"),
        ({"STAFF_SESSION_IDLE_SECONDS": "0"}, "STAFF_SESSION_IDLE_SECONDS=0: between 60"),
        ({"STAFF_SESSION_MAX_SECONDS": "1209600"}, "STAFF_SESSION_MAX_SECONDS=1209600: between"),
        (
            {"STAFF_SESSION_IDLE_SECONDS": "7200", "STAFF_SESSION_MAX_SECONDS": "3600"},
            "not under STAFF_SESSION_IDLE_SECONDS",
        ),
        ({"STAFF_TOKEN_DAYS": "3650"}, "STAFF_TOKEN_DAYS=3650: a staff token lives 1 to 90 days"),
        ({"DATABASE_URL": ""}, "Production runs on PostgreSQL"),
    ],
)
def test_production_settings_refuse_unsafe_values(changes, message):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=operator_env(**changes),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr


def test_production_settings_read_https_from_the_environment():
    code = (
        "import django; django.setup(); from django.conf import settings as s;"
        "print(s.SECURE_PROXY_SSL_HEADER, s.CSRF_TRUSTED_ORIGINS, s.SECURE_HSTS_SECONDS,"
        " s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_PRELOAD)"
    )
    untold = operator_env(SECURE_PROXY_SSL_HEADER=None)
    defaults = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=untold, capture_output=True, text=True
    )
    assert defaults.stdout.split() == ["None", "[]", "31536000", "True", "True"], defaults.stderr
    told = operator_env(
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
        CSRF_TRUSTED_ORIGINS="https://jackpot.club.internal,https://admin.club.internal",
        SECURE_HSTS_SECONDS="3600",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_PRELOAD="0",
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=told, capture_output=True, text=True
    )
    assert result.stdout.strip() == (
        "('HTTP_X_FORWARDED_PROTO', 'https') "
        "['https://jackpot.club.internal', 'https://admin.club.internal'] 3600 False False"
    ), result.stderr


def test_check_deploy_finds_nothing_to_fix():
    # jackpot-web@.service's ExecStartPre runs manage.py with the same environment file
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=operator_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_celery_worker_runs_the_webs_settings_unless_told():
    command = [str(BIN / "celery"), "-A", "config", "report"]
    report = subprocess.run(
        command,
        cwd=ROOT,
        env=operator_env(DJANGO_SETTINGS_MODULE=None),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "SETTINGS_MODULE: 'config.settings.production'" in report.stdout, report.stderr
    assert "\nDEBUG: False\n" in report.stdout
    local = subprocess.run(
        command,
        cwd=ROOT,
        env=operator_env(DJANGO_SETTINGS_MODULE="config.settings.local", DEBUG=None),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "SETTINGS_MODULE: 'config.settings.local'" in local.stdout, local.stderr


def test_manage_py_runs_the_local_settings_unless_told():
    code = "from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"
    command = [sys.executable, "manage.py", "shell", "-c", code]
    local = subprocess.run(
        command,
        cwd=ROOT,
        env=operator_env(DJANGO_SETTINGS_MODULE=None, DEBUG=None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert local.stdout.split()[-2:] == ["config.settings.local", "True"], local.stderr
    told = subprocess.run(
        command, cwd=ROOT, env=operator_env(), capture_output=True, text=True, timeout=60
    )
    assert told.stdout.split()[-2:] == ["config.settings.production", "False"], told.stderr


def test_asgi_runs_the_production_settings():
    code = "import config.asgi; from django.conf import settings; print(settings.SETTINGS_MODULE)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=operator_env(DJANGO_SETTINGS_MODULE=None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == "config.settings.production", result.stderr


# --- the start-up self-check (requirement 27) ----------------------------------------------


@pytest.fixture
def committed_database_url(transactional_db) -> str:
    """DATABASE_URL pointed at the test database, whose rows here are committed."""
    from django.db import connection

    name = connection.settings_dict["NAME"]
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


def _played(floor) -> None:
    """Rounds committed on the floor: stakes, a royal and its envy."""
    from tests.conftest import uth_play, uth_seat

    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    settled = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    )
    assert settled.status_code == 200, settled.content


def test_gunicorn_serves_once_the_selfcheck_passed(committed_database_url, floor):
    _played(floor)
    server = Gunicorn(
        operator_env(DJANGO_SETTINGS_MODULE=None, DATABASE_URL=committed_database_url)
    )
    try:
        status, _, body = server.get("/healthz")
        assert (status, json.loads(body)["database"]) == (200, "ok")
        status, _, body = server.get(
            f"/api/v1/pools/{floor.pool_id}/meter", **{"X-Forwarded-Proto": "https"}
        )
        assert status == 200 and json.loads(body)["jackpot_pending"] is True
    finally:
        output = server.stop()
    assert "selfcheck passed" in output
    assert output.index("selfcheck passed") < output.index("Listening at")
    assert f"code           ok        sha256 {approved_code_digest()} is the approved" in output


def test_gunicorn_never_answers_on_a_journal_edited_behind_the_databases_back(
    committed_database_url, floor
):
    from django.db import connection

    from jackpot.models import Transfer

    _played(floor)
    # A superuser disables the journal's triggers, edits a transfer, enables them again
    edited = Transfer.objects.filter(code="jackpot_hit").get()
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE jackpot_transfer DISABLE TRIGGER USER")
        cursor.execute(
            "UPDATE jackpot_transfer SET amount_cents = amount_cents - 100000 WHERE id = %s",
            [edited.pk],
        )
        cursor.execute("ALTER TABLE jackpot_transfer ENABLE TRIGGER USER")
    output = refused_start(
        operator_env(DJANGO_SETTINGS_MODULE=None, DATABASE_URL=committed_database_url)
    )
    assert "selfcheck FAILED" in output
    assert "journal        failed    chain table-" in output
    assert "selfcheck failed: journal: refusing to serve" in output
    assert "Start-up self-check failed (exit 1): not serving" in output
    assert "Listening at" not in output and "Booting worker" not in output


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("0" * 64, "is not the approved " + "0" * 64),
        ("", "no approved checksum: set JACKPOT_CONFIG_SHA256"),
    ],
    ids=["wrong-pin", "no-pin"],
)
def test_gunicorn_never_answers_without_the_approved_checksum(committed_database_url, pin, message):
    output = refused_start(
        operator_env(
            DJANGO_SETTINGS_MODULE=None,
            DATABASE_URL=committed_database_url,
            JACKPOT_CONFIG_SHA256=pin,
        )
    )
    assert "configuration  failed" in output and message in output
    assert "journal        ok" in output
    assert "Listening at" not in output


# --- The code proved (compliance 59): no approved digest of the installed code, no service.
@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("0" * 64, "is not the approved " + "0" * 64),
        ("", "no approved digest: set JACKPOT_CODE_SHA256"),
        ("not-a-digest", "JACKPOT_CODE_SHA256 is not a SHA-256"),
    ],
    ids=["wrong-digest", "no-digest", "malformed-digest"],
)
def test_gunicorn_never_answers_without_the_approved_code_digest(
    committed_database_url, pin, message
):
    from jackpot.models import AuditEvent

    output = refused_start(
        operator_env(
            DJANGO_SETTINGS_MODULE=None,
            DATABASE_URL=committed_database_url,
            JACKPOT_CODE_SHA256=pin,
        )
    )
    assert "code           failed" in output and message in output
    assert "configuration  ok" in output and "journal        ok" in output
    assert "selfcheck failed: code: refusing to serve" in output
    assert "Listening at" not in output
    (event,) = AuditEvent.objects.filter(kind="code.mismatch")  # SE21, in the journal
    assert event.payload["approved"] == (pin or None)
    assert event.payload["installed"] == approved_code_digest()
