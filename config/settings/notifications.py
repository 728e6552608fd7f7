"""The outbox and the big-win notifications it relays: their periods, leases, threshold, and the
webhook receivers with a secret each.

Invariants: every figure is 1 or more; a lease outlasts a webhook send
(OUTBOX_LEASE_SECONDS > WEBHOOK_TIMEOUT_SECONDS), so a lease runs out only when its worker died;
every receiver has a name of its own, an http(s) URL named once, and its own secret
(config.settings.production further refuses weak or shared secrets and plain HTTP off the host).
"""

import re

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_int, env_list, env_str

# The outbox (jackpot.notifications.outbox): work recorded in the money's transaction, relayed after
# commit. The sweeper (beat, every OUTBOX_SWEEP_SECONDS) sends again a pending message whose relay
# has not finished it OUTBOX_RESEND_AFTER_SECONDS after the commit (Redis was down), or whose retry
# is due. A relay holds a message, and a webhook send its delivery, for OUTBOX_LEASE_SECONDS: longer
# than a send can take (WEBHOOK_TIMEOUT_SECONDS), so a lease runs out only when its worker died.
OUTBOX_SWEEP_SECONDS = env_int("OUTBOX_SWEEP_SECONDS", 15)
OUTBOX_RESEND_AFTER_SECONDS = env_int("OUTBOX_RESEND_AFTER_SECONDS", 30)
OUTBOX_LEASE_SECONDS = env_int("OUTBOX_LEASE_SECONDS", 60)
# Big-win notifications (jackpot.notifications.big_wins, jackpot.notifications.webhooks): every
# award of at least NOTIFY_AWARD_CENTS, and every jackpot hit, posted to each receiver of
# WEBHOOK_RECEIVERS, signed with that receiver's own secret, retried with exponential backoff
# (WEBHOOK_BACKOFF_SECONDS, doubled per attempt up to WEBHOOK_BACKOFF_MAX_SECONDS) until a 2xx.
# WEBHOOK_RECEIVERS: comma-separated `name=url` (cage=https://cage.club.internal/hooks/jackpot);
# receiver `name`'s secret is WEBHOOK_SECRET_<NAME>, required. Each receiver holds its own secret
# only, so none can make, or verify, another's deliveries (docs/operations.md "Big-win
# notifications"). Read here as {url: secret}.
NOTIFY_AWARD_CENTS = env_int("NOTIFY_AWARD_CENTS", 100_000)
for _name in ("WEBHOOK_URLS", "WEBHOOK_SECRET"):  # one secret shared by every receiver, before
    if env_str(_name):
        raise ImproperlyConfigured(
            f"{_name} is replaced by WEBHOOK_RECEIVERS (name=url, comma-separated) and a secret "
            "per receiver, WEBHOOK_SECRET_<NAME> (docs/operations.md, Big-win notifications)."
        )
WEBHOOK_RECEIVERS: dict[str, str] = {}
_receiver_names: set[str] = set()
for _receiver in env_list("WEBHOOK_RECEIVERS", []):
    _name, _, _url = _receiver.partition("=")
    _name, _url = _name.strip(), _url.strip()
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", _name) or _name in _receiver_names:
        raise ImproperlyConfigured(
            f"WEBHOOK_RECEIVERS: {_receiver!r} is not name=url with a name of its own, of"
            " lower-case letters, digits and _ (cage=https://cage.club.internal/hooks/jackpot)"
        )
    _receiver_names.add(_name)
    if not re.fullmatch(r"https?://[^/\s]+(/\S*)?", _url):
        raise ImproperlyConfigured(f"WEBHOOK_RECEIVERS: {_url!r} is not an http(s):// URL")
    _secret = env_str(f"WEBHOOK_SECRET_{_name.upper()}")
    if not _secret:
        raise ImproperlyConfigured(
            f"WEBHOOK_SECRET_{_name.upper()} must be set: the secret of receiver {_name!r}"
        )
    if _url in WEBHOOK_RECEIVERS:
        raise ImproperlyConfigured(f"WEBHOOK_RECEIVERS: {_url!r} is named twice")
    WEBHOOK_RECEIVERS[_url] = _secret
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 5)
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", 10)
WEBHOOK_BACKOFF_MAX_SECONDS = env_int("WEBHOOK_BACKOFF_MAX_SECONDS", 3600)
for _name in (
    "OUTBOX_SWEEP_SECONDS",
    "OUTBOX_RESEND_AFTER_SECONDS",
    "OUTBOX_LEASE_SECONDS",
    "NOTIFY_AWARD_CENTS",
    "WEBHOOK_TIMEOUT_SECONDS",
    "WEBHOOK_BACKOFF_SECONDS",
    "WEBHOOK_BACKOFF_MAX_SECONDS",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
if OUTBOX_LEASE_SECONDS <= WEBHOOK_TIMEOUT_SECONDS:
    raise ImproperlyConfigured("OUTBOX_LEASE_SECONDS must be longer than WEBHOOK_TIMEOUT_SECONDS")
