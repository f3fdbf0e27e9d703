"""make soak: does anything grow under sustained load?

    python -m bench.soak                          # 10 minutes ($SOAK_MINUTES), windows of 60 s
    python -m bench.soak --minutes 0.5 --window-seconds 10 --sizes 10,100 --per-size 2

The benchmark's series last seconds; what bloats (a table rewritten on every write, an index
on rows that come and go, a queue no one trims) shows only over minutes. So: communities of
10, 1,000 and 10,000 members (3 of each), one writer thread per community on its own
Membership connection, alternating add_relay_member of a new pubkey and remove_relay_member
of it at a steady 0.8 writes/s per community, autovacuum at the server's defaults. The pace
stays inside the lead bound: each list's created_at is at least 1 s after the last, and
prepare refuses more than settings.max_list_lead_seconds (300) ahead (BZLAG), which the soak
leaves as it is.

Each window prints the median and p99 write time per size and the size of every table, TOAST
table and index in buzz_private. The run PASSes when, for every size, the last window's
median write is at most 1.2x the first window's, and no relation except those of the tables
that hold growing data (relay_members, membership_events) ends larger than twice its size
after the first window or 16 MB, whichever is larger. Exits 1 on FAIL. Writes
bench/out/soak.json (every window).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership

from .common import (
    Alternator,
    database_options,
    drop,
    fresh_database,
    log,
    new_community,
    percentile,
)
from .report import host, machine, utc_now

DEFAULT_DB = "buzz_soak"
DEFAULT_SIZES = (10, 1_000, 10_000)
DEFAULT_RATE = 0.8  # writes/s per community: below 1, so created_at keeps to the clock
WARMUP_WRITES = 6  # per writer, untimed, before the first window
LATENCY_LIMIT = 1.2  # last window's median over the first's, per size
GROWTH_FACTOR = 2.0
GROWTH_FLOOR = 16 * 1024 * 1024
# The tables whose data grows by design: members come and go, every write adds an event.
GROWING = ("buzz_private.relay_members", "buzz_private.membership_events")

# Every table of buzz_private, its TOAST table (and the TOAST table's index) and its indexes.
RELATIONS = """
SELECT n.nspname || '.' || t.relname AS owner, r.kind, n.nspname || '.' || r.name AS name,
       pg_relation_size(r.oid) AS bytes
FROM pg_class t
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL (
    SELECT 'table' AS kind, t.relname::text AS name, t.oid
    UNION ALL
    SELECT 'index', i.relname::text, i.oid
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = t.oid
    UNION ALL
    SELECT 'toast', t.relname || ' (toast)', t.reltoastrelid WHERE t.reltoastrelid <> 0
    UNION ALL
    SELECT 'toast index', t.relname || ' (toast index)', x.indexrelid
    FROM pg_index x WHERE t.reltoastrelid <> 0 AND x.indrelid = t.reltoastrelid
) r
WHERE n.nspname = 'buzz_private' AND t.relkind IN ('r', 'p', 'm')
ORDER BY t.relname, r.kind <> 'table', r.name
"""
# Why a relation grows: its dead rows, and how often autovacuum came (JSON only).
TABLE_STATS = """
SELECT schemaname || '.' || relname, n_live_tup, n_dead_tup, autovacuum_count, vacuum_count
FROM pg_stat_all_tables WHERE schemaname = 'buzz_private'
"""


class Samples:
    """Write times (ms) per size, taken by the main thread window by window."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._new: list[tuple[int, float]] = []

    def add(self, size: int, ms: float) -> None:
        with self._lock:
            self._new.append((size, ms))

    def take(self) -> list[tuple[int, float]]:
        with self._lock:
            out, self._new = self._new, []
        return out


class Writer(threading.Thread):
    """One community's writes at a steady pace, on a Membership connection of its own.

    A few untimed writes first, so that the first window is not the one where psycopg starts
    preparing its statements (after 5 runs) and caches warm. A write that runs late moves the
    next one later: no catching up in a burst, which would push created_at ahead of the clock.
    """

    def __init__(
        self,
        url: str,
        key: RelayKey,
        cid: Any,
        size: int,
        offset: float,
        clock: Clock,
        samples: Samples,
    ) -> None:
        super().__init__(name=f"writer-{size}-{cid}", daemon=True)
        self.url, self.key, self.cid, self.size = url, key, cid, size
        self.offset, self.clock, self.samples = offset, clock, samples
        self.error: BaseException | None = None
        self.writes = 0

    def run(self) -> None:
        c = self.clock
        try:
            with Membership.connect(self.url, self.key) as m:
                alt = Alternator(m, self.cid)
                for _ in range(WARMUP_WRITES):
                    alt.step()
                c.start.wait()
                due = c.t0 + self.offset
                while not c.stop.wait(max(0.0, due - time.monotonic())):
                    self.samples.add(self.size, alt.step()[1])
                    self.writes += 1
                    due = max(due + c.interval, time.monotonic())
                if alt.pending is not None:
                    alt.step()  # the community ends at its size
        except threading.BrokenBarrierError:
            pass  # another writer failed while warming up: its error is the one to report
        except BaseException as e:  # noqa: BLE001 - reported by the main thread: FAIL
            self.error = e
            c.stop.set()
            c.start.abort()


class Clock:
    """The writers' common start (once all have warmed up), pace and stop."""

    def __init__(self, writers: int, rate: float) -> None:
        self.interval = 1 / rate
        self.t0 = 0.0
        self.stop = threading.Event()
        self.start = threading.Barrier(writers + 1, action=self._started)

    def _started(self) -> None:
        self.t0 = time.monotonic()


def stats(xs: Sequence[float]) -> dict[str, Any]:
    if not xs:
        return {"median": None, "p99": None, "max": None, "n": 0}
    s = sorted(xs)
    return {"median": statistics.median(s), "p99": percentile(s, 99), "max": s[-1], "n": len(s)}


def relation_sizes(su: psycopg.Connection[Any]) -> tuple[dict[str, int], dict[str, Any]]:
    """(bytes by relation name, each relation's table and kind)."""
    rows = su.execute(RELATIONS).fetchall()
    return (
        {name: size for _, _, name, size in rows},
        {name: {"table": owner, "kind": kind} for owner, kind, name, _ in rows},
    )


def table_stats(su: psycopg.Connection[Any]) -> dict[str, dict[str, int]]:
    su.execute("SELECT pg_stat_clear_snapshot()")
    keys = ("live", "dead", "autovacuums", "vacuums")
    return {r[0]: dict(zip(keys, r[1:], strict=True)) for r in su.execute(TABLE_STATS)}


def human(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MB"
    return f"{n / 1024:.0f} kB"


def ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def fill(entries: list[str], first: str, indent: str, width: int = 100) -> list[str]:
    """`entries` joined by commas into lines of at most `width`, never breaking one."""
    lines, line = [], first
    for i, e in enumerate(entries):
        piece = e + ("," if i < len(entries) - 1 else "")
        if line.strip() and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = indent + piece
        else:
            line = f"{line} {piece}" if line.strip() else line + piece
    return [*lines, line]


def window_lines(
    w: dict[str, Any], total: int, first: dict[str, int] | None, kinds: dict[str, Any]
) -> list[str]:
    """A window as printed: the write times per size, then the sizes of each table of
    buzz_private, its TOAST table (and TOAST index) and its indexes, with the change since the
    first window where there is one."""
    per_size = "; ".join(
        f"{int(size):,}: {ms(s['median'])} / {ms(s['p99'])} (n {s['n']})"
        for size, s in w["writes"].items()
    )
    head = f"window {w['window']}/{total} ({w['start_s']:.0f}-{w['end_s']:.0f} s)"
    lines = [f"{head}, write ms median / p99 by size: {per_size}"]

    def size(name: str) -> str:
        now, before = w["relations"][name], (first or {}).get(name)
        if first is None or now == before:
            return human(now)
        if before is None:
            return f"{human(now)} (new)"
        return f"{human(now)} ({'+' if now > before else '-'}{human(abs(now - before))})"

    by_table: dict[str, dict[str, list[str]]] = {}
    for name in w["relations"]:
        k = kinds[name]
        by_table.setdefault(k["table"], {}).setdefault(k["kind"], []).append(name)
    for table, rels in by_table.items():
        entries = [f"{table.removeprefix('buzz_private.')} {size(table)}"]
        for toast, index in zip(rels.get("toast", []), rels.get("toast index", []), strict=True):
            entries.append(f"toast {size(toast)} + index {size(index)}")
        entries += [f"{i.removeprefix('buzz_private.')} {size(i)}" for i in rels.get("index", [])]
        lines += fill(entries, "  ", "      ")
    return lines


def verdict(
    windows: list[dict[str, Any]],
    kinds: dict[str, Any],
    sizes: Sequence[int],
    planned: int,
    errors: list[str],
) -> dict[str, Any]:
    """PASS or FAIL, and every check behind it."""
    first, last = windows[0], windows[-1]
    latency = {}
    for size in sizes:
        a = first["writes"][str(size)]["median"]
        z = last["writes"][str(size)]["median"]
        ratio = z / a if a and z is not None else None
        latency[str(size)] = {
            "first_median_ms": a,
            "last_median_ms": z,
            "ratio": ratio,
            "result": "pass" if ratio is not None and ratio <= LATENCY_LIMIT else "fail",
        }
    growth, exempt = [], []
    for name, size in last["relations"].items():
        start = first["relations"].get(name, 0)
        table = kinds[name]["table"]
        row = {"relation": name, "table": table, "after_first_window": start, "last": size}
        if table in GROWING:
            exempt.append(row)
            continue
        limit = max(GROWTH_FACTOR * start, GROWTH_FLOOR)
        growth.append({**row, "limit": limit, "result": "pass" if size <= limit else "fail"})
    if len(windows) < planned:
        errors = [*errors, f"stopped after {len(windows)} of {planned} windows"]
    failed = (
        errors
        or any(v["result"] == "fail" for v in latency.values())
        or any(g["result"] == "fail" for g in growth)
    )
    return {
        "result": "fail" if failed else "pass",
        "latency": {
            "judged": "per size: the last window's median write over the first window's",
            "limit_ratio": LATENCY_LIMIT,
            "sizes": latency,
        },
        "growth": {
            "judged": (
                f"each relation's size after the last window against max({GROWTH_FACTOR:g}x its "
                f"size after the first window, {GROWTH_FLOOR // 1024 // 1024} MB)"
            ),
            "exempt_tables": list(GROWING),
            "checked": growth,
            "exempt": exempt,
        },
        "errors": errors,
    }


def verdict_lines(v: dict[str, Any]) -> list[str]:
    exempt = ", ".join(g.split(".")[1] for g in GROWING)
    lines = [
        "",
        (
            f"soak verdict (per size, last window's median write <= {LATENCY_LIMIT:g}x the"
            f" first's; relations other than {exempt} at most max({GROWTH_FACTOR:g}x after the"
            f" first window, {human(GROWTH_FLOOR)})):"
        ),
    ]
    for size, s in v["latency"]["sizes"].items():
        ratio = "-" if s["ratio"] is None else f"{s['ratio']:.2f}x"
        lines.append(
            f"  write at {int(size):,}: median {ms(s['first_median_ms'])} ms in the first window,"
            f" {ms(s['last_median_ms'])} ms in the last: {ratio}  {s['result'].upper()}"
        )
    checked = v["growth"]["checked"]
    over = [g for g in checked if g["result"] == "fail"]
    grown = sorted(
        (g for g in checked if g["after_first_window"] and g["last"] > g["after_first_window"]),
        key=lambda g: -g["last"] / g["after_first_window"],
    )
    lines.append(f"  relations: {len(checked)} checked, {len(over)} over their limit")
    for g in over + [g for g in grown[:3] if g not in over]:
        lines.append(
            f"    {g['relation']}: {human(g['after_first_window'])} after the first window,"
            f" {human(g['last'])} at the end (limit {human(int(g['limit']))})"
            f"  {g['result'].upper()}"
        )
    for table in v["growth"]["exempt_tables"]:
        rows = [g for g in v["growth"]["exempt"] if g["table"] == table]
        a, z = (sum(g[k] for g in rows) for k in ("after_first_window", "last"))
        lines.append(
            f"    {table} with its indexes and TOAST (growing data, not judged):"
            f" {human(a)} after the first window, {human(z)} at the end"
        )
    lines += [f"  error: {e}" for e in v["errors"]]
    lines.append(v["result"].upper())
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--minutes",
        type=float,
        default=float(os.environ.get("SOAK_MINUTES") or 10),
        help="how long the writes run (default $SOAK_MINUTES, else 10); cut to whole windows",
    )
    ap.add_argument("--window-seconds", type=float, default=60.0, help="window (default 60)")
    ap.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="community sizes, comma-separated (default 10,1000,10000)",
    )
    ap.add_argument("--per-size", type=int, default=3, help="communities of each size (3)")
    ap.add_argument(
        "--rate", type=float, default=DEFAULT_RATE, help="writes/s per community (0.8; <= 1)"
    )
    database_options(ap, DEFAULT_DB)
    args = ap.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    dbname = args.db or DEFAULT_DB
    if not 0 < args.rate <= 1:
        ap.error(
            "--rate must be in (0, 1]: each list's created_at is at least 1 s after the last,"
            " so more would run ahead of the clock until BZLAG"
        )
    if args.per_size < 1 or any(s < 1 for s in sizes):
        ap.error("--per-size and --sizes must be positive")
    planned = max(1, math.floor(args.minutes * 60 / args.window_seconds + 1e-9))

    def say(msg: str) -> None:
        log(msg, "soak")

    wall = time.monotonic()
    admin_url, url = fresh_database(args.admin_url, dbname, "soak")
    key = RelayKey.generate()
    su = psycopg.connect(url, autocommit=True)
    try:
        say(f"communities of {', '.join(f'{s:,}' for s in sizes)} members, {args.per_size} each")
        communities: list[tuple[int, Any]] = []
        with Membership.connect(url, key) as m:
            for size in sizes:
                for k in range(args.per_size):
                    name = f"s{size}-{k + 1}.soak.example.org"
                    communities.append((size, new_community(m, name, size)))
        su.execute("ANALYZE")
        lead_bound = su.execute(
            "SELECT max_list_lead_seconds FROM buzz_private.settings"
        ).fetchone()[0]
        load_before = os.getloadavg()
        setup_sizes, kinds = relation_sizes(su)

        say(
            f"{len(communities)} writers at {args.rate:g} writes/s each, {planned} windows of"
            f" {args.window_seconds:g} s (autovacuum at the server's defaults)"
        )
        samples, clock = Samples(), Clock(len(communities), args.rate)
        stop = clock.stop
        writers = [
            Writer(url, key, cid, size, j * clock.interval / len(communities), clock, samples)
            for j, (size, cid) in enumerate(communities)
        ]
        for w in writers:
            w.start()
        windows: list[dict[str, Any]] = []
        try:
            try:
                clock.start.wait(timeout=600)  # every writer has warmed up
            except threading.BrokenBarrierError:
                stop.set()  # a writer failed (its error is reported below), or hangs
            t0 = clock.t0
            for n in range(planned):
                end = t0 + (n + 1) * args.window_seconds
                if stop.wait(max(0.0, end - time.monotonic())):
                    break  # a writer failed
                taken = samples.take()
                relations, new_kinds = relation_sizes(su)
                kinds.update(new_kinds)
                window = {
                    "window": n + 1,
                    "start_s": n * args.window_seconds,
                    "end_s": time.monotonic() - t0,
                    "writes": {str(s): stats([x for z, x in taken if z == s]) for s in sizes},
                    "all": stats([x for _, x in taken]),
                    "relations": relations,
                    "tables": table_stats(su),
                }
                windows.append(window)
                first = windows[0]["relations"] if n else None
                print("\n".join(window_lines(window, planned, first, kinds)), flush=True)
        finally:
            stop.set()
            for w in writers:
                w.join(30)
        lead = su.execute(
            "SELECT max(created_at) - floor(extract(epoch FROM clock_timestamp()))::bigint"
            " FROM buzz_private.member_lists"
        ).fetchone()[0]
        errors = [f"{w.name}: {w.error!r}" for w in writers if w.error is not None]
        postgres = machine(su, dbname, "autovacuum%")
    finally:
        su.close()
        if args.drop:
            drop(admin_url, dbname)
    if not windows:
        print("\n".join(f"error: {e}" for e in errors) or "error: no window completed")
        print("FAIL")
        return 1
    v = verdict(windows, kinds, sizes, planned, errors)
    result = {
        "meta": {
            "timestamp": utc_now(),
            "database": dbname,
            "sizes": list(sizes),
            "per_size": args.per_size,
            "rate_per_community": args.rate,
            "minutes": args.minutes,
            "window_s": args.window_seconds,
            "windows_planned": planned,
            "writes": sum(w.writes for w in writers),
            "lead_bound_s": lead_bound,
            "lead_at_end_s": lead,
            **host(load_before),
            "postgres": postgres,
            "wall_s": round(time.monotonic() - wall, 1),
        },
        "setup": {"relations": setup_sizes},
        "relations": kinds,
        "windows": windows,
        "verdict": v,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "soak.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    say(f"done in {result['meta']['wall_s']} s")
    print(
        f"\n{result['meta']['writes']:,} writes; created_at lead at the end {lead} s"
        f" (bound {lead_bound} s); wrote {path}"
    )
    print("\n".join(verdict_lines(v)), flush=True)
    return 0 if v["result"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
