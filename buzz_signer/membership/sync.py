"""The membership API over a psycopg Connection: MembershipTransaction and Membership."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self, TypeVar

import psycopg
from psycopg.rows import dict_row

from ..errors import translated
from ..keys import RelayKey
from ..signer import PreparedEvent
from .base import IN_TRANSACTION, MembershipBase, TransactionBase, begin_statement, one_row
from .binding import in_transaction, own_transaction, reading, whole_transaction
from .results import Community, MembershipWrite, Published
from .statements import INSERT, PREPARE, Call, Query, Reads, Writes, insert_params, prepared_events

T = TypeVar("T")


class MembershipTransaction(TransactionBase):
    """The write paths inside one open transaction; published by Membership.transaction().

    Each method returns what its SQL function answered. After the block, `events` holds
    every signed event and `lists` the signed list of each community that changed.
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.published: Published | None = None

    def _run(self, call: Call[T]) -> T:
        with translated():
            if call.into is None:
                return one_row(self._conn.execute(call.sql, call.params).fetchone())[0]
            with self._conn.cursor(row_factory=dict_row) as cur:
                return call.into(**one_row(cur.execute(call.sql, call.params).fetchone()))

    def allowlist_add_many(
        self, community: Community, pubkeys: Sequence[str], note: str | None = None
    ) -> list[str]:
        """allowlist_add for each pubkey in this transaction, pipelined (an import of
        thousands): their outcomes, in order."""
        outcomes: list[str] = []
        if not pubkeys:
            return outcomes
        calls = [Writes.allowlist_add(community, pk, note) for pk in pubkeys]
        with translated(), self._conn.cursor() as cur:
            cur.executemany(calls[0].sql, [call.params for call in calls], returning=True)
            while True:
                outcomes.append(one_row(cur.fetchone())[0])
                if not cur.nextset():
                    break
        return outcomes

    # The write paths (Writes), each run in this transaction.
    create_community = in_transaction(Writes.create_community)
    add_relay_member = in_transaction(Writes.add_relay_member)
    add_relay_members = in_transaction(Writes.add_relay_members)
    claim_relay_membership = in_transaction(Writes.claim_relay_membership)
    claim_relay_invite = in_transaction(Writes.claim_relay_invite)
    remove_relay_member = in_transaction(Writes.remove_relay_member)
    remove_relay_member_if_role = in_transaction(Writes.remove_relay_member_if_role)
    update_relay_member_role = in_transaction(Writes.update_relay_member_role)
    bootstrap_owner = in_transaction(Writes.bootstrap_owner)
    transfer_ownership = in_transaction(Writes.transfer_ownership)
    backfill_from_allowlist = in_transaction(Writes.backfill_from_allowlist)
    republish_member_list = in_transaction(Writes.republish_member_list)
    rotate_relay_key = in_transaction(Writes.rotate_relay_key)
    delete_community = in_transaction(Writes.delete_community)
    ban_pubkey = in_transaction(Writes.ban_pubkey)
    request_membership = in_transaction(Writes.request_membership)
    approve_join_request = in_transaction(Writes.approve_join_request)
    define_role = in_transaction(Writes.define_role)
    delete_role = in_transaction(Writes.delete_role)
    assign_role = in_transaction(Writes.assign_role)
    unassign_role = in_transaction(Writes.unassign_role)
    create_relay_invite = in_transaction(Writes.create_relay_invite)
    set_invite_quota = in_transaction(Writes.set_invite_quota)
    invites_left = in_transaction(Writes.invites_left)
    revoke_relay_invite = in_transaction(Writes.revoke_relay_invite)
    allowlist_add = in_transaction(Writes.allowlist_add)
    archive_community = in_transaction(Writes.archive_community)
    unarchive_community = in_transaction(Writes.unarchive_community)
    set_community_profile = in_transaction(Writes.set_community_profile)
    set_join_policy = in_transaction(Writes.set_join_policy)
    unban_pubkey = in_transaction(Writes.unban_pubkey)
    reject_join_request = in_transaction(Writes.reject_join_request)


def _queued(conn: psycopg.Connection[Any], call: Call[T]) -> Callable[[], T]:
    """Send `call` in the connection's pipeline without waiting for its answer: a function
    that reads the answer once the pipeline has been synced."""
    into = call.into
    if into is None:
        cur = conn.execute(call.sql, call.params)
        return lambda: one_row(cur.fetchone())[0]
    rows = conn.cursor(row_factory=dict_row)
    rows.execute(call.sql, call.params)
    return lambda: into(**one_row(rows.fetchone()))


def _settle(pipeline: psycopg.Pipeline) -> None:
    """After a failure inside a pipelined write: collect the answers of what was queued after
    it (skipped by the server), so that leaving the pipeline has nothing left to report."""
    try:
        pipeline.sync()
    except psycopg.Error:
        pass


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """After a failed pipelined write: end its transaction, if the server still has it open.

    conn.rollback(), not an executed ROLLBACK, which would make psycopg drop every prepared
    statement of the connection. A failure here leaves the connection broken, which the
    caller sees; the first error is the one raised."""
    if not conn.closed and conn.info.transaction_status in IN_TRANSACTION:
        try:
            conn.rollback()
        except psycopg.Error:
            pass


class Membership(MembershipBase):
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
        return prepared_events(self.conn.execute(PREPARE, (self.signer.pubkey,)).fetchall())

    def _insert(self, prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> Published:
        """Phase two: store the signatures (in a pipeline, sent with what follows)."""
        if prepared:
            self.conn.execute(INSERT, insert_params(prepared, sigs))
        return Published(prepared, sigs)

    def _write(self, call: Call[Any]) -> MembershipWrite:
        """Two round trips: BEGIN, the write and prepare; then the signatures and COMMIT."""
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            with self.transaction() as tx:  # a savepoint of the caller's transaction
                answer = tx._run(call)
            return MembershipWrite.of(answer, tx.published)
        with translated():
            try:
                with self.conn.pipeline() as pipeline:
                    try:
                        self.conn.execute(begin_statement(self.conn))
                        read_answer = _queued(self.conn, call)
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

    def _alone(self, call: Call[T]) -> T:
        with translated(), self.conn.transaction():
            return MembershipTransaction(self.conn)._run(call)

    def _read(self, query: Query[T]) -> T:
        with translated():
            return query.decode(self.conn.execute(query.sql, query.params).fetchall())

    # One whole transaction per write path: the transaction method of the same name, then the
    # list, then COMMIT.
    create_community = whole_transaction(Writes.create_community)
    add_relay_member = whole_transaction(Writes.add_relay_member)
    add_relay_members = whole_transaction(Writes.add_relay_members)
    claim_relay_membership = whole_transaction(Writes.claim_relay_membership)
    claim_relay_invite = whole_transaction(Writes.claim_relay_invite)
    remove_relay_member = whole_transaction(Writes.remove_relay_member)
    remove_relay_member_if_role = whole_transaction(Writes.remove_relay_member_if_role)
    update_relay_member_role = whole_transaction(Writes.update_relay_member_role)
    bootstrap_owner = whole_transaction(Writes.bootstrap_owner)
    transfer_ownership = whole_transaction(Writes.transfer_ownership)
    backfill_from_allowlist = whole_transaction(Writes.backfill_from_allowlist)
    republish_member_list = whole_transaction(Writes.republish_member_list)
    # This Membership must already sign with the new key; call until the outcome is 0.
    rotate_relay_key = whole_transaction(Writes.rotate_relay_key)
    delete_community = whole_transaction(Writes.delete_community)
    ban_pubkey = whole_transaction(Writes.ban_pubkey)
    request_membership = whole_transaction(Writes.request_membership)
    approve_join_request = whole_transaction(Writes.approve_join_request)
    define_role = whole_transaction(Writes.define_role)
    delete_role = whole_transaction(Writes.delete_role)
    assign_role = whole_transaction(Writes.assign_role)
    unassign_role = whole_transaction(Writes.unassign_role)

    # Writes that change no member: their own transaction, and their answer as it is.
    create_relay_invite = own_transaction(Writes.create_relay_invite)
    revoke_relay_invite = own_transaction(Writes.revoke_relay_invite)
    allowlist_add = own_transaction(Writes.allowlist_add)
    archive_community = own_transaction(Writes.archive_community)
    unarchive_community = own_transaction(Writes.unarchive_community)
    set_community_profile = own_transaction(Writes.set_community_profile)
    set_join_policy = own_transaction(Writes.set_join_policy)
    unban_pubkey = own_transaction(Writes.unban_pubkey)
    reject_join_request = own_transaction(Writes.reject_join_request)
    set_invite_quota = own_transaction(Writes.set_invite_quota)

    # Reads (Reads)
    community_id = reading(Reads.community_id)
    relay_members = reading(Reads.relay_members)
    relay_invites = reading(Reads.relay_invites)
    community_profile = reading(Reads.community_profile)
    banned_pubkeys = reading(Reads.banned_pubkeys)
    invites_left = reading(Reads.invites_left)
    invite_quotas = reading(Reads.invite_quotas)
    join_requests = reading(Reads.join_requests)
    member_list = reading(Reads.member_list)
    membership_events = reading(Reads.membership_events)
    role_definitions = reading(Reads.role_definitions)
    role_deletions = reading(Reads.role_deletions)
    member_list_drift = reading(Reads.member_list_drift)
    communities = reading(Reads.communities)
    relay_member = reading(Reads.relay_member)
    invite_branch = reading(Reads.invite_branch)
    relay_key = reading(Reads.relay_key)
    members_with_invites_left = reading(Reads.members_with_invites_left)
    events_text_since = reading(Reads.events_text_since)
    membership_events_newest_text = reading(Reads.membership_events_newest_text)
    take_rate = reading(Reads.take_rate)
    rate_reached = reading(Reads.rate_reached)
    accept_auth_event = reading(Reads.accept_auth_event)
    ban_event = reading(Reads.ban_event)
    unban_event = reading(Reads.unban_event)
    banned_events = reading(Reads.banned_events)
    allow_kind = reading(Reads.allow_kind)
    disallow_kind = reading(Reads.disallow_kind)
    clear_kind_rule = reading(Reads.clear_kind_rule)
    kind_rules = reading(Reads.kind_rules)
    block_ip = reading(Reads.block_ip)
    unblock_ip = reading(Reads.unblock_ip)
    blocked_ips = reading(Reads.blocked_ips)
    assign_method = reading(Reads.assign_method)
    unassign_method = reading(Reads.unassign_method)
    method_assignees = reading(Reads.method_assignees)
    moderation_rules = reading(Reads.moderation_rules)
    set_member_profile = reading(Reads.set_member_profile)
    member_profiles = reading(Reads.member_profiles)
