"""make bench, gate section: the members-only gate against its upstream relay alone.

    python -m bench.gate                    # 200 turns, then 10 and 100 publishers at once
    python -m bench.gate --quick            # a smoke run: 30 turns, 2 rounds of 3 notes
    python -m bench.gate --profile DIR      # py-spy samples the gate under 10 and 100

Starts nostr-sdk's LocalRelay (rust-nostr's relay, not ours) as the upstream, and
``buzz-relay --upstream`` in front of it, over a database of its own (``buzz_bench_gate``).

- **One publisher**: one member, AUTHed on a connection to the gate, and a client on a
  connection straight to the upstream take turns: a kind 1 note published (``EVENT`` to its
  ``OK``), then a ``REQ`` for it by id (to the ``EVENT`` that answers it; the time to its
  ``EOSE`` is kept too, but LocalRelay writes ``EOSE`` behind Nagle's algorithm, so it waits
  for the reader's delayed ACK, some 40 ms on Linux, either way).
- **10 and 100 publishers**: as many members, each AUTHed on a connection of its own to the
  gate, and as many connections straight to the upstream. In each round every publisher
  publishes its notes one after another (the next once the last has its ``OK``), all
  publishers at once, through the gate and then straight (or the other way: the order
  alternates, so that the machine's noise hits both ways). Publish latency (median, p99) and
  throughput (publishes per second of the rounds' wall time) each way.

The target (issue "a members-only relay"): through the gate, medians at most 1.5x going to the
upstream directly. Writes ``bench/out/gate.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
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

from .common import DEFAULT_OUT, drop, log, recreate
from .wire import RelayUnderTest, free_port, signed, summary

CLK_TCK = os.sysconf("SC_CLK_TCK")
DEFAULT_DB = "buzz_bench_gate"
TARGET_RATIO = 1.5


@dataclass(frozen=True)
class Plan:
    turns: int  # one publisher: publishes and REQs each way
    publishers: tuple[int, ...]  # publishers at once
    rounds: int  # per count of publishers, each way (after one round to warm up)
    per_round: int  # notes a round publishes, shared out among the publishers


FULL = Plan(turns=200, publishers=(10, 100), rounds=8, per_round=2000)
QUICK = Plan(turns=30, publishers=(10, 100), rounds=2, per_round=200)
LOCAL_RELAY = """
import asyncio, sys
from nostr_sdk import LocalRelayBuilder, RateLimit
async def main():
    # Its default of 60 notes a minute per connection would stop the benchmark's burst.
    limit = RateLimit(max_reqs=1000, notes_per_minute=1000000)
    relay = LocalRelayBuilder().port(int(sys.argv[1])).rate_limit(limit).build()
    await relay.run()
    print("ready", flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


async def answer(ws: Any, verb: str, key: str) -> list[Any]:
    """The first message `[verb, key, ...]`, skipping any other."""
    while True:
        msg = json.loads((await ws.receive(timeout=10)).data)
        if msg[0] == verb and msg[1] == key:
            return msg


async def turns(gate_url: str, upstream_url: str, member: PrivateKey, n: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {
        k: []
        for k in (
            "gate_publish", "direct_publish", "gate_req", "direct_req", "gate_eose", "direct_eose"
        )
    }  # fmt: skip
    async with aiohttp.ClientSession() as http:
        gate, direct = await http.ws_connect(gate_url), await http.ws_connect(upstream_url)
        challenge = json.loads((await gate.receive(timeout=10)).data)[1]
        auth = signed(member, 22242, [["relay", gate_url], ["challenge", challenge]], "")
        await gate.send_str(json.dumps(["AUTH", auth]))
        if not (await answer(gate, "OK", auth["id"]))[2]:
            raise RuntimeError("the gate refused the member's AUTH")
        for i in range(n + 5):  # the first 5 warm up
            for way, ws in (("gate", gate), ("direct", direct)):
                note = signed(member, 1, [], f"note {way} {i}")
                t0 = time.perf_counter()
                await ws.send_str(json.dumps(["EVENT", note]))
                ok = await answer(ws, "OK", note["id"])
                t1 = time.perf_counter()
                await ws.send_str(json.dumps(["REQ", f"r{i}", {"ids": [note["id"]]}]))
                await answer(ws, "EVENT", f"r{i}")
                t2 = time.perf_counter()
                await answer(ws, "EOSE", f"r{i}")
                t3 = time.perf_counter()
                await ws.send_str(json.dumps(["CLOSE", f"r{i}"]))
                if not ok[2]:
                    raise RuntimeError(f"{way}: the note was refused: {ok}")
                if i >= 5:
                    times[f"{way}_publish"].append((t1 - t0) * 1000)
                    times[f"{way}_req"].append((t2 - t1) * 1000)
                    times[f"{way}_eose"].append((t3 - t1) * 1000)
        await gate.close()
        await direct.close()
    figures: dict[str, Any] = {k: summary(v) for k, v in times.items()}
    for what in ("publish", "req", "eose"):
        figures[f"{what}_ratio"] = (
            figures[f"gate_{what}"]["median"] / figures[f"direct_{what}"]["median"]
        )
    return figures


async def authed(http: aiohttp.ClientSession, url: str, member: PrivateKey) -> Any:
    """A connection to the gate, AUTHed as `member`."""
    ws = await http.ws_connect(url)
    challenge = json.loads((await ws.receive(timeout=30)).data)[1]
    auth = signed(member, 22242, [["relay", url], ["challenge", challenge]], "")
    await ws.send_str(json.dumps(["AUTH", auth]))
    if not (await answer(ws, "OK", auth["id"]))[2]:
        raise RuntimeError("the gate refused a member's AUTH")
    return ws


async def publish_all(ws: Any, notes: list[dict[str, Any]], times: list[float]) -> None:
    """Each note in turn, the next once the last has its OK; EVENT to OK, in ms, to `times`."""
    for note in notes:
        frame = json.dumps(["EVENT", note])
        t0 = time.perf_counter()
        await ws.send_str(frame)
        ok = await answer(ws, "OK", note["id"])
        times.append((time.perf_counter() - t0) * 1000)
        if not ok[2]:
            raise RuntimeError(f"a note was refused: {ok}")


def cpu_ticks(pid: int) -> int:
    """A process's CPU time so far (utime + stime), in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


async def at_once(
    gates: dict[str, tuple[str, int]],
    upstream: tuple[str, int],
    members: list[PrivateKey],
    plan: Plan,
) -> dict[str, Any]:
    """Per count of publishers: latency and throughput through each gate (its url and pid) and
    straight to the upstream (its url and pid); CPU per publish of each gate, of the upstream
    and of this client, each way."""
    upstream_url, upstream_pid = upstream
    results: dict[str, Any] = {}
    # No bound on connections (aiohttp's default is 100, and each publisher holds two).
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        for n in plan.publishers:
            keys, each = members[:n], plan.per_round // n
            ways = {
                name: await asyncio.gather(*(authed(http, url, k) for k in keys))
                for name, (url, _) in gates.items()
            }
            ways["direct"] = await asyncio.gather(*(http.ws_connect(upstream_url) for _ in keys))
            names = list(ways)
            times: dict[str, list[float]] = {way: [] for way in names}
            wall = dict.fromkeys(names, 0.0)
            ticks = dict.fromkeys(gates, 0)
            upstream_ticks = dict.fromkeys(names, 0)
            client_s = dict.fromkeys(names, 0.0)
            for r in range(plan.rounds + 1):  # round 0 warms up
                # Each way first in turn, so that the machine's noise hits them all alike.
                for way in names[r % len(names) :] + names[: r % len(names)]:
                    # Signed before the clock starts: the client's own work stays out of it.
                    notes = [
                        [signed(k, 1, [], f"{way} {n} {r} {j} {i}") for j in range(each)]
                        for i, k in enumerate(keys)
                    ]
                    sink: list[float] = []
                    pid = gates[way][1] if way in gates else None
                    c0 = cpu_ticks(pid) if pid is not None else 0
                    u0, p0 = cpu_ticks(upstream_pid), time.process_time()
                    t0 = time.perf_counter()
                    await asyncio.gather(
                        *(
                            publish_all(ws, ns, sink)
                            for ws, ns in zip(ways[way], notes, strict=True)
                        )
                    )
                    if r > 0:
                        wall[way] += time.perf_counter() - t0
                        client_s[way] += time.process_time() - p0
                        upstream_ticks[way] += cpu_ticks(upstream_pid) - u0
                        times[way] += sink
                        if pid is not None:
                            ticks[way] += cpu_ticks(pid) - c0
            for socks in ways.values():
                await asyncio.gather(*(ws.close() for ws in socks))
            figures: dict[str, Any] = {}
            for way in names:
                figures[f"{way}_publish"] = summary(times[way])
                figures[f"{way}_per_s"] = len(times[way]) / wall[way]
                # CPU per publish (ms): the upstream's and this client's.
                figures[f"{way}_upstream_cpu_ms"] = (
                    upstream_ticks[way] * 1000 / CLK_TCK / len(times[way])
                )
                figures[f"{way}_client_cpu_ms"] = client_s[way] * 1000 / len(times[way])
                if way in gates:
                    figures[f"{way}_cpu_ms"] = ticks[way] * 1000 / CLK_TCK / len(times[way])
            for way in gates:
                for stat in ("median", "p99"):
                    figures[f"{way}_{stat}_ratio"] = (
                        figures[f"{way}_publish"][stat] / figures["direct_publish"][stat]
                    )
                figures[f"{way}_throughput_ratio"] = (
                    figures[f"{way}_per_s"] / figures["direct_per_s"]
                )
            results[str(n)] = figures
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 30 turns, 2 short rounds")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="sample the gate with py-spy under 10 and 100 publishers: DIR/gate-profile.*",
    )
    ap.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="TREE",
        help="a second gate run from TREE's buzz_signer (a copy or worktree), side by side",
    )
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    n = plan.turns
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if args.profile is not None and not Path(py_spy).exists():
        ap.error("--profile needs py-spy (pip install py-spy)")
    admin_url = LocalCluster().start().url("postgres")
    args.out.mkdir(parents=True, exist_ok=True)
    url = recreate(admin_url, DEFAULT_DB)
    upstream_port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, "-c", LOCAL_RELAY, str(upstream_port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    relay = against = None
    try:
        if upstream.stdout is None or upstream.stdout.readline().strip() != "ready":
            raise RuntimeError("nostr-sdk's LocalRelay did not start")
        upgrade(url)
        key, member = RelayKey.generate(), PrivateKey()
        others = [PrivateKey() for _ in range(max(plan.publishers) - 1)]
        with Membership.connect(url, key) as mem:
            owner = member.public_key_xonly.format().hex()
            cid = mem.create_community("gate.example.org", owner).details["community_id"]
            mem.add_relay_members(cid, [k.public_key_xonly.format().hex() for k in others])
        upstream_url = f"ws://127.0.0.1:{upstream_port}"
        relay = RelayUnderTest(
            url, key, cid, free_port(), args.out / "gate-relay.log", "--upstream", upstream_url
        )
        gates = {"gate": (relay.url, relay.proc.pid)}
        if args.against is not None:
            against = RelayUnderTest(
                url, key, cid, free_port(), args.out / "gate-against-relay.log",
                "--upstream", upstream_url, tree=args.against,
            )  # fmt: skip
            gates["against"] = (against.url, against.proc.pid)
        log(
            f"{n} publishes and REQs through the gate and straight to the upstream, in turns",
            "gate",
        )
        figures = asyncio.run(turns(relay.url, upstream_url, member, n))
        log(
            f"{', '.join(map(str, plan.publishers))} publishers at once, {plan.rounds} rounds of"
            f" {plan.per_round} notes each way ({', '.join(gates)}, direct)",
            "gate",
        )
        spy = None
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            spy = subprocess.Popen(
                [py_spy, "record", "--pid", str(relay.proc.pid), "--rate", "250", "--format",
                 "raw", "--output", str(args.profile / "gate-profile.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1)  # py-spy attaches
        try:
            concurrent = asyncio.run(
                at_once(gates, (upstream_url, upstream.pid), [member, *others], plan)
            )
        finally:
            if spy is not None:
                spy.send_signal(2)  # SIGINT: py-spy writes what it sampled
                spy.wait(30)
    finally:
        for r in (relay, against):
            if r is not None:
                r.stop()
        upstream.kill()
        upstream.wait(10)
        drop(admin_url, DEFAULT_DB)
    results = {
        "turns": n,
        "figures": figures,
        "plan": vars(plan),
        "against": str(args.against) if args.against else None,
        "concurrent": concurrent,
    }
    (args.out / "gate.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'gate target':<52}  value  result")
    for what in ("publish", "req"):
        gate, direct = figures[f"gate_{what}"]["median"], figures[f"direct_{what}"]["median"]
        ratio = figures[f"{what}_ratio"]
        verdict = ("pass" if ratio <= TARGET_RATIO else "MISS") if not args.quick else "n/a (quick)"
        label = f"a member's {'publish' if what == 'publish' else 'REQ (to its EVENT)'}, gate / upstream, medians"
        print(f"{label:<52}  {ratio:.2f}x ({gate:.2f} / {direct:.2f} ms)  {verdict}")
    print(
        f"\n{'publishers':>10}  {'way':<9}{'median':>9}{'p99':>10}{'publishes/s':>13}"
        f"{'gate CPU':>10}{'upstream':>10}   gate / upstream: median, p99, publishes/s"
    )
    for count, f in concurrent.items():
        for way in [*gates, "direct"]:
            p = f[f"{way}_publish"]
            cpu = f"{f[f'{way}_cpu_ms'] * 1000:>7.0f} us" if way in gates else " " * 10
            ratios = (
                f"   {f[f'{way}_median_ratio']:.2f}x, {f[f'{way}_p99_ratio']:.2f}x,"
                f" {f[f'{way}_throughput_ratio']:.2f}x"
                if way in gates
                else ""
            )
            print(
                f"{count:>10}  {way if way in gates else 'upstream':<9}{p['median']:>6.2f} ms"
                f"{p['p99']:>7.2f} ms{f[f'{way}_per_s']:>13.0f}{cpu}"
                f"{f[f'{way}_upstream_cpu_ms'] * 1000:>7.0f} us{ratios}"
            )
    print("(CPU: per publish, the gate's process and the upstream's)")
    print(f"\nwrote {args.out / 'gate.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
