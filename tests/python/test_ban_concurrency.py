"""A ban racing a join, with real sessions: every "B waits for A" proven from pg_locks
(sessions.wait_until_blocked; on a cluster citus_locks) before the test goes on, and every
write made through Membership (whole transactions with signed lists), so that the live list
is checked as published.

The ban lock (buzz_private.lock_bans: an advisory lock per community) is taken shared by
every path that makes a member and exclusive by ban_pubkey, so a ban and a join of the same
pubkey never both commit unseen by the other:

1. A claim of an invite holds its transaction open: a ban of the claiming pubkey waits for
   the ban lock; once the claim commits, the ban removes the new member (an 8001 and a list).
2. A ban holds its transaction open: a claim of that pubkey waits for the ban lock, then
   answers 'banned' and consumes no use.
3. The same two for an approval of a join request: the ban waits, then removes the approved
   member; or the approval waits, then finds the request gone (a ban drops it): 'not_found'.
4. The same two for a batch of adds (add_relay_members): the ban waits, then removes the one
   it bans; or the batch waits, then skips the banned pubkey.

In every case the live list names exactly the members afterwards, and the pubkey is banned.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import psycopg
from fixtures_membership import (
    assert_list_event,
    assert_live_list,
    assert_user_events,
    members_of,
    new_pubkey,
    state,
)
from sessions import (
    Stage,
    assert_waits_for_the_ban_lock,
    backend_pid,
    publish_and_commit,
    wait_until_blocked,
)

from buzz_signer.membership import Membership, MembershipWrite
from buzz_signer.nostr import KIND_ADD_USER, KIND_MEMBERSHIP_LIST

pytest_plugins = ("fixtures_membership",)









def ban_waits_for_a_held_join(
    db_url: str,
    key: Any,
    su: psycopg.Connection,
    community: Any,
    join_sql: str,
    join_args: tuple[Any, ...],
    joined: Any,
    banned: str,
) -> tuple[list[dict[str, Any]], MembershipWrite]:
    """`join_sql` in a transaction held open (it answers `joined`), then ban_pubkey(`banned`)
    in a session of its own, which must wait for the ban lock; the join publishes and commits,
    then the ban goes on. Returns the join's signed events and the ban's write."""
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        join = stage.raw_writer()
        assert join.value(join_sql, *join_args) == joined
        banning = stage.background(lambda: m.ban_pubkey(community, banned, "spam"), "ban_pubkey")
        wait = wait_until_blocked(su, pid, join.pid, call=banning)
        assert_waits_for_the_ban_lock(su, wait, pid, community, "ExclusiveLock", "ban_pubkey")
        joined_events = publish_and_commit(join)
        return joined_events, banning.result()


def join_waits_for_a_held_ban(
    db_url: str,
    key: Any,
    su: psycopg.Connection,
    community: Any,
    banned: str,
    join: Callable[[Membership], MembershipWrite],
    function: str,
) -> MembershipWrite:
    """ban_pubkey(`banned`) in a transaction held open, then `join` in a session of its own,
    which must wait for the ban lock; the ban publishes (if it removed someone) and commits,
    then the join goes on. Returns the join's write."""
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        ban = stage.raw_writer()
        assert ban.value("SELECT buzz.ban_pubkey(%s, %s)", community, banned) == "banned"
        joining = stage.background(lambda: join(m), function)
        wait = wait_until_blocked(su, pid, ban.pid, call=joining)
        assert_waits_for_the_ban_lock(su, wait, pid, community, "ShareLock", function)
        assert publish_and_commit(ban) == []  # a stranger banned: no list to write
        return joining.result()


def assert_banned(reader: Membership, community: Any, pubkeys: set[str]) -> None:
    assert {b.pubkey for b in reader.banned_pubkeys(community)} == pubkeys


# 1 and 2: a claim of an invite


def test_a_ban_waits_for_a_held_claim_then_removes_the_new_member(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    invite = mem.create_relay_invite(cid, owner, max_uses=2)
    joiner = new_pubkey()
    joined_events, banned = ban_waits_for_a_held_join(
        db_url,
        key,
        su,
        cid,
        "SELECT outcome FROM buzz.claim_relay_invite(%s, %s, %s)",
        (cid, invite.code, joiner),
        "joined",
        joiner,
    )
    # The claim committed its list and 8000 first; the ban then saw the member and removed it.
    joined_list, added = joined_events
    assert_list_event(joined_list, key.pubkey, {owner: "owner", joiner: "member"})
    assert (added["kind"], added["tags"]) == (KIND_ADD_USER, [["-"], ["p", joiner]])
    assert banned.outcome == "banned"
    assert_user_events(reader, cid, banned, key.pubkey, added=set(), removed={joiner})
    assert joined_list["created_at"] < banned.snapshot["created_at"]
    assert_live_list(reader, cid, banned.snapshot, key.pubkey, {owner: "owner"})
    assert_banned(reader, cid, {joiner})
    [record] = reader.relay_invites(cid)
    assert record.use_count == 1  # the claim's use stays consumed
    assert reader.member_list_drift() == []


def test_a_claim_waits_for_a_held_ban_then_answers_banned(db_url, mem, reader, su, key, community):
    cid, owner = community.cid, community.owner
    invite = mem.create_relay_invite(cid, owner, max_uses=2)
    stranger = new_pubkey()
    before = state(reader, cid)
    claimed = join_waits_for_a_held_ban(
        db_url,
        key,
        su,
        cid,
        stranger,
        lambda m: m.claim_relay_invite(cid, invite.code, stranger),
        "claim_relay_invite",
    )
    assert claimed.outcome == "banned"
    assert claimed.details == {"use_count": 0, "uses_remaining": 2}
    assert claimed.snapshot is None and claimed.events == ()
    assert state(reader, cid) == before  # the same list, members and events
    assert_banned(reader, cid, {stranger})
    [record] = reader.relay_invites(cid)
    assert record.use_count == 0
    assert reader.member_list_drift() == []


# 3: an approval of a join request


def test_a_ban_waits_for_a_held_approval_then_removes_the_new_member(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    assert mem.set_join_policy(cid, "request") == "updated"
    asker, request_id = new_pubkey(), secrets.token_hex(32)
    assert mem.request_membership(cid, asker, request_id, "hello").outcome == "requested"
    joined_events, banned = ban_waits_for_a_held_join(
        db_url,
        key,
        su,
        cid,
        "SELECT buzz.approve_join_request(%s, %s, %s)",
        (cid, request_id, owner),
        "joined",
        asker,
    )
    joined_list, added = joined_events
    assert_list_event(joined_list, key.pubkey, {owner: "owner", asker: "member"})
    assert (added["kind"], added["tags"]) == (KIND_ADD_USER, [["-"], ["p", asker]])
    assert banned.outcome == "banned"
    assert_user_events(reader, cid, banned, key.pubkey, added=set(), removed={asker})
    assert joined_list["created_at"] < banned.snapshot["created_at"]
    assert_live_list(reader, cid, banned.snapshot, key.pubkey, {owner: "owner"})
    assert_banned(reader, cid, {asker})
    assert reader.join_requests(cid) == []
    assert reader.member_list_drift() == []


def test_an_approval_waits_for_a_held_ban_then_finds_the_request_gone(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    assert mem.set_join_policy(cid, "request") == "updated"
    asker, request_id = new_pubkey(), secrets.token_hex(32)
    assert mem.request_membership(cid, asker, request_id).outcome == "requested"
    before = state(reader, cid)
    approved = join_waits_for_a_held_ban(
        db_url,
        key,
        su,
        cid,
        asker,
        lambda m: m.approve_join_request(cid, request_id, owner),
        "approve_join_request",
    )
    # The ban dropped the pending request with it: there is nothing left to approve.
    assert approved.outcome == "not_found"
    assert approved.snapshot is None and approved.events == ()
    assert state(reader, cid) == before
    assert_banned(reader, cid, {asker})
    assert reader.join_requests(cid) == []
    assert reader.member_list_drift() == []


# 4: a batch of adds


def test_a_ban_waits_for_a_held_batch_then_removes_the_one_it_bans(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    first, target, last = sorted(new_pubkey() for _ in range(3))
    joined_events, banned = ban_waits_for_a_held_join(
        db_url,
        key,
        su,
        cid,
        "SELECT buzz.add_relay_members(%s, %s)",
        (cid, [first, target, last]),
        3,
        target,
    )
    joined_list, *added = joined_events
    batch = {owner: "owner", first: "member", target: "member", last: "member"}
    assert_list_event(joined_list, key.pubkey, batch)
    assert [(e["kind"], e["tags"][1][1]) for e in added] == [
        (KIND_ADD_USER, p) for p in (first, target, last)
    ]
    assert banned.outcome == "banned"
    assert_user_events(reader, cid, banned, key.pubkey, added=set(), removed={target})
    expected = {owner: "owner", first: "member", last: "member"}
    assert_live_list(reader, cid, banned.snapshot, key.pubkey, expected)
    assert_banned(reader, cid, {target})
    assert reader.member_list_drift() == []


def test_a_batch_waits_for_a_held_ban_then_skips_the_banned_pubkey(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    first, target, last = sorted(new_pubkey() for _ in range(3))
    added = join_waits_for_a_held_ban(
        db_url,
        key,
        su,
        cid,
        target,
        lambda m: m.add_relay_members(cid, [first, target, last]),
        "add_relay_members",
    )
    assert added.outcome == 2
    assert_user_events(reader, cid, added, key.pubkey, added={first, last}, removed=set())
    expected = {owner: "owner", first: "member", last: "member"}
    assert_live_list(reader, cid, added.snapshot, key.pubkey, expected)
    assert target not in members_of(reader, cid)
    assert_banned(reader, cid, {target})
    assert added.snapshot["kind"] == KIND_MEMBERSHIP_LIST
    assert reader.member_list_drift() == []
