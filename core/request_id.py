"""The request id: one name for one request, from nginx through Django to the Celery tasks it
caused, on every log line written on its behalf.

Invariants:
- an id is 1 to `MAX_LENGTH` characters of [A-Za-z0-9._-]: a client's or a proxy's
  `X-Request-ID` is taken when it is one, anything else (too long, a space, a newline that would
  forge a log line) is replaced by a new uuid4 hex, never cut or escaped;
- the id lives in a contextvar, so threads and the tasks a worker runs one after another never
  see each other's; it is set for a request by `RequestIdMiddleware` (first in MIDDLEWARE) and
  for a task by the worker's `task_prerun` (config.celery, from the task's headers), and reset
  when the request (Django's `request_finished`, once the response is sent: Django's own "Not
  Found" and error lines, written after the middleware, carry it too) or the task ends;
- the response carries it back in `X-Request-ID`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING

from django.core.signals import request_finished

if TYPE_CHECKING:  # annotations only: gunicorn's master loads core.logs and never sets Django up
    from django.http import HttpRequest, HttpResponseBase

HEADER = "X-Request-ID"
TASK_HEADER = "request_id"  # the Celery message header that carries it (core.dispatch)
MAX_LENGTH = 128
_WELL_FORMED = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_LENGTH}}}")

_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def current() -> str | None:
    """The id of the request (or the task) this code runs for; None outside both."""
    return _current.get()


def well_formed(candidate: object) -> str | None:
    """`candidate` when it is a well-formed id, else None."""
    if isinstance(candidate, str) and _WELL_FORMED.fullmatch(candidate):
        return candidate
    return None


def enter(request_id: object) -> Token[str | None]:
    """From now on, run as `request_id` (a new one when it is missing or malformed); `leave`
    with the token puts the id before back."""
    return _current.set(well_formed(request_id) or uuid.uuid4().hex)


def leave(token: Token[str | None]) -> None:
    _current.reset(token)


@contextmanager
def bound(request_id: object) -> Iterator[str]:
    """Run the block as `request_id` (see `enter`); the id before is back afterwards."""
    token = enter(request_id)
    try:
        yield _current.get() or ""
    finally:
        leave(token)


def _request_finished(**_: object) -> None:
    _current.set(None)


class RequestIdMiddleware:
    """Takes the request's `X-Request-ID` (nginx's $request_id) or makes one; first in
    MIDDLEWARE, so every later middleware's and view's log lines carry it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        request_finished.connect(_request_finished, dispatch_uid=__name__)

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        enter(request.headers.get(HEADER))  # left by request_finished, after the response
        request_id = _current.get() or ""
        response = self.get_response(request)
        response[HEADER] = request_id
        return response
