"""Sending Celery tasks by name, from any layer, without ever making a request wait on Redis.

Tasks are entry points (`jackpot.tasks`, `tables.tasks`), above the services that ask for them;
so a service never imports a task, it names it: `send_after_commit("jackpot.build_export", 7)`.

Invariants:
- nothing is sent before the transaction that asked for it commits (`transaction.on_commit`), so
  a task never looks for a row that was rolled back, or not committed yet;
- sending never blocks on a broker that is down: one attempt, with the fail-fast timeouts of
  `core.circuit`, no retries, and none at all while the Redis circuit is open. A send that
  fails is logged and answered False; whatever must happen anyway is recorded in PostgreSQL
  first (an outbox row, a queued job) and sent again by beat's sweeper;
- without a broker (`make run` without REDIS_URL: eager tasks) the task runs here, after commit;
- a task carries the request id of the request (or task) that sent it, in its `request_id`
  header (core.request_id), so its log lines name the request that caused it.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

from core import request_id
from core.circuit import redis_circuit

logger = logging.getLogger(__name__)


def _headers() -> dict[str, str]:
    """The request id the task will run as (config.celery's task_prerun), when there is one."""
    current = request_id.current()
    return {request_id.TASK_HEADER: current} if current else {}


def send(name: str, *args: object) -> bool:
    """Send task `name` with `args` now; whether it was handed to the broker (or run, eagerly)."""
    app = current_app
    if app.conf.task_always_eager:
        app.loader.import_default_modules()  # the tasks modules, so that `name` is known
        app.tasks[name].apply(args=args, throw=True)
        return True
    if redis_circuit.open:
        logger.warning("task %s%r not sent: Redis is skipped for now; the sweeper will", name, args)
        return False
    try:
        app.send_task(name, args=list(args), retry=False, headers=_headers())
    except Exception as error:  # kombu's and redis's errors alike: the broker did not take it
        redis_circuit.failed(error)
        logger.warning("task %s%r not sent (%s); the sweeper will", name, args, error)
        return False
    return True


def send_after_commit(name: str, *args: object) -> None:
    """Send task `name` once the current transaction commits (at once, outside a transaction)."""
    transaction.on_commit(lambda: send(name, *args))
