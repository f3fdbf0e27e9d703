"""Write throughput on a Citus cluster of one worker against one of two (docs/scale-out.md),
and on one server as the baseline.

The two clusters (buzz_signer.localcitus, under .buzz/bench-citus-N) and the one server
(buzz_signer.localdb, .buzz/bench-citus-0) run at once on this machine, each with the same
schema and COMMUNITIES communities of MEMBERS members. WRITERS threads,
each with its own Membership on the coordinator, add members to random communities, one
write (its own transaction, with its signed list) after another, for ROUND_S seconds; the
rounds take the three in turn, and each one's figure is the median of its rounds'
writes per second. bench/out/citus.json holds the run.

    python -m bench.citus [--rounds 6] [--round-s 5] [--writers 8]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from buzz_signer.keys import RelayKey
from buzz_signer.localcitus import LocalCitus
from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

from .common import BENCH_LEAD_BOUND_S, DEFAULT_OUT, REPO, log, new_pubkey
from .throughput import run_writers

COMMUNITIES = 16
MEMBERS = 100
PORTS = {0: 55221, 1: 55201, 2: 55211}
NAMES = {0: "one server", 1: "1 worker", 2: "2 workers"}


def _cluster(workers: int) -> tuple[LocalCitus | LocalCluster, str]:
    """A Citus cluster of `workers` workers, or (0) one server."""
    root = REPO / ".buzz" / f"bench-citus-{workers}"
    server = LocalCitus(root, PORTS[workers], workers) if workers else LocalCluster(root, PORTS[0])
    server.start()
    url = server.create_database("buzz_bench", drop_existing=True)
    upgrade(url)
    return server, url


def _communities(url: str, key: RelayKey) -> list[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as su:
        su.execute("UPDATE buzz_private.settings SET max_list_lead_seconds = %s",
                   (BENCH_LEAD_BOUND_S,))  # fmt: skip
    with Membership.connect(url, key) as m:
        ids = []
        for i in range(COMMUNITIES):
            cid = m.create_community(f"c{i}.bench.example", new_pubkey()).details["community_id"]
            m.add_relay_members(cid, [new_pubkey() for _ in range(MEMBERS)])
            ids.append(cid)
    return ids


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.citus", description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=6, help="rounds (each runs all three)")
    p.add_argument("--round-s", type=float, default=5.0, help="seconds per round")
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "citus.json")
    args = p.parse_args(argv)

    key = RelayKey.generate()
    clusters = {n: _cluster(n) for n in (0, 1, 2)}
    try:
        communities = {n: _communities(url, key) for n, (_, url) in clusters.items()}
        sessions = {
            n: [Membership.connect(url, key) for _ in range(args.writers)]
            for n, (_, url) in clusters.items()
        }
        rng = random.Random(1)

        def step(m: Membership, ids: list[str]):
            def write() -> float:
                t = time.perf_counter()
                m.add_relay_member(rng.choice(ids), new_pubkey())
                return (time.perf_counter() - t) * 1000

            return write

        rates: dict[int, list[float]] = {n: [] for n in clusters}
        latency: dict[int, list[float]] = {n: [] for n in clusters}
        order = list(clusters)
        for r in range(args.rounds):
            for n in order[r % 3 :] + order[: r % 3]:
                res = run_writers([step(m, communities[n]) for m in sessions[n]], args.round_s)
                rates[n].append(res["overall"])
                latency[n].append(res["latency_ms"]["median"])
                log(f"round {r + 1}: {NAMES[n]}: {res['overall']:.0f} writes/s,"
                    f" median {res['latency_ms']['median']:.2f} ms")  # fmt: skip
        for ms in sessions.values():
            for m in ms:
                m.close()
    finally:
        for cluster, _ in clusters.values():
            cluster.destroy()
    result = {
        "writers": args.writers,
        "communities": COMMUNITIES,
        "members": MEMBERS,
        "round_s": args.round_s,
        "rounds": args.rounds,
        "writes_per_s": {NAMES[n]: statistics.median(v) for n, v in rates.items()},
        "write_ms_median": {NAMES[n]: statistics.median(v) for n, v in latency.items()},
        "rounds_writes_per_s": {NAMES[n]: v for n, v in rates.items()},
    }
    tps = result["writes_per_s"]
    result["two_over_one"] = tps["2 workers"] / tps["1 worker"]
    result["one_worker_over_one_server"] = tps["1 worker"] / tps["one server"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"citus: one server {tps['one server']:.0f} writes/s, 1 worker {tps['1 worker']:.0f},"
        f" 2 workers {tps['2 workers']:.0f} (2/1 = {result['two_over_one']:.2f}x),"
        f" {args.writers} writers; {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
