"""A free loopback TCP port, for the servers the tests start (clusters, buzz-relay).

The port is free when asked for and taken a moment later by the server the test starts, so two
processes asking at once must never be handed the same one. The ports come from below the
kernel's ephemeral range (where outgoing connections take theirs), and under pytest-xdist each
worker has a slice of its own. Within a slice the choice is random: a port just given back is
not handed out again at once.
"""

from __future__ import annotations

import os
import random
import socket

FIRST, LAST = 20_000, 31_999  # below 32768, the start of Linux's default ephemeral range


def _slice() -> range:
    """This process's ports: the whole span, or under pytest-xdist its worker's share."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1), 1)
    number = int(name[2:]) if name.startswith("gw") else 0
    size = (LAST - FIRST + 1) // count
    return range(FIRST + number * size, FIRST + (number + 1) * size)


def free_port() -> int:
    ports = _slice()
    for _ in range(200):
        port = random.choice(ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free loopback port in {ports.start}-{ports.stop - 1}")
