"""Settings for bench/ingest.py: production settings plus the trivial floor endpoint's URLs."""

import os

os.environ.setdefault("SECRET_KEY", "bench-only-secret-key")
os.environ.setdefault("DEBUG", "0")

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
