"""make bench, shared-state section: what keeping the NIP-98 replay guard and the rates in
the database (SPEC section 9) costs a NIP-86 call and a failed claim, against a revision that
kept them in memory, in one run.

    python -m bench.shared_state                 # against d295104, 200 of each
    python -m bench.shared_state --rev REV --calls 100
    python -m bench.shared_state --quick         # 20 of each

Two buzz-relay processes side by side, over databases of their own: this checkout's, and
`--rev`'s (checked out in a git worktree, its own migrations and functions). Each serves one
community. Turn by turn, the same client sends each relay a NIP-86 `allowpubkey` of a new
pubkey (a change: its authorization is recorded once) and a claim with a wrong code over a
websocket (counted as failed, by pubkey and by address). Prints the medians each way and their
ratio; writes bench/out/shared_state.json. The machine is shared: read the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
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
from .compare import checkout, migrate_from
from .wire import RelayUnderTest, free_port, signed, summary

BEFORE = "d295104"  # the guard and the rates in each process's memory


def community(url: str, key: RelayKey, owner: str) -> Any:
    with Membership.connect(url, key) as mem:
        return mem.create_community("bench.example.org", owner).details["community_id"]


async def nip86_call(
    http: aiohttp.ClientSession, relay: RelayUnderTest, owner: PrivateKey
) -> float:
    """One allowpubkey of a new pubkey, authorized by NIP-98: seconds to its answer."""
    new = PrivateKey().public_key_xonly.format().hex()
    body = json.dumps({"method": "allowpubkey", "params": [new, "bench"]}).encode()
    tags = [["u", "https://bench.example.org"], ["method", "POST"],
            ["payload", hashlib.sha256(body).hexdigest()]]  # fmt: skip
    auth = "Nostr " + base64.b64encode(json.dumps(signed(owner, 27235, tags)).encode()).decode()
    headers = {"Content-Type": "application/nostr+json+rpc", "Authorization": auth}
    started = time.perf_counter()
    async with http.post(relay.http_url, data=body, headers=headers) as resp:
        answer = await resp.json(content_type=None)
    took = time.perf_counter() - started
    if answer != {"result": True}:
        raise RuntimeError(f"allowpubkey answered {resp.status} {answer}")
    return took


async def failed_claim(ws: aiohttp.ClientWebSocketResponse) -> float:
    """One claim of a wrong code by a new pubkey: seconds to its OK."""
    event = signed(PrivateKey(), 28934, [["claim", os.urandom(16).hex()]])
    started = time.perf_counter()
    await ws.send_str(json.dumps(["EVENT", event]))
    while True:
        answer = json.loads((await ws.receive(timeout=30)).data)
        if answer[0] == "OK":
            break
    took = time.perf_counter() - started
    if answer[2] or not answer[3].startswith("restricted: that invite code is invalid"):
        raise RuntimeError(f"a wrong claim answered {answer}")
    return took


async def measure(
    relays: dict[str, RelayUnderTest], owner: PrivateKey, calls: int
) -> dict[str, Any]:
    times: dict[str, dict[str, list[float]]] = {v: {"nip86": [], "claim": []} for v in relays}
    async with aiohttp.ClientSession() as http:
        sockets = {}
        for version, relay in relays.items():
            sockets[version] = await http.ws_connect(relay.url)
            await sockets[version].receive(timeout=10)  # the AUTH challenge
        for _ in range(calls):  # alternating, so that the machine's load falls on both
            for version, relay in relays.items():
                times[version]["nip86"].append(await nip86_call(http, relay, owner))
                times[version]["claim"].append(await failed_claim(sockets[version]))
        for ws in sockets.values():
            await ws.close()
    return {
        version: {what: summary([t * 1000 for t in xs]) for what, xs in parts.items()}
        for version, parts in times.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default=BEFORE, help="the revision to compare with")
    ap.add_argument("--calls", type=int, default=200, help="calls of each kind per relay")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 20 of each")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument(
        "--admin-url", help="superuser URL of another server (default: the local cluster)"
    )
    args = ap.parse_args(argv)
    calls = 20 if args.quick else args.calls
    admin_url = args.admin_url or LocalCluster().start().url("postgres")
    key, owner = RelayKey.generate(), PrivateKey()
    owner_pubkey = owner.public_key_xonly.format().hex()
    args.out.mkdir(parents=True, exist_ok=True)
    relays: dict[str, RelayUnderTest] = {}
    with checkout(args.rev) as tree:
        dbnames = {"this": "buzz_bench_shared", args.rev: "buzz_bench_shared_before"}
        urls = {version: recreate(admin_url, name) for version, name in dbnames.items()}
        try:
            upgrade(urls["this"])
            migrate_from(tree, urls[args.rev])
            for version, url in urls.items():
                cid = community(url, key, owner_pubkey)
                log_path = (
                    args.out / f"shared_state-{'this' if version == 'this' else 'before'}.log"
                )
                relays[version] = RelayUnderTest(
                    url, key, cid, free_port(), log_path, "--max-failed-claims", "1000",
                    tree=None if version == "this" else tree,
                )  # fmt: skip
            results = asyncio.run(measure(relays, owner, calls))
        finally:
            for relay in relays.values():
                relay.stop()
            for name in dbnames.values():
                drop(admin_url, name)
    print(f"{'median ms':<26}{'this':>10}{args.rev:>12}{'ratio':>8}")
    for what, label in (("nip86", "NIP-86 allowpubkey"), ("claim", "failed claim")):
        this, before = results["this"][what]["median"], results[args.rev][what]["median"]
        print(f"{label:<26}{this:>10.2f}{before:>12.2f}{this / before:>7.2f}x")
    (args.out / "shared_state.json").write_text(json.dumps({"rev": args.rev, **results}, indent=2))
    log("wrote bench/out/shared_state.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
