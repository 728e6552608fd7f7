"""Production: refuses to start on an unsafe value (ImproperlyConfigured, the message says what to
set), so a mistake stops the service loudly at start instead of serving with it.

Refused, among others: DEBUG on; a weak or example SECRET_KEY, JOURNAL_HMAC_KEY or webhook
secret; a webhook over plain http:// off the loopback; no WINNER_IDENTITY_KEYS; no or "*"
ALLOWED_HOSTS; a database other than PostgreSQL; staff sessions' and tokens' limits outside a
shift's. HTTPS is assumed: redirect (but /healthz), HSTS, secure cookies; X-Forwarded-Proto
trusted only when SECURE_PROXY_SSL_HEADER names it.

Every refusal and default: docs/operations.md, "Production settings" and "The modules, in
detail".
"""

import base64
import binascii
import ipaddress
import re
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.databases import DATABASES, POSTGRESQL
from config.settings.env import env_bool, env_int, env_list, env_str
from config.settings.journal import DEVELOPMENT_JOURNAL_HMAC_KEY
from config.settings.notifications import WEBHOOK_RECEIVERS
from config.settings.security import DEVELOPMENT_SECRET_KEY
from config.settings.staff import (
    STAFF_SESSION_IDLE_SECONDS,
    STAFF_SESSION_MAX_SECONDS,
    STAFF_TOKEN_DAYS,
)

DEBUG = env_bool("DEBUG", default=False)
if DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in production.")

# The example of deploy/env.example: an operator who copied the file and forgot to change it.
EXAMPLE_SECRET_KEYS = frozenset({"change-me-to-50-random-characters", DEVELOPMENT_SECRET_KEY})
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set in production.")
if SECRET_KEY in EXAMPLE_SECRET_KEYS:
    raise ImproperlyConfigured(
        "SECRET_KEY is the example shipped with the service: set your own (50 random characters: "
        'python -c "import secrets; print(secrets.token_urlsafe(50))").'
    )
if len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5 or SECRET_KEY.startswith("django-insecure-"):
    raise ImproperlyConfigured(
        "SECRET_KEY is too weak: at least 50 characters, not a repeated pattern "
        '(python -c "import secrets; print(secrets.token_urlsafe(50))").'
    )

# The journal's HMAC key: the hashes of the audit chain are only as secret as it is.
EXAMPLE_JOURNAL_HMAC_KEYS = frozenset(
    {"change-me-to-48-random-characters-of-your-own-key", DEVELOPMENT_JOURNAL_HMAC_KEY}
)
JOURNAL_HMAC_KEY_MIN_BYTES = 32
JOURNAL_HMAC_KEY = env_str("JOURNAL_HMAC_KEY")
if not JOURNAL_HMAC_KEY:
    raise ImproperlyConfigured(
        "JOURNAL_HMAC_KEY must be set in production: the key of the journal's hash chain "
        '(python -c "import secrets; print(secrets.token_urlsafe(48))").'
    )
if JOURNAL_HMAC_KEY in EXAMPLE_JOURNAL_HMAC_KEYS:
    raise ImproperlyConfigured(
        "JOURNAL_HMAC_KEY is the example shipped with the service: set your own "
        '(python -c "import secrets; print(secrets.token_urlsafe(48))").'
    )
if len(JOURNAL_HMAC_KEY.encode()) < JOURNAL_HMAC_KEY_MIN_BYTES:
    raise ImproperlyConfigured(
        f"JOURNAL_HMAC_KEY is too short: at least {JOURNAL_HMAC_KEY_MIN_BYTES} bytes "
        '(python -c "import secrets; print(secrets.token_urlsafe(48))").'
    )

# The winners' identities (jackpot.awards.winners) are encrypted under keys kept outside the
# database: at least one, each a Fernet key (32 bytes, URL-safe base64), none the test settings'
# key.
WINNER_IDENTITY_KEYS = env_list("WINNER_IDENTITY_KEYS", [])
if not WINNER_IDENTITY_KEYS:
    raise ImproperlyConfigured(
        "WINNER_IDENTITY_KEYS must be set in production: the Fernet keys of the winners' "
        'identities, comma-separated, the first encrypting (python -c "from '
        'cryptography.fernet import Fernet; print(Fernet.generate_key().decode())").'
    )
for _key in WINNER_IDENTITY_KEYS:
    try:
        _raw = base64.urlsafe_b64decode(_key.encode())
    except (ValueError, binascii.Error):
        _raw = b""
    if len(_raw) != 32 or _key == "dGVzdC13aW5uZXItaWRlbnRpdHkta2V5LTMyYnl0ZXM=":
        raise ImproperlyConfigured(
            "WINNER_IDENTITY_KEYS: each key is a Fernet key of your own (32 bytes in URL-safe "
            "base64), never the test settings' key."
        )

# The big-win webhooks' receivers (jackpot.notifications.webhooks): a receiver trusts a notification
# only as far as nobody else knows its secret, another receiver included; and what crosses a network
# goes over TLS. Plain http:// is left to a receiver on this host's loopback, where nothing crosses
# one.
WEBHOOK_SECRET_MIN_BYTES = 32


def _loopback(host: str | None) -> bool:
    """An address of this host's loopback, written as one (a name could be made to resolve
    elsewhere)."""
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


for _url, _secret in WEBHOOK_RECEIVERS.items():
    if _secret.startswith("change-me"):  # deploy/env.example's, copied and not changed
        raise ImproperlyConfigured(
            f"WEBHOOK_RECEIVERS: the secret of {_url} is the example shipped with the service "
            '(python -c "import secrets; print(secrets.token_urlsafe(48))", one per receiver).'
        )
    if len(_secret.encode()) < WEBHOOK_SECRET_MIN_BYTES:
        raise ImproperlyConfigured(
            f"WEBHOOK_RECEIVERS: the secret of {_url} is under {WEBHOOK_SECRET_MIN_BYTES} bytes "
            '(python -c "import secrets; print(secrets.token_urlsafe(48))", one per receiver).'
        )
    _parts = urlsplit(_url)
    if _parts.scheme != "https" and not _loopback(_parts.hostname):
        raise ImproperlyConfigured(
            f"WEBHOOK_RECEIVERS: {_url} is not https://: a notification must not cross a network "
            "in clear (plain http:// only to this host's loopback)."
        )
if len(set(WEBHOOK_RECEIVERS.values())) < len(WEBHOOK_RECEIVERS):
    raise ImproperlyConfigured(
        "WEBHOOK_RECEIVERS: two receivers share a secret: each must have its own, so that none "
        "can make or verify another's notifications."
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set in production: the host names clients use (comma-separated)."
    )
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must name the hosts, not '*'.")

if DATABASES["default"]["ENGINE"] != POSTGRESQL:
    raise ImproperlyConfigured("Production runs on PostgreSQL: set DATABASE_URL.")

# The start-up self-check fails without an approved configuration checksum (JACKPOT_CONFIG_SHA256)
# and an approved digest of the installed code (JACKPOT_CODE_SHA256).
SELFCHECK_REQUIRE_PIN = True
# ... and while JOURNAL_ANCHOR_DIR is set, anchors this service's user could write
# (deploy/systemd/jackpot-anchor.service: another user's files, readable by this one).
ANCHORS_SEPARATE_USER = env_bool("ANCHORS_SEPARATE_USER", default=True)

# Staff sign in with a second factor: set here, read from no environment variable, so no
# deployment can turn it off.
STAFF_SECOND_FACTOR_REQUIRED = True

# A staff session ends within a shift, idle or not; a staff token within a quarter.
if not 60 <= STAFF_SESSION_IDLE_SECONDS <= 4 * 3600:
    raise ImproperlyConfigured(
        f"STAFF_SESSION_IDLE_SECONDS={STAFF_SESSION_IDLE_SECONDS}: between 60 (a minute) and "
        "14400 (4 hours) of inactivity before a staff session ends."
    )
if not max(300, STAFF_SESSION_IDLE_SECONDS) <= STAFF_SESSION_MAX_SECONDS <= 24 * 3600:
    raise ImproperlyConfigured(
        f"STAFF_SESSION_MAX_SECONDS={STAFF_SESSION_MAX_SECONDS}: between 300 (5 minutes) and "
        "86400 (24 hours) from the sign-in, and not under STAFF_SESSION_IDLE_SECONDS."
    )
if not 1 <= STAFF_TOKEN_DAYS <= 90:
    raise ImproperlyConfigured(
        f"STAFF_TOKEN_DAYS={STAFF_TOKEN_DAYS}: a staff token lives 1 to 90 days."
    )

# Persistent connections: a gunicorn worker keeps its connection instead of paying a connect
# per request; health checks drop a connection the server closed.
for _database in DATABASES.values():
    _database["CONN_MAX_AGE"] = 600
    _database["CONN_HEALTH_CHECKS"] = True

# --- HTTPS ----------------------------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
# The load balancer probes the instance itself; Prometheus scrapes it inside the host (or through
# nginx's internal listener), in plain HTTP: neither is a browser to send to HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)

_proxy_header = env_str("SECURE_PROXY_SSL_HEADER").strip()
if _proxy_header and not re.fullmatch(r"[A-Za-z0-9-]+", _proxy_header):
    raise ImproperlyConfigured(
        f"SECURE_PROXY_SSL_HEADER={_proxy_header!r} is not a header name (X-Forwarded-Proto)."
    )
# ("HTTP_X_FORWARDED_PROTO", "https"): a request is HTTPS when the proxy says so in that header.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https") if _proxy_header else None
)

CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
for _origin in CSRF_TRUSTED_ORIGINS:
    if not re.fullmatch(r"https://[^/\s]+", _origin):
        raise ImproperlyConfigured(
            f"CSRF_TRUSTED_ORIGINS: {_origin!r} is not an https:// origin "
            "(https://jackpot.club.example, no path)."
        )

SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
