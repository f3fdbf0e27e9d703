"""The relay's database side: the SQL API on a pool of AsyncConnections.

Writes go through AsyncMembership (one transaction each, ending with the signed list);
reads ask the API's read functions for the events as their JSON text, which is sent as the
database returns it. The fields a filter matches come from the text's header (SPEC §3 fixes
the compact form and the key order), so a 10,000-member list is never parsed, here or there.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ..errors import (
    BuzzError,
    DatabaseFailure,
    DatabaseUnreachable,
    RelayKeyMismatch,
    from_psycopg,
    translated,
)
from ..keys import RelayKey
from ..membership import (
    AsyncMembership,
    AsyncMembershipTransaction,
    Ban,
    CommunityProfile,
    InviteRecord,
    JoinRequest,
    Member,
)
from ..nostr import KIND_REMOVE_USER
from .filters import WireEvent
from .identity import RelayIdentity
from .joins import Join, JoinGroups
from .outage import Outage, unreachable
from .protocol import Community

log = logging.getLogger("buzz_relay")
T = TypeVar("T")

# How long a new pool may take to connect once an outage has ended.
PROBE_POOL_SECONDS = 5.0

# The start of every event the API returns: {"id":..,"pubkey":..,"created_at":..,"kind":..,
_HEADER = re.compile(
    r'\{"id":"([0-9a-f]{64})","pubkey":"([0-9a-f]{64})","created_at":(\d+),"kind":(\d+),'
)


_TAG_LETTERS = ("p", "d", "a", "k")


def _wire(row: Sequence[Any]) -> WireEvent:
    text, *letters = row
    header = _HEADER.match(text)
    if header is None:
        raise RuntimeError(
            f"the database returned an event not in NIP-01's compact form: {text[:80]!r}"
        )
    id_, pubkey, created_at, kind = header.groups()
    tags = {name: (value,) for name, value in zip(_TAG_LETTERS, letters) if value is not None}
    return WireEvent(id_, pubkey, int(kind), int(created_at), text, tags)


class _RolledBack(Exception):
    """Raised inside a transaction to roll it back; `outcome` is what the caller answers."""

    def __init__(self, outcome: str) -> None:
        super().__init__(outcome)
        self.outcome = outcome


async def _join(tx: AsyncMembershipTransaction, community: uuid.UUID, join: Join) -> str:
    if join.code is not None:
        return (await tx.claim_relay_invite(community, join.code, join.pubkey))["outcome"]
    assert join.request_id is not None
    return await tx.request_membership(community, join.pubkey, join.request_id, join.note)


class DatabaseBackend:
    """protocol.Backend over the SQL API, and the look-ups the server needs.

    Every request takes its connection through `_connection`: while the database is known to
    be down (outage.py) that fails at once with DatabaseUnreachable, and a failure that says
    the database cannot be reached starts the watch for an outage. `new_pool` makes the pool
    again once an outage ends (None: the pool is only checked)."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        key: RelayKey,
        *,
        identity: RelayIdentity | None = None,
        new_pool: Callable[[], AsyncConnectionPool] | None = None,
    ) -> None:
        self.pool = pool
        self._new_pool = new_pool
        self.outage = Outage(pool.conninfo, self._reopen)
        # The key lists are signed with (SIGHUP may load another), and the database's.
        self.identity = identity if identity is not None else RelayIdentity(key)
        self._checking_key: asyncio.Task[None] | None = None
        # Told the SQLSTATE of each error _report logs (server.py: a counter of /metrics).
        self.on_database_error: Callable[[str], None] = lambda sqlstate: None
        self._closing: set[asyncio.Task[None]] = set()  # old pools closing after an outage
        # Joins to one community arriving while a group of them is written go in the next
        # group: one transaction, one list (joins.py).
        self._joins = JoinGroups(self._write_joins)

    @contextlib.asynccontextmanager
    async def _connection(self, timeout: float | None = None) -> AsyncIterator[AsyncConnection]:
        if self.outage.down:
            raise DatabaseUnreachable("the database does not answer")
        try:
            async with self.pool.connection(timeout) as conn:
                yield conn
        except PoolTimeout as exc:
            self.outage.suspect(exc)
            raise DatabaseUnreachable("no database connection came free in time") from exc
        except (psycopg.Error, BuzzError) as exc:
            if unreachable(exc):
                self.outage.suspect(exc)
            else:
                self._report(exc)
            raise

    def _report(self, exc: psycopg.Error | BuzzError) -> None:
        """An error that is neither an outcome the API documents nor the caller's input
        (SPEC section 10): logged with its SQLSTATE and message, counted by SQLSTATE."""
        error = from_psycopg(exc) if isinstance(exc, psycopg.Error) else exc
        if type(error) is not DatabaseFailure or error.sqlstate is None:
            return
        log.warning("the database refused a request: SQLSTATE %s: %s", error.sqlstate, error)
        self.on_database_error(error.sqlstate)

    async def _reopen(self) -> None:
        """After an outage: a new pool (the old one may be waiting out its back-off)."""
        if self._new_pool is None:
            await self.pool.check()
            return
        pool = self._new_pool()
        try:
            await pool.open(wait=True, timeout=PROBE_POOL_SECONDS)
        except BaseException:
            await pool.close()
            raise
        old, self.pool = self.pool, pool
        # Connections still out of the old pool are closed as they come back.
        self._closing.add(asyncio.create_task(old.close()))
        self._closing = {t for t in self._closing if not t.done()}

    async def close(self) -> None:
        await self.outage.close()
        await self.pool.close()
        await asyncio.gather(*self._closing, return_exceptions=True)

    async def _api(
        self, call: Callable[[AsyncMembership], Awaitable[T]], timeout: float | None = None
    ) -> T:
        """One call of the SQL API (buzz_signer.membership) on a pooled connection. A write the
        database refuses for our key (BZKEY: a rotation committed) has the key read again."""
        try:
            async with self._connection(timeout) as conn:
                return await call(AsyncMembership(conn, self.identity.key))
        except RelayKeyMismatch:
            self.recheck_key()
            raise

    async def events_since(
        self,
        community: uuid.UUID,
        since: int,
        *,
        with_list: bool = True,
        with_events: bool = True,
        with_definitions: bool = True,
        with_deletions: bool = True,
    ) -> list[WireEvent]:
        """In one snapshot: the live list, the 8000/8001 events (oldest first), and the live
        role definitions (33534) and role deletions (kind 5) with created_at >= since."""
        rows = await self._api(
            lambda m: m.events_text_since(
                community,
                since,
                with_list=with_list,
                with_events=with_events,
                with_definitions=with_definitions,
                with_deletions=with_deletions,
            )
        )
        return [_wire(r) for r in rows]

    async def _only(self, community: uuid.UUID, since: int, wanted: str) -> list[WireEvent]:
        """events_since for one part only (`wanted`: with_list, with_events, ...)."""
        names = ("with_list", "with_events", "with_definitions", "with_deletions")
        return await self.events_since(community, since, **{n: n == wanted for n in names})

    async def live_list(self, community: uuid.UUID) -> WireEvent | None:
        events = await self._only(community, 0, "with_list")
        return events[0] if events else None

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
    ) -> list[WireEvent]:
        """The 8000/8001 events of one REQ filter, newest first, `limit` of them, selected and
        limited in the database (buzz.membership_events_newest: by an index, never a scan)."""
        rows = await self._api(
            lambda m: m.membership_events_newest_text(
                community, kinds, ids, members, since, until, limit
            )
        )
        return [_wire(r) for r in rows]

    async def role_events(
        self, community: uuid.UUID, since: int, *, definitions: bool, deletions: bool
    ) -> list[WireEvent]:
        """The live role definitions (33534) and the role deletions (kind 5) with created_at
        >= since, each by role id, in one snapshot."""
        return await self.events_since(
            community,
            since,
            with_list=False,
            with_events=False,
            with_definitions=definitions,
            with_deletions=deletions,
        )

    async def role_of(self, community: uuid.UUID, pubkey: str) -> str | None:
        member = await self._api(lambda m: m.relay_member(community, pubkey))
        return member.role if member is not None else None

    # Members' own profiles (kind 0, SPEC section 8) -------------------------------------

    async def set_member_profile(self, community: uuid.UUID, event_text: str) -> str:
        """Keep a member's kind 0 (NIP-01 JSON text): 'stored', 'not_member' or 'older'."""
        return await self._api(lambda m: m.set_member_profile(community, event_text))

    async def member_profiles(
        self,
        community: uuid.UUID,
        *,
        authors: Sequence[str] | None,
        since: int | None,
        until: int | None,
        limit: int,
        ids: Sequence[str] | None = None,
    ) -> list[WireEvent]:
        """The current members' profiles that one REQ filter selects, newest first."""
        texts = await self._api(
            lambda m: m.member_profiles(community, authors, since, until, limit, ids)
        )
        return [_wire((text,)) for text in texts]

    # What every relay process of the database shares (SPEC section 9) -----------------

    async def take_rate(self, scope: str, keys: Sequence[str], limit: int, seconds: int) -> bool:
        return await self._api(lambda m: m.take_rate(scope, keys, limit, seconds))

    async def rate_reached(self, scope: str, keys: Sequence[str], limit: int, seconds: int) -> bool:
        return await self._api(lambda m: m.rate_reached(scope, keys, limit, seconds))

    async def accept_auth_event(self, event_id: str, fresh_until: int) -> bool:
        until = dt.datetime.fromtimestamp(fresh_until, dt.UTC)
        return await self._api(lambda m: m.accept_auth_event(event_id, until))

    def recheck_key(self) -> None:
        """Read the database's key again (after a BZKEY, a rotation's NOTIFY, the LISTEN
        connection's return), one read at a time."""
        if self._checking_key is None or self._checking_key.done():
            self._checking_key = asyncio.create_task(self.check_key())

    async def check_key(self) -> None:
        """Compare the database's relay key with this process's (identity.py); a database
        that does not answer is checked again when it does."""
        try:
            recorded = await self._api(lambda m: m.relay_key())
        except BuzzError:
            return
        self.identity.heard(recorded)

    async def mint_invite(
        self, community: uuid.UUID, requester: str, ttl_seconds: int
    ) -> tuple[str, int]:
        invite = await self._api(
            lambda m: m.create_relay_invite(
                community, requester, 1, dt.timedelta(seconds=ttl_seconds)
            )
        )
        return invite.code, int(invite.expires_at.timestamp())

    async def claim_invite(self, community: uuid.UUID, code: str, pubkey: str) -> str:
        return await self._joins.write(community, Join(pubkey, code=code))

    def joins_waiting(self) -> int:
        """Joins waiting for the group written before theirs (a gauge of /metrics)."""
        return self._joins.waiting()

    async def _write_joins(
        self, community: uuid.UUID, joins: Sequence[Join]
    ) -> tuple[list[str | BaseException], int | None]:
        """A group of joins in one transaction, each under a savepoint (a refused one spoils
        no other), then the one list and COMMIT (joins.py); the list's created_at."""
        outcomes: list[str | BaseException] = []
        try:
            with translated():
                async with (
                    self._connection() as conn,
                    AsyncMembership(conn, self.identity.key).transaction() as tx,
                ):
                    for join in joins:
                        try:
                            with translated():
                                async with conn.transaction():  # SAVEPOINT
                                    outcomes.append(await _join(tx, community, join))
                        except BuzzError as exc:
                            self._report(exc)
                            outcomes.append(exc)
        except RelayKeyMismatch:
            self.recheck_key()
            raise
        listed = tx.published.snapshot if tx.published is not None else None
        return outcomes, None if listed is None else listed["created_at"]

    async def remove_relay_member(
        self, community: uuid.UUID, pubkey: str, *, spare_admins: bool = False
    ) -> str:
        write = await self._api(
            lambda m: m.remove_relay_member(community, pubkey, spare_admins=spare_admins)
        )
        return write.outcome

    # For NIP-86 management (management.py) ------------------------------------------

    async def add_relay_member(self, community: uuid.UUID, pubkey: str, by: str) -> str:
        write = await self._api(
            lambda m: m.add_relay_member(community, pubkey, "member", by)
        )
        return write.outcome

    async def relay_members(self, community: uuid.UUID) -> list[Member]:
        return await self._api(lambda m: m.relay_members(community))

    async def relay_invites(self, community: uuid.UUID) -> list[InviteRecord]:
        return await self._api(lambda m: m.relay_invites(community))

    async def create_relay_invite(
        self,
        community: uuid.UUID,
        requester: str,
        max_uses: int | None,
        ttl_seconds: int,
        *,
        code: str | None = None,
        sealed: str | None = None,
    ) -> tuple[uuid.UUID, str, int]:
        """An invite with a drawn code, or with `code` (and `sealed`, kept with it)."""
        invite = await self._api(
            lambda m: m.create_relay_invite(
                community, requester, max_uses, dt.timedelta(seconds=ttl_seconds), code, sealed
            )
        )
        return invite.invite_id, invite.code, int(invite.expires_at.timestamp())

    async def revoke_relay_invite(self, community: uuid.UUID, invite_id: uuid.UUID) -> str:
        return await self._api(lambda m: m.revoke_relay_invite(community, invite_id))

    async def update_relay_member_role(self, community: uuid.UUID, pubkey: str, role: str) -> str:
        """A member's base role, admin or member: update_relay_member_role's outcome."""
        write = await self._api(
            lambda m: m.update_relay_member_role(community, pubkey, role)
        )
        return write.outcome

    async def define_role(
        self,
        community: uuid.UUID,
        role: str,
        label: str,
        description: str | None,
        color: int | None,
        order: int | None,
        *,
        exists: bool | None = None,
    ) -> str:
        """define_role, in a transaction that commits only when the role existed before or
        not as `exists` asks (None: either way).

        Its outcome ('defined', 'updated', 'unchanged'), or, rolled back with nothing
        changed: 'exists' (the role was defined already and `exists` is False) or
        'not_found' (it was not, and `exists` is True). The outcome itself tells whether the
        role was there, in the same transaction, so no concurrent call slips in between.
        """

        async def define(m: AsyncMembership) -> str:
            try:
                async with m.transaction() as tx:
                    outcome = await tx.define_role(
                        community, role, label, description, color, order
                    )
                    if exists is False and outcome != "defined":
                        raise _RolledBack("exists")
                    if exists is True and outcome == "defined":
                        raise _RolledBack("not_found")
            except _RolledBack as undone:
                return undone.outcome
            return outcome

        return await self._api(define)

    async def delete_role(self, community: uuid.UUID, role: str) -> str:
        write = await self._api(lambda m: m.delete_role(community, role))
        return write.outcome

    async def assign_role(self, community: uuid.UUID, pubkey: str, role: str) -> str:
        write = await self._api(lambda m: m.assign_role(community, pubkey, role))
        return write.outcome

    async def unassign_role(self, community: uuid.UUID, pubkey: str, role: str) -> str:
        write = await self._api(lambda m: m.unassign_role(community, pubkey, role))
        return write.outcome

    async def role_definitions(self, community: uuid.UUID) -> list[dict[str, Any]]:
        """The live signed 33534 events, by role id."""
        return await self._api(lambda m: m.role_definitions(community))

    # The community's profile, bans and join requests (SPEC §3) --------------------

    async def community_profile(self, community: uuid.UUID) -> CommunityProfile | None:
        return await self._api(lambda m: m.community_profile(community))

    async def set_community_profile(self, community: uuid.UUID, field: str, value: str | None) -> str:
        return await self._api(lambda m: m.set_community_profile(community, field, value))

    async def set_join_policy(self, community: uuid.UUID, policy: str) -> str:
        return await self._api(lambda m: m.set_join_policy(community, policy))

    async def request_membership(
        self, community: uuid.UUID, pubkey: str, request_id: str, note: str | None
    ) -> str:
        return await self._joins.write(
            community, Join(pubkey, request_id=request_id, note=note)
        )

    async def ban_pubkey(
        self,
        community: uuid.UUID,
        pubkey: str,
        reason: str | None,
        by: str | None,
        *,
        spare_admins: bool = False,
    ) -> str:
        write = await self._api(
            lambda m: m.ban_pubkey(community, pubkey, reason, by, spare_admins=spare_admins)
        )
        return write.outcome

    async def unban_pubkey(self, community: uuid.UUID, pubkey: str) -> str:
        return await self._api(lambda m: m.unban_pubkey(community, pubkey))

    async def banned_pubkeys(self, community: uuid.UUID) -> list[Ban]:
        return await self._api(lambda m: m.banned_pubkeys(community))

    async def join_requests(self, community: uuid.UUID) -> list[JoinRequest]:
        return await self._api(lambda m: m.join_requests(community))

    async def approve_join_request(self, community: uuid.UUID, request_id: str, by: str) -> str:
        write = await self._api(lambda m: m.approve_join_request(community, request_id, by))
        return write.outcome

    async def reject_join_request(
        self, community: uuid.UUID, request_id: str, reason: str | None
    ) -> str:
        return await self._api(
            lambda m: m.reject_join_request(community, request_id, reason)
        )

    # Invitations: quotas and branches (SPEC §3) -----------------------------------

    async def remove_branch(
        self, community: uuid.UUID, pubkey: str, *, spare_admins: bool = False
    ) -> tuple[str, int]:
        """The member and everyone they brought in, recursively, in one transaction:
        remove_relay_member's outcome and how many went (one 8001 each)."""
        write = await self._api(
            lambda m: m.remove_relay_member(
                community, pubkey, with_branch=True, spare_admins=spare_admins
            )
        )
        return write.outcome, sum(1 for ev in write.events if ev["kind"] == KIND_REMOVE_USER)

    async def set_invite_quota(self, community: uuid.UUID, role: str, quota: int | None) -> str:
        return await self._api(lambda m: m.set_invite_quota(community, role, quota))

    async def invite_quotas(self, community: uuid.UUID) -> dict[str, int | None]:
        return await self._api(lambda m: m.invite_quotas(community))

    async def invites_left(self, community: uuid.UUID, pubkey: str) -> int | None:
        return await self._api(lambda m: m.invites_left(community, pubkey))

    async def invite_tree(
        self, community: uuid.UUID
    ) -> list[tuple[str, str, str | None, int | None]]:
        """Every member as (pubkey, base role, added_by, invites left), by pubkey, in one
        snapshot: who brought whom in, and how many more each may."""
        return await self._api(lambda m: m.members_with_invites_left(community))

    # Moderation behind the gate (moderation.py, management.py) --------------------

    async def moderation_rules(
        self, community: uuid.UUID | None
    ) -> list[tuple[uuid.UUID, str, str]]:
        """(community, rule, subject) of one community's rules, or of all of them (None)."""
        return await self._api(lambda m: m.moderation_rules(community))

    async def ban_event(
        self, community: uuid.UUID, event_id: str, reason: str | None, by: str | None
    ) -> str:
        return await self._api(lambda m: m.ban_event(community, event_id, reason, by))

    async def unban_event(self, community: uuid.UUID, event_id: str) -> str:
        return await self._api(lambda m: m.unban_event(community, event_id))

    async def banned_events(self, community: uuid.UUID) -> list[tuple[str, str | None]]:
        """(event id, reason), by event id."""
        return await self._api(lambda m: m.banned_events(community))

    async def set_kind_rule(self, community: uuid.UUID, kind: int, allowed: bool | None) -> str:
        """allow_kind (True), disallow_kind (False) or clear_kind_rule (None)."""
        if allowed is None:
            return await self._api(lambda m: m.clear_kind_rule(community, kind))
        if allowed:
            return await self._api(lambda m: m.allow_kind(community, kind))
        return await self._api(lambda m: m.disallow_kind(community, kind))

    async def kind_rules(self, community: uuid.UUID) -> list[tuple[int, bool]]:
        """(kind, allowed), by kind."""
        return await self._api(lambda m: m.kind_rules(community))

    async def block_ip(
        self, community: uuid.UUID, network: str, reason: str | None, by: str | None
    ) -> str:
        return await self._api(lambda m: m.block_ip(community, network, reason, by))

    async def unblock_ip(self, community: uuid.UUID, network: str) -> str:
        return await self._api(lambda m: m.unblock_ip(community, network))

    async def blocked_ips(self, community: uuid.UUID) -> list[tuple[Any, str | None]]:
        """(network, reason), by address: networks of the ipaddress module."""
        return await self._api(lambda m: m.blocked_ips(community))

    async def assign_method(
        self, community: uuid.UUID, pubkey: str, method: str, by: str | None
    ) -> str:
        return await self._api(lambda m: m.assign_method(community, pubkey, method, by))

    async def unassign_method(self, community: uuid.UUID, pubkey: str, method: str) -> str:
        return await self._api(lambda m: m.unassign_method(community, pubkey, method))

    async def method_assignees(self, community: uuid.UUID) -> list[tuple[str, str]]:
        """(pubkey, method), by pubkey and method."""
        return await self._api(lambda m: m.method_assignees(community))

    async def assigned_methods(self, community: uuid.UUID, pubkey: str) -> frozenset[str]:
        """The methods assigned to `pubkey` (in force while it is a member)."""
        assignees = await self.method_assignees(community)
        return frozenset(method for holder, method in assignees if holder == pubkey)

    # For the server --------------------------------------------------------------

    async def community_by_host(self, host: str) -> Community | None:
        """The community whose host is `host` (compared lower-case, port kept)."""
        cid = await self._api(lambda m: m.community_id(host))
        return Community(cid, host.lower()) if cid else None

    async def community(self, selector: str) -> Community | None:
        """The community named by an id or a host (buzz-relay --community)."""
        try:
            cid = uuid.UUID(selector)
        except ValueError:
            return await self.community_by_host(selector.strip())
        found = [c for c in await self._api(lambda m: m.communities()) if c.community_id == cid]
        return Community(cid, found[0].host) if found else None

    async def healthy(self) -> bool:
        """True when a pooled connection answers within two seconds."""
        try:
            await self._api(lambda m: m.relay_key(), timeout=2.0)
            return True
        except BuzzError:  # a pool time-out included: "not healthy", never a 500
            return False
