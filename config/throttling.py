"""Request throttles that cost one Redis round trip and never stop money when Redis is down.

A fixed-window counter per client (`INCR` + `EXPIRE` in one pipelined round trip). DRF's own
throttles keep a request history in the cache (a read and a write per request) and raise when
the cache is unreachable; Redis is a cache here, never the truth, so when it is down these
throttles let requests through and log it, and skip Redis for a while (`config.circuit`), so a
black-holed Redis does not cost every request a timeout. Without REDIS_URL (the embedded
`make run`) the counters live in the process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Any

import redis
from django.conf import settings
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from config.circuit import redis_circuit, redis_client

logger = logging.getLogger(__name__)
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_local_counts: Counter[str] = Counter()
_local_lock = threading.Lock()


def parse_rate(rate: str) -> tuple[int, int]:
    """'600/min' -> (600, 60)."""
    count, period = rate.split("/")
    return int(count), _PERIODS[period.strip()[0]]


class WindowThrottle(BaseThrottle):
    """`limit` requests per `window` seconds for each client key; subclasses name the key."""

    scope = ""

    def __init__(self) -> None:
        self.limit, self.window = parse_rate(str(api_settings.DEFAULT_THROTTLE_RATES[self.scope]))
        self.retry_after = 0

    def client_key(self, request: Request, view: Any) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        key = self.client_key(request, view)
        if key is None:
            return True
        now = time.time()
        window = int(now) // self.window
        prefix = settings.CACHES["default"].get("KEY_PREFIX", "jackpot")
        counter = f"{prefix}:throttle:{self.scope}:{key}:{window}"
        count = self._count(counter)
        if count is None or count <= self.limit:
            return True
        self.retry_after = max(1, (window + 1) * self.window - int(now))
        return False

    def _count(self, counter: str) -> int | None:
        if not settings.REDIS_URL:
            with _local_lock:
                if len(_local_counts) > 100_000:  # old windows: forget them wholesale
                    _local_counts.clear()
                _local_counts[counter] += 1
                return _local_counts[counter]
        client = redis_client()
        if client is None:  # Redis failed a moment ago: let through without asking it
            return None
        try:
            pipe = client.pipeline(transaction=False)
            pipe.incr(counter)
            pipe.expire(counter, self.window + 1)
            count, _ = pipe.execute()
            return int(count)
        except redis.RedisError as error:
            redis_circuit.failed(error)
            logger.warning(
                "throttle %s: Redis unavailable (%s); request let through", self.scope, error
            )
            return None

    def wait(self) -> float | None:
        return self.retry_after or None


class AddressThrottle(WindowThrottle):
    """Per client address: the public endpoints (displays, the rules API)."""

    scope = "anon"

    def client_key(self, request: Request, view: Any) -> str | None:
        return self.get_ident(request)


class RulesThrottle(AddressThrottle):
    scope = "rules"
