"""What the service tells its operators: the security log, who may read /metrics, the log lines'
format and Django's LOGGING.

Invariants: every handler uses the one formatter LOG_FORMAT names (a bad name stops start-up);
the security log goes either to stderr with the rest or to its own file alone, never both;
METRICS_ALLOWED_NETS are all valid networks.
"""

import ipaddress
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_list, env_str
from core.logs import formatter_config

# The security log (`jackpot.security`): refusals of the API (config.handlers) and of Django
# (`django.security`: hosts not allowed, CSRF failures), the admin's logins and failed logins
# (floor.login), changes of parameters and access (jackpot.money.ledger).
# SECURITY_LOG=stderr (the default) writes it with the other logs, to stderr (the journal under
# systemd); a file path writes it there alone, reopened when logrotate moves it. Times are UTC.
SECURITY_LOG = env_str("SECURITY_LOG", "stderr").strip() or "stderr"
_security_handlers: dict[str, dict[str, object]] = {}
if SECURITY_LOG != "stderr":
    _security_handlers["security_file"] = {
        "class": "logging.handlers.WatchedFileHandler",
        "filename": SECURITY_LOG,
        "formatter": "plain",
    }

# Who may read /metrics (config.monitoring): the client's address (the peer's, REMOTE_ADDR) must be
# in one of these networks (comma-separated CIDRs). Loopback by default: Prometheus on the host,
# or nginx's internal listener (docs/operations.md "Metrics").
METRICS_ALLOWED_NETS = env_list("METRICS_ALLOWED_NETS", ["127.0.0.0/8", "::1/128"])
for _net in METRICS_ALLOWED_NETS:
    try:
        ipaddress.ip_network(_net, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"METRICS_ALLOWED_NETS: {_net!r} is not a network (CIDR, e.g. 10.0.0.0/8)"
        ) from None

# LOG_FORMAT (core.logs): "json", one JSON object per line with the request id (production,
# deploy/env.example), or "text" (the default: `make run`, the tests). Every handler uses it; the
# Celery worker (config.celery) and gunicorn (deploy/gunicorn.conf.py) too.
LOG_FORMAT = env_str("LOG_FORMAT", "text").strip().lower() or "text"
try:
    _formatter = formatter_config(LOG_FORMAT)
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None

LOGGING_CONFIG = "core.logs.configure"  # dictConfig, each record stamped with its request id
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": _formatter},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        **_security_handlers,
    },
    "loggers": {
        # Django's own refusals (a host not allowed, a CSRF failure, a suspicious request) too.
        name: {
            "level": "INFO",
            "handlers": list(_security_handlers),
            "propagate": not _security_handlers,
        }
        for name in ("jackpot.security", "django.security")
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
