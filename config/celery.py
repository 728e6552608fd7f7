"""The Celery application (`celery -A config worker`: Celery finds `config.celery` itself).

The worker and beat run the same settings as the web (`config.wsgi`): production unless
DJANGO_SETTINGS_MODULE says otherwise. The other entry points (`config.wsgi`, `config.asgi`,
`manage.py`) import this module after choosing their own settings, so this default never wins
over theirs (the package `config` imports nothing, see its docstring); importing it makes this
app the current one, the one `celery.current_app.send_task` sends with.

Tasks (`jackpot.tasks`, `tables.tasks`) are thin: they take ids and call a service. Without
REDIS_URL the settings make Celery run tasks eagerly in-process (the embedded default for `make
run`); with it, Redis is the broker. The beat schedule is the settings' CELERY_BEAT_SCHEDULE.

What the worker's signals add (the web's side is core.dispatch, config.monitoring):
- logs: Celery configures nothing of its own (`setup_logging` answered here): the worker writes
  the settings' LOGGING, the same lines as the web (LOG_FORMAT, core.logs), and the root logger
  is not hijacked;
- the request id: a task runs as the request that sent it (its `request_id` header, set by
  core.dispatch; a new id when it has none, e.g. a beat task), and the id is reset when the task
  ends, so the next task of the process never inherits it;
- metrics: each task run and each failure is counted by task name (core.metrics); with
  PROMETHEUS_MULTIPROC_DIR set, the worker's main process empties that directory as it starts,
  and a pool process drops its live gauges as it exits.
"""

from __future__ import annotations

import os
from contextvars import Token
from typing import Any

from celery import Celery, signals
from django.conf import settings

from core import logs, metrics, request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("jackpot")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.set_default()


@signals.setup_logging.connect
def _logging(**_: Any) -> None:
    logs.configure(settings.LOGGING)


@signals.worker_init.connect
def _worker_starts(**_: Any) -> None:
    metrics.clean_directory()


@signals.worker_process_shutdown.connect
def _pool_process_exits(**_: Any) -> None:
    metrics.process_exited(os.getpid())


_running: dict[str, Token[str | None]] = {}  # task id -> the request id before it


@signals.task_prerun.connect
def _task_starts(task_id: str, task: Any, **_: Any) -> None:
    sent = getattr(task.request, request_id.TASK_HEADER, None)
    # Run eagerly (no broker), a task is part of the request that runs it: that id stays.
    _running[task_id] = request_id.enter(sent or request_id.current())


@signals.task_postrun.connect
def _task_ends(task_id: str, task: Any, **_: Any) -> None:
    metrics.TASK_RUNS.labels(task.name).inc()
    token = _running.pop(task_id, None)
    if token is not None:
        request_id.leave(token)


@signals.task_failure.connect
def _task_fails(sender: Any = None, **_: Any) -> None:
    if sender is not None:
        metrics.TASK_FAILURES.labels(sender.name).inc()
