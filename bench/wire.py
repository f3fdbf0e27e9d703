"""make bench, wire section: buzz-relay as clients meet it.

    python -m bench.wire            # the full run (make bench): 1,000 and 10,000 subscribers
    python -m bench.wire --quick    # a smoke run: 50 and 200 subscribers, 20 joins

Starts a real ``buzz-relay`` process on a loopback port over a dedicated database (default
``buzz_bench_wire``, created again and migrated) and measures, with websocket clients in this
process:

- **idle connections**: the relay's RSS (``/proc/<pid>/status`` VmRSS) with N connections open
  and greeted, against the same process with none;
- **push latency**: N connections subscribed to the community's list; each write commits
  through the SQL API (Membership); the time from its COMMIT returning to the new list
  arriving at each subscriber, over every (write, subscriber) pair;
- **joins**: M clients, each on its own connection, one after another, send a 28934 with a
  valid claim, each to a community of its own (one community writes about one list a second,
  however many join); the time to its ``OK``, against the same claim through the SQL API alone
  (``Membership.claim_relay_invite``), measured interleaved in the same run;
- **many subscribers** (10,000 in the full run): the same push latency and RSS with that many
  connections on the one relay process, and the connection set-up rate (websocket upgrade and
  the AUTH greeting, connections per second, all of them opened at once). So that the clients
  are not what is measured, these connections belong to a few lean client processes
  (``LeanSocket``: a websocket client on a bare asyncio protocol, about 2,500 connections
  each) that time arrivals with ``time.monotonic()``, CLOCK_MONOTONIC, which Linux shares
  between processes.

Prints a table, writes ``bench/out/wire.json``. Medians and ratios: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import math
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from coincurve import PrivateKey

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import event_id, serialize_event

from .common import database_options, drop, fresh_database, raise_lead_bound, report_targets

DEFAULT_DB = "buzz_bench_wire"
TARGET_PUSH_MEDIAN_MS = 50.0
TARGET_PUSH_P99_MS = 200.0
TARGET_JOIN_RATIO = 3.0
TARGET_IDLE_RSS_MB = 100.0
TARGET_MANY_PUSH_MEDIAN_MS = 100.0
TARGET_MANY_PUSH_P99_MS = 300.0
TARGET_MANY_RSS_MB = 300.0
# Connections per lean client process; each process opens this many at a time.
PER_CLIENT_PROCESS = 2500
CLIENT_CONCURRENCY = 50


@dataclass(frozen=True)
class Plan:
    subscribers: int
    pushes: int
    joins: int
    # The run with many subscribers, on lean client processes.
    many: int
    many_pushes: int


FULL = Plan(subscribers=1000, pushes=30, joins=200, many=10_000, many_pushes=30)
QUICK = Plan(subscribers=50, pushes=5, joins=20, many=200, many_pushes=5)
# Between two lists of the many-subscriber run: one list reaches everyone before the next.
MANY_PUSH_INTERVAL_S = 0.5


def log(msg: str) -> None:
    print(f"bench.wire: {msg}", file=sys.stderr, flush=True)


def summary(xs: Sequence[float]) -> dict[str, Any]:
    s = sorted(xs)
    if not s:
        return {"n": 0, "median": None, "p99": None}
    return {
        "n": len(s),
        "median": statistics.median(s),
        "p99": s[min(len(s) - 1, int(len(s) * 0.99))],
        "max": s[-1],
    }


def signed(sk: PrivateKey, kind: int, tags: list[list[str]], content: str = "") -> dict[str, Any]:
    """A client's event, signed by hand (the bench does not import the tests' helpers)."""
    pubkey, now = sk.public_key_xonly.format().hex(), int(time.time())
    id_ = event_id(serialize_event(pubkey, now, kind, tags, content))
    return {"id": id_, "pubkey": pubkey, "created_at": now, "kind": kind, "tags": tags,
            "content": content, "sig": sk.sign_schnorr(bytes.fromhex(id_)).hex()}  # fmt: skip


def join_event(sk: PrivateKey, code: str) -> str:
    return json.dumps(["EVENT", signed(sk, 28934, [["claim", code]])])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class RelayUnderTest:
    """A buzz-relay process serving community `cid`; `tree`: another checkout's buzz_signer
    (a revision to compare with), imported first by way of PYTHONPATH."""

    def __init__(
        self,
        url: str,
        key: RelayKey,
        cid: Any,
        port: int,
        log_path: Path,
        *flags: str,
        tree: Path | None = None,
    ) -> None:
        env = os.environ | {"DATABASE_URL": url, "BUZZ_RELAY_SECRET_KEY": key.secret_hex()}
        if tree is not None:
            env["PYTHONPATH"] = str(tree.resolve())
        relay = Path(sys.executable).with_name("buzz-relay")
        # Without `cid`, every community of the database, chosen by the Host header.
        one = ("--community", str(cid), "--public-url", f"ws://127.0.0.1:{port}")
        if cid is None:
            one = ()
        self.proc = subprocess.Popen(
            [str(relay), "--listen", f"127.0.0.1:{port}", *one, "--max-joins", "1000",
             "--max-joins-per-pubkey", "1000", "--max-connections-per-ip", "100000",
             "--log-level", "warning", *flags],
            env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.url = f"ws://127.0.0.1:{port}"
        self.http_url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(
                        f"buzz-relay did not start: {log_path.read_text()}"
                    ) from None
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def connect_many(http: aiohttp.ClientSession, url: str, n: int) -> list[Any]:
    socks = []
    for i in range(0, n, 100):  # in batches: a thousand handshakes at once is a SYN flood
        batch = await asyncio.gather(*(http.ws_connect(url) for _ in range(min(100, n - i))))
        for ws in batch:
            await ws.receive(timeout=30)  # the AUTH challenge
        socks += batch
    return socks


async def push_latency(
    http: aiohttp.ClientSession, relay: RelayUnderTest, mem: Membership, cid: Any, plan: Plan
) -> tuple[list[float], float]:
    """Latencies (ms) from COMMIT returning to each subscriber's arrival; and RSS with them."""
    socks = await connect_many(http, relay.url, plan.subscribers)
    rss_connected = rss_mb(relay.proc.pid)
    for ws in socks:
        await ws.send_str('["REQ","l",{"kinds":[13534]}]')
    for ws in socks:
        while json.loads((await ws.receive(timeout=30)).data)[0] != "EOSE":
            pass
    arrivals: dict[str, list[float]] = {}

    async def read(ws: Any) -> None:
        while True:
            msg = await ws.receive()
            if msg.type != aiohttp.WSMsgType.TEXT:
                return
            t = time.perf_counter()
            # The id is the first field of the event as the database serialises it.
            arrivals.setdefault(json.loads(msg.data)[2]["id"], []).append(t)

    readers = [asyncio.create_task(read(ws)) for ws in socks]
    committed: dict[str, float] = {}
    for _ in range(plan.pushes):
        write = await asyncio.to_thread(
            mem.add_relay_member, cid, PrivateKey().public_key_xonly.format().hex()
        )
        committed[write.snapshot["id"]] = time.perf_counter()
        await asyncio.sleep(0.2)  # one list at a time: latency, not a burst
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(
        len(arrivals.get(i, ())) < len(socks) for i in committed
    ):
        await asyncio.sleep(0.05)
    for task in readers:
        task.cancel()
    for ws in socks:
        await ws.close()
    latencies = [(t - committed[i]) * 1000 for i in committed for t in arrivals.get(i, ())]
    missing = sum(len(socks) - len(arrivals.get(i, ())) for i in committed)
    if missing:
        raise RuntimeError(f"{missing} pushes never arrived")
    return latencies, rss_connected


async def joins(
    http: aiohttp.ClientSession, relay: RelayUnderTest, mem: Membership, owner: str, plan: Plan
) -> tuple[list[float], list[float]]:
    """Per join: ms to OK over the wire, and ms for the same claim through the SQL API. Each
    into a community of its own (on a relay that chooses it by the Host header): one
    community writes about one list a second however many join (buzz_signer/relay/joins.py),
    and what is measured here is a join's cost, not that pace."""
    wire, api = [], []
    for i in range(plan.joins):
        host = f"j{i}.bench.example.org"
        codes = []
        for name in (host, f"a{i}.bench.example.org"):
            cid = mem.create_community(name, owner).details["community_id"]
            codes.append((cid, mem.create_relay_invite(cid, owner, max_uses=None).code))
        ws = await http.ws_connect(relay.url, headers={"Host": host})
        await ws.receive(timeout=30)  # the AUTH challenge
        text = join_event(PrivateKey(), codes[0][1])
        t0 = time.perf_counter()
        await ws.send_str(text)
        answer = json.loads((await ws.receive(timeout=30)).data)
        wire.append((time.perf_counter() - t0) * 1000)
        await ws.close()
        if answer[2] is not True:
            raise RuntimeError(f"join refused: {answer}")
        (cid, code), pubkey = codes[1], PrivateKey().public_key_xonly.format().hex()
        t0 = time.perf_counter()
        outcome = (await asyncio.to_thread(mem.claim_relay_invite, cid, code, pubkey)).outcome
        api.append((time.perf_counter() - t0) * 1000)
        assert outcome == "joined", outcome
    return wire, api


# ------------------------------------------------------------------ many subscribers


class LeanSocket(asyncio.Protocol):
    """One websocket to the relay on a bare asyncio protocol: the upgrade, unmasked frames
    in, masked (with a zero key) frames out, pings answered. It keeps the times that
    matter and nothing else: the AUTH greeting, the EOSE, and each live event's id."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.arrivals: dict[str, float] = {}  # live event id -> when it arrived
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = False
        self.live = False  # after the EOSE: events are pushes, timed
        loop = asyncio.get_running_loop()
        self.greeted: asyncio.Future[float] = loop.create_future()
        self.eose: asyncio.Future[float] = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET / HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        for fut in (self.greeted, self.eose):
            if not fut.done():
                fut.set_exception(ConnectionError("the relay closed the connection"))

    def send_text(self, text: str, opcode: int = 0x1) -> None:
        data, n = text.encode(), len(text.encode())
        if n < 126:
            header = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            header = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
        assert self.transport is not None
        self.transport.write(header + b"\0\0\0\0" + data)  # a zero mask leaves data as is

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        buf = self.buffer
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buf.startswith(b"HTTP/1.1 101"):
                raise RuntimeError(f"no upgrade: {bytes(buf[:200])!r}")
            del buf[: end + 4]
            self.upgraded = True
        while len(buf) >= 2:
            opcode, n, start = buf[0] & 0x0F, buf[1] & 0x7F, 2
            if n == 126:
                n, start = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                n, start = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < start + n:
                return
            payload = bytes(buf[start : start + n])
            del buf[: start + n]
            if opcode == 0x1:
                self.text(payload, now)
            elif opcode == 0x9:  # ping: the relay's heartbeat
                self.send_text(payload.decode(), 0xA)

    def text(self, payload: bytes, now: float) -> None:
        if payload.startswith(b'["EVENT"'):
            if self.live:
                at = payload.find(b'"id":"') + 6
                self.arrivals[payload[at : at + 64].decode()] = now
        elif payload.startswith(b'["AUTH"'):
            if not self.greeted.done():
                self.greeted.set_result(now)
        elif payload.startswith(b'["EOSE"'):
            self.live = True
            if not self.eose.done():
                self.eose.set_result(now)


async def lean_client(url: str, n: int) -> None:
    """A client process (``--lean-client URL N``): N connections, each subscribed to the
    community's list. Prints one JSON line when all are subscribed (the set-up times), then
    waits for one line on stdin naming the lists committed and when, and prints the latency
    of each (list, connection): to that list's arrival, or to the first later list's when the
    relay sent the later one instead (it pushes the live list, and a list replaced before
    its push is superseded)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    loop = asyncio.get_running_loop()
    socks: list[LeanSocket] = []
    setup: list[float] = []
    bounds = [math.inf, -math.inf]
    gate = asyncio.Semaphore(CLIENT_CONCURRENCY)

    async def open_one() -> None:
        async with gate:
            t0 = time.monotonic()
            _, sock = await loop.create_connection(
                lambda: LeanSocket(f"{host}:{port}"), host, int(port)
            )
            t1 = await asyncio.wait_for(sock.greeted, 60)
        socks.append(sock)
        setup.append((t1 - t0) * 1000)
        bounds[0], bounds[1] = min(bounds[0], t0), max(bounds[1], t1)

    await asyncio.gather(*(open_one() for _ in range(n)))
    for sock in socks:
        sock.send_text('["REQ","l",{"kinds":[13534]}]')
    await asyncio.wait_for(asyncio.gather(*(s.eose for s in socks)), 120)
    print(json.dumps({"setup_ms": setup, "first": bounds[0], "last": bounds[1]}), flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    committed: list[tuple[str, float]] = json.loads(await reader.readline())
    deadline, newest = time.monotonic() + 60, committed[-1][0]
    while time.monotonic() < deadline and any(newest not in s.arrivals for s in socks):
        await asyncio.sleep(0.05)
    latencies: list[float] = []
    superseded = missing = 0
    first = [math.inf] * len(committed)
    last = [-math.inf] * len(committed)
    for sock in socks:
        reached = math.inf  # the earliest arrival of this list or a later one
        for k in range(len(committed) - 1, -1, -1):
            list_id, at = committed[k]
            arrived = sock.arrivals.get(list_id)
            if arrived is not None:
                reached = min(reached, arrived)
                first[k], last[k] = min(first[k], arrived), max(last[k], arrived)
            elif reached < math.inf:
                superseded += 1
            if reached == math.inf:
                missing += 1
            else:
                latencies.append((reached - at) * 1000)
    answer = {"latencies": latencies, "superseded": superseded, "missing": missing}
    print(json.dumps(answer | {"first": first, "last": last}), flush=True)
    for sock in socks:
        if sock.transport is not None:
            sock.transport.close()


async def many_subscribers(
    relay: RelayUnderTest, mem: Membership, cid: Any, plan: Plan
) -> dict[str, Any]:
    """Push latency (ms) at plan.many subscribers on lean client processes, the relay's RSS
    with them subscribed, and the connection set-up rate."""
    processes = max(2, math.ceil(plan.many / PER_CLIENT_PROCESS))
    shares = [plan.many // processes + (i < plan.many % processes) for i in range(processes)]
    command = [sys.executable, "-m", "bench.wire", "--lean-client", relay.url]
    pipes = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE}
    clients = [
        await asyncio.create_subprocess_exec(
            *command, str(k), **pipes, cwd=Path(__file__).resolve().parent.parent, limit=1 << 28
        )
        for k in shares
    ]
    try:
        ready = [json.loads(await c.stdout.readline() or b"null") for c in clients]  # type: ignore[union-attr]
        if None in ready:
            raise RuntimeError("a lean client process ended before its connections were ready")
        setup = [ms for r in ready for ms in r["setup_ms"]]
        span = max(r["last"] for r in ready) - min(r["first"] for r in ready)
        rss = rss_mb(relay.proc.pid)
        log(f"{plan.many} subscribed: {len(setup) / span:.0f} connections/s, {rss:.0f} MB")
        committed: dict[str, float] = {}
        for _ in range(plan.many_pushes):
            write = await asyncio.to_thread(
                mem.add_relay_member, cid, PrivateKey().public_key_xonly.format().hex()
            )
            committed[write.snapshot["id"]] = time.monotonic()
            await asyncio.sleep(MANY_PUSH_INTERVAL_S)
        list_bytes = len(json.dumps(write.snapshot, separators=(",", ":")).encode())
        line = json.dumps(list(committed.items())).encode() + b"\n"
        for c in clients:
            c.stdin.write(line)  # type: ignore[union-attr]
        answers = []
        for c in clients:
            answers.append(json.loads(await c.stdout.readline()))  # type: ignore[union-attr]
            await c.wait()
    finally:
        for c in clients:
            if c.returncode is None:
                c.kill()
                await c.wait()
    missing = sum(a["missing"] for a in answers)
    if missing:
        raise RuntimeError(f"{missing} pushes never arrived at the {plan.many} subscribers")
    # Per list pushed: to its first subscriber (the database's part), and from first to last.
    firsts = [min(a["first"][k] for a in answers) for k in range(len(committed))]
    lasts = [max(a["last"][k] for a in answers) for k in range(len(committed))]
    pushed = [k for k in range(len(committed)) if firsts[k] < math.inf]
    at = list(committed.values())
    return {
        "processes": processes,
        "latencies": [ms for a in answers for ms in a["latencies"]],
        "superseded": sum(a["superseded"] for a in answers),
        "list_bytes": list_bytes,
        "first_ms": [(firsts[k] - at[k]) * 1000 for k in pushed],
        "spread_ms": [(lasts[k] - firsts[k]) * 1000 for k in pushed],
        "rss_mb": rss,
        "setup_ms": setup,
        "setup_per_s": len(setup) / span,
    }


async def measure(url: str, plan: Plan, out: Path) -> dict[str, Any]:
    key, owner = RelayKey.generate(), PrivateKey().public_key_xonly.format().hex()
    with Membership.connect(url, key) as mem:
        cid = mem.create_community("bench.example.org", owner).details["community_id"]
        relay = RelayUnderTest(url, key, cid, free_port(), out / "wire-relay.log")
        try:
            rss_idle0 = rss_mb(relay.proc.pid)
            # limit=0: each websocket holds a connector slot (default 100) while it is open.
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
                log(f"{plan.subscribers} subscribers, {plan.pushes} lists")
                push, rss_connected = await push_latency(http, relay, mem, cid, plan)
        finally:
            relay.stop()
        by_host = RelayUnderTest(url, key, None, free_port(), out / "wire-relay-joins.log")
        try:
            async with aiohttp.ClientSession() as http:
                log(f"{plan.joins} joins over the wire and through the SQL API")
                wire, api = await joins(http, by_host, mem, owner, plan)
        finally:
            by_host.stop()
        # A relay of its own (its RSS is that of the many connections alone), and a community
        # of its own: its lists are those of the run alone (1 to many_pushes + 1 members).
        many_cid = mem.create_community("many.bench.example.org", owner).details["community_id"]
        relay = RelayUnderTest(url, key, many_cid, free_port(), out / "wire-relay-many.log")
        try:
            log(f"{plan.many} subscribers on lean client processes, {plan.many_pushes} lists")
            many = await many_subscribers(relay, mem, many_cid, plan)
        finally:
            relay.stop()
    push_s, wire_s, api_s = summary(push), summary(wire), summary(api)
    return {
        "plan": plan.__dict__,
        "figures": {
            "rss_mb_no_connections": rss_idle0,
            f"rss_mb_{plan.subscribers}_connections": rss_connected,
            "push_ms": push_s,
            "join_wire_ms": wire_s,
            "join_sql_api_ms": api_s,
            "join_ratio": wire_s["median"] / api_s["median"],
            f"push_ms_{plan.many}": summary(many["latencies"]),
            f"push_first_ms_{plan.many}": summary(many["first_ms"]),
            f"push_spread_ms_{plan.many}": summary(many["spread_ms"]),
            f"rss_mb_{plan.many}_connections": many["rss_mb"],
            # (list, subscriber) pairs that got a later list first (the relay pushes the live one).
            f"push_superseded_{plan.many}": many["superseded"],
            "many_list_bytes": many["list_bytes"],
            f"setup_ms_{plan.many}": summary(many["setup_ms"]),
            f"setup_per_s_{plan.many}": many["setup_per_s"],
        },
        "client_processes": many["processes"],
    }


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    f, plan = results["figures"], results["plan"]
    full = plan["subscribers"] >= FULL.subscribers

    def judge(ok: bool) -> str:
        return ("pass" if ok else "MISS") if full else "n/a (quick)"

    rss = f[f"rss_mb_{plan['subscribers']}_connections"]
    push, n = f["push_ms"], plan["subscribers"]
    wire, api = f["join_wire_ms"]["median"], f["join_sql_api_ms"]["median"]
    ratio = f["join_ratio"]
    many = plan["many"]
    mpush, mrss = f[f"push_ms_{many}"], f[f"rss_mb_{many}_connections"]
    return [
        (f"push latency, {n} subscribers, median", f"{push['median']:.1f} ms",
         judge(push["median"] <= TARGET_PUSH_MEDIAN_MS)),
        (f"push latency, {n} subscribers, p99", f"{push['p99']:.1f} ms",
         judge(push["p99"] <= TARGET_PUSH_P99_MS)),
        ("join over the wire / through the SQL API, medians",
         f"{ratio:.2f}x ({wire:.2f} / {api:.2f} ms)", judge(ratio <= TARGET_JOIN_RATIO)),
        (f"relay RSS with {n} connections",
         f"{rss:.1f} MB ({f['rss_mb_no_connections']:.1f} MB with none)",
         judge(rss <= TARGET_IDLE_RSS_MB)),
        (f"push latency, {many:,} subscribers, median", f"{mpush['median']:.1f} ms",
         judge(mpush["median"] <= TARGET_MANY_PUSH_MEDIAN_MS)),
        (f"push latency, {many:,} subscribers, p99", f"{mpush['p99']:.1f} ms",
         judge(mpush["p99"] <= TARGET_MANY_PUSH_P99_MS)),
        (f"relay RSS with {many:,} connections subscribed",
         f"{mrss:.1f} MB ({f[f'setup_per_s_{many}']:.0f} connections/s set up)",
         judge(mrss <= TARGET_MANY_RSS_MB)),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.wire", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: 50 and 200 subscribers, 20 joins"
    )
    ap.add_argument("--lean-client", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)
    database_options(ap, DEFAULT_DB)
    args = ap.parse_args(argv)
    if args.lean_client:
        asyncio.run(lean_client(args.lean_client[0], int(args.lean_client[1])))
        return 0
    plan = QUICK if args.quick else FULL
    dbname = args.db or (f"{DEFAULT_DB}_quick" if args.quick else DEFAULT_DB)
    args.out.mkdir(parents=True, exist_ok=True)
    admin_url, url = fresh_database(args.admin_url, dbname, "bench.wire")
    try:
        raise_lead_bound(url)
        results = asyncio.run(measure(url, plan, args.out))
    finally:
        if args.drop:
            drop(admin_url, dbname)
    report_targets("wire", results, targets(results), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
