"""Production: refuses to start with DEBUG on or without a real SECRET_KEY and DATABASE_URL."""

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES
from config.settings.env import env_bool, env_str

DEBUG = env_bool("DEBUG", default=False)
if DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in production.")
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set in production.")
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("Production runs on PostgreSQL: set DATABASE_URL.")

# Persistent connections: a gunicorn worker keeps its connection instead of paying a connect
# per request; health checks drop a connection the server closed.
DATABASES["default"]["CONN_MAX_AGE"] = 600
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
