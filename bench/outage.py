"""make bench, outage section: buzz-relay while its database stops and comes back.

    python -m bench.outage            # one outage of 8 s
    python -m bench.outage --quick    # a smoke run: 3 s

Starts a PostgreSQL cluster of its own (in a temporary directory: this run stops it), a
community with the `open` join policy, and a buzz-relay over it. Then stops the cluster (fast
shutdown) and, while it is down, asks the relay again and again for /healthz, NIP-11, the
page and a websocket upgrade: the status of each and how long it took. Then starts the
cluster again and measures the time from its start to the first 200 for NIP-11 and to the
first join answered `OK true`. Reports the relay's log lines at warning level and above
during the outage, too (SPEC section 10: one when it starts, one when it ends; no traceback).

Targets (SPEC section 10): /healthz 503 within 2 s, NIP-11, page and upgrades 503 within
5 s, every answer served again within 5 s of the database's return. Writes
`bench/out/outage.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from coincurve import PrivateKey

from buzz_signer.keys import RelayKey
from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

from .common import DEFAULT_OUT, log, report_targets
from .wire import RelayUnderTest, free_port, signed

WHO = "bench.outage"
HEALTHZ_TARGET_S = 2.0
ANSWER_TARGET_S = 5.0
BACK_TARGET_S = 5.0
HOST = "outage.bench.example.org"


@dataclass(frozen=True)
class Plan:
    down_seconds: float  # how long the database stays down


FULL = Plan(down_seconds=8.0)
QUICK = Plan(down_seconds=3.0)


def http(url: str, accept: str, timeout: float = 30) -> tuple[int, float, str | None]:
    """(status, seconds, Retry-After) of one GET; status 0 if no answer came."""
    t0 = time.monotonic()
    request = urllib.request.Request(url, headers={"Accept": accept, "Host": HOST})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            resp.read()
            return resp.status, time.monotonic() - t0, resp.headers.get("Retry-After")
    except urllib.error.HTTPError as exc:
        return exc.code, time.monotonic() - t0, exc.headers.get("Retry-After")
    except OSError:
        return 0, time.monotonic() - t0, None


async def upgrade_status(url: str, timeout: float = 30) -> tuple[int, float]:
    """(status of a websocket upgrade: 101 when it opened, seconds)."""
    t0 = time.monotonic()
    try:
        async with aiohttp.ClientSession() as s, s.ws_connect(url, timeout=timeout) as ws:
            await ws.close()
            return 101, time.monotonic() - t0
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status, time.monotonic() - t0
    except (aiohttp.ClientError, TimeoutError, OSError):
        return 0, time.monotonic() - t0


async def join(url: str) -> bool:
    """One join with a fresh key (the `open` policy); True when answered OK true."""
    try:
        async with aiohttp.ClientSession() as s, s.ws_connect(url, timeout=10) as ws:
            await ws.receive(timeout=10)  # the AUTH challenge
            event = signed(PrivateKey(), 28934, [])
            await ws.send_str(json.dumps(["EVENT", event]))
            while True:
                answer = json.loads((await ws.receive(timeout=10)).data)
                if answer[0] == "OK" and answer[1] == event["id"]:
                    return answer[2] is True
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError, TypeError):
        return False


def probe_all(relay: RelayUnderTest) -> dict[str, Any]:
    base = relay.http_url
    healthz = http(base + "healthz", "*/*")
    nip11 = http(base, "application/nostr+json")
    page = http(base, "text/html")
    ws = asyncio.run(upgrade_status(relay.url))
    return {"healthz": healthz, "nip11": nip11, "page": page, "upgrade": ws}


def measure(plan: Plan, out: Path) -> dict[str, Any]:
    shm = Path("/dev/shm")
    tmp = tempfile.mkdtemp(prefix="buzz-outage-", dir=shm if os.access(shm, os.W_OK) else None)
    cluster = LocalCluster(Path(tmp) / "pg", port=free_port())
    try:
        cluster.start()
        return outage(cluster, plan, out)
    finally:
        cluster.destroy()
        shutil.rmtree(tmp, ignore_errors=True)


def outage(cluster: LocalCluster, plan: Plan, out: Path) -> dict[str, Any]:
    cluster.create_database("buzz")
    url = cluster.url("buzz")
    upgrade(url)
    key = RelayKey.generate()
    with Membership.connect(url, key) as mem:
        owner = PrivateKey().public_key_xonly.format().hex()
        cid = mem.create_community(HOST, owner).details["community_id"]
        mem.set_join_policy(cid, "open")
    log_path = out / "outage-relay.log"
    # At warning level: what an operator is alerted by (each request's info line aside).
    relay = RelayUnderTest(url, key, cid, free_port(), log_path)
    try:
        if not asyncio.run(join(relay.url)):
            raise RuntimeError(f"a join before the outage failed: {log_path.read_text()}")
        log_before = len(log_path.read_text().splitlines())
        log(f"the database stops for {plan.down_seconds:.0f} s", WHO)
        cluster.stop()
        stopped = time.monotonic()
        down: list[dict[str, Any]] = []
        while time.monotonic() - stopped < plan.down_seconds:
            probe = probe_all(relay)
            probe["at"] = time.monotonic() - stopped
            down.append(probe)
        log("the database starts again", WHO)
        cluster.start()
        started = time.monotonic()
        nip11_back = join_back = None
        while (nip11_back is None or join_back is None) and time.monotonic() - started < 120:
            if nip11_back is None and http(relay.http_url, "application/nostr+json", 5)[0] == 200:
                nip11_back = time.monotonic() - started
            if join_back is None and asyncio.run(join(relay.url)):
                join_back = time.monotonic() - started
            time.sleep(0.05)
        after = probe_all(relay)
        lines = log_path.read_text().splitlines()[log_before:]
    finally:
        relay.stop()
    # The last probe round during the outage: what a client gets once it has begun.
    last = down[-1] if down else {}
    return {
        "down_seconds": plan.down_seconds,
        "probes": down,
        "worst_seconds": {
            what: max(p[what][1] for p in down) for what in ("healthz", "nip11", "page", "upgrade")
        },
        "statuses_at_the_end": {what: last[what][0] for what in ("healthz", "nip11", "page", "upgrade")},
        "retry_after": {what: last[what][2] for what in ("nip11", "page")},
        "nip11_back_seconds": nip11_back,
        "join_back_seconds": join_back,
        "after": {what: after[what][0] for what in after},
        "log_lines": len(lines),
        "tracebacks": sum("Traceback" in line for line in lines),
        "log": lines,
    }


def targets(r: dict[str, Any], quick: bool) -> list[tuple[str, str, str]]:
    def judge(ok: bool) -> str:
        return "n/a (quick)" if quick else ("pass" if ok else "MISS")

    worst, end = r["worst_seconds"], r["statuses_at_the_end"]
    back = [r["nip11_back_seconds"], r["join_back_seconds"]]
    return [
        ("/healthz while the database is down",
         f"{end['healthz']}, slowest answer {worst['healthz']:.2f} s",
         judge(end["healthz"] == 503 and worst["healthz"] <= HEALTHZ_TARGET_S)),
        ("NIP-11, page, websocket upgrade while down",
         (f"{end['nip11']}/{end['page']}/{end['upgrade']}, slowest"
         f" {max(worst['nip11'], worst['page'], worst['upgrade']):.2f} s,"
         f" Retry-After {r['retry_after']['nip11']}"),
         judge(all(end[w] == 503 for w in ("nip11", "page", "upgrade"))
               and max(worst["nip11"], worst["page"], worst["upgrade"]) <= ANSWER_TARGET_S)),
        ("from the database's start to NIP-11 200, to a join OK",
         " / ".join("never" if b is None else f"{b:.2f} s" for b in back),
         judge(all(b is not None and b <= BACK_TARGET_S for b in back))),
        ("relay log during the outage",
         f"{r['log_lines']} lines, {r['tracebacks']} tracebacks",
         judge(r["tracebacks"] == 0 and r["log_lines"] <= 4)),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.outage", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: a 3 s outage")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    # The other sections' database options (make bench passes BENCH_ARGS to each), unused:
    # this one runs on a cluster of its own, since it stops it.
    for unused in ("--db", "--admin-url"):
        ap.add_argument(unused, help=argparse.SUPPRESS)
    ap.add_argument("--drop", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = measure(QUICK if args.quick else FULL, args.out)
    report_targets("outage", results, targets(results, args.quick), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
