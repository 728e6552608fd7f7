"""The service over real HTTP, in threads of the test process, as terminals and signs reach it.

Unlike pytest-django's session-wide `live_server`, each `LiveServer` can be stopped in the middle
of a test (the display must notice), and stopping it also cuts the keep-alive connections that
browsers hold open, so a stopped server really is unreachable. Tests that use it need committed
data (`transactional_db`): the request threads use their own database connections.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from tests.ports import free_port


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadedWSGIServer):
    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _QuietHandler)
        self.connections: set[socket.socket] = set()
        self.lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def close_request(self, request: Any) -> None:
        with self.lock:
            self.connections.discard(request)
        super().close_request(request)


class LiveServer:
    def __init__(self, port: int | None = None, *, static: bool = False) -> None:
        """Serve on `port` (a stopped server's port brings it back), by default one of this test
        process's own (tests/ports.py): no other process of the suite and no outgoing connection
        can take it while the server is stopped, so a stopped server is really unreachable and can
        come back on its port (a port the kernel handed out was once taken, in between, by
        another process's server, which answered in its place). With `static`, also /static/
        from the apps' files, as collectstatic would gather them (Django's own
        LiveServerTestCase does the same)."""
        self._server = _Server(free_port() if port is None else port)
        self._server.set_app(StaticFilesHandler(WSGIHandler()) if static else WSGIHandler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.port = port
        self.url = f"http://{host}:{port}"
        self.running = True

    def stop(self) -> None:
        """Stop listening and cut every open connection: from now on, nothing answers."""
        if not self.running:
            return
        self.running = False
        self._server.shutdown()
        self._server.server_close()
        with self._server.lock:
            open_connections = list(self._server.connections)
        for connection in open_connections:
            with contextlib.suppress(OSError):  # already closed by its request thread
                connection.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)
