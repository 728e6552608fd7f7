"""A webhook receiver for the tests: a real HTTP server on 127.0.0.1 in a thread, as the cage's
would be, verifying each request as docs/api.md tells receivers to.

`Receiver({path: secret})` is as many receivers as paths, each with its own secret, verifying
over its own URL; it records every POST (path, headers, body, whether the signature and timestamp
verify with that path's secret and URL). `environment()` and `settings()` configure the service
for them. `fail(path, n)` makes the next n requests to `path` answer 500; `hold(path)` makes the
requests to `path` wait until `release(path)` (a receiver that never answers in time).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLAY_WINDOW_SECONDS = 300


def verify(secret: str, url: str, headers: dict[str, str], body: bytes, *, now: float) -> bool:
    """The receiver's check of docs/api.md 5.9: the v2 signature, with this receiver's secret,
    over the timestamp, the delivery id and this receiver's own URL (each and a line feed) and
    the raw body, compared in constant time, and a timestamp within the replay window."""
    timestamp = headers.get("Jackpot-Timestamp", "")
    delivery = headers.get("Jackpot-Delivery", "")
    signature = headers.get("Jackpot-Signature", "")
    if not timestamp.isdigit() or not signature.startswith("v2="):
        return False
    signed = f"{timestamp}\n{delivery}\n{url}\n".encode() + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256)
    fresh = abs(now - int(timestamp)) <= REPLAY_WINDOW_SECONDS
    return hmac.compare_digest(expected.hexdigest(), signature[3:]) and fresh


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool
    answered: int

    @property
    def event(self) -> dict:
        return json.loads(self.body)

    @property
    def delivery(self) -> str:
        return self.headers["Jackpot-Delivery"]


class Receiver:
    def __init__(self, secrets: dict[str, str]) -> None:
        self.secrets = secrets  # each path's own secret
        self.received: list[Received] = []
        self._failures: dict[str, int] = defaultdict(int)
        self._held: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name: value for name, value in self.headers.items()}
                held = receiver._held.get(self.path)
                if held is not None:
                    held.wait(30)
                with receiver._lock:
                    status = 500 if receiver._failures[self.path] > 0 else 200
                    receiver._failures[self.path] -= 1
                    secret, url = receiver.secrets.get(self.path, ""), receiver.url(self.path)
                    verified = bool(secret) and verify(secret, url, headers, body, now=time.time())
                    receiver.received.append(Received(self.path, headers, body, verified, status))
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"try again")

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def environment(self, *paths: str) -> dict[str, str]:
        """The service's environment for these receivers (all of them, or those of `paths`):
        WEBHOOK_RECEIVERS, each named after its path, and each one's WEBHOOK_SECRET_<NAME>."""
        chosen = paths or tuple(self.secrets)
        names = {path: path.strip("/") for path in chosen}
        listed = ",".join(f"{names[path]}={self.url(path)}" for path in chosen)
        secrets = {f"WEBHOOK_SECRET_{names[path].upper()}": self.secrets[path] for path in chosen}
        return {"WEBHOOK_RECEIVERS": listed, **secrets}

    def settings(self, *paths: str) -> dict[str, str]:
        """WEBHOOK_RECEIVERS as the settings read it, {url: secret}: all, or those of `paths`."""
        return {self.url(path): self.secrets[path] for path in paths or tuple(self.secrets)}

    def fail(self, path: str, times: int) -> None:
        self._failures[path] = times

    def hold(self, path: str) -> None:
        self._held[path] = threading.Event()

    def release(self, path: str) -> None:
        self._held.pop(path).set()

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [request for request in self.received if request.path == path]

    def close(self) -> None:
        for event in self._held.values():
            event.set()
        self.server.shutdown()
        self.server.server_close()
