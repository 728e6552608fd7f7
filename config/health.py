"""GET /healthz: is the database reachable (the truth), and the state of Redis (a cache only)."""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.circuit import fail_fast_client


def _database_state() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any driver error means the same thing here: not reachable
        return "down"
    return "ok"


def _redis_state() -> str:
    if not settings.REDIS_URL:
        return "disabled"
    try:
        fail_fast_client(settings.REDIS_URL).ping()  # asked each time, whatever the circuit says
    except redis.RedisError:
        return "down"
    return "ok"


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = _database_state()
    body = {"database": database, "redis": _redis_state()}
    return JsonResponse(body, status=200 if database == "ok" else 503)
