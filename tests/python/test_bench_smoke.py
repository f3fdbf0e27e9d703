"""`python -m bench.run --quick`, `python -m bench.wire --quick`, `python -m bench.facing
--quick` and `python -m bench.page --quick` run to the end and write every figure into their
JSON.

No timing is asserted: the machine is shared, and the benchmark's job is to report, not to
fail. The run uses a database of its own on the test server and drops it afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def quick(module: str, admin_url: str, out: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    """`python -m bench.<module> --quick` on a database of its own (dropped after): the run and
    what it wrote (`<out>/<name>.json`, bench.run's as bench.json)."""
    db = f"buzz_bench_{module}_smoke_{os.getpid()}"
    run = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", "--quick", "--admin-url", admin_url,
         "--db", db, "--out", str(out), "--drop"],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    name = "bench" if module == "run" else module
    return run, json.loads((out / f"{name}.json").read_text())


def test_quick_bench_writes_every_figure(admin_url: str, tmp_path: Path) -> None:
    run, results = quick("run", admin_url, tmp_path)

    meta = results["meta"]
    assert meta["quick"] is True and meta["sizes"] == [10, 100]
    for key in ("timestamp", "nproc", "postgres", "notes"):
        assert meta[key], key
    assert meta["postgres"]["server_version"].startswith("15")
    assert meta["lead_bound_restored_s"] == 300

    writers = meta["plan"]["writers"]
    expected = {
        "baseline_ms",
        "baseline_wal_bytes",
        f"baseline_tps_{writers}",
        "write_tps_1x1",
        f"write_tps_{writers}x1",
        f"write_tps_{writers}x{writers}",
        "batch_add_ms",
        "backfill_ms",
        "burst_lead_s",
        "client_cpu_ms@10",
        "baseline_client_cpu_ms",
        "define_role_ms",
    }
    largest = meta["sizes"][-1]
    expected |= {
        f"write_ms_plain@{largest}",
        f"write_ms_roles@{largest}",
        f"member_list_text_ms_roles@{largest}",
        f"assign_ms@{largest}",
    }
    for size in meta["sizes"]:
        expected |= {
            f"write_ms@{size}",
            f"member_list_text_ms@{size}",
            f"member_list_parsed_ms@{size}",
            f"wal_bytes@{size}",
        }
    figures = results["figures"]
    assert expected <= set(figures), expected - set(figures)
    for key, f in figures.items():
        assert f["median"] is not None and f["n"] >= 1, key
        assert f["unit"] in ("ms", "bytes", "writes/s", "s"), key
        if f["unit"] != "s" and "wal_own" not in key:  # own WAL: only where pg_waldump reads
            assert f["ratio"] is not None, key
    assert figures["baseline_ms"]["ratio"] == 1.0
    # Server CPU needs the backend's /proc/<pid>/stat (a server on this machine): else a note.
    for key in ("server_cpu_ms@10", "baseline_server_cpu_ms"):
        assert key in figures or any(n.startswith(f"{key} not measured") for n in meta["notes"])
    for key in ("server_cpu_ms@10", "client_cpu_ms@10"):
        if key in figures:
            assert figures[key]["ratio_of"] == "baseline_" + key.split("@")[0], key

    targets = {t["target"]: t for t in results["targets"]}
    assert len(targets) == 8
    # The roles target is judged at the largest size the run has.
    assert targets[f"write at {largest:,} members holding roles / holding none"]["result"] in (
        "pass",
        "miss",
    )
    assert all(t["result"] in ("pass", "miss", "n/a") for t in targets.values())
    # The quick sizes stop at 100: the targets at 10,000 members are not judged.
    assert targets["write at 10,000 members, median"]["result"] == "n/a"
    assert targets["full write at 10 members / baseline"]["result"] in ("pass", "miss")

    profile = results["profile"]
    assert set(profile["writes"]) == {"10", "100"}
    for w in profile["writes"].values():
        assert set(w["phases_ms"]) == {
            "begin+write",
            "prepare",
            "check+sign",
            "insert",
            "commit",
        }
    assert profile["baseline_phases_ms"] and profile["member_list_parts_ms"]
    assert profile["batch"]["phases_ms"]

    assert "target" in run.stdout and str(tmp_path / "bench.json") in run.stdout
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "latency.png").stat().st_size > 0


def test_quick_wire_bench_writes_every_figure(admin_url: str, tmp_path: Path) -> None:
    _, results = quick("wire", admin_url, tmp_path)
    figures = results["figures"]
    n = results["plan"]["subscribers"]
    # Every subscriber got every list (bench.wire fails otherwise): pushes x subscribers.
    assert figures["push_ms"]["n"] == results["plan"]["pushes"] * n
    assert figures["join_wire_ms"]["n"] == figures["join_sql_api_ms"]["n"] == 20
    assert figures["join_ratio"] > 0
    assert figures[f"rss_mb_{n}_connections"] > 0
    # The many-subscriber run, on lean client processes: every list reached every one.
    many = results["plan"]["many"]
    assert figures[f"push_ms_{many}"]["n"] == results["plan"]["many_pushes"] * many
    assert figures[f"setup_ms_{many}"]["n"] == many and figures[f"setup_per_s_{many}"] > 0
    assert figures[f"rss_mb_{many}_connections"] > 0 and results["client_processes"] >= 2
    assert [t["result"] for t in results["targets"]] == ["n/a (quick)"] * 7


def test_quick_facing_bench_writes_every_figure(admin_url: str, tmp_path: Path) -> None:
    _, results = quick("facing", admin_url, tmp_path)
    plan, figures = results["plan"], results["figures"]
    readers, flood = figures["readers"], figures["flood"]
    assert readers["rss_mb_baseline"] > 0 and readers["rss_mb_peak"] >= readers["rss_mb_baseline"]
    assert readers["closed"] == plan["readers"]  # past the quick run's small bound, each one
    assert flood["refused"] == 0 and flood["lists"] >= 1 and flood["owner_write_statuses"] == [200]
    for stored in plan["stored"]:
        assert figures[f"req_newest_8000_ms@{stored}"]["n"] == plan["req_reps"]
    assert figures["req_newest_8000_ratio"] > 0
    assert [t["result"] for t in results["targets"]] == ["n/a (quick)"] * 4


def test_quick_page_bench_writes_every_figure(admin_url: str, tmp_path: Path) -> None:
    _, results = quick("page", admin_url, tmp_path)
    plan, figures = results["plan"], results["figures"]
    assert results["sizes"] == [plan["size"], 10]
    keys = ("open_ms", "open_frame_ms", "open_list_arrived_ms", "open_in_page_ms",
            "open_named_ms", "update_ms",
            "search_role_ms", "search_role_frame_ms", "search_npub_ms", "search_npub_frame_ms",
            "owner_ms", "owner_login_ms", "owner_height_px", "owner_controls")  # fmt: skip
    samples = {"open": plan["opens"], "update": plan["updates"], "search": plan["searches"],
               "owner": plan["owner_opens"]}  # fmt: skip
    assert set(figures) == {f"{k}@{size}" for k in keys for size in results["sizes"]}
    for key, f in figures.items():
        assert f["n"] == samples[key.split("_")[0]], key
        assert f["min"] <= f["median"] <= f["p90"] <= f["max"], key
        baseline = figures[key.split("@")[0] + "@10"]
        assert f["ratio_of"] == key.split("@")[0] + "@10", key
        if baseline["median"] > 0:  # a 10-member search can take less than the clock's step
            assert f["ratio"] == f["median"] / baseline["median"], key
    assert [t["result"] for t in results["targets"]] == ["n/a (quick)"] * 5
