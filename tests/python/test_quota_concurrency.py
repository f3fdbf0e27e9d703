"""Invite quotas and branches under concurrency, with real sessions: every "B waits for A"
proven from pg_locks (sessions.wait_until_blocked; on a cluster citus_locks) before the test
goes on, and every write made through Membership (whole transactions with signed lists), so
that what is live is checked as published.

1. Sessions racing the last invites of one member make exactly its quota. The quota lock is
   the creator's member row (FOR NO KEY UPDATE, create_relay_invite): the second creation
   waits for the first; when the first commits the second finds nothing left (BZQTA), and
   when it rolls back the second makes its invite. With three sessions, both late ones wait
   and both are refused.
2. A branch removal racing a join by an invite from that branch. The branch removal takes
   the ban lock exclusive, every join shares it: a claim under way finishes first and its
   new member, hanging from the branch, goes with the branch; a claim that comes later waits,
   then finds the invite revoked with its creator ('invalid'). Either way no member hangs
   from a removed inviter, and the live list names exactly the members.
"""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_membership import assert_live_list, members_of, new_pubkey
from sessions import (
    Stage,
    Wait,
    assert_waits_for_the_ban_lock,
    backend_pid,
    publish_and_commit,
    wait_until_blocked,
)

from buzz_signer.errors import InviteQuotaExhausted
from buzz_signer.membership import Membership
from buzz_signer.nostr import KIND_ADD_USER, KIND_REMOVE_USER

pytest_plugins = ("fixtures_membership",)

CREATE_INVITE = "SELECT invite_id FROM buzz.create_relay_invite(%s, %s, %s)"


def assert_waits_for_the_creators_row(wait: Wait) -> None:
    """A wait for the row lock of a member row (the quota lock), from create_relay_invite."""
    assert wait.locktype == "transactionid", wait
    assert "buzz_private.relay_members" in wait.queued_rows, wait
    assert "create_relay_invite" in wait.query, wait


def invites_by(reader: Membership, cid: Any, creator: str) -> list[int | None]:
    """The max_uses of each invite `creator` made."""
    return sorted(i.max_uses for i in reader.relay_invites(cid) if i.created_by == creator)


def a_member_with_one_invite_left(mem: Membership, cid: Any, owner: str) -> str:
    """A member, quota 2, who made a one-use invite already."""
    assert mem.set_invite_quota(cid, "member", 2) == "updated"
    member = new_pubkey()
    assert mem.add_relay_member(cid, member, "member", owner).outcome == "added"
    mem.create_relay_invite(cid, member)
    assert mem.invites_left(cid, member) == 1
    return member


# 1: the last invite of one member


@pytest.mark.parametrize("first_ends", ["commit", "rollback"])
def test_two_sessions_racing_the_last_invite_make_exactly_the_quota(
    db_url, mem, reader, su, key, community, first_ends
):
    cid = community.cid
    member = a_member_with_one_invite_left(mem, cid, community.owner)
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        first = stage.raw_writer()
        assert first.value(CREATE_INVITE, cid, member, 1) is not None
        second = stage.background(lambda: m.create_relay_invite(cid, member), "second invite")
        assert_waits_for_the_creators_row(wait_until_blocked(su, pid, first.pid, call=second))
        if first_ends == "commit":
            first.commit()
            error = second.error()
            assert isinstance(error, InviteQuotaExhausted), second.describe()
            assert error.sqlstate == "BZQTA"
            assert str(error) == "p_created_by has no invites left in this community"
        else:
            first.conn.rollback()
            assert second.result().code
    assert invites_by(reader, cid, member) == [1, 1]  # the quota, exactly
    assert reader.invites_left(cid, member) == 0


def test_three_sessions_racing_the_last_invite_one_wins(db_url, mem, reader, su, key, community):
    cid = community.cid
    member = a_member_with_one_invite_left(mem, cid, community.owner)
    with Stage(db_url, key) as stage:
        first = stage.raw_writer()
        assert first.value(CREATE_INVITE, cid, member, 1) is not None
        second_m, third_m = stage.membership(), stage.membership()
        second_pid, third_pid = backend_pid(second_m.conn), backend_pid(third_m.conn)
        second = stage.background(lambda: second_m.create_relay_invite(cid, member), "second")
        wait = wait_until_blocked(su, second_pid, first.pid, call=second)
        assert_waits_for_the_creators_row(wait)
        # The third queues behind the second, which holds the row's place in line.
        third = stage.background(lambda: third_m.create_relay_invite(cid, member), "third")
        wait = wait_until_blocked(su, third_pid, second_pid, call=third)
        assert wait.locktype == "tuple" and wait.relation == "buzz_private.relay_members", wait
        first.commit()
        for late in (second, third):
            assert isinstance(late.error(), InviteQuotaExhausted), late.describe()
    assert invites_by(reader, cid, member) == [1, 1]
    assert reader.invites_left(cid, member) == 0


def test_asking_for_every_use_left_against_one_more(db_url, mem, reader, su, key, community):
    """The first takes both uses left in one invite; the second, waiting, gets none."""
    cid = community.cid
    assert mem.set_invite_quota(cid, "member", 2) == "updated"
    member = new_pubkey()
    mem.add_relay_member(cid, member)
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        first = stage.raw_writer()
        assert first.value(CREATE_INVITE, cid, member, 2) is not None
        second = stage.background(lambda: m.create_relay_invite(cid, member), "second invite")
        assert_waits_for_the_creators_row(wait_until_blocked(su, pid, first.pid, call=second))
        first.commit()
        assert isinstance(second.error(), InviteQuotaExhausted), second.describe()
    assert invites_by(reader, cid, member) == [2]


# 2: a branch removal racing a join by an invite from that branch


def a_branch(mem: Membership, cid: Any, owner: str) -> tuple[str, str, str]:
    """top (brought in by the owner) brought in middle, who made a one-use invite: its code."""
    assert mem.set_invite_quota(cid, "member", 5) == "updated"
    top, middle = new_pubkey(), new_pubkey()
    assert mem.add_relay_member(cid, top, "member", owner).outcome == "added"
    assert mem.add_relay_member(cid, middle, "member", top).outcome == "added"
    return top, middle, mem.create_relay_invite(cid, middle).code


def assert_nobody_hangs_from(reader: Membership, cid: Any, removed: set[str]) -> None:
    members = reader.relay_members(cid)
    assert not removed & {m.pubkey for m in members}
    hanging = [(m.pubkey, m.added_by) for m in members if m.added_by in removed]
    assert hanging == [], "members hang from a removed inviter"


def removed_by(events: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> set[str]:
    return {ev["tags"][1][1] for ev in events if ev["kind"] == KIND_REMOVE_USER}


def test_a_branch_removal_waits_for_a_held_claim_then_takes_the_new_member(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    top, middle, code = a_branch(mem, cid, owner)
    joiner = new_pubkey()
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        claim = stage.raw_writer()
        joined = claim.value(
            "SELECT outcome FROM buzz.claim_relay_invite(%s, %s, %s)", cid, code, joiner
        )
        assert joined == "joined"
        removal = stage.background(
            lambda: m.remove_relay_member(cid, top, with_branch=True), "remove_relay_member"
        )
        wait = wait_until_blocked(su, pid, claim.pid, call=removal)
        assert_waits_for_the_ban_lock(su, wait, pid, cid, "ExclusiveLock", "remove_relay_member")
        claimed = publish_and_commit(claim)
        removed = removal.result()
    # The claim committed its member, hanging from middle; the branch then took it too.
    assert [(ev["kind"], ev["tags"][1:]) for ev in claimed[1:]] == [
        (KIND_ADD_USER, [["p", joiner]])
    ]
    assert removed.outcome == "removed"
    assert removed_by(removed.events) == {top, middle, joiner}
    assert_live_list(reader, cid, removed.snapshot, key.pubkey, {owner: "owner"})
    assert_nobody_hangs_from(reader, cid, {top, middle, joiner})
    assert reader.relay_invites(cid) == []  # the branch's invite went with it
    assert reader.member_list_drift() == []


def test_a_claim_waits_for_a_held_branch_removal_then_finds_the_invite_revoked(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    top, middle, code = a_branch(mem, cid, owner)
    stays = new_pubkey()
    assert mem.add_relay_member(cid, stays, "member", owner).outcome == "added"
    joiner = new_pubkey()
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        removal = stage.raw_writer()
        assert removal.value("SELECT buzz.remove_relay_member(%s, %s, true)", cid, top) == "removed"
        claim = stage.background(
            lambda: m.claim_relay_invite(cid, code, joiner), "claim_relay_invite"
        )
        wait = wait_until_blocked(su, pid, removal.pid, call=claim)
        assert_waits_for_the_ban_lock(su, wait, pid, cid, "ShareLock", "claim_relay_invite")
        removed_events = publish_and_commit(removal)
        claimed = claim.result()
    assert removed_by(removed_events) == {top, middle}
    # The invite went with its creator: the code names no invite any more.
    assert claimed.outcome == "invalid" and claimed.snapshot is None
    assert members_of(reader, cid) == {owner: "owner", stays: "member"}
    assert reader.member_list(cid) == removed_events[0]
    assert_nobody_hangs_from(reader, cid, {top, middle})
    assert reader.member_list_drift() == []


def test_a_plain_removal_re_attaches_a_member_a_held_claim_brings_in(
    db_url, mem, reader, su, key, community
):
    """Without the branch nothing waits for the joins: the removal revokes the invite, whose
    row the claim holds, so it waits for the claim there; then re-attaches the new member."""
    cid, owner = community.cid, community.owner
    top, middle, code = a_branch(mem, cid, owner)
    joiner = new_pubkey()
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        claim = stage.raw_writer()
        joined = claim.value(
            "SELECT outcome FROM buzz.claim_relay_invite(%s, %s, %s)", cid, code, joiner
        )
        assert joined == "joined"
        removal = stage.background(
            lambda: m.remove_relay_member(cid, middle), "remove_relay_member"
        )
        wait = wait_until_blocked(su, pid, claim.pid, call=removal)
        assert wait.locktype == "transactionid" and "remove_relay_member" in wait.query, wait
        assert "buzz_private.relay_invites" in wait.queued_rows, wait
        publish_and_commit(claim)
        removed = removal.result()
    assert removed.outcome == "removed" and removed_by(removed.events) == {middle}
    parents = {mb.pubkey: mb.added_by for mb in reader.relay_members(cid)}
    assert parents == {owner: "create", top: owner, joiner: top}
    assert_live_list(reader, cid, removed.snapshot, key.pubkey, {
        owner: "owner", top: "member", joiner: "member"})  # fmt: skip
    assert reader.member_list_drift() == []
