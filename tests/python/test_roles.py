"""Roles clients can discover (SPEC §6) through the Python layer, sync and async.

Each role write is one transaction that publishes exactly what changed: the role's 33534 (or
its kind 5 deletion), and the list when member tags change. Every event verifies with our
NIP-01 code and with rust-nostr's, and what the write returned is what the database serves.
"""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_membership import (
    live_text,
    new_pubkey,
    verify_both,
)
from sessions import behind_the_api

from buzz_signer.errors import CommunityArchived, InvalidParameter, InvalidPubkey, InvalidRole
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import KIND_DELETION, KIND_MEMBERSHIP_LIST, KIND_ROLE

pytest_plugins = ("fixtures_membership",)

BASE_TAGS = {
    "admin": [["-"], ["d", "admin"], ["label", "Admin"], ["order", "1"]],
    "member": [["-"], ["d", "member"], ["label", "Member"], ["order", "2"]],
    "owner": [["-"], ["d", "owner"], ["label", "Owner"], ["order", "0"]],
}


@pytest.fixture
def mem(either_api):
    """The API under test: Membership, or AsyncMembership on an AsyncConnection."""
    return either_api


def kinds(write: Any) -> list[int]:
    return [ev["kind"] for ev in write.events]


def definitions(reader: Membership, cid: Any) -> dict[str, dict[str, Any]]:
    """The live 33534s by role id, each checked to verify."""
    found = {}
    for ev in reader.role_definitions(cid):
        verify_both(ev)
        found[ev["tags"][1][1]] = ev
    return found


def member_tags(reader: Membership, cid: Any) -> list[list[str]]:
    """The member tags the stored members call for: base role, then defined roles."""
    return [["-"]] + [["member", m.pubkey, m.role, *m.roles] for m in reader.relay_members(cid)]


def assert_published(reader: Membership, cid: Any, write: Any, relay_pubkey: str) -> None:
    """Every event of the write verifies, is by the relay key, shares one created_at, and is
    live: the list is the live list naming the stored members and roles, each 33534 the live
    definition of its role, each kind 5 the live deletion."""
    created = {ev["created_at"] for ev in write.events}
    assert len(created) == 1
    live_defs = definitions(reader, cid)
    deletions = {ev["tags"][1][1].rsplit(":", 1)[1]: ev for ev in reader.role_deletions(cid)}
    for ev in write.events:
        assert ev["pubkey"] == relay_pubkey
        verify_both(ev)
        if ev["kind"] == KIND_MEMBERSHIP_LIST:
            assert ev == reader.member_list(cid)
            assert ev["tags"] == member_tags(reader, cid)
        elif ev["kind"] == KIND_ROLE:
            assert live_defs[ev["tags"][1][1]] == ev
        elif ev["kind"] == KIND_DELETION:
            role = ev["tags"][1][1].rsplit(":", 1)[1]
            assert deletions[role] == ev
            assert ev["tags"] == [["-"], ["a", f"33534:{relay_pubkey}:{role}"], ["k", "33534"]]
    assert reader.member_list_drift(cid) == []


def test_a_community_starts_with_its_base_role_definitions(mem, reader, key):
    w = mem.create_community("roles.example.org", new_pubkey())
    cid = w.details["community_id"]
    assert kinds(w) == [13534, 8000, 33534, 33534, 33534]
    assert_published(reader, cid, w, key.pubkey)
    assert {r: ev["tags"] for r, ev in definitions(reader, cid).items()} == BASE_TAGS
    assert all(ev["content"] == "" for ev in w.events)


def test_define_role_publishes_its_definition_and_no_list(mem, reader, key, community):
    before = live_text(reader, community.cid)
    w = mem.define_role(community.cid, "mod", 'Mod "&" \\ é', "Keeps order", 200, -3)
    assert w.outcome == "defined"
    assert kinds(w) == [33534]
    assert w.snapshot is None
    assert live_text(reader, community.cid) == before
    (ev,) = w.events
    assert ev["tags"] == [
        ["-"],
        ["d", "mod"],
        ["label", 'Mod "&" \\ é'],
        ["description", "Keeps order"],
        ["color", "200"],
        ["order", "-3"],
    ]
    assert ev["created_at"] > reader.member_list(community.cid)["created_at"]
    assert_published(reader, community.cid, w, key.pubkey)


def test_define_role_again_is_unchanged_or_updated(mem, reader, key, community):
    first = mem.define_role(community.cid, "mod", "Mod")
    same = mem.define_role(community.cid, "mod", "Mod")
    assert same.outcome == "unchanged"
    assert same.events == ()
    changed = mem.define_role(community.cid, "mod", "Moderator", color=0)
    assert changed.outcome == "updated"
    assert kinds(changed) == [33534]
    assert changed.events[0]["created_at"] > first.events[0]["created_at"]
    assert definitions(reader, community.cid)["mod"] == changed.events[0]
    # Dropping an optional field is a change too.
    assert mem.define_role(community.cid, "mod", "Moderator").outcome == "updated"
    assert definitions(reader, community.cid)["mod"]["tags"] == [
        ["-"],
        ["d", "mod"],
        ["label", "Moderator"],
    ]


def test_base_roles_can_be_redefined_not_deleted_or_assigned(mem, reader, key, community):
    w = mem.define_role(community.cid, "admin", "Moderators", color=30, order=1)
    assert w.outcome == "updated"
    assert_published(reader, community.cid, w, key.pubkey)
    for call in (
        lambda: mem.delete_role(community.cid, "admin"),
        lambda: mem.assign_role(community.cid, community.owner, "member"),
        lambda: mem.unassign_role(community.cid, community.owner, "owner"),
    ):
        with pytest.raises(InvalidRole):
            call()


def test_assign_and_unassign_rewrite_the_member_tags(mem, reader, key, community):
    alice, bob = sorted(new_pubkey() for _ in range(2))
    mem.add_relay_member(community.cid, alice)
    mem.add_relay_member(community.cid, bob, "admin")
    for role in ("zz", "_x", "0a", "-y"):
        mem.define_role(community.cid, role, role.upper())
    for role in ("zz", "_x", "0a", "-y"):
        w = mem.assign_role(community.cid, alice, role)
        assert w.outcome == "assigned"
        assert kinds(w) == [13534]  # no 8000: alice was a member already
        assert_published(reader, community.cid, w, key.pubkey)
    w = mem.assign_role(community.cid, bob, "0a")
    assert_published(reader, community.cid, w, key.pubkey)
    tags = {t[1]: t[2:] for t in reader.member_list(community.cid)["tags"][1:]}
    # Byte order (COLLATE "C"), as the list is: '-' < '0' < '_' < 'z'.
    assert tags[alice] == ["member", "-y", "0a", "_x", "zz"]
    assert tags[bob] == ["admin", "0a"]
    assert tags[community.owner] == ["owner"]

    again = mem.assign_role(community.cid, alice, "zz")
    assert (again.outcome, again.events) == ("already_assigned", ())
    stranger = mem.assign_role(community.cid, new_pubkey(), "zz")
    assert (stranger.outcome, stranger.events) == ("not_member", ())

    w = mem.unassign_role(community.cid, alice, "_x")
    assert w.outcome == "unassigned"
    assert_published(reader, community.cid, w, key.pubkey)
    assert [m.roles for m in reader.relay_members(community.cid) if m.pubkey == alice] == [
        ["-y", "0a", "zz"]
    ]
    for pubkey, outcome in ((alice, "not_assigned"), (new_pubkey(), "not_member")):
        w = mem.unassign_role(community.cid, pubkey, "_x")
        assert (w.outcome, w.events) == (outcome, ())
    # A role nobody defined is held by nobody.
    assert mem.unassign_role(community.cid, alice, "ghost").outcome == "not_assigned"


def test_delete_role_takes_it_from_its_holders_and_publishes_a_deletion(
    mem, reader, key, community
):
    alice = new_pubkey()
    mem.add_relay_member(community.cid, alice)
    mem.define_role(community.cid, "mod", "Mod")
    mem.define_role(community.cid, "quiet", "Quiet")
    mem.assign_role(community.cid, alice, "mod")

    w = mem.delete_role(community.cid, "mod")
    assert w.outcome == "deleted"
    assert kinds(w) == [13534, 5]
    assert_published(reader, community.cid, w, key.pubkey)
    assert "mod" not in definitions(reader, community.cid)
    assert all(m.roles == [] for m in reader.relay_members(community.cid))

    # Nobody holds it: the deletion alone.
    w = mem.delete_role(community.cid, "quiet")
    assert kinds(w) == [5]
    assert_published(reader, community.cid, w, key.pubkey)
    gone = mem.delete_role(community.cid, "quiet")
    assert (gone.outcome, gone.events) == ("not_found", ())

    # Defined again, the role's definition replaces its deletion.
    w = mem.define_role(community.cid, "mod", "Mod again")
    assert_published(reader, community.cid, w, key.pubkey)
    assert [ev["tags"][1][1] for ev in reader.role_deletions(community.cid)] == [
        f"33534:{key.pubkey}:quiet"
    ]


def test_role_writes_share_a_transaction_and_one_created_at(mem, reader, key, community):
    alice = new_pubkey()
    with mem.transaction() as tx:
        tx.add_relay_member(community.cid, alice)
        tx.define_role(community.cid, "mod", "Mod")
        tx.assign_role(community.cid, alice, "mod")
        tx.define_role(community.cid, "gone", "Gone")
        tx.delete_role(community.cid, "gone")
    # Defined and deleted in one transaction: never published, so nothing to delete.
    assert [ev["kind"] for ev in tx.events] == [13534, 8000, 33534]
    assert tx.lists[str(community.cid)]["tags"] == member_tags(reader, community.cid)
    assert {ev["created_at"] for ev in tx.events} == {tx.events[0]["created_at"]}
    assert "gone" not in definitions(reader, community.cid)
    assert reader.role_deletions(community.cid) == []
    assert reader.member_list_drift(community.cid) == []


def test_a_role_defined_and_deleted_in_one_transaction_publishes_nothing(mem, reader, community):
    before = (live_text(reader, community.cid), reader.role_definitions(community.cid))
    with mem.transaction() as tx:
        tx.define_role(community.cid, "gone", "Gone")
        tx.delete_role(community.cid, "gone")
    assert tx.events == ()
    assert (live_text(reader, community.cid), reader.role_definitions(community.cid)) == before


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("Mod", "Mod"), InvalidRole),
        (("m" * 65, "Mod"), InvalidRole),
        (("", "Mod"), InvalidRole),
        (("a b", "Mod"), InvalidRole),
        (("mod", ""), InvalidParameter),
        (("mod", "x" * 65), InvalidParameter),
        (("mod", "tab\there"), InvalidParameter),
        (("mod", "Mod", "d" * 501), InvalidParameter),
        (("mod", "Mod", "line\nbreak"), InvalidParameter),
        (("mod", "Mod", None, 361), InvalidParameter),
        (("mod", "Mod", None, -1), InvalidParameter),
    ],
)
def test_define_role_refuses_bad_arguments_and_changes_nothing(mem, reader, community, args, error):
    before = reader.role_definitions(community.cid)
    with pytest.raises(error):
        mem.define_role(community.cid, *args)
    assert reader.role_definitions(community.cid) == before


def test_role_writes_refuse_a_bad_pubkey_an_undefined_role_and_an_archived_community(
    mem, reader, community
):
    with pytest.raises(InvalidPubkey):
        mem.assign_role(community.cid, "not-a-pubkey", "mod")
    with pytest.raises(InvalidRole):
        mem.assign_role(community.cid, community.owner, "undefined")
    mem.archive_community(community.cid)
    for call in (
        lambda: mem.define_role(community.cid, "mod", "Mod"),
        lambda: mem.delete_role(community.cid, "mod"),
        lambda: mem.assign_role(community.cid, community.owner, "mod"),
        lambda: mem.unassign_role(community.cid, community.owner, "mod"),
    ):
        with pytest.raises(CommunityArchived):
            call()


def test_rotation_and_republish_re_sign_every_definition(mem, reader, db_url, community):
    mem.define_role(community.cid, "mod", "Mod")
    w = mem.republish_member_list(community.cid)
    assert kinds(w) == [13534] + [33534] * 4
    new_key = RelayKey.generate()
    with Membership.connect(db_url, new_key) as rotated:
        assert rotated.rotate_relay_key(new_key.pubkey).outcome == 1
        assert rotated.rotate_relay_key(new_key.pubkey).outcome == 0
    defs = definitions(reader, community.cid)
    assert set(defs) == {"owner", "admin", "member", "mod"}
    assert {ev["pubkey"] for ev in defs.values()} == {new_key.pubkey}
    assert reader.member_list_drift() == []


def test_a_community_whose_definitions_alone_are_by_another_key_is_rotated(
    reader, db_url, community
):
    new_key = RelayKey.generate()
    with Membership.connect(db_url, new_key) as rotated:
        assert rotated.rotate_relay_key(new_key.pubkey).outcome == 1
        # Its list is by the new key, one definition by another (as a restore might leave it).
        with behind_the_api(db_url, community.cid) as restore:
            restore.execute(
                "UPDATE buzz_private.role_events SET pubkey = %s"
                " WHERE community_id = %s AND role_id = 'member'",
                (new_pubkey(), community.cid),
            )
        assert rotated.rotate_relay_key(new_key.pubkey).outcome == 1
        assert rotated.rotate_relay_key(new_key.pubkey).outcome == 0
    assert {ev["pubkey"] for ev in reader.role_definitions(community.cid)} == {new_key.pubkey}
    assert reader.member_list_drift() == []


def test_drift_reports_definitions_that_drifted_and_republish_repairs_them(
    db_url, mem, reader, key, community
):
    mem.define_role(community.cid, "mod", "Mod")
    mem.define_role(community.cid, "vip", "VIP")
    mem.define_role(community.cid, "old", "Old")
    mem.delete_role(community.cid, "old")
    with behind_the_api(db_url, community.cid) as restore:
        restore.execute(
            "UPDATE buzz_private.roles SET label = 'Changed' WHERE community_id = %s"
            " AND role_id = 'mod'",
            (community.cid,),
        )
        restore.execute(
            "UPDATE buzz_private.role_events SET sig = repeat('0', 128) WHERE community_id = %s"
            " AND role_id = 'vip'",
            (community.cid,),
        )
        restore.execute(
            "DELETE FROM buzz_private.role_events WHERE community_id = %s AND role_id = 'owner'",
            (community.cid,),
        )
        restore.execute(
            "UPDATE buzz_private.role_events SET created_at = created_at + 1"
            " WHERE community_id = %s AND role_id = 'old'",
            (community.cid,),
        )
    drift = reader.member_list_drift(community.cid)
    assert sorted(d.problem for d in drift) == [
        "role_bad_signature",
        "role_differs",
        "role_id_mismatch",
        "role_missing",
    ]
    named = {d.problem: d.detail for d in drift}
    assert " vip " in named["role_bad_signature"]
    assert " mod " in named["role_differs"]
    assert " old " in named["role_id_mismatch"]
    assert " owner " in named["role_missing"]
    mem.republish_member_list(community.cid)
    # Republish re-signs definitions; a tampered deletion stays reported.
    assert [d.problem for d in reader.member_list_drift(community.cid)] == ["role_id_mismatch"]
