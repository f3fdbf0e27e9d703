"""The report: ratios to the baseline, the targets, the printed table, the chart and
bench/out/bench.json. Nothing here measures; it reads the figures the other modules took."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import psycopg

from .common import BENCH_LEAD_BOUND_S, Bench, Plan
from .cpu import ROUNDS

# The issues' targets (checked only at the sizes they name). The write at 10 members: at most
# 3x the baseline from outside, and at most 1 ms of the server's CPU.
TARGET_WRITE_RATIO_AT_10 = 3.0
TARGET_SERVER_CPU_MS_AT_10 = 1.0
TARGET_WRITE_MS_AT_10K = 15.0
TARGET_WAL_BYTES_AT_10K = 16 * 1024
TARGET_LIST_MS_AT_10K = 5.0
TARGET_BATCH_MS = 2_000.0
TARGET_SCALING = 1.7


def add_ratios(figures: dict[str, dict[str, Any]], writers: int) -> None:
    """Each cost as a multiple of the baseline's: latencies of its latency, WAL of its WAL
    and CPU of its CPU (measured the same way), throughput as cost per write (the baseline's
    rate over the figure's rate)."""
    base_ms = figures["baseline_ms"]["median"]
    base_tps = figures[f"baseline_tps_{writers}"]["median"]
    for key, f in figures.items():
        f["ratio"] = None
        # wal_bytes@N -> baseline_wal_bytes, server_cpu_ms@N -> baseline_server_cpu_ms, ...
        like = "baseline_" + key.split("@")[0].removeprefix("baseline_")
        if f["unit"] == "bytes" or "_cpu_ms" in key:
            base = figures.get(like, {}).get("median")
            if base:
                f["ratio"], f["ratio_of"] = f["median"] / base, like
        elif f["unit"] == "ms":
            f["ratio"], f["ratio_of"] = f["median"] / base_ms, "baseline_ms"
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
    f = fig("server_cpu_ms@10")
    target(
        "server CPU per write at 10 members",
        "server_cpu_ms@10",
        f and f["median"],
        f"<= {TARGET_SERVER_CPU_MS_AT_10:g} ms",
        lambda v: v <= TARGET_SERVER_CPU_MS_AT_10,
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
    # Ours (bench.roles): roles held by every member cost a write no more than the bytes they
    # add to the list, which the write hashes, checks and sends.
    size = plan.sizes[-1]
    plain, roled = fig(f"write_ms_plain@{size}"), fig(f"write_ms_roles@{size}")
    plain_list = fig(f"member_list_text_ms_plain@{size}")
    roled_list = fig(f"member_list_text_ms_roles@{size}")
    growth = roled_list["list_bytes"] / plain_list["list_bytes"] if plain_list and roled_list else 0
    target(
        f"write at {size:,} members holding roles / holding none",
        f"write_ms_roles@{size} / write_ms_plain@{size}",
        roled["median"] / plain["median"] if plain and roled and plain["median"] else None,
        f"<= {growth:.2f}x (list bytes)",
        lambda v: v <= growth,
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
        ax.plot(
            [10_000],
            [TARGET_WRITE_MS_AT_10K],
            "rx",
            ms=10,
            label=f"target: write <= {TARGET_WRITE_MS_AT_10K:g} ms",
        )
        ax.plot(
            [10_000],
            [TARGET_LIST_MS_AT_10K],
            "r+",
            ms=12,
            label=f"target: member_list <= {TARGET_LIST_MS_AT_10K:g} ms",
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


SETTINGS = (  # the server settings that move the figures, kept in meta.postgres
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "shared_buffers",
    "checkpoint_timeout",
    "max_wal_size",
)


def machine(
    su: psycopg.Connection[Any], dbname: str, settings_like: str | None = None
) -> dict[str, Any]:
    """The server's version and settings (SETTINGS, and those named LIKE `settings_like`)."""
    settings = su.execute(
        "SELECT name, setting || coalesce(unit, '') FROM pg_settings"
        " WHERE name = ANY(%s) OR name LIKE %s ORDER BY name",
        (list(SETTINGS), settings_like or ""),
    ).fetchall()
    return {
        "server_version": su.execute("SHOW server_version").fetchone()[0],
        "version": su.execute("SELECT version()").fetchone()[0],
        "settings": dict(settings),
        "other_sessions": other_sessions(su, dbname),
    }


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def host(load_before: tuple[float, float, float]) -> dict[str, Any]:
    """The machine and the client's software, and the load before and now: the context
    without which no figure of a shared machine can be read."""
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "psycopg": psycopg.__version__,
    }


def other_sessions(su: psycopg.Connection[Any], dbname: str) -> int:
    """Client sessions on other databases of the cluster: others at work on a shared server."""
    return su.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM %s",
        (dbname,),
    ).fetchone()[0]


# --------------------------------------------------------------------- the results


FIRST = (  # the baseline first, for reading
    "baseline_ms",
    "baseline_wal_bytes",
    "baseline_wal_own_bytes",
    "baseline_wal_own_nofpi_bytes",
)


def notes(b: Bench, dbname: str, sessions_before: int) -> list[str]:
    """What the table cannot say by itself; printed under it and kept in meta.notes."""
    p = b.plan
    return [
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
            "member_list: 'as text' is what the database and the wire cost (json/jsonb fetched "
            "with a text loader, not parsed); 'parsed' adds psycopg's default json.loads. The "
            "target is checked on 'as text'."
        ),
        (
            f"CPU per write: over {p.cpu_writes} writes at {p.sizes[0]:,} members and "
            f"{p.cpu_baselines} baseline transactions, in {ROUNDS} alternating blocks; 'server' is the "
            "connection's backend (utime + stime from /proc/<pid>/stat, in clock ticks, so "
            "background processes are not counted), 'client' this process's CPU "
            "(time.process_time); the value is the total over the series divided by n."
        ),
        *b.notes,
        (
            f"max_list_lead_seconds in {dbname} was raised from {b.original_lead} to "
            f"{BENCH_LEAD_BOUND_S:,} for the whole run (bursts push created_at 1 s ahead per "
            "list; with the default bound they would stop with BZLAG) and restored at the end."
        ),
        (
            "throughput: median of the rates of 0.5 s windows; 'x baseline' is cost per write, "
            f"the baseline's {p.writers}-writer rate divided by the figure's rate. "
            f"Communities of {p.throughput_size:,} members. 'throughput without NOTIFY' is a "
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


def results(
    b: Bench,
    *,
    quick: bool,
    dbname: str,
    postgres: dict[str, Any],
    load_before: tuple[float, float, float],
    sessions_before: int,
    wall_s: float,
) -> dict[str, Any]:
    """Everything bench.json holds: meta, the figures (ratios added, baseline first), the
    targets judged, the profile."""
    p = b.plan
    add_ratios(b.figures, p.writers)
    first = (*FIRST, f"baseline_tps_{p.writers}")
    figures = {k: b.figures[k] for k in first if k in b.figures}
    figures.update({k: v for k, v in b.figures.items() if k not in figures})
    return {
        "meta": {
            "timestamp": utc_now(),
            "quick": quick,
            "database": dbname,
            "sizes": list(p.sizes),
            "plan": asdict(p),
            **host(load_before),
            "postgres": postgres,
            "other_sessions_before": sessions_before,
            "lead_bound_during_run_s": BENCH_LEAD_BOUND_S,
            "lead_bound_restored_s": b.original_lead,
            "wall_s": wall_s,
            "notes": notes(b, dbname, sessions_before),
        },
        "figures": figures,
        "targets": targets(figures, p),
        "profile": b.details.get("profile"),
    }


def write(out: Path, res: dict[str, Any]) -> None:
    """bench.json and latency.png into `out`, then the table on stdout."""
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "bench.json"
    png_path = out / "latency.png"
    json_path.write_text(json.dumps(res, indent=2) + "\n")
    drew = chart(png_path, res)
    print(table(res))
    print()
    print(f"wrote {json_path}")
    print(
        f"wrote {png_path}"
        if drew
        else f"no chart: matplotlib is not installed (pip install -e '.[bench]'); {png_path}"
    )
