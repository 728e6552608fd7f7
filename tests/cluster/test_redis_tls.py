"""Redis over TLS with the service's ACL user, as docs/operations.md "Redis: password and TLS" says
to run it: redis-server with `port 0` and a `tls-port` (a certificate of a CA made here by
openssl), the ACL file of deploy/redis/users.acl.in, and the service in its own process with a
`rediss://` REDIS_URL naming the CA. What the service does with Redis works through it: the
cache (the signs' figures), the fail-fast client (the throttles, the display's compare-and-set)
and Celery's broker (a message sent and received). Without the CA the connection is refused: a
server that cannot prove itself is not talked to.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.ports import free_port
from tests.test_production import ROOT

PASSWORD = "a-redis-password-for-the-tls-test"

SERVICE = """
from django.core.cache import cache
from config.celery import app
from core.circuit import redis_client
cache.set("tls-test", "cached", 5)
assert cache.get("tls-test") == "cached"
client = redis_client()
assert client is not None and client.incr("tls-test-counter") == 1
with app.connection_for_write() as connection:
    queue = connection.SimpleQueue("tls-test")
    queue.put({"sent": "over tls"})
    message = queue.get(timeout=5)
    message.ack()
    queue.close()
assert message.payload == {"sent": "over tls"}
print("served over tls")
"""


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def test_the_service_uses_redis_over_tls_as_its_acl_user(tmp_path):
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ca",
             "-keyout", "ca.key", "-out", "ca.pem", cwd=tmp_path)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", "server.key", "-out", "server.csr", cwd=tmp_path)  # fmt: skip
    (tmp_path / "san").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "san", "-out", "server.pem",
             cwd=tmp_path)  # fmt: skip
    digest = hashlib.sha256(PASSWORD.encode()).hexdigest()
    subprocess.run(
        [sys.executable, ROOT / "deploy" / "cluster" / "render.py",
         ROOT / "deploy" / "redis" / "users.acl.in", tmp_path / "users.acl"],
        env={**os.environ, "REDIS_PASSWORD_SHA256": digest,
             "REDIS_OPERATOR_PASSWORD_SHA256": hashlib.sha256(b"operator").hexdigest()},
        check=True,
    )  # fmt: skip
    port = free_port()
    with (tmp_path / "redis.log").open("ab") as log:
        server = subprocess.Popen(
            ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
             "--tls-cert-file", "server.pem", "--tls-key-file", "server.key",
             "--tls-ca-cert-file", "ca.pem", "--tls-auth-clients", "no",
             "--aclfile", str(tmp_path / "users.acl"), "--save", "", "--appendonly", "no",
             "--dir", str(tmp_path)],
            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not _answers(port):
            assert time.monotonic() < deadline, (tmp_path / "redis.log").read_text()
            time.sleep(0.05)
        url = f"rediss://jackpot:{PASSWORD}@127.0.0.1:{port}/0?ssl_cert_reqs=required"

        def service(redis_url: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "manage.py", "shell", "-c", SERVICE],
                cwd=ROOT,
                env={**os.environ, "REDIS_URL": redis_url},
                capture_output=True,
                text=True,
                timeout=60,
            )

        served = service(f"{url}&ssl_ca_certs={tmp_path / 'ca.pem'}")
        assert served.returncode == 0 and "served over tls" in served.stdout, served.stderr
        refused = service(url)  # the system's CAs do not know this server's
        assert refused.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
