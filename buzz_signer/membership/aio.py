"""The membership API for asyncio, over a psycopg AsyncConnection: AsyncMembershipTransaction
and AsyncMembership, the same calls as sync.py's, awaited."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self, TypeVar

import psycopg
from psycopg.rows import dict_row

from ..errors import translated
from ..keys import RelayKey
from ..signer import PreparedEvent
from .base import IN_TRANSACTION, MembershipBase, TransactionBase, begin_statement, one_row
from .binding import (
    async_own_transaction,
    async_reading,
    async_whole_transaction,
    in_async_transaction,
)
from .results import MembershipWrite, Published
from .statements import INSERT, PREPARE, Call, Query, Reads, Writes, insert_params, prepared_events

T = TypeVar("T")


class AsyncMembershipTransaction(TransactionBase):
    """MembershipTransaction for asyncio: the same methods, each to be awaited."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn
        self.published: Published | None = None

    async def _run(self, call: Call[T]) -> T:
        with translated():
            if call.into is None:
                cur = await self._conn.execute(call.sql, call.params)
                return one_row(await cur.fetchone())[0]
            async with self._conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(call.sql, call.params)
                return call.into(**one_row(await cur.fetchone()))

    # The write paths (Writes), each run in this transaction.
    create_community = in_async_transaction(Writes.create_community)
    add_relay_member = in_async_transaction(Writes.add_relay_member)
    add_relay_members = in_async_transaction(Writes.add_relay_members)
    claim_relay_membership = in_async_transaction(Writes.claim_relay_membership)
    claim_relay_invite = in_async_transaction(Writes.claim_relay_invite)
    remove_relay_member = in_async_transaction(Writes.remove_relay_member)
    remove_relay_member_if_role = in_async_transaction(Writes.remove_relay_member_if_role)
    update_relay_member_role = in_async_transaction(Writes.update_relay_member_role)
    bootstrap_owner = in_async_transaction(Writes.bootstrap_owner)
    transfer_ownership = in_async_transaction(Writes.transfer_ownership)
    backfill_from_allowlist = in_async_transaction(Writes.backfill_from_allowlist)
    republish_member_list = in_async_transaction(Writes.republish_member_list)
    rotate_relay_key = in_async_transaction(Writes.rotate_relay_key)
    delete_community = in_async_transaction(Writes.delete_community)
    ban_pubkey = in_async_transaction(Writes.ban_pubkey)
    request_membership = in_async_transaction(Writes.request_membership)
    approve_join_request = in_async_transaction(Writes.approve_join_request)
    define_role = in_async_transaction(Writes.define_role)
    delete_role = in_async_transaction(Writes.delete_role)
    assign_role = in_async_transaction(Writes.assign_role)
    unassign_role = in_async_transaction(Writes.unassign_role)
    create_relay_invite = in_async_transaction(Writes.create_relay_invite)
    set_invite_quota = in_async_transaction(Writes.set_invite_quota)
    invites_left = in_async_transaction(Writes.invites_left)
    revoke_relay_invite = in_async_transaction(Writes.revoke_relay_invite)
    allowlist_add = in_async_transaction(Writes.allowlist_add)
    archive_community = in_async_transaction(Writes.archive_community)
    unarchive_community = in_async_transaction(Writes.unarchive_community)
    set_community_profile = in_async_transaction(Writes.set_community_profile)
    set_join_policy = in_async_transaction(Writes.set_join_policy)
    unban_pubkey = in_async_transaction(Writes.unban_pubkey)
    reject_join_request = in_async_transaction(Writes.reject_join_request)


async def _queued(
    conn: psycopg.AsyncConnection[Any], call: Call[T]
) -> Callable[[], Awaitable[T]]:
    """_queued for asyncio."""
    into = call.into
    if into is None:
        cur = await conn.execute(call.sql, call.params)

        async def value() -> T:
            return one_row(await cur.fetchone())[0]

        return value
    rows = conn.cursor(row_factory=dict_row)
    await rows.execute(call.sql, call.params)

    async def row() -> T:
        return into(**one_row(await rows.fetchone()))

    return row


async def _settle(pipeline: psycopg.AsyncPipeline) -> None:
    try:
        await pipeline.sync()
    except psycopg.Error:
        pass


async def _roll_back(conn: psycopg.AsyncConnection[Any]) -> None:
    if not conn.closed and conn.info.transaction_status in IN_TRANSACTION:
        try:
            await conn.rollback()
        except psycopg.Error:
            pass


class AsyncMembership(MembershipBase):
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
        cur = await self.conn.execute(PREPARE, (self.signer.pubkey,))
        return prepared_events(await cur.fetchall())

    async def _insert(self, prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> Published:
        if prepared:
            await self.conn.execute(INSERT, insert_params(prepared, sigs))
        return Published(prepared, sigs)

    async def _write(self, call: Call[Any]) -> MembershipWrite:
        """Two round trips, as Membership._write."""
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            async with self.transaction() as tx:
                answer = await tx._run(call)
            return MembershipWrite.of(answer, tx.published)
        with translated():
            try:
                async with self.conn.pipeline() as pipeline:
                    try:
                        await self.conn.execute(begin_statement(self.conn))
                        read_answer = await _queued(self.conn, call)
                        published = await self._publish()
                        answer = await read_answer()
                        await self.conn.execute("COMMIT")
                    except BaseException:
                        await _settle(pipeline)
                        raise
            except BaseException:
                await _roll_back(self.conn)
                raise
        return MembershipWrite.of(answer, published)

    async def _alone(self, call: Call[T]) -> T:
        with translated():
            async with self.conn.transaction():
                return await AsyncMembershipTransaction(self.conn)._run(call)

    async def _read(self, query: Query[T]) -> T:
        with translated():
            return query.decode(await (await self.conn.execute(query.sql, query.params)).fetchall())

    # One whole transaction per write path: the transaction method of the same name, then the
    # list, then COMMIT.
    create_community = async_whole_transaction(Writes.create_community)
    add_relay_member = async_whole_transaction(Writes.add_relay_member)
    add_relay_members = async_whole_transaction(Writes.add_relay_members)
    claim_relay_membership = async_whole_transaction(Writes.claim_relay_membership)
    claim_relay_invite = async_whole_transaction(Writes.claim_relay_invite)
    remove_relay_member = async_whole_transaction(Writes.remove_relay_member)
    remove_relay_member_if_role = async_whole_transaction(Writes.remove_relay_member_if_role)
    update_relay_member_role = async_whole_transaction(Writes.update_relay_member_role)
    bootstrap_owner = async_whole_transaction(Writes.bootstrap_owner)
    transfer_ownership = async_whole_transaction(Writes.transfer_ownership)
    backfill_from_allowlist = async_whole_transaction(Writes.backfill_from_allowlist)
    republish_member_list = async_whole_transaction(Writes.republish_member_list)
    # This Membership must already sign with the new key; call until the outcome is 0.
    rotate_relay_key = async_whole_transaction(Writes.rotate_relay_key)
    delete_community = async_whole_transaction(Writes.delete_community)
    ban_pubkey = async_whole_transaction(Writes.ban_pubkey)
    request_membership = async_whole_transaction(Writes.request_membership)
    approve_join_request = async_whole_transaction(Writes.approve_join_request)
    define_role = async_whole_transaction(Writes.define_role)
    delete_role = async_whole_transaction(Writes.delete_role)
    assign_role = async_whole_transaction(Writes.assign_role)
    unassign_role = async_whole_transaction(Writes.unassign_role)

    # Writes that change no member: their own transaction, and their answer as it is.
    create_relay_invite = async_own_transaction(Writes.create_relay_invite)
    revoke_relay_invite = async_own_transaction(Writes.revoke_relay_invite)
    allowlist_add = async_own_transaction(Writes.allowlist_add)
    archive_community = async_own_transaction(Writes.archive_community)
    unarchive_community = async_own_transaction(Writes.unarchive_community)
    set_community_profile = async_own_transaction(Writes.set_community_profile)
    set_join_policy = async_own_transaction(Writes.set_join_policy)
    unban_pubkey = async_own_transaction(Writes.unban_pubkey)
    reject_join_request = async_own_transaction(Writes.reject_join_request)
    set_invite_quota = async_own_transaction(Writes.set_invite_quota)

    # Reads (Reads)
    community_id = async_reading(Reads.community_id)
    relay_members = async_reading(Reads.relay_members)
    relay_invites = async_reading(Reads.relay_invites)
    community_profile = async_reading(Reads.community_profile)
    banned_pubkeys = async_reading(Reads.banned_pubkeys)
    invites_left = async_reading(Reads.invites_left)
    invite_quotas = async_reading(Reads.invite_quotas)
    join_requests = async_reading(Reads.join_requests)
    member_list = async_reading(Reads.member_list)
    membership_events = async_reading(Reads.membership_events)
    role_definitions = async_reading(Reads.role_definitions)
    role_deletions = async_reading(Reads.role_deletions)
    member_list_drift = async_reading(Reads.member_list_drift)
    communities = async_reading(Reads.communities)
    relay_member = async_reading(Reads.relay_member)
    invite_branch = async_reading(Reads.invite_branch)
    relay_key = async_reading(Reads.relay_key)
    members_with_invites_left = async_reading(Reads.members_with_invites_left)
    events_text_since = async_reading(Reads.events_text_since)
    membership_events_newest_text = async_reading(Reads.membership_events_newest_text)
    take_rate = async_reading(Reads.take_rate)
    rate_reached = async_reading(Reads.rate_reached)
    accept_auth_event = async_reading(Reads.accept_auth_event)
    ban_event = async_reading(Reads.ban_event)
    unban_event = async_reading(Reads.unban_event)
    banned_events = async_reading(Reads.banned_events)
    allow_kind = async_reading(Reads.allow_kind)
    disallow_kind = async_reading(Reads.disallow_kind)
    clear_kind_rule = async_reading(Reads.clear_kind_rule)
    kind_rules = async_reading(Reads.kind_rules)
    block_ip = async_reading(Reads.block_ip)
    unblock_ip = async_reading(Reads.unblock_ip)
    blocked_ips = async_reading(Reads.blocked_ips)
    assign_method = async_reading(Reads.assign_method)
    unassign_method = async_reading(Reads.unassign_method)
    method_assignees = async_reading(Reads.method_assignees)
    moderation_rules = async_reading(Reads.moderation_rules)
    set_member_profile = async_reading(Reads.set_member_profile)
    member_profiles = async_reading(Reads.member_profiles)
