"""A connection's outbox (relay/outbound.py) on its own: what waits for a client that reads
slowly is bounded in bytes, and a newer list takes the place of the one still waiting (SPEC
section 10). The websocket is a stand-in whose sends wait until the test lets them go; the
whole relay with a client that never reads is in test_relay_wire.py."""

from __future__ import annotations

import asyncio

from buzz_signer.relay.filters import WireEvent
from buzz_signer.relay.outbound import Frame, Outbox
from buzz_signer.relay.protocol import event_message


class SlowSocket:
    """Takes one message each time `release()` is called; records what it took."""

    compress = False
    closed = False

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.close_code: int | None = None
        self._go = asyncio.Semaphore(0)

    async def send_str(self, text: str) -> None:
        await self._go.acquire()
        self.sent.append(text)

    async def send_frame(self, payload: bytes, opcode: int) -> None:
        await self.send_str(payload.decode())

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self._go.release()

    async def close(self, code: int, message: bytes) -> None:
        self.close_code = code


def event(kind: int, created_at: int, size: int = 10, d: str | None = None) -> WireEvent:
    text = f'{{"kind":{kind},"created_at":{created_at},"content":"{"x" * size}"}}'
    tags = {"d": (d,)} if d is not None else {}
    return WireEvent(f"{kind}-{created_at}", "ab" * 32, kind, created_at, text, tags)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_newer_list_replaces_the_one_still_waiting() -> None:
    async def main() -> list[str]:
        ws = SlowSocket()
        outbox = Outbox(ws, None, max_messages=100, max_bytes=1 << 20)  # type: ignore[arg-type]
        outbox.send([event_message("a", event(1, 1))])  # in flight: taken out of the queue
        await settle()
        outbox.send([event_message("a", event(13534, 1)), event_message("a", event(8000, 2))])
        outbox.send([event_message("b", event(13534, 1))])  # another subscription's: kept
        outbox.send([event_message("a", event(13534, 3))])
        outbox.send_frame(Frame(event_message("a", event(13534, 4))))
        outbox.send([event_message("a", event(33534, 5, d="mod"))])
        outbox.send([event_message("a", event(33534, 6, d="vip"))])
        outbox.send([event_message("a", event(33534, 7, d="mod"))])
        ws.release(100)
        await outbox.flushed()
        return ws.sent

    sent = asyncio.run(main())
    assert [(m.split('"kind":')[1].split(",")[0], m.split('"created_at":')[1].split(",")[0], m[10])
            for m in sent] == [
        ("1", "1", "a"),
        ("8000", "2", "a"),
        ("13534", "1", "b"),
        ("13534", "4", "a"),
        ("33534", "6", "a"),
        ("33534", "7", "a"),
    ]  # fmt: skip


def test_what_waits_is_bounded_in_bytes_but_one_message_always_goes() -> None:
    async def main() -> tuple[SlowSocket, list[int]]:
        ws = SlowSocket()
        too_slow: list[int] = []
        outbox = Outbox(ws, None, 100, 10_000, lambda: too_slow.append(1))  # type: ignore[arg-type]
        outbox.send([event_message("a", event(1, 1, size=50_000))])  # larger than the bound
        await settle()
        outbox.send([event_message("a", event(1, 2, size=6_000))])  # waits: 6 kB
        assert not too_slow
        outbox.send([event_message("b", event(1, 3, size=6_000))])  # 12 kB would wait
        await settle()
        return ws, too_slow

    ws, too_slow = asyncio.run(main())
    assert too_slow == [1]
    assert ws.close_code == 1008
    assert ws.sent == []  # the one in flight never finished: the socket took nothing


def test_identical_list_answers_share_their_bytes() -> None:
    """The same list under the same subscription id is one message, encoded once, however
    many connections or REQs it answers; the hub's frame for it takes the same bytes."""
    live = event(13534, 9, size=100_000)
    first, again = event_message("a", live), event_message("a", live)
    assert first is again
    assert first.encoded() is again.encoded()  # type: ignore[attr-defined]
    assert Frame(first).payload is first.encoded()  # type: ignore[attr-defined]
    assert event_message("b", live) is not first  # another subscription id: its own text
    assert event_message("a", event(8000, 9)) is not event_message("a", event(8000, 9))
