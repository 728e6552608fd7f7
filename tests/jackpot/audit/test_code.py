"""The code proved (compliance 59; core.code_digest, jackpot.audit.code, the gate's item `code`).

- the digest is the same for the same files wherever they are, changes with one byte of a
  shipped file, with a file added or renamed, and ignores tests, __pycache__ and .pyc;
- `manage.py selfcheck`, run as docs/operations.md tells the operator (a process with the
  production environment), fails on a digest that is not the approved one and records SE21 in
  the journal, passes with the approved one and records `code.verified`;
- `GET /api/v1/code` answers auditors, admins and managers, refuses a terminal and a
  supervisor, and never takes a check from an event that is not authentic.

How gunicorn stays closed on a wrong, missing or malformed digest: tests/test_production.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client

from core import code_digest
from jackpot.audit import code
from jackpot.models import AuditEvent
from jackpot.money import ledger
from jackpot.notifications.significant import BY_KIND, EventCode
from tests.jackpot.tamper import superuser_sql
from tests.staff import person, token_client
from tests.test_production import ROOT, approved_code_digest, operator_env

WRONG = "0" * 64


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A copy of this build's shipped files (never the real ones), with a test folder and
    bytecode of its own beside them, as a checkout that ran its tests has."""
    copy = tmp_path / "build"
    copy.mkdir()
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in code_digest.PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=ignored)
    shutil.copy2(ROOT / "manage.py", copy / "manage.py")
    return copy


# --- the digest ---------------------------------------------------------------------------------


def test_the_same_files_give_the_same_digest_wherever_they_are(build):
    assert code_digest.digest(build) == code_digest.digest(ROOT) == code_digest.installed()
    assert code_digest.manifest(build) == code_digest.manifest(ROOT)


def test_the_manifest_is_every_shipped_file_sorted_with_its_sha256(build):
    lines = code_digest.manifest(build).splitlines()
    paths = [line.split("  ", 1)[1] for line in lines]
    assert paths == sorted(paths) and len(paths) == len(set(paths))
    assert "manage.py" in paths and "tables/audit/selfcheck.py" in paths
    assert "jackpot/migrations/0001_initial.py" in paths
    assert any(path.startswith("floor/templates/") for path in paths)
    assert any(path.startswith("jackpot/static/") for path in paths)
    assert all("\\" not in path and not path.startswith("/") for path in paths)
    for line in lines[:5]:
        sha256, path = line.split("  ", 1)
        assert len(sha256) == 64 and shutil.which("sha256sum")
        checked = subprocess.run(
            ["sha256sum", path], cwd=build, capture_output=True, text=True, check=True
        )
        assert checked.stdout.strip() == line
    assert (
        code_digest.digest(build)
        == subprocess.run(
            ["sha256sum"], input=code_digest.manifest(build), capture_output=True, text=True
        ).stdout.split()[0]
    )


def test_one_byte_of_a_shipped_file_changes_the_digest(build):
    before = code_digest.digest(build)
    template = next((build / "floor" / "templates").rglob("*.html"))
    for target in (build / "jackpot" / "money" / "ledger.py", template, build / "manage.py"):
        content = target.read_bytes()
        target.write_bytes(content[:-1] + bytes([content[-1] ^ 1]))
        assert code_digest.digest(build) != before, target
        target.write_bytes(content)
        assert code_digest.digest(build) == before


def test_a_file_added_or_renamed_changes_the_digest(build):
    before = code_digest.digest(build)
    extra = build / "jackpot" / "money" / "backdoor.py"
    extra.write_text("PAY_EVERYONE = True\n")
    assert code_digest.digest(build) != before
    extra.unlink()
    module = build / "rules" / "par.py"
    module.rename(build / "rules" / "par2.py")
    assert code_digest.digest(build) != before


def test_tests_bytecode_and_caches_are_not_the_code(build):
    before = code_digest.digest(build)
    (build / "tests").mkdir()
    (build / "tests" / "test_more.py").write_text("def test(): pass\n")
    (build / "jackpot" / "tests").mkdir()
    (build / "jackpot" / "tests" / "test_inside.py").write_text("def test(): pass\n")
    cache = build / "jackpot" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "ledger.cpython-311.pyc").write_bytes(b"\x00bytecode")
    (build / "rules" / "cards.pyc").write_bytes(b"\x00stray bytecode")
    assert code_digest.digest(build) == before


def test_the_command_prints_the_digest_and_its_manifest(capsys):
    call_command("code_digest")
    assert capsys.readouterr().out.strip() == code_digest.installed()
    call_command("code_digest", "--manifest")
    assert capsys.readouterr().out == code_digest.manifest()


# --- the gate, as the operator runs it ----------------------------------------------------------


def _selfcheck(database_url: str, pin: str) -> subprocess.CompletedProcess[str]:
    """`python manage.py selfcheck` with the production environment (docs/operations.md)."""
    env = operator_env(DATABASE_URL=database_url, JACKPOT_CODE_SHA256=pin)
    assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
    return subprocess.run(
        [sys.executable, "manage.py", "selfcheck"],
        cwd=ROOT,
        env={**env, "DATABASE_STATEMENT_TIMEOUT_MS": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _checks() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind__in=code.KINDS).order_by("occurred_at", "pk"))


@pytest.fixture
def committed_database_url(transactional_db) -> str:
    """DATABASE_URL pointed at the test database, whose rows here are committed."""
    name = connection.settings_dict["NAME"]
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


def test_a_digest_not_approved_fails_the_gate_and_records_se21(committed_database_url):
    checked = _selfcheck(committed_database_url, WRONG)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "selfcheck FAILED" in checked.stdout
    assert f"is not the approved {WRONG} (JACKPOT_CODE_SHA256" in checked.stdout
    assert "selfcheck failed: code: refusing to serve" in checked.stderr
    (event,) = _checks()
    assert BY_KIND[event.kind].code == EventCode.CODE_MISMATCH == "SE21"
    assert (event.chain, event.actor) == (ledger.ADMIN_CHAIN, code.ACTOR)
    assert event.payload["approved"] == WRONG
    assert event.payload["installed"] == code_digest.installed()
    assert event.payload["host"]
    assert ledger.authentic(event)


def test_the_approved_digest_passes_the_gate_and_records_when(committed_database_url):
    checked = _selfcheck(committed_database_url, approved_code_digest())
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"code           ok        sha256 {code_digest.installed()} is the approved" in (
        checked.stdout
    )
    (event,) = _checks()
    assert event.kind == code.VERIFIED and event.payload["approved"] == code_digest.installed()


# --- the auditors' read -------------------------------------------------------------------------


def _record(pin: str) -> AuditEvent:
    with transaction.atomic():
        return code.code_check_record(
            code.CodeCheck(approved=pin, installed=code_digest.installed())
        )


@pytest.mark.django_db
def test_an_auditor_reads_both_digests_and_the_last_check(floor, settings):
    settings.JACKPOT_CODE_SHA256 = code_digest.installed()
    auditor = token_client(person("ida", "auditor"))
    never = auditor.get("/api/v1/code")
    assert never.status_code == 200, never.content
    assert never.json() == {
        "approved_sha256": code_digest.installed(),
        "installed_sha256": code_digest.installed(),
        "matches": True,
        "last_checked_at": None,
        "last_result": None,
    }
    _record(WRONG)
    verified = _record(code_digest.installed())
    answer = auditor.get("/api/v1/code").json()
    assert answer["last_checked_at"] == verified.occurred_at.isoformat()
    assert answer["last_result"] == "verified"

    settings.JACKPOT_CODE_SHA256 = WRONG
    answer = auditor.get("/api/v1/code").json()
    assert (answer["approved_sha256"], answer["matches"]) == (WRONG, False)
    settings.JACKPOT_CODE_SHA256 = ""
    assert auditor.get("/api/v1/code").json()["approved_sha256"] is None


@pytest.mark.django_db
def test_the_installed_digest_is_computed_once_a_process(floor):
    auditor = token_client(person("ida", "auditor"))
    code_digest.installed()
    hits = code_digest.installed.cache_info().hits
    assert auditor.get("/api/v1/code").status_code == 200
    assert code_digest.installed.cache_info().hits == hits + 1
    assert code_digest.installed.cache_info().misses <= 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("role", "status"),
    [("auditor", 200), ("admin", 200), ("manager", 200), ("supervisor", 403)],
)
def test_who_reads_it(floor, role, status):
    assert token_client(person(f"{role}-code", role)).get("/api/v1/code").status_code == status


@pytest.mark.django_db
def test_a_terminal_and_nobody_are_refused(floor):
    terminal = Client(HTTP_AUTHORIZATION=f"Bearer {floor.uth[0].token}")
    for client in (terminal, Client()):
        refused = client.get("/api/v1/code")
        assert refused.status_code == 401, refused.content
        assert refused.json()["error"]["type"] == "authentication"


@pytest.mark.django_db
def test_a_check_rewritten_with_sql_is_not_believed(floor, settings):
    """The service's database role (here a superuser, going around the triggers) turns the
    recorded mismatch into a verified check: without the journal's key it does not verify, and
    the auditor is never told the code was verified."""
    settings.JACKPOT_CODE_SHA256 = code_digest.installed()
    mismatch = _record(WRONG)
    superuser_sql(
        "UPDATE jackpot_auditevent SET kind = %s WHERE id = %s", [code.VERIFIED, mismatch.pk]
    )
    answer = token_client(person("ida", "auditor")).get("/api/v1/code").json()
    assert answer["last_result"] is None and answer["last_checked_at"] is None
    real = _record(code_digest.installed())
    superuser_sql(
        "UPDATE jackpot_auditevent SET occurred_at = occurred_at + interval '1 day' WHERE id = %s",
        [mismatch.pk],
    )
    answer = token_client(person("bo", "auditor")).get("/api/v1/code").json()
    assert answer["last_checked_at"] == real.occurred_at.isoformat()
    assert answer["last_result"] == "verified"
