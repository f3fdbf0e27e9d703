"""The calls of membership.py that the relay makes beside the write paths (SPEC sections 7, 9
and 10): reads of one member, the relay key, the invite tree, events as their text, the
windows every relay process shares, and the moderation behind the gate. The relay uses the
async flavour; these run the sync one against the same database."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import secrets

import pytest
from fixtures_membership import Community, new_pubkey

from buzz_signer.membership import Membership
from buzz_signer.signer import RefusedToSign

pytest_plugins = ("fixtures_membership",)


def test_one_member_the_key_and_the_tree(mem: Membership, community: Community, key) -> None:
    cid, owner = community.cid, community.owner
    invited = new_pubkey()
    mem.add_relay_member(cid, invited, "member", owner)
    assert mem.relay_member(cid, invited).added_by == owner
    assert mem.relay_member(cid, new_pubkey()) is None
    assert mem.relay_key() == key.pubkey
    assert (community.cid, community.host) in [(c.community_id, c.host) for c in mem.communities()]
    tree = {pubkey: (role, by) for pubkey, role, by, _left in mem.members_with_invites_left(cid)}
    assert tree == {owner: ("owner", "create"), invited: ("member", owner)}


def test_events_as_their_text(mem: Membership, community: Community) -> None:
    cid = community.cid
    joined = new_pubkey()
    mem.add_relay_member(cid, joined)
    rows = mem.events_text_since(cid, 0)
    by_kind = {json.loads(text)["kind"]: (text, p) for text, p, *_ in rows}
    assert json.loads(by_kind[13534][0]) == mem.member_list(cid)
    assert by_kind[8000][1] == joined  # the "p" a filter can name
    only_list = mem.events_text_since(
        cid, 0, with_events=False, with_definitions=False, with_deletions=False
    )
    assert [json.loads(t)["kind"] for t, *_ in only_list] == [13534]
    newest = mem.membership_events_newest_text(cid, [8000], None, [joined], None, None, 1)
    assert [(json.loads(t)["kind"], p) for t, p, *_ in newest] == [(8000, joined)]


def test_what_relay_processes_share(mem: Membership) -> None:
    keys = [f"address:{secrets.token_hex(4)}"]
    assert mem.take_rate("join_address", keys, 1, 600) is True
    assert mem.take_rate("join_address", keys, 1, 600) is False
    assert mem.rate_reached("join_address", keys, 1, 600) is True
    event_id = secrets.token_hex(32)
    until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=60)
    assert mem.accept_auth_event(event_id, until) is True
    assert mem.accept_auth_event(event_id, until) is False


def test_moderation_round_trips(mem: Membership, community: Community) -> None:
    cid, owner = community.cid, community.owner
    event_id = secrets.token_hex(32)
    assert mem.ban_event(cid, event_id, "spam", owner) == "banned"
    assert mem.banned_events(cid) == [(event_id, "spam")]
    assert (mem.allow_kind(cid, 1), mem.disallow_kind(cid, 7)) == ("updated", "updated")
    assert sorted(mem.kind_rules(cid)) == [(1, True), (7, False)]
    mem.clear_kind_rule(cid, 1)
    assert mem.kind_rules(cid) == [(7, False)]
    assert mem.block_ip(cid, "192.0.2.0/24", None, owner) == "blocked"
    assert mem.blocked_ips(cid) == [(ipaddress.ip_network("192.0.2.0/24"), None)]
    member = new_pubkey()
    mem.add_relay_member(cid, member)
    assert mem.assign_method(cid, member, "banpubkey", owner) == "assigned"
    assert mem.method_assignees(cid) == [(member, "banpubkey")]
    rules = mem.moderation_rules(cid)
    assert {rule for _, rule, _ in rules} >= {"banned_event", "blocked_ip"}
    assert mem.unassign_method(cid, member, "banpubkey") == "unassigned"
    assert mem.unblock_ip(cid, "192.0.2.0/24") == "unblocked"
    assert mem.unban_event(cid, event_id) == "unbanned"


def test_a_membership_without_a_key_reads_and_refuses_to_publish(
    db_url: str, community: Community, mem: Membership
) -> None:
    """buzz-admin's reads need no relay key: Membership(conn, None) reads, and a write that
    would publish is refused before it prepares, with nothing kept."""
    with Membership.connect(db_url, None) as reader:
        assert [m.role for m in reader.relay_members(community.cid)] == ["owner"]
        with pytest.raises(RefusedToSign, match="only reads"):
            reader.add_relay_member(community.cid, new_pubkey())
    assert len(mem.relay_members(community.cid)) == 1
