"""`make test`: the suite proves correctness on PostgreSQL and Redis, so both are required here."""

import uuid

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, POSTGRESQL

if DATABASES["default"]["ENGINE"] != POSTGRESQL:
    raise ImproperlyConfigured(
        "The test suite runs on PostgreSQL: set DATABASE_URL (make test does)."
    )

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; test users only

# Each test run gets its own cache keys: Redis outlives the test database, and ids restart.
CACHES["default"]["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"  # noqa: F405
