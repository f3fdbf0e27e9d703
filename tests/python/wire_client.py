"""A websocket client of a running buzz-relay for the wire tests: `connect` gives a `Socket`
and the AUTH challenge; every message a Socket receives is kept in RECEIVED, which the wire
tests scan for the relay secret after each test."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

# Every message a test's clients received, scanned for the relay secret after the test.
RECEIVED: list[str] = []


class Socket:
    """One client connection: send messages, read answers (parsed), with time-outs."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws

    async def send(self, *message: Any) -> None:
        await self.ws.send_str(json.dumps(list(message)))

    async def recv(self, timeout: float = 10) -> list[Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"websocket {msg.type.name}: {msg.data!r}")
        RECEIVED.append(msg.data)
        return json.loads(msg.data)

    async def until(self, verb: str, timeout: float = 10) -> list[list[Any]]:
        """Every message up to and including the first with `verb`."""
        seen = []
        while True:
            seen.append(await self.recv(timeout))
            if seen[-1][0] == verb:
                return seen


async def connect(
    session: aiohttp.ClientSession, url: str, host: str | None = None
) -> tuple[Socket, str]:
    """A connection and its AUTH challenge."""
    headers = {"Host": host} if host else None
    ws = await session.ws_connect(url, headers=headers, max_msg_size=0)
    sock = Socket(ws)
    verb, challenge = await sock.recv()
    assert verb == "AUTH"
    return sock, challenge
