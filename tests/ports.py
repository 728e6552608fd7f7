"""Ports for the servers a test starts in a process of its own (nginx, gunicorn, pgbouncer, Redis,
PostgreSQL, etcd, HAProxy).

Such a server binds its port a moment after the test chose it, so a port the kernel hands out
(bind to 0, then close) is not safe: in between, the kernel may give the same port to another
pytest-xdist process's server, or to any outgoing connection, which take theirs from that same
ephemeral range (`net.ipv4.ip_local_port_range`, 32768 to 60999 on Debian). That race failed a
CI run once (nginx: address already in use).

What this module guarantees: `free_port()` answers a port below the ephemeral range, from a block
of `BLOCK` ports that belongs to this xdist process alone (gw0 the first, gw1 the next, ...), in
turn, skipping any port something on the machine is bound to right now. So two processes of the
suite never choose the same port, and no outgoing connection takes one. Within a process, a port
comes round again only after `BLOCK` others, long after the test that had it has stopped its
servers. tests/live.py's servers take theirs here too, though they bind at once: one is stopped
mid-test to be unreachable, and a port of the ephemeral range, free again, was once taken by
another process's server, which answered in its place. Servers that live until the test's end
and tell their port after binding (a listening socket, a stub) still bind to 0.
"""

from __future__ import annotations

import errno
import itertools
import os
import socket

FIRST = 20000  # below the ephemeral range, above PostgreSQL's 5432, Redis's 6379 and the like
BLOCK = 400  # a process's ports; a cluster drill takes about a dozen
PROCESSES = 25  # the blocks: FIRST + PROCESSES * BLOCK stays below 32768


def _block() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # gw<n>; one process without xdist
    index = int(worker.removeprefix("gw")) % PROCESSES
    start = FIRST + index * BLOCK
    return range(start, start + BLOCK)


_turn = itertools.cycle(_block())


def free_port() -> int:
    """A port of this process's block that nothing is bound to (see the module's docstring)."""
    for _ in range(BLOCK):
        port = next(_turn)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
                continue
            return port
    raise RuntimeError(f"every port of {_block()} is in use")
