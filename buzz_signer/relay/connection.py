"""One client's websocket: its messages in to the handler (a RelaySession, or the Gate in front
of one), one at a time; relay messages out through a queue that a client who does not read
cannot grow past its bound; and the clean end of a restart (`drain`).

A restart (SIGTERM) drains every connection at once: no message that arrives from then on is
started (an EVENT gets `OK false`, a REQ `CLOSED`); the message whose handler is running
finishes and its answers are sent; behind the gate, the EVENTs forwarded upstream get a little
time for their `OK`; then the client gets a `NOTICE` naming the restart, a `CLOSED` for each of
its open subscriptions, and the websocket closes normally (1001, going away).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from aiohttp import WSMsgType, web

from .outbound import Outbox
from .protocol import MalformedMessage, parse_message, relay_message

__all__ = [
    "RESTART_CLOSED",
    "RESTART_NOTICE",
    "Connection",
    "Handler",
]

log = logging.getLogger("buzz_relay")

RESTART_NOTICE = "restarting: this relay is restarting; reconnect"
RESTART_CLOSED = "error: relay restarting; subscribe again after reconnecting"
RESTART_REFUSED = "error: relay restarting; send it again after reconnecting"
# Behind the gate, how long the EVENTs forwarded upstream may wait for their OK once the
# connection's own message has answered (within the drain's deadline for writes).
UPSTREAM_OK_SECONDS = 3.0
# Sending the last messages, then the close handshake: each at most this long.
FLUSH_SECONDS = 1.0
CLOSE_SECONDS = 1.0


class Handler(Protocol):
    """What answers a connection's messages: protocol.RelaySession or gate.Gate."""

    async def handle(self, text: str) -> list[str]: ...

    def subscription_ids(self) -> list[str]: ...


class Connection:
    """The websocket of one client and the handler of its messages."""

    __slots__ = ("_busy", "_idle", "draining", "handler", "outbox", "received", "ws")

    def __init__(
        self,
        ws: web.WebSocketResponse,
        *,
        max_queued: int,
        max_queued_bytes: int,
        transport: asyncio.Transport | None = None,
        on_too_slow: Callable[[], None] | None = None,
    ) -> None:
        self.ws = ws
        self.handler: Handler | None = None
        # Messages to send (outbound.py); the hub pushes committed events through it too.
        self.outbox = Outbox(ws, transport, max_queued, max_queued_bytes, on_too_slow)
        self._busy = False  # while a message of the client is being handled
        # What a drain waits on while a message is being handled; made only then (an
        # asyncio.Event for every connection would be 1 kB each).
        self._idle: asyncio.Future[None] | None = None
        self.draining = False
        self.received = 0  # messages from the client (the log's line at its close)

    def send(self, messages: list[str]) -> None:
        """Queue relay messages for the client; a client that lets too many wait is closed."""
        self.outbox.send(messages)

    async def serve(self, handler: Handler, greeting: list[str]) -> None:
        """Answer the client's messages in order until it goes away (or is closed)."""
        self.handler = handler
        try:
            self.send(greeting)
            async for msg in self.ws:
                if msg.type == WSMsgType.TEXT:
                    text = msg.data
                elif msg.type == WSMsgType.BINARY:
                    text = msg.data.decode("utf-8", "replace")
                else:  # WSMsgType.ERROR
                    break
                self.received += 1
                if self.draining:
                    self.send(_refused(text))
                    continue
                self._busy = True
                try:
                    self.send(await handler.handle(text))
                finally:
                    self._done()
        finally:
            self._done()
            await self.outbox.close()

    def _done(self) -> None:
        self._busy = False
        idle = self._idle
        if idle is not None:
            self._idle = None
            if not idle.done():
                idle.set_result(None)

    async def drain(
        self,
        writes_deadline: float,
        upstream_ok: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """End the connection for a restart (see the module docstring). `writes_deadline` is
        the loop time by which a running message must have answered; `upstream_ok()` returns
        when the EVENTs forwarded upstream (behind the gate) have their OK."""
        self.draining = True
        loop = asyncio.get_running_loop()
        if self._busy:
            if self._idle is None:
                self._idle = loop.create_future()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.shield(self._idle), max(0.0, writes_deadline - loop.time())
                )
        left = writes_deadline - loop.time()
        if upstream_ok is not None and left > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(upstream_ok(), min(left, UPSTREAM_OK_SECONDS))
        ids = self.handler.subscription_ids() if self.handler is not None else []
        self.send(
            [relay_message("NOTICE", RESTART_NOTICE)]
            + [relay_message("CLOSED", sub_id, RESTART_CLOSED) for sub_id in ids]
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.outbox.flushed(), FLUSH_SECONDS)
        with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError):
            await asyncio.wait_for(
                self.ws.close(code=1001, message=b"relay restarting"), CLOSE_SECONDS
            )


def _refused(text: str) -> list[str]:
    """The answer to a message that arrived once the drain began: it is not started."""
    msg = parse_message(text)
    if isinstance(msg, MalformedMessage) or len(msg) < 2:
        return []
    if msg[0] == "EVENT" and isinstance(msg[1], dict) and type(msg[1].get("id")) is str:
        return [relay_message("OK", msg[1]["id"], False, RESTART_REFUSED)]
    if msg[0] in ("REQ", "COUNT") and type(msg[1]) is str:
        return [relay_message("CLOSED", msg[1], RESTART_CLOSED)]
    return []
