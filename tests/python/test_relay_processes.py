"""buzz-relay as several processes: `--workers N` on one port (both serve, both push a list
written through SQL, /metrics sums them), a worker killed with kill -9 started again, the
parent's SIGTERM; and two `--reuse-port` processes on one port, one stopped with SIGTERM in a
burst of joins (its clients get the restart NOTICE, a CLOSED per subscription and close 1001;
no acknowledged join is lost), and a rolling restart.

One server only: these test the front, not the cluster.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from fixtures_membership import members_of, new_host, new_pubkey
from ports import free_port
from relay_client import signed
from relay_fixtures import BUZZ_RELAY, Person, RelayProcess
from wire_client import Socket, connect

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.relay.connection import RESTART_CLOSED, RESTART_NOTICE

pytest_plugins = ("fixtures_membership", "relay_fixtures")


def wait_log(relay: RelayProcess, pattern: str, timeout: float = 30) -> list[re.Match[str]]:
    """Every match of `pattern` in the relay's log, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(re.finditer(pattern, relay.log()))
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no {pattern!r} in the log:\n{relay.log()}")


def worker_pids(relay: RelayProcess, count: int) -> dict[int, int]:
    """The pid of each worker (the latest started), once `count` have started."""
    deadline = time.monotonic() + 30
    while True:
        pids = {
            int(m[1]): int(m[2])
            for m in re.finditer(r"worker (\d+) started \(pid (\d+)\)", relay.log())
        }
        if len(pids) >= count:
            return pids
        assert time.monotonic() < deadline, relay.log()
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def the_worker(ws: aiohttp.ClientWebSocketResponse) -> int:
    """The number of the worker that answered the websocket's upgrade."""
    return int(ws._response.headers["Buzz-Relay-Worker"])


def metric(relay: RelayProcess, name: str) -> float:
    status, text, _ = relay.get("/metrics")
    assert status == 200
    (value,) = re.findall(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(value)


def eventually(check: Any, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time-out"
        time.sleep(0.1)


# ------------------------------------------------------------------ --workers


def test_two_workers_serve_and_both_push_a_list_written_through_sql(start_relay, mem: Membership):
    cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    relay = start_relay("--community", str(cid), "--workers", "2")

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sockets: dict[int, list[Socket]] = {1: [], 2: []}
            for _ in range(64):  # the kernel spreads connections between the workers
                sock, _ = await connect(http, relay.url)
                sockets[the_worker(sock.ws)].append(sock)
                if all(len(s) >= 2 for s in sockets.values()):
                    break
            assert all(sockets.values()), "one worker never answered"
            everyone = [s for group in sockets.values() for s in group]
            for sock in everyone:
                await sock.send("REQ", "l", {"kinds": [13534]})
                await sock.until("EOSE")
            # Whichever worker answers /metrics, it counts every worker's connections.
            for _ in range(4):
                assert metric(relay, "buzz_relay_connections") == len(everyone)
            await asyncio.to_thread(
                eventually, lambda: metric(relay, "buzz_relay_subscriptions") == len(everyone)
            )
            assert metric(relay, "buzz_relay_listener_connected") == 1.0
            newcomer = new_pubkey()
            mem.add_relay_member(cid, newcomer)
            live = mem.member_list(cid)["id"]
            for sock in everyone:
                verb, sub, ev = await sock.recv()
                assert (verb, sub, ev["id"]) == ("EVENT", "l", live)
                assert ["member", newcomer] in [t[:2] for t in ev["tags"]]

    asyncio.run(main())


def test_a_killed_worker_is_started_again_and_sigterm_stops_every_worker(
    start_relay, mem: Membership
):
    cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    relay = start_relay("--community", str(cid), "--workers", "2")
    pids = worker_pids(relay, 2)
    os.kill(pids[1], signal.SIGKILL)
    wait_log(relay, rf"worker 1 \(pid {pids[1]}\) was killed by signal SIGKILL")
    restarted = worker_pids(relay, 2)
    deadline = time.monotonic() + 30
    while restarted[1] == pids[1]:
        assert time.monotonic() < deadline, relay.log()
        time.sleep(0.05)
        restarted = worker_pids(relay, 2)
    assert not alive(pids[1])
    # The port serves again, from both workers.
    answered: set[str] = set()
    deadline = time.monotonic() + 30
    while answered != {"1", "2"}:
        assert time.monotonic() < deadline, relay.log()
        status, _, headers = relay.get("/healthz")
        if status == 200:
            answered.add(headers["Buzz-Relay-Worker"])
    relay.proc.send_signal(signal.SIGTERM)
    assert relay.proc.wait(30) == 0, relay.log()
    assert not [pid for pid in restarted.values() if alive(pid)]
    assert "every worker stopped\n" in relay.log()


# ------------------------------------------------------------------ SIGTERM, --reuse-port


@dataclass
class Joiner:
    """One client: a subscription to the list, then joins one after the other."""

    http: aiohttp.ClientSession
    url: str
    code: str
    acknowledged: list[str]
    sent: list[str]
    notices: list[str] = field(default_factory=list)
    closed: list[list[Any]] = field(default_factory=list)
    close_code: int | None = None

    async def run(self, stop: asyncio.Event, reconnect: bool = False) -> None:
        while not stop.is_set():
            try:
                ws = await self.http.ws_connect(self.url, max_msg_size=0)
            except (aiohttp.ClientError, OSError):
                if not reconnect:
                    raise
                await asyncio.sleep(0.05)  # between the old process and the new one
                continue
            await self._joins(ws, stop)
            if not reconnect:
                return

    async def _joins(self, ws: aiohttp.ClientWebSocketResponse, stop: asyncio.Event) -> None:
        await ws.send_json(["REQ", "l", {"kinds": [13534]}])
        while not stop.is_set():
            person = Person.new()
            event = signed(person.secret, 28934, [["claim", self.code]])
            self.sent.append(person.pubkey)
            try:
                await ws.send_json(["EVENT", event])
            except (aiohttp.ClientError, ConnectionError):
                pass  # closing: the close frame is read below
            while True:
                msg = await ws.receive(timeout=30)
                if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    self.close_code = ws.close_code
                    return
                assert msg.type == aiohttp.WSMsgType.TEXT, msg
                answer = msg.json()
                if answer[0] == "NOTICE":
                    self.notices.append(answer[1])
                elif answer[0] == "CLOSED":
                    self.closed.append(answer)
                elif answer[0] == "OK" and answer[1] == event["id"]:
                    if answer[2]:
                        self.acknowledged.append(person.pubkey)
                    break
        await ws.close()


async def until(
    condition: Callable[[], bool],
    tasks: list[asyncio.Task[None]],
    relays: list[RelayProcess],
    timeout: float = 30,
) -> None:
    """Wait for `condition`; a joiner that failed meanwhile fails the test with its own error,
    and a wait that runs out shows what the relays logged."""
    deadline = time.monotonic() + timeout
    while not condition():
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception():
                raise task.exception()  # type: ignore[misc]
        ended = sum(task.done() for task in tasks)
        logs = "\n".join(relay.log() for relay in relays)
        assert time.monotonic() < deadline, (
            f"joins stopped being acknowledged ({ended} of {len(tasks)} joiners ended):\n{logs}"
        )
        await asyncio.sleep(0.01)


def test_sigterm_in_a_burst_of_joins_closes_cleanly_and_loses_no_acknowledged_join(
    start_relay, mem: Membership, reader: Membership, db_url: str, key: RelayKey
):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    code = mem.create_relay_invite(cid, owner.pubkey, max_uses=None).code
    port = free_port()
    flags = ("--community", str(cid), "--reuse-port")
    leaving = start_relay(*flags, port=port)
    staying = start_relay(*flags, port=port)
    # Without --reuse-port, a third start on the port fails as it always did.
    third = subprocess.run(
        [str(BUZZ_RELAY), "--listen", f"127.0.0.1:{port}", "--community", str(cid)],
        env=os.environ | {"DATABASE_URL": db_url, "BUZZ_RELAY_SECRET_KEY": key.secret_hex()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert third.returncode == 1
    assert f"127.0.0.1:{port} is in use" in third.stderr
    acknowledged: list[str] = []
    sent: list[str] = []

    async def main() -> list[Joiner]:
        stop = asyncio.Event()
        async with aiohttp.ClientSession() as http:
            joiners = [Joiner(http, leaving.url, code, acknowledged, sent) for _ in range(16)]
            tasks = [asyncio.create_task(j.run(stop)) for j in joiners]
            await until(lambda: len(acknowledged) >= 40, tasks, [leaving, staying])
            leaving.proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(leaving.proc.wait, 30) == 0
            after = len(acknowledged)
            # The other process keeps answering.
            await until(lambda: len(acknowledged) >= after + 20, tasks, [staying])
            stop.set()
            await asyncio.gather(*tasks)
            # A new connection reaches the process that stayed, and joins.
            late = Joiner(http, staying.url, code, acknowledged, sent)
            before = len(acknowledged)
            once = asyncio.Event()
            task = asyncio.create_task(late.run(once))
            await until(lambda: len(acknowledged) > before, [task], [staying])
            once.set()
            await task
            return joiners

    joiners = asyncio.run(main())
    ended = [j for j in joiners if j.close_code is not None]
    assert ended, "no client was on the process that stopped"
    assert len(ended) < len(joiners), "no client was on the process that stayed"
    for j in ended:
        assert j.notices == [RESTART_NOTICE]
        assert j.closed == [["CLOSED", "l", RESTART_CLOSED]]
        assert j.close_code == 1001
    assert all(not j.notices and not j.closed for j in joiners if j.close_code is None)
    assert re.search(rf"restarting: closing {len(ended)} connections", leaving.log())
    members = members_of(reader, cid)
    assert set(acknowledged) <= set(members), "an acknowledged join was lost"
    assert set(members) - {owner.pubkey} <= set(sent)
    assert reader.member_list_drift(cid) == []


def test_a_rolling_restart_loses_no_acknowledged_join(
    start_relay, mem: Membership, reader: Membership
):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    code = mem.create_relay_invite(cid, owner.pubkey, max_uses=None).code
    port = free_port()
    flags = ("--community", str(cid), "--reuse-port")
    old = start_relay(*flags, port=port)
    acknowledged: list[str] = []
    sent: list[str] = []

    async def main() -> None:
        stop = asyncio.Event()
        async with aiohttp.ClientSession() as http:
            joiners = [Joiner(http, old.url, code, acknowledged, sent) for _ in range(8)]
            tasks = [asyncio.create_task(j.run(stop, reconnect=True)) for j in joiners]
            await until(lambda: len(acknowledged) >= 30, tasks, [old])
            new = await asyncio.to_thread(start_relay, *flags, port=port)  # the replacement
            old.proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(old.proc.wait, 30) == 0
            after = len(acknowledged)
            await until(lambda: len(acknowledged) >= after + 30, tasks, [new])
            stop.set()
            await asyncio.gather(*tasks)

    asyncio.run(main())
    members = members_of(reader, cid)
    assert set(acknowledged) <= set(members), "an acknowledged join was lost"
    assert set(members) - {owner.pubkey} <= set(sent)
    listed = {t[1] for t in reader.member_list(cid)["tags"][1:]}
    assert listed == set(members)
    assert reader.member_list_drift(cid) == []


# ------------------------------------------------------------------ open files


def test_the_open_file_limit_is_raised_and_a_low_one_is_named(
    mem: Membership, db_url: str, key: RelayKey, tmp_path
):
    cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    log = tmp_path / "relay.log"
    proc = subprocess.Popen(
        # util-linux's prlimit: soft 256, hard 1024, then the relay in its place.
        ["prlimit", "--nofile=256:1024", str(BUZZ_RELAY), "--listen", f"127.0.0.1:{free_port()}"]
        + ["--community", str(cid)],
        env=os.environ | {"DATABASE_URL": db_url, "BUZZ_RELAY_SECRET_KEY": key.secret_hex()},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        relay = RelayProcess(proc, 0, log)
        wait_log(relay, "serving community")
        text = log.read_text()
        assert "open files: 1024 allowed, about 950 connections per process" in text
        assert "WARNING buzz_relay: open files: the limit is 1024 (hard limit 1024)" in text
        assert "ulimit -n 10074, or LimitNOFILE=10074" in text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
