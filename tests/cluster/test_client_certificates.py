"""The terminals' mutual TLS through the real nginx (compliance requirement 39): the site files
`make cluster` renders (deploy/nginx/jackpot.conf.in, terminals-tls.conf.in, jackpot-proxy.conf),
certificates made by openssl for a club CA and its tables' terminals, and the service run with
TERMINAL_CLIENT_CERTIFICATES on. What nginx verified, and only that, decides; the service answers
every refusal in its error shape and writes it to the security log.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import shutil
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jackpot.models import AuditEvent
from tests.conftest import ROOT, make_floor, uth_seat
from tests.ports import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def _openssl(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True)


def _authority(directory: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-subj", f"/O=Club/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem",
             cwd=directory)  # fmt: skip


def _issue(directory: Path, authority: str, name: str, subject: str, *extra: str) -> None:
    """A key and a certificate `name` for `subject`, signed by `authority`."""
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject,
             "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory)  # fmt: skip
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{authority}.pem", "-CAkey",
             f"{authority}.key", "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", *extra,
             cwd=directory)  # fmt: skip


class Proxy:
    """nginx with the site files as `make cluster` renders them, in front of `upstream_port`."""

    def __init__(self, directory: Path, upstream_port: int) -> None:
        self.directory = directory
        self.public, self.terminals, self.metrics = free_port(), free_port(), free_port()
        (directory / "nginx-temp").mkdir()
        env = {
            **os.environ,
            "UPSTREAM_SERVERS": f"    server 127.0.0.1:{upstream_port};",
            "TERMINAL_UPSTREAM_SERVERS": f"    server 127.0.0.1:{upstream_port};",
            "REQUEST_ID_TRUSTED_RULES": "",
            "METRICS_ALLOW_RULES": "    allow 127.0.0.1;",
            "PUBLIC_LISTEN": f"127.0.0.1:{self.public}",
            "METRICS_LISTEN": f"127.0.0.1:{self.metrics}",
            "TERMINAL_TLS_LISTEN": f"127.0.0.1:{self.terminals}",
            "TERMINAL_TLS_CERT": str(directory / "server.pem"),
            "TERMINAL_TLS_KEY": str(directory / "server.key"),
            "TERMINAL_CLIENT_CA": str(directory / "club.pem"),
            "NGINX_SNIPPETS": str(ROOT / "deploy" / "nginx"),
            "CLUSTER_DIR": str(directory),
            "ACCESS_LOG": str(directory / "access.log"),
            # As root nginx's workers would drop to nobody, who cannot enter pytest's directories.
            "NGINX_USER": "user root;" if os.geteuid() == 0 else "# the test's own user",
        }
        render = [sys.executable, str(ROOT / "deploy" / "cluster" / "render.py")]
        for template, output in (
            ("nginx/jackpot.conf.in", "nginx-jackpot.conf"),
            ("nginx/terminals-tls.conf.in", "nginx-terminals.conf"),
            ("cluster/nginx.conf.in", "nginx.conf"),
        ):
            target = directory / output
            subprocess.run([*render, ROOT / "deploy" / template, target], env=env, check=True)
        self.command = [
            shutil.which("nginx") or "/usr/sbin/nginx",
            "-e", str(directory / "nginx-error.log"),
            "-p", str(directory),
            "-c", str(directory / "nginx.conf"),
        ]  # fmt: skip

    def start(self) -> None:
        started = subprocess.run(self.command, capture_output=True, text=True)
        log = self.directory / "nginx-error.log"
        assert started.returncode == 0, (
            f"nginx did not start: {started.stderr}{log.read_text() if log.exists() else ''}"
        )

    def stop(self) -> None:
        pid = (self.directory / "nginx.pid").read_text().strip()
        os.kill(int(pid), signal.SIGQUIT)


@pytest.fixture
def proxy(tmp_path: Path, live_service) -> Iterator[Proxy]:
    _authority(tmp_path, "club")
    _authority(tmp_path, "stranger")
    _issue(tmp_path, "club", "server", "/CN=127.0.0.1")
    proxy = Proxy(tmp_path, live_service.port)
    proxy.start()
    yield proxy
    proxy.stop()


def _post(
    port: int, table: int, token: str, *, certificate: Path | None, ca: Path | None, **headers: str
) -> tuple[int, dict]:
    if ca is None:
        connection: http.client.HTTPConnection = http.client.HTTPConnection("127.0.0.1", port)
    else:
        context = ssl.create_default_context(cafile=str(ca))
        context.check_hostname = False  # the server certificate names 127.0.0.1 in its CN only
        if certificate is not None:
            context.load_cert_chain(
                certificate.with_suffix(".pem"), certificate.with_suffix(".key")
            )
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    body = json.dumps({"round_id": f"r-{os.urandom(4).hex()}", "seats": [uth_seat(1)]})
    connection.request(
        "POST",
        f"/api/v1/tables/{table}/rounds",
        body,
        {"Content-Type": "application/json", "Authorization": f"Bearer {token}", **headers},
    )
    response = connection.getresponse()
    answer = json.loads(response.read() or b"{}")
    connection.close()
    return response.status, answer


def test_a_terminal_needs_the_verified_certificate_of_its_own_table(settings, proxy, caplog):
    settings.TERMINAL_CLIENT_CERTIFICATES = True
    floor = make_floor(uth_tables=2)
    mine, other = floor.uth
    directory = proxy.directory
    _issue(directory, "club", "mine", f"/O=Club/OU=Terminals/CN=table-{mine.table_id}")
    _issue(directory, "club", "other", f"/O=Club/OU=Terminals/CN=table-{other.table_id}")
    _issue(directory, "stranger", "forged", f"/O=Club/CN=table-{mine.table_id}")
    ca = directory / "club.pem"
    caplog.set_level(logging.WARNING, logger="jackpot.security")

    def through_tls(certificate: str | None) -> tuple[int, dict]:
        held = directory / certificate if certificate else None
        return _post(proxy.terminals, mine.table_id, mine.token, certificate=held, ca=ca)

    # Its own table's certificate: the round opens.
    status, answer = through_tls("mine")
    assert status == 201, answer
    events = AuditEvent.objects.count()

    refusals = {
        # Another table's certificate, verified by nginx: the subject names another table.
        "another table's": (through_tls("other"), f"names table {other.table_id}"),
        # No certificate at all: nginx says NONE.
        "none": (through_tls(None), "none was presented"),
        # A certificate of another CA naming this very table: nginx's 495, handed to the service.
        "another CA's": (through_tls("forged"), "the proxy's verification: FAILED"),
        # The public listener, with the headers a client forged: nginx replaces them.
        "forged headers": (
            _post(
                proxy.public,
                mine.table_id,
                mine.token,
                certificate=None,
                ca=None,
                **{
                    "X-Client-Verify": "SUCCESS",
                    "X-Client-Subject": f"CN=table-{mine.table_id}",
                },
            ),
            "none was presented",
        ),
    }
    for why, ((status, answer), says) in refusals.items():
        assert status == 401, (why, answer)
        assert answer["error"]["code"] == "authentication_failed", why
        assert says in answer["error"]["message"], (why, answer)
    assert AuditEvent.objects.count() == events  # nothing written by any refusal
    lines = [r.getMessage() for r in caplog.records if "client certificate" in r.getMessage()]
    assert len(lines) == len(refusals), lines
