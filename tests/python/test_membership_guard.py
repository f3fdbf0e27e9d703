"""What holds a membership change to its signed list: rollback when the list write fails, the
commit guard (BZUNS), NOTIFY at commit only, READ COMMITTED only (BZISO), the lead bound
(BZLAG) and the recorded relay key (BZKEY), against a real database."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import psycopg
import pytest
from conftest import ONE_COMMUNITY_PER_TRANSACTION, PLAIN_SQL_WRITES, params
from fixtures_membership import (
    Community,
    TamperingConnection,
    assert_live_list,
    assert_user_events,
    members_of,
    new_host,
    new_pubkey,
    prepare_and_sign,
    publish_raw_signed,
    state,
    verify_both,
)
from sessions import behind_the_api

from buzz_signer.errors import (
    ListTooFarAhead,
    MalformedSignature,
    RelayKeyMismatch,
    StaleSignatures,
    UnsignedChange,
    WrongIsolation,
    translated,
)
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership, MembershipWrite
from buzz_signer.nostr import event_id, serialize_event
from buzz_signer.signer import RefusedToSign

pytest_plugins = ("fixtures_membership",)


class Boom(Exception):
    """Raised by a sabotaged step of a write."""


def publish_raw(conn: psycopg.Connection, key: RelayKey) -> list[dict[str, Any]]:
    """Prepare, sign and insert on a raw connection, without committing."""
    return publish_raw_signed(conn, key)[0]


# 2. A failed list write rolls the membership change back.


def _fail_sign_all(m: Membership, mp: pytest.MonkeyPatch) -> type[BaseException]:
    def boom(events):
        raise Boom("sign_all")

    mp.setattr(m.signer, "sign_all", boom)
    return Boom


def _fail_second_signature(m: Membership, mp: pytest.MonkeyPatch) -> type[BaseException]:
    real = RelayKey.sign
    calls = []

    def sign(self, id_hex, **kw):
        calls.append(id_hex)
        if len(calls) == 2:  # the list is signed, its 8000/8001 is not
            raise Boom("second signature")
        return real(self, id_hex, **kw)

    mp.setattr(RelayKey, "sign", sign)
    return Boom


def _malformed_signature(m: Membership, mp: pytest.MonkeyPatch) -> type[BaseException]:
    mp.setattr(m.signer, "sign_all", lambda events: ["zz" * 64 for _ in events])
    return MalformedSignature


def _fail_after_insert(m: Membership, mp: pytest.MonkeyPatch) -> type[BaseException]:
    real = m._publish

    def publish():
        real()  # the signed events are inserted...
        raise Boom("after insert")  # ...and the transaction still fails before COMMIT

    mp.setattr(m, "_publish", publish)
    return Boom


FAILURES = {
    "sign_all": _fail_sign_all,
    "second_signature": _fail_second_signature,
    "malformed_signature": _malformed_signature,
    "after_insert": _fail_after_insert,
}


class WithMember(NamedTuple):
    cid: Any
    host: str
    owner: str
    member: str


@pytest.fixture
def cm(mem: Membership, community: Community) -> WithMember:
    """The community with a second member (a member that a write may remove)."""
    member = new_pubkey()
    mem.add_relay_member(community.cid, member)
    return WithMember(*community, member)


def _w_add(m: Membership, c: WithMember) -> str:
    a = new_pubkey()
    m.add_relay_member(c.cid, a)
    return a


def _w_remove(m: Membership, c: WithMember) -> str:
    m.remove_relay_member(c.cid, c.member)
    return c.member


def _w_transfer(m: Membership, c: WithMember) -> str:
    a = new_pubkey()
    m.transfer_ownership(c.cid, a)
    return a


def _w_batch(m: Membership, c: WithMember) -> str:
    a = new_pubkey()
    with m.transaction() as tx:
        tx.add_relay_member(c.cid, a)
        tx.remove_relay_member(c.cid, c.member)
    return a


WRITES = {"add": _w_add, "remove": _w_remove, "transfer": _w_transfer, "batch": _w_batch}


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
@pytest.mark.parametrize("sabotage", list(FAILURES.values()), ids=list(FAILURES))
def test_failed_list_write_rolls_back(sabotage, write, mem, reader, key, cm, monkeypatch):
    before = state(reader, cm.cid)
    before_list = reader.member_list(cm.cid)
    expected = sabotage(mem, monkeypatch)
    with pytest.raises(expected):
        write(mem, cm)
    assert state(reader, cm.cid) == before  # same list (same id), members, events
    assert reader.member_list_drift() == []
    # Nothing is left half done: the same Membership writes normally afterwards.
    monkeypatch.undo()
    w = mem.add_relay_member(cm.cid, new_pubkey())
    assert_live_list(reader, cm.cid, w.snapshot, key.pubkey)
    assert w.snapshot["created_at"] > before_list["created_at"]


def test_failed_create_community_leaves_no_community(mem, reader, monkeypatch):
    _fail_sign_all(mem, monkeypatch)
    host = new_host()
    with pytest.raises(Boom):
        mem.create_community(host, new_pubkey())
    assert reader.community_id(host) is None
    assert reader.member_list_drift() == []


def _reserialize(row: tuple, text: str, *, kind: int | None = None) -> tuple:
    return (row[0], event_id(text), row[2] if kind is None else kind, row[3], text)


def _t_content(rows):  # content changed, id kept
    r = rows[0]
    return [(r[0], r[1], r[2], r[3], r[4].replace('"owner"]', '"admin"]')), *rows[1:]]


def _t_content_and_id(rows):  # a valid list, but not the one prepared
    r = rows[0]
    return [_reserialize(r, r[4].replace('"owner"]', '"admin"]')), *rows[1:]]


def _t_foreign_kind(rows):
    r = rows[0]
    arr = json.loads(r[4])
    return [_reserialize(r, serialize_event(arr[1], r[3], 1, [], "hello"), kind=1), *rows[1:]]


def _t_foreign_author(rows):
    r = rows[0]
    arr = json.loads(r[4])
    return [_reserialize(r, serialize_event(new_pubkey(), r[3], r[2], arr[4], "")), *rows[1:]]


def _t_drop_last(rows):
    return rows[:-1]


def _t_reorder(rows):
    return rows[::-1]


TAMPERS = {
    "content": (_t_content, RefusedToSign),
    "content_and_id": (_t_content_and_id, StaleSignatures),
    "foreign_kind": (_t_foreign_kind, RefusedToSign),
    "foreign_author": (_t_foreign_author, RefusedToSign),
    "dropped_row": (_t_drop_last, StaleSignatures),
    "reordered": (_t_reorder, StaleSignatures),
}


@pytest.mark.parametrize(("tamper", "error"), list(TAMPERS.values()), ids=list(TAMPERS))
def test_tampered_prepare_rolls_back(tamper, error, mem, reader, key, community):
    before = state(reader, community.cid)
    real = mem.conn
    mem.conn = TamperingConnection(real, tamper)
    a = new_pubkey()
    try:
        with pytest.raises(error):
            mem.add_relay_member(community.cid, a)
    finally:
        mem.conn = real
    assert state(reader, community.cid) == before
    assert a not in members_of(reader, community.cid)
    w = mem.add_relay_member(community.cid, a)
    assert_live_list(reader, community.cid, w.snapshot, key.pubkey)


# 4. The commit guard: no commit without the signed list.

UNSIGNED = {
    "api_add": "SELECT buzz.add_relay_member(%(c)s, %(new)s)",
    "api_add_many": "SELECT buzz.add_relay_members(%(c)s, ARRAY[%(new)s])",
    "api_remove": "SELECT buzz.remove_relay_member(%(c)s, %(member)s)",
    "api_update": "SELECT buzz.update_relay_member_role(%(c)s, %(member)s, 'admin')",
    "api_transfer": "SELECT buzz.transfer_ownership(%(c)s, %(new)s)",
    "api_republish": "SELECT buzz.republish_member_list(%(c)s)",
    "sql_insert": "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
    " VALUES (%(c)s, %(new)s, 'member')",
    "sql_update": "UPDATE buzz_private.relay_members SET role = 'admin'"
    " WHERE community_id = %(c)s AND pubkey = %(member)s",
    "sql_delete": "DELETE FROM buzz_private.relay_members"
    " WHERE community_id = %(c)s AND pubkey = %(member)s",
    "sql_delete_owner": "DELETE FROM buzz_private.relay_members"
    " WHERE community_id = %(c)s AND role = 'owner'",
}


@pytest.mark.parametrize(
    "stmt", params(UNSIGNED, {n: PLAIN_SQL_WRITES for n in UNSIGNED if n.startswith("sql_")})
)
def test_commit_without_signatures_fails(stmt, conn, reader, key, cm):
    """As the superuser, through the API or by plain SQL, not prepared or prepared and not
    signed: COMMIT raises BZUNS and nothing is kept."""
    before = state(reader, cm.cid)
    for prepare in (False, True):
        new = new_pubkey()
        conn.execute(stmt, {"c": cm.cid, "new": new, "member": cm.member})
        if prepare:
            rows = conn.execute(
                "SELECT * FROM buzz.prepare_membership_events(%s)", (key.pubkey,)
            ).fetchall()
            assert rows and rows[0][2] == 13534
        with pytest.raises(psycopg.Error) as caught:
            conn.commit()
        assert caught.value.sqlstate == "BZUNS"
        assert state(reader, cm.cid) == before
        assert new not in members_of(reader, cm.cid)
        # The connection is usable again, and an empty transaction commits.
        conn.execute("SELECT 1")
        conn.commit()


def test_commit_without_signatures_through_the_python_layer(mem, reader, community):
    before = state(reader, community.cid)
    with pytest.raises(UnsignedChange), translated(), mem.conn.transaction():
        mem.conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, new_pubkey()))
    assert state(reader, community.cid) == before


def test_change_after_signing_needs_a_new_list(conn, reader, key, cm):
    before = state(reader, cm.cid)
    conn.execute("SELECT buzz.add_relay_member(%s, %s)", (cm.cid, new_pubkey()))
    publish_raw(conn, key)
    conn.execute("SELECT buzz.remove_relay_member(%s, %s)", (cm.cid, cm.member))
    with pytest.raises(psycopg.Error) as caught:
        conn.commit()
    assert caught.value.sqlstate == "BZUNS"
    assert state(reader, cm.cid) == before


def test_signatures_of_an_earlier_prepare_are_stale(conn, reader, key, cm):
    before = state(reader, cm.cid)
    conn.execute("SELECT buzz.add_relay_member(%s, %s)", (cm.cid, new_pubkey()))
    prepared, sigs = prepare_and_sign(conn, key)
    conn.execute("SELECT buzz.remove_relay_member(%s, %s)", (cm.cid, cm.member))
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(
            "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
            ([p.id for p in prepared], sigs),
        )
    assert caught.value.sqlstate == "BZSTL"
    conn.rollback()
    assert state(reader, cm.cid) == before


def test_raw_two_phase_write_commits(conn, reader, key, community):
    """The SQL API used directly, the way the contract describes it, publishes like the client."""
    a = new_pubkey()
    assert (
        conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, a)).fetchone()[0]
        == "added"
    )
    events, published = publish_raw_signed(conn, key)
    conn.commit()
    w = MembershipWrite("added", published)
    # What insert_signed_events returned is what was signed.
    assert w.snapshot == events[0]
    assert w.events == tuple(events)
    assert_live_list(
        reader, community.cid, events[0], key.pubkey, {community.owner: "owner", a: "member"}
    )
    assert_user_events(reader, community.cid, w, key.pubkey, {a}, set())


@pytest.mark.parametrize(
    "stmt",
    [
        "TRUNCATE buzz_private.relay_members",
        "TRUNCATE buzz_private.relay_members CASCADE",
        "TRUNCATE buzz_private.communities CASCADE",
    ],
)
def test_truncate_of_members_is_refused(stmt, conn, reader, cm):
    before = state(reader, cm.cid)
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(stmt)
    assert caught.value.sqlstate == "55000"
    conn.rollback()
    assert state(reader, cm.cid) == before


def test_restore_with_triggers_off_shows_drift_and_republish_repairs(
    db_url, mem, reader, key, community
):
    """Only replica mode bypasses the guard; member_list_drift tells, republish repairs."""
    a = new_pubkey()
    with behind_the_api(db_url, community.cid) as restore:
        restore.execute(
            "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
            " VALUES (%s, %s, 'member')",
            (community.cid, a),
        )
    drift = reader.member_list_drift()
    assert [(d.community_id, d.problem) for d in drift] == [(community.cid, "members_differ")]
    w = mem.republish_member_list(community.cid)
    assert_live_list(
        reader, community.cid, w.snapshot, key.pubkey, {community.owner: "owner", a: "member"}
    )
    # The list, then every role definition re-signed; no 8000 for a member added outside.
    assert w.events[0] == w.snapshot
    assert [ev["kind"] for ev in w.events[1:]] == [33534, 33534, 33534]
    assert reader.member_list_drift() == []


# 5. NOTIFY buzz_membership: one payload per committed list (and role event), at commit,
# never on rollback.


@pytest.fixture
def listener(db_url: str, community: Community) -> Iterator[psycopg.Connection]:
    """Listening from after the community's creation."""
    c = psycopg.connect(db_url, autocommit=True)
    c.execute("LISTEN buzz_membership")
    try:
        yield c
    finally:
        c.close()


QUIET = 0.3  # seconds to wait for a notification that must not come


def received(listener: psycopg.Connection, expected: int) -> list[dict[str, Any]]:
    """The payloads of the next `expected` notifications, and proof that no more follow."""
    got = []
    if expected:
        got = [n for n in listener.notifies(timeout=10, stop_after=expected)]
    got += list(listener.notifies(timeout=QUIET))
    assert all(n.channel == "buzz_membership" for n in got)
    return [json.loads(n.payload) for n in got]


def payload_of(cid: Any, snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        "community_id": str(cid),
        "id": snapshot["id"],
        "kind": snapshot["kind"],
        "created_at": snapshot["created_at"],
    }


def announced(cid: Any, write: Any) -> list[dict[str, Any]]:
    """The payloads a write's commit announces: its list and role events (not 8000/8001),
    sorted by id (one commit's notifications come in no fixed order)."""
    return sorted(
        (payload_of(cid, ev) for ev in write.events if ev["kind"] not in (8000, 8001)),
        key=lambda p: p["id"],
    )


@pytest.mark.single_server(ONE_COMMUNITY_PER_TRANSACTION)
def test_notify_once_per_committed_list(mem, listener, community):
    # The fixture's create_community committed before LISTEN: nothing from it.
    assert received(listener, 0) == []

    w = mem.add_relay_member(community.cid, new_pubkey())
    [p] = received(listener, 1)
    assert p == payload_of(community.cid, w.snapshot)
    assert type(p["community_id"]) is str and type(p["id"]) is str
    assert type(p["kind"]) is int and type(p["created_at"]) is int

    # The list and the three base role definitions.
    w = mem.create_community(new_host(), new_pubkey())
    got = received(listener, 4)
    assert sorted(got, key=lambda p: p["id"]) == announced(w.details["community_id"], w)
    assert payload_of(w.details["community_id"], w.snapshot) in got

    other = w.details["community_id"]
    with mem.transaction() as tx:
        a = new_pubkey()
        tx.add_relay_member(community.cid, a)
        tx.add_relay_member(other, a)
        tx.remove_relay_member(other, a)
        tx.add_relay_member(other, new_pubkey())
    got = received(listener, 2)
    assert sorted(got, key=lambda p: p["id"]) == sorted(
        (payload_of(c, tx.lists[c]) for c in tx.lists), key=lambda p: p["id"]
    )

    w = mem.republish_member_list(community.cid)
    got = received(listener, 4)
    assert sorted(got, key=lambda p: p["id"]) == announced(community.cid, w)

    # No change, no list, no notification; nor for a deletion.
    assert mem.add_relay_member(community.cid, a).outcome == "already_member"
    assert mem.remove_relay_member(community.cid, new_pubkey()).outcome == "not_member"
    assert mem.delete_community(other).outcome == "deleted"
    assert received(listener, 0) == []


@pytest.mark.parametrize(
    "sabotage", [_fail_sign_all, _fail_after_insert], ids=["sign_all", "after_insert"]
)
def test_no_notify_for_a_rolled_back_write(sabotage, mem, listener, community, monkeypatch):
    sabotage(mem, monkeypatch)
    with pytest.raises(Boom):
        mem.add_relay_member(community.cid, new_pubkey())
    assert received(listener, 0) == []


def test_no_notify_when_commit_fails(conn, listener, key, community):
    conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, new_pubkey()))
    conn.execute("SELECT buzz.prepare_membership_events(%s)", (key.pubkey,))
    with pytest.raises(psycopg.Error):
        conn.commit()
    assert received(listener, 0) == []


def test_notify_arrives_at_commit_not_before(conn, reader, listener, key, community):
    before = reader.member_list(community.cid)
    conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, new_pubkey()))
    events = publish_raw(conn, key)
    # Signed and inserted, the transaction still open: no notification, old list still live.
    assert received(listener, 0) == []
    assert reader.member_list(community.cid) == before
    conn.commit()
    assert received(listener, 1) == [payload_of(community.cid, events[0])]
    assert reader.member_list(community.cid) == events[0]


# 6. READ COMMITTED only.

ISOLATED = {
    "add": lambda m, c: m.add_relay_member(c.cid, new_pubkey()),
    "add_many": lambda m, c: m.add_relay_members(c.cid, [new_pubkey()]),
    "claim": lambda m, c: m.claim_relay_membership(c.cid, new_pubkey()),
    "remove": lambda m, c: m.remove_relay_member(c.cid, c.member),
    "remove_if_role": lambda m, c: m.remove_relay_member_if_role(c.cid, c.member, "member"),
    "update": lambda m, c: m.update_relay_member_role(c.cid, c.member, "admin"),
    "bootstrap": lambda m, c: m.bootstrap_owner(c.cid, new_pubkey()),
    "transfer": lambda m, c: m.transfer_ownership(c.cid, new_pubkey()),
    "backfill": lambda m, c: m.backfill_from_allowlist(c.cid),
    "republish": lambda m, c: m.republish_member_list(c.cid),
    "create": lambda m, c: m.create_community(new_host(), new_pubkey()),
    "rotate": lambda m, c: m.rotate_relay_key(m.signer.pubkey),
    "noop": lambda m, c: m.add_relay_member(c.cid, c.owner),
}


@pytest.mark.parametrize(
    "level",
    [psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE],
    ids=["repeatable_read", "serializable"],
)
def test_writes_under_other_isolation_are_refused(level, mem, reader, key, cm):
    mem.allowlist_add(cm.cid, new_pubkey())
    for name, call in ISOLATED.items():
        before = state(reader, cm.cid)
        everything = reader.conn.execute(
            "SELECT (SELECT count(*) FROM buzz_private.communities),"
            " (SELECT pubkey FROM buzz_private.relay_key)"
        ).fetchone()
        mem.conn.isolation_level = level
        with pytest.raises(WrongIsolation):
            call(mem, cm)
        mem.conn.isolation_level = None
        assert state(reader, cm.cid) == before, name
        assert (
            reader.conn.execute(
                "SELECT (SELECT count(*) FROM buzz_private.communities),"
                " (SELECT pubkey FROM buzz_private.relay_key)"
            ).fetchone()
            == everything
        ), name
    # READ COMMITTED again: the calls go through.
    for call in ISOLATED.values():
        call(mem, cm)
    assert_live_list(reader, cm.cid, reader.member_list(cm.cid), key.pubkey)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT buzz.add_relay_member(%(c)s, %(new)s)",
        "SELECT * FROM buzz.prepare_membership_events(%(relay)s)",
        "SELECT buzz.archive_community(%(c)s)",
        "SELECT buzz.unarchive_community(%(c)s)",
        "SELECT buzz.delete_community(%(c)s)",
    ],
)
def test_raw_calls_under_repeatable_read_are_refused(sql, conn, reader, key, community):
    before = state(reader, community.cid)
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(sql, {"c": community.cid, "new": new_pubkey(), "relay": key.pubkey})
    assert caught.value.sqlstate == "BZISO"
    conn.rollback()
    assert state(reader, community.cid) == before


# 7. The lead bound (BZLAG) and the relay key (BZKEY).


def test_burst_is_bounded_and_a_batch_is_not(mem, reader, key, community, su):
    su.execute("UPDATE buzz_private.settings SET max_list_lead_seconds = 3")
    accepted = []
    for _ in range(200):
        a = new_pubkey()
        before = state(reader, community.cid)
        t0 = time.time()
        try:
            w = mem.add_relay_member(community.cid, a)
        except ListTooFarAhead:
            break
        t1 = time.time()
        # Never more than 3 s ahead of the clock at prepare (which is at most t1).
        assert w.snapshot["created_at"] <= int(t1) + 3
        accepted.append((w.snapshot, t0, t1))
    else:
        pytest.fail("a burst of 200 single writes never raised BZLAG")
    # The refused write left nothing.
    assert state(reader, community.cid) == before
    assert a not in members_of(reader, community.cid)
    created = [s["created_at"] for s, _, _ in accepted]
    assert created == sorted(set(created))
    # The last accepted list was exactly 3 s ahead when prepared (3 is allowed, 4 is not).
    last, t0, t1 = accepted[-1]
    assert int(t0) + 3 <= last["created_at"] <= int(t1) + 3
    # The same number of changes in one transaction: one list, close to the clock.
    n = len(accepted) + 1
    other = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    pubkeys = [new_pubkey() for _ in range(n)]
    with mem.transaction() as tx:
        for pk in pubkeys:
            assert tx.add_relay_member(other, pk) == "added"
    assert list(tx.lists) == [str(other)]
    assert len(tx.events) == 1 + n
    assert tx.lists[str(other)]["created_at"] <= int(time.time()) + 3
    assert_live_list(reader, other, tx.lists[str(other)], key.pubkey)
    # Retry later: once the clock has caught up, single writes go through again.
    while time.time() < last["created_at"] - 2:
        time.sleep(0.05)
    w = mem.add_relay_member(community.cid, a)
    assert last["created_at"] < w.snapshot["created_at"] <= int(time.time()) + 3
    assert_live_list(reader, community.cid, w.snapshot, key.pubkey)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, c: m.add_relay_member(c.cid, new_pubkey()),
        lambda m, c: m.remove_relay_member(c.cid, c.owner),  # no change, still refused
        lambda m, c: m.create_community(new_host(), new_pubkey()),
        lambda m, c: m.republish_member_list(c.cid),
    ],
    ids=["add", "noop", "create", "republish"],
)
def test_another_key_is_refused(call, db_url, reader, community):
    before = state(reader, community.cid)
    hosts = reader.conn.execute("SELECT count(*) FROM buzz_private.communities").fetchone()
    with (
        Membership.connect(db_url, RelayKey.generate()) as intruder,
        pytest.raises(RelayKeyMismatch),
    ):
        call(intruder, community)
    assert state(reader, community.cid) == before
    assert reader.conn.execute("SELECT count(*) FROM buzz_private.communities").fetchone() == hosts


def test_rotation_signed_by_the_old_key_is_refused(db_url, mem, reader, key, community):
    new_key = RelayKey.generate()
    before = state(reader, community.cid)
    with pytest.raises(RelayKeyMismatch):
        mem.rotate_relay_key(new_key.pubkey)  # prepares with the old key: rolled back
    assert state(reader, community.cid) == before
    with Membership.connect(db_url, new_key) as m2, pytest.raises(RelayKeyMismatch):
        m2.add_relay_member(community.cid, new_pubkey())
    w = mem.add_relay_member(community.cid, new_pubkey())
    assert_live_list(reader, community.cid, w.snapshot, key.pubkey)


def test_rotation_moves_every_list_to_the_new_key(db_url, mem, reader, key, community):
    cids = [community.cid]
    for _ in range(3):
        cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
        mem.add_relay_members(cid, [new_pubkey(), new_pubkey()])
        cids.append(cid)
    assert mem.archive_community(cids[-1]) == "archived"
    tags = {cid: reader.member_list(cid)["tags"] for cid in cids}
    new_key = RelayKey.generate()
    with Membership.connect(db_url, new_key) as m2:
        rounds = []
        while True:
            w = m2.rotate_relay_key(new_key.pubkey, limit=1)
            rounds.append(w)
            if w.outcome == 0:
                break
            assert len(rounds) <= len(cids)
            # The list and the three base role definitions.
            assert w.outcome == 1 and len(w.events) == 4
            for ev in w.events:
                verify_both(ev)
        assert [w.outcome for w in rounds] == [1] * len(cids) + [0]
        assert rounds[-1].events == ()
        for cid in cids:
            live = reader.member_list(cid)
            assert live["tags"] == tags[cid]
            assert_live_list(reader, cid, live, new_key.pubkey)
        assert reader.member_list_drift() == []
        # The old key is refused from now on, for every community; the new one writes.
        for cid in cids:
            before = state(reader, cid)
            with pytest.raises(RelayKeyMismatch):
                mem.republish_member_list(cid)
            if cid != cids[-1]:  # not the archived one (BZARC comes first there)
                with pytest.raises(RelayKeyMismatch):
                    mem.add_relay_member(cid, new_pubkey())
            assert state(reader, cid) == before
        w = m2.add_relay_member(community.cid, new_pubkey())
        assert_live_list(reader, community.cid, w.snapshot, new_key.pubkey)


def test_first_prepare_records_the_key_even_without_events(db_url, reader):
    first, second = RelayKey.generate(), RelayKey.generate()
    with Membership.connect(db_url, first) as m:
        w = m.delete_community(uuid.uuid4())  # changes nothing; its prepare returns no rows
        assert (w.outcome, w.events) == ("not_found", ())
    assert reader.conn.execute("SELECT pubkey FROM buzz_private.relay_key").fetchone() == (
        first.pubkey,
    )
    with Membership.connect(db_url, second) as m, pytest.raises(RelayKeyMismatch):
        m.create_community(new_host(), new_pubkey())
    with Membership.connect(db_url, first) as m:
        w = m.create_community(new_host(), new_pubkey())
        assert_live_list(reader, w.details["community_id"], w.snapshot, first.pubkey)


def test_write_inside_the_callers_transaction(db_url, reader, listener, key, community):
    """In a transaction the caller opened, a write runs in a savepoint: the caller's COMMIT
    (or ROLLBACK) decides, and the listener hears of the list at that COMMIT only."""
    before = state(reader, community.cid)
    with psycopg.connect(db_url) as raw:
        m = Membership(raw, key)
        a = new_pubkey()
        raw.execute("SELECT 1")  # the caller's transaction is open
        w = m.add_relay_member(community.cid, a)
        assert w.snapshot is not None
        assert state(reader, community.cid) == before
        assert received(listener, 0) == []
        raw.rollback()
        assert state(reader, community.cid) == before
        assert received(listener, 0) == []

        raw.execute("SELECT 1")
        w = m.add_relay_member(community.cid, a)
        assert state(reader, community.cid) == before
        assert received(listener, 0) == []
        raw.commit()
        assert received(listener, 1) == [payload_of(community.cid, w.snapshot)]
        assert_live_list(
            reader, community.cid, w.snapshot, key.pubkey, {community.owner: "owner", a: "member"}
        )


def test_several_writes_in_the_callers_transaction_leave_one_list(
    db_url, reader, listener, key, community
):
    """Each write publishes in its savepoint, yet the transaction leaves what one transaction
    must: one list, 8000/8001 by net effect from its start, one notification at COMMIT."""
    a, b = new_pubkey(), new_pubkey()
    with psycopg.connect(db_url) as raw:
        m = Membership(raw, key)
        raw.execute("SELECT 1")  # the caller's transaction is open
        m.add_relay_member(community.cid, a)
        m.add_relay_member(community.cid, b)
        last = m.remove_relay_member(community.cid, a)
        assert [ev["kind"] for ev in last.events] == [13534, 8000]
        assert last.events[1]["tags"][1][1] == b
        raw.commit()
    assert received(listener, 1) == [payload_of(community.cid, last.snapshot)]
    assert_live_list(
        reader, community.cid, last.snapshot, key.pubkey, {community.owner: "owner", b: "member"}
    )
    events = [(ev["kind"], ev["tags"][1][1]) for ev in reader.membership_events(community.cid)]
    assert events == [(8000, community.owner), (8000, b)]  # the owner's from the creation


@pytest.mark.parametrize("fault", ["another_key", "zero", "bit_flipped", "swapped"])
def test_a_faulty_signer_is_refused_by_the_database(fault, mem, reader, community, monkeypatch):
    """The one verification on the path is the database's: a key or library that hands over a
    wrong signature gets BZSIG from insert_signed_events, and nothing of the write is kept."""
    before = state(reader, community.cid)
    real_sign, other = RelayKey.sign, RelayKey.generate()
    made: list[str] = []

    def faulty(self: RelayKey, id_hex: str, **kw: Any) -> str:
        sig = real_sign(self, id_hex, **kw)
        made.append(sig)
        if fault == "another_key":
            return real_sign(other, id_hex)
        if fault == "zero":
            return "0" * 128
        if fault == "bit_flipped":
            return sig[:-1] + format(int(sig[-1], 16) ^ 1, "x")
        return made[0] if len(made) == 2 else sig  # the second event gets the first's

    monkeypatch.setattr(RelayKey, "sign", faulty)
    with pytest.raises(MalformedSignature) as info:
        mem.add_relay_member(community.cid, new_pubkey())
    assert info.value.sqlstate == "BZSIG"
    assert "does not verify" in str(info.value)
    assert state(reader, community.cid) == before
