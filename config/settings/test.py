"""`make test`: the suite proves correctness on PostgreSQL and Redis, so both are required here."""

import hashlib
import os
import uuid

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.databases import DATABASES, POSTGRESQL
from config.settings.env import env_str

if DATABASES["default"]["ENGINE"] != POSTGRESQL:
    raise ImproperlyConfigured(
        "The test suite runs on PostgreSQL: set DATABASE_URL (make test does)."
    )

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; test users only
# The suite's stories travel months through the calendar (time_machine) with the staff tokens
# issued at their start; tests/security/test_sessions.py holds a token's expiry itself.
STAFF_TOKEN_DAYS = 365
# Off for the suite's fixtures (sessions signed in with a password); tests/security/
# test_second_factor.py and tests/browser/test_second_factor.py turn it on as production has it.
STAFF_SECOND_FACTOR_REQUIRED = False

# Each test run gets its own cache keys and Celery queue: Redis outlives the test database, and
# ids restart. Under pytest-xdist each worker is a run of its own (its own test database,
# `test_<name>_gw<N>`, made by pytest-django): the controller's id with the worker's name.
RUN = env_str("TEST_RUN_ID") or uuid.uuid4().hex
_XDIST_WORKER = env_str("PYTEST_XDIST_WORKER")
if _XDIST_WORKER and not RUN.endswith(f"-{_XDIST_WORKER}"):
    RUN = f"{RUN}-{_XDIST_WORKER}"
# Inherited by every process the suite starts (a worker, manage.py, a drill): the same run.
os.environ["TEST_RUN_ID"] = RUN
CACHES["default"]["KEY_PREFIX"] = f"test-{RUN}"  # noqa: F405
CELERY_TASK_DEFAULT_QUEUE = f"test-{RUN}"
# The run's own journal key, derived from the run: a worker or a production process the suite
# starts on the test database (tests/workers.py, tests/test_production.py) is handed the same, and
# production refuses the development key.
JOURNAL_HMAC_KEY = hashlib.sha256(f"jackpot-test-journal-{RUN}".encode()).hexdigest()
# A fixed key for the winners' identities (jackpot.awards.winners): tests read what they wrote;
# production refuses it (config.settings.production).
TEST_WINNER_IDENTITY_KEY = "dGVzdC13aW5uZXItaWRlbnRpdHkta2V5LTMyYnl0ZXM="
WINNER_IDENTITY_KEYS = [TEST_WINNER_IDENTITY_KEY]

# A request's wait for a new connection. Production's (1.5 s, and libpq's 2 s) is a terminal's
# patience (compliance requirement 28). The suite's in-process servers (the test client,
# tests/live.py's threads) share their process with a browser's driver, pypdf and the test itself,
# four such processes on two cores: there a connection once took longer, and a browser test saw a
# 503 `progressive_closed` from its own server. The tests of failing closed hold the service to
# production's values (tests/test_fail_closed.py `database_at`); the processes the suite starts
# (drills, workers, gunicorn) run with production's, from their own settings.
DATABASE_CONNECT_DEADLINE_MS = 10_000
DATABASES["default"]["OPTIONS"]["connect_timeout"] = 10
