"""Role writes (SPEC section 6) against each other and the member writes, with real sessions:
in every test one transaction is held open at a chosen point and the other is proven, from
pg_locks (sessions.wait_until_blocked), to wait for it before the first goes on.

1. assign_role waits for a concurrent delete_role of the same role (the role's row); after the
   deletion commits, the assignment raises BZIRL and nobody holds the role.
2. delete_role waits for an uncommitted assign_role of that role; after the assignment commits,
   the deletion takes the role from that member too: its list names the member without it,
   and the kind 5 is published.
3. Two define_role of the same new role: the second waits for the first (its insert, on the
   role's key), then answers 'unchanged' (same definition, nothing published) or 'updated'
   (its 33534, newer, is the live one).
4. define_role and a member add on one community, either holding the list lock while the
   other waits for it: both commit, with distinct created_at, and both events are live.
5. delete_role and remove_relay_member / update_relay_member_role of a holder of the role,
   either one first, the other waiting for the holder's row: no deadlock, both commit, and the
   holder ends without the role.

Each test ends with member_list_drift() empty and every live list and role event verifying.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures_membership import new_pubkey, verify_both
from sessions import (
    Stage,
    backend_pid,
    list_lock_holders,
    list_lock_key,
    wait_until_blocked,
)

from buzz_signer.errors import InvalidRole
from buzz_signer.membership import Membership
from buzz_signer.nostr import (
    KIND_ADD_USER,
    KIND_DELETION,
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    KIND_ROLE,
)

pytest_plugins = ("fixtures_membership",)

ROLE = "mod"


def member_tags(reader: Membership, cid: Any) -> list[list[str]]:
    """The member tags the stored members call for: base role, then defined roles."""
    return [["-"]] + [["member", m.pubkey, m.role, *m.roles] for m in reader.relay_members(cid)]


def roles_of(reader: Membership, cid: Any) -> dict[str, list[str]]:
    return {m.pubkey: m.roles for m in reader.relay_members(cid)}


def definitions(reader: Membership, cid: Any) -> dict[str, dict[str, Any]]:
    return {ev["tags"][1][1]: ev for ev in reader.role_definitions(cid)}


def deletions(reader: Membership, cid: Any) -> dict[str, dict[str, Any]]:
    return {ev["tags"][1][1].rsplit(":", 1)[1]: ev for ev in reader.role_deletions(cid)}


def assert_consistent(reader: Membership, cid: Any, relay_pubkey: str) -> None:
    """The live list names the stored members and their roles; every live role event and the
    list verify; every held role is defined; no drift anywhere."""
    live = reader.member_list(cid)
    assert live is not None
    verify_both(live)
    assert live["pubkey"] == relay_pubkey
    assert live["tags"] == member_tags(reader, cid)
    defined = definitions(reader, cid)
    for ev in [*defined.values(), *deletions(reader, cid).values()]:
        verify_both(ev)
        assert ev["pubkey"] == relay_pubkey
    assert not set(defined) & set(deletions(reader, cid))
    for roles in roles_of(reader, cid).values():
        assert set(roles) <= set(defined)
    assert reader.member_list_drift() == []


def deletion_tags(relay_pubkey: str, role: str) -> list[list[str]]:
    return [["-"], ["a", f"{KIND_ROLE}:{relay_pubkey}:{role}"], ["k", str(KIND_ROLE)]]


def test_assign_waits_for_a_deletion_of_its_role_then_fails(
    db_url, mem, reader, su, key, community
):
    cid = community.cid
    holder, joiner = new_pubkey(), new_pubkey()
    mem.add_relay_members(cid, [holder, joiner])
    assert mem.define_role(cid, ROLE, "Moderators").outcome == "defined"
    assert mem.assign_role(cid, holder, ROLE).outcome == "assigned"
    before = reader.member_list(cid)

    with Stage(db_url, key) as stage:
        m = stage.membership()
        deleter = stage.raw_writer()
        assert deleter.value("SELECT buzz.delete_role(%s, %s)", cid, ROLE) == "deleted"

        assign = stage.background(lambda: m.assign_role(cid, joiner, ROLE), "assign")
        wait = wait_until_blocked(su, backend_pid(m.conn), deleter.pid, call=assign)
        # It waits for the role's row (FOR KEY SHARE against the deletion), not the list lock.
        assert wait.locktype == "transactionid", wait
        assert "assign_role" in wait.query
        assert list_lock_holders(su, cid) == []

        prepared = deleter.prepare()
        assert [ev.kind for ev in prepared] == [KIND_MEMBERSHIP_LIST, KIND_DELETION]
        deleted_list, deletion = deleter.sign_and_insert()
        deleter.commit()
        error = assign.error()

    assert isinstance(error, InvalidRole), assign.describe()
    assert error.sqlstate == "BZIRL"
    assert roles_of(reader, cid) == {community.owner: [], holder: [], joiner: []}
    assert reader.member_list(cid) == deleted_list
    assert deleted_list["created_at"] > before["created_at"]
    assert deletion["tags"] == deletion_tags(key.pubkey, ROLE)
    assert deletions(reader, cid) == {ROLE: deletion}
    assert ROLE not in definitions(reader, cid)
    assert_consistent(reader, cid, key.pubkey)


def test_delete_waits_for_an_assignment_of_its_role_and_takes_it_too(
    db_url, mem, reader, su, key, community
):
    cid = community.cid
    holder, newcomer = new_pubkey(), new_pubkey()
    mem.add_relay_members(cid, [holder, newcomer])
    mem.define_role(cid, ROLE, "Moderators")
    mem.assign_role(cid, holder, ROLE)

    with Stage(db_url, key) as stage:
        m = stage.membership()
        assigner = stage.raw_writer()
        assert assigner.value("SELECT buzz.assign_role(%s, %s, %s)", cid, newcomer, ROLE) == (
            "assigned"
        )

        delete = stage.background(lambda: m.delete_role(cid, ROLE), "delete")
        wait = wait_until_blocked(su, backend_pid(m.conn), assigner.pid, call=delete)
        assert wait.locktype == "transactionid", wait  # the role's row, held FOR KEY SHARE
        assert "delete_role" in wait.query
        assert list_lock_holders(su, cid) == []

        assert [ev.kind for ev in assigner.prepare()] == [KIND_MEMBERSHIP_LIST]
        [assigned_list] = assigner.sign_and_insert()
        assigner.commit()
        w = delete.result()

    # The assignment committed first: its list named the newcomer with the role.
    tags = {t[1]: t[2:] for t in assigned_list["tags"][1:]}
    assert tags[newcomer] == ["member", ROLE] and tags[holder] == ["member", ROLE]
    # The deletion then took the role from both holders, the newcomer included.
    assert w.outcome == "deleted"
    assert [ev["kind"] for ev in w.events] == [KIND_MEMBERSHIP_LIST, KIND_DELETION]
    deleted_list, deletion = w.events
    assert deleted_list == w.snapshot == reader.member_list(cid)
    assert deleted_list["created_at"] > assigned_list["created_at"]
    assert deletion["created_at"] == deleted_list["created_at"]
    assert roles_of(reader, cid) == {community.owner: [], holder: [], newcomer: []}
    assert {t[1]: t[2:] for t in deleted_list["tags"][1:]}[newcomer] == ["member"]
    assert deletion["tags"] == deletion_tags(key.pubkey, ROLE)
    assert deletions(reader, cid) == {ROLE: deletion}
    assert ROLE not in definitions(reader, cid)
    assert_consistent(reader, cid, key.pubkey)


@pytest.mark.parametrize("same", [True, False], ids=["same-definition", "other-label"])
def test_two_definitions_of_one_new_role(db_url, mem, reader, su, key, community, same):
    cid = community.cid
    first = ("Moderators", "Keeps the peace", 120, 3)
    second = first if same else ("Stewards", None, 200, -1)

    with Stage(db_url, key) as stage:
        listener = stage.listener()
        m = stage.membership()
        definer = stage.raw_writer()
        assert definer.value(
            "SELECT buzz.define_role(%s, %s, %s, %s, %s, %s)", cid, ROLE, *first
        ) == ("defined")

        define = stage.background(lambda: m.define_role(cid, ROLE, *second), "define")
        wait = wait_until_blocked(su, backend_pid(m.conn), definer.pid, call=define)
        # Its insert waits on the role's key, inserted by the open transaction.
        assert wait.locktype == "transactionid", wait
        assert "define_role" in wait.query

        assert [ev.kind for ev in definer.prepare()] == [KIND_ROLE]  # no list
        [defined] = definer.sign_and_insert()
        definer.commit()
        w = define.result()
        notes = [json.loads(n.payload) for n in listener.notifies(timeout=2, stop_after=2)]

    live = definitions(reader, cid)[ROLE]
    assert defined["tags"] == [
        ["-"],
        ["d", ROLE],
        ["label", "Moderators"],
        ["description", "Keeps the peace"],
        ["color", "120"],
        ["order", "3"],
    ]
    if same:
        assert w.outcome == "unchanged"
        assert w.events == () and w.snapshot is None
        assert live == defined
        assert [n["id"] for n in notes] == [defined["id"]]
    else:
        assert w.outcome == "updated"
        assert w.snapshot is None  # no member tag changed: no list
        [updated] = w.events
        assert updated["kind"] == KIND_ROLE
        assert updated["tags"] == [
            ["-"],
            ["d", ROLE],
            ["label", "Stewards"],
            ["color", "200"],
            ["order", "-1"],
        ]
        assert updated["created_at"] > defined["created_at"]
        assert live == updated
        assert [(n["id"], n["kind"]) for n in notes] == [
            (defined["id"], KIND_ROLE),
            (updated["id"], KIND_ROLE),
        ]
    assert_consistent(reader, cid, key.pubkey)


@pytest.mark.parametrize("first", ["define", "add"], ids=["define-holds", "add-holds"])
def test_a_definition_and_a_member_add_both_publish(db_url, mem, reader, su, key, community, first):
    cid = community.cid
    joiner = new_pubkey()
    before = reader.member_list(cid)
    base_created = max(ev["created_at"] for ev in reader.role_definitions(cid))

    with Stage(db_url, key) as stage:
        listener = stage.listener()
        m = stage.membership()
        holder = stage.raw_writer()
        if first == "define":
            holder.value("SELECT buzz.define_role(%s, %s, %s)", cid, ROLE, "Moderators")
        else:
            holder.value("SELECT buzz.add_relay_member(%s, %s)", cid, joiner)
        # The first has prepared: it holds the list lock, which the second waits for (its
        # write goes through; its prepare waits). The second starts only now: started before,
        # it could reach prepare first.
        kinds = [ev.kind for ev in holder.prepare()]
        assert list_lock_holders(su, cid) == [holder.pid]
        if first == "define":
            other = stage.background(lambda: m.add_relay_member(cid, joiner), "add")
        else:
            other = stage.background(lambda: m.define_role(cid, ROLE, "Moderators"), "define")
        wait = wait_until_blocked(su, backend_pid(m.conn), holder.pid, call=other)
        assert wait.advisory_key == list_lock_key(su, cid), wait
        assert "prepare_membership_events" in wait.query
        held_events = holder.sign_and_insert()
        holder.commit()
        w = other.result()
        notes = [json.loads(n.payload) for n in listener.notifies(timeout=2, stop_after=3)]

    if first == "define":
        assert kinds == [KIND_ROLE]
        [definition] = held_events
        assert w.outcome == "added"
        added_list, added_event = w.events
        second_created = added_list["created_at"]
        first_created = definition["created_at"]
    else:
        assert kinds == [KIND_MEMBERSHIP_LIST, KIND_ADD_USER]
        added_list, added_event = held_events
        assert w.outcome == "defined"
        [definition] = w.events
        assert w.snapshot is None
        first_created, second_created = added_list["created_at"], definition["created_at"]
    assert added_event["tags"] == [["-"], ["p", joiner]]
    assert added_event["created_at"] == added_list["created_at"]
    # Distinct created_at, in commit order, each past everything published before.
    assert max(before["created_at"], base_created) < first_created < second_created
    # Both live: the list names the joiner, the role's 33534 is its live definition.
    assert reader.member_list(cid) == added_list
    assert joiner in roles_of(reader, cid)
    assert definitions(reader, cid)[ROLE] == definition
    # Announced at each COMMIT, in commit order (8000/8001 are not announced).
    announced = [(definition["id"], KIND_ROLE), (added_list["id"], KIND_MEMBERSHIP_LIST)]
    if first == "add":
        announced.reverse()
    assert [(n["id"], n["kind"]) for n in notes] == announced
    assert_consistent(reader, cid, key.pubkey)


@pytest.mark.parametrize("first", ["delete_role", "member_write"])
@pytest.mark.parametrize("write", ["remove", "update"])
def test_delete_role_and_a_write_of_a_holder_do_not_deadlock(
    db_url, mem, reader, su, key, community, first, write
):
    cid = community.cid
    holder, bystander = new_pubkey(), new_pubkey()
    mem.add_relay_members(cid, [holder, bystander])
    mem.define_role(cid, ROLE, "Moderators")
    mem.define_role(cid, "helper", "Helpers")
    mem.assign_role(cid, holder, ROLE)
    mem.assign_role(cid, bystander, ROLE)
    mem.assign_role(cid, holder, "helper")
    sql = {
        "remove": ("SELECT buzz.remove_relay_member(%s, %s)", (cid, holder), "removed"),
        "update": (
            "SELECT buzz.update_relay_member_role(%s, %s, 'admin')",
            (cid, holder),
            "updated",
        ),
    }[write]

    def member_write(m: Membership) -> Any:
        if write == "remove":
            return m.remove_relay_member(cid, holder)
        return m.update_relay_member_role(cid, holder, "admin")

    with Stage(db_url, key) as stage:
        m = stage.membership()
        raw = stage.raw_writer()
        if first == "delete_role":
            # The deletion has rewritten the holders' rows; the member write waits for one.
            assert raw.value("SELECT buzz.delete_role(%s, %s)", cid, ROLE) == "deleted"
            other = stage.background(lambda: member_write(m), write)
            query = "remove_relay_member" if write == "remove" else "update_relay_member_role"
        else:
            # The member write holds the holder's row; the deletion waits for it.
            assert raw.value(sql[0], *sql[1]) == sql[2]
            other = stage.background(lambda: m.delete_role(cid, ROLE), "delete_role")
            query = "delete_role"
        wait = wait_until_blocked(su, backend_pid(m.conn), raw.pid, call=other)
        assert wait.locktype == "transactionid", wait
        assert query in wait.query
        assert list_lock_holders(su, cid) == []  # the waiter holds no list lock: prepare goes on
        raw_kinds = [ev.kind for ev in raw.prepare()]
        raw_events = raw.sign_and_insert()
        raw.commit()
        w = other.result()  # a deadlock would raise 40P01 in one of the two

    if first == "delete_role":
        assert raw_kinds == [KIND_MEMBERSHIP_LIST, KIND_DELETION]
        deletion = raw_events[1]
        assert w.outcome == sql[2]
        lists = [raw_events[0], w.snapshot]
    else:
        assert raw_kinds == [KIND_MEMBERSHIP_LIST] + (
            [KIND_REMOVE_USER] if write == "remove" else []
        )
        assert w.outcome == "deleted"
        assert [ev["kind"] for ev in w.events] == [KIND_MEMBERSHIP_LIST, KIND_DELETION]
        deletion = w.events[1]
        lists = [raw_events[0], w.snapshot]
    assert lists[0]["created_at"] < lists[1]["created_at"]
    assert reader.member_list(cid) == lists[1]
    assert deletion["tags"] == deletion_tags(key.pubkey, ROLE)
    assert deletions(reader, cid) == {ROLE: deletion}
    expected = {community.owner: [], bystander: []}
    if write == "update":
        expected[holder] = ["helper"]  # the other defined role stays with the holder
        assert {m.pubkey: m.role for m in reader.relay_members(cid)}[holder] == "admin"
    assert roles_of(reader, cid) == expected
    assert_consistent(reader, cid, key.pubkey)


def test_delete_role_and_a_transfer_between_its_holders_do_not_deadlock(
    db_url, mem, reader, su, key, community
):
    cid, first_owner = community.cid, community.owner
    # The new owner's row comes first in the table and last in pubkey order: a scan meets it
    # before the owner's, while the transfer locks the owner's first.
    owner, new_owner = sorted(new_pubkey() for _ in range(2))
    mem.add_relay_member(cid, new_owner)
    mem.add_relay_member(cid, owner)
    mem.transfer_ownership(cid, owner)
    mem.define_role(cid, ROLE, "Moderators")
    mem.define_role(cid, "helper", "Helpers")
    mem.assign_role(cid, new_owner, ROLE)
    mem.assign_role(cid, owner, ROLE)

    with Stage(db_url, key) as stage:
        m, other = stage.membership(), stage.membership()
        raw = stage.raw_writer()
        assert raw.value("SELECT buzz.assign_role(%s, %s, 'helper')", cid, owner) == "assigned"
        transfer = stage.background(lambda: m.transfer_ownership(cid, new_owner), "transfer")
        wait = wait_until_blocked(su, backend_pid(m.conn), raw.pid, call=transfer)
        assert "transfer_ownership" in wait.query, wait
        # The deletion queues behind the transfer for the owner's row, holding no holder's
        # row: taking the new owner's first, in the table's order, would deadlock.
        deletion = stage.background(lambda: other.delete_role(cid, ROLE), "delete_role")
        wait = wait_until_blocked(su, backend_pid(other.conn), backend_pid(m.conn), call=deletion)
        assert "delete_role" in wait.query, wait
        raw.prepare()
        raw.sign_and_insert()
        raw.commit()
        transferred = transfer.result()  # a deadlock would raise 40P01 in one of the two
        deleted = deletion.result()

    assert transferred.outcome == "transferred"
    assert deleted.outcome == "deleted"
    assert transferred.snapshot["created_at"] < deleted.snapshot["created_at"]
    assert {m.pubkey: m.role for m in reader.relay_members(cid)} == {
        first_owner: "member",
        owner: "member",
        new_owner: "owner",
    }
    assert roles_of(reader, cid) == {first_owner: [], owner: ["helper"], new_owner: []}
    assert_consistent(reader, cid, key.pubkey)
