"""Every write path, against a real database, through Membership and through AsyncMembership: the list it returns is the one live list, verifies,
and names exactly the committed members; its 8000/8001 events are the net effect; calls that
change nothing write nothing. Also: lists of one community in one second, batches, and reads
of unknown communities."""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import random
import time
import uuid
from collections.abc import Callable
from typing import Any

import nostr_sdk
import psycopg
import pytest
from conftest import ONE_COMMUNITY_PER_TRANSACTION, PLAIN_SQL_WRITES, params
from fixtures_membership import (
    Community,
    assert_live_list,
    assert_noop,
    assert_user_events,
    expected_tags,
    insert_signed,
    members_of,
    new_host,
    new_pubkey,
    prepare_and_sign,
    state,
    verify_both,
)
from psycopg.types.string import TextLoader

from buzz_signer.errors import CommunityArchived
from buzz_signer.membership import Membership, MembershipWrite

pytest_plugins = ("fixtures_membership",)


@pytest.fixture
def mem(either_api):
    """The API under test: Membership, or AsyncMembership on an AsyncConnection."""
    return either_api


# A change case runs setup writes and then the write under test. It returns
# (community id, the write, the expected members after it, pubkeys added, pubkeys removed).
Change = tuple[Any, MembershipWrite, dict[str, str], set[str], set[str]]


def _create(m: Membership, c: Community, su: Any) -> Change:
    owner = new_pubkey()
    w = m.create_community(new_host().upper(), owner.upper())
    assert w.outcome == "created"
    return w.details["community_id"], w, {owner: "owner"}, {owner}, set()


def _add(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    w = m.add_relay_member(c.cid, a.upper(), "admin", added_by=c.owner)
    assert w.outcome == "added"
    return c.cid, w, {c.owner: "owner", a: "admin"}, {a}, set()


def _add_many(m: Membership, c: Community, su: Any) -> Change:
    a, b, d = new_pubkey(), new_pubkey(), new_pubkey()
    m.add_relay_member(c.cid, d, "admin")
    # Repeats, an existing member and its uppercase spelling are skipped.
    w = m.add_relay_members(c.cid, [a.upper(), b, a, b, d, c.owner.upper()], "member", "import")
    assert w.outcome == 2
    return c.cid, w, {c.owner: "owner", a: "member", b: "member", d: "admin"}, {a, b}, set()


def _claim(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    w = m.claim_relay_membership(c.cid, a, "v1")
    assert w.outcome == "joined"
    return c.cid, w, {c.owner: "owner", a: "member"}, {a}, set()


def _claim_invite(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    invite = m.create_relay_invite(c.cid, c.owner, max_uses=2)
    w = m.claim_relay_invite(c.cid, invite.code, a, "v1")
    assert (w.outcome, w.details) == ("joined", {"use_count": 1, "uses_remaining": 1})
    return c.cid, w, {c.owner: "owner", a: "member"}, {a}, set()


def _remove(m: Membership, c: Community, su: Any) -> Change:
    a, b = new_pubkey(), new_pubkey()
    m.add_relay_members(c.cid, [a, b])
    w = m.remove_relay_member(c.cid, a.upper())
    assert w.outcome == "removed"
    return c.cid, w, {c.owner: "owner", b: "member"}, set(), {a}


def _remove_if_role(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    m.add_relay_member(c.cid, a, "admin")
    w = m.remove_relay_member_if_role(c.cid, a, "admin")
    assert w.outcome == "removed"
    return c.cid, w, {c.owner: "owner"}, set(), {a}


def _update_role(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    w = m.update_relay_member_role(c.cid, a, "admin")
    assert w.outcome == "updated"
    return c.cid, w, {c.owner: "owner", a: "admin"}, set(), set()


def _bootstrap_new(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    w = m.bootstrap_owner(c.cid, a)
    assert w.outcome == "provisioned"
    return c.cid, w, {c.owner: "admin", a: "owner"}, {a}, set()


def _bootstrap_member(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    w = m.bootstrap_owner(c.cid, a)
    assert w.outcome == "provisioned"
    return c.cid, w, {c.owner: "admin", a: "owner"}, set(), set()


def _transfer_new(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    w = m.transfer_ownership(c.cid, a, expected_owner=c.owner)
    assert w.outcome == "transferred"
    return c.cid, w, {c.owner: "member", a: "owner"}, {a}, set()


def _transfer_member(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    m.add_relay_member(c.cid, a, "admin")
    w = m.transfer_ownership(c.cid, a)
    assert w.outcome == "transferred"
    return c.cid, w, {c.owner: "member", a: "owner"}, set(), set()


def _backfill(m: Membership, c: Community, su: Any) -> Change:
    a, b = new_pubkey(), new_pubkey()
    assert m.allowlist_add(c.cid, a, "early") == "added"
    assert m.allowlist_add(c.cid, b) == "added"
    assert m.allowlist_add(c.cid, c.owner) == "added"  # already the owner: skipped
    w = m.backfill_from_allowlist(c.cid)
    assert w.outcome == 2
    return c.cid, w, {c.owner: "owner", a: "member", b: "member"}, {a, b}, set()


def _republish(m: Membership, c: Community, su: Any) -> Change:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    w = m.republish_member_list(c.cid)
    assert w.outcome is None
    return c.cid, w, {c.owner: "owner", a: "member"}, set(), set()


def _republish_archived(m: Membership, c: Community, su: Any) -> Change:
    assert m.archive_community(c.cid) == "archived"
    w = m.republish_member_list(c.cid)
    return c.cid, w, {c.owner: "owner"}, set(), set()


def _direct_sql(m: Membership, c: Community, su: Any) -> Change:
    """Members changed by plain SQL inside a Membership transaction get their list too."""
    a, b = new_pubkey(), new_pubkey()
    m.add_relay_member(c.cid, b)
    with m.transaction() as tx:
        m.conn.execute(
            "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
            " VALUES (%s, %s, 'admin')",
            (c.cid, a),
        )
        m.conn.execute(
            "DELETE FROM buzz_private.relay_members WHERE community_id = %s AND pubkey = %s",
            (c.cid, b),
        )
    w = MembershipWrite.of(None, tx.published)
    assert w.snapshot == tx.lists.get(str(c.cid))
    return c.cid, w, {c.owner: "owner", a: "admin"}, {a}, {b}


CHANGES: dict[str, Callable[[Membership, Community, Any], Change]] = {
    "create_community": _create,
    "add_relay_member": _add,
    "add_relay_members": _add_many,
    "claim_relay_membership": _claim,
    "claim_relay_invite": _claim_invite,
    "remove_relay_member": _remove,
    "remove_relay_member_if_role": _remove_if_role,
    "update_relay_member_role": _update_role,
    "bootstrap_owner-new": _bootstrap_new,
    "bootstrap_owner-member": _bootstrap_member,
    "transfer_ownership-new": _transfer_new,
    "transfer_ownership-member": _transfer_member,
    "backfill_from_allowlist": _backfill,
    "republish_member_list": _republish,
    "republish_member_list-archived": _republish_archived,
    "direct_sql": _direct_sql,
}


@pytest.mark.parametrize("case", params(CHANGES, {"direct_sql": PLAIN_SQL_WRITES}))
def test_write_publishes_the_one_live_list(case, mem, reader, key, community, su):
    before = reader.member_list(community.cid)
    cid, w, expected, added, removed = case(mem, community, su)
    assert_live_list(reader, cid, w.snapshot, key.pubkey, expected)
    assert_user_events(reader, cid, w, key.pubkey, added, removed)
    if cid == community.cid:
        # A new list replaces the old one, later in time.
        assert w.snapshot["id"] != before["id"]
        assert w.snapshot["created_at"] > before["created_at"]
    else:
        # The fixture's community is untouched.
        assert reader.member_list(community.cid) == before


# A no-op case runs setup writes, then returns a function that makes the call under test and
# returns (write, expected outcome, expected details or None).
NoOp = Callable[[], tuple[MembershipWrite, Any, dict[str, Any] | None]]


def _n_exists(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (
        m.create_community(c.host.upper(), c.owner.upper()),
        "exists",
        {"community_id": c.cid},
    )


def _n_host_taken(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.create_community(c.host, new_pubkey()), "host_taken", {"community_id": None})


def _n_limit_reached(m: Membership, c: Community, su: Any) -> NoOp:
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    return lambda: (
        m.create_community(new_host(), c.owner),
        "limit_reached",
        {"community_id": None},
    )


def _n_already_member(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    m.add_relay_member(c.cid, a, "admin")
    # The role is left as it is: a stays admin (checked by assert_noop's member comparison).
    return lambda: (m.add_relay_member(c.cid, a.upper(), "member"), "already_member", None)


def _n_owner_already_member(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.add_relay_member(c.cid, c.owner), "already_member", None)


def _n_add_many_none(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    return lambda: (m.add_relay_members(c.cid, [a, c.owner.upper(), a]), 0, None)


def _n_add_many_empty(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.add_relay_members(c.cid, []), 0, None)


def _n_claim_already(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.claim_relay_membership(c.cid, c.owner, "v2"), "already_member", None)


def _invite(m: Membership, c: Community, max_uses: int | None = 5):
    return m.create_relay_invite(c.cid, c.owner, max_uses=max_uses)


def _n_invite_already(m: Membership, c: Community, su: Any) -> NoOp:
    inv = _invite(m, c)
    return lambda: (
        m.claim_relay_invite(c.cid, inv.code, c.owner),
        "already_member",
        {"use_count": 0, "uses_remaining": 5},
    )


def _n_invite_invalid(m: Membership, c: Community, su: Any) -> NoOp:
    _invite(m, c)
    return lambda: (
        m.claim_relay_invite(c.cid, "0" * 32, new_pubkey()),
        "invalid",
        {"use_count": None, "uses_remaining": None},
    )


def _n_invite_expired(m: Membership, c: Community, su: Any) -> NoOp:
    inv = _invite(m, c, None)
    su.execute(
        "UPDATE buzz_private.relay_invites SET expires_at = now() - interval '1 second'"
        " WHERE invite_id = %s",
        (inv.invite_id,),
    )
    return lambda: (
        m.claim_relay_invite(c.cid, inv.code, new_pubkey()),
        "expired",
        {"use_count": 0, "uses_remaining": None},
    )


def _n_invite_exhausted(m: Membership, c: Community, su: Any) -> NoOp:
    inv = _invite(m, c, 1)
    assert m.claim_relay_invite(c.cid, inv.code, new_pubkey()).outcome == "joined"
    return lambda: (
        m.claim_relay_invite(c.cid, inv.code, new_pubkey()),
        "exhausted",
        {"use_count": 1, "uses_remaining": 0},
    )


def _n_invite_revoked(m: Membership, c: Community, su: Any) -> NoOp:
    inv = _invite(m, c)
    assert m.revoke_relay_invite(c.cid, inv.invite_id) == "revoked"
    return lambda: (
        m.claim_relay_invite(c.cid, inv.code, new_pubkey()),
        "invalid",
        {"use_count": None, "uses_remaining": None},
    )


def _n_remove_not_member(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.remove_relay_member(c.cid, new_pubkey()), "not_member", None)


def _n_remove_owner(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.remove_relay_member(c.cid, c.owner), "is_owner", None)


def _n_if_role_not_member(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (
        m.remove_relay_member_if_role(c.cid, new_pubkey(), "member"),
        "not_member",
        None,
    )


def _n_if_role_mismatch(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    return lambda: (m.remove_relay_member_if_role(c.cid, a, "admin"), "role_mismatch", None)


def _n_if_role_owner(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.remove_relay_member_if_role(c.cid, c.owner, "owner"), "is_owner", None)


def _n_if_role_owner_as_member(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.remove_relay_member_if_role(c.cid, c.owner, "member"), "is_owner", None)


def _n_update_unchanged(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    m.add_relay_member(c.cid, a, "admin")
    return lambda: (m.update_relay_member_role(c.cid, a, "admin"), "unchanged", None)


def _n_update_not_member(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.update_relay_member_role(c.cid, new_pubkey(), "admin"), "not_member", None)


def _n_update_owner(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.update_relay_member_role(c.cid, c.owner, "admin"), "is_owner", None)


def _n_bootstrap_unchanged(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.bootstrap_owner(c.cid, c.owner.upper()), "unchanged", None)


def _n_transfer_already(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.transfer_ownership(c.cid, c.owner), "already_owner", None)


def _n_transfer_conflict(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    return lambda: (
        m.transfer_ownership(c.cid, a, expected_owner=new_pubkey()),
        "owner_conflict",
        None,
    )


def _n_transfer_limit(m: Membership, c: Community, su: Any) -> NoOp:
    a = new_pubkey()
    assert m.create_community(new_host(), a).outcome == "created"
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    return lambda: (m.transfer_ownership(c.cid, a), "limit_reached", None)


def _n_transfer_no_owner(m: Membership, c: Community, su: Any) -> NoOp:
    with m.transaction() as tx:  # the owner leaves by plain SQL; the list follows
        m.conn.execute("DELETE FROM buzz_private.relay_members WHERE community_id = %s", (c.cid,))
    assert tx.lists[str(c.cid)]["tags"] == [["-"]]
    return lambda: (m.transfer_ownership(c.cid, new_pubkey()), "no_owner", None)


def _n_backfill_has_members(m: Membership, c: Community, su: Any) -> NoOp:
    m.add_relay_member(c.cid, new_pubkey())
    m.allowlist_add(c.cid, new_pubkey())
    return lambda: (m.backfill_from_allowlist(c.cid), 0, None)


def _n_backfill_empty(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.backfill_from_allowlist(c.cid), 0, None)


def _n_backfill_only_owner_listed(m: Membership, c: Community, su: Any) -> NoOp:
    m.allowlist_add(c.cid, c.owner)
    return lambda: (m.backfill_from_allowlist(c.cid), 0, None)


def _n_delete_not_found(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.delete_community(uuid.uuid4()), "not_found", None)


def _n_rotate_same_key(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.rotate_relay_key(m.signer.pubkey), 0, None)


def _n_rotate_same_key_limited(m: Membership, c: Community, su: Any) -> NoOp:
    return lambda: (m.rotate_relay_key(m.signer.pubkey.upper(), 1), 0, None)


NOOPS: dict[str, Callable[[Membership, Community, Any], NoOp]] = {
    "create_community-exists": _n_exists,
    "create_community-host_taken": _n_host_taken,
    "create_community-limit_reached": _n_limit_reached,
    "add_relay_member-already_member": _n_already_member,
    "add_relay_member-owner": _n_owner_already_member,
    "add_relay_members-none_new": _n_add_many_none,
    "add_relay_members-empty": _n_add_many_empty,
    "claim_relay_membership-already_member": _n_claim_already,
    "claim_relay_invite-already_member": _n_invite_already,
    "claim_relay_invite-invalid": _n_invite_invalid,
    "claim_relay_invite-expired": _n_invite_expired,
    "claim_relay_invite-exhausted": _n_invite_exhausted,
    "claim_relay_invite-revoked": _n_invite_revoked,
    "remove_relay_member-not_member": _n_remove_not_member,
    "remove_relay_member-is_owner": _n_remove_owner,
    "remove_relay_member_if_role-not_member": _n_if_role_not_member,
    "remove_relay_member_if_role-role_mismatch": _n_if_role_mismatch,
    "remove_relay_member_if_role-owner": _n_if_role_owner,
    "remove_relay_member_if_role-owner_as_member": _n_if_role_owner_as_member,
    "update_relay_member_role-unchanged": _n_update_unchanged,
    "update_relay_member_role-not_member": _n_update_not_member,
    "update_relay_member_role-is_owner": _n_update_owner,
    "bootstrap_owner-unchanged": _n_bootstrap_unchanged,
    "transfer_ownership-already_owner": _n_transfer_already,
    "transfer_ownership-owner_conflict": _n_transfer_conflict,
    "transfer_ownership-limit_reached": _n_transfer_limit,
    "transfer_ownership-no_owner": _n_transfer_no_owner,
    "backfill_from_allowlist-has_members": _n_backfill_has_members,
    "backfill_from_allowlist-empty": _n_backfill_empty,
    "backfill_from_allowlist-only_owner": _n_backfill_only_owner_listed,
    "delete_community-not_found": _n_delete_not_found,
    "rotate_relay_key-same_key": _n_rotate_same_key,
    "rotate_relay_key-same_key_limited": _n_rotate_same_key_limited,
}


@pytest.mark.parametrize(
    "case", params(NOOPS, {"transfer_ownership-no_owner": PLAIN_SQL_WRITES})
)
def test_noop_writes_nothing(case, mem, reader, community, su):
    call = case(mem, community, su)
    before = state(reader, community.cid)
    w, outcome, details = call()
    assert w.outcome == outcome
    if details is not None:
        assert w.details == details
    assert_noop(reader, community.cid, w, *before)
    assert reader.member_list_drift() == []


def test_delete_community(mem, reader, community):
    other = mem.create_community(new_host(), new_pubkey())
    other_before = state(reader, other.details["community_id"])
    a = new_pubkey()
    mem.add_relay_member(community.cid, a)
    mem.create_relay_invite(community.cid, community.owner)
    mem.allowlist_add(community.cid, new_pubkey())
    assert reader.membership_events(community.cid)

    w = mem.delete_community(community.cid)
    assert (w.outcome, w.snapshot, w.events) == ("deleted", None, ())
    # Members and events go with the community: no list, no 8001.
    assert reader.member_list(community.cid) is None
    assert reader.relay_members(community.cid) == []
    assert reader.membership_events(community.cid) == []
    assert reader.member_list_drift(community.cid) == []
    assert reader.community_id(community.host) is None
    # Nothing of it is left in any table.
    for table in (
        "communities",
        "relay_members",
        "member_lists",
        "member_list_pieces",
        "membership_events",
        "relay_invites",
        "relay_allowlist",
        "policy_acceptances",
        "tx_pending_lists",
        "tx_member_changes",
        "tx_prepared_events",
    ):
        assert (
            reader.conn.execute(
                f"SELECT count(*) FROM buzz_private.{table} WHERE community_id = %s",
                (community.cid,),
            ).fetchone()[0]
            == 0
        ), table
    # The other community is untouched.
    assert state(reader, other.details["community_id"]) == other_before
    # Deleting again: nothing left to delete.
    w = mem.delete_community(community.cid)
    assert (w.outcome, w.snapshot, w.events) == ("not_found", None, ())


def test_delete_community_in_a_batch_with_its_changes(mem, reader, community):
    """Members changed and the community deleted in one transaction: no list, no event."""
    a = new_pubkey()
    with mem.transaction() as tx:
        tx.add_relay_member(community.cid, a)
        tx.remove_relay_member(community.cid, a)
        tx.add_relay_member(community.cid, new_pubkey())
        assert tx.delete_community(community.cid) == "deleted"
    assert tx.events == ()
    assert tx.lists == {}
    assert reader.member_list(community.cid) is None


def test_rotate_relay_key(db_url, mem, reader, key, community):
    """rotate_relay_key with a Membership that signs with the new key: one list per marked
    community, each the live one, verifying under the new key; archived ones included."""
    others = []
    for _ in range(2):
        w = mem.create_community(new_host(), new_pubkey())
        others.append(w.details["community_id"])
        mem.add_relay_member(w.details["community_id"], new_pubkey())
    assert mem.archive_community(others[1]) == "archived"
    cids = [community.cid, *others]
    before = {cid: reader.member_list(cid) for cid in cids}

    new_key = type(key).generate()
    with Membership.connect(db_url, new_key) as m2:
        seen: dict[str, dict[str, Any]] = {}
        for _ in range(len(cids) + 2):
            w = m2.rotate_relay_key(new_key.pubkey, limit=1)
            if w.outcome == 0:
                assert (w.snapshot, w.events) == (None, ())
                break
            assert w.outcome == 1
            lists = [ev for ev in w.events if ev["kind"] == 13534]
            # No member changed: no 8000/8001; the three base role definitions re-signed.
            assert len(lists) == 1
            assert [ev["kind"] for ev in w.events] == [13534, 33534, 33534, 33534]
            # A rotation may re-sign several communities; with one, its list may be the snapshot.
            assert w.snapshot in (None, lists[0])
            seen[lists[0]["id"]] = lists[0]
        else:
            pytest.fail("rotate_relay_key never returned 0")
        assert len(seen) == len(cids)
        for cid in cids:
            live = reader.member_list(cid)
            assert seen[live["id"]] == live
            assert_live_list(reader, cid, live, new_key.pubkey)
            assert live["created_at"] > before[cid]["created_at"]
            assert live["tags"] == before[cid]["tags"]
        # The new key writes; the membership of the archived community is still frozen.
        w = m2.add_relay_member(community.cid, new_pubkey())
        assert_live_list(reader, community.cid, w.snapshot, new_key.pubkey)
        with pytest.raises(CommunityArchived):
            m2.add_relay_member(others[1], new_pubkey())


def test_lists_within_one_second_never_repeat(mem, reader, key, community):
    """add, remove, add, remove one pubkey as four writes within (usually) one second."""
    a = new_pubkey()
    if time.time() % 1 > 0.7:  # start the burst early in a second
        time.sleep(1 - time.time() % 1)
    writes = [
        mem.add_relay_member(community.cid, a),
        mem.remove_relay_member(community.cid, a),
        mem.add_relay_member(community.cid, a),
        mem.remove_relay_member(community.cid, a),
    ]
    assert [w.outcome for w in writes] == ["added", "removed", "added", "removed"]
    lists = [w.snapshot for w in writes]
    created = [s["created_at"] for s in lists]
    assert all(x < y for x, y in itertools.pairwise(created)), created
    ids = [s["id"] for s in lists]
    assert len(set(ids)) == 4
    assert_live_list(reader, community.cid, lists[-1], key.pubkey, {community.owner: "owner"})
    # The first and third lists name the same members, and still differ by created_at.
    assert lists[0]["tags"] == lists[2]["tags"] and ids[0] != ids[2]
    events = reader.membership_events(community.cid)[1:]  # [0]: the owner's 8000
    assert [(ev["kind"], ev["created_at"]) for ev in events] == [
        (8000, created[0]),
        (8001, created[1]),
        (8000, created[2]),
        (8001, created[3]),
    ]
    for ev in events:
        verify_both(ev)
        assert ev["tags"] == [["-"], ["p", a]]


def test_batch_writes_one_list(mem, reader, key, community):
    a, b, d, e = (new_pubkey() for _ in range(4))
    mem.add_relay_members(community.cid, [d, e])
    before = reader.member_list(community.cid)
    with mem.transaction() as tx:
        assert tx.add_relay_member(community.cid, a) == "added"
        assert tx.add_relay_member(community.cid, b, "admin") == "added"
        assert tx.remove_relay_member(community.cid, d) == "removed"
        assert tx.update_relay_member_role(community.cid, e, "admin") == "updated"
        assert tx.remove_relay_member(community.cid, a) == "removed"  # net: a never joined
        assert tx.claim_relay_membership(community.cid, d) == "joined"  # net: d stays
        assert tx.remove_relay_member(community.cid, e) == "removed"
    assert list(tx.lists) == [str(community.cid)]
    snap = tx.lists[str(community.cid)]
    assert [ev["kind"] for ev in tx.events].count(13534) == 1
    w = MembershipWrite.of(None, tx.published)
    assert (w.snapshot, w.events) == (snap, tx.events)
    assert_live_list(
        reader, community.cid, snap, key.pubkey, {community.owner: "owner", b: "admin", d: "member"}
    )
    assert_user_events(reader, community.cid, w, key.pubkey, {b}, {e})
    assert snap["created_at"] > before["created_at"]


@pytest.mark.single_server(ONE_COMMUNITY_PER_TRANSACTION)
def test_batch_over_two_communities_writes_one_list_each(mem, reader, key, community):
    other = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    a, b = new_pubkey(), new_pubkey()
    with mem.transaction() as tx:
        tx.add_relay_member(community.cid, a)
        tx.add_relay_member(other, a)
        tx.add_relay_member(community.cid, b)
    assert set(tx.lists) == {str(community.cid), str(other)}
    assert sorted(ev["kind"] for ev in tx.events) == [8000, 8000, 8000, 13534, 13534]
    assert tx.events[0]["kind"] == 13534  # each community: its list, then its 8000s
    for cid in (community.cid, other):
        assert_live_list(reader, cid, tx.lists[str(cid)], key.pubkey)
    for ev in tx.events:
        verify_both(ev)


def test_batch_with_no_net_change(mem, reader, key, community):
    """Added and removed again in one transaction: no 8000/8001; a list is allowed."""
    a = new_pubkey()
    before = state(reader, community.cid)
    with mem.transaction() as tx:
        tx.add_relay_member(community.cid, a)
        tx.remove_relay_member(community.cid, a)
    assert [ev["kind"] for ev in tx.events if ev["kind"] != 13534] == []
    assert members_of(reader, community.cid) == before[1]
    assert reader.membership_events(community.cid) == before[2]
    if tx.lists:
        assert_live_list(reader, community.cid, tx.lists[str(community.cid)], key.pubkey)
    else:
        assert state(reader, community.cid) == before


@pytest.mark.single_server(ONE_COMMUNITY_PER_TRANSACTION)
def test_identical_communities_in_one_second(mem, reader, key):
    """Two communities with the same members in one transaction may get byte-identical events:
    both are stored, each community serves its own."""
    owner = new_pubkey()
    c1 = mem.create_community(new_host(), owner).details["community_id"]
    c2 = mem.create_community(new_host(), owner).details["community_id"]
    a = new_pubkey()
    with mem.transaction() as tx:
        tx.add_relay_member(c1, a)
        tx.add_relay_member(c2, a)
    assert len(tx.events) == 4
    for cid in (c1, c2):
        assert_live_list(reader, cid, tx.lists[str(cid)], key.pubkey)
        assert [ev["tags"] for ev in reader.membership_events(cid)][-1] == [["-"], ["p", a]]


@pytest.mark.parametrize(
    "call",
    [
        lambda m, c: m.add_relay_member(c.cid, new_pubkey()),
        lambda m, c: m.add_relay_members(c.cid, [new_pubkey()]),
        lambda m, c: m.claim_relay_membership(c.cid, new_pubkey()),
        lambda m, c: m.remove_relay_member(c.cid, c.owner),
        lambda m, c: m.update_relay_member_role(c.cid, new_pubkey(), "admin"),
        lambda m, c: m.bootstrap_owner(c.cid, new_pubkey()),
        lambda m, c: m.transfer_ownership(c.cid, new_pubkey()),
        lambda m, c: m.backfill_from_allowlist(c.cid),
    ],
    ids=["add", "add_many", "claim", "remove", "update", "bootstrap", "transfer", "backfill"],
)
def test_archived_community_refuses_membership_writes(call, mem, reader, community):
    assert mem.archive_community(community.cid) == "archived"
    before = state(reader, community.cid)
    with pytest.raises(CommunityArchived):
        call(mem, community)
    assert state(reader, community.cid) == before


def test_invite_claims_count_uses(mem, reader, key, community):
    inv = mem.create_relay_invite(
        community.cid, community.owner, max_uses=None, ttl=dt.timedelta(minutes=5)
    )
    a, b = new_pubkey(), new_pubkey()
    w1 = mem.claim_relay_invite(community.cid, inv.code, a)
    w2 = mem.claim_relay_invite(community.cid, inv.code, b)
    assert (w1.details, w2.details) == (
        {"use_count": 1, "uses_remaining": None},
        {"use_count": 2, "uses_remaining": None},
    )
    assert_live_list(
        reader,
        community.cid,
        w2.snapshot,
        key.pubkey,
        {community.owner: "owner", a: "member", b: "member"},
    )
    assert {m.pubkey: m.added_by for m in reader.relay_members(community.cid)}[a] == community.owner  # the invite's creator


def test_reads_of_an_unknown_community(reader, community):
    unknown = uuid.uuid4()
    assert reader.member_list(unknown) is None
    assert reader.relay_members(unknown) == []
    assert reader.membership_events(unknown) == []
    assert reader.membership_events(unknown, 0) == []
    assert reader.member_list_drift(unknown) == []
    assert reader.community_id("unknown.example.org") is None
    assert reader.community_id(community.host.upper()) == community.cid
    assert reader.member_list_drift() == []


def _pubkeys_with_prefixes(prefixes: tuple[str, ...], n: int) -> list[str]:
    """n real pubkeys that all start with one of a few prefixes, so that they share list pieces."""
    found: list[str] = []
    while len(found) < n:
        pk = new_pubkey()
        if pk[:1] in prefixes:
            found.append(pk)
    return found


def test_random_changes_keep_the_list_exact(mem, reader, key, community):
    """A seeded random walk over every member write, many members sharing pubkey prefixes:
    after each write the live list names exactly the members a model of the rules expects."""
    rng = random.Random(20261129)
    pool = _pubkeys_with_prefixes(("0", "1"), 24)
    model = {community.owner: "owner"}
    for step in range(60):
        op = rng.choice(
            [
                "add",
                "add_many",
                "remove",
                "remove_if_role",
                "update",
                "transfer",
                "bootstrap",
                "batch",
            ]
        )
        pk = rng.choice(pool)
        role = rng.choice(["admin", "member"])
        before = dict(model)
        if op == "add":
            w = mem.add_relay_member(community.cid, pk, role)
            model.setdefault(pk, role)
        elif op == "add_many":
            pks = rng.sample(pool, 5)
            w = mem.add_relay_members(community.cid, pks, role)
            for p in pks:
                model.setdefault(p, role)
        elif op == "remove":
            w = mem.remove_relay_member(community.cid, pk)
            if model.get(pk) not in (None, "owner"):
                del model[pk]
        elif op == "remove_if_role":
            w = mem.remove_relay_member_if_role(community.cid, pk, role)
            if model.get(pk) == role:
                del model[pk]
        elif op == "update":
            w = mem.update_relay_member_role(community.cid, pk, role)
            if model.get(pk) in ("admin", "member"):
                model[pk] = role
        elif op in ("transfer", "bootstrap"):
            old = next(p for p, r in model.items() if r == "owner")
            if op == "transfer":
                w = mem.transfer_ownership(community.cid, pk)
                if pk != old:
                    model[old] = "member"
                    model[pk] = "owner"
            else:
                w = mem.bootstrap_owner(community.cid, pk)
                if pk != old:
                    model[old] = "admin"
                    model[pk] = "owner"
        else:
            pks = rng.sample(pool, 4)
            with mem.transaction() as tx:
                tx.add_relay_members(community.cid, pks[:3])
                tx.remove_relay_member(community.cid, pks[2])
                tx.remove_relay_member(community.cid, pks[3])
            for p in pks[:3]:
                model.setdefault(p, "member")
            for p in pks[2:]:
                if model.get(p) not in (None, "owner"):
                    del model[p]
            w = MembershipWrite.of(None, tx.published)
            assert w.snapshot == tx.lists.get(str(community.cid))
        added = set(model) - set(before)
        removed = set(before) - set(model)
        if model == before:
            if w.snapshot is None:
                assert w.events == ()
                assert members_of(reader, community.cid) == model, (step, op)
                continue
            assert op == "batch", (step, op)  # a batch with no net change may write a list
        assert_live_list(reader, community.cid, w.snapshot, key.pubkey, model)
        assert_user_events(reader, community.cid, w, key.pubkey, added, removed)
    assert reader.member_list_drift() == []


def test_the_events_a_call_returns_are_the_ones_the_database_serves(mem, reader, community):
    """A call builds its events from the text it checked and signed instead of reading back
    insert_signed_events' answer: they are the very objects the database stores and serves."""
    gone, added = new_pubkey(), sorted(new_pubkey() for _ in range(3))
    mem.add_relay_member(community.cid, gone)
    with mem.transaction() as tx:
        tx.add_relay_members(community.cid, added)
        tx.remove_relay_member(community.cid, gone)
    lists = [ev for ev in tx.events if ev["kind"] == 13534]
    assert lists == [reader.member_list(community.cid)] == list(tx.lists.values())
    stored = reader.membership_events(community.cid)[-4:]
    assert [ev for ev in tx.events if ev["kind"] != 13534] == stored
    assert [(ev["kind"], ev["tags"][1][1]) for ev in stored] == [
        *((8000, pk) for pk in added),
        (8001, gone),
    ]


def _text_conn(db_url: str) -> psycopg.Connection:
    """A connection that loads json as the text the server sends, unparsed."""
    conn = psycopg.connect(db_url)
    conn.adapters.register_loader("json", TextLoader)
    return conn


def _compact(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)


def _verify_text(text: str) -> dict[str, Any]:
    """The event text is compact NIP-01 (keys in order, no whitespace) and rust-nostr verifies
    it as it is; returns the event."""
    assert isinstance(text, str)
    assert text == _compact(text)
    ev = json.loads(text)
    assert list(ev) == ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]
    sdk = nostr_sdk.Event.from_json(text)
    assert sdk.verify()
    assert sdk.id().to_hex() == ev["id"]
    return ev


def test_a_1000_member_list_is_compact_nip01_text_that_verifies(mem, key, community, db_url):
    """The json the API returns is the compact NIP-01 text, exactly: the list of 1,000 members
    as member_list sends it, as insert_signed_events returned it, and the 8000/8001 events."""
    pubkeys = [new_pubkey() for _ in range(998)]
    w = mem.add_relay_members(community.cid, pubkeys)
    assert w.outcome == 998
    with _text_conn(db_url) as conn:
        # One more member in a raw two-phase write: what insert_signed_events returns.
        last = new_pubkey()
        conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, last))
        prepared, sigs = prepare_and_sign(conn, key)
        returned = insert_signed(conn, prepared, sigs)
        conn.commit()
        text = conn.execute("SELECT buzz.member_list(%s)", (community.cid,)).fetchone()[0]
        events = [r[0] for r in conn.execute("SELECT buzz.membership_events(%s)", (community.cid,))]
    ev = _verify_text(text)
    assert ev["kind"] == 13534 and ev["pubkey"] == key.pubkey
    assert len(ev["tags"]) == 1 + 1000
    assert ev["tags"] == expected_tags(
        {community.owner: "owner", last: "member"} | {pk: "member" for pk in pubkeys}
    )
    assert ev["tags"][0] == ["-"]
    # Its tags are the very bytes that were signed: the id is the sha256 of prepare's text,
    # [0,pubkey,created_at,kind,tags,content], whose tags are byte for byte the text's.
    signed = prepared[0].serialized
    assert hashlib.sha256(signed.encode()).hexdigest() == ev["id"]
    head = f'[0,"{key.pubkey}",{ev["created_at"]},13534,'
    assert signed.startswith(head) and signed.endswith(',""]')
    tags = signed[len(head) : -len(',""]')]
    assert text == (
        f'{{"id":"{ev["id"]}","pubkey":"{key.pubkey}","created_at":{ev["created_at"]},'
        f'"kind":13534,"tags":{tags},"content":"","sig":"{ev["sig"]}"}}'
    )
    assert text == returned[0]  # what insert_signed_events returned, byte for byte
    assert [_verify_text(t)["kind"] for t in returned] == [13534, 8000]
    assert returned[1] == events[-1]
    assert len(events) == 1000  # the owner's 8000, then one per member added
    for t in events:
        assert _verify_text(t)["kind"] == 8000
