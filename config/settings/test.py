"""`make test`: the suite proves correctness on PostgreSQL and Redis, so both are required here."""

import uuid

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, POSTGRESQL
from config.settings.env import env_str

if DATABASES["default"]["ENGINE"] != POSTGRESQL:
    raise ImproperlyConfigured(
        "The test suite runs on PostgreSQL: set DATABASE_URL (make test does)."
    )

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; test users only

# Each test run gets its own cache keys and Celery queue: Redis outlives the test database, and
# ids restart. A Celery worker the suite starts (tests/workers.py) is handed the run's own.
RUN = env_str("TEST_RUN_ID") or uuid.uuid4().hex
CACHES["default"]["KEY_PREFIX"] = f"test-{RUN}"  # noqa: F405
CELERY_TASK_DEFAULT_QUEUE = f"test-{RUN}"
