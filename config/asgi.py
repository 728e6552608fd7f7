"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

import config.celery  # noqa: F401  (the Celery app tasks are sent with)

application = get_asgi_application()
