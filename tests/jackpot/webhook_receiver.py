"""A webhook receiver for the tests: a real HTTP server on 127.0.0.1 in a thread, as the cage's
would be, verifying each request as docs/api.md tells receivers to.

`Receiver(secret)` records every POST (path, headers, body, whether the signature and timestamp
verify); `fail(path, n)` makes the next n requests to `path` answer 500; `hold(path)` makes the
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


def verify(secret: str, headers: dict[str, str], body: bytes, *, now: float) -> bool:
    """The receiver's check of docs/api.md: v1 signature over `{timestamp}.{raw body}`, compared
    in constant time, and a timestamp within the replay window."""
    timestamp, signature = (
        headers.get("Jackpot-Timestamp", ""),
        headers.get("Jackpot-Signature", ""),
    )
    if not timestamp.isdigit() or not signature.startswith("v1="):
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
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
    def __init__(self, secret: str) -> None:
        self.secret = secret
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
                    verified = verify(receiver.secret, headers, body, now=time.time())
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
