"""The Celery application (`celery -A config worker`: Celery finds `config.celery` itself).

The worker and beat run the same settings as the web (`config.wsgi`): production unless
DJANGO_SETTINGS_MODULE says otherwise. The other entry points (`config.wsgi`, `config.asgi`,
`manage.py`) import this module after choosing their own settings, so this default never wins
over theirs (the package `config` imports nothing, see its docstring); importing it makes this
app the current one, the one `celery.current_app.send_task` sends with.

Tasks (`jackpot.tasks`, `tables.tasks`) are thin: they take ids and call a service. Without
REDIS_URL the settings make Celery run tasks eagerly in-process (the embedded default for `make
run`); with it, Redis is the broker. The beat schedule is the settings' CELERY_BEAT_SCHEDULE.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("jackpot")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.set_default()
