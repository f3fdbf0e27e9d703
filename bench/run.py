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
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import itertools
import json
import os
import platform
import re
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.string import TextLoader

from buzz_signer.errors import ListTooFarAhead
from buzz_signer.keys import RelayKey
from buzz_signer.localdb import LocalCluster, LocalClusterError, find_bindir, url_with_dbname
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
DEFAULT_DB = "buzz_bench"
# created_at runs 1 s ahead per list of a community; bursts here write hundreds per second.
BENCH_LEAD_BOUND_S = 100_000_000
PHASES = ("begin+write", "prepare", "check+sign", "insert", "commit")
PHASES_NOTE = (
    "begin+write: BEGIN and the SQL write; prepare: buzz.prepare_membership_events run and its "
    "rows received (the serialized list included); check+sign: the signer's checks (sha256 of "
    "the list) and signatures, each verified; insert: buzz.insert_signed_events run (building "
    "the list's jsonb and keeping it for member_list), its rows counted, and the signed events "
    "built in Python from the signed text (json.loads); commit: COMMIT, with the deferred "
    "commit guard and NOTIFY"
)
SETUP_BATCH = 5_000  # members per transaction while filling a community (not timed)
BLCKSZ = 8192  # PostgreSQL's page size (checked against the server's block_size)

# The targets (checked only at the sizes they name).
TARGET_WRITE_RATIO_AT_10 = 2.0
TARGET_WRITE_MS_AT_10K = 15.0
TARGET_WAL_BYTES_AT_10K = 64 * 1024
TARGET_LIST_MS_AT_10K = 10.0
TARGET_BATCH_MS = 2_000.0
TARGET_SCALING = 1.7


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
)


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def new_pubkey() -> str:
    # The database and the signer check only the form (64 lowercase hex): random bytes will do,
    # and cost nothing next to deriving real x-only keys for 10,000 members.
    return secrets.token_hex(32)


def ms_since(t0: int) -> float:
    return (time.perf_counter_ns() - t0) / 1e6


def summary(xs: Sequence[float]) -> dict[str, Any]:
    s = sorted(xs)
    p95 = s[0] if len(s) == 1 else statistics.quantiles(s, n=20, method="inclusive")[-1]
    return {"median": statistics.median(s), "p95": p95, "min": s[0], "max": s[-1], "n": len(s)}


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


def lsn_int(lsn: str) -> int:
    hi, lo = lsn.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


class WalDump:
    """A write's own WAL records, read back with pg_waldump: the records of its transaction
    (its commit record included) and any other record on this database's pages within its LSN
    span (page pruning, say). The LSN difference counts every database of the cluster, so
    others at work on a shared server add to it; this does not."""

    _RECORD = re.compile(
        r"len \(rec/tot\):\s*\d+/\s*(\d+), tx:\s*(\d+), lsn: ([0-9A-F]+/[0-9A-F]+),"
    )
    _REL = re.compile(r"rel \d+/(\d+)/\d+")
    _FPW = re.compile(r"\(FPW\); hole: offset: \d+, length: (\d+)(?:, compression saved: (\d+))?")

    def __init__(self, program: Path, wal_dir: Path, dboid: int) -> None:
        self.program, self.wal_dir, self.dboid = program, wal_dir, str(dboid)

    @classmethod
    def for_database(cls, su: psycopg.Connection[Any]) -> WalDump | None:
        try:
            program = find_bindir() / "pg_waldump"
            data_dir = Path(su.execute("SHOW data_directory").fetchone()[0])
        except (LocalClusterError, psycopg.Error):
            return None
        wal_dir = data_dir / "pg_wal"
        if not program.is_file() or not os.access(wal_dir, os.R_OK | os.X_OK):
            return None  # another machine's server, or one we may not read
        dboid = su.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()[0]
        if su.execute("SHOW block_size").fetchone()[0] != str(BLCKSZ):
            return None
        return cls(program, wal_dir, dboid)

    def own_bytes(self, before: str, after: str, xid: int) -> tuple[int, int] | None:
        """(all bytes, bytes less full-page images) of the write between LSNs `before` and
        `after` whose transaction is `xid`; None when its commit record could not be read (the
        segment already recycled, say). Called right after each write: on a busy cluster old
        segments go quickly."""
        try:
            r = subprocess.run(
                [str(self.program), "-b", "-p", str(self.wal_dir), "-s", before, "-e", after],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        # pg_waldump may end on an error past the last flushed record: what it read stands.
        # With -b, each record's block references follow it on lines of their own.
        total = images = 0
        committed = False
        record: list[Any] | None = None  # [bytes, tx, is commit, databases, image bytes]

        def count(rec: list[Any] | None) -> None:
            nonlocal total, images, committed
            if rec and (rec[1] == xid or self.dboid in rec[3]):
                total += rec[0]
                images += rec[4]
                committed |= rec[1] == xid and rec[2]

        for line in r.stdout.splitlines():
            m = self._RECORD.search(line)
            if m:
                count(record)
                record = [int(m[1]), int(m[2]), "desc: COMMIT" in line, set(), 0]
            elif record is None:
                continue
            record[3].update(self._REL.findall(line))
            fpw = self._FPW.search(line)
            if fpw:
                record[4] += BLCKSZ - int(fpw[1]) - int(fpw[2] or 0)
        count(record)
        return (total, total - images) if committed else None


class Bench:
    def __init__(self, url: str, plan: Plan) -> None:
        self.url, self.plan = url, plan
        self.key = RelayKey.generate()
        # Every connection is set up like Membership.connect's: autocommit, defaults otherwise.
        self.su = psycopg.connect(url, autocommit=True)  # settings, WAL positions, setup
        self.m = Membership.connect(url, self.key)
        self.base = psycopg.connect(url, autocommit=True)  # the baseline's own connection
        self.figures: dict[str, dict[str, Any]] = {}
        self.details: dict[str, Any] = {}
        self.baseline_samples: list[float] = []
        self.communities: dict[int, Any] = {}
        self.waldump = WalDump.for_database(self.su)
        self._hosts = itertools.count(1)
        self.original_lead: int | None = None

    def close(self) -> None:
        for c in (self.m.conn, self.base, self.su):
            c.close()

    # ------------------------------------------------------------------ setup

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
        """A community of `size` members (its owner included); setup, not timed."""
        w = self.m.create_community(f"c{next(self._hosts)}.bench.example.org", new_pubkey())
        if w.outcome != "created":
            raise RuntimeError(f"create_community answered {w.outcome!r}")
        cid = w.details["community_id"]
        left = size - 1
        while left > 0:
            n = min(SETUP_BATCH, left)
            pubkeys = [new_pubkey() for _ in range(n)]
            while True:
                try:
                    self.m.add_relay_members(cid, pubkeys)
                    break
                except ListTooFarAhead:  # only with the default bound: wait for the clock
                    time.sleep(1)
            left -= n
        return cid

    def create_baseline_table(self, cid: Any) -> None:
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
        pk = pk or new_pubkey()
        t0 = time.perf_counter_ns()
        with conn.transaction():
            conn.execute(
                "INSERT INTO public.bench_baseline (community_id, pubkey, role, added_by)"
                " VALUES (%s, %s, %s, %s)",
                (self.baseline_cid, pk, "member", None),
            )
        return ms_since(t0)

    def wal_since(self, lsn: str) -> int:
        return self.su.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)::bigint", (lsn,)
        ).fetchone()[0]

    def wal_lsn(self) -> str:
        return self.su.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0]

    # ---------------------------------------------------------------- figures

    def put(self, key: str, label: str, unit: str, stats: dict[str, Any], **extra: Any) -> None:
        self.figures[key] = {"label": label, "unit": unit, **stats, **extra}

    def writes(self, i: int, size: int) -> None:
        """Full writes at one size, each after a baseline transaction (interleaved)."""
        log(f"writes at {size:,} members ({self.plan.write_reps[i]} timed)")
        alt = Alternator(self.m, self.communities[size])
        for _ in range(self.plan.warmup[i]):
            alt.step()
            self.baseline_once()
        gc.collect()
        adds: list[float] = []
        removes: list[float] = []
        base: list[float] = []
        for _ in range(self.plan.write_reps[i]):
            base.append(self.baseline_once())
            kind, took = alt.step()
            (adds if kind == "add" else removes).append(took)
        self.baseline_samples += base
        self.put(
            f"write_ms@{size}",
            f"write at {size:,} members (add/remove, whole call)",
            "ms",
            summary(adds + removes),
            add=summary(adds),
            remove=summary(removes),
            baseline_interleaved=summary(base),
        )

    def lists(self, i: int, size: int) -> None:
        """buzz.member_list fetched by psycopg: parsed (json.loads, its default for jsonb) and
        as text (a text loader for jsonb: no parsing in Python, the database's part)."""
        log(f"member_list at {size:,} members ({self.plan.list_reps[i]} timed, each way)")
        cid = self.communities[size]
        q = "SELECT buzz.member_list(%s)"
        with (
            psycopg.connect(self.url, autocommit=True) as parsed,
            psycopg.connect(self.url, autocommit=True) as text,
        ):
            text.adapters.register_loader("jsonb", TextLoader)
            doc = parsed.execute(q, (cid,)).fetchone()[0]
            raw = text.execute(q, (cid,)).fetchone()[0]
            if len(doc["tags"]) - 1 != size or not isinstance(raw, str):
                raise RuntimeError(f"member_list at {size}: {len(doc['tags']) - 1} members")
            for _ in range(self.plan.warmup[i]):
                parsed.execute(q, (cid,)).fetchone()
                text.execute(q, (cid,)).fetchone()
            gc.collect()
            a: list[float] = []
            b: list[float] = []
            for _ in range(self.plan.list_reps[i]):
                t0 = time.perf_counter_ns()
                text.execute(q, (cid,)).fetchone()
                a.append(ms_since(t0))
                t0 = time.perf_counter_ns()
                parsed.execute(q, (cid,)).fetchone()
                b.append(ms_since(t0))
        self.put(
            f"member_list_text_ms@{size}",
            f"member_list at {size:,}, fetched as text",
            "ms",
            summary(a),
            list_bytes=len(raw.encode()),
        )
        self.put(
            f"member_list_parsed_ms@{size}",
            f"member_list at {size:,}, parsed (json.loads)",
            "ms",
            summary(b),
        )

    def wal(self, i: int, size: int) -> None:
        log(f"WAL per write at {size:,} members ({self.plan.wal_reps[i]} writes)")
        cid = self.communities[size]
        alt = Alternator(self.m, cid)
        samples, owned = [], []
        for _ in range(self.plan.wal_reps[i]):
            lsn = self.wal_lsn()
            alt.step()
            end = self.wal_lsn()
            samples.append(self.wal_since(lsn))
            # The write replaced the list's header row: its xmin is the write's transaction.
            xid = self.su.execute(
                "SELECT xmin::text::bigint FROM buzz_private.member_lists WHERE community_id = %s",
                (cid,),
            ).fetchone()[0]
            owned.append(self.waldump.own_bytes(lsn, end, xid) if self.waldump else None)
        self.put_wal(f"wal_bytes@{size}", f"WAL per write at {size:,} members", samples, owned)

    def baseline_wal(self) -> None:
        samples, owned = [], []
        for _ in range(max(self.plan.wal_reps)):
            pk = new_pubkey()
            lsn = self.wal_lsn()
            self.baseline_once(pk=pk)
            end = self.wal_lsn()
            samples.append(self.wal_since(lsn))
            xid = self.su.execute(
                "SELECT xmin::text::bigint FROM public.bench_baseline"
                " WHERE community_id = %s AND pubkey = %s",
                (self.baseline_cid, pk),
            ).fetchone()[0]
            owned.append(self.waldump.own_bytes(lsn, end, xid) if self.waldump else None)
        self.put_wal("baseline_wal_bytes", "WAL per baseline transaction", samples, owned)

    def put_wal(
        self, key: str, label: str, samples: list[int], owned: list[tuple[int, int] | None]
    ) -> None:
        """The LSN difference (the whole cluster's WAL meanwhile), and the WAL records that are
        the write's own, read back with pg_waldump (`owned`: None where that failed), with and
        without their full-page images (8 kB for each page first changed since a checkpoint)."""
        self.put(key, f"{label} (LSN diff)", "bytes", summary(samples))
        own = [b for b in owned if b is not None]
        if own and len(own) * 2 >= len(owned):  # most were read back
            unread = len(owned) - len(own)
            family = key.replace("wal_", "wal_own_", 1)
            self.put(family, f"{label} (own)", "bytes", summary([b[0] for b in own]), unread=unread)
            self.put(
                family.replace("wal_own_", "wal_own_nofpi_", 1),
                f"{label} (own, less page images)",
                "bytes",
                summary([b[1] for b in own]),
                unread=unread,
            )
        else:
            self.details.setdefault("waldump_failed", []).append(key)

    def _run_writers(self, steps: Sequence[Callable[[], float]], seconds: float) -> dict[str, Any]:
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
        # Rates per window of 0.5 s (the whole ones), for a median; the overall rate beside.
        window = 0.5
        counts = [0] * max(1, int(seconds / window))
        for t in itertools.chain.from_iterable(done):
            w = int((t - start) / window)
            if w < len(counts):
                counts[w] += 1
        return {
            "median": statistics.median(c / window for c in counts),
            "p95": None,
            "n": len(counts),
            "overall": total / (finish - start),
            "writes": total,
            "seconds": finish - start,
            "window_s": window,
            "per_writer": [len(d) for d in done],
            "latency_ms": summary(list(itertools.chain.from_iterable(lat))),
        }

    def throughput(self) -> None:
        p = self.plan
        size = p.throughput_size
        log(
            f"throughput: {p.writers} writers for {p.throughput_s:g} s each run"
            f" (communities of {size:,})"
        )
        one = self.new_community(size)
        solo = self.new_community(size)
        eight = [self.new_community(size) for _ in range(p.writers)]
        conns = [psycopg.connect(self.url, autocommit=True) for _ in range(p.writers)]
        ms = [Membership.connect(self.url, self.key) for _ in range(p.writers)]
        try:
            for c in conns:  # warm-up (psycopg prepares a statement on its 5th run)
                for _ in range(6):
                    self.baseline_once(c)
            base = self._run_writers(
                [lambda c=c: self.baseline_once(c) for c in conns], p.throughput_s
            )
            self.put(
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
                r = self._run_writers([a.timed for a in alternators(cids, k)], p.throughput_s)
                self.put(key, f"throughput, {label}", "writes/s", r)
            # Not a target: the 8-writer runs again without the NOTIFY at COMMIT, which the
            # contract requires, to show what PostgreSQL's NOTIFY commit lock costs the scaling.
            with self.announce_trigger_off():
                for key, label, cids, k in runs[1:]:
                    log(f"throughput: {label}, without the NOTIFY at COMMIT (diagnostic)")
                    gc.collect()
                    r = self._run_writers([a.timed for a in alternators(cids, k)], p.throughput_s)
                    self.put(
                        f"{key}_no_notify",
                        f"throughput without NOTIFY, {label}",
                        "writes/s",
                        r,
                    )
        finally:
            for c in conns:
                c.close()
            for m in ms:
                m.close()

    @contextlib.contextmanager
    def announce_trigger_off(self) -> Iterator[None]:
        """The NOTIFY at COMMIT switched off in the benchmark's database, on again after."""
        table = "buzz_private.member_lists"
        self.su.execute(f"ALTER TABLE {table} DISABLE TRIGGER member_lists_announce_at_commit")
        try:
            yield
        finally:
            self.su.execute(f"ALTER TABLE {table} ENABLE TRIGGER member_lists_announce_at_commit")

    def batch(self) -> None:
        p = self.plan
        log(f"one transaction adding {p.batch_size:,} members, {p.batch_reps}x")
        warm = self.new_community(1)
        with self.m.transaction() as tx:  # warm-up, smaller
            tx.add_relay_members(warm, [new_pubkey() for _ in range(min(1000, p.batch_size))])
        samples, wal, own = [], [], []
        for _ in range(p.batch_reps):
            cid = self.new_community(1)
            pubkeys = [new_pubkey() for _ in range(p.batch_size)]
            gc.collect()
            lsn = self.wal_lsn()
            t0 = time.perf_counter_ns()
            with self.m.transaction() as tx:
                added = tx.add_relay_members(cid, pubkeys)
            samples.append(ms_since(t0))
            end = self.wal_lsn()
            wal.append(self.wal_since(lsn))
            if added != p.batch_size:
                raise RuntimeError(f"add_relay_members added {added}")
            if self.waldump:
                xid = self.su.execute(
                    "SELECT xmin::text::bigint FROM buzz_private.member_lists"
                    " WHERE community_id = %s",
                    (cid,),
                ).fetchone()[0]
                own.append(self.waldump.own_bytes(lsn, end, xid))
        read = [b for b in own if b is not None]
        self.put(
            "batch_add_ms",
            f"{p.batch_size:,} adds in one transaction",
            "ms",
            summary(samples),
            members=p.batch_size,
            wal_bytes=summary(wal),
            wal_own_bytes=summary([b[0] for b in read]) if read else None,
        )

        log(f"backfill_from_allowlist of {p.batch_size:,}, {p.batch_reps}x")
        samples = []
        for _ in range(p.batch_reps):
            cid = self.new_community(1)
            self.su.execute(
                "INSERT INTO buzz_private.relay_allowlist (community_id, pubkey)"
                " SELECT %s, unnest(%s::text[])",
                (cid, [new_pubkey() for _ in range(p.batch_size)]),
            )
            gc.collect()
            t0 = time.perf_counter_ns()
            w = self.m.backfill_from_allowlist(cid)
            samples.append(ms_since(t0))
            if w.outcome != p.batch_size:
                raise RuntimeError(f"backfill_from_allowlist added {w.outcome}")
        self.put(
            "backfill_ms",
            f"backfill_from_allowlist of {p.batch_size:,}",
            "ms",
            summary(samples),
            members=p.batch_size,
        )

    def verification(self) -> None:
        """What the database's signature check (buzz_private.bip340_verify) adds.

        Measured alone in the server: N verifications of a real signature in one query. A
        write at any number of members verifies two signatures (its list, whose id is 32 bytes
        whatever its size, and one 8000); a batch of N adds verifies N + 1.
        """
        n, p = 2000, self.plan
        log(f"bip340_verify, {n} calls a query")
        msg = secrets.token_hex(32)
        sig = self.key.sign(msg)
        # The signature is made to depend on g (its first 64 bytes are the same): IMMUTABLE
        # with constant arguments, the call would be folded into one at plan time.
        query = (
            "SELECT count(*) FILTER (WHERE buzz_private.bip340_verify("
            "substr(decode(%s, 'hex') || int4send(g), 1, 64), decode(%s, 'hex'), decode(%s, 'hex')))"
            " FROM generate_series(1, %s) g"
        )
        samples = []
        for i in range(8):
            t0 = time.perf_counter_ns()
            (valid,) = self.su.execute(query, (sig, msg, self.key.pubkey, n)).fetchone()
            if valid != n:
                raise RuntimeError("a valid signature did not verify")
            if i >= 3:
                samples.append(ms_since(t0) / n)
        self.put("verify_ms", "one bip340_verify in the server", "ms", summary(samples))
        self.put(
            "verify_adds_ms@write",
            "verification added to a write at any size (2 sigs)",
            "ms",
            {k: v * 2 if k != "n" else v for k, v in summary(samples).items()},
        )

        # The batch's own check: bip340_first_invalid over N + 1 signatures, in threads, as
        # insert_signed_events calls it; and with buzz_bip340.max_threads = 1 for comparison.
        count = p.batch_size + 1
        log(f"bip340_first_invalid over {count:,} signatures, with and without threads")
        msgs = [os.urandom(32) for _ in range(count)]
        sigs = [bytes.fromhex(self.key.sign(m.hex())) for m in msgs]
        batch_query = "SELECT buzz_private.bip340_first_invalid(%s::bytea[], %s::bytea[], %s)"
        pubkey = bytes.fromhex(self.key.pubkey)
        timed: dict[str, list[float]] = {"0": [], "1": []}
        for i in range(6):
            for threads, runs in timed.items():
                self.su.execute("SELECT set_config('buzz_bip340.max_threads', %s, false)", (threads,))
                t0 = time.perf_counter_ns()
                (bad,) = self.su.execute(batch_query, (sigs, msgs, pubkey)).fetchone()
                if bad != 0:
                    raise RuntimeError("a valid signature did not verify")
                if i >= 1:  # the first round warms up
                    runs.append(ms_since(t0))
        self.su.execute("RESET buzz_bip340.max_threads")
        self.put(
            "verify_batch_ms",
            f"verification added to the batch of {p.batch_size:,} ({count:,} sigs, threads)",
            "ms",
            summary(timed["0"]),
        )
        self.put(
            "verify_batch_one_thread_ms",
            "... the same in one thread (buzz_bip340.max_threads = 1)",
            "ms",
            summary(timed["1"]),
        )

    def burst(self) -> None:
        p = self.plan
        log(f"lead of created_at after a {p.burst_s:g} s burst on one community")
        cid = self.new_community(10)
        alt = Alternator(self.m, cid)
        writes = 0
        start = time.perf_counter()
        while time.perf_counter() - start < p.burst_s:
            alt.step()
            writes += 1
        elapsed = time.perf_counter() - start
        lead = self.su.execute(
            "SELECT max(l.created_at) - floor(extract(epoch FROM clock_timestamp()))::bigint"
            " FROM buzz_private.member_lists l WHERE l.community_id = %s",
            (cid,),
        ).fetchone()[0]
        self.put(
            "burst_lead_s",
            f"created_at lead after a {p.burst_s:g} s burst",
            "s",
            {"median": lead, "p95": None, "n": 1},
            writes=writes,
            seconds=elapsed,
            writes_per_s=writes / elapsed,
            default_bound_s=self.original_lead,
        )

    # ------------------------------------------------------- where the time goes

    def profile(self) -> None:
        """Where the time goes: the phases of a write (the steps of Membership.transaction and
        _publish, timed one by one) at the smallest and largest sizes and of one batch, the
        server's functions meanwhile (track_functions), and member_list's parts."""
        n = self.plan.profile_writes
        prof: dict[str, Any] = {"writes": {}, "phases_note": PHASES_NOTE}
        base: list[tuple[float, float]] = []  # one baseline transaction before each write
        for size in (self.plan.sizes[0], self.plan.sizes[-1]):
            log(f"where the time goes at {size:,} members ({n} writes)")
            cid = self.communities[size]
            before = self._function_stats()
            conn = psycopg.connect(self.url, autocommit=True, options="-c track_functions=all")
            m = Membership(conn, self.key)
            phases: list[list[float]] = []
            pending = None
            for _ in range(n + 2):  # the first two: warm-up
                if pending is None:
                    pending = new_pubkey()
                    call = ("SELECT buzz.add_relay_member(%s, %s)", (cid, pending))
                else:
                    call = ("SELECT buzz.remove_relay_member(%s, %s)", (cid, pending))
                    pending = None
                base.append(self._baseline_phased())
                phases.append(self._phased(m, *call))
            conn.close()
            prof["writes"][size] = {
                "writes": n,
                "phases_ms": {k: summary([p[j] for p in phases[2:]]) for j, k in enumerate(PHASES)},
                "server_functions_ms": self._function_stats_after(
                    before, "prepare_membership_events", n + 2
                ),
            }
        prof["baseline_phases_ms"] = {
            "begin+insert": summary([b[0] for b in base]),
            "commit": summary([b[1] for b in base]),
        }
        prof["member_list_parts_ms"] = self._list_parts(self.communities[self.plan.sizes[-1]])
        prof["member_list_parts_size"] = self.plan.sizes[-1]
        self.details["profile"] = prof

    def _phased(self, m: Membership, write_sql: str, params: tuple) -> list[float]:
        """One write as Membership does it (its own steps), each timed: PHASES, in ms."""
        t = [time.perf_counter_ns()]
        with m.conn.transaction():
            m.conn.execute(write_sql, params)
            t.append(time.perf_counter_ns())
            prepared = m._prepare()
            t.append(time.perf_counter_ns())
            sigs = m.signer.sign_all(prepared)
            t.append(time.perf_counter_ns())
            m._insert(prepared, sigs)
            t.append(time.perf_counter_ns())
        t.append(time.perf_counter_ns())
        return [(b - a) / 1e6 for a, b in itertools.pairwise(t)]

    def _baseline_phased(self) -> tuple[float, float]:
        """The baseline's two steps, timed: BEGIN + INSERT, then COMMIT (ms)."""
        t0 = time.perf_counter_ns()
        with self.base.transaction():
            self.base.execute(
                "INSERT INTO public.bench_baseline (community_id, pubkey, role, added_by)"
                " VALUES (%s, %s, %s, %s)",
                (self.baseline_cid, new_pubkey(), "member", None),
            )
            t1 = time.perf_counter_ns()
        return (t1 - t0) / 1e6, ms_since(t1)

    def _batch_profile(self) -> dict[str, Any]:
        """One batch of plan.batch_size adds: its phases and the server's functions."""
        size = self.plan.batch_size
        log(f"where the time goes in one batch of {size:,}")
        cid = self.new_community(1)
        pubkeys = [new_pubkey() for _ in range(size)]
        before = self._function_stats()
        conn = psycopg.connect(self.url, autocommit=True, options="-c track_functions=all")
        phases = self._phased(
            Membership(conn, self.key),
            "SELECT buzz.add_relay_members(%s, %s::text[])",
            (cid, pubkeys),
        )
        conn.close()
        return {
            "size": size,
            "phases_ms": dict(zip(PHASES, phases, strict=True)),
            "server_functions_ms": self._function_stats_after(
                before, "prepare_membership_events", 1
            ),
        }

    def _function_stats(self) -> dict[str, tuple[int, float, float]]:
        self.su.execute("SELECT pg_stat_clear_snapshot()")
        rows = self.su.execute(
            "SELECT schemaname || '.' || funcname, calls, total_time, self_time"
            " FROM pg_stat_user_functions"
        ).fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def _function_stats_after(
        self, before: dict[str, tuple[int, float, float]], marker: str, calls: int
    ) -> list[dict[str, Any]]:
        # A backend's function counts reach the shared statistics when it exits.
        deadline = time.monotonic() + 3
        while True:
            after = self._function_stats()
            got = after.get(f"buzz.{marker}", (0, 0, 0))[0] - before.get(f"buzz.{marker}", (0,))[0]
            if got >= calls or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        out = []
        for name, (c, total, own) in after.items():
            c0, t0, s0 = before.get(name, (0, 0.0, 0.0))
            if c > c0:
                out.append(
                    {
                        "function": name,
                        "calls_per_write": (c - c0) / calls,
                        "total_ms": (total - t0) / calls,
                        "self_ms": (own - s0) / calls,
                    }
                )
        return sorted(out, key=lambda f: -f["self_ms"])

    def _list_parts(self, cid: Any) -> dict[str, Any]:
        """member_list's parts in the server (each returning a few bytes only), interleaved
        with the whole fetch as text, so that all see the same load."""
        parts = {
            "concat pieces (list_tags)": "SELECT octet_length(buzz_private.list_tags(%s))",
            "served copy written out as text, not sent": (
                "SELECT octet_length(buzz.member_list(%s)::text)"
            ),
            "built from header and pieces (no copy kept), written out, not sent": (
                "SELECT octet_length(buzz_private.list_event(%s)::text)"
            ),
            "whole fetch as text": "SELECT buzz.member_list(%s)",
        }
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.adapters.register_loader("jsonb", TextLoader)
            xs: dict[str, list[float]] = {label: [] for label in parts}
            for i in range(max(5, self.plan.profile_writes) + 3):  # the first three: warm-up
                for label, q in parts.items():
                    t0 = time.perf_counter_ns()
                    conn.execute(q, (cid,)).fetchone()
                    if i >= 3:
                        xs[label].append(ms_since(t0))
        return {label: summary(v) for label, v in xs.items()}

    # --------------------------------------------------------------------- run

    def run(self) -> None:
        p = self.plan
        self.raise_lead_bound()
        log("setting up communities (not timed)")
        for size in p.sizes:
            self.communities[size] = self.new_community(size)
        self.create_baseline_table(self.communities[p.sizes[0]])
        # Statistics as autovacuum would leave them: the plans of the functions' queries
        # depend on them (how many members a community has, on average).
        self.su.execute("ANALYZE")
        for _ in range(20):
            self.baseline_once()
        for i, size in enumerate(p.sizes):
            self.writes(i, size)
        self.put(
            "baseline_ms",
            "baseline: bare INSERT of one row + COMMIT",
            "ms",
            summary(self.baseline_samples),
        )
        for i, size in enumerate(p.sizes):
            self.lists(i, size)
        log("WAL per baseline transaction")
        self.baseline_wal()
        for i, size in enumerate(p.sizes):
            self.wal(i, size)
        self.profile()  # in the same state as the figures above
        self.throughput()
        self.batch()
        self.verification()
        self.burst()
        self.details["profile"]["batch"] = self._batch_profile()


# ------------------------------------------------------------------ ratios and targets


def add_ratios(figures: dict[str, dict[str, Any]], writers: int) -> None:
    """Each cost as a multiple of the baseline's: latencies of its latency, WAL of its WAL
    (measured the same way), throughput as cost per write (the baseline's rate over the
    figure's rate)."""
    base_ms = figures["baseline_ms"]["median"]
    base_tps = figures[f"baseline_tps_{writers}"]["median"]
    for key, f in figures.items():
        f["ratio"] = None
        if f["unit"] == "ms":
            f["ratio"], f["ratio_of"] = f["median"] / base_ms, "baseline_ms"
        elif f["unit"] == "bytes":
            # wal_bytes@N -> baseline_wal_bytes, wal_own_bytes@N -> baseline_wal_own_bytes, ...
            of = "baseline_" + key.split("@")[0].removeprefix("baseline_")
            base = figures.get(of, {}).get("median")
            if base:
                f["ratio"], f["ratio_of"] = f["median"] / base, of
        elif f["unit"] == "writes/s" and f["median"]:
            f["ratio"] = base_tps / f["median"]
            f["ratio_of"] = f"baseline_tps_{writers} (cost per write: baseline rate / rate)"


def targets(figures: dict[str, dict[str, Any]], plan: Plan) -> list[dict[str, Any]]:
    def fig(key: str) -> dict[str, Any] | None:
        return figures.get(key)

    w = plan.writers
    out = []

    def target(name: str, key: str, value: Any, limit: str, ok: Callable[[Any], bool]) -> None:
        measured = value is not None
        out.append(
            {
                "target": name,
                "figure": key,
                "value": value,
                "limit": limit,
                "result": ("pass" if ok(value) else "miss") if measured else "n/a",
            }
        )

    f = fig("write_ms@10")
    target(
        "full write at 10 members / baseline",
        "write_ms@10",
        f and f["ratio"],
        f"<= {TARGET_WRITE_RATIO_AT_10:g}x",
        lambda v: v <= TARGET_WRITE_RATIO_AT_10,
    )
    f = fig("write_ms@10000")
    target(
        "write at 10,000 members, median",
        "write_ms@10000",
        f and f["median"],
        f"<= {TARGET_WRITE_MS_AT_10K:g} ms",
        lambda v: v <= TARGET_WRITE_MS_AT_10K,
    )
    wal_key = "wal_own_bytes@10000" if fig("wal_own_bytes@10000") else "wal_bytes@10000"
    f = fig(wal_key)
    target(
        "WAL per write at 10,000 members, median" + (" (own)" if "own" in wal_key else ""),
        wal_key,
        f and f["median"],
        f"<= {TARGET_WAL_BYTES_AT_10K // 1024} kB",
        lambda v: v <= TARGET_WAL_BYTES_AT_10K,
    )
    f = fig("member_list_text_ms@10000")
    target(
        "member_list at 10,000 members, median",
        "member_list_text_ms@10000",
        f and f["median"],
        f"<= {TARGET_LIST_MS_AT_10K:g} ms",
        lambda v: v <= TARGET_LIST_MS_AT_10K,
    )
    f = fig("batch_add_ms")
    target(
        "10,000 members added in one batch, median",
        "batch_add_ms",
        f["median"] if f and f.get("members") == 10_000 else None,
        f"< {TARGET_BATCH_MS / 1000:g} s",
        lambda v: v < TARGET_BATCH_MS,
    )
    one, eight = fig(f"write_tps_{w}x1"), fig(f"write_tps_{w}x{w}")
    target(
        f"{w} communities in parallel / 1 community, throughput",
        f"write_tps_{w}x{w} / write_tps_{w}x1",
        eight["median"] / one["median"] if one and eight and one["median"] else None,
        f">= {TARGET_SCALING:g}x",
        lambda v: v >= TARGET_SCALING,
    )
    return out


# ------------------------------------------------------------------------ output


def fmt(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        if value < 0.1:  # e.g. one signature check: 0.05 ms, not 0.00
            return f"{value * 1000:.0f} us"
        return f"{value:,.0f} ms" if value >= 1000 else f"{value:.2f} ms"
    if unit == "bytes":
        return f"{value / 1024:,.1f} kB" if value >= 1024 else f"{value:,.0f} B"
    if unit == "writes/s":
        return f"{value:,.0f}/s"
    if unit == "s":
        return f"{value:,} s"
    return str(value)


def fmt_target(t: dict[str, Any]) -> str:
    v = t["value"]
    if v is None:
        return "-"
    if "x" in t["limit"]:
        return f"{v:.2f}x"
    if "kB" in t["limit"]:
        return f"{v / 1024:,.1f} kB"
    if " s" in t["limit"]:
        return f"{v / 1000:.2f} s"
    return f"{v:.2f} ms"


def table(results: dict[str, Any]) -> str:
    figs, meta = results["figures"], results["meta"]
    lines = [
        f"buzz membership benchmark: database {meta['database']}, PostgreSQL "
        f"{meta['postgres']['server_version']}, {meta['nproc']} CPUs, {meta['timestamp']}"
        + (" (QUICK: smoke run, not the issue's sizes)" if meta["quick"] else ""),
        "",
        f"{'figure':<54} {'median':>11} {'p95':>11} {'x baseline':>10} {'n':>6}",
        "-" * 96,
    ]
    for f in figs.values():
        ratio = "-" if f.get("ratio") is None else f"{f['ratio']:.2f}"
        lines.append(
            f"{f['label']:<54} {fmt(f['median'], f['unit']):>11} {fmt(f['p95'], f['unit']):>11}"
            f" {ratio:>10} {f['n']:>6}"
        )
    lines += [
        "",
        f"{'target':<56} {'value':>10} {'limit':>10}  result",
        "-" * 88,
    ]
    for t in results["targets"]:
        lines.append(
            f"{t['target']:<56} {fmt_target(t):>10} {t['limit']:>10}  {t['result'].upper()}"
        )
    prof = results.get("profile")
    if prof:
        lines += profile_lines(prof)
    lines += notify_lines(results["figures"], meta["plan"]["writers"])
    lines += ["", *(f"note: {n}" for n in meta["notes"])]
    return "\n".join(lines)


def profile_lines(prof: dict[str, Any]) -> list[str]:
    def phases(d: dict[str, Any]) -> str:
        return ", ".join(
            f"{k} {v['median'] if isinstance(v, dict) else v:.2f}" for k, v in d.items()
        )

    def functions(fs: list[dict[str, Any]], top: int) -> str:
        return ", ".join(f"{f['function'].split('.')[-1]} {f['self_ms']:.2f}" for f in fs[:top])

    lines = ["", "where the time goes (ms; medians; see profile in bench.json):"]
    lines.append(f"  baseline: {phases(prof['baseline_phases_ms'])}")
    for size, w in prof["writes"].items():
        lines.append(f"  write at {int(size):,}: {phases(w['phases_ms'])}")
        lines.append(f"    server self time per write: {functions(w['server_functions_ms'], 6)}")
    b = prof["batch"]
    lines.append(f"  one batch of {b['size']:,}: {phases(b['phases_ms'])}")
    lines.append(f"    server self time: {functions(b['server_functions_ms'], 5)}")
    lines.append(
        f"  member_list at {prof['member_list_parts_size']:,} in the server: "
        + phases(prof["member_list_parts_ms"])
    )
    return lines


def notify_lines(figures: dict[str, Any], w: int) -> list[str]:
    """The scaling with and without the NOTIFY at COMMIT (the diagnostic runs)."""
    keys = (f"write_tps_{w}x1", f"write_tps_{w}x{w}")
    if not all(k in figures and f"{k}_no_notify" in figures for k in keys):
        return []
    one, eight = (figures[k]["median"] for k in keys)
    one_nn, eight_nn = (figures[f"{k}_no_notify"]["median"] for k in keys)
    line = (
        f"{w} communities / 1, throughput: {eight / one:.2f}x ({eight:,.0f}/s over {one:,.0f}/s);"
        " without the NOTIFY at COMMIT (diagnostic, not the contract):"
        f" {eight_nn / one_nn:.2f}x ({eight_nn:,.0f}/s over {one_nn:,.0f}/s)"
    )
    return ["", line]


def chart(path: Path, results: dict[str, Any]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figs, meta = results["figures"], results["meta"]
    sizes = meta["sizes"]
    fig, ax = plt.subplots(figsize=(9, 6.2), dpi=120)
    series = [
        ("write_ms", "membership write (whole call: write, prepare, sign, insert, commit)", "o-"),
        ("member_list_text_ms", "member_list, fetched as text", "s-"),
        ("member_list_parsed_ms", "member_list, parsed by psycopg (json.loads)", "^--"),
    ]
    for key, label, style in series:
        med = [figs[f"{key}@{s}"]["median"] for s in sizes]
        p95 = [figs[f"{key}@{s}"]["p95"] for s in sizes]
        ax.errorbar(
            sizes,
            med,
            yerr=[[0] * len(sizes), [max(0.0, p - m) for p, m in zip(p95, med, strict=True)]],
            fmt=style,
            capsize=4,
            label=label,
        )
    base = figs["baseline_ms"]["median"]
    ax.axhline(base, color="grey", ls=":", label=f"baseline: bare INSERT + COMMIT ({base:.2f} ms)")
    if 10_000 in sizes:
        ax.plot([10_000], [TARGET_WRITE_MS_AT_10K], "rx", ms=10, label="target: write <= 15 ms")
        ax.plot(
            [10_000], [TARGET_LIST_MS_AT_10K], "r+", ms=12, label="target: member_list <= 10 ms"
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("community size (members)")
    ax.set_ylabel("latency, ms (median; whisker up to p95)")
    ax.set_title(
        "buzz membership: latency against community size\n"
        f"PostgreSQL {meta['postgres']['server_version']}, {meta['nproc']} CPUs,"
        f" {meta['timestamp']}",
        fontsize=10,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def machine(su: psycopg.Connection[Any], dbname: str) -> dict[str, Any]:
    settings = su.execute(
        "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY(%s)",
        (
            [
                "synchronous_commit",
                "fsync",
                "full_page_writes",
                "wal_level",
                "shared_buffers",
                "checkpoint_timeout",
                "max_wal_size",
            ],
        ),
    ).fetchall()
    return {
        "server_version": su.execute("SHOW server_version").fetchone()[0],
        "version": su.execute("SELECT version()").fetchone()[0],
        "settings": dict(settings),
        "other_sessions": other_sessions(su, dbname),
    }


def other_sessions(su: psycopg.Connection[Any], dbname: str) -> int:
    """Client sessions on other databases of the cluster: others at work on a shared server."""
    return su.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM %s",
        (dbname,),
    ).fetchone()[0]


# -------------------------------------------------------------------------- main


def recreate(admin_url: str, dbname: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as c:
        ident = sql.Identifier(dbname)
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        c.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    return url_with_dbname(admin_url, dbname)


def drop(admin_url: str, dbname: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: sizes 10/100, few reps")
    ap.add_argument("--db", default=None, help=f"database to (re)create (default {DEFAULT_DB})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument(
        "--admin-url", help="superuser URL of another server (default: the local cluster)"
    )
    ap.add_argument("--drop", action="store_true", help="drop the database at the end")
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    dbname = args.db or (f"{DEFAULT_DB}_quick" if args.quick else DEFAULT_DB)

    wall = time.monotonic()
    admin_url = args.admin_url or LocalCluster().start().url("postgres")
    log(f"database {dbname}: created again and migrated")
    url = recreate(admin_url, dbname)
    upgrade(url)
    bench = Bench(url, plan)
    load_before = os.getloadavg()
    sessions_before = other_sessions(bench.su, dbname)
    try:
        bench.run()
        meta_pg = machine(bench.su, dbname)
    finally:
        bench.restore_lead_bound()
        bench.close()
        if args.drop:
            drop(admin_url, dbname)
    add_ratios(bench.figures, plan.writers)

    # Order the figures for reading: baseline first.
    first = [
        "baseline_ms",
        "baseline_wal_bytes",
        "baseline_wal_own_bytes",
        "baseline_wal_own_nofpi_bytes",
        f"baseline_tps_{plan.writers}",
    ]
    figures = {k: bench.figures[k] for k in first if k in bench.figures}
    figures.update({k: v for k, v in bench.figures.items() if k not in figures})
    notes = [
        (
            "the baseline is BEGIN, INSERT of one row, COMMIT into public.bench_baseline, a "
            "table made by the benchmark LIKE buzz_private.relay_members INCLUDING ALL (same "
            "columns, checks, indexes) plus the same foreign key, without the project's triggers "
            "and commit guard (a superuser INSERT into the members table itself would fire them: "
            "BZUNS). Same connection settings as the writes; one baseline sample is taken before "
            "each timed write, so both see the same load."
        ),
        (
            "writes alternate: add a new pubkey, then remove it (the community keeps its size); "
            "each is one whole Membership call (write, prepare, sign, insert, COMMIT)."
        ),
        (
            "member_list: 'as text' is what the database and the wire cost (jsonb fetched with a "
            "text loader, not parsed); 'parsed' adds psycopg's default json.loads. The target "
            "is checked on 'as text'."
        ),
        (
            f"max_list_lead_seconds in {dbname} was raised from {bench.original_lead} to "
            f"{BENCH_LEAD_BOUND_S:,} for the whole run (bursts push created_at 1 s ahead per "
            "list; with the default bound they would stop with BZLAG) and restored at the end."
        ),
        (
            "throughput: median of the rates of 0.5 s windows; 'x baseline' is cost per write, "
            f"the baseline's {plan.writers}-writer rate divided by the figure's rate. "
            f"Communities of {plan.throughput_size:,} members. 'throughput without NOTIFY' is a "
            "diagnostic, not a target: the same runs with the trigger that sends the NOTIFY at "
            "COMMIT disabled in this database (and enabled again right after)."
        ),
        (
            "WAL is cluster-wide (pg_current_wal_insert_lsn before and after each write): other "
            f"sessions on the cluster add to it ({sessions_before} other client sessions at the "
            "start); the median resists them."
        ),
        (
            "the machine is shared: figures are medians, and the ratios to the baseline are what "
            "to compare across runs."
        ),
    ]
    results = {
        "meta": {
            "timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "quick": args.quick,
            "database": dbname,
            "sizes": list(plan.sizes),
            "plan": asdict(plan),
            "nproc": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "psycopg": psycopg.__version__,
            "postgres": meta_pg,
            "other_sessions_before": sessions_before,
            "lead_bound_during_run_s": BENCH_LEAD_BOUND_S,
            "lead_bound_restored_s": bench.original_lead,
            "wall_s": round(time.monotonic() - wall, 1),
            "notes": notes,
        },
        "figures": figures,
        "targets": targets(figures, plan),
        "profile": bench.details.get("profile"),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / "bench.json"
    png_path = args.out / "latency.png"
    json_path.write_text(json.dumps(results, indent=2) + "\n")
    drew = chart(png_path, results)
    print(table(results))
    print()
    print(f"wrote {json_path}")
    print(
        f"wrote {png_path}"
        if drew
        else f"no chart: matplotlib is not installed (pip install -e '.[bench]'); {png_path}"
    )
    log(f"done in {results['meta']['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
