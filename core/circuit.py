"""Redis behind a circuit breaker: after a failure, skip Redis for a while instead of waiting on
it again.

Redis is a cache here (the signs' display cache, the throttles' counters): every caller has a way
on without it. What no caller may do is make each request wait for Redis's timeout while Redis is
down or black-holed (a connection accepted or not, and no answer). So the first call that meets
a Redis failure opens the circuit, and for `REDIS_BREAKER_SECONDS` (5 s by default) `redis_client`
answers None at once and every caller takes its way without Redis. The first call after that
period tries Redis again: a success keeps the circuit closed, a failure opens it for another
period. The state is per process: each gunicorn worker pays one timeout to learn it. Each opening
is counted, and until when it stays open is a gauge (core.metrics: the `jackpot_redis_circuit_`
metrics).

The clients made here fail fast: `TIMEOUT` to connect and to answer, and no retries (redis-py
retries three times by default, with back-off sleeps of up to seconds).
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from core import metrics

logger = logging.getLogger(__name__)

TIMEOUT = 0.25  # seconds to connect to Redis and for each answer


def fail_fast_client(url: str) -> redis.Redis:
    """A client that gives up after `TIMEOUT`, without retrying."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=TIMEOUT,
        socket_timeout=TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )


class Circuit:
    """Open (skip the service) for `seconds` after each failure; closed otherwise."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._open_until = 0.0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    def failed(self, error: Exception) -> None:
        seconds = float(settings.REDIS_BREAKER_SECONDS)
        with self._lock:
            if not self.open:
                logger.warning("%s failed (%s): skipped for %g s", self.name, error, seconds)
                metrics.REDIS_CIRCUIT_OPENED.inc()
            self._open_until = time.monotonic() + seconds
        metrics.REDIS_CIRCUIT_OPEN_UNTIL.set(time.time() + seconds)

    def close(self) -> None:
        """Try the service again at the next call (tests; an operator's shell)."""
        with self._lock:
            self._open_until = 0.0
        metrics.REDIS_CIRCUIT_OPEN_UNTIL.set(0)


redis_circuit = Circuit("Redis")
_clients: dict[str, redis.Redis] = {}


def redis_client() -> redis.Redis | None:
    """The process's Redis client; None without REDIS_URL or while the circuit is open.

    Callers report a `redis.RedisError` with `redis_circuit.failed(error)`.
    """
    url = settings.REDIS_URL
    if not url or redis_circuit.open:
        return None
    client = _clients.get(url)
    if client is None:
        client = _clients.setdefault(url, fail_fast_client(url))
    return client
