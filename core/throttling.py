"""Request throttles that cost one Redis round trip and never stop money when Redis is down.

A fixed-window counter per client (`INCR` + `EXPIRE` in one pipelined round trip). DRF's own
throttles keep a request history in the cache (a read and a write per request) and raise when
the cache is unreachable; Redis is a cache here, never the truth, so when it is down these
throttles let requests through and log it, and skip Redis for a while (`core.circuit`), so a
black-holed Redis does not cost every request a timeout. Without REDIS_URL (the embedded
`make run`) the counters live in the process.

`FailureCounter` counts failures rather than requests (the admin's failed logins): read before an
attempt, added to after a failure, with the same counters and the same failing open.

`client_address` is the one reading of who sent a request: the address-keyed throttles, the
staff's login throttle (`floor.login`) and the security log (`config.handlers`) all use
it, so a request is counted and logged under the same address. Behind NUM_PROXIES proxies it is
the entry the outermost of them appended to X-Forwarded-For; what a client wrote there itself
(the entries to its left) is never believed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import redis
from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from core.circuit import redis_circuit, redis_client

logger = logging.getLogger(__name__)
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_local_counts: Counter[str] = Counter()
_local_lock = threading.Lock()


def client_address(request: HttpRequest | Request) -> str | None:
    """The client's address: the connection's (REMOTE_ADDR) with NUM_PROXIES at 0, else the
    NUM_PROXIES-th entry of X-Forwarded-For from the right, the one our outermost proxy appended
    (each of ours appends the address it was connected from). None when neither is known.

    DRF's `get_ident` reading, but for NUM_PROXIES unset, which DRF takes as "believe the whole
    header" and which is read here as 0: a client must never choose its own address.
    """
    meta = request.META
    remote = meta.get("REMOTE_ADDR") or None
    proxies = int(api_settings.NUM_PROXIES or 0)
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    entries = forwarded.split(",")
    return entries[-min(proxies, len(entries))].strip() or remote


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
        return client_address(request)


class RulesThrottle(AddressThrottle):
    scope = "rules"


class HeavyReadThrottle(WindowThrottle):
    """The staff's reads that can hold a sync worker for seconds (the journal's verification,
    a pool's history, the payout log's exports, the OpenAPI schema): `heavy_read` requests per
    person (the signed-in user), or per address for the schema, which anyone may read.

    Counted after authentication (DRF checks throttles last), so a request without valid
    credentials is a 401 and costs nobody's budget. Terminals never reach these views: nginx
    routes them to an instance of their own (docs/operations.md "Topology"); this bounds what
    the staff's instances are asked, so a dashboard left reloading cannot queue the others."""

    scope = "heavy_read"

    def client_key(self, request: Request, view: Any) -> str | None:
        user = request.user
        if getattr(user, "is_authenticated", False) and getattr(user, "pk", None) is not None:
            return f"user:{user.pk}"
        address = client_address(request)
        return f"address:{address}" if address else None


class FailureCounter:
    """At most `limit` failures per key in a fixed window of `window` seconds.

    `wait(keys)` is 0 while every key is under its limit, else the seconds left in the window;
    `add(keys)` counts one failure for each key. When Redis is down both let everything through
    and log a warning: a lockout must not depend on a cache.
    """

    def __init__(self, scope: str, rate: str) -> None:
        self.scope = scope
        self.limit, self.window = parse_rate(rate)

    def _counters(self, keys: Sequence[str]) -> tuple[list[str], int]:
        now = int(time.time())
        window = now // self.window
        prefix = settings.CACHES["default"].get("KEY_PREFIX", "jackpot")
        counters = [f"{prefix}:failures:{self.scope}:{key}:{window}" for key in keys]
        return counters, (window + 1) * self.window - now

    def wait(self, keys: Sequence[str]) -> int:
        counters, left = self._counters(keys)
        if not settings.REDIS_URL:
            with _local_lock:
                counts = [_local_counts[counter] for counter in counters]
        else:
            client = redis_client()
            if client is None:  # Redis failed a moment ago: let through without asking it
                return 0
            try:
                values = cast("list[bytes | None]", client.mget(counters))
                counts = [int(value or 0) for value in values]
            except redis.RedisError as error:
                redis_circuit.failed(error)
                logger.warning("%s: Redis unavailable (%s); attempt let through", self.scope, error)
                return 0
        return max(1, left) if any(count >= self.limit for count in counts) else 0

    def add(self, keys: Sequence[str]) -> None:
        counters, _ = self._counters(keys)
        if not settings.REDIS_URL:
            with _local_lock:
                for counter in counters:
                    _local_counts[counter] += 1
            return
        client = redis_client()
        if client is None:
            logger.warning("%s: Redis skipped after a failure; failure not counted", self.scope)
            return
        try:
            pipe = client.pipeline(transaction=False)
            for counter in counters:
                pipe.incr(counter)
                pipe.expire(counter, self.window + 1)
            pipe.execute()
        except redis.RedisError as error:
            redis_circuit.failed(error)
            logger.warning("%s: Redis unavailable (%s); failure not counted", self.scope, error)
