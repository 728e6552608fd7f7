"""The Celery application (`celery -A config worker`: Celery finds `config.celery` itself).

The worker runs the same settings as the web (`config.wsgi`): production unless
DJANGO_SETTINGS_MODULE says otherwise. Nothing else imports this module, so its default cannot
win over another entry point's (the package `config` imports nothing, see its docstring).

Tasks are thin: they take ids and call a service. Without REDIS_URL the settings make Celery run
tasks eagerly in-process (the embedded default for `make run`); with it, Redis is the broker. A
task sent from the web would need this app loaded there first (an AppConfig.ready importing it).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("jackpot")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
