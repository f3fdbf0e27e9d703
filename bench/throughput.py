"""Throughput: writers in threads for a few seconds each (``baseline_tps_8``,
``write_tps_1x1``, ``write_tps_8x1``, ``write_tps_8x8``), and the 8-writer runs again without
the NOTIFY at COMMIT (``..._no_notify``, a diagnostic)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg

from buzz_signer.membership import Membership

from .common import Alternator, Bench, log, summary

WINDOW_S = 0.5  # rates are taken per window of this length, for a median


def run_writers(steps: Sequence[Callable[[], float]], seconds: float) -> dict[str, Any]:
    """Each step in a thread of its own, as often as it can for `seconds`."""
    n = len(steps)
    barrier = threading.Barrier(n + 1)
    done: list[list[float]] = [[] for _ in range(n)]  # completion times
    lat: list[list[float]] = [[] for _ in range(n)]
    errors: list[Exception] = []
    deadline = [0.0]

    def work(k: int) -> None:
        barrier.wait()
        try:
            while time.perf_counter() < deadline[0]:
                lat[k].append(steps[k]())
                done[k].append(time.perf_counter())
        except Exception as e:  # noqa: BLE001 - re-raised by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    deadline[0] = start + seconds
    barrier.wait()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    finish = max(d[-1] for d in done if d)
    total = sum(len(d) for d in done)
    # Rates per window (the whole ones), for a median; the overall rate beside.
    counts = [0] * max(1, int(seconds / WINDOW_S))
    for t in itertools.chain.from_iterable(done):
        w = int((t - start) / WINDOW_S)
        if w < len(counts):
            counts[w] += 1
    return {
        "median": statistics.median(c / WINDOW_S for c in counts),
        "p95": None,
        "n": len(counts),
        "overall": total / (finish - start),
        "writes": total,
        "seconds": finish - start,
        "window_s": WINDOW_S,
        "per_writer": [len(d) for d in done],
        "latency_ms": summary(list(itertools.chain.from_iterable(lat))),
    }


@contextlib.contextmanager
def announce_trigger_off(su: psycopg.Connection[Any]) -> Iterator[None]:
    """The NOTIFY at COMMIT switched off in the benchmark's database, on again after."""
    table = "buzz_private.member_lists"
    su.execute(f"ALTER TABLE {table} DISABLE TRIGGER member_lists_announce_at_commit")
    try:
        yield
    finally:
        su.execute(f"ALTER TABLE {table} ENABLE TRIGGER member_lists_announce_at_commit")


def throughput(b: Bench) -> None:
    p = b.plan
    size = p.throughput_size
    log(
        f"throughput: {p.writers} writers for {p.throughput_s:g} s each run (communities of {size:,})"
    )
    one = b.new_community(size)
    solo = b.new_community(size)
    eight = [b.new_community(size) for _ in range(p.writers)]
    conns = [psycopg.connect(b.url, autocommit=True) for _ in range(p.writers)]
    ms = [Membership.connect(b.url, b.key) for _ in range(p.writers)]
    try:
        for c in conns:  # warm-up (psycopg prepares a statement on its 5th run)
            for _ in range(6):
                b.baseline_once(c)
        base = run_writers([lambda c=c: b.baseline_once(c) for c in conns], p.throughput_s)
        b.put(
            f"baseline_tps_{p.writers}",
            f"baseline throughput, {p.writers} writers",
            "writes/s",
            base,
        )

        def alternators(cids: Sequence[Any], k: int) -> list[Alternator]:
            alts = [Alternator(ms[j], cids[j % len(cids)]) for j in range(k)]
            for a in alts:
                for _ in range(6):
                    a.step()
            return alts

        runs = [
            ("write_tps_1x1", "1 writer, 1 community", [solo], 1),
            (f"write_tps_{p.writers}x1", f"{p.writers} writers, 1 community", [one], p.writers),
            (
                f"write_tps_{p.writers}x{p.writers}",
                f"{p.writers} writers, {p.writers} communities",
                eight,
                p.writers,
            ),
        ]
        for key, label, cids, k in runs:
            log(f"throughput: {label}")
            gc.collect()
            r = run_writers([a.timed for a in alternators(cids, k)], p.throughput_s)
            b.put(key, f"throughput, {label}", "writes/s", r)
        # Not a target: the 8-writer runs again without the NOTIFY at COMMIT, which the
        # contract requires, to show what PostgreSQL's NOTIFY commit lock costs the scaling.
        with announce_trigger_off(b.su):
            for key, label, cids, k in runs[1:]:
                log(f"throughput: {label}, without the NOTIFY at COMMIT (diagnostic)")
                gc.collect()
                r = run_writers([a.timed for a in alternators(cids, k)], p.throughput_s)
                b.put(f"{key}_no_notify", f"throughput without NOTIFY, {label}", "writes/s", r)
    finally:
        for c in conns:
            c.close()
        for m in ms:
            m.close()
