"""nostr-sdk (rust-nostr's client, not ours) as the tests drive it: a connected client and
every relay message it received (`session`, `Session`), events it signs (`signed`), and
`run` for a scenario (nostr-sdk calls a Python authenticator from its own threads, so the
event loop is handed to it for the scenario's length)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import nostr_sdk as n

WAIT = timedelta(seconds=5)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        # nostr-sdk calls the Python authenticator from its own threads (see the docstring).
        n.uniffi_set_event_loop(asyncio.get_running_loop())
        try:
            await scenario()
        finally:
            n.uniffi_set_event_loop(None)  # type: ignore[arg-type]

    asyncio.run(main())


class Session:
    """A connected nostr-sdk Client and every relay message it has received, in order."""

    def __init__(self, client: n.Client, url: n.RelayUrl) -> None:
        self.client = client
        self.url = url
        self.messages: list[list[Any]] = []  # relay messages as JSON arrays
        # What nostr-sdk hands its subscriptions (after its own checks): (subscription, event).
        self.new_events: list[tuple[str, n.Event]] = []

    async def _collect(self, stream: n.ClientNotificationStream) -> None:
        while True:
            item = await stream.next()
            if item is None or item.is_shutdown():
                return
            if item.is_message():
                self.messages.append(json.loads(item.message.as_json()))
            elif item.is_new_event():
                self.new_events.append((item.subscription_id, item.event))

    async def wait_for(self, pred: Callable[[Any], bool], timeout: float = 5, *, of: Any = None):
        """The first relay message (or item of `of`) so far or within `timeout` matching `pred`.

        nostr-sdk's notifications may trail what its calls return: wait, then look."""
        items = self.messages if of is None else of
        deadline = time.monotonic() + timeout
        while True:
            found = next((m for m in items if pred(m)), None)
            if found is not None:
                return found
            assert time.monotonic() < deadline, f"none such in {items}"
            await asyncio.sleep(0.02)

    def of(self, verb: str) -> list[list[Any]]:
        return [m for m in self.messages if m[0] == verb]

    def ok_for(self, event: n.Event) -> list[list[Any]]:
        return [m for m in self.of("OK") if m[1] == event.id().to_hex()]

    async def fetch(self, f: n.Filter, timeout: timedelta = WAIT) -> list[n.Event]:
        return await self.client.fetch_events(n.ReqTarget.auto([f]), timeout)

    async def send(self, event: n.Event) -> n.SendEventOutput:
        return await self.client.send_event(event)


@contextlib.asynccontextmanager
async def session(
    relay: Any, keys: n.Keys | None = None, authenticator: n.Authenticator | None = None
) -> AsyncIterator[Session]:
    """A client of `relay`; with `keys` (or an authenticator), one that AUTHs."""
    # verify_subscriptions: nostr-sdk drops any event that does not match its REQ's filters.
    builder = n.ClientBuilder().verify_subscriptions(True)
    if keys is not None:
        authenticator = n.SignerAuthenticator(keys)
    if authenticator is not None:
        builder = builder.authenticator(authenticator)
    client = builder.build()
    url = n.RelayUrl.parse(relay.url)
    s = Session(client, url)
    collector = asyncio.create_task(s._collect(client.notifications()))
    await client.add_relay(url)
    await client.connect(WAIT)
    try:
        yield s
    finally:
        await client.shutdown()
        collector.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await collector


def tags_of(event: n.Event) -> list[list[str]]:
    return [t.to_vec() for t in event.tags()]


def signed(
    keys: n.Keys, kind: int, tags: list[list[str]], content: str = "", ago: int = 0
) -> n.Event:
    """A signed event; `ago` seconds in the past (two otherwise equal events get one id)."""
    builder = n.EventBuilder(n.Kind(kind), content).tags([n.Tag.parse(t) for t in tags])
    if ago:
        builder = builder.custom_created_at(n.Timestamp.from_secs(int(time.time()) - ago))
    return builder.finalize(keys)
