"""buzz-relay as the members-only gate of a community (`--upstream`), in front of
nostr-sdk's LocalRelay (`upstream_relay.py`): the fixtures `upstream`, `open_gate` and
`gate`, a websocket client of the gate (`wire`, `Wire`), and what the upstream stored
(`upstream_events`). Test modules load it with pytest_plugins."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fixtures_membership import new_host
from ports import free_port
from relay_client import auth_event
from relay_fixtures import Person, RelayProcess
from upstream_relay import UpstreamRelay

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership


@dataclass(frozen=True)
class Gated:
    """buzz-relay as the members-only gate of one community, in front of `upstream`."""

    process: RelayProcess
    url: str
    upstream: UpstreamRelay
    key: RelayKey
    community_id: Any
    host: str
    owner: Person
    admin: Person
    member: Person
    mem: Membership


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[UpstreamRelay]:
    relay = UpstreamRelay(free_port(), tmp_path / "upstream").start()
    yield relay
    relay.stop()


@pytest.fixture
def open_gate(
    start_relay, mem: Membership, key: RelayKey, upstream: UpstreamRelay
) -> Callable[..., Gated]:
    """open_gate(*flags): a gate over one community (owner, admin, member), made once."""
    owner, admin, member = Person.new(), Person.new(), Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    mem.add_relay_member(cid, admin.pubkey, "admin")
    mem.add_relay_member(cid, member.pubkey)

    def open_(*flags: str, upstream_url: str | None = None) -> Gated:
        url = upstream_url or upstream.url
        process = start_relay("--community", str(cid), "--upstream", url, *flags)
        return Gated(process, process.url, upstream, key, cid, host, owner, admin, member, mem)

    return open_


@pytest.fixture
def gate(open_gate) -> Gated:
    return open_gate()


class Wire:
    """One websocket: what it sent and received, and waits for a message."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, url: str) -> None:
        self.ws = ws
        self.url = url
        self.received: list[list[Any]] = []
        self.challenge: str | None = None

    async def send(self, *message: Any) -> None:
        await self.ws.send_str(json.dumps(list(message)))

    async def _next(self, timeout: float) -> list[Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"websocket {msg.type.name}: {msg.data!r}")
        parsed = json.loads(msg.data)
        self.received.append(parsed)
        return parsed

    async def expect(self, pred: Callable[[list[Any]], bool], timeout: float = 5) -> list[Any]:
        """The first message from now on that matches `pred`, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        start = len(self.received)
        while True:
            left = deadline - time.monotonic()
            try:
                msg = await self._next(max(left, 0.001))
            except TimeoutError:
                raise AssertionError(
                    f"nothing such within {timeout} s; got {self.received[start:]}"
                ) from None
            if pred(msg):
                return msg

    async def quiet(self, seconds: float) -> list[list[Any]]:
        """Everything that arrives within `seconds`."""
        got = []
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError):
            while (left := deadline - time.monotonic()) > 0:
                got.append(await self._next(left))
        return got

    async def ok(self, event: dict[str, Any], timeout: float = 5) -> list[Any]:
        """Publish `event`; its OK."""
        await self.send("EVENT", event)
        return await self.expect(lambda m: m[:2] == ["OK", event["id"]], timeout)

    async def oks(self, *events: dict[str, Any], timeout: float = 5) -> list[list[Any]]:
        """Publish `events` back to back (not waiting for an OK in between); their OKs."""
        start = len(self.received)
        for event in events:
            await self.send("EVENT", event)
        ids = [event["id"] for event in events]
        await self.expect(
            lambda m: {x[1] for x in self.received[start:] if x[0] == "OK"} >= set(ids), timeout
        )
        by_id = {x[1]: x for x in self.received[start:] if x[0] == "OK"}
        return [by_id[i] for i in ids]

    async def req(self, sub: str, *filters: dict[str, Any], until: str = "EOSE") -> list[list[Any]]:
        """Send a REQ; every message of that subscription up to its EOSE (or CLOSED)."""
        start = len(self.received)
        await self.send("REQ", sub, *filters)
        await self.expect(lambda m: m[0] in ("EOSE", "CLOSED") and m[1] == sub)
        return [m for m in self.received[start:] if len(m) > 1 and m[1] == sub]

    async def auth(self, person: Person) -> list[Any]:
        assert self.challenge is not None
        ev = auth_event(person.secret, self.challenge, self.url)
        await self.send("AUTH", ev)
        return await self.expect(lambda m: m[:2] == ["OK", ev["id"]])


@contextlib.asynccontextmanager
async def wire(
    web: aiohttp.ClientSession, url: str, as_: Person | None = None
) -> AsyncIterator[Wire]:
    """A connection to `url` (the gate: its challenge read; with `as_`, AUTHed)."""
    ws = await web.ws_connect(url, max_msg_size=0)
    w = Wire(ws, url)
    try:
        greeting = await w._next(5)
        assert greeting[0] == "AUTH", greeting
        w.challenge = greeting[1]
        if as_ is not None:
            ok = await w.auth(as_)
            assert ok[2:] == [True, ""], ok
        yield w
    finally:
        await ws.close()


async def upstream_events(url: str, *filters: dict[str, Any]) -> list[dict[str, Any]]:
    """What the upstream relay itself holds for `filters` (asked directly, not via the gate)."""
    async with aiohttp.ClientSession() as web, web.ws_connect(url) as ws:
        await ws.send_str(json.dumps(["REQ", "direct", *filters]))
        events = []
        while True:
            msg = json.loads(await ws.receive_str(timeout=5))
            if msg[:2] == ["EOSE", "direct"]:
                return events
            assert msg[:2] == ["EVENT", "direct"], msg
            events.append(msg[2])
