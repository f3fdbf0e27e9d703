"""What the benchmark's parts share: the plan, the run's state, the baseline transaction,
statistics and the database set-up.

Each figure is measured in the module named after what it measures (latency, cpu, wal,
throughput, batch, verify, profile); bench.run orchestrates them and bench.report judges and
prints. They all write into one Bench, so that the figures keep the order they were taken in.
"""

from __future__ import annotations

import argparse
import itertools
import json
import secrets
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.string import TextLoader

from buzz_signer.errors import ListTooFarAhead
from buzz_signer.keys import RelayKey
from buzz_signer.localdb import LocalCluster, url_with_dbname
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

from .waldump import WalDump

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
# created_at runs 1 s ahead per list of a community; bursts here write hundreds per second.
BENCH_LEAD_BOUND_S = 100_000_000
SETUP_BATCH = 5_000  # members per transaction while filling a community (not timed)
# The baseline: one member-shaped row into a copy of the members table without its triggers.
BASELINE_INSERT = (
    "INSERT INTO public.bench_baseline (community_id, pubkey, role, added_by)"
    " VALUES (%s, %s, %s, %s)"
)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    write_reps: tuple[int, ...]  # timed writes per size (even: as many adds as removes)
    list_reps: tuple[int, ...]
    wal_reps: tuple[int, ...]
    warmup: tuple[int, ...]  # untimed writes (and reads) before each series (even)
    writers: int
    throughput_s: float
    throughput_size: int
    batch_size: int
    batch_reps: int
    burst_s: float
    profile_writes: int
    cpu_writes: int  # writes at the smallest size whose CPU time is summed (even)
    cpu_baselines: int  # baseline transactions likewise (cheaper: more, for the clock ticks)


FULL = Plan(
    sizes=(10, 1_000, 10_000),
    write_reps=(300, 300, 120),
    list_reps=(200, 200, 100),
    wal_reps=(40, 40, 30),
    warmup=(20, 20, 10),
    writers=8,
    throughput_s=5.0,
    throughput_size=1_000,
    batch_size=10_000,
    batch_reps=3,
    burst_s=10.0,
    profile_writes=30,
    cpu_writes=400,
    cpu_baselines=4_000,
)
QUICK = Plan(
    sizes=(10, 100),
    write_reps=(16, 16),
    list_reps=(16, 16),
    wal_reps=(6, 6),
    warmup=(4, 4),
    writers=8,
    throughput_s=0.5,
    throughput_size=100,
    batch_size=500,
    batch_reps=1,
    burst_s=1.0,
    profile_writes=6,
    cpu_writes=40,
    cpu_baselines=600,
)


def log(msg: str, who: str = "bench") -> None:
    print(f"{who}: {msg}", file=sys.stderr, flush=True)


def new_pubkey() -> str:
    # The database and the signer check only the form (64 lowercase hex): random bytes will do,
    # and cost nothing next to deriving real x-only keys for 10,000 members.
    return secrets.token_hex(32)


def ms_since(t0: int) -> float:
    return (time.perf_counter_ns() - t0) / 1e6


def percentile(s: Sequence[float], q: int) -> float:
    """The q-th percentile of sorted `s`, interpolated (statistics' inclusive method)."""
    return s[0] if len(s) == 1 else statistics.quantiles(s, n=100, method="inclusive")[q - 1]


def summary(xs: Sequence[float]) -> dict[str, Any]:
    s = sorted(xs)
    return {
        "median": statistics.median(s),
        "p95": percentile(s, 95),
        "min": s[0],
        "max": s[-1],
        "n": len(s),
    }


def text_loading(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    """`conn` returning json and jsonb as the server's text, unparsed: what the database and
    the wire cost. Both types, since the functions' results move from jsonb to json."""
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)
    return conn


class Alternator:
    """Full membership writes on one community that keep its size: add a new pubkey, then
    remove it again. Each call is one whole Membership call (write, prepare, sign, insert,
    COMMIT), timed from the call to its return."""

    def __init__(self, m: Membership, cid: Any) -> None:
        self.m, self.cid, self.pending = m, cid, None

    def step(self) -> tuple[str, float]:
        if self.pending is None:
            pk = new_pubkey()
            t0 = time.perf_counter_ns()
            w = self.m.add_relay_member(self.cid, pk)
            took = ms_since(t0)
            if w.outcome != "added":
                raise RuntimeError(f"add_relay_member answered {w.outcome!r}")
            self.pending = pk
            return "add", took
        t0 = time.perf_counter_ns()
        w = self.m.remove_relay_member(self.cid, self.pending)
        took = ms_since(t0)
        if w.outcome != "removed":
            raise RuntimeError(f"remove_relay_member answered {w.outcome!r}")
        self.pending = None
        return "remove", took

    def timed(self) -> float:
        return self.step()[1]


def new_community(m: Membership, host: str, size: int, owner: str | None = None) -> Any:
    """A community of `size` members (its owner included: `owner`, or a key of its own),
    filled in transactions of SETUP_BATCH; setup, not timed. Works under the default lead
    bound too (bench.soak)."""
    w = m.create_community(host, owner or new_pubkey())
    if w.outcome != "created":
        raise RuntimeError(f"create_community answered {w.outcome!r}")
    cid = w.details["community_id"]
    left = size - 1
    while left > 0:
        n = min(SETUP_BATCH, left)
        pubkeys = [new_pubkey() for _ in range(n)]
        while True:
            try:
                m.add_relay_members(cid, pubkeys)
                break
            except ListTooFarAhead:  # only with the default bound: wait for the clock
                time.sleep(1)
        left -= n
    return cid


def recreate(admin_url: str, dbname: str) -> str:
    """A new empty database (dropped first if there): every run starts from the same state."""
    with psycopg.connect(admin_url, autocommit=True) as c:
        ident = sql.Identifier(dbname)
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        c.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    return url_with_dbname(admin_url, dbname)


def drop(admin_url: str, dbname: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))


def database_options(ap: argparse.ArgumentParser, default_db: str) -> None:
    """The options every run shares: where its database is, and where its output goes."""
    ap.add_argument("--db", default=None, help=f"database to (re)create (default {default_db})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument(
        "--admin-url", help="superuser URL of another server (default: the local cluster)"
    )
    ap.add_argument("--drop", action="store_true", help="drop the database at the end")


def raise_lead_bound(url: str) -> None:
    """The database's lead bound raised for a run (BENCH_LEAD_BOUND_S): a benchmark writes
    hundreds of lists of one community in seconds, which run created_at far ahead of the
    clock."""
    with psycopg.connect(url, autocommit=True) as su:
        su.execute(
            "UPDATE buzz_private.settings SET max_list_lead_seconds = %s", (BENCH_LEAD_BOUND_S,)
        )


def fresh_database(admin_url: str | None, dbname: str, who: str = "bench") -> tuple[str, str]:
    """(the admin URL, the URL of `dbname` created again and migrated); the local cluster,
    started if need be, unless `admin_url` names another server."""
    admin_url = admin_url or LocalCluster().start().url("postgres")
    log(f"database {dbname}: created again and migrated", who)
    url = recreate(admin_url, dbname)
    upgrade(url)
    return admin_url, url


class Bench:
    """One run's state: its connections, the communities, and every figure taken so far."""

    def __init__(self, url: str, plan: Plan) -> None:
        self.url, self.plan = url, plan
        self.key = RelayKey.generate()
        # Every connection is set up like Membership.connect's: autocommit, defaults otherwise.
        self.su = psycopg.connect(url, autocommit=True)  # settings, WAL positions, setup
        self.m = Membership.connect(url, self.key)
        self.base = psycopg.connect(url, autocommit=True)  # the baseline's own connection
        self.figures: dict[str, dict[str, Any]] = {}
        self.details: dict[str, Any] = {}
        self.notes: list[str] = []  # said under the table: what a part could not measure
        self.baseline_samples: list[float] = []
        self.communities: dict[int, Any] = {}
        self.waldump: WalDump | None = None  # set by the driver (bench.wal)
        self._hosts = itertools.count(1)
        self.original_lead: int | None = None
        self.baseline_cid: Any = None

    def close(self) -> None:
        for c in (self.m.conn, self.base, self.su):
            c.close()

    def put(self, key: str, label: str, unit: str, stats: dict[str, Any], **extra: Any) -> None:
        self.figures[key] = {"label": label, "unit": unit, **stats, **extra}

    def raise_lead_bound(self) -> None:
        row = self.su.execute("SELECT max_list_lead_seconds FROM buzz_private.settings").fetchone()
        self.original_lead = row[0]
        self.su.execute(
            "UPDATE buzz_private.settings SET max_list_lead_seconds = %s", (BENCH_LEAD_BOUND_S,)
        )

    def restore_lead_bound(self) -> None:
        if self.original_lead is not None:
            self.su.execute(
                "UPDATE buzz_private.settings SET max_list_lead_seconds = %s",
                (self.original_lead,),
            )

    def new_community(self, size: int) -> Any:
        return new_community(self.m, f"c{next(self._hosts)}.bench.example.org", size)

    def create_baseline_table(self, cid: Any) -> None:
        """public.bench_baseline: the members table's columns, checks, indexes and foreign
        key, without its triggers (which would make the commit guard refuse the baseline)."""
        self.su.execute(
            "CREATE TABLE public.bench_baseline (LIKE buzz_private.relay_members INCLUDING ALL)"
        )
        self.su.execute(
            "ALTER TABLE public.bench_baseline ADD FOREIGN KEY (community_id)"
            " REFERENCES buzz_private.communities ON DELETE CASCADE"
        )
        self.baseline_cid = cid

    def baseline_once(
        self, conn: psycopg.Connection[Any] | None = None, pk: str | None = None
    ) -> float:
        """One bare transaction: BEGIN, INSERT one member-shaped row, COMMIT."""
        conn = conn or self.base
        t0 = time.perf_counter_ns()
        with conn.transaction():
            conn.execute(BASELINE_INSERT, self.baseline_row(pk))
        return ms_since(t0)

    def baseline_row(self, pk: str | None = None) -> tuple[Any, ...]:
        return (self.baseline_cid, pk or new_pubkey(), "member", None)


def report_targets(
    section: str, results: dict[str, Any], rows: Sequence[tuple[str, str, str]], out: Path
) -> Path:
    """The section's targets into its results, `out/<section>.json` written, and the table
    printed: target, value, result."""
    results["targets"] = [{"target": t, "value": v, "result": r} for t, v, r in rows]
    path = out / f"{section}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    width = max(len(t) for t, _, _ in rows)
    print(f"\n{section + ' target':<{width}}  value  result")
    for t, v, r in rows:
        print(f"{t:<{width}}  {v}  {r}")
    print(f"\nwrote {path}")
    return path

