"""The SQL of the membership API, all of it: each write path and each read once, as the
statement it runs (its SQL, its parameters, how its answer is read), and the two phases of
publishing. The classes of sync.py and aio.py bind the statements as methods (binding.py)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from ..signer import PreparedEvent
from .results import (
    Ban,
    Community,
    CommunityProfile,
    CommunityRow,
    Drift,
    Invite,
    InviteRecord,
    JoinRequest,
    Member,
)

T = TypeVar("T")


class Call(NamedTuple, Generic[T]):
    """One write path's statement: its SQL and parameters, and how its answer is read (`into`
    None: the first column of its one row; else the row, by column name, into `into`)."""

    sql: str
    params: tuple[Any, ...]
    into: Callable[..., T] | None = None


def _value(sql: str, *params: Any) -> Call[Any]:
    return Call(sql, params)


def _row(sql: str, *params: Any, into: Callable[..., Any] = dict) -> Call[Any]:
    return Call(sql, params, into)


class Query(NamedTuple, Generic[T]):
    """One read: its SQL and parameters, and what its rows decode into."""

    decode: Callable[[list[tuple[Any, ...]]], T]
    sql: str
    params: tuple[Any, ...]


def _query(decode: Callable[[list[tuple[Any, ...]]], T], sql: str, *params: Any) -> Query[T]:
    return Query(decode, sql, params)


class Writes:
    """Every write path's SQL, once: the statement each runs, which the transactions and the
    Membership classes below bind as methods of their own."""

    # Membership writes

    @staticmethod
    def create_community(host: str, owner: str) -> Call[dict[str, Any]]:
        """{'community_id': uuid or None, 'outcome': created | exists | host_taken | limit_reached}"""
        return _row("SELECT * FROM buzz.create_community(%s, %s)", host, owner)

    @staticmethod
    def add_relay_member(
        community: Community, pubkey: str, role: str = "member", added_by: str | None = None
    ) -> Call[str]:
        return _value(
            "SELECT buzz.add_relay_member(%s, %s, %s, %s)", community, pubkey, role, added_by
        )

    @staticmethod
    def add_relay_members(
        community: Community,
        pubkeys: Sequence[str],
        role: str = "member",
        added_by: str | None = None,
    ) -> Call[int]:
        return _value(
            "SELECT buzz.add_relay_members(%s, %s::text[], %s, %s)",
            community,
            list(pubkeys),
            role,
            added_by,
        )

    @staticmethod
    def claim_relay_membership(
        community: Community, pubkey: str, policy_version: str | None = None
    ) -> Call[str]:
        return _value(
            "SELECT buzz.claim_relay_membership(%s, %s, %s)", community, pubkey, policy_version
        )

    @staticmethod
    def claim_relay_invite(
        community: Community, code: str, pubkey: str, policy_version: str | None = None
    ) -> Call[dict[str, Any]]:
        """{'outcome': ..., 'use_count': int | None, 'uses_remaining': int | None}"""
        return _row(
            "SELECT * FROM buzz.claim_relay_invite(%s, %s, %s, %s)",
            community,
            code,
            pubkey,
            policy_version,
        )

    @staticmethod
    def remove_relay_member(
        community: Community,
        pubkey: str,
        with_branch: bool = False,
        *,
        spare_admins: bool = False,
    ) -> Call[str]:
        """with_branch: everyone the member brought in, recursively, goes too (never the
        owner); without it they stay, re-attached to the member's inviter. spare_admins: a
        delegate's removal, which reaches no admin ('admin_spared')."""
        return _value(
            "SELECT buzz.remove_relay_member(%s, %s, %s, %s)",
            community,
            pubkey,
            with_branch,
            spare_admins,
        )

    @staticmethod
    def remove_relay_member_if_role(community: Community, pubkey: str, role: str) -> Call[str]:
        return _value(
            "SELECT buzz.remove_relay_member_if_role(%s, %s, %s)", community, pubkey, role
        )

    @staticmethod
    def update_relay_member_role(community: Community, pubkey: str, role: str) -> Call[str]:
        return _value(
            "SELECT buzz.update_relay_member_role(%s, %s, %s)", community, pubkey, role
        )

    @staticmethod
    def bootstrap_owner(community: Community, pubkey: str) -> Call[str]:
        return _value("SELECT buzz.bootstrap_owner(%s, %s)", community, pubkey)

    @staticmethod
    def transfer_ownership(
        community: Community, new_owner: str, expected_owner: str | None = None
    ) -> Call[str]:
        return _value(
            "SELECT buzz.transfer_ownership(%s, %s, %s)", community, new_owner, expected_owner
        )

    @staticmethod
    def backfill_from_allowlist(community: Community) -> Call[int]:
        return _value("SELECT buzz.backfill_from_allowlist(%s)", community)

    @staticmethod
    def republish_member_list(community: Community) -> Call[None]:
        # A void function: select NULL from it so that both APIs answer None.
        return _value("SELECT NULL FROM buzz.republish_member_list(%s)", community)

    @staticmethod
    def rotate_relay_key(new_pubkey: str, limit: int | None = None) -> Call[int]:
        return _value("SELECT buzz.rotate_relay_key(%s, %s)", new_pubkey, limit)

    @staticmethod
    def delete_community(community: Community) -> Call[str]:
        return _value("SELECT buzz.delete_community(%s)", community)

    @staticmethod
    def ban_pubkey(
        community: Community,
        pubkey: str,
        reason: str | None = None,
        banned_by: str | None = None,
        *,
        spare_admins: bool = False,
    ) -> Call[str]:
        """spare_admins: a delegate's ban, which reaches no admin ('admin_spared')."""
        return _value(
            "SELECT buzz.ban_pubkey(%s, %s, %s, %s, %s)",
            community,
            pubkey,
            reason,
            banned_by,
            spare_admins,
        )

    @staticmethod
    def request_membership(
        community: Community, pubkey: str, request_id: str, note: str | None = None
    ) -> Call[str]:
        return _value(
            "SELECT buzz.request_membership(%s, %s, %s, %s)", community, pubkey, request_id, note
        )

    @staticmethod
    def approve_join_request(community: Community, request_id: str, approved_by: str) -> Call[str]:
        return _value(
            "SELECT buzz.approve_join_request(%s, %s, %s)", community, request_id, approved_by
        )

    # Role writes (SPEC §6): each publishes its 33534 or kind 5, and the list when member tags
    # change

    @staticmethod
    def define_role(
        community: Community,
        role: str,
        label: str,
        description: str | None = None,
        color: int | None = None,
        order: int | None = None,
    ) -> Call[str]:
        return _value(
            "SELECT buzz.define_role(%s, %s, %s, %s, %s, %s)",
            community,
            role,
            label,
            description,
            color,
            order,
        )

    @staticmethod
    def delete_role(community: Community, role: str) -> Call[str]:
        return _value("SELECT buzz.delete_role(%s, %s)", community, role)

    @staticmethod
    def assign_role(community: Community, pubkey: str, role: str) -> Call[str]:
        return _value("SELECT buzz.assign_role(%s, %s, %s)", community, pubkey, role)

    @staticmethod
    def unassign_role(community: Community, pubkey: str, role: str) -> Call[str]:
        return _value("SELECT buzz.unassign_role(%s, %s, %s)", community, pubkey, role)

    # Writes that change no member (no list), offered here so they can share a transaction

    @staticmethod
    def create_relay_invite(
        community: Community,
        created_by: str,
        max_uses: int | None = 1,
        ttl: dt.timedelta = dt.timedelta(hours=72),
        code: str | None = None,
        sealed: str | None = None,
    ) -> Call[Invite]:
        """code: the caller's own (None: one is drawn); sealed: kept with the invite, as
        relay_invites returns it (the relay's RelayKey.seal(code))."""
        return _row(
            "SELECT * FROM buzz.create_relay_invite(%s, %s, %s, %s, %s, %s)",
            community,
            created_by,
            max_uses,
            ttl,
            code,
            sealed,
            into=Invite,
        )

    @staticmethod
    def set_invite_quota(community: Community, role: str, quota: int | None) -> Call[str]:
        """How many members an 'admin' or a 'member' may bring in; None: no limit."""
        return _value("SELECT buzz.set_invite_quota(%s, %s, %s)", community, role, quota)

    @staticmethod
    def invites_left(community: Community, pubkey: str) -> Call[int | None]:
        """How many more members `pubkey` may bring in (None: no limit), read in this
        transaction."""
        return _value("SELECT buzz.invites_left(%s, %s)", community, pubkey)

    @staticmethod
    def revoke_relay_invite(community: Community, invite_id: uuid.UUID | str) -> Call[str]:
        return _value("SELECT buzz.revoke_relay_invite(%s, %s)", community, invite_id)

    @staticmethod
    def allowlist_add(community: Community, pubkey: str, note: str | None = None) -> Call[str]:
        return _value("SELECT buzz.allowlist_add(%s, %s, %s)", community, pubkey, note)

    @staticmethod
    def archive_community(community: Community) -> Call[str]:
        return _value("SELECT buzz.archive_community(%s)", community)

    @staticmethod
    def unarchive_community(community: Community) -> Call[str]:
        return _value("SELECT buzz.unarchive_community(%s)", community)

    @staticmethod
    def set_community_profile(community: Community, field: str, value: str | None) -> Call[str]:
        """field: name, description or icon; None clears it."""
        return _value("SELECT buzz.set_community_profile(%s, %s, %s)", community, field, value)

    @staticmethod
    def set_join_policy(community: Community, policy: str) -> Call[str]:
        return _value("SELECT buzz.set_join_policy(%s, %s)", community, policy)

    @staticmethod
    def unban_pubkey(community: Community, pubkey: str) -> Call[str]:
        return _value("SELECT buzz.unban_pubkey(%s, %s)", community, pubkey)

    @staticmethod
    def reject_join_request(
        community: Community, request_id: str, reason: str | None = None
    ) -> Call[str]:
        return _value(
            "SELECT buzz.reject_join_request(%s, %s, %s)", community, request_id, reason
        )


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


class Reads:
    """Every read's SQL, once: the query each runs, which Membership and AsyncMembership
    bind as methods of their own."""

    # Reads

    @staticmethod
    def community_id(host: str) -> Query[uuid.UUID | None]:
        return _query(_first, "SELECT buzz.community_id(%s)", host)

    @staticmethod
    def relay_members(community: Community) -> Query[list[Member]]:
        return _query(_members, "SELECT * FROM buzz.relay_members(%s)", community)

    @staticmethod
    def relay_invites(community: Community) -> Query[list[InviteRecord]]:
        """Every invite of the community, oldest first, without its code (writers only)."""
        return _query(_invites, "SELECT * FROM buzz.relay_invites(%s)", community)

    @staticmethod
    def community_profile(community: Community) -> Query[CommunityProfile | None]:
        """Its name, description, icon and join policy; None for an unknown community."""
        return _query(_profile, "SELECT * FROM buzz.community_profile(%s)", community)

    @staticmethod
    def banned_pubkeys(community: Community) -> Query[list[Ban]]:
        return _query(_bans, "SELECT * FROM buzz.banned_pubkeys(%s)", community)

    @staticmethod
    def invites_left(community: Community, pubkey: str) -> Query[int | None]:
        """How many more members `pubkey` may bring in by invites: None when unlimited (the
        owner; admins by default), 0 for a non-member."""
        return _query(_first, "SELECT buzz.invites_left(%s, %s)", community, pubkey)

    @staticmethod
    def invite_quotas(community: Community) -> Query[dict[str, int | None]]:
        """{'admin': quota, 'member': quota} (None: no limit); {} for an unknown community."""
        return _query(dict, "SELECT role, quota FROM buzz.invite_quotas(%s)", community)

    @staticmethod
    def join_requests(community: Community) -> Query[list[JoinRequest]]:
        """The pending join requests, oldest first."""
        return _query(_join_requests, "SELECT * FROM buzz.join_requests(%s)", community)

    @staticmethod
    def member_list(community: Community) -> Query[dict[str, Any] | None]:
        return _query(_first, "SELECT buzz.member_list(%s)", community)

    @staticmethod
    def membership_events(community: Community, since: int = 0) -> Query[list[dict[str, Any]]]:
        return _query(_column, "SELECT buzz.membership_events(%s, %s)", community, since)

    @staticmethod
    def role_definitions(community: Community) -> Query[list[dict[str, Any]]]:
        """The live signed 33534 role definitions, by role id."""
        return _query(_column, "SELECT buzz.role_definitions(%s)", community)

    @staticmethod
    def role_deletions(community: Community) -> Query[list[dict[str, Any]]]:
        """The signed kind 5 deletions of deleted role definitions, by role id."""
        return _query(_column, "SELECT buzz.role_deletions(%s)", community)

    @staticmethod
    def member_list_drift(community: Community | None = None) -> Query[list[Drift]]:
        return _query(_drifts, "SELECT * FROM buzz.member_list_drift(%s)", community)

    @staticmethod
    def communities() -> Query[list[CommunityRow]]:
        """Every community, by host."""
        return _query(_communities, "SELECT * FROM buzz.communities()")

    @staticmethod
    def relay_member(community: Community, pubkey: str) -> Query[Member | None]:
        """One member, by primary key; None for a non-member."""
        return _query(_one_member, "SELECT * FROM buzz.relay_member(%s, %s)", community, pubkey)

    @staticmethod
    def invite_branch(community: Community, pubkey: str) -> Query[list[tuple[str, str]]]:
        """(pubkey, role) of the member and everyone they brought in, recursively, by pubkey:
        what remove_relay_member(..., with_branch=True) takes; [] for the owner or a
        non-member."""
        return _query(
            _tuples, "SELECT pubkey, role FROM buzz.invite_branch(%s, %s)", community, pubkey
        )

    @staticmethod
    def relay_key() -> Query[str | None]:
        """The relay key the database records (hex); None before the first write."""
        return _query(_first, "SELECT buzz.relay_key()")

    @staticmethod
    def members_with_invites_left(community: Community) -> Query[list[tuple[str, str, str | None, int | None]]]:
        """(pubkey, role, added_by, invites_left) of every member, by pubkey: the invite tree
        as NIP-86 listinvitetree and the desk show it."""
        return _query(
            _tuples,
            "SELECT m.pubkey, m.role, m.added_by, buzz.invites_left(%s, m.pubkey)"
            " FROM buzz.relay_members(%s) m ORDER BY m.pubkey",
            community,
            community,
        )

    # The events as the relay sends them: each as its JSON text, unparsed, with the values of
    # the single-letter tags a filter can name (relay/backend.py)

    @staticmethod
    def events_text_since(
        community: Community,
        since: int,
        *,
        with_list: bool = True,
        with_events: bool = True,
        with_definitions: bool = True,
        with_deletions: bool = True,
    ) -> Query[list[tuple[str, str | None, str | None, str | None, str | None]]]:
        """In one snapshot: the live list, the 8000/8001 events (oldest first), the live role
        definitions (33534) and role deletions (kind 5) with created_at >= since; each as
        (text, p, d, a, k)."""
        c = community
        return _query(
            _tuples,
            _EVENTS_TEXT_SINCE,
            *(c, with_list, c, since, with_events, c, with_definitions, since),
            *(c, with_deletions, since),
        )

    @staticmethod
    def membership_events_newest_text(
        community: Community,
        kinds: Sequence[int] | None,
        ids: Sequence[str] | None,
        members: Sequence[str] | None,
        since: int | None,
        until: int | None,
        limit: int,
    ) -> Query[list[tuple[str, str | None, str | None, str | None, str | None]]]:
        """buzz.membership_events_newest: one REQ filter's 8000/8001 events, newest first, as
        (text, p, None, None, None)."""
        return _query(
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

    @staticmethod
    def take_rate(scope: str, keys: Sequence[str], limit: int, seconds: int) -> Query[bool]:
        return _query(
            _first, "SELECT buzz.take_rate(%s, %s, %s, %s)", scope, list(keys), limit, seconds
        )

    @staticmethod
    def rate_reached(scope: str, keys: Sequence[str], limit: int, seconds: int) -> Query[bool]:
        return _query(
            _first, "SELECT buzz.rate_reached(%s, %s, %s, %s)", scope, list(keys), limit, seconds
        )

    @staticmethod
    def accept_auth_event(event_id: str, fresh_until: dt.datetime) -> Query[bool]:
        return _query(_first, "SELECT buzz.accept_auth_event(%s, %s)", event_id, fresh_until)

    # Moderation behind the gate (changes no member): one statement each

    @staticmethod
    def ban_event(
        community: Community, event_id: str, reason: str | None, banned_by: str | None
    ) -> Query[str]:
        return _query(
            _first, "SELECT buzz.ban_event(%s, %s, %s, %s)", community, event_id, reason, banned_by
        )

    @staticmethod
    def unban_event(community: Community, event_id: str) -> Query[str]:
        return _query(_first, "SELECT buzz.unban_event(%s, %s)", community, event_id)

    @staticmethod
    def banned_events(community: Community) -> Query[list[tuple[str, str | None]]]:
        return _query(
            _tuples, "SELECT event_id, reason FROM buzz.banned_events(%s)", community
        )

    @staticmethod
    def allow_kind(community: Community, kind: int) -> Query[str]:
        return _query(_first, "SELECT buzz.allow_kind(%s, %s)", community, kind)

    @staticmethod
    def disallow_kind(community: Community, kind: int) -> Query[str]:
        return _query(_first, "SELECT buzz.disallow_kind(%s, %s)", community, kind)

    @staticmethod
    def clear_kind_rule(community: Community, kind: int) -> Query[str]:
        return _query(_first, "SELECT buzz.clear_kind_rule(%s, %s)", community, kind)

    @staticmethod
    def kind_rules(community: Community) -> Query[list[tuple[int, bool]]]:
        return _query(_tuples, "SELECT kind, allowed FROM buzz.kind_rules(%s)", community)

    @staticmethod
    def block_ip(
        community: Community, network: str, reason: str | None, blocked_by: str | None
    ) -> Query[str]:
        return _query(
            _first,
            "SELECT buzz.block_ip(%s, %s::inet, %s, %s)",
            community,
            network,
            reason,
            blocked_by,
        )

    @staticmethod
    def unblock_ip(community: Community, network: str) -> Query[str]:
        return _query(_first, "SELECT buzz.unblock_ip(%s, %s::inet)", community, network)

    @staticmethod
    def blocked_ips(community: Community) -> Query[list[tuple[Any, str | None]]]:
        return _query(_tuples, "SELECT address, reason FROM buzz.blocked_ips(%s)", community)

    @staticmethod
    def assign_method(
        community: Community, pubkey: str, method: str, assigned_by: str | None
    ) -> Query[str]:
        return _query(
            _first,
            "SELECT buzz.assign_method(%s, %s, %s, %s)",
            community,
            pubkey,
            method,
            assigned_by,
        )

    @staticmethod
    def unassign_method(community: Community, pubkey: str, method: str) -> Query[str]:
        return _query(
            _first, "SELECT buzz.unassign_method(%s, %s, %s)", community, pubkey, method
        )

    @staticmethod
    def method_assignees(community: Community) -> Query[list[tuple[str, str]]]:
        """(pubkey, method) of every assignment, by pubkey and method."""
        return _query(
            _tuples, "SELECT pubkey, method FROM buzz.method_assignees(%s)", community
        )

    @staticmethod
    def moderation_rules(community: Community | None) -> Query[list[tuple[uuid.UUID, str, str]]]:
        """(community, rule, subject) of one community's rules, or every community's."""
        return _query(
            _tuples,
            "SELECT community_id, rule, subject FROM buzz.moderation_rules(%s)",
            community,
        )

    # Members' own profiles (kind 0; changes no member): one statement each

    @staticmethod
    def set_member_profile(community: Community, event: str) -> Query[str]:
        """`event`: the member's kind 0 as NIP-01 JSON text: 'stored', 'not_member', 'older'."""
        return _query(_first, "SELECT buzz.set_member_profile(%s, %s)", community, event)

    @staticmethod
    def member_profiles(
        community: Community,
        authors: Sequence[str] | None = None,
        since: int | None = None,
        until: int | None = None,
        limit: int = 500,
        ids: Sequence[str] | None = None,
    ) -> Query[list[str]]:
        """One REQ filter's profiles, newest first, each as its NIP-01 JSON text."""
        return _query(
            _column,
            "SELECT p FROM buzz.member_profiles(%s, %s, %s, %s, %s, %s) p",
            community,
            None if authors is None else list(authors),
            since,
            until,
            limit,
            None if ids is None else list(ids),
        )


# The two phases of publishing, shared by both APIs.
PREPARE = (
    "SELECT community_id, id, kind, created_at, serialized FROM buzz.prepare_membership_events(%s)"
)
# The count keeps insert's answer off the wire: it returns the very events signed, which
# Published builds from prepare's text (sending and parsing them would cost more than the rest
# of insert at 10,000 members). Nothing reads the count: insert stores every prepared event or
# raises (BZSTL, BZSIG).
INSERT = "SELECT pg_catalog.count(*) FROM buzz.insert_signed_events(%s::text[], %s::text[])"


def prepared_events(rows: Sequence[tuple[Any, ...]]) -> list[PreparedEvent]:
    return [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


def insert_params(prepared: Sequence[PreparedEvent], sigs: Sequence[str]) -> tuple[str, str]:
    """The ids and signatures as text[] literals.

    Both are plain lowercase hex (the signer checked every id against its event, and made
    every signature), so no element needs quoting: joining them costs about a tenth of
    psycopg adapting a 10,000-element list element by element.
    """
    return "{" + ",".join(ev.id for ev in prepared) + "}", "{" + ",".join(sigs) + "}"
