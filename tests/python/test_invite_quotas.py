"""Invite quotas and branches through the Python layer (Membership and AsyncMembership, and
their transaction objects), checked against the database: set_invite_quota, invites_left,
invite_quotas, create_relay_invite refused with InviteQuotaExhausted (BZQTA),
remove_relay_member(..., with_branch=...) with its one list and one 8001 per member, and the
re-attachment of those a departed member brought in. Every list published is checked as
committed (assert_live_list) and the lists never drift.

The SQL behaviour in detail is pgTAP's (tests/pgtap/test_invite_quotas.sql,
test_invite_branches.sql); concurrency is test_quota_concurrency.py's.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from fixtures_membership import assert_live_list, assert_user_events, members_of, new_pubkey

from buzz_signer.errors import InvalidParameter, InvalidRole, InviteQuotaExhausted

pytest_plugins = ("fixtures_membership",)


@pytest.fixture
def mem(either_api: Any) -> Any:
    """Each test runs on Membership and on AsyncMembership."""
    return either_api


def parents(reader: Any, cid: Any) -> dict[str, str | None]:
    return {m.pubkey: m.added_by for m in reader.relay_members(cid)}


def test_quotas_default_set_and_read(mem, reader, community):
    cid, owner = community.cid, community.owner
    member, admin = new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, member)
    mem.add_relay_member(cid, admin, "admin")
    assert mem.invite_quotas(cid) == {"admin": None, "member": 0}
    assert mem.invite_quotas(uuid.uuid4()) == {}
    assert (mem.invites_left(cid, owner), mem.invites_left(cid, admin)) == (None, None)
    assert (mem.invites_left(cid, member), mem.invites_left(cid, new_pubkey())) == (0, 0)

    assert mem.set_invite_quota(cid, "member", 2) == "updated"
    assert mem.set_invite_quota(cid, "member", 2) == "unchanged"
    assert mem.set_invite_quota(cid, "admin", 1) == "updated"
    assert reader.invite_quotas(cid) == {"admin": 1, "member": 2}
    assert mem.invites_left(cid, member.upper()) == 2
    assert mem.invites_left(cid, admin) == 1
    assert mem.invites_left(cid, owner) is None  # the owner has no quota
    assert mem.set_invite_quota(cid, "admin", None) == "updated"
    assert reader.invite_quotas(cid) == {"admin": None, "member": 2}

    with pytest.raises(InvalidRole):
        mem.set_invite_quota(cid, "owner", 1)
    with pytest.raises(InvalidParameter):
        mem.set_invite_quota(cid, "member", -1)
    assert reader.invite_quotas(cid) == {"admin": None, "member": 2}


def test_invites_are_counted_and_refused_with_bzqta(mem, reader, key, community):
    cid, owner = community.cid, community.owner
    member = new_pubkey()
    mem.add_relay_member(cid, member, "member", owner)
    with pytest.raises(InviteQuotaExhausted) as refused:
        mem.create_relay_invite(cid, member)
    assert refused.value.sqlstate == "BZQTA"
    assert "set_invite_quota" in (refused.value.hint or "")
    assert member not in str(refused.value)  # the message names the argument, not the key

    assert mem.set_invite_quota(cid, "member", 3) == "updated"
    invite = mem.create_relay_invite(cid, member, max_uses=2, ttl=dt.timedelta(hours=1))
    assert mem.invites_left(cid, member) == 1
    with pytest.raises(InviteQuotaExhausted, match="has 1 invites left"):
        mem.create_relay_invite(cid, member, max_uses=2)
    with pytest.raises(InviteQuotaExhausted):
        mem.create_relay_invite(cid, member, max_uses=None)
    joined = mem.claim_relay_invite(cid, invite.code, new_pubkey())
    assert joined.outcome == "joined"
    assert_live_list(reader, cid, joined.snapshot, key.pubkey)
    assert mem.invites_left(cid, member) == 1  # a use became a member brought in
    mem.create_relay_invite(cid, member)
    assert mem.invites_left(cid, member) == 0
    assert [i.max_uses for i in reader.relay_invites(cid) if i.created_by == member] == [2, 1]
    # A label (an operator's invite) and the owner have no quota.
    mem.create_relay_invite(cid, "buzz-admin", max_uses=None)
    mem.create_relay_invite(cid, owner, max_uses=None)


def test_a_transaction_counts_its_own_invites(mem, reader, community):
    """invites_left in a transaction sees the transaction's own invites."""
    cid = community.cid
    member = new_pubkey()
    mem.add_relay_member(cid, member)
    assert mem.set_invite_quota(cid, "member", 2) == "updated"
    with mem.transaction() as tx:
        tx.create_relay_invite(cid, member)
        assert tx.invites_left(cid, member) == 1
        tx.create_relay_invite(cid, member)
        assert tx.invites_left(cid, member) == 0
        assert tx.set_invite_quota(cid, "member", 3) == "updated"
        assert tx.invites_left(cid, member) == 1
    assert tx.events == ()  # no member changed: nothing signed
    assert reader.invites_left(cid, member) == 1
    assert reader.invite_quotas(cid)["member"] == 3


def test_remove_with_the_branch(mem, reader, key, community):
    cid, owner = community.cid, community.owner
    top, child, grandchild, other = (new_pubkey() for _ in range(4))
    mem.add_relay_member(cid, top, "admin", owner)
    mem.add_relay_member(cid, child, "member", top)
    mem.add_relay_member(cid, grandchild, "member", child)
    mem.add_relay_member(cid, other, "member", owner)
    mem.create_relay_invite(cid, top)  # an admin's: revoked with it

    removed = mem.remove_relay_member(cid, top, with_branch=True)
    assert removed.outcome == "removed"
    assert_user_events(reader, cid, removed, key.pubkey, set(), {top, child, grandchild})
    assert_live_list(reader, cid, removed.snapshot, key.pubkey, {owner: "owner", other: "member"})
    assert reader.relay_invites(cid) == []
    assert mem.remove_relay_member(cid, owner, with_branch=True).outcome == "is_owner"
    assert mem.remove_relay_member(cid, top, with_branch=True).outcome == "not_member"
    assert reader.member_list_drift() == []


def test_every_departure_re_attaches_who_the_member_brought_in(mem, reader, key, community):
    cid, owner = community.cid, community.owner
    a, b, c, d, e = (new_pubkey() for _ in range(5))
    mem.add_relay_member(cid, a, "member", owner)
    mem.add_relay_member(cid, b, "member", a)
    mem.add_relay_member(cid, c, "member", b)
    mem.add_relay_member(cid, d, "member", c)
    mem.add_relay_member(cid, e, "member", d)

    left = mem.remove_relay_member(cid, b)  # a leave (NIP-43 28936) is this call
    assert_user_events(reader, cid, left, key.pubkey, set(), {b})
    assert parents(reader, cid)[c] == a
    checked = mem.remove_relay_member_if_role(cid, c, "member")
    assert checked.outcome == "removed"
    assert parents(reader, cid)[d] == a
    banned = mem.ban_pubkey(cid, d, "spam")
    assert banned.outcome == "banned"
    assert parents(reader, cid) == {owner: "create", a: owner, e: a}
    assert_live_list(reader, cid, banned.snapshot, key.pubkey, {
        owner: "owner", a: "member", e: "member"})  # fmt: skip
    assert reader.member_list_drift() == []


def test_branches_and_quotas_share_one_transaction(mem, reader, key, community):
    """Several writes, one list: a branch removed and a member added in one transaction."""
    cid, owner = community.cid, community.owner
    top, child, newcomer = new_pubkey(), new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, top, "member", owner)
    mem.add_relay_member(cid, child, "member", top)
    with mem.transaction() as tx:
        assert tx.remove_relay_member(cid, top, True) == "removed"
        assert tx.add_relay_member(cid, newcomer, "member", owner) == "added"
    [snapshot] = tx.lists.values()
    assert_live_list(reader, cid, snapshot, key.pubkey, {owner: "owner", newcomer: "member"})
    assert members_of(reader, cid) == {owner: "owner", newcomer: "member"}
    kinds = sorted((ev["kind"], ev["tags"][1][1]) for ev in tx.events if ev["kind"] != 13534)
    assert kinds == sorted([(8000, newcomer), (8001, top), (8001, child)])
