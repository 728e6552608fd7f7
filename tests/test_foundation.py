"""The foundation: health, settings per environment, the demo floor."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from core.tokens import hash_token
from jackpot.models import Pool, StaffToken
from tables.models import Table, Terminal

HEALTH = (
    "import django, json; django.setup();"
    "from django.test import Client;"
    "r = Client().get('/healthz'); print(r.status_code, r.content.decode())"
)


@pytest.mark.django_db
def test_healthz_reports_database_and_redis(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "ok"}


@pytest.mark.django_db
def test_healthz_says_redis_down_but_stays_up(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "down"}


def test_healthz_is_503_when_the_database_is_unreachable(python_subprocess):
    result = python_subprocess(
        HEALTH,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL="postgres://postgres@127.0.0.1:1/nowhere",
        REDIS_URL="",
    )
    status, body = result.stdout.strip().split(" ", 1)
    assert status == "503", result.stderr
    assert json.loads(body) == {"database": "down", "redis": "disabled"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "1", "SECRET_KEY": "x"}, "DEBUG must be off"),
        ({"DEBUG": "0", "SECRET_KEY": ""}, "SECRET_KEY must be set"),
    ],
)
def test_production_settings_refuse_unsafe_configuration(python_subprocess, env, message):
    result = python_subprocess(
        "import django; django.setup()", DJANGO_SETTINGS_MODULE="config.settings.production", **env
    )
    assert result.returncode != 0
    assert message in result.stderr


def test_embedded_default_is_sqlite_with_eager_tasks(python_subprocess):
    result = python_subprocess(
        "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'],"
        " s.CELERY_TASK_ALWAYS_EAGER, s.CACHES['default']['BACKEND'])",
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL="",
        REDIS_URL="",
    )
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "True",
        "django.core.cache.backends.locmem.LocMemCache",
    ], result.stderr


def _seed(*args: str) -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_seed_demo_is_idempotent_and_reissues_tokens():
    first = _seed()
    second = _seed()

    assert [p["id"] for p in first["pools"]] == [p["id"] for p in second["pools"]]
    assert [(t["id"], t["name"], t["game"], t["pool"]) for t in first["tables"]] == [
        (t["id"], t["name"], t["game"], t["pool"]) for t in second["tables"]
    ]
    games = [t["game"] for t in second["tables"]]
    assert games.count("uth") == 6 and games.count("stud") == 1
    assert Pool.objects.count() == 1 and Table.objects.count() == 7
    assert {t["pool"] for t in second["tables"] if t["game"] == "uth"} == {second["pools"][0]["id"]}
    assert len(second["supervisors"]) == 2
    assert second["supervisors"][0]["username"] != second["supervisors"][1]["username"]

    # Only hashes are stored; the first run's tokens are revoked, the second's are live.
    for old, new in zip(first["tables"], second["tables"], strict=True):
        assert old["token"] != new["token"]
        assert Terminal.objects.get(token_hash=hash_token(old["token"])).revoked_at is not None
        assert Terminal.objects.get(token_hash=hash_token(new["token"])).revoked_at is None
    assert not Terminal.objects.filter(token_hash=second["tables"][0]["token"]).exists()
    live = StaffToken.objects.filter(revoked_at__isnull=True)
    assert live.get(token_hash=hash_token(second["auditor"]["token"])).user.username == "auditor"
    assert not live.filter(token_hash=hash_token(first["auditor"]["token"])).exists()


@pytest.mark.django_db
def test_seed_demo_tables_option():
    floor = _seed("--tables", "3")
    assert [t["name"] for t in floor["tables"]] == ["UTH 1", "UTH 2", "UTH 3", "Stud 1"]


def _ensure_services(tmp_path, database_url: str, redis_url: str):
    """Run make test's service check with a PATH that has python3 and nothing else."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    return subprocess.run(
        ["/bin/bash", "deploy/dev/ensure-services.sh"],
        env={
            **os.environ,
            "PATH": str(bin_dir),
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
        },
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_make_test_names_a_missing_postgresql(tmp_path):
    result = _ensure_services(
        tmp_path, "postgres://postgres@127.0.0.1:1/x", "redis://127.0.0.1:6379/0"
    )
    assert result.returncode == 1
    assert "PostgreSQL is not reachable at 127.0.0.1:1 and is not installed" in result.stderr


def test_make_test_names_a_missing_redis(tmp_path):
    result = _ensure_services(
        tmp_path, "postgres://postgres@127.0.0.1:5432/jackpot", "redis://127.0.0.1:1/0"
    )
    assert result.returncode == 1
    assert "Redis is not reachable at 127.0.0.1:1 and is not installed" in result.stderr
