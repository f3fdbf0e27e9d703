"""A connection's outgoing messages, and frames shared by many connections.

An `Outbox` writes a message to its socket at once when nothing waits before it and the
socket keeps up (its transport's buffer is small); otherwise it queues the message and a task
of its own writes the queue through aiohttp, waiting for the socket to drain. What a client
has been sent and has not read is bounded (SPEC section 10): past `max_bytes` waiting (the
queue and the transport's buffer, what this process holds; one message always goes, however
large) or `max_messages` queued, the connection is closed as too slow (1008, or the socket
itself if the close frame cannot go either) and counted. A message that replaces an earlier
one (`replaces`: a newer list for the same subscription, a newer definition of the same role)
takes the earlier one's place in the queue if it is still waiting: a client never gets both,
and a client that asks for the same list again and again holds one copy, not one per ask.

A `Frame` is one text message encoded and framed once (RFC 6455: final, unmasked,
uncompressed): the hub writes the same bytes to every connection it pushes a committed event
to, instead of building, encoding and framing the message once per connection. A shared
message (protocol.ReplacingMessage: the same list under the same subscription id) is encoded
once too, however many connections hold it. A connection that negotiated compression
(permessage-deflate) gets its messages through aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections import deque
from collections.abc import Callable, Hashable, Sequence

from aiohttp import WSMsgType, web

log = logging.getLogger("buzz_relay")

# Above this many bytes in the transport's buffer, messages queue and the writer task waits
# for the socket to drain (asyncio's own high-water mark is 64 KiB).
HIGH_WATER = 64 * 1024
_TEXT = 0x81  # FIN and opcode 1 (text)
# How long the close frame of a connection closed as too slow may take before the socket goes.
CLOSE_SECONDS = 1.0


def header(length: int) -> bytes:
    """The header of one final, unmasked text frame of `length` bytes."""
    if length < 126:
        return struct.pack("!BB", _TEXT, length)
    if length < 65536:
        return struct.pack("!BBH", _TEXT, 126, length)
    return struct.pack("!BBQ", _TEXT, 127, length)


class Frame:
    """A text message encoded and framed once, written to any number of connections; what it
    replaces is the message's (`replaces_key`)."""

    __slots__ = ("header", "payload", "replaces")

    def __init__(self, text: str) -> None:
        self.payload = _payload(text)
        self.header = header(len(self.payload))
        self.replaces = replaces_key(text)


def replaces_key(item: str | Frame) -> Hashable | None:
    """What a queued message stands for, if a newer message of the same key supersedes it
    (protocol.ReplacingMessage, Frame.replaces); None for every other message."""
    return getattr(item, "replaces", None)


def _payload(item: str | Frame) -> bytes:
    """The message's UTF-8: a Frame's, or a shared message's (protocol.ReplacingMessage),
    encoded once for every connection that holds it; another message's, encoded now."""
    if isinstance(item, Frame):
        return item.payload
    encoded = getattr(item, "encoded", None)
    return encoded() if encoded is not None else item.encode()


def _size(item: str | Frame) -> int:
    if isinstance(item, Frame) or hasattr(item, "encoded"):
        return len(_payload(item))
    return len(item) if item.isascii() else len(item.encode())


class Outbox:
    """The messages on their way to one websocket, in order."""

    __slots__ = (
        "_closed",
        "_max_bytes",
        "_max_messages",
        "_on_too_slow",
        "_queue",
        "_queued_bytes",
        "_replaceable",
        "_transport",
        "_writer",
        "_ws",
        "sent",
    )

    def __init__(
        self,
        ws: web.WebSocketResponse,
        transport: asyncio.Transport | None,
        max_messages: int,
        max_bytes: int,
        on_too_slow: Callable[[], None] | None = None,
    ):
        self._ws = ws
        self._transport = transport
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._on_too_slow = on_too_slow
        # Only while something is queued: an idle connection holds none of these (a deque is
        # 760 bytes, a task more: 10,000 connections would hold 10 MB for nothing).
        self._queue: deque[str | Frame] | None = None
        self._queued_bytes = 0
        self._replaceable: dict[Hashable, str | Frame] | None = None  # queued, by key
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self.sent = 0  # messages handed to this outbox (the log's line at the close)

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
        self.sent += 1
        transport = self._transport
        if (
            self._writer is None
            and not self._ws.compress
            and not self._ws.closed
            and transport is not None
            and not transport.is_closing()
            and transport.get_write_buffer_size() <= HIGH_WATER
        ):
            payload = _payload(item)
            head = item.header if isinstance(item, Frame) else header(len(payload))
            transport.writelines((head, payload))
            return
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        size = _size(item)
        key = replaces_key(item)
        if key is not None:
            self._drop_replaced(queue, key)
        if queue and (
            len(queue) >= self._max_messages
            or self._queued_bytes + size + self._buffered() > self._max_bytes
        ):
            self._too_slow()
            return
        queue.append(item)
        self._queued_bytes += size
        if key is not None:
            if self._replaceable is None:
                self._replaceable = {}
            self._replaceable[key] = item
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(queue))

    def _buffered(self) -> int:
        transport = self._transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def _drop_replaced(self, queue: deque[str | Frame], key: Hashable) -> None:
        """Take out the queued message that `key`'s new one replaces, if one still waits."""
        replaceable = self._replaceable
        earlier = replaceable.pop(key, None) if replaceable is not None else None
        if earlier is not None:
            queue.remove(earlier)
            self._queued_bytes -= _size(earlier)

    async def _write(self, queue: deque[str | Frame]) -> None:
        try:
            while queue:
                # Out of the queue before it is sent: a replacement never takes it out again.
                # Still counted until sent: this process holds it (and its encoding) till then.
                item = queue.popleft()
                key = replaces_key(item)
                if key is not None and self._replaceable is not None:
                    self._replaceable.pop(key, None)
                if isinstance(item, Frame) or hasattr(item, "encoded"):
                    # The shared bytes, not a copy encoded for this connection.
                    await self._ws.send_frame(_payload(item), WSMsgType.TEXT)
                else:
                    await self._ws.send_str(item)
                self._queued_bytes -= _size(item)
        except (ConnectionError, RuntimeError):  # the client went away
            self._closed = True
        finally:
            self._writer = None
            self._queue = None
            self._replaceable = None
            self._queued_bytes = 0

    def _too_slow(self) -> None:
        log.info("closing a connection that does not read what it is sent")
        if self._on_too_slow is not None:
            self._on_too_slow()
        self._closed = True
        self._queue = None
        self._replaceable = None
        self._queued_bytes = 0
        if self._writer is not None:
            self._writer.cancel()
        asyncio.ensure_future(self._close_too_slow())

    async def _close_too_slow(self) -> None:
        """The close frame, if it can go; else the socket: a client that reads nothing would
        never take the frame from a full buffer."""
        try:
            await asyncio.wait_for(self._ws.close(code=1008, message=b"too slow"), CLOSE_SECONDS)
        except (TimeoutError, ConnectionError, RuntimeError):
            if self._transport is not None:
                self._transport.abort()

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
