"""make bench, gate section: the members-only gate against its upstream relay alone.

    python -m bench.gate            # 200 publishes and 200 REQs each way
    python -m bench.gate --quick    # 30 each way

Starts nostr-sdk's LocalRelay (rust-nostr's relay, not ours) as the upstream, and
``buzz-relay --upstream`` in front of it, over a database of its own (``buzz_bench_gate``).
One member, AUTHed on a connection to the gate, and a client on a connection straight to the
upstream take turns: a kind 1 note published (``EVENT`` to its ``OK``), then a ``REQ`` for it by
id (to its ``EOSE``). The target (issue "a members-only relay"): through the gate, medians at
most 1.5x going to the upstream directly. Writes ``bench/out/gate.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Sequence
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

DEFAULT_DB = "buzz_bench_gate"
TARGET_RATIO = 1.5
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
        k: [] for k in ("gate_publish", "direct_publish", "gate_req", "direct_req")
    }
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
                await answer(ws, "EOSE", f"r{i}")
                t2 = time.perf_counter()
                await ws.send_str(json.dumps(["CLOSE", f"r{i}"]))
                if not ok[2]:
                    raise RuntimeError(f"{way}: the note was refused: {ok}")
                if i >= 5:
                    times[f"{way}_publish"].append((t1 - t0) * 1000)
                    times[f"{way}_req"].append((t2 - t1) * 1000)
        await gate.close()
        await direct.close()
    figures: dict[str, Any] = {k: summary(v) for k, v in times.items()}
    for what in ("publish", "req"):
        figures[f"{what}_ratio"] = (
            figures[f"gate_{what}"]["median"] / figures[f"direct_{what}"]["median"]
        )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 30 turns")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = ap.parse_args(argv)
    n = 30 if args.quick else 200
    admin_url = LocalCluster().start().url("postgres")
    args.out.mkdir(parents=True, exist_ok=True)
    url = recreate(admin_url, DEFAULT_DB)
    upstream_port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, "-c", LOCAL_RELAY, str(upstream_port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    relay = None
    try:
        if upstream.stdout is None or upstream.stdout.readline().strip() != "ready":
            raise RuntimeError("nostr-sdk's LocalRelay did not start")
        upgrade(url)
        key, member = RelayKey.generate(), PrivateKey()
        with Membership.connect(url, key) as mem:
            owner = member.public_key_xonly.format().hex()
            cid = mem.create_community("gate.example.org", owner).details["community_id"]
        upstream_url = f"ws://127.0.0.1:{upstream_port}"
        relay = RelayUnderTest(
            url, key, cid, free_port(), args.out / "gate-relay.log", "--upstream", upstream_url
        )
        log(
            f"{n} publishes and REQs through the gate and straight to the upstream, in turns",
            "gate",
        )
        figures = asyncio.run(turns(relay.url, upstream_url, member, n))
    finally:
        if relay is not None:
            relay.stop()
        upstream.kill()
        upstream.wait(10)
        drop(admin_url, DEFAULT_DB)
    results = {"turns": n, "figures": figures}
    (args.out / "gate.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'gate target':<52}  value  result")
    for what in ("publish", "req"):
        gate, direct = figures[f"gate_{what}"]["median"], figures[f"direct_{what}"]["median"]
        ratio = figures[f"{what}_ratio"]
        verdict = ("pass" if ratio <= TARGET_RATIO else "MISS") if not args.quick else "n/a (quick)"
        label = f"a member's {'publish' if what == 'publish' else 'REQ'}, gate / upstream, medians"
        print(f"{label:<52}  {ratio:.2f}x ({gate:.2f} / {direct:.2f} ms)  {verdict}")
    print(f"\nwrote {args.out / 'gate.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
