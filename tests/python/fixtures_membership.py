"""Fixtures and checks shared by the membership tests (test_membership_*.py).

Test modules load this file with ``pytest_plugins = ("fixtures_membership",)`` and import the
helper functions by name. Every fixture here builds on ``db_url`` (conftest.py), so each test
gets a database of its own, copied from the migrated template.

- ``key``: the relay key the test's ``mem`` signs with.
- ``mem``: a Membership over its own autocommit connection, signing with ``key``.
- ``either_api``: the same, once as Membership and once as AsyncMembership (parametrized).
- ``reader``: a second Membership on ANOTHER connection, only for reads of committed state.
- ``su``: a superuser autocommit connection to the test database (settings, direct SQL).
- ``community``: a community created through ``mem`` (its id, host and owner).
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple
from uuid import UUID

import nostr_sdk
import psycopg
import pytest
from async_bridge import BlockingAsyncMembership
from coincurve import PrivateKey
from psycopg import sql

from buzz_signer.keys import RelayKey
from buzz_signer.localdb import url_with_dbname
from buzz_signer.membership import Membership, MembershipWrite, Published
from buzz_signer.nostr import (
    KIND_ADD_USER,
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    compute_id,
    verify_event,
)
from buzz_signer.signer import PreparedEvent, Signer

_hosts = itertools.count(1)


def prepare_and_sign(
    conn: psycopg.Connection, key: RelayKey
) -> tuple[list[PreparedEvent], list[str]]:
    """Phase one on a raw connection, and the signer's signatures of what it prepared."""
    rows = conn.execute(
        "SELECT community_id, id, kind, created_at, serialized"
        " FROM buzz.prepare_membership_events(%s)",
        (key.pubkey,),
    ).fetchall()
    prepared = [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]
    return prepared, Signer(key).sign_all(prepared)


def publish_raw_signed(conn: psycopg.Connection, key: RelayKey) -> tuple[list[Any], Published]:
    """Prepare, sign and insert on a raw connection, without committing: the events that
    insert_signed_events returned, and what was signed (as the client API holds it)."""
    prepared, sigs = prepare_and_sign(conn, key)
    return insert_signed(conn, prepared, sigs), Published(prepared, sigs)


def insert_signed(
    conn: psycopg.Connection, prepared: list[PreparedEvent], sigs: list[str]
) -> list[Any]:
    """Phase two on a raw connection: the events insert_signed_events returns."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
            ([p.id for p in prepared], sigs),
        )
    ]


class Community(NamedTuple):
    cid: UUID
    host: str
    owner: str


def new_pubkey() -> str:
    """A real x-only public key (64 lowercase hex), so that every library accepts it."""
    return PrivateKey().public_key_xonly.format().hex()


def kind0(key: RelayKey, content: str, created_at: int = 1_700_000_000, tags: Any = ()) -> str:
    """A member's own profile (kind 0), signed by `key`, as the NIP-01 JSON text they send."""
    event = {"pubkey": key.pubkey, "created_at": created_at, "kind": 0, "tags": list(tags)}
    event["content"] = content
    event["id"] = compute_id(event)
    event["sig"] = key.sign(event["id"])
    return json.dumps(event)


def new_host() -> str:
    return f"c{next(_hosts)}.example.org"


@pytest.fixture
def key() -> RelayKey:
    return RelayKey.generate()


@pytest.fixture
def mem(db_url: str, key: RelayKey) -> Iterator[Membership]:
    m = Membership.connect(db_url, key)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture(params=["sync", "async"])
def either_api(request: pytest.FixtureRequest, db_url: str, key: RelayKey) -> Iterator[Any]:
    """Membership, or AsyncMembership on an AsyncConnection (behind a blocking bridge): a
    module that tests both APIs defines its ``mem`` as this."""
    m = Membership.connect(db_url, key) if request.param == "sync" else None
    m = m or BlockingAsyncMembership(db_url, key)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def reader(db_url: str) -> Iterator[Membership]:
    # Reads never prepare: the key of this Membership is never used.
    m = Membership.connect(db_url, RelayKey.generate())
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def su(db_url: str) -> Iterator[psycopg.Connection]:
    c = psycopg.connect(db_url, autocommit=True)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def community(mem: Membership) -> Community:
    owner = new_pubkey()
    host = new_host()
    w = mem.create_community(host, owner)
    assert w.outcome == "created"
    return Community(w.details["community_id"], host, owner)


# Checks


def verify_both(ev: dict[str, Any]) -> None:
    """The event verifies with our NIP-01 code and with rust-nostr's, and ids agree."""
    assert verify_event(ev), ev
    sdk = nostr_sdk.Event.from_json(json.dumps(ev))
    assert sdk.verify(), ev
    assert sdk.id().to_hex() == ev["id"]


def members_of(reader: Membership, cid: Any) -> dict[str, str]:
    return {m.pubkey: m.role for m in reader.relay_members(cid)}


def live_text(reader: Membership, cid: Any) -> str | None:
    """The live list exactly as the database serves it (to compare byte for byte)."""
    return reader.conn.execute("SELECT buzz.member_list(%s)::text", (cid,)).fetchone()[0]


def expected_tags(members: dict[str, str]) -> list[list[str]]:
    return [["-"]] + [["member", pk, members[pk]] for pk in sorted(members)]


def assert_list_event(ev: dict[str, Any], relay_pubkey: str, members: dict[str, str]) -> None:
    assert ev["kind"] == KIND_MEMBERSHIP_LIST
    assert ev["pubkey"] == relay_pubkey
    assert ev["content"] == ""
    assert ev["tags"] == expected_tags(members)
    verify_both(ev)


def assert_live_list(
    reader: Membership,
    cid: Any,
    snapshot: dict[str, Any] | None,
    relay_pubkey: str,
    expected: dict[str, str] | None = None,
) -> dict[str, str]:
    """snapshot is the one live list, it verifies, and it names exactly the committed members.

    `expected`, when given, is what the committed members must be. Returns the members.
    """
    assert snapshot is not None
    members = members_of(reader, cid)
    if expected is not None:
        assert members == expected
    live = reader.member_list(cid)
    assert live == snapshot
    assert json.loads(live_text(reader, cid)) == snapshot
    assert_list_event(snapshot, relay_pubkey, members)
    assert reader.member_list_drift(cid) == []
    return members


def assert_user_events(
    reader: Membership,
    cid: Any,
    write: MembershipWrite,
    relay_pubkey: str,
    added: set[str],
    removed: set[str],
) -> None:
    """The write's events are its list, then one 8000 per added and one 8001 per removed pubkey,
    all with the list's created_at, all verifying, and stored as the community's events. Role
    definitions the write published (SPEC §6; test_roles.py checks them) come after them."""
    snap = write.snapshot
    assert snap is not None
    assert write.events[0] == snap
    rest = [ev for ev in write.events[1:] if ev["kind"] in (KIND_ADD_USER, KIND_REMOVE_USER)]
    assert list(write.events[1 : 1 + len(rest)]) == rest
    assert [ev["kind"] for ev in rest] == (
        [KIND_ADD_USER] * len(added) + [KIND_REMOVE_USER] * len(removed)
    )
    assert [ev["tags"] for ev in rest] == (
        [[["-"], ["p", pk]] for pk in sorted(added)]
        + [[["-"], ["p", pk]] for pk in sorted(removed)]
    )
    for ev in rest:
        assert ev["pubkey"] == relay_pubkey
        assert ev["created_at"] == snap["created_at"]
        assert ev["content"] == ""
        verify_both(ev)
    # Lists of one community never share a created_at, so these are exactly this write's.
    assert reader.membership_events(cid, snap["created_at"]) == rest


def assert_noop(
    reader: Membership,
    cid: Any,
    write: MembershipWrite,
    before_text: str | None,
    before_members: dict[str, str],
    before_events: list[Any],
) -> None:
    """No snapshot, no events, the live list byte-identical, members and events unchanged."""
    assert write.snapshot is None
    assert write.events == ()
    assert live_text(reader, cid) == before_text
    assert members_of(reader, cid) == before_members
    assert reader.membership_events(cid) == before_events


def state(reader: Membership, cid: Any) -> tuple[str | None, dict[str, str], list[Any]]:
    """(live list text, members, 8000/8001 events) of a community, as committed."""
    return live_text(reader, cid), members_of(reader, cid), reader.membership_events(cid)


class _Rows:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows


class TamperingConnection:
    """A connection whose prepare_membership_events answers are altered on the way."""

    def __init__(self, conn: psycopg.Connection, tamper: Callable[[list], list]) -> None:
        self._conn = conn
        self._tamper = tamper

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
        cur = self._conn.execute(query, params, **kw)
        if "prepare_membership_events" in str(query):
            return _Rows(self._tamper(cur.fetchall()))
        return cur


@pytest.fixture
def empty_database(admin_url: str) -> Iterator[str]:
    """A new database of no template, unmigrated, dropped after the test."""
    name = f"buzz_empty_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield url_with_dbname(admin_url, name)
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))

