"""NIP-01/42/43/70 for one client connection: a client message in, relay messages out.

`RelaySession` knows no websocket and no database driver: it is given the connection's
community and host, a `Backend` (the SQL API, see backend.py), the signer for invites and the
limits, and it answers each client message with the relay messages to send (JSON text, in
order). Events that commit while the connection is open reach it through `deliver`, which
returns the `EVENT` messages of the subscriptions they match. Another Python relay can mount
it as it is: feed it text, send what it returns.

What it answers (SPEC section 7): `AUTH` (NIP-42); `REQ` for kinds 13534, 8000, 8001, 33534
(role definitions), 5 (the relay's deletions of role definitions) and 0 (the members' own
profiles, unless `profiles=False`) (stored events, `EOSE`, then live ones), and for 28935 (a
fresh invite); `EVENT` 28934 (join with an invite, or, without one, a request under the
community's join policy), 28936 (leave) and 0 (a member's own profile, from its AUTHed
author); refusals with NIP-01 prefixes; `NOTICE` for anything that is not a client message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import (
    BuzzError,
    CommunityArchived,
    InvalidArgument,
    InviteQuotaExhausted,
    ListTooFarAhead,
    RelayKeyMismatch,
)
from ..nostr import (
    KIND_ADD_USER,
    KIND_AUTH,
    KIND_DELETION,
    KIND_INVITE,
    KIND_JOIN_REQUEST,
    KIND_LEAVE_REQUEST,
    KIND_MEMBERSHIP_LIST,
    KIND_PROFILE,
    KIND_REMOVE_USER,
    KIND_ROLE,
    verify_event,
)
from ..signer import Signer
from .answers import answer
from .filters import Filter, InvalidFilter, WireEvent, parse_filter
from .identity import RETIRED
from .limits import (
    DEFAULT_LIMITS,
    FAILED_CLAIM_SECONDS,
    JOIN_SECONDS,
    Limits,
    RateStore,
    SharedWindow,
    SlidingWindow,
)
from .urls import RelayNames

log = logging.getLogger("buzz_relay")

__all__ = [
    "SERVED_KINDS",
    "Backend",
    "Community",
    "Observer",
    "RelaySession",
    "parse_message",
    "relay_message",
]

# Kinds a REQ may ask for: the stored membership events (the list, 8000/8001, the role
# definitions and the relay's kind 5 deletions of them), and the invite minted on request.
SERVED_KINDS = frozenset(
    (KIND_MEMBERSHIP_LIST, KIND_ADD_USER, KIND_REMOVE_USER, KIND_ROLE, KIND_DELETION)
)
# A member's own profile (kind 0, SPEC section 8): at most this many bytes as compact JSON,
# and at most PROFILES_PER_MINUTE kept per connection (each is a write and a verification).
MAX_PROFILE_BYTES = 16_384
PROFILES_PER_MINUTE = 6
# Kinds only the relay publishes: a client's EVENT of one is refused.
RELAY_KINDS = frozenset(SERVED_KINDS | {KIND_INVITE, KIND_DELETION})
# NIP-42 and NIP-43: a client's created_at must be this close to the clock.
FRESH_SECONDS = 600
INVITE_TTL_SECONDS = 72 * 3600
# The refusal of an invite to someone whose quota is spent (SPEC §3 "Invitations: quotas and
# branches"): the 28935 REQ's CLOSED, and NIP-86 createclaim's error, say it in these words.
MAX_SUBSCRIPTION_ID = 64
MAX_CLAIM = 256
# A join request's content is kept as its note: this long at most, without the control
# characters the database refuses in a note (and NUL, which text cannot hold).
MAX_NOTE = 1000
_NOTE_REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# REQs reading their stored events at once, in one event loop (more than any pool of
# database connections the relay runs with). A read waiting for one of the pool's connections
# holds the pool's waiter (a condition and a task) and a dozen coroutine frames, about 7 kB;
# when thousands of clients subscribe at once (those of a restarted relay), that memory,
# freed afterwards, stays in the allocator's partly used pools: 10,000 REQs at once left the
# relay 65 MB larger for good. A REQ past this many waits here instead, as one future.
MAX_STORED_READS = 32
_STORED_READS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _stored_reads() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    gate = _STORED_READS.get(loop)
    if gate is None:
        gate = _STORED_READS[loop] = asyncio.Semaphore(MAX_STORED_READS)
    return gate


@dataclass(frozen=True)
class Community:
    """The community a connection talks to: its id and its host (as stored, lower-case)."""

    id: uuid.UUID
    host: str


class Backend(RateStore, Protocol):
    """The SQL API as the protocol uses it; backend.DatabaseBackend is the real one."""

    async def live_list(self, community: uuid.UUID) -> WireEvent | None: ...

    async def membership_events_matching(
        self,
        community: uuid.UUID,
        *,
        kinds: Sequence[int] | None,
        ids: Sequence[str] | None,
        members: Sequence[str] | None,
        since: int | None,
        until: int | None,
        limit: int,
    ) -> list[WireEvent]: ...

    async def role_events(
        self, community: uuid.UUID, since: int, *, definitions: bool, deletions: bool
    ) -> list[WireEvent]: ...

    async def role_of(self, community: uuid.UUID, pubkey: str) -> str | None: ...

    async def mint_invite(
        self, community: uuid.UUID, requester: str, ttl_seconds: int
    ) -> tuple[str, int]: ...

    async def claim_invite(self, community: uuid.UUID, code: str, pubkey: str) -> str: ...

    async def request_membership(
        self, community: uuid.UUID, pubkey: str, request_id: str, note: str | None
    ) -> str: ...

    async def remove_relay_member(self, community: uuid.UUID, pubkey: str) -> str: ...

    async def set_member_profile(self, community: uuid.UUID, event_text: str) -> str: ...

    async def member_profiles(
        self,
        community: uuid.UUID,
        *,
        authors: Sequence[str] | None,
        since: int | None,
        until: int | None,
        limit: int,
        ids: Sequence[str] | None = None,
    ) -> list[WireEvent]: ...


class Observer:
    """Where a session reports what it did (metrics); the default records nothing."""

    def request(self, kind: str, outcome: str) -> None:
        """A client request of `kind` (auth, req, join, leave, invite, ...) and its outcome."""

    def write(self, kind: str, outcome: str, seconds: float) -> None:
        """A membership write (join, request_membership, leave, invite) and how long the
        database took."""


@dataclass(frozen=True)
class MalformedMessage:
    """Why a client's text is not a client message (the NOTICE to answer it with)."""

    reason: str


def parse_message(text: str | bytes) -> list[Any] | MalformedMessage:
    """A client message: a JSON array whose first element is a string, every string in it
    text that can be sent back (a lone surrogate, `\\ud800`, is not: echoed in an answer, as a
    subscription id is, it could not be encoded)."""
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):
        return MalformedMessage("invalid: not a JSON message")
    if type(msg) is not list or not msg or type(msg[0]) is not str:
        return MalformedMessage('invalid: a client message is an array like ["REQ", ...]')
    # Only an escape can make a lone surrogate (the text itself arrived as UTF-8): look for
    # one only when the text has escapes, by encoding what was parsed.
    if "\\u" in (text if isinstance(text, str) else text.decode("utf-8", "replace")):
        try:
            json.dumps(msg, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            return MalformedMessage("invalid: a string in the message is not Unicode text")
    return msg


def relay_message(*parts: Any) -> str:
    """A relay message as compact JSON text: ["OK", id, true, ""] and the like."""
    return json.dumps(list(parts), separators=(",", ":"), ensure_ascii=False)


class ReplacingMessage(str):
    """An EVENT message whose event a newer one replaces for its subscription: the live list
    (13534), a role's definition (33534 of one `d`). A connection's outbox sends only the
    newest of those still waiting (outbound.Outbox, SPEC section 10).

    One object is shared by every connection that is sent this event under this subscription
    id (`_event_message`), and its UTF-8 is encoded once for all of them (`encoded`): a client
    that asks for the 10,000-member list again and again, or a hundred clients asking for it,
    hold references to one copy, not a copy per ask."""

    replaces: tuple[str, int, str]
    _encoded: bytes | None = None

    def encoded(self) -> bytes:
        if self._encoded is None:
            self._encoded = self.encode()
        return self._encoded


def _replaces(subscription: str, ev: WireEvent) -> tuple[str, int, str] | None:
    if ev.kind == KIND_MEMBERSHIP_LIST:
        return (subscription, ev.kind, "")
    if ev.kind == KIND_ROLE:
        return (subscription, ev.kind, (ev.tags.get("d") or ("",))[0])
    return None


# The replacing messages some connection still holds, by subscription id and event id: gone
# with the last reference, so what this holds is bounded by what the outboxes hold.
_shared_messages: weakref.WeakValueDictionary[tuple[str, str], ReplacingMessage] = (
    weakref.WeakValueDictionary()
)


def _event_message(subscription: str, ev: WireEvent) -> str:
    replaces = _replaces(subscription, ev)
    if replaces is not None:
        shared = _shared_messages.get((subscription, ev.id))
        if shared is not None:
            return shared
    # The event's text is spliced in as it is: built once, sent to every subscriber.
    text = f'["EVENT",{json.dumps(subscription, ensure_ascii=False)},{ev.text}]'
    if replaces is None:
        return text
    message = ReplacingMessage(text)
    message.replaces = replaces
    _shared_messages[subscription, ev.id] = message
    return message


event_message = _event_message


def _first_tag(event: dict[str, Any], name: str) -> list[str] | None:
    return next((t for t in event["tags"] if t and t[0] == name), None)


class _Subscription:
    """One open REQ: its filters, and what it has been sent (to send nothing twice)."""

    RECENT = 256
    __slots__ = ("_sent", "filters", "pending")

    def __init__(self, filters: Sequence[Filter]) -> None:
        self.filters = tuple(filters)
        # Until its stored events are answered, live events wait here (in order).
        self.pending: list[WireEvent] | None = []
        self._sent: OrderedDict[str, None] = OrderedDict()

    def matches(self, ev: WireEvent) -> bool:
        return any(f.matches(ev) for f in self.filters)

    def first_sending(self, ev: WireEvent) -> bool:
        """True the first time `ev` is sent on this subscription (among its recent events)."""
        if ev.id in self._sent:
            return False
        self._sent[ev.id] = None
        if len(self._sent) > self.RECENT:
            self._sent.popitem(last=False)
        return True


class _Refused(Exception):
    """A request refused with a NIP-01 reason ('prefix: text')."""

    def __init__(self, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.outcome = outcome


class RelaySession:
    """The protocol state of one client connection (see the module docstring)."""

    __slots__ = (
        "_address",
        "_auths",
        "_backend",
        "_clock",
        "_limits",
        "_names",
        "_observer",
        "_profile_writes",
        "_profiles",
        "_signer",
        "_subscriptions",
        "challenge",
        "community",
        "pubkey",
    )

    def __init__(
        self,
        community: Community,
        backend: Backend,
        signer: Signer,
        *,
        limits: Limits = DEFAULT_LIMITS,
        names: RelayNames | None = None,
        address: str | None = None,
        observer: Observer | None = None,
        clock: Callable[[], float] = time.time,
        profiles: bool = True,
    ) -> None:
        self.community = community
        self._backend = backend
        self._signer = signer
        self._limits = limits
        self._address = address  # the client's
        # AUTH attempts: made at the first (most connections never send one).
        self._auths: SlidingWindow | None = None
        # Members' profiles kept and served (kind 0); False with buzz-relay --no-profiles.
        self._profiles = profiles
        self._profile_writes: SlidingWindow | None = None  # made at the first kind 0
        self._observer = observer or Observer()
        self._clock = clock
        # What the relay tag of an AUTH may name (urls.py): by default, the community's host.
        self._names = names or RelayNames(hosts=frozenset({community.host}))
        self.challenge = secrets.token_hex(16)
        self.pubkey: str | None = None  # set by a successful AUTH
        self._subscriptions: dict[str, _Subscription] = {}

    # Invites minted per minter, and failed claims per pubkey and per address: counted in the
    # database, across every connection of every relay process (SPEC section 9).
    @property
    def _invites(self) -> SharedWindow:
        return SharedWindow(self._backend, "invite", self._limits.invites_per_hour, 3600)

    @property
    def _joins_per_address(self) -> SharedWindow:
        return SharedWindow(self._backend, "join_address", self._limits.max_joins, JOIN_SECONDS)

    @property
    def _joins_per_pubkey(self) -> SharedWindow:
        return SharedWindow(
            self._backend, "join_pubkey", self._limits.max_joins_per_pubkey, JOIN_SECONDS
        )

    @property
    def _failed_claims(self) -> SharedWindow:
        return SharedWindow(
            self._backend, "failed_claim", self._limits.max_failed_claims, FAILED_CLAIM_SECONDS
        )

    # ------------------------------------------------------------------ the wire

    def greeting(self) -> list[str]:
        """What the relay sends first on a new connection: the NIP-42 challenge."""
        return [relay_message("AUTH", self.challenge)]

    async def handle(self, text: str | bytes) -> list[str]:
        """The relay messages answering one client message, in order."""
        limit = self._limits.max_message_bytes
        # A character is 1 to 4 bytes: encode only when the length alone does not decide.
        if len(text) > limit or (
            isinstance(text, str) and len(text) * 4 > limit and len(text.encode()) > limit
        ):
            self._observer.request("message", "too_large")
            return [
                relay_message(
                    "NOTICE",
                    f"invalid: message too large (at most {limit} bytes)",
                )
            ]
        msg = parse_message(text)
        if isinstance(msg, MalformedMessage):
            return [self._notice(msg.reason)]
        verb, args = msg[0], msg[1:]
        if verb == "REQ":
            return await self._req(args)
        if verb == "EVENT":
            return await self._event(args)
        if verb == "AUTH":
            return self._auth(args)
        if verb == "CLOSE":
            return self._close(args)
        if verb == "COUNT" and args and type(args[0]) is str:
            self._observer.request("count", "unsupported")
            return [relay_message("CLOSED", args[0], "unsupported: COUNT is not served here")]
        return [self._notice(f"invalid: unknown message type {verb[:16]!r}")]

    def deliver(self, events: Iterable[WireEvent]) -> list[str]:
        """`EVENT` messages for events that just committed, for every subscription they match."""
        return [_event_message(sub_id, ev) for sub_id, ev in self.deliveries(events)]

    def deliveries(self, events: Iterable[WireEvent]) -> list[tuple[str, WireEvent]]:
        """What `deliver` sends, as (subscription id, event): the hub frames each pair once
        for all the sessions that send it (`event_message`)."""
        out: list[tuple[str, WireEvent]] = []
        for ev in events:
            for sub_id, sub in self._subscriptions.items():
                if not sub.matches(ev):
                    continue
                if sub.pending is not None:
                    sub.pending.append(ev)
                elif sub.first_sending(ev):
                    out.append((sub_id, ev))
        return out

    @property
    def subscription_count(self) -> int:
        return len(self._subscriptions)

    @property
    def profiles(self) -> bool:
        """Whether this relay keeps and serves its members' profiles (kind 0)."""
        return self._profiles

    @property
    def relay_pubkey(self) -> str:
        """The relay key's public key: the author of every event this session serves."""
        return self._signer.pubkey

    async def role_of(self, pubkey: str) -> str | None:
        """The base role of `pubkey` in this connection's community, None for a non-member."""
        return await self._backend.role_of(self.community.id, pubkey)

    def _notice(self, text: str) -> str:
        self._observer.request("message", "notice")
        return relay_message("NOTICE", text)

    # ------------------------------------------------------------------ REQ / CLOSE

    async def _req(self, args: list[Any]) -> list[str]:
        if not args or type(args[0]) is not str or not 0 < len(args[0]) <= MAX_SUBSCRIPTION_ID:
            return [self._notice("invalid: REQ needs a subscription id of 1 to 64 characters")]
        sub_id, raw_filters = args[0], args[1:]
        try:
            filters = self._parse_filters(sub_id, raw_filters)
        except _Refused as refused:
            self._subscriptions.pop(sub_id, None)
            self._observer.request("req", refused.outcome)
            return [relay_message("CLOSED", sub_id, refused.reason)]
        # NIP-01: a REQ with an open subscription's id replaces it.
        sub = self._subscriptions[sub_id] = _Subscription(filters)
        try:
            out = await self._invite_answer(sub_id, filters)
            async with _stored_reads():
                out += await self._stored_answer(sub_id, sub)
        except _Refused as refused:
            self._subscriptions.pop(sub_id, None)
            self._observer.request("req", refused.outcome)
            return [relay_message("CLOSED", sub_id, refused.reason)]
        except BuzzError:
            self._subscriptions.pop(sub_id, None)
            self._observer.request("req", "error")
            return [
                relay_message("CLOSED", sub_id, "error: the database did not answer; try again")
            ]
        out.append(relay_message("EOSE", sub_id))
        # Live events that committed while the stored ones were read, now in order.
        pending, sub.pending = sub.pending or [], None
        out += [_event_message(sub_id, ev) for ev in pending if sub.first_sending(ev)]
        self._observer.request("req", "ok")
        return out

    def _parse_filters(self, sub_id: str, raw: list[Any]) -> list[Filter]:
        if sub_id not in self._subscriptions and (
            len(self._subscriptions) >= self._limits.max_subscriptions
        ):
            raise _Refused(
                "rate-limited: too many open subscriptions"
                f" (at most {self._limits.max_subscriptions}); CLOSE one first",
                "too_many_subscriptions",
            )
        if len(raw) > self._limits.max_filters:
            raise _Refused(
                f"invalid: at most {self._limits.max_filters} filters per REQ", "too_many_filters"
            )
        try:
            filters = [parse_filter(f) for f in raw]
        except InvalidFilter as exc:
            raise _Refused(f"{exc.prefix}: {exc}", "invalid_filter") from None
        asked = _STORED_KINDS[self._profiles] | {KIND_INVITE}
        for f in filters:
            if f.kinds is not None and not f.kinds <= asked:
                other = min(f.kinds - asked)
                raise _Refused(
                    f"unsupported: kind {other} is not served here; this relay serves kinds"
                    " 13534, 8000, 8001, 33534 and 5 (its deletions of role definitions),"
                    + (" 0 (its members' profiles)," if self._profiles else "")
                    + " and 28935 on request",
                    "unsupported_kind",
                )
        return filters

    async def _stored_answer(self, sub_id: str, sub: _Subscription) -> list[str]:
        """The stored events that the filters select, newest first, `limit` per filter."""
        stored = _STORED_KINDS[self._profiles]
        filters = [f for f in sub.filters if f.kinds is None or f.kinds & stored]
        if not filters:
            return []
        candidates: list[WireEvent] = []
        if any(f.wants_kind(KIND_MEMBERSHIP_LIST) for f in filters):
            live = await self._backend.live_list(self.community.id)
            if live is not None:
                candidates.append(live)
        # The 8000/8001 events: each filter selected and limited in the database, so that a
        # REQ costs what it answers, however many are stored (SPEC section 10).
        for f in filters:
            selection = self._user_event_selection(f)
            if selection is not None:
                candidates += await self._backend.membership_events_matching(
                    self.community.id, **selection, limit=self._limit_of(f)
                )
        # The members' profiles: each filter selected and limited in the database too.
        if self._profiles:
            for f in filters:
                if f.wants_kind(KIND_PROFILE) and not f.tags:  # a profile has no tag to match
                    candidates += await self._backend.member_profiles(
                        self.community.id,
                        authors=None if f.authors is None else sorted(f.authors),
                        since=f.since,
                        until=f.until,
                        limit=self._limit_of(f),
                        ids=None if f.ids is None else sorted(f.ids),
                    )
        # Read after the list: a role the list names is among them (or, deleted since, its
        # kind 5 is), never missing while the list names it.
        definitions = any(f.wants_kind(KIND_ROLE) for f in filters)
        deletions = any(f.wants_kind(KIND_DELETION) for f in filters)
        if definitions or deletions:
            role_filters = [
                f for f in filters if f.wants_kind(KIND_ROLE) or f.wants_kind(KIND_DELETION)
            ]
            since = min(f.since or 0 for f in role_filters)
            candidates += await self._backend.role_events(
                self.community.id, since, definitions=definitions, deletions=deletions
            )
        # Newest first, each once (two filters may select the same event).
        candidates = list({ev.id: ev for ev in candidates}.values())
        candidates.sort(key=lambda ev: ev.created_at, reverse=True)
        chosen: dict[str, WireEvent] = {}
        for f in filters:
            limit = self._limit_of(f)
            picked = 0
            for ev in candidates:
                if picked >= limit:
                    break
                if f.matches(ev):
                    chosen.setdefault(ev.id, ev)
                    picked += 1
        ordered = sorted(chosen.values(), key=lambda ev: ev.created_at, reverse=True)
        return [_event_message(sub_id, ev) for ev in ordered if sub.first_sending(ev)]

    def _limit_of(self, f: Filter) -> int:
        return min(self._limits.max_limit, f.limit if f.limit is not None else 1 << 62)

    def _user_event_selection(self, f: Filter) -> dict[str, Any] | None:
        """What of the 8000/8001 events `f` selects, as membership_events_matching's
        arguments; None when it can select none of them."""
        kinds = [k for k in (KIND_ADD_USER, KIND_REMOVE_USER) if f.wants_kind(k)]
        if not kinds or (f.authors is not None and self.relay_pubkey not in f.authors):
            return None
        members = None
        for letter, wanted in f.tags:
            if letter != "p":  # their only tag a filter can name is p (the member)
                return None
            members = sorted(wanted)
        return {
            "kinds": kinds,
            "ids": None if f.ids is None else sorted(f.ids),
            "members": members,
            "since": f.since,
            "until": f.until,
        }

    async def _invite_answer(self, sub_id: str, filters: Sequence[Filter]) -> list[str]:
        """For a REQ that names kind 28935: mint a one-use invite and answer it, signed.

        Only when the invite would match one of those filters (authors, #p, since, until,
        limit): an invite the client's filter drops would be minted for nothing.
        """
        asking = [f for f in filters if f.kinds is not None and KIND_INVITE in f.kinds]
        if not asking:
            return []
        requester = self.pubkey
        if requester is None:
            raise _Refused("auth-required: AUTH as a member to request an invite", "auth_required")
        now = int(self._clock())
        # The invite to be, but for its id (unknown until signed: a filter with ids skips it).
        prospect = WireEvent("", self._signer.pubkey, KIND_INVITE, now, "", {"p": (requester,)})
        if not any(f.ids is None and f.limit != 0 and f.matches(prospect) for f in asking):
            return []
        # How many a member may mint is the database's to say (invites_left: the owner always,
        # admins and members by the community's quotas); a non-member is refused before any write.
        if await self._backend.role_of(self.community.id, requester) is None:
            raise _Refused(answer("members_only_invites"), "restricted")
        if not await self._counted(self._invites.allow(f"{self.community.id}/{requester}")):
            raise _Refused(
                answer("invites_limited", per_hour=self._limits.invites_per_hour), "rate_limited"
            )
        started = time.perf_counter()
        try:
            code, expiration = await self._backend.mint_invite(
                self.community.id, requester, INVITE_TTL_SECONDS
            )
        except CommunityArchived:
            raise _Refused(answer("archived"), "archived") from None
        except InviteQuotaExhausted:
            raise _Refused(answer("no_invites_left"), "no_invites_left") from None
        self._observer.write("invite", "minted", time.perf_counter() - started)
        invite = self._signer.invite(code, requester, expiration, now)
        text = json.dumps(invite, separators=(",", ":"), ensure_ascii=False)
        return [f'["EVENT",{json.dumps(sub_id, ensure_ascii=False)},{text}]']

    def _close(self, args: list[Any]) -> list[str]:
        if not args or type(args[0]) is not str:
            return [self._notice("invalid: CLOSE needs a subscription id")]
        self._subscriptions.pop(args[0], None)
        self._observer.request("close", "ok")
        return []

    # ------------------------------------------------------------------ AUTH

    def _auth(self, args: list[Any]) -> list[str]:
        event = args[0] if args else None
        if type(event) is not dict or type(event.get("id")) is not str:
            return [self._notice("invalid: AUTH needs a signed kind 22242 event")]
        try:
            self._check_auth(event)
        except _Refused as refused:
            self._observer.request("auth", refused.outcome)
            return [relay_message("OK", event["id"], False, refused.reason)]
        self.pubkey = event["pubkey"]
        self._observer.request("auth", "ok")
        return [relay_message("OK", event["id"], True, "")]

    def _check_auth(self, event: dict[str, Any]) -> None:
        if self._auths is None:
            self._auths = SlidingWindow(self._limits.auth_per_minute, 60)
        if not self._auths.allow():
            raise _Refused("rate-limited: too many AUTH attempts; wait a minute", "rate_limited")
        if not verify_event(event):
            raise _Refused("invalid: bad event id or signature", "invalid")
        if event["kind"] != KIND_AUTH:
            raise _Refused(f"invalid: AUTH takes a kind {KIND_AUTH} event", "invalid")
        self._require_fresh(event)
        challenge = _first_tag(event, "challenge")
        if challenge is None or challenge[1:2] != [self.challenge]:
            raise _Refused("invalid: the challenge tag is not this connection's", "bad_challenge")
        relay = _first_tag(event, "relay")
        if relay is None or len(relay) < 2 or not self._names.name_this_relay(relay[1]):
            raise _Refused("invalid: the relay tag does not name this relay", "bad_relay")

    def _require_fresh(self, event: dict[str, Any]) -> None:
        if abs(event["created_at"] - self._clock()) > FRESH_SECONDS:
            raise _Refused("invalid: created_at must be within 10 minutes of now", "stale")

    # ------------------------------------------------------------------ EVENT

    async def _event(self, args: list[Any]) -> list[str]:
        event = args[0] if args else None
        if type(event) is not dict or type(event.get("id")) is not str:
            return [self._notice("invalid: EVENT needs an event object")]
        event_id = event["id"]
        try:
            kind, ok, reason = await self._event_answer(event)
        except _Refused as refused:
            kind = event.get("kind") if type(event.get("kind")) is int else None
            self._observer.request(_REQUEST_NAMES.get(kind, "event"), refused.outcome)
            return [relay_message("OK", event_id, False, refused.reason)]
        self._observer.request(_REQUEST_NAMES[kind], "ok" if ok else "refused")
        return [relay_message("OK", event_id, ok, reason)]

    async def _event_answer(self, event: dict[str, Any]) -> tuple[int, bool, str]:
        if not verify_event(event):
            raise _Refused("invalid: bad event id or signature", "invalid")
        kind = event["kind"]
        if kind in RELAY_KINDS:
            raise _Refused(f"blocked: only the relay publishes kind {kind}", "blocked")
        if kind == KIND_JOIN_REQUEST:
            return kind, *await self._join(event)
        if kind == KIND_LEAVE_REQUEST:
            return kind, *await self._leave(event)
        if kind == KIND_PROFILE and self._profiles:
            return kind, *await self._profile(event)
        raise _Refused(
            "blocked: this relay takes only membership requests (kinds 28934 and 28936)"
            + (" and its members' own profiles (kind 0)" if self._profiles else ""),
            "blocked",
        )

    def _require_author(self, event: dict[str, Any]) -> None:
        # NIP-70: an event with the "-" tag is accepted only from its AUTHed author.
        if self.pubkey != event["pubkey"]:
            raise _Refused(
                "auth-required: this event may only be published by its author; AUTH first",
                "auth_required",
            )

    async def _join(self, event: dict[str, Any]) -> tuple[bool, str]:
        claim = _first_tag(event, "claim")
        # ["claim", ""] (or a bare ["claim"]) is a join without a claim, as clients send it.
        code = claim[1] if claim is not None and len(claim) > 1 else ""
        if len(code) > MAX_CLAIM:
            raise _Refused(answer("too_long", max=MAX_CLAIM), "invalid")
        self._require_fresh(event)
        if _first_tag(event, "-") is not None:
            self._require_author(event)
        # Joins that succeed are bounded per address and per pubkey (SPEC section 10): a flood
        # of fresh keys from one address, or one key joining again and again, is refused
        # before it costs a list.
        windows = [(self._joins_per_pubkey, f"pubkey:{event['pubkey']}")]
        if self._address is not None:
            windows.append((self._joins_per_address, f"address:{self._address}"))
        for window, key in windows:
            if await self._counted(window.reached(key)):
                raise _Refused(answer("joins_limited"), "rate_limited")
        word = await (self._claim(event, code) if code else self._request(event))
        if word in _COUNTED_JOINS:
            for window, key in windows:
                await self._counted(window.allow(key))
        return self._answer(word)

    async def _claim(self, event: dict[str, Any], code: str) -> str | None:
        """The word of the claim's answer (None: an outcome the relay does not know)."""
        pubkey = event["pubkey"]
        counted = [f"pubkey:{pubkey}"]
        if self._address is not None:
            counted.append(f"address:{self._address}")
        if await self._counted(self._failed_claims.reached(*counted)):
            raise _Refused(answer("failed_claims"), "rate_limited")
        outcome = await self._write(
            "join", self._backend.claim_invite(self.community.id, code, pubkey)
        )
        if outcome in _FAILED_CLAIMS:
            await self._counted(self._failed_claims.allow(*counted))
        return _CLAIM_ANSWERS.get(outcome)

    async def _request(self, event: dict[str, Any]) -> str | None:
        """A join without a claim: the community's join policy answers (request_membership)."""
        note = _NOTE_REFUSED.sub("", event["content"]).strip()[:MAX_NOTE] or None
        outcome = await self._write(
            "request_membership",
            self._backend.request_membership(self.community.id, event["pubkey"], event["id"], note),
        )
        return _REQUEST_ANSWERS.get(outcome)

    async def _leave(self, event: dict[str, Any]) -> tuple[bool, str]:
        # AUTH as the author, asked whatever the tags: a stronger proof than NIP-70's "-",
        # which some clients' leave requests do not carry.
        self._require_fresh(event)
        self._require_author(event)
        outcome = await self._write(
            "leave", self._backend.remove_relay_member(self.community.id, event["pubkey"])
        )
        return self._answer(_LEAVE_ANSWERS.get(outcome))

    async def keep_profile(self, event: dict[str, Any]) -> tuple[bool, str]:
        """A member's own kind 0, its signature verified by the caller: kept while they are a
        member (SPEC section 8). OK's accepted and message (the gate keeps what it sends on)."""
        try:
            return await self._profile(event)
        except _Refused as refused:
            return False, refused.reason

    async def _profile(self, event: dict[str, Any]) -> tuple[bool, str]:
        self._require_author(event)
        text = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
        if len(text.encode()) > MAX_PROFILE_BYTES:
            raise _Refused(
                f"invalid: a profile is at most {MAX_PROFILE_BYTES} bytes as JSON", "too_large"
            )
        if self._profile_writes is None:
            self._profile_writes = SlidingWindow(PROFILES_PER_MINUTE, 60)
        if not self._profile_writes.allow():
            raise _Refused("rate-limited: too many profiles; wait a minute", "rate_limited")
        outcome = await self._write(
            "profile", self._backend.set_member_profile(self.community.id, text)
        )
        if outcome == "stored":
            return True, ""
        if outcome == "older":
            return True, "duplicate: a newer profile of yours is kept here"
        if outcome == "not_member":
            return False, "restricted: this relay keeps only its members' profiles"
        return _UNEXPECTED

    def _answer(self, word: str | None) -> tuple[bool, str]:
        """OK's accepted and message for an answer's word (answers.json; "": OK true with
        nothing to say; None: an outcome the relay does not know)."""
        if word is None:
            return _UNEXPECTED
        if not word:
            return True, ""
        return word in _ACCEPTED, answer(word, host=self.community.host)

    async def _counted(self, call: Awaitable[bool]) -> bool:
        """Await a shared window's answer; a database that does not answer as a refusal."""
        try:
            return await call
        except BuzzError:
            raise _Refused("error: the database could not be reached; try again", "error") from None

    async def _write(self, kind: str, call: Any) -> str:
        """Await a membership write; its failures as NIP-01 refusals; a line of the log."""
        started = time.perf_counter()
        try:
            outcome = await self._written(call)
        except _Refused as refused:
            self._log_write(kind, refused.outcome, started)
            raise
        self._log_write(kind, outcome, started)
        self._observer.write(kind, outcome, time.perf_counter() - started)
        return outcome

    def _log_write(self, kind: str, outcome: str, started: float) -> None:
        log.info(
            "%s: %s", kind, outcome,
            extra={"community": self.community.host, "address": self._address,
                   "ms": round((time.perf_counter() - started) * 1000, 1)},
        )  # fmt: skip

    async def _written(self, call: Any) -> str:
        try:
            return await call
        except CommunityArchived:
            raise _Refused(answer("archived"), "archived") from None
        except ListTooFarAhead:
            raise _Refused(
                "error: too many membership changes right now; try again in a minute", "lagging"
            ) from None
        except InvalidArgument:
            raise _Refused("invalid: the database refused an argument", "invalid") from None
        except RelayKeyMismatch:
            raise _Refused(RETIRED, "retired_key") from None
        except BuzzError:
            raise _Refused("error: the database could not record it; try again", "error") from None

    def subscription_ids(self) -> list[str]:
        """The ids of the connection's open subscriptions."""
        return list(self._subscriptions)


_REQUEST_NAMES = {KIND_JOIN_REQUEST: "join", KIND_LEAVE_REQUEST: "leave", KIND_PROFILE: "profile"}
# The stored kinds a REQ reads, by whether the relay keeps its members' profiles.
_STORED_KINDS = {True: SERVED_KINDS | {KIND_PROFILE}, False: SERVED_KINDS}
_UNEXPECTED = (False, "error: the database gave an unexpected answer")
# OK's accepted is true for these words alone (answers.json).
_ACCEPTED = frozenset(("welcome", "already_member"))
# The joins that count against the join windows: a member more, or a request kept.
_COUNTED_JOINS = frozenset(("welcome", "pending"))
# The database's outcome of each request, by the word of its answer.
_CLAIM_ANSWERS = {
    "joined": "welcome",
    "already_member": "already_member",
    "expired": "expired",
    "invalid": "invalid",
    "exhausted": "used_up",
    "banned": "banned",
}
# The claims a guesser makes: counted per address and per pubkey (Limits.max_failed_claims).
_FAILED_CLAIMS = frozenset(("expired", "invalid", "exhausted"))
_REQUEST_ANSWERS = {
    "joined": "welcome",
    "already_member": "already_member",
    "banned": "banned",
    "closed": "closed",
    "requested": "pending",
    "already_requested": "pending",
    "rejected": "declined",
}
_LEAVE_ANSWERS = {"removed": "", "not_member": "not_member", "is_owner": "is_owner"}
