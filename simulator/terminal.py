"""How a terminal talks HTTP to the service (docs/api.md sections 1 to 3), and nothing else.

What this module guarantees:

- **HTTP only.** It reaches the service exactly as terminals do and never touches a database, so
  it works against any server it is given tokens for.
- **Terminal behaviour on errors** (docs/api.md 1.4). A timeout, a connection error or a 5xx
  resends the same request with the same bytes, which the service's idempotency makes safe; a
  429 waits `Retry-After`. Every resend is counted. Any other 4xx is a bug: that table stops and
  the service's error body is reported. When requests keep failing for `give_up_s` seconds the
  service is taken as gone and every table stops.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# --- how the terminals behave --------------------------------------------------------------------

REQUEST_TIMEOUT_S = 10.0
FIRST_RETRY_DELAY_S = 0.1
MAX_RETRY_DELAY_S = 2.0
MAX_RETRY_AFTER_S = 60.0
HEALTH_POLL_S = 0.25


# --- the terminal's HTTP client ------------------------------------------------------------------


class RequestRefused(Exception):
    """A 4xx other than 429 (or a redirect): the request is wrong, resending it cannot help."""

    def __init__(self, method: str, path: str, status: int, body: object) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {json.dumps(body)}")
        self.method, self.path, self.status, self.body = method, path, status, body


class Halted(Exception):
    """A request given up without an answer. `maybe_delivered` is False only when no attempt
    can have reached the service (every connection was refused), so nothing was stored."""

    def __init__(self, message: str = "", *, maybe_delivered: bool = True) -> None:
        super().__init__(message)
        self.maybe_delivered = maybe_delivered


class ServiceGone(Halted):
    """Requests kept failing (no answer, or 5xx) for the give-up time."""


class Stopped(Halted):
    """The floor was stopped while a request waited to be resent."""


class ServiceUnavailable(Exception):
    """`/healthz` never answered 200 in the time allowed."""


def base_url_of(text: str) -> str:
    """The service's base URL without a trailing slash; ValueError unless http(s)://host[:port].

    >>> base_url_of("http://127.0.0.1:8000/")
    'http://127.0.0.1:8000'
    """
    _base_parts(text)
    return text.rstrip("/")


def _base_parts(base_url: str) -> tuple[str, str, int | None, str]:
    try:
        parts = urlsplit(base_url)
        port = parts.port  # a bad port raises here
    except ValueError:
        parts, port = urlsplit(""), None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{base_url!r} is not an http:// or https:// URL with a host")
    return parts.scheme, parts.hostname, port, parts.path.rstrip("/")


def _connection(base_url: str, timeout: float) -> http.client.HTTPConnection:
    scheme, host, port, _ = _base_parts(base_url)
    if scheme == "https":
        return http.client.HTTPSConnection(host, port, timeout=timeout)
    return http.client.HTTPConnection(host, port, timeout=timeout)


class TerminalClient:
    """One keep-alive connection to the service, used by one thread only.

    With a token it is a table's terminal; without, a reader of the public endpoints. Every
    request goes through :meth:`_send`, which resends as docs/api.md 1.4 asks.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        stop: threading.Event,
        give_up_s: float,
        on_retry: Callable[[], None] = lambda: None,
    ) -> None:
        self._prefix = _base_parts(base_url)[3]
        self._connection = _connection(base_url, REQUEST_TIMEOUT_S)
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._stop = stop
        self._give_up_s = give_up_s
        self._on_retry = on_retry

    def close(self) -> None:
        self._connection.close()

    def get(self, path: str) -> dict[str, Any]:
        return self._send("GET", path, None)

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        # Encoded once: a resend must carry the very same body to be recognised as a retry.
        return self._send("POST", path, json.dumps(body, separators=(",", ":")).encode())

    def _exchange(self, method: str, path: str, payload: bytes | None) -> tuple[int, str, bytes]:
        headers = dict(self._headers)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        self._connection.request(method, self._prefix + path, payload, headers)
        response = self._connection.getresponse()
        return response.status, response.getheader("Retry-After") or "", response.read()

    def _send(self, method: str, path: str, payload: bytes | None) -> dict[str, Any]:
        failing_since: float | None = None
        delay = FIRST_RETRY_DELAY_S
        maybe_delivered = False
        while True:
            try:
                status, retry_after, raw = self._exchange(method, path, payload)
            except (OSError, http.client.HTTPException) as error:
                # Timed out or cut: the request may have arrived or not; only a resend can tell.
                # A refused connection is the one failure that proves nothing was sent.
                self._connection.close()
                maybe_delivered = maybe_delivered or not isinstance(error, ConnectionRefusedError)
                problem = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            else:
                if 200 <= status < 300:
                    return dict(json.loads(raw))
                if status == 429:
                    # Throttled: the service is alive, so this does not count towards giving up.
                    failing_since = None
                    self._retry_after(_retry_after_s(retry_after), maybe_delivered)
                    continue
                if status < 500:  # a 4xx, or a redirect: the request or the URL is wrong
                    raise RequestRefused(method, path, status, _json_or_text(raw))
                maybe_delivered = True  # a proxy's 5xx may hide a request the service handled
                problem = f"HTTP {status}"
            now = time.monotonic()
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= self._give_up_s:
                raise ServiceGone(
                    f"no answer for {self._give_up_s:g} s to {method} {path} (last: {problem})",
                    maybe_delivered=maybe_delivered,
                )
            self._retry_after(delay, maybe_delivered)
            delay = min(delay * 2, MAX_RETRY_DELAY_S)

    def _retry_after(self, seconds: float, maybe_delivered: bool) -> None:
        self._on_retry()
        if self._stop.wait(seconds):
            raise Stopped(maybe_delivered=maybe_delivered)


def _retry_after_s(header: str) -> float:
    try:
        return min(max(float(int(header)), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return 1.0


def _json_or_text(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def wait_for_service(base_url: str, wait_s: float) -> None:
    """Poll `GET /healthz` until it answers 200; ServiceUnavailable after `wait_s` seconds."""
    deadline = time.monotonic() + wait_s
    prefix = _base_parts(base_url)[3]
    while True:
        connection = _connection(base_url, max(0.5, min(2.0, wait_s)))
        try:
            connection.request("GET", f"{prefix}/healthz")
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                return
            last = f"HTTP {response.status}"
        except (OSError, http.client.HTTPException) as error:
            last = f"{type(error).__name__}: {error}"
        finally:
            connection.close()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ServiceUnavailable(
                f"{base_url}/healthz did not answer 200 within {wait_s:g} s (last: {last}); "
                "start the server (make run, or python manage.py runserver) or pass --base-url"
            )
        time.sleep(min(HEALTH_POLL_S, remaining))


@dataclass(frozen=True, slots=True)
class PoolState:
    """A pool as read before the run: its stake and its meter."""

    pool: int
    stake_cents: int
    meter_cents: int


def read_pools(base_url: str, pools: Sequence[int], *, give_up_s: float) -> dict[int, PoolState]:
    """Each pool's stake (`GET /pools/{pool}`) and meter (`GET /pools/{pool}/meter`).

    Raises RequestRefused for an unknown pool (a stale floor file) and ServiceGone.
    """
    client = TerminalClient(base_url, None, stop=threading.Event(), give_up_s=give_up_s)
    try:
        return {
            pool: PoolState(
                pool,
                int(client.get(f"/api/v1/pools/{pool}")["stake_cents"]),
                int(client.get(f"/api/v1/pools/{pool}/meter")["amount_cents"]),
            )
            for pool in sorted(set(pools))
        }
    finally:
        client.close()
