"""One topology for the module: `make cluster` on a private PostgreSQL (and its own Redis), its
big-win webhooks posted to a receiver of the test's own; `make cluster-down` and everything
removed at the end, whatever happened (KEEP_TOPOLOGY=1 keeps its directory, with every part's
log, to read after a failure)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.topology import Topology
from tests.faults.harness import PrivateCluster
from tests.jackpot.webhook_receiver import Receiver

# Each receiver its own secret (production refuses a shared one).
WEBHOOK_SECRETS = {
    "/fast": "a-drill-webhook-secret-for-fast-of-more-than-32-bytes",
    "/slow": "a-drill-webhook-secret-for-slow-of-more-than-32-bytes",
}
DRILLS = 5  # each with a pool of its own
TABLES = 4  # a terminal each


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    # Not pytest's tmp_path: its directories are private to this user, and as root pgbouncer
    # runs as postgres and nginx's workers as nobody, who must reach their files here.
    base = Path(tempfile.mkdtemp(prefix="jackpot-topology-"))
    base.chmod(0o755)
    receiver = Receiver(WEBHOOK_SECRETS)
    # The second receiver does not answer until drill (d) releases it: the worker is always in
    # the middle of a send to it, the task the drill kills.
    receiver.hold("/slow")
    # A send the worker gave up on (or died in) leaves its held request a broken pipe: expected.
    receiver.server.handle_error = lambda *args: None  # type: ignore[method-assign]
    postgres = PrivateCluster()
    cluster = Topology(base, postgres, receiver)
    cluster.settings = {
        # Every award is a big win: each one puts a message in the outbox, relayed by the worker.
        "NOTIFY_AWARD_CENTS": "1",
        # On 127.0.0.1 in plain HTTP: production takes http:// to the loopback only.
        **receiver.environment(),
        # Short waits, so drill (d) takes seconds: a send gives up after 2 s, its lease (and a
        # dead relay's) runs out after 3 s, the sweeper runs every second.
        "WEBHOOK_TIMEOUT_SECONDS": "2",
        "OUTBOX_LEASE_SECONDS": "3",
        "OUTBOX_SWEEP_SECONDS": "1",
        "OUTBOX_RESEND_AFTER_SECONDS": "2",
        "WEBHOOK_BACKOFF_SECONDS": "1",
        "WEBHOOK_BACKOFF_MAX_SECONDS": "2",
        # Drill (c): Redis is tried again a second after it failed.
        "REDIS_BREAKER_SECONDS": "1",
    }
    try:
        postgres.start()
        cluster.make("cluster")
        cluster.seat(pools=DRILLS, tables=TABLES)
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            cluster.make("cluster-down")
        postgres.destroy()
        receiver.close()
        if not os.environ.get("KEEP_TOPOLOGY"):
            shutil.rmtree(base, ignore_errors=True)
