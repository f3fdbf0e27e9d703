"""`python -m bench.soak`, run for a few seconds on small communities, writes every window
and its verdict into soak.json.

No timing is asserted (the machine is shared): PASS or FAIL depends on it, so the test
checks only that the exit code agrees with the verdict. The run uses a database of its own
on the test server and drops it afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_short_soak_writes_windows_and_verdict(admin_url: str, tmp_path: Path) -> None:
    db = f"buzz_soak_smoke_{os.getpid()}"
    run = subprocess.run(
        [sys.executable, "-m", "bench.soak", "--minutes", "0.25", "--window-seconds", "5",
         "--sizes", "10,100", "--per-size", "2", "--admin-url", admin_url,
         "--db", db, "--out", str(tmp_path), "--drop"],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stdout + run.stderr
    results = json.loads((tmp_path / "soak.json").read_text())

    meta = results["meta"]
    assert meta["sizes"] == [10, 100] and meta["per_size"] == 2
    assert meta["windows_planned"] == 3 and meta["window_s"] == 5
    assert meta["lead_bound_s"] == 300  # the soak keeps the default bound
    assert meta["writes"] > 0

    windows = results["windows"]
    assert [w["window"] for w in windows] == [1, 2, 3]
    relations = results["relations"]
    for table in ("relay_members", "membership_events", "member_lists", "member_list_pieces"):
        assert relations[f"buzz_private.{table}"] == {
            "table": f"buzz_private.{table}",
            "kind": "table",
        }
    assert relations["buzz_private.relay_members_pkey"]["kind"] == "index"
    assert {r["kind"] for r in relations.values()} >= {"table", "index", "toast", "toast index"}
    for w in windows:
        assert set(w["writes"]) == {"10", "100"}
        for s in w["writes"].values():
            assert s["n"] >= 1 and s["median"] > 0 and s["p99"] >= s["median"]
        assert set(w["relations"]) == set(relations)
        assert all(isinstance(b, int) and b >= 0 for b in w["relations"].values())
        assert w["tables"]["buzz_private.relay_members"]["live"] >= 0

    verdict = results["verdict"]
    assert verdict["result"] in ("pass", "fail")
    assert run.returncode == (0 if verdict["result"] == "pass" else 1)
    assert verdict["errors"] == [], verdict["errors"]
    assert set(verdict["latency"]["sizes"]) == {"10", "100"}
    for s in verdict["latency"]["sizes"].values():
        assert s["ratio"] == s["last_median_ms"] / s["first_median_ms"]
        assert s["result"] in ("pass", "fail")
    checked = {g["relation"] for g in verdict["growth"]["checked"]}
    exempt = {g["relation"] for g in verdict["growth"]["exempt"]}
    assert checked | exempt == set(relations) and not checked & exempt
    assert "buzz_private.relay_members_pkey" in exempt
    assert "buzz_private.member_lists" in checked
    assert all(g["limit"] >= 16 * 1024 * 1024 for g in verdict["growth"]["checked"])
    assert run.stdout.rstrip().endswith(verdict["result"].upper())
