"""Live push: one `LISTEN buzz_membership` connection per process, fanned out to sessions.

The database announces each list, role definition (33534) and role deletion (kind 5) at
COMMIT (`{"community_id", "id", "kind", "created_at"}`). For a community that has connections
here, the hub reads, in one statement, the live list and the 8000/8001, 33534 and kind 5
events committed since the newest it delivered, and hands them to every session of that
community, which sends each to the subscriptions it matches. (Every event a transaction
publishes for a community shares one created_at, later than all that community's earlier
ones, so "since the newest delivered" misses none, whatever kinds a transaction wrote.)

Never missing a list: when the listening connection drops, the hub reconnects with backoff
and then does the same read for every community with connections, from what it last
delivered (or from shortly before the connection dropped), so every open subscription gets
what committed meanwhile and ends with the live list. Sessions drop what they already sent.

With members' profiles kept (SPEC section 8), it listens on buzz_profiles too, whose payload
is '<community> <pubkey>': the member's profile is read and handed over like the events. A
profile stored while the connection was down is caught up by its own created_at (a client's
clock), so one dated long before the drop reaches a subscriber only when it asks again.

The same connection listens on buzz_moderation, whose payload is a community's id: each such
notification goes to `on_moderation` (the relay's copy of the moderation rules reloads that
community), and each time the connection is up, first or again, `on_listening` is told (the
copy reloads every community, since changes made while it was down were not announced here).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg

from ..nostr import KIND_ADD_USER, KIND_DELETION, KIND_MEMBERSHIP_LIST, KIND_REMOVE_USER, KIND_ROLE
from .backend import DatabaseBackend
from .filters import WireEvent
from .outbound import Frame, Outbox
from .protocol import RelaySession, event_message

log = logging.getLogger("buzz_relay.hub")

CHANNEL = "buzz_membership"
MODERATION_CHANNEL = "buzz_moderation"
KEY_CHANNEL = "buzz_relay_key"  # a rotation committed (identity.py)
PROFILE_CHANNEL = "buzz_profiles"  # a member's profile stored (buzz.set_member_profile)
_DELIVERY_ORDER = (
    (KIND_ADD_USER, KIND_REMOVE_USER),
    (KIND_ROLE,),
    (KIND_DELETION,),
    (KIND_MEMBERSHIP_LIST,),
)
# After a reconnect, a community never delivered before is read from this long before the
# connection dropped: a list prepared before the drop can commit after it.
CATCH_UP_MARGIN_SECONDS = 60
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 5.0
# Profiles delivered after a reconnect, per community, at most (the newest).
MAX_CAUGHT_UP = 500

Send = Callable[[list[str]], None]


@dataclass
class _Community:
    sessions: dict[RelaySession, Send | Outbox] = field(default_factory=dict)
    # created_at of the newest event (list, 8000/8001, 33534, 5) delivered to this
    # community's sessions.
    delivered: int | None = None


class Hub:
    """Sessions by community, and the task that listens and delivers."""

    def __init__(
        self,
        conninfo: str,
        backend: DatabaseBackend,
        *,
        on_pushed: Callable[[int], None] = lambda n: None,
        on_reconnect: Callable[[], None] = lambda: None,
        on_moderation: Callable[[str], None] | None = None,
        on_listening: Callable[[], None] = lambda: None,
        on_key_rotated: Callable[[], None] | None = None,
        profiles: bool = False,
    ) -> None:
        self._conninfo = conninfo
        self._backend = backend
        self._communities: dict[uuid.UUID, _Community] = {}
        self._on_pushed = on_pushed
        self._on_reconnect = on_reconnect
        self._on_moderation = on_moderation
        self._on_listening = on_listening
        self._on_key_rotated = on_key_rotated
        self._profiles = profiles
        self.connected = asyncio.Event()

    # Sessions -------------------------------------------------------------------

    def register(self, session: RelaySession, send: Send | Outbox) -> None:
        """Push to this session's subscriptions through `send`; with an Outbox (and a session
        of this relay's own protocol), as frames shared with the community's other sessions."""
        entry = self._communities.setdefault(session.community.id, _Community())
        entry.sessions[session] = send

    def unregister(self, session: RelaySession) -> None:
        entry = self._communities.get(session.community.id)
        if entry is None:
            return
        entry.sessions.pop(session, None)
        if not entry.sessions:
            del self._communities[session.community.id]

    def sessions(self) -> list[RelaySession]:
        return [s for entry in self._communities.values() for s in entry.sessions]

    # Listening ------------------------------------------------------------------

    async def run(self) -> None:
        """Listen until cancelled, reconnecting with backoff; catch up after each reconnect."""
        backoff = BACKOFF_FIRST
        dropped_at: float | None = None
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo,
                    autocommit=True,
                    application_name="buzz-relay listen",
                    # Over TCP, a peer that vanished is noticed in about a minute, not hours.
                    keepalives=1,
                    keepalives_idle=30,
                    keepalives_interval=10,
                    keepalives_count=3,
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if self._on_moderation is not None:
                        await conn.execute(f"LISTEN {MODERATION_CHANNEL}")
                    if self._on_key_rotated is not None:
                        await conn.execute(f"LISTEN {KEY_CHANNEL}")
                    if self._profiles:
                        await conn.execute(f"LISTEN {PROFILE_CHANNEL}")
                    self.connected.set()
                    self._on_listening()
                    backoff = BACKOFF_FIRST
                    if dropped_at is not None:
                        self._on_reconnect()
                        await self._catch_up(dropped_at)
                        log.info("listening again after %.1f s", time.time() - dropped_at)
                        dropped_at = None
                    async for note in conn.notifies():
                        if note.channel == MODERATION_CHANNEL and self._on_moderation is not None:
                            self._on_moderation(note.payload)
                        elif note.channel == KEY_CHANNEL and self._on_key_rotated is not None:
                            self._on_key_rotated()
                        elif note.channel == PROFILE_CHANNEL:
                            await self._profile_stored(note.payload)
                        else:
                            await self._notified(note.payload)
            except asyncio.CancelledError:
                raise
            except (psycopg.Error, OSError) as exc:
                # Once per loss, not once per attempt (an outage is reported by outage.py).
                if dropped_at is None:
                    log.warning("listening connection lost (%s); reconnecting", type(exc).__name__)
            self.connected.clear()
            if dropped_at is None:
                dropped_at = time.time()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    async def _notified(self, payload: str) -> None:
        try:
            data: Any = json.loads(payload)
            community, created_at = uuid.UUID(data["community_id"]), int(data["created_at"])
        except (ValueError, KeyError, TypeError):
            log.warning("ignoring a malformed notification")
            return
        entry = self._communities.get(community)
        if entry is None or (entry.delivered is not None and created_at <= entry.delivered):
            return  # no connection here wants it, or it was delivered with a later read
        await self._deliver(community, entry, created_at if entry.delivered is None else None)

    async def _catch_up(self, dropped_at: float) -> None:
        floor = int(dropped_at) - CATCH_UP_MARGIN_SECONDS
        for community, entry in list(self._communities.items()):
            await self._deliver(community, entry, floor if entry.delivered is None else None)
            if self._profiles:
                await self._deliver_profiles(community, entry, since=floor)

    async def _profile_stored(self, payload: str) -> None:
        try:
            text, pubkey = payload.split(" ")
            community = uuid.UUID(text)
        except ValueError:
            log.warning("ignoring a malformed notification")
            return
        entry = self._communities.get(community)
        if entry is not None:
            await self._deliver_profiles(community, entry, authors=[pubkey])

    async def _deliver_profiles(
        self,
        community: uuid.UUID,
        entry: _Community,
        *,
        authors: list[str] | None = None,
        since: int | None = None,
    ) -> None:
        """Read members' profiles (of `authors`, or stored since `since`); hand them over."""
        try:
            profiles = await self._backend.member_profiles(
                community, authors=authors, since=since, until=None, limit=MAX_CAUGHT_UP
            )
        except Exception:
            log.exception("could not read the profiles of community %s", community)
            return
        pushed = self._fan_out(entry, profiles)
        if pushed:
            self._on_pushed(pushed)

    async def _deliver(self, community: uuid.UUID, entry: _Community, since: int | None) -> None:
        """Read the live list and the events after what was delivered; hand them over."""
        since = since if since is not None else (entry.delivered or 0) + 1
        try:
            events = await self._backend.events_since(community, since)
        except Exception:
            log.exception("could not read the events of community %s", community)
            return
        if events:
            entry.delivered = max(entry.delivered or 0, *(ev.created_at for ev in events))
        # The 8000/8001 events come oldest first, then the role definitions and deletions, and
        # the list they belong to after them all: a client that follows the list never sees it
        # name a member before the 8000 that added it, or a role before its definition.
        ordered: list[WireEvent] = [
            ev for kind in _DELIVERY_ORDER for ev in events if ev.kind in kind
        ]
        # No collection of the whole heap in the middle of the fan-out: with 10,000 connections
        # one takes a quarter of a second, and every session after it would wait for it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            pushed = self._fan_out(entry, ordered)
        finally:
            if collecting:
                gc.enable()
        if pushed:
            self._on_pushed(pushed)

    @staticmethod
    def _fan_out(entry: _Community, ordered: list[WireEvent]) -> int:
        """Hand the events to every session of the community; the number of messages sent."""
        pushed = 0
        # One frame per (subscription id, event), however many sessions it goes to.
        frames: dict[tuple[str, str], Frame] = {}
        for session, send in list(entry.sessions.items()):
            if isinstance(send, Outbox) and type(session) is RelaySession:
                for sub_id, ev in session.deliveries(ordered):
                    shared = frames.get((sub_id, ev.id))
                    if shared is None:
                        shared = frames[sub_id, ev.id] = Frame(event_message(sub_id, ev))
                    send.send_frame(shared)
                    pushed += 1
                continue
            messages = session.deliver(ordered)
            if messages:
                send.send(messages) if isinstance(send, Outbox) else send(messages)
                pushed += len(messages)
        return pushed
