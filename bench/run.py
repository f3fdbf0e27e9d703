"""make bench: what a membership write costs, measured the way a relay operator would judge it.

    python -m bench.run            # the full run (make bench): sizes 10, 1,000, 10,000
    python -m bench.run --quick    # a smoke run: sizes 10 and 100, few repetitions (< 20 s)

Runs on a dedicated database (default ``buzz_bench``, dropped and created again, migrated with
buzz_signer.migrate.upgrade) in the project's local cluster (LocalCluster), or on the server of
``--admin-url``. Prints a table, writes ``bench/out/bench.json`` and ``bench/out/latency.png``.

Every latency is the median of repeated runs, with its p95, and every cost is also given as a
ratio to a baseline measured in the same run: the machine is shared and noisy, so ratios are
what to compare across runs. The baseline is a bare transaction inserting one row into a
table shaped like the members table (``public.bench_baseline``: ``LIKE
buzz_private.relay_members INCLUDING ALL`` plus the same foreign key), without the project's
triggers and commit guard, on a connection set up like Membership.connect's. Its samples are
taken interleaved with the membership writes, one before each write. docs/benchmark.md says
what each figure means.

This module is the driver only: each figure is measured in the module named after it
(bench.latency, cpu, wal, roles, throughput, batch, verify, profile); bench.report judges and prints.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from . import batch, cpu, latency, profile, report, roles, throughput, verify, wal
from .common import FULL, QUICK, Bench, Plan, database_options, drop, fresh_database, log
from .waldump import WalDump

DEFAULT_DB = "buzz_bench"


def run(b: Bench) -> None:
    """Every part, in an order that matters: the latency, CPU, list, WAL figures and the
    profile of writes on the same communities, in the same state (statistics fresh from
    ANALYZE); the runs that add communities or big batches after them."""
    p: Plan = b.plan
    b.raise_lead_bound()
    log("setting up communities (not timed)")
    for size in p.sizes:
        b.communities[size] = b.new_community(size)
    b.create_baseline_table(b.communities[p.sizes[0]])
    # Statistics as autovacuum would leave them: the plans of the functions' queries
    # depend on them (how many members a community has, on average).
    b.su.execute("ANALYZE")
    b.waldump = WalDump.for_database(b.su)
    for _ in range(20):
        b.baseline_once()
    for i, size in enumerate(p.sizes):
        latency.writes(b, i, size)
    latency.baseline(b)
    cpu.cpu(b)
    for i, size in enumerate(p.sizes):
        latency.lists(b, i, size)
    wal.baseline_wal(b)
    for i, size in enumerate(p.sizes):
        wal.wal(b, i, size)
    profile.profile(b)  # in the same state as the figures above
    roles.roles(b)
    throughput.throughput(b)
    batch.batch_add(b)
    batch.backfill(b)
    verify.verification(b)
    batch.burst(b)
    profile.batch_profile(b)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: sizes 10/100, few reps")
    database_options(ap, DEFAULT_DB)
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    dbname = args.db or (f"{DEFAULT_DB}_quick" if args.quick else DEFAULT_DB)

    wall = time.monotonic()
    admin_url, url = fresh_database(args.admin_url, dbname)
    b = Bench(url, plan)
    load_before = os.getloadavg()
    sessions_before = report.other_sessions(b.su, dbname)
    try:
        run(b)
        postgres = report.machine(b.su, dbname)
    finally:
        b.restore_lead_bound()
        b.close()
        if args.drop:
            drop(admin_url, dbname)
    res = report.results(
        b,
        quick=args.quick,
        dbname=dbname,
        postgres=postgres,
        load_before=load_before,
        sessions_before=sessions_before,
        wall_s=round(time.monotonic() - wall, 1),
    )
    report.write(args.out, res)
    log(f"done in {res['meta']['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
