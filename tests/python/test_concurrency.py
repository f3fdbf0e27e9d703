"""Concurrency with real sessions: several connections on one database, and every "B waits for
A" proven from pg_locks (sessions.wait_until_blocked) before the test goes on.

1. Eight joins of one community, all queued on its list lock at once: the final list names all
   eight, and each list of the queue names one member more than the one before.
2. A list repair (republish_member_list), prepared and holding the list lock, is held open; an
   owner transfer does its row work and waits for the list lock only; the repair commits, then
   the transfer: both commit, with increasing created_at. The repair re-signs the community's
   role definitions with its list.
3. A member removal holding its member row is held open; a transfer to that pubkey waits for
   the row; the removal prepares (the list lock is free), commits; the transfer commits.
4. A batch of adds (add_relay_members) has made the row of a pubkey that bootstrap_owner is
   making owner, and waits for a held member row that sorts between it and the owner's:
   the bootstrap waits for the batch's row, holding no member row, and both commit.
5. The same batch against backfill_from_allowlist, whose allowlist holds the batch's two new
   pubkeys (allowlisted in the other order): the backfill waits for the batch's first row,
   holding none, and adds nobody.
6. Two creations for one owner at its limit: the second waits for the first (the owner-limit
   lock), then answers limit_reached. Then several sessions create communities for one owner
   at the same moment, round after round: one is created each round, on a cluster too.
7. A join waiting for a list lock held by hand is cancelled (pg_cancel_backend): nothing of it
   is kept, the previous list stays live, no notification, and the community stays writable.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import psycopg
import pytest
from conftest import CITUS
from fixtures_membership import (
    assert_list_event,
    assert_live_list,
    members_of,
    new_pubkey,
    state,
    verify_both,
)
from sessions import (
    Stage,
    assert_waits_for_the_community_lock,
    backend_pid,
    behind_the_api,
    finishes_unblocked,
    list_lock_holders,
    list_lock_key,
    wait_until_blocked,
)

from buzz_signer.errors import BuzzError
from buzz_signer.membership import Membership
from buzz_signer.nostr import KIND_ADD_USER, KIND_MEMBERSHIP_LIST, KIND_REMOVE_USER, KIND_ROLE

pytest_plugins = ("fixtures_membership",)

JOINS = 8


def named(snapshot: dict) -> set[str]:
    return {tag[1] for tag in snapshot["tags"][1:]}


def test_concurrent_joins_are_all_listed(db_url, reader, su, key, community):
    cid = community.cid
    joiners = [new_pubkey() for _ in range(JOINS)]
    with Stage(db_url, key) as stage:
        sessions = [stage.membership() for _ in joiners]
        # Hold the list lock so that all eight have written their member row and wait, at
        # once, in prepare: the most any of them can miss of the others.
        holder = stage.hold_list_lock(cid)
        calls = [
            stage.background(lambda m=m, p=p: m.claim_relay_membership(cid, p), f"join {i}")
            for i, (m, p) in enumerate(zip(sessions, joiners, strict=True))
        ]
        for m, call in zip(sessions, calls, strict=True):
            wait = wait_until_blocked(su, backend_pid(m.conn), holder.pid, call=call)
            assert wait.advisory_key == list_lock_key(su, cid), wait
            assert "prepare_membership_events" in wait.query
        holder.release()
        writes = [call.result() for call in calls]

    assert [w.outcome for w in writes] == ["joined"] * JOINS
    # One after another under the list lock: created_at strictly increases along the queue
    # and each list names exactly one member more than the list before it.
    lists = sorted((w.snapshot for w in writes), key=lambda s: s["created_at"])
    created = [s["created_at"] for s in lists]
    assert len(set(created)) == JOINS
    previous = {community.owner}
    for snapshot in lists:
        assert previous < named(snapshot) and len(named(snapshot)) == len(previous) + 1
        previous = named(snapshot)
    for w in writes:
        [added] = w.events[1:]
        assert added["kind"] == KIND_ADD_USER
        assert added["created_at"] == w.snapshot["created_at"]

    expected = {community.owner: "owner", **{p: "member" for p in joiners}}
    assert_live_list(reader, cid, lists[-1], key.pubkey, expected)
    events = reader.membership_events(cid)  # the owner's 8000 (creation), then the joins'
    assert sorted(ev["tags"][1][1] for ev in events) == sorted([community.owner, *joiners])
    assert reader.member_list_drift() == []


def test_transfer_waits_for_a_held_list_repair(db_url, mem, reader, su, key, community):
    cid, owner = community.cid, community.owner
    members = {new_pubkey(): "member" for _ in range(3)}
    for p in members:  # a list each, within a second or so: created_at runs ahead of the clock
        mem.add_relay_member(cid, p)
    # A member restored behind the API's back (triggers off): the live list is stale.
    restored = new_pubkey()
    with behind_the_api(db_url, cid) as restore:
        restore.execute(
            "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
            " VALUES (%s, %s, 'member')",
            (cid, restored),
        )
    assert [d.problem for d in reader.member_list_drift(cid)] == ["members_differ"]
    stale = reader.member_list(cid)
    new_owner = new_pubkey()

    with Stage(db_url, key) as stage:
        m = stage.membership()
        repair = stage.raw_writer()
        repair.value("SELECT buzz.republish_member_list(%s)", cid)
        # The list (no member changed) and, re-signed, the three base role definitions.
        assert [ev.kind for ev in repair.prepare()] == [KIND_MEMBERSHIP_LIST] + [KIND_ROLE] * 3
        assert list_lock_holders(su, cid) == [repair.pid]

        transfer = stage.background(lambda: m.transfer_ownership(cid, new_owner, owner), "transfer")
        transferrer = backend_pid(m.conn)
        wait = wait_until_blocked(su, transferrer, repair.pid, call=transfer)
        if CITUS:
            # It waits first for the community's writes under way, on the community lock of its
            # worker, before it holds the relay-key lock (docs/scale-out.md).
            assert_waits_for_the_community_lock(su, wait, transferrer, cid)
        else:
            # Its row work is done (FOR KEY SHARE on the community never waits for the
            # repair); it waits for the list lock, in prepare, and for nothing else.
            assert wait.advisory_key == list_lock_key(su, cid), wait
            assert "prepare_membership_events" in wait.query
        assert members_of(reader, cid) == {owner: "owner", **members, restored: "member"}

        repaired, *definitions = repair.sign_and_insert()
        repair.commit()
        w = transfer.result()

    assert w.outcome == "transferred"
    repaired_members = {owner: "owner", **members, restored: "member"}
    assert_list_event(repaired, key.pubkey, repaired_members)
    assert [d["tags"][1][1] for d in definitions] == ["admin", "member", "owner"]
    assert definitions == reader.role_definitions(cid)
    assert {d["created_at"] for d in definitions} == {repaired["created_at"]}
    assert stale["created_at"] < repaired["created_at"] < w.snapshot["created_at"]
    expected = {**repaired_members, owner: "member", new_owner: "owner"}
    assert_live_list(reader, cid, w.snapshot, key.pubkey, expected)
    assert [(ev["kind"], ev["tags"]) for ev in w.events[1:]] == [
        (KIND_ADD_USER, [["-"], ["p", new_owner]])
    ]
    assert reader.member_list_drift() == []


def test_transfer_waits_for_a_held_member_removal(db_url, mem, reader, su, key, community):
    cid, owner = community.cid, community.owner
    leaving = new_pubkey()
    staying = new_pubkey()
    mem.add_relay_members(cid, [leaving, staying])
    before = reader.member_list(cid)

    with Stage(db_url, key) as stage:
        m, other = stage.membership(), stage.membership()
        removal = stage.raw_writer()
        assert removal.value("SELECT buzz.remove_relay_member(%s, %s)", cid, leaving) == "removed"
        assert list_lock_holders(su, cid) == []  # it holds the member row, not the list
        # It holds nothing another writer of the community needs: a join commits meanwhile.
        joiner = new_pubkey()
        join = stage.background(lambda: other.claim_relay_membership(cid, joiner), "join")
        assert finishes_unblocked(su, backend_pid(other.conn), join).outcome == "joined"

        # The transfer to the pubkey being removed must wait for that row (its new owner's
        # INSERT waits on the key), not for the community row, which both lock FOR KEY SHARE.
        # On a cluster it waits for the removal sooner, on the community lock of its worker
        # (docs/scale-out.md).
        transfer = stage.background(lambda: m.transfer_ownership(cid, leaving), "transfer")
        transferrer = backend_pid(m.conn)
        wait = wait_until_blocked(su, transferrer, removal.pid, call=transfer)
        if CITUS:
            assert_waits_for_the_community_lock(su, wait, transferrer, cid)
        else:
            assert wait.locktype == "transactionid", wait
            assert "buzz_private.communities" not in wait.queued_rows, wait
        assert "transfer_ownership" in wait.query
        # Nor does the waiting transfer stop other writes to the community; on a cluster they
        # queue behind its community lock, as behind a deletion's.
        invite = stage.background(lambda: other.create_relay_invite(cid, "tester"), "invite")
        if CITUS:
            wait_until_blocked(su, backend_pid(other.conn), transferrer, call=invite)
        else:
            finishes_unblocked(su, backend_pid(other.conn), invite)

        # The waiting transfer holds the owner's row (on a cluster, not yet) and the ownership
        # lock, not the list lock: the removal prepares and publishes without waiting for it.
        prepared = removal.prepare()
        assert [ev.kind for ev in prepared] == [13534, KIND_REMOVE_USER]
        removed_list, removed_event = removal.sign_and_insert()
        removal.commit()
        w = transfer.result()
        made = invite.result()
    assert [i.invite_id for i in reader.relay_invites(cid)] == [made.invite_id]

    assert w.outcome == "transferred"
    assert_list_event(
        removed_list, key.pubkey, {owner: "owner", staying: "member", joiner: "member"}
    )
    assert removed_event["tags"] == [["-"], ["p", leaving]]
    assert before["created_at"] < removed_list["created_at"] < w.snapshot["created_at"]
    # The removal committed first; the transfer then made the pubkey the owner again (8000).
    expected = {owner: "member", staying: "member", joiner: "member", leaving: "owner"}
    assert_live_list(reader, cid, w.snapshot, key.pubkey, expected)
    assert [(ev["kind"], ev["tags"]) for ev in w.events[1:]] == [
        (KIND_ADD_USER, [["-"], ["p", leaving]])
    ]
    history = reader.membership_events(cid, before["created_at"] + 1)
    assert [(ev["kind"], ev["tags"][1][1]) for ev in history] == [
        (KIND_ADD_USER, joiner),
        (KIND_REMOVE_USER, leaving),
        (KIND_ADD_USER, leaving),
    ]
    assert [ev["created_at"] for ev in history[1:]] == [
        removed_list["created_at"],
        w.snapshot["created_at"],
    ]
    assert reader.member_list_drift() == []


def race_a_held_batch(
    db_url: str,
    key: Any,
    su: psycopg.Connection,
    cid: Any,
    batch: list[str],
    hold: str,
    name: str,
    other: Callable[[Membership], Any],
) -> tuple[Any, Any]:
    """add_relay_members(cid, batch), held at its second pubkey by `hold` (SQL rewriting that
    member's row, left uncommitted), then `other` in a session of its own, which must wait for
    the batch; then both go on. Returns their writes: a deadlock raises 40P01 in one."""
    with Stage(db_url, key) as stage:
        m, o = stage.membership(), stage.membership()
        holder = stage.raw_writer()
        holder.value(hold, cid, batch[1])
        adding = stage.background(lambda: m.add_relay_members(cid, batch), "batch")
        wait = wait_until_blocked(su, backend_pid(m.conn), holder.pid, call=adding)
        assert wait.locktype == "transactionid" and "add_relay_members" in wait.query, wait
        # The batch has made its first pubkey's row; the other call waits for it.
        racing = stage.background(lambda: other(o), name)
        wait = wait_until_blocked(su, backend_pid(o.conn), backend_pid(m.conn), call=racing)
        assert wait.locktype == "transactionid" and name in wait.query, wait
        holder.prepare()
        holder.sign_and_insert()
        holder.commit()
        return adding.result(), racing.result()


def test_bootstrap_and_a_batch_adding_its_pubkey_do_not_deadlock(
    db_url, mem, reader, su, key, community
):
    cid = community.cid
    # New owner < held member < owner, in pubkey order: the batch makes the new owner's row
    # first. The bootstrap must then wait for that row holding no member row: demoting the
    # owner first would hold the row the batch reaches next.
    new_owner, held, owner = sorted(new_pubkey() for _ in range(3))
    mem.bootstrap_owner(cid, owner)
    mem.add_relay_member(cid, held)
    added, provisioned = race_a_held_batch(
        db_url,
        key,
        su,
        cid,
        [new_owner, held, owner],
        "SELECT buzz.update_relay_member_role(%s, %s, 'admin')",
        "bootstrap_owner",
        lambda o: o.bootstrap_owner(cid, new_owner),
    )
    assert added.outcome == 1  # the new owner; the other two were members
    assert provisioned.outcome == "provisioned"
    expected = {community.owner: "admin", owner: "admin", held: "admin", new_owner: "owner"}
    assert_live_list(reader, cid, provisioned.snapshot, key.pubkey, expected)
    assert added.snapshot["created_at"] < provisioned.snapshot["created_at"]
    assert reader.member_list_drift() == []


def test_backfill_and_a_batch_sharing_its_pubkeys_do_not_deadlock(
    db_url, mem, reader, su, key, community
):
    cid, owner = community.cid, community.owner
    first = new_pubkey()
    while first > owner:
        first = new_pubkey()
    last = new_pubkey()
    while last < owner:
        last = new_pubkey()
    # Allowlisted last first: the backfill must still take them in pubkey order. (The owner's
    # is the row held: a backfill adds to a community that has only its owner.)
    mem.allowlist_add(cid, last)
    mem.allowlist_add(cid, first)
    mem.define_role(cid, "helper", "Helpers")
    added, backfilled = race_a_held_batch(
        db_url,
        key,
        su,
        cid,
        [first, owner, last],
        "SELECT buzz.assign_role(%s, %s, 'helper')",
        "backfill_from_allowlist",
        lambda o: o.backfill_from_allowlist(cid),
    )
    assert added.outcome == 2
    assert backfilled.outcome == 0 and backfilled.snapshot is None  # both were members by then
    live = reader.member_list(cid)
    assert live == added.snapshot
    verify_both(live)
    assert live["tags"] == [
        ["-"],
        ["member", first, "member"],
        ["member", owner, "owner", "helper"],
        ["member", last, "member"],
    ]
    assert reader.member_list_drift() == []


def owned(su: psycopg.Connection, owner: str) -> list[str]:
    """The hosts of the communities `owner` owns."""
    rows = su.execute(
        "SELECT c.host FROM buzz_private.communities c WHERE c.community_id IN"
        " (SELECT m.community_id FROM buzz_private.relay_members m"
        "  WHERE m.pubkey = %s AND m.role = 'owner') ORDER BY c.host",
        (owner,),
    ).fetchall()
    return [host for (host,) in rows]


def test_a_second_creation_for_one_owner_waits_then_reaches_the_limit(db_url, reader, su, key):
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    owner = new_pubkey()
    with Stage(db_url, key) as stage:
        m = stage.membership()
        first = stage.raw_writer()
        (created,) = first.conn.execute(
            "SELECT outcome FROM buzz.create_community('first.limit.example.org', %s)", (owner,)
        ).fetchone()
        assert created == "created"
        second = stage.background(
            lambda: m.create_community("second.limit.example.org", owner), "create"
        )
        wait = wait_until_blocked(su, backend_pid(m.conn), first.pid, call=second)
        assert "create_community" in wait.query, wait
        first.prepare()
        first.sign_and_insert()
        first.commit()
        assert second.result().outcome == "limit_reached"
    assert owned(su, owner) == ["first.limit.example.org"]


CREATORS = 4
ROUNDS = 6


def create_at(start: threading.Barrier, m: Membership, host: str, owner: str) -> str:
    start.wait()
    return m.create_community(host, owner).outcome


def test_creations_for_one_owner_at_once_stay_within_its_limit(db_url, reader, su, key):
    """Several sessions create a community for one owner at the same moment, round after
    round: the owner-limit lock lets one count at a time, and only after the community the
    one before it created is visible wherever the count reads (on a cluster, every worker)."""
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    with Stage(db_url, key) as stage:
        sessions = [stage.membership() for _ in range(CREATORS)]
        for round_ in range(ROUNDS):
            owner = new_pubkey()
            start = threading.Barrier(CREATORS)
            calls = [
                stage.background(
                    partial(create_at, start, m, f"c{n}.r{round_}.limit.example.org", owner),
                    f"create {n}",
                )
                for n, m in enumerate(sessions)
            ]
            outcomes = sorted(call.result() for call in calls)
            assert outcomes == ["created"] + ["limit_reached"] * (CREATORS - 1), round_
            assert len(owned(su, owner)) == 1, owned(su, owner)
    assert reader.member_list_drift() == []


def test_cancelled_list_write_rolls_back(db_url, mem, reader, su, key, community):
    cid = community.cid
    mem.add_relay_member(cid, new_pubkey())
    before = state(reader, cid)
    joiner = new_pubkey()

    with Stage(db_url, key) as stage:
        listener = stage.listener()
        m = stage.membership()
        pid = backend_pid(m.conn)
        holder = stage.hold_list_lock(cid)

        join = stage.background(lambda: m.claim_relay_membership(cid, joiner), "join")
        wait = wait_until_blocked(su, pid, holder.pid, call=join)
        assert wait.advisory_key == list_lock_key(su, cid), wait
        assert "prepare_membership_events" in wait.query
        assert su.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone()[0] is True

        error = join.error()
        # The lock is still held by hand: nothing of the join is kept, the previous list is
        # live byte for byte, no event; the join failed with the cancellation.
        assert list_lock_holders(su, cid) == [holder.pid]
        assert state(reader, cid) == before, join.describe()
        assert isinstance(error, BuzzError), join.describe()
        assert error.sqlstate == "57014"  # query_canceled
        assert m.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        holder.release()

        assert state(reader, cid) == before
        assert joiner not in members_of(reader, cid)
        assert reader.member_list_drift() == []

        # The community is writable again; the same session joins with a newer list. It is
        # the first notification: none came for the cancelled join (NOTIFY order is commit
        # order).
        w = m.claim_relay_membership(cid, joiner)
        assert w.outcome == "joined"
        [note] = listener.notifies(timeout=30, stop_after=1)
        assert json.loads(note.payload) == {
            "community_id": str(cid),
            "id": w.snapshot["id"],
            "kind": 13534,
            "created_at": w.snapshot["created_at"],
        }
    assert w.snapshot["created_at"] > json.loads(before[0])["created_at"]
    assert_live_list(reader, cid, w.snapshot, key.pubkey, {**before[1], joiner: "member"})


# ------------------------------------------------------------------ delegations and departures


def _assigned(su: psycopg.Connection, community: Any) -> list[tuple[str, str]]:
    return su.execute(
        "SELECT pubkey, method FROM buzz.method_assignees(%s) ORDER BY 1, 2", (community,)
    ).fetchall()


def test_an_assignment_waits_for_a_held_departure_then_finds_no_member(
    db_url, mem, reader, su, key, community
):
    """A removal holds its transaction open; assign_method of that member waits for the
    member's row, then answers not_member: no assignment outlives the membership."""
    cid, member = community.cid, new_pubkey()
    mem.add_relay_member(cid, member)
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        removal = stage.raw_writer()
        assert removal.value("SELECT buzz.remove_relay_member(%s, %s)", cid, member) == "removed"
        assigning = stage.background(
            lambda: m.conn.execute(
                "SELECT buzz.assign_method(%s, %s, 'banevent')", (cid, member)
            ).fetchone()[0],
            "assign_method",
        )
        wait = wait_until_blocked(su, pid, removal.pid, call=assigning)
        assert "assign_method" in wait.query and wait.queued_rows, wait
        removal.prepare()
        removal.sign_and_insert()
        removal.commit()
        assert assigning.result() == "not_member"
        m.conn.commit()
    assert _assigned(su, cid) == []
    assert member not in members_of(reader, cid)
    assert reader.member_list_drift() == []


def test_a_departure_waits_for_a_held_assignment_then_takes_it_back(
    db_url, mem, reader, su, key, community
):
    """assign_method holds its transaction open; a removal of that member waits for the
    member's row, then takes the new assignment back with the membership."""
    cid, member, other = community.cid, new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, member)
    mem.add_relay_member(cid, other)
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        assigning = stage.raw_writer()
        for who in (member, other):
            assert (
                assigning.value("SELECT buzz.assign_method(%s, %s, 'banevent')", cid, who)
                == "assigned"
            )
        removing = stage.background(
            lambda: m.remove_relay_member(cid, member), "remove_relay_member"
        )
        wait = wait_until_blocked(su, pid, assigning.pid, call=removing)
        assert "remove_relay_member" in wait.query, wait
        assigning.commit()
        assert removing.result().outcome == "removed"
    assert _assigned(su, cid) == [(other, "banevent")]
    assert member not in members_of(reader, cid)
    assert reader.member_list_drift() == []


# ------------------------------------------------------------------ a delegate's limits


@pytest.mark.parametrize("call", ["remove", "branch", "ban"])
def test_a_delegates_removal_waits_for_a_held_promotion_then_spares_the_admin(
    db_url, mem, reader, su, key, community, call
):
    """A promotion to admin holds its transaction open; a delegate's removal (of the promoted
    member, or of the branch above them) or ban waits for it, then answers admin_spared and
    changes nothing: the limit is decided on the rows as locked, not on a read before."""
    cid, inviter, promoted = community.cid, new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, inviter)
    mem.add_relay_member(cid, promoted, "member", inviter)
    target = inviter if call == "branch" else promoted
    with Stage(db_url, key) as stage:
        m = stage.membership()
        pid = backend_pid(m.conn)
        promotion = stage.raw_writer()
        assert (
            promotion.value("SELECT buzz.update_relay_member_role(%s, %s, 'admin')", cid, promoted)
            == "updated"
        )
        delegates_call = {
            "remove": lambda: m.remove_relay_member(cid, target, spare_admins=True),
            "branch": lambda: m.remove_relay_member(cid, target, True, spare_admins=True),
            "ban": lambda: m.ban_pubkey(cid, target, None, new_pubkey(), spare_admins=True),
        }[call]
        removing = stage.background(delegates_call, call)
        wait_until_blocked(su, pid, promotion.pid, call=removing)
        promotion.prepare()
        promotion.sign_and_insert()
        promotion.commit()
        assert removing.result().outcome == "admin_spared"
    assert members_of(reader, cid) == {
        community.owner: "owner", inviter: "member", promoted: "admin"
    }
    assert reader.banned_pubkeys(cid) == []
    assert reader.member_list_drift() == []
