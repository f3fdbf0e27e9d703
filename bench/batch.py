"""Big writes and bursts: one transaction adding many members (``batch_add_ms``), the
allowlist copied in (``backfill_ms``), and how far ``created_at`` runs ahead of the clock
after a burst of writes (``burst_lead_s``)."""

from __future__ import annotations

import gc
import time

from .common import Alternator, Bench, log, ms_since, new_pubkey, summary
from .wal import list_xid, own, wal_lsn, wal_since


def batch_add(b: Bench) -> None:
    p = b.plan
    log(f"one transaction adding {p.batch_size:,} members, {p.batch_reps}x")
    warm = b.new_community(1)
    with b.m.transaction() as tx:  # warm-up, smaller
        tx.add_relay_members(warm, [new_pubkey() for _ in range(min(1000, p.batch_size))])
    samples, wal, owned = [], [], []
    for _ in range(p.batch_reps):
        cid = b.new_community(1)
        pubkeys = [new_pubkey() for _ in range(p.batch_size)]
        gc.collect()
        lsn = wal_lsn(b.su)
        t0 = time.perf_counter_ns()
        with b.m.transaction() as tx:
            added = tx.add_relay_members(cid, pubkeys)
        samples.append(ms_since(t0))
        end = wal_lsn(b.su)
        wal.append(wal_since(b.su, lsn))
        if added != p.batch_size:
            raise RuntimeError(f"add_relay_members added {added}")
        if b.waldump:
            owned.append(own(b, lsn, end, list_xid(b.su, cid)))
    read = [x for x in owned if x is not None]
    b.put(
        "batch_add_ms",
        f"{p.batch_size:,} adds in one transaction",
        "ms",
        summary(samples),
        members=p.batch_size,
        wal_bytes=summary(wal),
        wal_own_bytes=summary([x[0] for x in read]) if read else None,
    )


def backfill(b: Bench) -> None:
    p = b.plan
    log(f"backfill_from_allowlist of {p.batch_size:,}, {p.batch_reps}x")
    samples = []
    for _ in range(p.batch_reps):
        cid = b.new_community(1)
        b.su.execute(
            "INSERT INTO buzz_private.relay_allowlist (community_id, pubkey)"
            " SELECT %s, unnest(%s::text[])",
            (cid, [new_pubkey() for _ in range(p.batch_size)]),
        )
        gc.collect()
        t0 = time.perf_counter_ns()
        w = b.m.backfill_from_allowlist(cid)
        samples.append(ms_since(t0))
        if w.outcome != p.batch_size:
            raise RuntimeError(f"backfill_from_allowlist added {w.outcome}")
    b.put(
        "backfill_ms",
        f"backfill_from_allowlist of {p.batch_size:,}",
        "ms",
        summary(samples),
        members=p.batch_size,
    )


def burst(b: Bench) -> None:
    """One client writing as fast as it can: each list's created_at is at least 1 s after
    the last, so the lead shows how soon the default bound (BZLAG) would stop it."""
    p = b.plan
    log(f"lead of created_at after a {p.burst_s:g} s burst on one community")
    cid = b.new_community(10)
    alt = Alternator(b.m, cid)
    writes = 0
    start = time.perf_counter()
    while time.perf_counter() - start < p.burst_s:
        alt.step()
        writes += 1
    elapsed = time.perf_counter() - start
    lead = b.su.execute(
        "SELECT max(l.created_at) - floor(extract(epoch FROM clock_timestamp()))::bigint"
        " FROM buzz_private.member_lists l WHERE l.community_id = %s",
        (cid,),
    ).fetchone()[0]
    b.put(
        "burst_lead_s",
        f"created_at lead after a {p.burst_s:g} s burst",
        "s",
        {"median": lead, "p95": None, "n": 1},
        writes=writes,
        seconds=elapsed,
        writes_per_s=writes / elapsed,
        default_bound_s=b.original_lead,
    )
