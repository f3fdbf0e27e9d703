"""The members-only gate (`buzz-relay --upstream`): buzz-relay in front of any relay.

A `Gate` wraps one connection's RelaySession. NIP-42 and NIP-43 (AUTH; REQ for the membership
kinds and invites; EVENT 28934 and 28936; CLOSE of such subscriptions) are the session's. Any
other client message goes to the upstream relay, on one upstream connection per client
connection (`Upstream`), and the upstream's answers come back as they are (SPEC §7):

- an `EVENT` of another kind only from a connection AUTHed as a member, for an event that
  member wrote; else `OK false auth-required:` or `restricted: members only`; a member's
  kind 0 is also kept as their profile (SPEC section 8), and a REQ for kind 0 alone is
  answered from those profiles, to anyone (unless --no-profiles);
- `REQ` and `COUNT` of other kinds only from an AUTHed member when reads are for members
  (`--read members`); with `--read anyone`, from anyone;
- when a list that no longer names the AUTHed member commits, the connection's upstream
  subscriptions get `CLOSED restricted:` and are closed upstream: no more reading, no more
  writing, from that moment;
- when the upstream goes away, each of its subscriptions gets `CLOSED error:` and a `NOTICE`
  says so; the next message that needs it connects again;
- the community's moderation (moderation.py, read from memory at each message): an event
  whose id is banned never reaches the client from the upstream, stored or live, and is
  refused when published (`OK false blocked:`), as is an event of a kind the community
  disallows, or, once it allows some kinds, of any other kind. The membership kinds are the
  session's and never ruled.

Like the session, the gate knows no server: it is given the upstream and a `send` for
messages that arrive on their own (from the upstream, or live ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

import aiohttp

from ..nostr import (
    EVENT_FIELDS,
    KIND_DELETION,
    KIND_INVITE,
    KIND_JOIN_REQUEST,
    KIND_LEAVE_REQUEST,
    KIND_MEMBERSHIP_LIST,
    KIND_PROFILE,
    is_well_formed,
    verify_event,
)
from .filters import WireEvent
from .moderation import EMPTY, Rules
from .protocol import (
    RELAY_KINDS,
    SERVED_KINDS,
    MalformedMessage,
    RelaySession,
    parse_message,
    relay_message,
)

__all__ = ["Gate", "Upstream"]

log = logging.getLogger("buzz_relay")

# What the session answers itself: the membership kinds, invites, join and leave requests.
# Kind 5 is the upstream's (its members delete their notes with it) unless a filter names
# only the relay key as author: the relay's own deletions of role definitions are ours.
OWN_READ_KINDS = frozenset((SERVED_KINDS - {KIND_DELETION}) | {KIND_INVITE})
OWN_WRITE_KINDS = frozenset(RELAY_KINDS | {KIND_JOIN_REQUEST, KIND_LEAVE_REQUEST})
CONNECT_TIMEOUT_SECONDS = 10.0
MAX_AWAITING_OK = 1000
NOT_WELL_FORMED = "invalid: an event's fields must have NIP-01's types"
# The relay's kinds as a kind 5's `k` and `a` tags write them.
RELAY_KIND_TAGS = frozenset(str(k) for k in RELAY_KINDS)


class Upstream:
    """One websocket to the upstream relay for one client connection, opened when first needed.

    Whatever the upstream sends is handed to `on_message`; when the connection ends, to
    `on_lost`. Its NIP-42 challenges are not passed on: the gate authenticates clients itself.
    """

    def __init__(
        self,
        http: aiohttp.ClientSession,
        url: str,
        on_message: Callable[[str], None],
        on_lost: Callable[[], None],
    ) -> None:
        self._http, self._url = http, url
        self._on_message, self._on_lost = on_message, on_lost
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()

    async def send(self, text: str) -> bool:
        """Send one message upstream, connecting first if need be; False if it cannot."""
        async with self._connecting:
            if self._ws is None or self._ws.closed:
                try:
                    self._ws = await self._http.ws_connect(
                        self._url,
                        timeout=aiohttp.ClientWSTimeout(ws_close=5),
                        max_msg_size=16 * 1024 * 1024,
                    )
                except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                    log.warning(
                        "upstream relay %s: cannot connect (%s)", self._url, type(exc).__name__
                    )
                    self._ws = None
                    return False
                self._reader = asyncio.create_task(self._read(self._ws))
        try:
            await self._ws.send_str(text)
        except (aiohttp.ClientError, ConnectionError, RuntimeError):
            return False
        return True

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        try:
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT and not msg.data.startswith('["AUTH"'):
                    self._on_message(msg.data)
                elif msg.type in (aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSE):
                    break
        finally:
            if self._ws is ws:
                self._ws = None
            self._on_lost()

    async def close(self) -> None:
        ws = self._ws  # the reader forgets it when it ends
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if ws is not None:
            await ws.close()


class Gate:
    """One client connection through the gate: the session's own messages, or the upstream's."""

    def __init__(
        self,
        session: RelaySession,
        http: aiohttp.ClientSession,
        upstream_url: str,
        send: Callable[[list[str]], None],
        *,
        read_anyone: bool = False,
        rules: Callable[[], Rules] = lambda: EMPTY,
    ) -> None:
        self.session = session
        self.community = session.community
        self._send = send
        self._read_anyone = read_anyone
        # The community's moderation as this process holds it now (reloaded on commit).
        self._rules = rules
        self._upstream = Upstream(http, upstream_url, self._from_upstream, self._upstream_lost)
        self._upstream_subscriptions: set[str] = set()
        self._member: bool | None = None  # of the AUTHed pubkey; None: ask the database
        # EVENTs forwarded upstream and not yet answered with their OK (the newest, bounded).
        self._awaiting_ok: dict[str, None] = {}

    # ------------------------------------------------------------------ from the client

    async def handle(self, text: str) -> list[str]:
        """The relay messages answering one client message now (the upstream answers later)."""
        msg = parse_message(text)
        if isinstance(msg, MalformedMessage) or len(msg) < 2:
            return await self.session.handle(text)  # which answers NOTICE invalid:
        verb = msg[0]
        if verb == "AUTH":
            self._member = None
            return await self.session.handle(text)
        if verb == "EVENT" and isinstance(msg[1], dict):
            kind = msg[1].get("kind")
            # type() first: "7" or 7.0 is not kind 7 (SPEC section 10), and a list is not
            # hashable. A member's kind 5 is theirs to send upstream, unless it names ours.
            if type(kind) is not int or kind not in OWN_WRITE_KINDS or kind == KIND_DELETION:
                return await self._write(msg[1])
            if kind in (KIND_JOIN_REQUEST, KIND_LEAVE_REQUEST):
                return await self._join_or_leave(text)
        if verb in ("REQ", "COUNT") and type(msg[1]) is str and self._for_upstream(verb, msg[2:]):
            return await self._read(text, verb, msg[1])
        if verb == "CLOSE" and type(msg[1]) is str and msg[1] in self._upstream_subscriptions:
            self._upstream_subscriptions.discard(msg[1])
            await self._upstream.send(text)
            return []
        return await self.session.handle(text)

    async def _join_or_leave(self, text: str) -> list[str]:
        """A join or leave has committed by the time the session answers it: the next message
        must see the new membership, not wait for the list's NOTIFY."""
        answer = await self.session.handle(text)
        self._member = None
        if self._upstream_subscriptions and not await self._is_member():
            answer += self._lose_upstream()
        return answer

    def _for_upstream(self, verb: str, filters: list[Any]) -> bool:
        """A COUNT always; a REQ unless every filter names only the membership kinds (kind
        5 counting as one only in a filter whose authors are the relay key alone)."""
        if verb == "COUNT":
            return True
        return not all(self._own_filter(f) for f in filters)

    def _own_filter(self, f: Any) -> bool:
        if not (isinstance(f, dict) and isinstance(f.get("kinds"), list) and f["kinds"]):
            return False
        authors = f.get("authors")
        relay_only = (
            isinstance(authors, list)
            and bool(authors)
            and all(a == self.session.relay_pubkey for a in authors)
        )
        own = OWN_READ_KINDS | {KIND_DELETION} if relay_only else OWN_READ_KINDS
        if self.session.profiles:
            own = own | {KIND_PROFILE}  # answered from the members' profiles, to anyone
        # type() first: a list in "kinds" is not hashable (the session refuses it, invalid:).
        return all(type(k) is int and k in own for k in f["kinds"])

    async def _is_member(self) -> bool:
        pubkey = self.session.pubkey
        if pubkey is None:
            return False
        if self._member is None:
            member = await self.session.role_of(pubkey) is not None
            # A list that committed during the look-up (deliver) has the last word: the
            # look-up's snapshot may be older than a removal it announced.
            if self._member is None and pubkey == self.session.pubkey:
                self._member = member
            elif self._member is None:
                return False  # AUTHed anew meanwhile: the next message asks again
        return self._member

    async def _write(self, event: dict[str, Any]) -> list[str]:
        """A member's own event, checked, then sent upstream as it was read here: serialized
        again, so that an upstream reading the text another way (a duplicate key) gets no other
        event than the one checked."""
        event_id = event.get("id") if isinstance(event.get("id"), str) else ""
        if not is_well_formed(event):
            return [relay_message("OK", event_id, False, NOT_WELL_FORMED)]
        if self.session.pubkey is None:
            return [relay_message("OK", event_id, False, "auth-required: members only; AUTH first")]
        if event.get("pubkey") != self.session.pubkey or not await self._is_member():
            return [
                relay_message("OK", event_id, False, "restricted: members only, for their own events")
            ]
        rules = self._rules()
        if event_id in rules.banned_events:
            return [relay_message("OK", event_id, False, "blocked: this event is banned here")]
        kind = event["kind"]
        if kind == KIND_DELETION and self._names_relay_events(event):
            return [
                relay_message("OK", event_id, False, "blocked: only the relay deletes its events")
            ]
        refused = rules.kind_refused(kind)
        if refused is not None:
            return [relay_message("OK", event_id, False, refused)]
        self._awaiting_ok[event_id] = None
        if len(self._awaiting_ok) > MAX_AWAITING_OK:
            del self._awaiting_ok[next(iter(self._awaiting_ok))]
        checked = {name: event[name] for name in EVENT_FIELDS}
        # A member's profile is kept here too (SPEC section 8); the upstream's OK answers.
        if kind == KIND_PROFILE and self.session.profiles and verify_event(checked):
            kept, reason = await self.session.keep_profile(checked)
            if not kept:
                log.debug("profile not kept: %s", reason)
        if not await self._upstream.send(relay_message("EVENT", checked)):
            self._awaiting_ok.pop(event_id, None)
            return [
                relay_message("OK", event_id, False, "error: the upstream relay is unavailable")
            ]
        return []

    def _names_relay_events(self, deletion: dict[str, Any]) -> bool:
        """Does a kind 5 name what only the relay publishes: by `k` one of its kinds, by `a` an
        address of one of its kinds or of its key? (An `e` can name none the upstream holds:
        the relay's events are answered here and never go upstream.)"""
        for tag in deletion["tags"]:
            if len(tag) < 2:
                continue
            if tag[0] == "k" and tag[1] in RELAY_KIND_TAGS:
                return True
            if tag[0] == "a":
                kind, _, rest = tag[1].partition(":")
                if kind in RELAY_KIND_TAGS or rest.partition(":")[0] == self.session.relay_pubkey:
                    return True
        return False

    async def _read(self, text: str, verb: str, sub_id: str) -> list[str]:
        if not self._read_anyone:
            if self.session.pubkey is None:
                return [relay_message("CLOSED", sub_id, "auth-required: this relay is for members")]
            if not await self._is_member():
                return [relay_message("CLOSED", sub_id, "restricted: this relay is for members")]
        if verb == "REQ":
            self._upstream_subscriptions.add(sub_id)
        if not await self._upstream.send(text):
            self._upstream_subscriptions.discard(sub_id)
            return [relay_message("CLOSED", sub_id, "error: the upstream relay is unavailable")]
        return []

    # ------------------------------------------------------------------ from elsewhere

    def _from_upstream(self, text: str) -> None:
        if text.startswith('["CLOSED"'):
            with contextlib.suppress(ValueError, IndexError, TypeError):
                self._upstream_subscriptions.discard(json.loads(text)[1])
        elif text.startswith('["EVENT"') and self._banned(text):
            return
        elif text.startswith('["OK"') and self._awaiting_ok:
            with contextlib.suppress(ValueError, IndexError, TypeError):
                self._awaiting_ok.pop(json.loads(text)[1], None)
        self._send([text])

    def _banned(self, text: str) -> bool:
        """Whether an upstream EVENT frame carries an event the community banned (read only
        while it has banned some)."""
        banned = self._rules().banned_events
        if not banned:
            return False
        try:
            event = json.loads(text)[2]
        except (ValueError, IndexError, RecursionError):
            return False
        event_id = event.get("id") if isinstance(event, dict) else None
        return isinstance(event_id, str) and event_id in banned

    def _upstream_lost(self) -> None:
        closed = [
            relay_message("CLOSED", s, "error: the upstream relay went away; subscribe again")
            for s in sorted(self._upstream_subscriptions)
        ]
        self._upstream_subscriptions.clear()
        self._awaiting_ok.clear()
        self._send([*closed, relay_message("NOTICE", "error: the upstream relay went away")])

    def deliver(self, events: Iterable[WireEvent]) -> list[str]:
        """The session's live events, and the end of upstream access for a member a newly
        committed list no longer names."""
        events = list(events)
        out = self.session.deliver(events)
        pubkey = self.session.pubkey
        lists = [ev for ev in events if ev.kind == KIND_MEMBERSHIP_LIST]
        if pubkey is None or not lists:
            return out
        # Member tags are ["member","<pubkey>",...] in the compact text SPEC §3 fixes: the
        # list's text names the pubkey or not.
        self._member = f'["member","{pubkey}",' in lists[-1].text
        if not self._member:
            out += self._lose_upstream()
        return out

    def _lose_upstream(self) -> list[str]:
        """CLOSED restricted: for every upstream subscription, each closed upstream too."""
        closed = []
        for sub_id in sorted(self._upstream_subscriptions):
            closed.append(relay_message("CLOSED", sub_id, "restricted: you are no longer a member"))
            asyncio.ensure_future(self._upstream.send(relay_message("CLOSE", sub_id)))
        self._upstream_subscriptions.clear()
        return closed

    @property
    def subscription_count(self) -> int:
        return self.session.subscription_count + len(self._upstream_subscriptions)

    async def close(self) -> None:
        await self._upstream.close()

    def subscription_ids(self) -> list[str]:
        """The connection's open subscriptions: the session's and the upstream's."""
        return [*self.session.subscription_ids(), *sorted(self._upstream_subscriptions)]

    async def upstream_answered(self) -> None:
        """Return once every EVENT forwarded upstream has had its OK (or the upstream went)."""
        while self._awaiting_ok:
            await asyncio.sleep(0.02)
