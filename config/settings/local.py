"""`make run`: DEBUG on by default; SQLite and eager tasks unless DATABASE_URL / REDIS_URL say."""

import base64
import hashlib

from config.settings.base import *  # noqa: F403
from config.settings.env import env_bool, env_list
from config.settings.security import SECRET_KEY

DEBUG = env_bool("DEBUG", default=True)
# The demo's people sign in with their password alone, unless asked for (config.settings.staff).
STAFF_SECOND_FACTOR_REQUIRED = env_bool("STAFF_SECOND_FACTOR_REQUIRED", default=False)

# `make run` starts the floor simulator, two requests a second: the development server's console
# lists only the requests that failed (4xx and 5xx), so what matters stays in sight.
LOGGING = {
    **LOGGING,  # noqa: F405
    "loggers": {**LOGGING["loggers"], "django.server": {"level": "WARNING"}},  # noqa: F405
}

# The winners' identities (jackpot.awards.winners) under a key derived from SECRET_KEY unless
# WINNER_IDENTITY_KEYS says: `make run` needs no key of its own, production refuses this one.
_DERIVED_WINNER_KEY = base64.urlsafe_b64encode(
    hashlib.sha256(f"jackpot-winner-identity:{SECRET_KEY}".encode()).digest()
).decode()
WINNER_IDENTITY_KEYS = env_list("WINNER_IDENTITY_KEYS", [_DERIVED_WINNER_KEY])
