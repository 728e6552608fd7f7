"""The Celery application.

Tasks are thin: they take ids and call a service. Without REDIS_URL the settings make Celery run
tasks eagerly in-process (the embedded default for `make run`); with it, Redis is the broker.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("jackpot")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
