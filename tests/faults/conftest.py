"""The drills' fixtures: the operator's environment pointed at a database, the test database's
address, and a throwaway PostgreSQL cluster that is removed whatever happens."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.faults.harness import PrivateCluster
from tests.test_production import ROOT, operator_env


def service_env(database_url: str) -> dict[str, str]:
    """deploy/env.example on this machine, DJANGO_SETTINGS_MODULE included (systemd's
    EnvironmentFile has it), pointed at `database_url`, with the throttles of the file."""
    return operator_env(DATABASE_URL=database_url)


def migrate(env: dict[str, str]) -> None:
    """jackpot-web@.service's ExecStartPre: migrations without the requests' statement timeout."""
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=ROOT,
        env={**env, "DATABASE_STATEMENT_TIMEOUT_MS": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def test_database(transactional_db) -> str:
    """The address of the test database pytest-django made; its rows are committed (the service
    reads them from other processes) and flushed after the test."""
    from django.db import connection

    name = connection.settings_dict["NAME"]
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


@pytest.fixture
def cluster() -> Iterator[PrivateCluster]:
    """A PostgreSQL 15 cluster of this test's own, started; stopped and removed at the end, even
    when the test failed with it killed or half-recovered."""
    private = PrivateCluster()
    try:
        private.start()
        yield private
    finally:
        private.destroy()
