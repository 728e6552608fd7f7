"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

import config.celery  # noqa: F401  (the Celery app tasks are sent with)

application = get_wsgi_application()
