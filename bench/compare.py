"""The server's CPU per write of this checkout's SQL against another revision's, in one run.

    python -m bench.compare 7af0e7a                  # sizes 10 and 10,000
    python -m bench.compare HEAD~3 --sizes 10 --writes 600
    python -m bench.compare HEAD --sizes 10 --apply part.sql   # what a part of the write costs

A change to the write path is judged by what it saves the server, and a shared machine's load
moves any figure between two runs: so both versions run here side by side. The other
revision is checked out (git worktree, under a temporary directory) and migrates a database
of its own; this checkout migrates another. Each size gets a community in each; the same
writes (add a new pubkey, then remove it) alternate between the two databases, one Membership
(this checkout's client) each, and each backend's CPU time is read from /proc around its
writes. Prints per size and version: the median wall time and the server's CPU per write.
Both databases use the C extension the server has installed (this checkout's, once
scripts/setup has built it): what differs is the migrations and the SQL functions.

--apply FILE runs FILE's SQL in the other revision's database once it is migrated: a function
replaced by one with a part taken out, say, to weigh that part against the same revision
before changing anything.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

from buzz_signer.keys import RelayKey
from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

from .common import REPO, new_community, new_pubkey, raise_lead_bound, recreate
from .cpu import CLK_TCK, BackendClock

WHO = "compare"


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """`rev` checked out in a temporary worktree."""
    with tempfile.TemporaryDirectory(prefix="buzz-compare-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), rev],
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=True
            )


def migrate_from(tree: Path, url: str) -> None:
    """`alembic upgrade head` with that tree's migrations and function files."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from buzz_signer.migrate import upgrade; upgrade(sys.argv[2])"
    subprocess.run([sys.executable, "-c", code, str(tree), url], check=True, cwd=tree)


def prepared(url: str, key: RelayKey, sizes: Sequence[int]) -> tuple[Membership, dict[int, Any]]:
    """A Membership on `url` and a community per size, the lead bound raised for the run."""
    raise_lead_bound(url)
    m = Membership.connect(url, key)
    communities = {n: new_community(m, f"compare-{n}.example", n) for n in sizes}
    with psycopg.connect(url, autocommit=True) as su:
        su.execute("ANALYZE")
    return m, communities


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the revision to compare this checkout with (e.g. a commit)")
    ap.add_argument("--sizes", default="10,10000", help="community sizes (default 10,10000)")
    ap.add_argument("--writes", type=int, default=300, help="timed writes per size and version")
    ap.add_argument(
        "--apply", type=Path, help="SQL to run in the other revision's database after migrating it"
    )
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    admin_url = LocalCluster().start().url("postgres")
    key = RelayKey.generate()
    versions: dict[str, tuple[Membership, dict[int, Any]]] = {}
    with checkout(args.rev) as tree:
        for name, migrate in (
            ("this checkout", upgrade),
            (args.rev, lambda url: migrate_from(tree, url)),
        ):
            url = recreate(admin_url, f"buzz_compare_{len(versions)}")
            migrate(url)
            if args.apply and name == args.rev:
                with psycopg.connect(url, autocommit=True) as su:
                    su.execute(args.apply.read_text())
            versions[name] = prepared(url, key, sizes)
    print(f"server CPU per write: {args.writes} writes per size and version, alternating")
    for n in sizes:
        walls: dict[str, list[float]] = {v: [] for v in versions}
        ticks = dict.fromkeys(versions, 0)
        clocks = {v: BackendClock(m.conn.info.backend_pid) for v, (m, _) in versions.items()}
        pubkeys = [new_pubkey() for _ in range(args.writes // 2 + 10)]
        for i in range(args.writes + 20):  # the first 20 warm up
            for v, (m, communities) in versions.items():
                write = m.add_relay_member if i % 2 == 0 else m.remove_relay_member
                before, t0 = clocks[v].ticks(), time.perf_counter()
                write(communities[n], pubkeys[i // 2])
                if i >= 20:
                    walls[v].append((time.perf_counter() - t0) * 1000)
                    ticks[v] += clocks[v].ticks() - before
        for v in versions:
            cpu_ms = ticks[v] * 1000 / CLK_TCK / args.writes
            print(
                f"  {n:>6,} members, {v:<16} write median {statistics.median(walls[v]):7.2f} ms,"
                f" server CPU {cpu_ms:6.2f} ms/write"
            )
    for m, _ in versions.values():
        m.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
