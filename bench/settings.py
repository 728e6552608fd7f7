"""Settings for bench/ingest.py: production settings plus the floors' URLs (bench/trivial.py)."""

import os

# Production refuses a weak key and a missing ALLOWED_HOSTS; the bench serves plain HTTP on
# 127.0.0.1, with no TLS proxy to redirect to.
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "0123456789abcdef" * 3)
os.environ.setdefault("JOURNAL_HMAC_KEY", "bench-only-journal-key-" + "0123456789abcdef" * 3)
# A Fernet key of the bench's own (32 bytes, URL-safe base64) for the winners' identities.
os.environ.setdefault("WINNER_IDENTITY_KEYS", "YmVuY2gtb25seS13aW5uZXIta2V5LTAxMjM0NTY3ODk=")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {
        "anon": "1000000/min",
        "rules": "1000000/min",
        "terminal": "1000000/min",
    },
}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
