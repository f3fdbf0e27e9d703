"""Moderation behind the gate (SPEC §7, NIP-86): banned events, kind rules, blocked addresses
and methods assigned to members, in force in every buzz-relay process of the database.

The gate stands in front of rust-nostr's LocalRelay (tests/python/upstream_relay.py, a relay we
did not write); the clients are nostr-tools: the NIP-86 calls by tests/node/nip86_client.mjs
(NIP-98 headers from nostr-tools' nip98, as in test_relay_nip86.py), the reads and publishes by
tests/node/nip43_client.mjs (as in test_relay_nostr_tools.py), a raw aiohttp websocket where an
exact message or an HTTP status is the point. What the rules are is checked in the database;
what reached the upstream, by asking the LocalRelay directly.

A rule is in force in a process once that process has reloaded it (NOTIFY buzz_moderation at
its commit); the tests wait for that, bounded, never for a time: `in_force` bans a probe event
after the rules in question committed and publishes it through the process until the process
refuses it, since a process that has read the probe's ban has read every rule committed before
it. The probe is ephemeral (kind 20001): the LocalRelay never stores it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import secrets
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Self

import aiohttp
import psycopg
import pytest
from aiohttp import web as aio_web
from fixtures_membership import members_of, new_pubkey
from gate_fixtures import Gated, upstream_events, wire
from nip86_node import call, refused, rpc, send
from node_clients import auth as tools_auth
from node_clients import connect, pause, publish, req, run_client
from ports import free_port
from psycopg.conninfo import conninfo_to_dict
from relay_client import signed as wire_signed
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.relay.management import Management
from buzz_signer.relay.moderation import Rules, client_address, parse_network

pytest_plugins = (
    "fixtures_membership", "relay_fixtures", "nip86_node", "gate_fixtures", "node_clients"
)  # fmt: skip

BANNED = "blocked: this event is banned here"
PROBE_KIND = 20001  # ephemeral (NIP-01): relayed, never stored
WAIT_SECONDS = 15.0


# ---------------------------------------------------------------------------- helpers


def sql(gated: Gated, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of one statement on the test database, committed (a service's own connection)."""
    with psycopg.connect(gated.mem.conn.info.dsn, autocommit=True) as c:
        cur = c.execute(query, params)
        return cur.fetchall() if cur.description else []


def note(person: Person, content: str, kind: int = 1, **kw: Any) -> dict[str, Any]:
    return wire_signed(person.secret, kind, [], content, **kw)


def in_force(gated: Gated, url: str | None = None) -> None:
    """Wait, bounded, until the process at `url` (the gate's by default) holds every rule of
    the community committed so far (see the module docstring)."""
    url = url or gated.url
    probe = note(gated.member, f"probe {secrets.token_hex(8)}", PROBE_KIND)
    sql(gated, "SELECT buzz.ban_event(%s, %s, 'probe')", gated.community_id, probe["id"])

    async def until_refused() -> None:
        async with aiohttp.ClientSession() as web, wire(web, url, as_=gated.member) as w:
            deadline = time.monotonic() + WAIT_SECONDS
            while (await w.ok(probe))[2:] != [False, BANNED]:
                assert time.monotonic() < deadline, f"{url} did not take the rules in time"
                await asyncio.sleep(0.02)

    try:
        asyncio.run(until_refused())
    finally:
        sql(gated, "SELECT buzz.unban_event(%s, %s)", gated.community_id, probe["id"])


def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait, bounded, until `check` holds."""

    async def main() -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not await check():
            assert time.monotonic() < deadline, f"not in time: {what}"
            await asyncio.sleep(0.02)

    asyncio.run(main())


async def http_status(url: str, forwarded_for: str | None = None, **headers: str) -> int:
    """The status of a websocket handshake at `url` (101 when it opens), with an
    X-Forwarded-For header when given."""
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    async with aiohttp.ClientSession() as web:
        try:
            async with web.ws_connect(url, headers=headers) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


async def get_status(http: str, accept: str, forwarded_for: str | None = None) -> int:
    headers = {"Accept": accept}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    async with aiohttp.ClientSession() as web, web.get(http + "/", headers=headers) as resp:
        return resp.status


def banned_in_db(gated: Gated) -> dict[str, tuple[str | None, str | None]]:
    rows = sql(
        gated,
        "SELECT event_id, reason, banned_by FROM buzz.banned_events(%s)",
        gated.community_id,
    )
    return {event_id: (reason, by) for event_id, reason, by in rows}


# ---------------------------------------------------------- the checks, without a server


def test_client_address_behind_trusted_proxies() -> None:
    proxies = [parse_network("127.0.0.1"), parse_network("10.0.0.0/8"), parse_network("fd00::/8")]
    cases = [
        # (peer, X-Forwarded-For values, trusted?, the client)
        ("192.0.2.1", ["198.51.100.7"], True, "192.0.2.1"),  # an untrusted peer's header: ignored
        ("127.0.0.1", [], True, "127.0.0.1"),  # a trusted proxy without the header is the client
        ("127.0.0.1", ["198.51.100.7"], True, "198.51.100.7"),
        ("127.0.0.1", ["198.51.100.7"], False, "127.0.0.1"),  # no --trusted-proxy: the peer
        ("127.0.0.1", ["6.6.6.6, 198.51.100.7"], True, "198.51.100.7"),  # the rightmost untrusted
        ("127.0.0.1", ["198.51.100.7, 10.1.2.3"], True, "198.51.100.7"),  # proxies skipped
        ("127.0.0.1", ["198.51.100.7", "10.1.2.3"], True, "198.51.100.7"),  # several headers
        ("127.0.0.1", ["10.9.9.9, 10.1.2.3"], True, "10.9.9.9"),  # all trusted: the leftmost
        ("127.0.0.1", ["198.51.100.7, unknown"], True, "127.0.0.1"),  # not an address: stop
        ("127.0.0.1", ["::ffff:198.51.100.7"], True, "198.51.100.7"),  # IPv4-mapped
        ("::ffff:127.0.0.1", ["2001:db8::7"], True, "2001:db8::7"),  # a mapped peer, trusted
        ("fd00::1", ["[2001:db8::7]:4711"], True, "2001:db8::7"),  # with a port
        ("127.0.0.1", ["198.51.100.7:4711"], True, "198.51.100.7"),
        (None, ["198.51.100.7"], True, None),  # no peer address (a unix socket)
    ]
    for peer, forwarded, trusted, expected in cases:
        got = client_address(peer, forwarded, proxies if trusted else [])
        assert got == (None if expected is None else ipaddress.ip_address(expected)), (
            peer,
            forwarded,
        )


def test_rules_refuse_and_block() -> None:
    rules = Rules.of([
        ("banned_event", "ab" * 32),
        ("allowed_kind", "1"),
        ("allowed_kind", "7"),
        ("disallowed_kind", "7"),  # both at once cannot be stored; disallowed wins here anyway
        ("blocked_ip", "198.51.100.0/24"),
        ("blocked_ip", "203.0.113.7/32"),
        ("blocked_ip", "2001:db8::/32"),
    ])  # fmt: skip
    assert "ab" * 32 in rules.banned_events
    assert rules.kind_refused(1) is None
    assert rules.kind_refused(7) == "blocked: kind 7 is not allowed here"
    assert rules.kind_refused(6) == "blocked: kind 6 is not among the kinds allowed here"
    assert Rules.of([("disallowed_kind", "7")]).kind_refused(6) is None  # no allow list
    for blocked in ("198.51.100.1", "203.0.113.7", "2001:db8::1"):
        assert rules.blocks(ipaddress.ip_address(blocked)), blocked
    for free in ("198.51.101.1", "203.0.113.8", "2001:db9::1", None):
        assert not rules.blocks(None if free is None else ipaddress.ip_address(free)), free
    assert parse_network("::ffff:198.51.100.0/120") == ipaddress.ip_network("198.51.100.0/24")
    for bad in ("10.0.0.1/8", "example.org", "", "10.0.0.0/33"):
        with pytest.raises(ValueError):
            parse_network(bad)


def test_every_method_of_the_relay_is_assignable_but_five(db_url: str) -> None:
    """buzz_private.delegable_method, the one list of what may be assigned, takes every
    NIP-86 method this relay serves but supportedmethods (anyone's), assignmethod and
    unassignmethod (a delegate would hand out more), setmemberrole (a delegate would make
    themselves an admin) and disallowpubkey (assigned as unallowpubkey); and nothing else."""
    never = {"supportedmethods", "assignmethod", "unassignmethod", "setmemberrole", "disallowpubkey"}
    methods = set(Management(None, RelayKey.generate())._methods)
    assert never <= methods
    with psycopg.connect(db_url, autocommit=True) as c:
        for method in sorted(methods | {"nosuchmethod"}):
            try:
                c.execute("SELECT buzz_private.delegable_method(%s)", (method,))
                accepted = True
            except psycopg.errors.InvalidParameterValue:
                accepted = False
            assert accepted == (method in methods - never), method


# ------------------------------------------------------------------ 1. banned events


def test_a_banned_event_never_reaches_a_subscriber_and_cannot_be_republished(
    open_gate, node_client, nip86_client
) -> None:
    gated = open_gate()
    # A note banned before it exists (its id is known), then sent to the upstream directly, as
    # another writer of the upstream could: the gate must drop it from live pushes too.
    later = note(gated.member, "banned before it came")
    after = note(gated.member, "sent upstream after it", created_at=later["created_at"] + 1)
    ids: dict[str, str] = {}

    def ban(run: Any) -> None:
        (a,) = [x for x in run.where("ok") if x["label"] == "A"]
        ids["A"] = a["id"]
        assert call(nip86_client, gated, gated.owner, "banevent", a["id"], "spam") is True
        assert call(nip86_client, gated, gated.admin, "banevent", later["id"]) is True
        in_force(gated)

    def push_upstream(run: Any) -> None:
        async def main() -> None:
            async with aiohttp.ClientSession() as web, web.ws_connect(gated.upstream.url) as ws:
                for event in (later, after):
                    await ws.send_str(json.dumps(["EVENT", event]))
                    while True:
                        msg = json.loads(await ws.receive_str(timeout=5))
                        if msg[:2] == ["OK", event["id"]]:
                            assert msg[2] is True, msg
                            break

        asyncio.run(main())

    run_ = run_client(
        node_client,
        gated,
        {"member": gated.member, "admin": gated.admin},
        [
            connect("m"),
            tools_auth("m", "member"),
            publish("m", "member", "A", 1, [], content="to be banned"),
            publish("m", "member", "B", 1, [], content="stays", createdAtOffset=-1),
            pause("ban"),
            connect("a"),
            tools_auth("a", "admin"),
            req("a", "read", keep=True, filters=[{"kinds": [1], "authors": [gated.member.pubkey]}]),
            pause("push"),
            {"op": "wait", "label": "read", "count": 1},
            publish("m", "member", "A-again", 1, [], again="A"),
            {"op": "publish", "conn": "m", "as": "member", "label": "B-again", "again": "B"},
        ],
        [ban, push_upstream],
    )
    assert run_.ok("A") == (True, "") and run_.ok("B") == (True, "")
    (b,) = [x["id"] for x in run_.where("ok") if x["label"] == "B"]
    # Stored: B, never A; live: the note after, never the banned one before it.
    assert [e["id"] for e in run_.events("read", live=False)] == [b]
    assert [e["id"] for e in run_.events("read", live=True)] == [after["id"]]
    # Published again: refused with blocked:, while the same client's B goes through.
    assert run_.ok("A-again") == (False, BANNED)
    assert run_.ok("B-again")[0] is True
    # The database holds the bans (the reason, who banned); the upstream still has A: the
    # gate hides it, it deletes nothing.
    assert banned_in_db(gated) == {
        ids["A"]: ("spam", gated.owner.pubkey),
        later["id"]: (None, gated.admin.pubkey),
    }
    upstream_ids = {
        e["id"] for e in asyncio.run(upstream_events(gated.upstream.url, {"kinds": [1]}))
    }
    assert {ids["A"], b, later["id"], after["id"]} == upstream_ids
    assert sorted(call(nip86_client, gated, gated.owner, "listbannedevents"), key=str) == sorted(
        [{"id": ids["A"], "reason": "spam"}, {"id": later["id"], "reason": None}], key=str
    )

    # Unbanned: A is served again (stored), and may be published.
    assert call(nip86_client, gated, gated.admin, "unbanevent", ids["A"]) is True
    assert call(nip86_client, gated, gated.admin, "unbanevent", ids["A"]) is True  # not banned now
    in_force(gated)
    run2 = run_client(
        node_client,
        gated,
        {"admin": gated.admin},
        [
            connect("a"),
            tools_auth("a", "admin"),
            req("a", "read", filters=[{"ids": [ids["A"], later["id"]]}]),
        ],
    )
    assert [e["id"] for e in run2.events("read")] == [ids["A"]]
    assert banned_in_db(gated) == {later["id"]: (None, gated.admin.pubkey)}


def test_banevent_params_and_a_pending_join_request(open_gate, nip86_client) -> None:
    gated = open_gate()
    gated.mem.set_join_policy(gated.community_id, "request")
    asker = Person.new()
    request_id = "cd" * 32
    gated.mem.request_membership(gated.community_id, asker.pubkey, request_id)
    # A pending join request's id still rejects the request (and bans nothing).
    assert call(nip86_client, gated, gated.owner, "banevent", request_id, "not now") is True
    assert gated.mem.join_requests(gated.community_id) == []
    assert banned_in_db(gated) == {}
    # Bad params: 400, nothing banned.
    answers = send(
        nip86_client,
        rpc(gated, gated.owner, "banevent", "not an id"),
        rpc(gated, gated.owner, "banevent", "ab" * 32, 5),
        rpc(gated, gated.owner, "banevent", "ab" * 32, "r" * 1001),
        rpc(gated, gated.owner, "unbanevent"),
        rpc(gated, gated.member, "banevent", "ab" * 32),
        rpc(gated, gated.member, "listbannedevents"),
    )
    for answer in answers[:4]:
        assert refused(answer, 400).startswith("invalid params:"), answer
        assert "p_" not in answer["body"]["error"]
    for answer in answers[4:]:
        assert refused(answer, 403).startswith("restricted:"), answer
    assert banned_in_db(gated) == {}


# ---------------------------------------------------------------------- 2. kinds


def test_kind_rules_through_the_gate(open_gate, node_client, nip86_client) -> None:
    gated = open_gate()
    newcomer = Person.new()
    invite = gated.mem.create_relay_invite(gated.community_id, gated.owner.pubkey)
    assert call(nip86_client, gated, gated.owner, "disallowkind", 7) is True
    in_force(gated)
    first = run_client(
        node_client,
        gated,
        {"member": gated.member},
        [
            connect("m"),
            tools_auth("m", "member"),
            publish("m", "member", "reaction", 7, [["e", "ab" * 32]], content="+"),
            publish("m", "member", "note", 1, [], content="a note"),
            publish("m", "member", "repost", 6, [], content="a first repost"),
        ],
    )
    assert first.ok("reaction") == (False, "blocked: kind 7 is not allowed here")
    assert first.ok("note") == (True, "") and first.ok("repost") == (True, "")

    # An allow list: only its kinds go upstream; a disallowed kind stays refused; the
    # membership kinds are the relay's own and unaffected.
    assert call(nip86_client, gated, gated.admin, "allowkind", 1) is True
    assert call(nip86_client, gated, gated.admin, "allowkind", 30023) is True
    in_force(gated)
    second = run_client(
        node_client,
        gated,
        {"member": gated.member, "newcomer": newcomer},
        [
            connect("m"),
            tools_auth("m", "member"),
            publish("m", "member", "note", 1, [], content="allowed"),
            publish("m", "member", "article", 30023, [["d", "essay"]], content="long form"),
            publish("m", "member", "repost", 6, [], content="a second repost"),
            publish("m", "member", "reaction", 7, [], content="a second +"),
            connect("n"),
            tools_auth("n", "newcomer"),
            publish("n", "newcomer", "join", 28934, [["claim", invite.code], ["-"]]),
            req("n", "list", 13534),
        ],
    )
    assert second.ok("note") == (True, "") and second.ok("article") == (True, "")
    assert second.ok("repost") == (False, "blocked: kind 6 is not among the kinds allowed here")
    assert second.ok("reaction") == (False, "blocked: kind 7 is not allowed here")
    assert second.ok("join") == (True, f"info: welcome to {gated.host}!")
    assert newcomer.pubkey in members_of(gated.mem, gated.community_id)
    assert len(second.events("list")) == 1
    refused_ids = {x["id"] for run in (first, second) for x in run.where("ok") if not x["ok"]}
    accepted = {x["id"] for run in (first, second) for x in run.where("ok") if x["ok"]}
    stored = {
        e["id"]
        for e in asyncio.run(
            upstream_events(gated.upstream.url, {"authors": [gated.member.pubkey]})
        )
    }
    assert stored == accepted - {x["id"] for x in second.where("ok") if x["label"] == "join"}
    assert not stored & refused_ids

    assert call(nip86_client, gated, gated.owner, "listallowedkinds") == [1, 30023]
    assert call(nip86_client, gated, gated.owner, "listdisallowedkinds") == [7]
    assert sql(gated, "SELECT kind, allowed FROM buzz.kind_rules(%s)", gated.community_id) == [
        (1, True),
        (7, False),
        (30023, True),
    ]
    # allowkind of a disallowed kind moves it; clearkind empties the lists: anything goes again.
    assert call(nip86_client, gated, gated.owner, "allowkind", 7) is True
    assert call(nip86_client, gated, gated.owner, "listdisallowedkinds") == []
    for kind in (1, 7, 30023):
        assert call(nip86_client, gated, gated.owner, "clearkind", kind) is True
    assert call(nip86_client, gated, gated.owner, "listallowedkinds") == []
    in_force(gated)
    third = run_client(
        node_client,
        gated,
        {"member": gated.member},
        [
            connect("m"),
            tools_auth("m", "member"),
            publish("m", "member", "repost", 6, [], content="a third repost"),
        ],
    )
    assert third.ok("repost") == (True, "")
    answers = send(
        nip86_client,
        *(rpc(gated, gated.owner, "allowkind", k) for k in (-1, 65536, "1", True, 1.5, None)),
        rpc(gated, gated.owner, "disallowkind"),
        rpc(gated, gated.owner, "clearkind", 1, 2),
    )
    for answer in answers:
        assert refused(answer, 400).startswith("invalid params:"), answer
    assert sql(gated, "SELECT count(*) FROM buzz.kind_rules(%s)", gated.community_id) == [(0,)]


# ---------------------------------------------------------------- 3. blocked addresses


def test_a_blocked_address_gets_403_before_any_websocket(open_gate, nip86_client) -> None:
    gated = open_gate()
    http = gated.process.http
    assert asyncio.run(http_status(gated.url)) == 101

    async def open_then_blocked() -> list[Any]:
        """A websocket open before the block: closed once the block is in force."""
        # autoclose off: the relay's close frame itself is read, not aiohttp's reply to it.
        async with (
            aiohttp.ClientSession() as web,
            web.ws_connect(gated.url, autoclose=False) as ws,
        ):
            assert json.loads(await ws.receive_str(timeout=5))[0] == "AUTH"
            await asyncio.to_thread(
                call, nip86_client, gated, gated.owner, "blockip", "127.0.0.0/8", "loopback"
            )
            got: list[Any] = []
            while True:  # until the relay closes it (bounded by wait_for)
                msg = await ws.receive()
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    return [*got, (msg.type, msg.data)]
                got.append(json.loads(msg.data))

    assert asyncio.run(asyncio.wait_for(open_then_blocked(), WAIT_SECONDS)) == [
        ["NOTICE", "blocked: your address may not use this relay"],
        (aiohttp.WSMsgType.CLOSE, 1008),
    ]
    assert asyncio.run(http_status(gated.url)) == 403
    # No websocket, no NIP-11, no page, whatever X-Forwarded-For says (no proxy is trusted).
    assert asyncio.run(http_status(gated.url, "198.51.100.7")) == 403
    assert asyncio.run(get_status(http, "application/nostr+json")) == 403
    assert asyncio.run(get_status(http, "text/html")) == 403
    assert gated.process.get("/healthz")[0] == 200
    # NIP-86 stays open to it: the owner lifts the block from the blocked address.
    assert call(nip86_client, gated, gated.owner, "listblockedips") == [
        {"ip": "127.0.0.0/8", "reason": "loopback"}
    ]
    assert call(nip86_client, gated, gated.owner, "unblockip", "127.0.0.0/8") is True
    until(lambda: _status_is(gated.url, 101), "the block lifted")
    assert sql(gated, "SELECT count(*) FROM buzz.blocked_ips(%s)", gated.community_id) == [(0,)]


async def _status_is(url: str, status: int, forwarded_for: str | None = None) -> bool:
    return await http_status(url, forwarded_for) == status


def test_blocks_behind_a_trusted_proxy(open_gate, nip86_client) -> None:
    gated = open_gate("--trusted-proxy", "127.0.0.1, 10.0.0.0/8")
    for address in ("198.51.100.7", "2001:db8::/32", "::ffff:203.0.113.0/120"):
        assert call(nip86_client, gated, gated.admin, "blockip", address) is True
    # Each block commits and is announced on its own: wait for the last (its reload reads
    # every rule of the community), not the first.
    until(lambda: _status_is(gated.url, 403, "203.0.113.200"), "the blocks in force")
    cases = {
        "198.51.100.7": 403,
        "198.51.100.8": 101,
        "2001:db8::1": 403,
        "2001:db9::1": 101,
        "203.0.113.200": 403,  # blocked as a mapped IPv6 network, seen as IPv4
        "::ffff:198.51.100.7": 403,  # an IPv4-mapped client is its IPv4 address
        "198.51.100.7, 10.1.2.3": 403,  # a trusted proxy in between is skipped
        "198.51.100.7, 192.0.2.5": 101,  # the rightmost untrusted is the client; the rest
        "192.0.2.5, 198.51.100.7": 403,  # ... is the client's own to write
        "not an address": 101,  # the trusted proxy itself is the client, and it is not blocked
    }
    got = {xff: asyncio.run(http_status(gated.url, xff)) for xff in cases}
    assert got == cases
    assert asyncio.run(http_status(gated.url)) == 101  # the proxy's own requests
    assert (
        asyncio.run(get_status(gated.process.http, "application/nostr+json", "2001:db8::9")) == 403
    )
    assert call(nip86_client, gated, gated.admin, "listblockedips") == [
        {"ip": "198.51.100.7", "reason": None},
        {"ip": "203.0.113.0/24", "reason": None},
        {"ip": "2001:db8::/32", "reason": None},
    ]
    answers = send(
        nip86_client,
        rpc(gated, gated.admin, "blockip", "10.0.0.1/8"),
        rpc(gated, gated.admin, "blockip", "example.org"),
        rpc(gated, gated.admin, "blockip", 5),
        rpc(gated, gated.admin, "blockip"),
        rpc(gated, gated.admin, "unblockip", "300.1.1.1"),
    )
    for answer in answers:
        assert refused(answer, 400).startswith("invalid params:"), answer


def test_an_untrusted_x_forwarded_for_is_ignored(open_gate, nip86_client) -> None:
    gated = open_gate()  # no --trusted-proxy: the peer (127.0.0.1) is the client
    assert call(nip86_client, gated, gated.owner, "blockip", "198.51.100.7") is True
    assert call(nip86_client, gated, gated.owner, "blockip", "::1") is True
    in_force(gated)
    assert asyncio.run(http_status(gated.url, "198.51.100.7")) == 101
    assert call(nip86_client, gated, gated.owner, "blockip", "127.0.0.1") is True
    until(lambda: _status_is(gated.url, 403), "the block in force")
    assert asyncio.run(http_status(gated.url, "203.0.113.5")) == 403


# ------------------------------------------------------------ 4. methods assigned to members


def test_an_assigned_method_works_for_its_assignee_only(open_gate, nip86_client) -> None:
    gated = open_gate()
    other, stranger, target = Person.new(), Person.new(), Person.new()
    gated.mem.add_relay_member(gated.community_id, other.pubkey)
    gated.mem.add_relay_member(gated.community_id, target.pubkey)
    member, owner = gated.member, gated.owner

    def supported(who: Person) -> list[str]:
        return sorted(call(nip86_client, gated, who, "supportedmethods"))

    assert supported(member) == []
    for method in ("banevent", "listbannedevents", "unallowpubkey", "banpubkey"):
        assert call(nip86_client, gated, owner, "assignmethod", member.pubkey, method) is True
    assert supported(member) == sorted(
        ["banevent", "listbannedevents", "unallowpubkey", "disallowpubkey", "banpubkey"]
    )
    assert supported(other) == [] and supported(stranger) == []
    assert "assignmethod" in supported(gated.admin)

    # The assignee calls them; nobody else gains anything.
    assert call(nip86_client, gated, member, "banevent", "ab" * 32, "by a moderator") is True
    assert banned_in_db(gated) == {"ab" * 32: ("by a moderator", member.pubkey)}
    assert call(nip86_client, gated, member, "listbannedevents") == [
        {"id": "ab" * 32, "reason": "by a moderator"}
    ]
    answers = send(
        nip86_client,
        rpc(gated, other, "banevent", "cd" * 32),
        rpc(gated, stranger, "banevent", "cd" * 32),
        rpc(gated, member, "unbanevent", "ab" * 32),  # not assigned
        rpc(gated, member, "assignmethod", other.pubkey, "banevent"),  # never assignable
        rpc(gated, member, "setmemberrole", member.pubkey, "admin"),
        # An assigned removal, aimed at those who manage the community: refused.
        rpc(gated, member, "banpubkey", gated.admin.pubkey),
        rpc(gated, member, "unallowpubkey", owner.pubkey),
        rpc(gated, member, "disallowpubkey", gated.admin.pubkey.upper()),
    )
    for answer in answers:
        assert refused(answer, 403).startswith("restricted:"), answer
    assert banned_in_db(gated) == {"ab" * 32: ("by a moderator", member.pubkey)}
    assert members_of(gated.mem, gated.community_id)[gated.admin.pubkey] == "admin"
    # ... aimed at a member: done (the old name of unallowpubkey too).
    assert call(nip86_client, gated, member, "disallowpubkey", target.pubkey) is True
    assert target.pubkey not in members_of(gated.mem, gated.community_id)

    assert call(nip86_client, gated, owner, "listmethodassignees") == [
        {
            "pubkey": member.pubkey,
            "methods": ["banevent", "banpubkey", "listbannedevents", "unallowpubkey"],
        }
    ]
    assert sql(
        gated,
        "SELECT pubkey, method, assigned_by FROM buzz.method_assignees(%s)",
        gated.community_id,
    ) == [
        (member.pubkey, m, owner.pubkey)
        for m in ("banevent", "banpubkey", "listbannedevents", "unallowpubkey")
    ]
    # What cannot be assigned: 400, nothing stored.
    answers = send(
        nip86_client,
        rpc(gated, owner, "assignmethod", stranger.pubkey, "banevent"),  # not a member
        rpc(gated, owner, "assignmethod", member.pubkey, "assignmethod"),
        rpc(gated, owner, "assignmethod", member.pubkey, "supportedmethods"),
        rpc(gated, owner, "assignmethod", member.pubkey, "setmemberrole"),
        rpc(gated, owner, "assignmethod", member.pubkey, "disallowpubkey"),
        rpc(gated, owner, "assignmethod", member.pubkey, "nosuchmethod"),
        rpc(gated, owner, "assignmethod", member.pubkey),
        rpc(gated, owner, "assignmethod", "not a pubkey", "banevent"),
    )
    for answer in answers:
        assert refused(answer, 400).startswith("invalid params:"), answer
    assert len(sql(gated, "SELECT * FROM buzz.method_assignees(%s)", gated.community_id)) == 4

    # Unassigned: gone from supportedmethods and refused.
    assert call(nip86_client, gated, owner, "unassignmethod", member.pubkey, "banevent") is True
    assert "banevent" not in supported(member)
    (answer,) = send(nip86_client, rpc(gated, member, "banevent", "ef" * 32))
    assert refused(answer, 403).startswith("restricted:")
    # A member no more: calls nothing, and what was assigned to them is taken back in the
    # same transaction (SPEC section 10): one who comes back holds nothing.
    assert call(nip86_client, gated, owner, "unallowpubkey", member.pubkey) is True
    assert supported(member) == []
    (answer,) = send(nip86_client, rpc(gated, member, "listbannedevents"))
    assert refused(answer, 403).startswith("restricted:")
    assert call(nip86_client, gated, owner, "listmethodassignees") == []
    gated.mem.add_relay_member(gated.community_id, member.pubkey)
    in_force(gated)  # every rule committed so far, the taking back included
    assert supported(member) == []
    (answer,) = send(nip86_client, rpc(gated, member, "listbannedevents"))
    assert refused(answer, 403).startswith("restricted:")


def test_an_assigned_removebranch_spares_a_branch_that_holds_an_admin(
    open_gate, nip86_client
) -> None:
    """A delegate's removebranch takes a branch of members, but not one with an admin in it,
    however deep: removing an admin is for the owner and the admins."""
    gated = open_gate()
    mem, cid, owner, member = gated.mem, gated.community_id, gated.owner, gated.member
    inviter, below, admin_deep, plain = (Person.new() for _ in range(4))
    mem.add_relay_member(cid, inviter.pubkey, added_by=owner.pubkey)
    mem.add_relay_member(cid, below.pubkey, added_by=inviter.pubkey)
    mem.add_relay_member(cid, admin_deep.pubkey, "admin", added_by=below.pubkey)
    mem.add_relay_member(cid, plain.pubkey, added_by=member.pubkey)
    assert call(nip86_client, gated, owner, "assignmethod", member.pubkey, "removebranch") is True

    (answer,) = send(nip86_client, rpc(gated, member, "removebranch", inviter.pubkey))
    assert refused(answer, 403).startswith("restricted:"), answer
    everyone = members_of(mem, cid)
    assert {inviter.pubkey, below.pubkey, admin_deep.pubkey} <= set(everyone)

    # The same branch without its admin: taken, all of it. (A reason, so that this NIP-98
    # event is not the refused call's: the relay takes each write's event once.)
    mem.update_relay_member_role(cid, admin_deep.pubkey, "member")
    removed = call(nip86_client, gated, member, "removebranch", inviter.pubkey, "spam ring")
    assert removed == {"removed": 3}
    assert not {inviter.pubkey, below.pubkey, admin_deep.pubkey} & set(members_of(mem, cid))
    assert plain.pubkey in members_of(mem, cid)


# --------------------------------------------------------- 5. in every process of the database


def test_every_rule_is_in_force_in_a_second_process_without_restarting_it(
    open_gate, node_client, nip86_client
) -> None:
    first = open_gate("--trusted-proxy", "127.0.0.1")
    second = open_gate("--trusted-proxy", "127.0.0.1")  # another process, its own port
    assert second.process.port != first.process.port
    stored = note(first.member, "a note both serve")

    async def publish_stored() -> None:
        async with aiohttp.ClientSession() as web, wire(web, first.url, as_=first.member) as w:
            assert (await w.ok(stored))[2:] == [True, ""]

    asyncio.run(publish_stored())
    # Rules made through the first process's NIP-86 ...
    assert call(nip86_client, first, first.owner, "banevent", stored["id"]) is True
    assert call(nip86_client, first, first.owner, "disallowkind", 7) is True
    assert call(nip86_client, first, first.owner, "blockip", "198.51.100.7") is True
    assert (
        call(
            nip86_client, first, first.owner, "assignmethod", first.member.pubkey, "listblockedips"
        )
        is True
    )
    # ... are in force in the second, which was never restarted.
    in_force(second)
    assert asyncio.run(http_status(second.url, "198.51.100.7")) == 403
    assert asyncio.run(http_status(second.url, "198.51.100.8")) == 101
    run_ = run_client(
        node_client,
        second,
        {"member": second.member},
        [
            connect("m"),
            tools_auth("m", "member"),
            req("m", "read", filters=[{"kinds": [1], "authors": [second.member.pubkey]}]),
            publish("m", "member", "reaction", 7, [], content="+"),
            publish("m", "member", "note", 1, [], content="still fine", createdAtOffset=-1),
        ],
    )
    assert run_.events("read") == []  # the banned note, stored upstream, is not served
    assert run_.ok("reaction") == (False, "blocked: kind 7 is not allowed here")
    assert run_.ok("note") == (True, "")
    assert call(nip86_client, second, second.member, "listblockedips") == [
        {"ip": "198.51.100.7", "reason": None}
    ]

    # A third process started now has them from its start: no wait at all.
    third = open_gate()

    async def republish() -> list[Any]:
        async with aiohttp.ClientSession() as web, wire(web, third.url, as_=third.member) as w:
            return await w.ok(stored)

    assert asyncio.run(republish())[2:] == [False, BANNED]

    # Lifted through the second process: in force in the first.
    assert call(nip86_client, second, second.owner, "unbanevent", stored["id"]) is True
    assert call(nip86_client, second, second.owner, "clearkind", 7) is True
    assert call(nip86_client, second, second.owner, "unblockip", "198.51.100.7") is True
    in_force(first)
    assert asyncio.run(http_status(first.url, "198.51.100.7")) == 101
    run4 = run_client(
        node_client,
        first,
        {"member": first.member},
        [
            connect("m"),
            tools_auth("m", "member"),
            req("m", "read", filters=[{"ids": [stored["id"]]}]),
            publish("m", "member", "reaction", 7, [], content="+", createdAtOffset=-2),
        ],
    )
    assert [e["id"] for e in run4.events("read")] == [stored["id"]]
    assert run4.ok("reaction") == (True, "")


def test_a_rule_committed_while_the_listener_is_down_is_not_missed(
    open_gate, nip86_client, admin_url: str
) -> None:
    """The relay's LISTEN connection is cut, and kept from coming back while a rule commits
    (its NOTIFY reaches no listener of that process); once it reconnects, the rule is in
    force there all the same.

    When the reload happens after the reconnect is the relay's business, so the wait is for
    its effect, on probes: ephemeral events (never stored) banned in the same missed
    transaction as the note, published one after another until one is refused. A probe that
    goes through before the reload costs nothing; the note is published only once the
    transaction is known to be loaded, and must be refused."""
    gated = open_gate()
    dbname = conninfo_to_dict(gated.mem.conn.info.dsn)["dbname"]
    note_ = note(gated.member, "banned while nobody listened")
    probe_gap = 0.05
    probes = [
        note(gated.member, f"probe {i}", PROBE_KIND) for i in range(int(WAIT_SECONDS / probe_gap))
    ]
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
        try:
            (pid,) = admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'buzz-relay listen'"
                " AND datname = %s",
                (dbname,),
            ).fetchone()
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            # On a connection opened before: new ones are refused now.
            with gated.mem.conn.transaction():
                gated.mem.conn.execute(
                    "SELECT buzz.ban_event(%s, %s)", (gated.community_id, note_["id"])
                )
                gated.mem.conn.execute(
                    "SELECT count(buzz.ban_event(%s, id)) FROM unnest(%s::text[]) AS id",
                    (gated.community_id, [probe["id"] for probe in probes]),
                )
            time.sleep(0.3)  # not a wait for an effect: the relay tries to listen again, and fails
        finally:
            admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')

    async def after_the_reload() -> list[Any]:
        async with aiohttp.ClientSession() as web, wire(web, gated.url, as_=gated.member) as w:
            for probe in probes:
                answer = await w.ok(probe)
                if answer[2] is False:
                    assert answer[3] == BANNED, answer
                    return await w.ok(note_)
                await asyncio.sleep(probe_gap)
        raise AssertionError("not in time: every probe went upstream, the missed rule unloaded")

    answer = asyncio.run(after_the_reload())
    assert answer[2:] == [False, BANNED], answer
    assert note_["id"] not in {
        e["id"] for e in asyncio.run(upstream_events(gated.upstream.url, {"ids": [note_["id"]]}))
    }


def test_moderation_changes_commit_with_one_notification_each(open_gate) -> None:
    """What the relay listens to: NOTIFY buzz_moderation, payload the community's id, at the
    commit of each change through the SQL API, none for a no-op (on a Citus cluster too,
    where the coordinator sends it)."""
    gated = open_gate()
    cid = str(gated.community_id)
    dsn = gated.mem.conn.info.dsn
    with psycopg.connect(dsn, autocommit=True) as listener, psycopg.connect(dsn) as writer:
        listener.execute("LISTEN buzz_moderation")
        for statement in (
            "SELECT buzz.ban_event(%s, repeat('a', 64))",
            "SELECT buzz.ban_event(%s, repeat('a', 64))",  # already_banned
            "SELECT buzz.disallow_kind(%s, 7)",
            "SELECT buzz.block_ip(%s, '192.0.2.0/24')",
            "SELECT buzz.unblock_ip(%s, '192.0.2.1')",  # not_blocked
        ):
            writer.execute(statement, (uuid.UUID(cid),))
            writer.commit()
        writer.execute("SELECT buzz.allow_kind(%s, 1)", (uuid.UUID(cid),))
        writer.rollback()
        writer.execute("NOTIFY buzz_moderation, 'end'")
        writer.commit()
        got = []
        for note_ in listener.notifies(timeout=WAIT_SECONDS):
            got.append(note_.payload)
            if note_.payload == "end":
                break
    assert got == [cid, cid, cid, "end"]


def test_a_moderation_write_in_the_transaction_of_a_membership_write(mem, community) -> None:
    """A ban of a pubkey and of its event, in one transaction with one list (on a Citus
    cluster the first runs on the community's worker, the second on the coordinator)."""
    spammer = new_pubkey()
    mem.add_relay_member(community.cid, spammer)
    with mem.transaction() as tx:
        assert tx.ban_pubkey(community.cid, spammer, "spam") == "banned"
        (outcome,) = mem.conn.execute(
            "SELECT buzz.ban_event(%s, %s, 'spam')", (community.cid, "ab" * 32)
        ).fetchone()
        assert outcome == "banned"
    assert spammer not in members_of(mem, community.cid)
    assert mem.conn.execute(
        "SELECT event_id FROM buzz.banned_events(%s)", (community.cid,)
    ).fetchall() == [("ab" * 32,)]
    with mem.transaction() as tx:
        mem.conn.execute("SELECT buzz.unban_event(%s, %s)", (community.cid, "ab" * 32))
        assert tx.unban_pubkey(community.cid, spammer) == "unbanned"
        assert tx.add_relay_member(community.cid, spammer) == "added"
    assert spammer in members_of(mem, community.cid)
    assert (
        mem.conn.execute("SELECT * FROM buzz.banned_events(%s)", (community.cid,)).fetchall() == []
    )


def test_unassignmethod_of_a_name_that_is_no_method_is_400_in_our_words(
    open_gate, nip86_client
) -> None:
    gated = open_gate()
    request = rpc(gated, gated.owner, "unassignmethod", gated.member.pubkey, "Ban Event")
    (answer,) = send(nip86_client, request)
    error = refused(answer, 400)
    assert error.startswith("invalid params: the method must be") and "p_" not in error, error


# ------------------------------------------------------------------ what the gate forwards


class CaptureUpstream:
    """A websocket server that keeps every text the gate sends it and answers as a relay
    would (OK true for an EVENT, EOSE for a REQ): what reaches an upstream, byte for byte."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.received: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._runner: aio_web.AppRunner | None = None

    async def _socket(self, request: aio_web.Request) -> aio_web.StreamResponse:
        ws = aio_web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            self.received.append(msg.data)
            message = json.loads(msg.data)
            if message[0] == "EVENT":
                await ws.send_str(json.dumps(["OK", message[1]["id"], True, ""]))
            elif message[0] == "REQ":
                await ws.send_str(json.dumps(["EOSE", message[1]]))
        return ws

    async def _start(self) -> None:
        app = aio_web.Application()
        app.router.add_get("/", self._socket)
        self._runner = aio_web.AppRunner(app)
        await self._runner.setup()
        await aio_web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self._started.set()

    def __enter__(self) -> Self:
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        assert self._started.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def events(self) -> list[Any]:
        """Each EVENT received, parsed so that a duplicate key fails the test."""
        return [
            json.loads(text, object_pairs_hook=_no_duplicate_keys)
            for text in self.received
            if text.startswith('["EVENT"')
        ]


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"a duplicate key reached the upstream: {keys}"
    return dict(pairs)


def test_the_gate_forwards_the_event_it_checked_and_refuses_wrong_types(open_gate) -> None:
    """An upstream that reads `"kind": "7"` as 7, or the first of two `kind` keys, must get
    only what the gate checked (SPEC section 10)."""
    with CaptureUpstream() as capture:
        gated = open_gate(upstream_url=capture.url)
        sql(gated, "SELECT buzz.disallow_kind(%s, 7)", gated.community_id)
        in_force(gated)
        capture.received.clear()
        member = gated.member
        reaction = wire_signed(member.secret, 7, [["e", "ab" * 32]], "+")
        wrong_types = [
            reaction | {"kind": "7"},
            reaction | {"kind": 7.0},
            reaction | {"kind": [7]},
            reaction | {"created_at": str(reaction["created_at"])},
            reaction | {"tags": [["e", 1]]},
            reaction | {"content": None},
            reaction | {"pubkey": member.pubkey.upper()},
        ]
        # Signed as kind 7 (disallowed), sent with a first "kind": 7 and a last "kind": 1.
        body = json.dumps(reaction)
        two_kinds = '["EVENT",' + body[:-1] + ',"kind":1}]'
        own_deletion = wire_signed(member.secret, 5, [["e", "cd" * 32], ["k", "1"]])
        relay_key = gated.key.pubkey

        async def scenario() -> list[list[Any]]:
            async with aiohttp.ClientSession() as http, wire(http, gated.url, as_=member) as w:
                answers = [await w.ok(event) for event in wrong_types]
                await w.ws.send_str(two_kinds)
                answers.append(await w.expect(lambda m: m[:2] == ["OK", reaction["id"]]))
                answers.append(await w.ok(own_deletion))
                for tag in (["k", "13534"], ["a", f"33534:{relay_key}:mod"], ["a", "8000:x:"]):
                    answers.append(await w.ok(wire_signed(member.secret, 5, [tag])))
                return answers

        answers = asyncio.run(scenario())
        for answer, event in zip(answers, wrong_types, strict=False):
            assert answer[2:] == [False, "invalid: an event's fields must have NIP-01's types"], (
                event
            )
        # The reading the gate checked (kind 1) went up, serialized again: never the raw text.
        assert answers[len(wrong_types)][2] is True
        assert answers[len(wrong_types) + 1][2:] == [True, ""]  # a member's own deletion
        for answer in answers[len(wrong_types) + 2 :]:
            assert answer[2:] == [False, "blocked: only the relay deletes its events"]
        forwarded = capture.events()
        assert [e[1] for e in forwarded] == [reaction | {"kind": 1}, own_deletion]
        assert two_kinds not in capture.received
