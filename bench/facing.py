"""make bench, facing section: what a relay on the open internet is made to hold and do.

    python -m bench.facing            # the full run (make bench)
    python -m bench.facing --quick    # a smoke run: smaller lists, fewer clients

Starts real ``buzz-relay`` processes on loopback ports over a dedicated database (default
``buzz_bench_facing``, created again and migrated) and measures (SPEC section 10):

- **clients that never read**: 100 connections (a websocket handshake by hand, then not one
  byte read) each ask for the 10,000-member list 100 times; the relay's RSS before and at its
  highest, against its baseline plus 100 times ``--max-queued-bytes`` (its default, 4 MiB),
  and how many of them it closed;
- **a join flood**: 300 claimless joins from 300 keys under the open policy, as fast as the
  relay answers, over 30 connections (the bound per address raised for the run): joins per
  second, the lists the joins wrote per second, and the owner's NIP-86 writes
  (``allowpubkey``, one every 0.2 s) timed during the flood;
- **the newest 8000**: ``{"kinds":[8000],"limit":1}`` answered with 100 and with 100,000 8000
  events stored (written as a restore would, not signed one by one), medians and their ratio.

Prints a table, writes ``bench/out/facing.json``. Medians and ratios: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import secrets
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
from coincurve import PrivateKey

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership

from .common import (
    database_options,
    drop,
    fresh_database,
    log,
    new_community,
    new_pubkey,
    raise_lead_bound,
    report_targets,
    summary,
)
from .wire import RelayUnderTest, free_port, rss_mb, signed

DEFAULT_DB = "buzz_bench_facing"
WHO = "bench.facing"  # what its log lines start with
TARGET_STORED_RATIO = 2.0


@dataclass(frozen=True)
class Plan:
    queued_bytes: int  # --max-queued-bytes of the run (buzz-relay's default in the full one)
    list_members: int
    readers: int
    asks: int
    flood_joins: int
    flood_clients: int
    stored: tuple[int, int]
    req_reps: int


FULL = Plan(queued_bytes=4 * 1024 * 1024, list_members=10_000, readers=100, asks=100,
            flood_joins=300, flood_clients=30, stored=(100, 100_000), req_reps=200)  # fmt: skip
QUICK = Plan(queued_bytes=64 * 1024, list_members=2_000, readers=5, asks=30, flood_joins=20,
             flood_clients=4, stored=(100, 1_000), req_reps=10)  # fmt: skip


# ------------------------------------------------------------------ clients that never read


def never_reading(port: int) -> socket.socket:
    """A websocket whose handshake is done by hand, then never read (a small receive buffer)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(secrets.token_bytes(16)).decode()
    sock.sendall(
        (
            "GET / HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(1)
    return sock


def client_frame(text: str) -> bytes:
    payload, mask = text.encode(), secrets.token_bytes(4)
    n = len(payload)
    head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0xFE]) + n.to_bytes(2, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def too_slow_count(relay: RelayUnderTest) -> int:
    with urllib.request.urlopen(relay.http_url + "metrics", timeout=10) as resp:
        text = resp.read().decode()
    for line in text.splitlines():
        if line.startswith('buzz_relay_requests_total{kind="connection",outcome="too_slow"}'):
            return int(float(line.split()[-1]))
    return 0


def slow_readers(
    url: str, key: RelayKey, mem: Membership, plan: Plan, out: Path
) -> dict[str, Any]:
    cid = new_community(mem, "readers.bench.example.org", plan.list_members)
    list_bytes = len(json.dumps(mem.member_list(cid), separators=(",", ":")))
    relay = RelayUnderTest(
        url, key, cid, free_port(), out / "facing-readers.log",
        "--max-queued-bytes", str(plan.queued_bytes),
    )  # fmt: skip
    try:
        baseline = rss_mb(relay.proc.pid)
        socks = [never_reading(int(relay.url.rsplit(":", 1)[1])) for _ in range(plan.readers)]
        peak = baseline
        for ask in range(plan.asks):
            frame = client_frame(json.dumps(["REQ", f"s{ask % 40}", {"kinds": [13534]}]))
            for sock in socks:
                try:
                    sock.sendall(frame)
                except OSError:
                    pass  # closed by the relay
            peak = max(peak, rss_mb(relay.proc.pid))
        deadline = time.monotonic() + 10
        while too_slow_count(relay) < plan.readers and time.monotonic() < deadline:
            peak = max(peak, rss_mb(relay.proc.pid))
            time.sleep(0.1)
        closed = too_slow_count(relay)
        for sock in socks:
            sock.close()
    finally:
        relay.stop()
    bound = baseline + plan.readers * plan.queued_bytes / 2**20
    return {
        "list_bytes": list_bytes,
        "rss_mb_baseline": baseline,
        "rss_mb_peak": peak,
        "rss_mb_bound": bound,
        "closed": closed,
        "asked_mb": plan.readers * plan.asks * list_bytes / 2**20,
    }


# ------------------------------------------------------------------ a join flood


def manage(relay: RelayUnderTest, owner: PrivateKey, method: str, params: list[Any]) -> int:
    body = json.dumps({"method": method, "params": params}).encode()
    tags = [["u", relay.http_url], ["method", "POST"], ["payload", hashlib.sha256(body).hexdigest()]]
    event = signed(owner, 27235, tags)
    request = urllib.request.Request(
        relay.http_url,
        data=body,
        headers={
            "Content-Type": "application/nostr+json+rpc",
            "Authorization": "Nostr " + base64.b64encode(json.dumps(event).encode()).decode(),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


async def join_flood(
    url: str, key: RelayKey, mem: Membership, plan: Plan, out: Path
) -> dict[str, Any]:
    owner = PrivateKey()
    owner_hex = owner.public_key_xonly.format().hex()
    cid = mem.create_community("flood.bench.example.org", owner_hex).details["community_id"]
    mem.set_join_policy(cid, "open")
    relay = RelayUnderTest(url, key, cid, free_port(), out / "facing-flood.log")
    per_client = plan.flood_joins // plan.flood_clients
    owner_ms: list[float] = []
    statuses: list[int] = []
    allowed: list[str] = []  # by the owner during the flood: their lists are not the joins'
    try:
        async with aiohttp.ClientSession() as http:
            socks = [await http.ws_connect(relay.url) for _ in range(plan.flood_clients)]
            for ws in socks:
                await ws.receive(timeout=30)  # the AUTH challenge
            refused = 0

            async def client(ws: Any) -> None:
                nonlocal refused
                for _ in range(per_client):
                    event = signed(PrivateKey(), 28934, [])
                    await ws.send_str(json.dumps(["EVENT", event]))
                    while True:
                        answer = json.loads((await ws.receive(timeout=60)).data)
                        if answer[0] == "OK" and answer[1] == event["id"]:
                            refused += answer[2] is not True
                            break

            def owner_writes(flooding: asyncio.Future[Any]) -> None:
                """One allowpubkey every 0.2 s while the flood lasts, as an owner would (one
                at least)."""
                while True:
                    t0 = time.perf_counter()
                    allowed.append(new_pubkey())
                    statuses.append(manage(relay, owner, "allowpubkey", allowed[-1:]))
                    owner_ms.append((time.perf_counter() - t0) * 1000)
                    if flooding.done():
                        return
                    time.sleep(0.2)

            t0 = time.monotonic()
            flood = asyncio.gather(*(client(ws) for ws in socks))
            writes = asyncio.ensure_future(asyncio.to_thread(owner_writes, flood))
            await flood
            seconds = time.monotonic() - t0
            await writes
            for ws in socks:
                await ws.close()
    finally:
        relay.stop()
    with psycopg.connect(mem.conn.info.dsn) as c:
        (lists,) = c.execute(
            "SELECT count(DISTINCT created_at) FROM buzz_private.membership_events"
            " WHERE community_id = %s AND kind = 8000 AND member_pubkey <> ALL (%s)",
            (cid, [owner_hex, *allowed]),
        ).fetchone()
    return {
        "joins": plan.flood_joins,
        "refused": refused,
        "seconds": seconds,
        "joins_per_s": plan.flood_joins / seconds,
        "lists": lists,
        "lists_per_s": lists / seconds,
        "owner_write_ms": summary(owner_ms),
        "owner_write_statuses": sorted(set(statuses)),
    }


# ------------------------------------------------------------------ the newest 8000


def store_8000s(url: str, cid: Any, relay_pubkey: str, n: int) -> None:
    """`n` 8000 events, written as a restore writes them (no trigger runs in replica mode)."""
    with psycopg.connect(url) as c, c.transaction():
        c.execute("SET LOCAL session_replication_role = replica")
        c.execute(
            "INSERT INTO buzz_private.membership_events"
            " (community_id, id, pubkey, created_at, kind, member_pubkey, sig)"
            " SELECT %s, md5(i::text || 'e') || md5(i::text), %s, 1000000 + i, 8000,"
            "        md5(i::text || 'm') || md5(i::text), repeat('ab', 64)"
            " FROM generate_series(1, %s) i",
            (cid, relay_pubkey, n),
        )
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("ANALYZE buzz_private.membership_events")


async def newest_8000(
    url: str, key: RelayKey, mem: Membership, owner: str, plan: Plan, out: Path
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for stored in plan.stored:
        cid = mem.create_community(f"s{stored}.bench.example.org", owner).details["community_id"]
        store_8000s(url, cid, key.pubkey, stored)
        relay = RelayUnderTest(url, key, cid, free_port(), out / "facing-req.log")
        try:
            async with aiohttp.ClientSession() as http, http.ws_connect(relay.url) as ws:
                await ws.receive(timeout=30)
                times = []
                for i in range(plan.req_reps + 5):  # the first 5 warm up
                    t0 = time.perf_counter()
                    # One subscription id: a REQ with an open one's id replaces it (NIP-01).
                    await ws.send_str(json.dumps(["REQ", "newest", {"kinds": [8000], "limit": 1}]))
                    got = []
                    while (answer := json.loads((await ws.receive(timeout=30)).data))[0] != "EOSE":
                        got.append(answer)
                    if i >= 5:
                        times.append((time.perf_counter() - t0) * 1000)
                    if len(got) != 1:
                        raise RuntimeError(f"the newest 8000: {len(got)} events")
        finally:
            relay.stop()
        figures[f"req_newest_8000_ms@{stored}"] = summary(times)
    small, large = (figures[f"req_newest_8000_ms@{n}"]["median"] for n in plan.stored)
    figures["req_newest_8000_ratio"] = large / small
    return figures


# ------------------------------------------------------------------ the run


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    f, plan = results["figures"], results["plan"]
    full = plan["readers"] >= FULL.readers

    def judge(ok: bool) -> str:
        return ("pass" if ok else "MISS") if full else "n/a (quick)"

    readers, flood = f["readers"], f["flood"]
    small, large = plan["stored"]
    return [
        (f"RSS with {plan['readers']} clients that never read",
         (f"{readers['rss_mb_peak']:.0f} MB peak (baseline {readers['rss_mb_baseline']:.0f},"
         f" bound {readers['rss_mb_bound']:.0f}; {readers['asked_mb']:.0f} MB asked;"
         f" {readers['closed']} closed)"),
         judge(readers["rss_mb_peak"] <= readers["rss_mb_bound"])),
        (f"join flood, {flood['joins']} joins",
         (f"{flood['joins_per_s']:.0f} joins/s, {flood['lists_per_s']:.1f} lists/s"
         f" ({flood['lists']} lists), {flood['refused']} refused"),
         judge(flood["refused"] == 0 and flood["lists_per_s"] <= 2.0)),
        ("owner's NIP-86 write during the flood, median",
         f"{flood['owner_write_ms']['median']:.0f} ms, statuses {flood['owner_write_statuses']}",
         judge(flood["owner_write_statuses"] == [200])),
        (f"newest 8000, {large:,} stored / {small:,}, medians",
         (f"{f['req_newest_8000_ratio']:.2f}x ({f[f'req_newest_8000_ms@{large}']['median']:.2f}"
         f" / {f[f'req_newest_8000_ms@{small}']['median']:.2f} ms)"),
         judge(f["req_newest_8000_ratio"] <= TARGET_STORED_RATIO)),
    ]  # fmt: skip


async def measure(url: str, plan: Plan, out: Path) -> dict[str, Any]:
    owner, key = PrivateKey().public_key_xonly.format().hex(), RelayKey.generate()
    with Membership.connect(url, key) as mem:
        log(f"{plan.readers} clients that never read, a {plan.list_members:,}-member list", WHO)
        readers = slow_readers(url, key, mem, plan, out)
        log(f"a flood of {plan.flood_joins} joins over {plan.flood_clients} connections", WHO)
        flood = await join_flood(url, key, mem, plan, out)
        log(f"the newest 8000 with {' and '.join(f'{n:,}' for n in plan.stored)} stored", WHO)
        newest = await newest_8000(url, key, mem, owner, plan, out)
    return {"plan": plan.__dict__, "figures": {"readers": readers, "flood": flood, **newest}}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.facing", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: small lists, few clients")
    database_options(ap, DEFAULT_DB)
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    dbname = args.db or (f"{DEFAULT_DB}_quick" if args.quick else DEFAULT_DB)
    args.out.mkdir(parents=True, exist_ok=True)
    admin_url, url = fresh_database(args.admin_url, dbname, WHO)
    try:
        raise_lead_bound(url)
        results = asyncio.run(measure(url, plan, args.out))
    finally:
        if args.drop:
            drop(admin_url, dbname)
    report_targets("facing", results, targets(results), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
