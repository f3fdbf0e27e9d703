"""CPU time per write at the smallest size, the server's and the client's, and the same for
the baseline: ``server_cpu_ms@10``, ``client_cpu_ms@10``, ``baseline_server_cpu_ms``,
``baseline_client_cpu_ms``.

Wall time on a shared machine moves with everyone's load; the CPU a write burns moves much
less, so a change to the write path can be judged by it. A write uses one connection
(Membership has one), so the server's part is that backend's utime + stime, read from
/proc/<pid>/stat (the server must be on this machine); background processes (WAL writer,
checkpointer, autovacuum) are not counted. The client's part is this process's
time.process_time(): nothing else runs in it meanwhile.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any

import psycopg

from .common import Alternator, Bench, log

CLK_TCK = os.sysconf("SC_CLK_TCK")  # /proc's unit of CPU time: 100 a second, usually
ROUNDS = 4  # writes and baselines alternate in blocks, so that both see the same load


class BackendClock:
    """One backend's CPU time (utime + stime), in clock ticks."""

    def __init__(self, pid: int) -> None:
        self.stat = Path(f"/proc/{pid}/stat")

    @classmethod
    def of(cls, conn: psycopg.Connection[Any], data_dir: str | None) -> BackendClock | str:
        """The clock of `conn`'s backend, or why it cannot be read."""
        (pid,) = conn.execute("SELECT pg_backend_pid()").fetchone()
        clock = cls(pid)
        try:
            comm = clock.stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
            clock.ticks()
        except (OSError, IndexError, ValueError):
            return f"/proc/{pid}/stat is not readable (the server is not on this machine?)"
        if comm != "postgres":
            return f"/proc/{pid} is {comm!r}, not a backend (the server is on another machine)"
        try:  # a backend runs in its data directory: a local process of another server does not
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = None  # not ours to read: comm must do
        if cwd and data_dir and os.path.realpath(cwd) != os.path.realpath(data_dir):
            return f"/proc/{pid} belongs to another server (runs in {cwd})"
        return clock

    def ticks(self) -> int:
        # The fields after "(comm)": state is field 3, utime 14 and stime 15.
        fields = self.stat.read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])


def cpu(b: Bench) -> None:
    size, n, nb = b.plan.sizes[0], b.plan.cpu_writes, b.plan.cpu_baselines
    log(f"CPU time of {n} writes at {size:,} members and of {nb} baseline transactions")
    try:
        data_dir = b.su.execute("SHOW data_directory").fetchone()[0]
    except psycopg.Error:
        data_dir = None  # not a superuser: comm is checked alone
    clocks = {
        "write": BackendClock.of(b.m.conn, data_dir),
        "base": BackendClock.of(b.base, data_dir),
    }
    alt = Alternator(b.m, b.communities[size])
    for _ in range(b.plan.warmup[0]):
        alt.step()
        b.baseline_once()
    server: dict[str, list[int]] = {"write": [], "base": []}  # ticks per round
    client: dict[str, list[float]] = {"write": [], "base": []}  # seconds per round
    series = {"write": (alt.step, n // ROUNDS), "base": (b.baseline_once, nb // ROUNDS)}
    for _ in range(ROUNDS):
        for what, (step, count) in series.items():
            clock = clocks[what]
            gc.collect()
            s0 = clock.ticks() if isinstance(clock, BackendClock) else 0
            c0 = time.process_time()
            for _ in range(count):
                step()
            client[what].append(time.process_time() - c0)
            server[what].append(clock.ticks() - s0 if isinstance(clock, BackendClock) else 0)
    if alt.pending is not None:
        alt.step()  # the community keeps its size
    tick_ms = 1000 / CLK_TCK
    names = {
        "write": (f"@{size}", f"per write at {size:,} members"),
        "base": ("", "per baseline transaction"),
    }
    for what, (suffix, per) in names.items():
        count = series[what][1]
        prefix = "baseline_" if what == "base" else ""
        clock = clocks[what]
        if isinstance(clock, BackendClock):
            ticks = sum(server[what])
            b.put(
                f"{prefix}server_cpu_ms{suffix}",
                f"server CPU {per} (backend)",
                "ms",
                {"median": ticks * tick_ms / (count * ROUNDS), "p95": None, "n": count * ROUNDS},
                clock_ticks=ticks,
                tick_ms=tick_ms,
                rounds_ms=[t * tick_ms / count for t in server[what]],
            )
        else:
            b.notes.append(f"{prefix}server_cpu_ms{suffix} not measured: {clock}")
            log(f"no server CPU {per}: {clock}")
        b.put(
            f"{prefix}client_cpu_ms{suffix}",
            f"client CPU {per} (this process)",
            "ms",
            {
                "median": sum(client[what]) * 1000 / (count * ROUNDS),
                "p95": None,
                "n": count * ROUNDS,
            },
            rounds_ms=[s * 1000 / count for s in client[what]],
        )
