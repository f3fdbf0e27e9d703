"""A connection's outgoing messages, and frames shared by many connections.

An `Outbox` writes a message to its socket at once when nothing waits before it and the
socket keeps up (its transport's buffer is small); otherwise it queues the message and a task
of its own writes the queue through aiohttp, waiting for the socket to drain. A connection
that lets more than `limit` messages queue up is closed as too slow (1008).

A `Frame` is one text message framed once (RFC 6455: final, unmasked, uncompressed): the hub
writes the same bytes to every connection it pushes a committed event to, instead of
building, encoding and framing the message once per connection. A connection that
negotiated compression (permessage-deflate) gets the message through aiohttp instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections import deque
from collections.abc import Sequence

from aiohttp import web

log = logging.getLogger("buzz_relay")

# Above this many bytes in the transport's buffer, messages queue and the writer task waits
# for the socket to drain (asyncio's own high-water mark is 64 KiB).
HIGH_WATER = 64 * 1024
_TEXT = 0x81  # FIN and opcode 1 (text)


def frame(payload: bytes) -> bytes:
    """The bytes of one final, unmasked text frame carrying `payload`."""
    n = len(payload)
    if n < 126:
        return struct.pack("!BB", _TEXT, n) + payload
    if n < 65536:
        return struct.pack("!BBH", _TEXT, 126, n) + payload
    return struct.pack("!BBQ", _TEXT, 127, n) + payload


class Frame:
    """A text message and its frame, built once, written to any number of connections."""

    __slots__ = ("data", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = frame(text.encode())


class Outbox:
    """The messages on their way to one websocket, in order."""

    __slots__ = ("_closed", "_limit", "_queue", "_transport", "_writer", "_ws")

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.Transport | None, limit: int):
        self._ws = ws
        self._transport = transport
        self._limit = limit
        # Only while something is queued: an idle connection holds neither (a deque is
        # 760 bytes, a task more: 10,000 connections would hold 10 MB for nothing).
        self._queue: deque[str | Frame] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._closed = False

    def send(self, messages: Sequence[str]) -> None:
        """Send these messages after everything sent before them."""
        for message in messages:
            self._put(message)

    def send_frame(self, item: Frame) -> None:
        """Send a shared frame after everything sent before it."""
        self._put(item)

    def _put(self, item: str | Frame) -> None:
        if self._closed:
            return
        transport = self._transport
        if (
            self._writer is None
            and not self._ws.compress
            and not self._ws.closed
            and transport is not None
            and not transport.is_closing()
            and transport.get_write_buffer_size() <= HIGH_WATER
        ):
            transport.write(item.data if isinstance(item, Frame) else frame(item.encode()))
            return
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        elif len(queue) >= self._limit:
            self._too_slow()
            return
        queue.append(item)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(queue))

    async def _write(self, queue: deque[str | Frame]) -> None:
        try:
            while queue:
                item = queue[0]
                await self._ws.send_str(item.text if isinstance(item, Frame) else item)
                queue.popleft()
        except (ConnectionError, RuntimeError):  # the client went away
            self._closed = True
        finally:
            self._writer = None
            self._queue = None

    def _too_slow(self) -> None:
        log.info("closing a connection that does not read its messages")
        self._closed = True
        self._queue = None
        if self._writer is not None:
            self._writer.cancel()
        asyncio.ensure_future(self._ws.close(code=1008, message=b"too slow"))

    async def flushed(self) -> None:
        """Return once everything sent so far has been handed to the socket."""
        while self._writer is not None:
            await asyncio.wait({self._writer})  # waits without cancelling the writer

    async def close(self) -> None:
        """Stop writing: what is still queued is dropped (the connection is ending)."""
        self._closed = True
        self._queue = None
        writer = self._writer
        if writer is not None:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await writer
