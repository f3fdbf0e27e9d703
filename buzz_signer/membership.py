"""One Python call per SQL write path, each a whole transaction that ends with its signed list.

    membership = Membership.connect(database_url, RelayKey.from_env())
    write = membership.add_relay_member(community_id, pubkey)
    write.outcome    # 'added' / 'already_member'
    write.snapshot   # the signed kind 13534 list now live, or None when nothing changed

Several writes share one transaction, and one list per community:

    with membership.transaction() as tx:
        tx.add_relay_member(community_id, alice)
        tx.remove_relay_member(community_id, bob)
    tx.lists[community_id]   # the one list written for both

The same calls exist for asyncio: `await AsyncMembership.connect(url, key)`, then
`await membership.add_relay_member(...)` and `async with membership.transaction() as tx:`
(`await tx.add_relay_member(...)`). Both share every SQL text, the signer and the error map:
the write paths and reads are written once, in `_WritePaths` and `_MembershipAPI`, over four
small executors that the sync and async classes each implement.

Every write runs: the SQL write, then prepare (the database takes the community's list lock
and returns the unsigned events), the signer's checks and signatures, insert of the
signatures, COMMIT. Anything failing on the way rolls the whole transaction back. A call of
its own is two round trips (psycopg's pipeline mode): BEGIN, the write and prepare, then the
signatures with COMMIT. Business rules live in the database; this layer binds parameters and
signs.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Self, TypeVar

import psycopg
from psycopg.rows import dict_row

from .errors import translated
from .keys import RelayKey
from .nostr import KIND_MEMBERSHIP_LIST
from .signer import PreparedEvent, RefusedToSign, Signer, signed_event

Community = uuid.UUID | str
T = TypeVar("T")


class Published:
    """The signed events of a transaction, in prepare's order, each parsed when first asked for.

    They are built from the very text that was checked and signed, not read back; parsing a
    10,000-member list into Python objects costs about as much as the database's whole part of
    the write, so a caller that never looks at it does not pay for it.
    """

    def __init__(self, prepared: Sequence[PreparedEvent] = (), sigs: Sequence[str] = ()) -> None:
        self._prepared = tuple(prepared)
        self._sigs = tuple(sigs)
        self._parsed: list[dict[str, Any] | None] = [None] * len(self._prepared)
        self._list_rows = {
            ev.community_id: i
            for i, ev in enumerate(self._prepared)
            if ev.kind == KIND_MEMBERSHIP_LIST
        }

    def _event(self, i: int) -> dict[str, Any]:
        parsed = self._parsed[i]
        if parsed is None:
            parsed = self._parsed[i] = signed_event(self._prepared[i], self._sigs[i])
        return parsed

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        """Every signed event (lists, 8000, 8001, 33534, 5)."""
        return tuple(self._event(i) for i in range(len(self._prepared)))

    @property
    def lists(self) -> dict[str, dict[str, Any]]:
        """The signed list of each community that changed."""
        return {cid: self._event(i) for cid, i in self._list_rows.items()}

    @property
    def snapshot(self) -> dict[str, Any] | None:
        """The one list, when exactly one community changed; else None."""
        if len(self._list_rows) != 1:
            return None
        return self._event(next(iter(self._list_rows.values())))


@dataclass(frozen=True)
class MembershipWrite:
    """What a write call did.

    outcome: the word the SQL function answered ('added', 'already_member', ...) or, for
        the batch functions, the number of rows it changed.
    snapshot: the signed list the call made live for its community, None when it changed
        nothing, or no member tag (define_role), or several communities (a rotation that
        re-signed several leaves it None: their lists are in events).
    events: every signed event of the transaction (lists, 8000, 8001, 33534, 5), in
        prepare's order.
    details: the other columns of table-returning functions (community_id, use_count, ...).
    """

    outcome: Any
    published: Published = field(default_factory=Published, repr=False, compare=False)
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, answer: Any, published: Published | None) -> MembershipWrite:
        """The write of a call that answered `answer` (a word, a count or a row)."""
        outcome, details = answer, {}
        if isinstance(answer, dict):
            details = dict(answer)
            outcome = details.pop("outcome", None)
        return cls(outcome, published or Published(), details)

    @property
    def snapshot(self) -> dict[str, Any] | None:
        return self.published.snapshot

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        return self.published.events


class Invite(NamedTuple):
    invite_id: uuid.UUID
    code: str
    expires_at: dt.datetime


class InviteRecord(NamedTuple):
    """An invite as buzz.relay_invites lists it: everything but its code.

    sealed: what its maker kept with it (the relay's sealed copy of a code it may list,
    RelayKey.unseal opens it), None for the others."""

    invite_id: uuid.UUID
    created_by: str
    created_at: dt.datetime
    expires_at: dt.datetime
    max_uses: int | None
    use_count: int
    sealed: str | None


class CommunityProfile(NamedTuple):
    name: str | None
    description: str | None
    icon: str | None
    join_policy: str  # invite | request | open


class Ban(NamedTuple):
    pubkey: str
    reason: str | None
    banned_by: str | None
    banned_at: dt.datetime


class JoinRequest(NamedTuple):
    request_id: str  # the id of the kind 28934 event that asked
    pubkey: str
    note: str | None
    requested_at: dt.datetime


class Member(NamedTuple):
    pubkey: str
    role: str
    added_by: str | None
    joined_at: dt.datetime
    roles: list[str]  # the defined roles held (SPEC §6), ascending


class CommunityRow(NamedTuple):
    community_id: uuid.UUID
    host: str
    created_at: dt.datetime
    archived_at: dt.datetime | None


class Drift(NamedTuple):
    community_id: uuid.UUID
    problem: str
    detail: str


class _WritePaths:
    """Every write path's SQL, once, for MembershipTransaction and AsyncMembershipTransaction.

    Each method returns what its SQL function answered: the value itself in a
    MembershipTransaction, an awaitable of it in an AsyncMembershipTransaction (the
    executors `_value` and `_row` are where the two differ). Once the transaction has
    published (just before its COMMIT), `published` holds what it signed.
    """

    published: Published | None

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        """Every signed event of the transaction, once published."""
        return self.published.events if self.published else ()

    @property
    def lists(self) -> dict[str, dict[str, Any]]:
        """The signed list of each community that changed, once published."""
        return self.published.lists if self.published else {}

    def _value(self, sql: str, *params: Any) -> Any:
        raise NotImplementedError

    def _row(self, sql: str, *params: Any, into: Callable[..., Any] = dict) -> Any:
        raise NotImplementedError

    # Membership writes

    def create_community(self, host: str, owner: str) -> dict[str, Any]:
        """{'community_id': uuid or None, 'outcome': created | exists | host_taken | limit_reached}"""
        return self._row("SELECT * FROM buzz.create_community(%s, %s)", host, owner)

    def add_relay_member(
        self, community: Community, pubkey: str, role: str = "member", added_by: str | None = None
    ) -> str:
        return self._value(
            "SELECT buzz.add_relay_member(%s, %s, %s, %s)", community, pubkey, role, added_by
        )

    def add_relay_members(
        self,
        community: Community,
        pubkeys: Sequence[str],
        role: str = "member",
        added_by: str | None = None,
    ) -> int:
        return self._value(
            "SELECT buzz.add_relay_members(%s, %s::text[], %s, %s)",
            community,
            list(pubkeys),
            role,
            added_by,
        )

    def claim_relay_membership(
        self, community: Community, pubkey: str, policy_version: str | None = None
    ) -> str:
        return self._value(
            "SELECT buzz.claim_relay_membership(%s, %s, %s)", community, pubkey, policy_version
        )

    def claim_relay_invite(
        self, community: Community, code: str, pubkey: str, policy_version: str | None = None
    ) -> dict[str, Any]:
        """{'outcome': ..., 'use_count': int | None, 'uses_remaining': int | None}"""
        return self._row(
            "SELECT * FROM buzz.claim_relay_invite(%s, %s, %s, %s)",
            community,
            code,
            pubkey,
            policy_version,
        )

    def remove_relay_member(
        self,
        community: Community,
        pubkey: str,
        with_branch: bool = False,
        *,
        spare_admins: bool = False,
    ) -> str:
        """with_branch: everyone the member brought in, recursively, goes too (never the
        owner); without it they stay, re-attached to the member's inviter. spare_admins: a
        delegate's removal, which reaches no admin ('admin_spared')."""
        return self._value(
            "SELECT buzz.remove_relay_member(%s, %s, %s, %s)",
            community,
            pubkey,
            with_branch,
            spare_admins,
        )

    def remove_relay_member_if_role(self, community: Community, pubkey: str, role: str) -> str:
        return self._value(
            "SELECT buzz.remove_relay_member_if_role(%s, %s, %s)", community, pubkey, role
        )

    def update_relay_member_role(self, community: Community, pubkey: str, role: str) -> str:
        return self._value(
            "SELECT buzz.update_relay_member_role(%s, %s, %s)", community, pubkey, role
        )

    def bootstrap_owner(self, community: Community, pubkey: str) -> str:
        return self._value("SELECT buzz.bootstrap_owner(%s, %s)", community, pubkey)

    def transfer_ownership(
        self, community: Community, new_owner: str, expected_owner: str | None = None
    ) -> str:
        return self._value(
            "SELECT buzz.transfer_ownership(%s, %s, %s)", community, new_owner, expected_owner
        )

    def backfill_from_allowlist(self, community: Community) -> int:
        return self._value("SELECT buzz.backfill_from_allowlist(%s)", community)

    def republish_member_list(self, community: Community) -> None:
        # A void function: select NULL from it so that both APIs answer None.
        return self._value("SELECT NULL FROM buzz.republish_member_list(%s)", community)

    def rotate_relay_key(self, new_pubkey: str, limit: int | None = None) -> int:
        return self._value("SELECT buzz.rotate_relay_key(%s, %s)", new_pubkey, limit)

    def delete_community(self, community: Community) -> str:
        return self._value("SELECT buzz.delete_community(%s)", community)

    def ban_pubkey(
        self,
        community: Community,
        pubkey: str,
        reason: str | None = None,
        banned_by: str | None = None,
        *,
        spare_admins: bool = False,
    ) -> str:
        """spare_admins: a delegate's ban, which reaches no admin ('admin_spared')."""
        return self._value(
            "SELECT buzz.ban_pubkey(%s, %s, %s, %s, %s)",
            community,
            pubkey,
            reason,
            banned_by,
            spare_admins,
        )

    def request_membership(
        self, community: Community, pubkey: str, request_id: str, note: str | None = None
    ) -> str:
        return self._value(
            "SELECT buzz.request_membership(%s, %s, %s, %s)", community, pubkey, request_id, note
        )

    def approve_join_request(self, community: Community, request_id: str, approved_by: str) -> str:
        return self._value(
            "SELECT buzz.approve_join_request(%s, %s, %s)", community, request_id, approved_by
        )

    # Role writes (SPEC §6): each publishes its 33534 or kind 5, and the list when member tags
    # change

    def define_role(
        self,
        community: Community,
        role: str,
        label: str,
        description: str | None = None,
        color: int | None = None,
        order: int | None = None,
    ) -> str:
        return self._value(
            "SELECT buzz.define_role(%s, %s, %s, %s, %s, %s)",
            community,
            role,
            label,
            description,
            color,
            order,
        )

    def delete_role(self, community: Community, role: str) -> str:
        return self._value("SELECT buzz.delete_role(%s, %s)", community, role)

    def assign_role(self, community: Community, pubkey: str, role: str) -> str:
        return self._value("SELECT buzz.assign_role(%s, %s, %s)", community, pubkey, role)

    def unassign_role(self, community: Community, pubkey: str, role: str) -> str:
        return self._value("SELECT buzz.unassign_role(%s, %s, %s)", community, pubkey, role)

    # Writes that change no member (no list), offered here so they can share a transaction

    def create_relay_invite(
        self,
        community: Community,
        created_by: str,
        max_uses: int | None = 1,
        ttl: dt.timedelta = dt.timedelta(hours=72),
        code: str | None = None,
        sealed: str | None = None,
    ) -> Invite:
        """code: the caller's own (None: one is drawn); sealed: kept with the invite, as
        relay_invites returns it (the relay's RelayKey.seal(code))."""
        return self._row(
            "SELECT * FROM buzz.create_relay_invite(%s, %s, %s, %s, %s, %s)",
            community,
            created_by,
            max_uses,
            ttl,
            code,
            sealed,
            into=Invite,
        )

    def set_invite_quota(self, community: Community, role: str, quota: int | None) -> str:
        """How many members an 'admin' or a 'member' may bring in; None: no limit."""
        return self._value("SELECT buzz.set_invite_quota(%s, %s, %s)", community, role, quota)

    def invites_left(self, community: Community, pubkey: str) -> int | None:
        """How many more members `pubkey` may bring in (None: no limit), read in this
        transaction."""
        return self._value("SELECT buzz.invites_left(%s, %s)", community, pubkey)

    def revoke_relay_invite(self, community: Community, invite_id: uuid.UUID | str) -> str:
        return self._value("SELECT buzz.revoke_relay_invite(%s, %s)", community, invite_id)

    def allowlist_add(self, community: Community, pubkey: str, note: str | None = None) -> str:
        return self._value("SELECT buzz.allowlist_add(%s, %s, %s)", community, pubkey, note)

    def archive_community(self, community: Community) -> str:
        return self._value("SELECT buzz.archive_community(%s)", community)

    def unarchive_community(self, community: Community) -> str:
        return self._value("SELECT buzz.unarchive_community(%s)", community)

    def set_community_profile(self, community: Community, field: str, value: str | None) -> str:
        """field: name, description or icon; None clears it."""
        return self._value("SELECT buzz.set_community_profile(%s, %s, %s)", community, field, value)

    def set_join_policy(self, community: Community, policy: str) -> str:
        return self._value("SELECT buzz.set_join_policy(%s, %s)", community, policy)

    def unban_pubkey(self, community: Community, pubkey: str) -> str:
        return self._value("SELECT buzz.unban_pubkey(%s, %s)", community, pubkey)

    def reject_join_request(
        self, community: Community, request_id: str, reason: str | None = None
    ) -> str:
        return self._value(
            "SELECT buzz.reject_join_request(%s, %s, %s)", community, request_id, reason
        )


class MembershipTransaction(_WritePaths):
    """The write paths inside one open transaction; published by Membership.transaction().

    Each method returns what its SQL function answered. After the block, `events` holds
    every signed event and `lists` the signed list of each community that changed.
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.published: Published | None = None

    def _value(self, sql: str, *params: Any) -> Any:
        with translated():
            return self._conn.execute(sql, params).fetchone()[0]

    def _row(self, sql: str, *params: Any, into: Callable[..., Any] = dict) -> Any:
        with translated(), self._conn.cursor(row_factory=dict_row) as cur:
            return into(**cur.execute(sql, params).fetchone())

    def allowlist_add_many(
        self, community: Community, pubkeys: Sequence[str], note: str | None = None
    ) -> list[str]:
        """allowlist_add for each pubkey in this transaction, pipelined (an import of
        thousands): their outcomes, in order."""
        outcomes: list[str] = []
        if not pubkeys:
            return outcomes
        with translated(), self._conn.cursor() as cur:
            cur.executemany(
                "SELECT buzz.allowlist_add(%s, %s, %s)",
                [(community, pk, note) for pk in pubkeys],
                returning=True,
            )
            while True:
                outcomes.append(cur.fetchone()[0])
                if not cur.nextset():
                    break
        return outcomes


class AsyncMembershipTransaction(_WritePaths):
    """MembershipTransaction for asyncio: the same methods, each to be awaited."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn
        self.published: Published | None = None

    async def _value(self, sql: str, *params: Any) -> Any:
        with translated():
            return (await (await self._conn.execute(sql, params)).fetchone())[0]

    async def _row(self, sql: str, *params: Any, into: Callable[..., Any] = dict) -> Any:
        with translated():
            async with self._conn.cursor(row_factory=dict_row) as cur:
                return into(**await (await cur.execute(sql, params)).fetchone())


class _QueuedWrite(_WritePaths):
    """The write paths, each sent in the connection's pipeline without waiting for its answer.

    Each method returns a function that reads the answer once the pipeline has been synced.
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def _value(self, sql: str, *params: Any) -> Callable[[], Any]:
        cur = self._conn.execute(sql, params)
        return lambda: cur.fetchone()[0]

    def _row(self, sql: str, *params: Any, into: Callable[..., Any] = dict) -> Callable[[], Any]:
        cur = self._conn.cursor(row_factory=dict_row)
        cur.execute(sql, params)
        return lambda: into(**cur.fetchone())


class _AsyncQueuedWrite(_WritePaths):
    """_QueuedWrite for asyncio: each method, awaited, returns a function to await for the
    answer."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn

    async def _value(self, sql: str, *params: Any) -> Callable[[], Awaitable[Any]]:
        cur = await self._conn.execute(sql, params)

        async def answer() -> Any:
            return (await cur.fetchone())[0]

        return answer

    async def _row(
        self, sql: str, *params: Any, into: Callable[..., Any] = dict
    ) -> Callable[[], Awaitable[Any]]:
        cur = self._conn.cursor(row_factory=dict_row)
        await cur.execute(sql, params)

        async def answer() -> Any:
            return into(**await cur.fetchone())

        return answer


# The two phases of publishing, shared by both APIs.
_PREPARE = (
    "SELECT community_id, id, kind, created_at, serialized FROM buzz.prepare_membership_events(%s)"
)
# The count keeps insert's answer off the wire: it returns the very events signed, which
# Published builds from prepare's text (sending and parsing them would cost more than the rest
# of insert at 10,000 members). Nothing reads the count: insert stores every prepared event or
# raises (BZSTL, BZSIG).
_INSERT = "SELECT pg_catalog.count(*) FROM buzz.insert_signed_events(%s::text[], %s::text[])"


def _prepared(rows: Sequence[tuple[Any, ...]]) -> list[PreparedEvent]:
    return [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


def _insert_params(prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> tuple[str, str]:
    """The ids and signatures as text[] literals.

    Both are plain lowercase hex (the signer checked every id against its event, and made
    every signature), so no element needs quoting: joining them costs about a tenth of
    psycopg adapting a 10,000-element list element by element.
    """
    return "{" + ",".join(ev.id for ev in prepared) + "}", "{" + ",".join(sigs) + "}"


def _whole_transaction(write: Callable[..., Any]) -> Callable[..., Any]:
    """A write path as a call of its own: one transaction with its list."""

    @functools.wraps(write)
    def run(self: _MembershipAPI, *args: Any, **kwargs: Any) -> Any:
        return self._write(lambda tx: write(tx, *args, **kwargs))

    run.__signature__ = inspect.signature(write).replace(return_annotation=MembershipWrite)  # type: ignore[attr-defined]
    return run


def _own_transaction(write: Callable[..., T]) -> Callable[..., T]:
    """A write that changes no member, in a transaction of its own; returns its answer.

    Nothing to publish, so no prepare: it works whichever key this Membership holds."""

    @functools.wraps(write)
    def run(self: _MembershipAPI, *args: Any, **kwargs: Any) -> T:
        return self._alone(lambda tx: write(tx, *args, **kwargs))

    return run


def _begin(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> str:
    """BEGIN with the connection's transaction characteristics, as psycopg's own would be."""
    words = ["BEGIN"]
    if conn.isolation_level is not None:
        words.append("ISOLATION LEVEL " + conn.isolation_level.name.replace("_", " "))
    if conn.read_only is not None:
        words.append("READ ONLY" if conn.read_only else "READ WRITE")
    if conn.deferrable is not None:
        words.append("DEFERRABLE" if conn.deferrable else "NOT DEFERRABLE")
    return " ".join(words)


_OPEN = (psycopg.pq.TransactionStatus.INTRANS, psycopg.pq.TransactionStatus.INERROR)


def _settle(pipeline: psycopg.Pipeline) -> None:
    """After a failure inside a pipelined write: collect the answers of what was queued after
    it (skipped by the server), so that leaving the pipeline has nothing left to report."""
    try:
        pipeline.sync()
    except psycopg.Error:
        pass


async def _async_settle(pipeline: psycopg.AsyncPipeline) -> None:
    try:
        await pipeline.sync()
    except psycopg.Error:
        pass


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """After a failed pipelined write: end its transaction, if the server still has it open.

    conn.rollback(), not an executed ROLLBACK, which would make psycopg drop every prepared
    statement of the connection. A failure here leaves the connection broken, which the
    caller sees; the first error is the one raised."""
    if not conn.closed and conn.info.transaction_status in _OPEN:
        try:
            conn.rollback()
        except psycopg.Error:
            pass


async def _async_roll_back(conn: psycopg.AsyncConnection[Any]) -> None:
    if not conn.closed and conn.info.transaction_status in _OPEN:
        try:
            await conn.rollback()
        except psycopg.Error:
            pass


def _first(rows: list[tuple[Any, ...]]) -> Any:
    return rows[0][0]


def _members(rows: list[tuple[Any, ...]]) -> list[Member]:
    return [Member(*r) for r in rows]


def _invites(rows: list[tuple[Any, ...]]) -> list[InviteRecord]:
    return [InviteRecord(*r) for r in rows]


def _profile(rows: list[tuple[Any, ...]]) -> CommunityProfile | None:
    return CommunityProfile(*rows[0]) if rows else None


def _bans(rows: list[tuple[Any, ...]]) -> list[Ban]:
    return [Ban(*r) for r in rows]


def _join_requests(rows: list[tuple[Any, ...]]) -> list[JoinRequest]:
    return [JoinRequest(*r) for r in rows]


def _column(rows: list[tuple[Any, ...]]) -> list[Any]:
    return [r[0] for r in rows]


def _drifts(rows: list[tuple[Any, ...]]) -> list[Drift]:
    return [Drift(*r) for r in rows]


def _communities(rows: list[tuple[Any, ...]]) -> list[CommunityRow]:
    return [CommunityRow(*r) for r in rows]


def _one_member(rows: list[tuple[Any, ...]]) -> Member | None:
    return Member(*rows[0]) if rows else None


def _tuples(rows: list[tuple[Any, ...]]) -> list[Any]:
    return list(rows)


# One statement, so one snapshot: the live list, the 8000/8001 events since a created_at, and
# the role definitions (33534) and deletions (kind 5) since then. Beside each event's text,
# the single-letter tags a filter can name, read from the small event in SQL at the places
# SPEC fixes: "p" of an 8000/8001 and "d" of a 33534 (their second tag), "a" and "k" of a
# kind 5 (its second and third). (A list has none.)
_EVENTS_TEXT_SINCE = """
SELECT l::text, NULL, NULL, NULL, NULL
FROM buzz.member_list(%s) l WHERE l IS NOT NULL AND %s
UNION ALL
SELECT e::text, e->'tags'->1->>1, NULL, NULL, NULL
FROM buzz.membership_events(%s, %s) e WHERE %s
UNION ALL
SELECT d::text, NULL, d->'tags'->1->>1, NULL, NULL
FROM buzz.role_definitions(%s) d
WHERE %s AND (d->>'created_at')::bigint >= %s
UNION ALL
SELECT x::text, NULL, NULL, x->'tags'->1->>1, x->'tags'->2->>1
FROM buzz.role_deletions(%s) x
WHERE %s AND (x->>'created_at')::bigint >= %s
"""


class _MembershipAPI:
    """The calls of Membership and AsyncMembership, written once over their executors.

    `_write` runs a write path in a transaction that publishes, `_alone` one that does not,
    `_read` a read; in AsyncMembership each returns an awaitable.
    """

    def __init__(self, conn: Any, key: RelayKey | None) -> None:
        """`key` None: a reader's (buzz-admin's reads, a buzz_reader role), whose every
        write that would publish is refused before it prepares."""
        self.conn = conn
        self._signer = Signer(key) if key is not None else None

    @property
    def signer(self) -> Signer:
        if self._signer is None:
            raise RefusedToSign("this Membership was made without a relay key: it only reads")
        return self._signer

    @signer.setter
    def signer(self, signer: Signer) -> None:
        """Sign with another key from the next write on (a rotation's new key)."""
        self._signer = signer

    def _write(self, call: Callable[[Any], Any]) -> Any:
        raise NotImplementedError

    def _alone(self, call: Callable[[Any], Any]) -> Any:
        raise NotImplementedError

    def _read(self, decode: Callable[[list[tuple[Any, ...]]], T], sql: str, *params: Any) -> Any:
        raise NotImplementedError

    # One whole transaction per write path: the transaction method of the same name, then the
    # list, then COMMIT.
    create_community = _whole_transaction(_WritePaths.create_community)
    add_relay_member = _whole_transaction(_WritePaths.add_relay_member)
    add_relay_members = _whole_transaction(_WritePaths.add_relay_members)
    claim_relay_membership = _whole_transaction(_WritePaths.claim_relay_membership)
    claim_relay_invite = _whole_transaction(_WritePaths.claim_relay_invite)
    remove_relay_member = _whole_transaction(_WritePaths.remove_relay_member)
    remove_relay_member_if_role = _whole_transaction(_WritePaths.remove_relay_member_if_role)
    update_relay_member_role = _whole_transaction(_WritePaths.update_relay_member_role)
    bootstrap_owner = _whole_transaction(_WritePaths.bootstrap_owner)
    transfer_ownership = _whole_transaction(_WritePaths.transfer_ownership)
    backfill_from_allowlist = _whole_transaction(_WritePaths.backfill_from_allowlist)
    republish_member_list = _whole_transaction(_WritePaths.republish_member_list)
    # This Membership must already sign with the new key; call until the outcome is 0.
    rotate_relay_key = _whole_transaction(_WritePaths.rotate_relay_key)
    delete_community = _whole_transaction(_WritePaths.delete_community)
    ban_pubkey = _whole_transaction(_WritePaths.ban_pubkey)
    request_membership = _whole_transaction(_WritePaths.request_membership)
    approve_join_request = _whole_transaction(_WritePaths.approve_join_request)
    define_role = _whole_transaction(_WritePaths.define_role)
    delete_role = _whole_transaction(_WritePaths.delete_role)
    assign_role = _whole_transaction(_WritePaths.assign_role)
    unassign_role = _whole_transaction(_WritePaths.unassign_role)

    # Writes that change no member: their own transaction, and their answer as it is.
    create_relay_invite = _own_transaction(_WritePaths.create_relay_invite)
    revoke_relay_invite = _own_transaction(_WritePaths.revoke_relay_invite)
    allowlist_add = _own_transaction(_WritePaths.allowlist_add)
    archive_community = _own_transaction(_WritePaths.archive_community)
    unarchive_community = _own_transaction(_WritePaths.unarchive_community)
    set_community_profile = _own_transaction(_WritePaths.set_community_profile)
    set_join_policy = _own_transaction(_WritePaths.set_join_policy)
    unban_pubkey = _own_transaction(_WritePaths.unban_pubkey)
    reject_join_request = _own_transaction(_WritePaths.reject_join_request)
    set_invite_quota = _own_transaction(_WritePaths.set_invite_quota)

    # Reads

    def community_id(self, host: str) -> uuid.UUID | None:
        return self._read(_first, "SELECT buzz.community_id(%s)", host)

    def relay_members(self, community: Community) -> list[Member]:
        return self._read(_members, "SELECT * FROM buzz.relay_members(%s)", community)

    def relay_invites(self, community: Community) -> list[InviteRecord]:
        """Every invite of the community, oldest first, without its code (writers only)."""
        return self._read(_invites, "SELECT * FROM buzz.relay_invites(%s)", community)

    def community_profile(self, community: Community) -> CommunityProfile | None:
        """Its name, description, icon and join policy; None for an unknown community."""
        return self._read(_profile, "SELECT * FROM buzz.community_profile(%s)", community)

    def banned_pubkeys(self, community: Community) -> list[Ban]:
        return self._read(_bans, "SELECT * FROM buzz.banned_pubkeys(%s)", community)

    def invites_left(self, community: Community, pubkey: str) -> int | None:
        """How many more members `pubkey` may bring in by invites: None when unlimited (the
        owner; admins by default), 0 for a non-member."""
        return self._read(_first, "SELECT buzz.invites_left(%s, %s)", community, pubkey)

    def invite_quotas(self, community: Community) -> dict[str, int | None]:
        """{'admin': quota, 'member': quota} (None: no limit); {} for an unknown community."""
        return self._read(dict, "SELECT role, quota FROM buzz.invite_quotas(%s)", community)

    def join_requests(self, community: Community) -> list[JoinRequest]:
        """The pending join requests, oldest first."""
        return self._read(_join_requests, "SELECT * FROM buzz.join_requests(%s)", community)

    def member_list(self, community: Community) -> dict[str, Any] | None:
        return self._read(_first, "SELECT buzz.member_list(%s)", community)

    def membership_events(self, community: Community, since: int = 0) -> list[dict[str, Any]]:
        return self._read(_column, "SELECT buzz.membership_events(%s, %s)", community, since)

    def role_definitions(self, community: Community) -> list[dict[str, Any]]:
        """The live signed 33534 role definitions, by role id."""
        return self._read(_column, "SELECT buzz.role_definitions(%s)", community)

    def role_deletions(self, community: Community) -> list[dict[str, Any]]:
        """The signed kind 5 deletions of deleted role definitions, by role id."""
        return self._read(_column, "SELECT buzz.role_deletions(%s)", community)

    def member_list_drift(self, community: Community | None = None) -> list[Drift]:
        return self._read(_drifts, "SELECT * FROM buzz.member_list_drift(%s)", community)

    def communities(self) -> list[CommunityRow]:
        """Every community, by host."""
        return self._read(_communities, "SELECT * FROM buzz.communities()")

    def relay_member(self, community: Community, pubkey: str) -> Member | None:
        """One member, by primary key; None for a non-member."""
        return self._read(_one_member, "SELECT * FROM buzz.relay_member(%s, %s)", community, pubkey)

    def invite_branch(self, community: Community, pubkey: str) -> list[tuple[str, str]]:
        """(pubkey, role) of the member and everyone they brought in, recursively, by pubkey:
        what remove_relay_member(..., with_branch=True) takes; [] for the owner or a
        non-member."""
        return self._read(
            _tuples, "SELECT pubkey, role FROM buzz.invite_branch(%s, %s)", community, pubkey
        )

    def relay_key(self) -> str | None:
        """The relay key the database records (hex); None before the first write."""
        return self._read(_first, "SELECT buzz.relay_key()")

    def members_with_invites_left(self, community: Community) -> list[tuple[str, str, str | None, int | None]]:
        """(pubkey, role, added_by, invites_left) of every member, by pubkey: the invite tree
        as NIP-86 listinvitetree and the desk show it."""
        return self._read(
            _tuples,
            "SELECT m.pubkey, m.role, m.added_by, buzz.invites_left(%s, m.pubkey)"
            " FROM buzz.relay_members(%s) m ORDER BY m.pubkey",
            community,
            community,
        )

    # The events as the relay sends them: each as its JSON text, unparsed, with the values of
    # the single-letter tags a filter can name (relay/backend.py)

    def events_text_since(
        self,
        community: Community,
        since: int,
        *,
        with_list: bool = True,
        with_events: bool = True,
        with_definitions: bool = True,
        with_deletions: bool = True,
    ) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
        """In one snapshot: the live list, the 8000/8001 events (oldest first), the live role
        definitions (33534) and role deletions (kind 5) with created_at >= since; each as
        (text, p, d, a, k)."""
        c = community
        return self._read(
            _tuples,
            _EVENTS_TEXT_SINCE,
            *(c, with_list, c, since, with_events, c, with_definitions, since),
            *(c, with_deletions, since),
        )

    def membership_events_newest_text(
        self,
        community: Community,
        kinds: Sequence[int] | None,
        ids: Sequence[str] | None,
        members: Sequence[str] | None,
        since: int | None,
        until: int | None,
        limit: int,
    ) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
        """buzz.membership_events_newest: one REQ filter's 8000/8001 events, newest first, as
        (text, p, None, None, None)."""
        return self._read(
            _tuples,
            "SELECT e::text, e->'tags'->1->>1, NULL, NULL, NULL"
            " FROM buzz.membership_events_newest(%s, %s, %s, %s, %s, %s, %s) e",
            community,
            None if kinds is None else list(kinds),
            None if ids is None else list(ids),
            None if members is None else list(members),
            since,
            until,
            limit,
        )

    # What relay processes share (SPEC section 9): one statement each, its own transaction

    def take_rate(self, scope: str, keys: Sequence[str], limit: int, seconds: int) -> bool:
        return self._read(
            _first, "SELECT buzz.take_rate(%s, %s, %s, %s)", scope, list(keys), limit, seconds
        )

    def rate_reached(self, scope: str, keys: Sequence[str], limit: int, seconds: int) -> bool:
        return self._read(
            _first, "SELECT buzz.rate_reached(%s, %s, %s, %s)", scope, list(keys), limit, seconds
        )

    def accept_auth_event(self, event_id: str, fresh_until: dt.datetime) -> bool:
        return self._read(_first, "SELECT buzz.accept_auth_event(%s, %s)", event_id, fresh_until)

    # Moderation behind the gate (changes no member): one statement each

    def ban_event(
        self, community: Community, event_id: str, reason: str | None, banned_by: str | None
    ) -> str:
        return self._read(
            _first, "SELECT buzz.ban_event(%s, %s, %s, %s)", community, event_id, reason, banned_by
        )

    def unban_event(self, community: Community, event_id: str) -> str:
        return self._read(_first, "SELECT buzz.unban_event(%s, %s)", community, event_id)

    def banned_events(self, community: Community) -> list[tuple[str, str | None]]:
        return self._read(
            _tuples, "SELECT event_id, reason FROM buzz.banned_events(%s)", community
        )

    def allow_kind(self, community: Community, kind: int) -> str:
        return self._read(_first, "SELECT buzz.allow_kind(%s, %s)", community, kind)

    def disallow_kind(self, community: Community, kind: int) -> str:
        return self._read(_first, "SELECT buzz.disallow_kind(%s, %s)", community, kind)

    def clear_kind_rule(self, community: Community, kind: int) -> str:
        return self._read(_first, "SELECT buzz.clear_kind_rule(%s, %s)", community, kind)

    def kind_rules(self, community: Community) -> list[tuple[int, bool]]:
        return self._read(_tuples, "SELECT kind, allowed FROM buzz.kind_rules(%s)", community)

    def block_ip(
        self, community: Community, network: str, reason: str | None, blocked_by: str | None
    ) -> str:
        return self._read(
            _first,
            "SELECT buzz.block_ip(%s, %s::inet, %s, %s)",
            community,
            network,
            reason,
            blocked_by,
        )

    def unblock_ip(self, community: Community, network: str) -> str:
        return self._read(_first, "SELECT buzz.unblock_ip(%s, %s::inet)", community, network)

    def blocked_ips(self, community: Community) -> list[tuple[Any, str | None]]:
        return self._read(_tuples, "SELECT address, reason FROM buzz.blocked_ips(%s)", community)

    def assign_method(
        self, community: Community, pubkey: str, method: str, assigned_by: str | None
    ) -> str:
        return self._read(
            _first,
            "SELECT buzz.assign_method(%s, %s, %s, %s)",
            community,
            pubkey,
            method,
            assigned_by,
        )

    def unassign_method(self, community: Community, pubkey: str, method: str) -> str:
        return self._read(
            _first, "SELECT buzz.unassign_method(%s, %s, %s)", community, pubkey, method
        )

    def method_assignees(self, community: Community) -> list[tuple[str, str]]:
        """(pubkey, method) of every assignment, by pubkey and method."""
        return self._read(
            _tuples, "SELECT pubkey, method FROM buzz.method_assignees(%s)", community
        )

    def moderation_rules(self, community: Community | None) -> list[tuple[uuid.UUID, str, str]]:
        """(community, rule, subject) of one community's rules, or every community's."""
        return self._read(
            _tuples,
            "SELECT community_id, rule, subject FROM buzz.moderation_rules(%s)",
            community,
        )


class Membership(_MembershipAPI):
    """The membership API over one connection, signing with the relay key.

    The connection should be in autocommit mode (Membership.connect makes one): each call
    is then its own transaction. Inside a transaction the caller opened, a call runs in a
    savepoint and the caller's COMMIT publishes; the commit guard still holds it to its list.
    """

    conn: psycopg.Connection[Any]

    @classmethod
    def connect(cls, conninfo: str, key: RelayKey | None, **kwargs: Any) -> Membership:
        with translated():
            conn = psycopg.connect(conninfo, autocommit=True, **kwargs)
        return cls(conn, key)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[MembershipTransaction]:
        """One transaction for the writes in the block, then their lists, then COMMIT."""
        tx = MembershipTransaction(self.conn)
        with translated(), self.conn.transaction():
            yield tx
            tx.published = self._publish()

    def _publish(self) -> Published:
        """Prepare, check and sign, insert: what the transaction signed."""
        prepared = self._prepare()
        return self._insert(prepared, self.signer.sign_all(prepared))

    def _prepare(self) -> list[PreparedEvent]:
        """Phase one: the unsigned events of this transaction (the list locks are now held)."""
        return _prepared(self.conn.execute(_PREPARE, (self.signer.pubkey,)).fetchall())

    def _insert(self, prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> Published:
        """Phase two: store the signatures (in a pipeline, sent with what follows)."""
        if prepared:
            self.conn.execute(_INSERT, _insert_params(prepared, sigs))
        return Published(prepared, sigs)

    def _write(self, call: Callable[[MembershipTransaction], Any]) -> MembershipWrite:
        """Two round trips: BEGIN, the write and prepare; then the signatures and COMMIT."""
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            with self.transaction() as tx:  # a savepoint of the caller's transaction
                answer = call(tx)
            return MembershipWrite.of(answer, tx.published)
        with translated():
            try:
                with self.conn.pipeline() as pipeline:
                    try:
                        self.conn.execute(_begin(self.conn))
                        read_answer = call(_QueuedWrite(self.conn))  # type: ignore[arg-type]
                        published = self._publish()  # prepare's answer brings the write's
                        answer = read_answer()
                        self.conn.execute("COMMIT")
                    except BaseException:
                        _settle(pipeline)
                        raise
            except BaseException:  # here too what failed at the pipeline's end: insert, COMMIT
                _roll_back(self.conn)
                raise
        return MembershipWrite.of(answer, published)

    def _alone(self, call: Callable[[MembershipTransaction], T]) -> T:
        with translated(), self.conn.transaction():
            return call(MembershipTransaction(self.conn))

    def _read(self, decode: Callable[[list[tuple[Any, ...]]], T], sql: str, *params: Any) -> T:
        with translated():
            return decode(self.conn.execute(sql, params).fetchall())


class AsyncMembership(_MembershipAPI):
    """Membership for asyncio, over a psycopg AsyncConnection: the same calls, awaited.

    As with Membership, the connection should be in autocommit mode (connect makes one, and
    a psycopg_pool.AsyncConnectionPool can hand out such connections).
    """

    conn: psycopg.AsyncConnection[Any]

    @classmethod
    async def connect(
        cls, conninfo: str, key: RelayKey | None, **kwargs: Any
    ) -> AsyncMembership:
        with translated():
            conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True, **kwargs)
        return cls(conn, key)

    async def close(self) -> None:
        await self.conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncMembershipTransaction]:
        """One transaction for the writes in the block, then their lists, then COMMIT."""
        tx = AsyncMembershipTransaction(self.conn)
        with translated():
            async with self.conn.transaction():
                yield tx
                tx.published = await self._publish()

    async def _publish(self) -> Published:
        prepared = await self._prepare()
        return await self._insert(prepared, self.signer.sign_all(prepared))

    async def _prepare(self) -> list[PreparedEvent]:
        cur = await self.conn.execute(_PREPARE, (self.signer.pubkey,))
        return _prepared(await cur.fetchall())

    async def _insert(self, prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> Published:
        if prepared:
            await self.conn.execute(_INSERT, _insert_params(prepared, sigs))
        return Published(prepared, sigs)

    async def _write(
        self, call: Callable[[AsyncMembershipTransaction], Awaitable[Any]]
    ) -> MembershipWrite:
        """Two round trips, as Membership._write."""
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            async with self.transaction() as tx:
                answer = await call(tx)
            return MembershipWrite.of(answer, tx.published)
        with translated():
            try:
                async with self.conn.pipeline() as pipeline:
                    try:
                        await self.conn.execute(_begin(self.conn))
                        read_answer = await call(_AsyncQueuedWrite(self.conn))  # type: ignore[arg-type]
                        published = await self._publish()
                        answer = await read_answer()
                        await self.conn.execute("COMMIT")
                    except BaseException:
                        await _async_settle(pipeline)
                        raise
            except BaseException:
                await _async_roll_back(self.conn)
                raise
        return MembershipWrite.of(answer, published)

    async def _alone(self, call: Callable[[AsyncMembershipTransaction], Awaitable[T]]) -> T:
        with translated():
            async with self.conn.transaction():
                return await call(AsyncMembershipTransaction(self.conn))

    async def _read(
        self, decode: Callable[[list[tuple[Any, ...]]], T], sql: str, *params: Any
    ) -> T:
        with translated():
            return decode(await (await self.conn.execute(sql, params)).fetchall())
