"""The members-only gate (SPEC section 7, ``buzz-relay --upstream``) in front of a relay we did
not write: rust-nostr's LocalRelay (nostr-sdk's ``LocalRelayBuilder``), run as a process of its
own by tests/python/upstream_relay.py, so that a test can kill it and start it again.

The clients: nostr-sdk's ``Client`` (driven as in test_relay_nostr_sdk.py, whose helpers are
used here), nostr-tools (tests/node/nip43_client.mjs, driven as in test_relay_nostr_tools.py),
and a raw aiohttp websocket where the exact protocol messages (``CLOSED``, ``NOTICE``, ``OK``
texts) are the point. What reached the upstream is checked by asking the LocalRelay directly.

What the LocalRelay does, as observed: it stores every event it is sent (in memory: a
restarted one has none), answers ``COUNT``, does not ask for NIP-42, and has no NIP-11
document (a plain HTTP GET gets an empty reply). The NIP-11 merge with an upstream document
is therefore checked against a stand-in that serves only a document (``document_server``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.client import HTTPException
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import aiohttp
import nostr_sdk as n
import pytest
from fixtures_membership import expected_tags, members_of, new_host
from gate_fixtures import Gated, upstream_events, wire
from node_clients import auth as tools_auth
from node_clients import connect, publish, req, run_client
from ports import free_port
from psycopg_pool import AsyncConnectionPool
from relay_client import MALFORMED
from relay_client import signed as wire_signed
from relay_fixtures import Person, RelayProcess
from sdk_client import run, session
from sdk_client import signed as sdk_signed
from upstream_relay import UpstreamRelay

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.relay.backend import DatabaseBackend
from buzz_signer.relay.filters import WireEvent
from buzz_signer.relay.gate import Gate
from buzz_signer.relay.protocol import Community, RelaySession
from buzz_signer.signer import Signer

pytest_plugins = ("fixtures_membership", "relay_fixtures", "gate_fixtures", "node_clients")

KIND_LIST, KIND_JOIN, KIND_INVITE, KIND_LEAVE = 13534, 28934, 28935, 28936
OUR_NIPS = {1, 11, 42, 43, 70, 86}


# ---------------------------------------------------------------------------- fixtures










# ---------------------------------------------------------------------------- a raw client








def note(person: Person, content: str, **kw: Any) -> dict[str, Any]:
    return wire_signed(person.secret, 1, [], content, **kw)


def refused(prefix: str) -> Callable[[list[Any]], bool]:
    return lambda m: m[0] == "OK" and m[2] is False and m[3].startswith(prefix)


# ------------------------------------------------------- 1. publish and read with nostr-sdk


def test_member_publishes_and_another_member_reads_back_with_nostr_sdk(gate: Gated) -> None:
    async def scenario() -> None:
        member_keys = n.Keys.parse(gate.member.secret)
        admin_keys = n.Keys.parse(gate.admin.secret)
        hello = sdk_signed(member_keys, 1, [], "hello through the gate")
        async with session(gate, member_keys) as m:
            out = await m.send(hello)
            assert out.failed == {}, out.failed
            assert [str(u) for u in out.success] == [str(m.url)]
            # The accepted OK is the upstream's (an auth-required: one first, if nostr-sdk's
            # EVENT beat its AUTH: then it sent it again once AUTHed).
            await m.wait_for(lambda x: x[:3] == ["OK", hello.id().to_hex(), True])
            oks = [x[2:] for x in m.ok_for(hello)]
            assert oks[-1] == [True, ""]
            assert all(x[0] is False and x[1].startswith("auth-required:") for x in oks[:-1])

        # The upstream stored it: asked directly, with a nostr-sdk Client of its own.
        async with session(gate.upstream) as direct:
            stored = await direct.fetch(n.Filter().id(hello.id()))
            assert [json.loads(e.as_json()) for e in stored] == [json.loads(hello.as_json())]

        # Another member, AUTHed, reads it back through the gate; and gets the next one live.
        async with session(gate, admin_keys) as a:
            f = n.Filter().kind(n.Kind(1)).author(member_keys.public_key())
            got = await a.fetch(f)
            assert [e.id().to_hex() for e in got] == [hello.id().to_hex()]
            assert got[0].verify() and got[0].content() == "hello through the gate"
            sub = await a.client.subscribe(n.ReqTarget.auto([f]))
            await a.wait_for(lambda x: x[:2] == ["EOSE", sub.id])
            later = sdk_signed(member_keys, 1, [], "and a live one", ago=0)
            async with session(gate, member_keys) as m2:
                out = await m2.send(later)
                assert out.failed == {}, out.failed
            _, live = await a.wait_for(
                lambda item: item[0] == sub.id and item[1].id() == later.id(), of=a.new_events
            )
            assert live.content() == "and a live one"
            await a.client.unsubscribe_all()

        # Both notes, and nothing else, are upstream.
        assert {e["id"] for e in await upstream_events(gate.upstream.url, {"kinds": [1]})} == {
            hello.id().to_hex(),
            later.id().to_hex(),
        }

    run(scenario)


# ------------------------------------------------------------------ 2. refused publishes


def test_publishes_refused_by_the_gate_never_reach_the_upstream(gate: Gated) -> None:
    stranger = Person.new()

    async def scenario() -> None:
        member_keys = n.Keys.parse(gate.member.secret)
        stranger_keys = n.Keys.parse(stranger.secret)
        own = sdk_signed(member_keys, 1, [], "a member's own note")
        by_stranger = sdk_signed(stranger_keys, 1, [], "a non-member's note")
        anonymous = sdk_signed(stranger_keys, 1, [], "an un-AUTHed note", ago=1)
        forged = sdk_signed(stranger_keys, 1, [], "someone else's note, sent by a member", ago=2)

        # nostr-sdk: what send_event reports for each.
        async with session(gate, stranger_keys) as s:
            out = await s.send(by_stranger)
            assert out.success == []
            assert list(out.failed.values()) == ["restricted: members only, for their own events"]
        async with session(gate) as anon:  # no authenticator: never AUTHs
            out = await anon.send(anonymous)
            assert out.success == []
            assert list(out.failed.values()) == ["auth-required: members only; AUTH first"]
        async with session(gate, member_keys) as m:
            out = await m.send(forged)
            assert out.success == []
            assert list(out.failed.values()) == ["restricted: members only, for their own events"]
            out = await m.send(own)  # the control: the same connection's own note goes up
            assert out.failed == {} and len(out.success) == 1

        # The raw messages, on one connection: un-AUTHed, then AUTHed as a non-member.
        async with aiohttp.ClientSession() as web, wire(web, gate.url) as w:
            raw = note(stranger, "raw, un-AUTHed")
            assert (await w.ok(raw))[2:] == [False, "auth-required: members only; AUTH first"]
            assert (await w.auth(stranger))[2:] == [True, ""]
            raw2 = note(stranger, "raw, AUTHed as a non-member", created_at=int(time.time()) - 3)
            assert (await w.ok(raw2))[2:] == [
                False,
                "restricted: members only, for their own events",
            ]
            # A member's event sent from the non-member's connection: not its author either.
            theirs = note(gate.member, "a member's note, from a stranger's connection")
            assert (await w.ok(theirs))[2:] == [
                False,
                "restricted: members only, for their own events",
            ]
            refused_ids = [raw["id"], raw2["id"], theirs["id"]]

        # Upstream, asked directly: only the member's own note.
        stored = await upstream_events(gate.upstream.url, {"kinds": [1]})
        assert [e["id"] for e in stored] == [own.id().to_hex()]
        ids = [by_stranger.id().to_hex(), anonymous.id().to_hex(), forged.id().to_hex()]
        assert await upstream_events(gate.upstream.url, {"ids": ids + refused_ids}) == []

    run(scenario)


def test_malformed_messages_get_a_notice_and_the_connection_stays(gate: Gated) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as web, wire(web, gate.url, gate.member) as w:
            await w.req("open", {"kinds": [1]})  # an upstream subscription, open
            for n, text in enumerate(MALFORMED):
                await w.ws.send_str(text)
                notice = await w.expect(lambda m: m[0] == "NOTICE")
                assert notice[1].startswith("invalid:"), text
                assert (await w.req(f"after{n}", {"kinds": [1]}))[-1][0] == "EOSE", text

    asyncio.run(scenario())
    assert "Traceback" not in gate.process.log()


# ----------------------------------------------------------------------- 3. who may read


def test_reads_need_a_member_unless_read_anyone(open_gate) -> None:
    members_only = open_gate()
    anyone = open_gate("--read", "anyone")
    g = members_only
    stranger = Person.new()
    hello = note(g.member, "stored upstream")

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web:
            async with wire(web, g.url, g.member) as m:
                assert (await m.ok(hello))[2:] == [True, ""]
                # A member reads it (the control).
                got = await m.req("r", {"kinds": [1]})
                assert got == [["EVENT", "r", hello], ["EOSE", "r"]]

            # --read members: anonymous REQ (kind 1; no kinds at all) and COUNT: auth-required:.
            async with wire(web, g.url) as anon:
                for sub, f in (("k1", {"kinds": [1]}), ("all", {})):
                    got = await anon.req(sub, f)
                    assert got == [["CLOSED", sub, "auth-required: this relay is for members"]]
                await anon.send("COUNT", "c", {"kinds": [1]})
                closed = await anon.expect(lambda x: x[1] == "c")
                assert closed == ["CLOSED", "c", "auth-required: this relay is for members"]
                # ... and a non-member, once AUTHed: restricted:.
                assert (await anon.auth(stranger))[2:] == [True, ""]
                got = await anon.req("k1b", {"kinds": [1]})
                assert got == [["CLOSED", "k1b", "restricted: this relay is for members"]]
                await anon.send("COUNT", "c2", {"kinds": [1]})
                closed = await anon.expect(lambda x: x[1] == "c2")
                assert closed == ["CLOSED", "c2", "restricted: this relay is for members"]
                assert not [x for x in anon.received if x[0] == "EVENT"]

            # --read anyone (the same upstream): served without AUTH, from the upstream.
            async with wire(web, anyone.url) as anon:
                got = await anon.req("r", {"kinds": [1]})
                assert got == [["EVENT", "r", hello], ["EOSE", "r"]]
                await anon.send("COUNT", "c", {"kinds": [1]})
                assert await anon.expect(lambda x: x[1] == "c") == ["COUNT", "c", {"count": 1}]
                # Writes still need a member.
                late = note(stranger, "anyone may read, not write")
                assert (await anon.ok(late))[2:3] == [False]
                assert anon.received[-1][3].startswith("auth-required:")
                assert (await anon.auth(stranger))[2:] == [True, ""]
                got = await anon.req("r2", {"kinds": [1]})  # a non-member reads too
                assert got == [["EVENT", "r2", hello], ["EOSE", "r2"]]
                late2 = note(stranger, "still no", created_at=int(time.time()) - 1)
                assert (await anon.ok(late2))[2:3] == [False]
                assert anon.received[-1][3].startswith("restricted:")
        assert [e["id"] for e in await upstream_events(g.upstream.url, {"kinds": [1]})] == [
            hello["id"]
        ]

    asyncio.run(scenario())

    # nostr-sdk, anonymous: nothing under --read members, the note under --read anyone.
    async def with_sdk() -> None:
        async with session(members_only) as anon:
            assert await anon.fetch(n.Filter().kind(n.Kind(1))) == []
            closed = await anon.wait_for(lambda x: x[0] == "CLOSED")
            assert closed[2] == "auth-required: this relay is for members"
        async with session(anyone) as anon:
            got = await anon.fetch(n.Filter().kind(n.Kind(1)))
            assert [e.id().to_hex() for e in got] == [hello["id"]]

    run(with_sdk)


# ----------------------------------------------------------------- 4. a member removed


def test_a_member_removed_through_sql_loses_upstream_access_at_once(gate: Gated) -> None:
    newcomer = Person.new()

    async def scenario() -> None:
        async with (
            aiohttp.ClientSession() as web,
            wire(web, gate.url, gate.member) as m,
            wire(web, gate.url, gate.member) as m2,
            wire(web, gate.url, gate.admin) as a,
        ):
            assert await m2.req("feed", {"kinds": [1]}) == [["EOSE", "feed"]]
            for w in (m, a):
                assert await w.req("feed", {"kinds": [1]}) == [["EOSE", "feed"]]
                got = await w.req("list", {"kinds": [KIND_LIST]})
                assert [x[0] for x in got] == ["EVENT", "EOSE"]

            # A list that removes nobody (someone is added): no one loses anything.
            gate.mem.add_relay_member(gate.community_id, newcomer.pubkey)
            for w in (m, a):
                pushed = await w.expect(lambda x: x[:2] == ["EVENT", "list"])
                assert ["member", newcomer.pubkey, "member"] in pushed[2]["tags"]
            assert await m.quiet(0.3) == []
            first = note(gate.member, "still a member")
            assert (await m.ok(first))[2:] == [True, ""]
            assert (await a.expect(lambda x: x[:2] == ["EVENT", "feed"]))[2] == first

            # The member is removed by an outside service's SQL write.
            mark = len(m.received)
            write = gate.mem.remove_relay_member(gate.community_id, gate.member.pubkey)
            assert write.outcome == "removed"
            closed = await m.expect(lambda x: x[0] == "CLOSED", timeout=1.0)
            assert closed[:2] == ["CLOSED", "feed"]
            assert closed[2].startswith("restricted:"), closed
            # The member's other connection too.
            closed2 = await m2.expect(lambda x: x[0] == "CLOSED", timeout=1.0)
            assert closed2 == closed
            # The list subscription is the relay's own: it goes on, and gets the new list
            # (sent with the CLOSED, just before it).
            (pushed,) = [x for x in m.received[mark:] if x[:2] == ["EVENT", "list"]]
            assert gate.member.pubkey not in {t[1] for t in pushed[2]["tags"][1:]}
            assert pushed[2]["tags"] == expected_tags(members_of(gate.mem, gate.community_id))

            # No more writing ...
            after = note(gate.member, "after removal")
            assert (await m.ok(after))[2:] == [
                False,
                "restricted: members only, for their own events",
            ]
            # ... and no more reading: a new REQ is refused, and the old one gets nothing.
            got = await m.req("feed2", {"kinds": [1]})
            assert got == [["CLOSED", "feed2", "restricted: this relay is for members"]]
            other = note(gate.admin, "for members only")
            assert (await a.ok(other))[2:] == [True, ""]
            assert (await a.expect(lambda x: x[:2] == ["EVENT", "feed"]))[2] == other
            assert [x for x in await m.quiet(0.5) if x[0] == "EVENT"] == []

            # The admin, still a member, lost nothing.
            assert [x for x in a.received if x[0] in ("CLOSED", "NOTICE")] == []

        stored = {e["id"] for e in await upstream_events(gate.upstream.url, {"kinds": [1]})}
        assert stored == {first["id"], other["id"]}

    asyncio.run(scenario())


async def an_invite_code(web: aiohttp.ClientSession, gate: Gated) -> str:
    async with wire(web, gate.url, gate.admin) as a:
        got = await a.req("inv", {"kinds": [KIND_INVITE]})
    (invite,) = [x[2] for x in got if x[0] == "EVENT"]
    assert invite["pubkey"] == gate.key.pubkey
    return next(t[1] for t in invite["tags"] if t[0] == "claim")


def test_a_join_on_the_publishing_connection_lets_its_next_note_through(gate: Gated) -> None:
    """AUTHed, refused as a non-member, then joined on that connection: a member from the
    join's commit on (SPEC: an EVENT goes upstream from a connection AUTHed as a member)."""
    newcomer = Person.new()

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web:
            code = await an_invite_code(web, gate)
            async with wire(web, gate.url, newcomer) as w:
                before = note(newcomer, "before joining", created_at=int(time.time()) - 2)
                assert (await w.ok(before))[2:] == [
                    False,
                    "restricted: members only, for their own events",
                ]
                # The join and a note, back to back: the note is handled after the join
                # committed (a connection's messages are handled in order), by a member.
                join = wire_signed(newcomer.secret, KIND_JOIN, [["-"], ["claim", code]])
                joined = note(newcomer, "joined")
                ok_join, ok_note = await w.oks(join, joined)
                assert ok_join[2:] == [True, f"info: welcome to {gate.host}!"]
                assert members_of(gate.mem, gate.community_id)[newcomer.pubkey] == "member"
                assert ok_note[2:] == [True, ""]
                got = await w.req("r", {"kinds": [1]})
                assert got == [["EVENT", "r", joined], ["EOSE", "r"]]
        stored = [e["id"] for e in await upstream_events(gate.upstream.url, {"kinds": [1]})]
        assert stored == [joined["id"]]

    asyncio.run(scenario())


def test_a_leave_on_the_publishing_connection_ends_its_upstream_access_at_once(
    gate: Gated,
) -> None:
    """A member who leaves (28936, on the connection that publishes) is no member from the
    leave's commit on (SPEC: access is lost at once): the next note is refused, and the
    upstream subscription is closed."""

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web, wire(web, gate.url, gate.member) as w:
            mine = note(gate.member, "a member's note", created_at=int(time.time()) - 2)
            assert (await w.ok(mine))[2:] == [True, ""]
            assert await w.req("feed", {"kinds": [1]}) == [
                ["EVENT", "feed", mine],
                ["EOSE", "feed"],
            ]
            # The leave and a note, back to back: the note is handled after the leave
            # committed (a connection's messages are handled in order), for a non-member.
            leave = wire_signed(gate.member.secret, KIND_LEAVE, [["-"]])
            left = note(gate.member, "after leaving")
            ok_leave, ok = await w.oks(leave, left)
            assert ok_leave[2:] == [True, ""]
            assert gate.member.pubkey not in members_of(gate.mem, gate.community_id)
            # Within a second, in any case: the upstream subscription is closed restricted:.
            if not [x for x in w.received if x[:2] == ["CLOSED", "feed"]]:
                await w.expect(lambda x: x[:2] == ["CLOSED", "feed"], timeout=1.0)
            (closed,) = [x for x in w.received if x[:2] == ["CLOSED", "feed"]]
            assert closed[2].startswith("restricted:"), closed
            stored = [e["id"] for e in await upstream_events(gate.upstream.url, {"kinds": [1]})]
            assert ok[2:] == [False, "restricted: members only, for their own events"], (
                ok,
                "upstream holds:",
                stored,
            )
            assert stored == [mine["id"]]

    asyncio.run(scenario())


# ------------------------------------------------------ 5. membership kinds are ours


def test_membership_requests_are_answered_from_our_database(gate: Gated) -> None:
    async def scenario() -> None:
        live = gate.mem.member_list(gate.community_id)
        assert live["pubkey"] == gate.key.pubkey
        async with aiohttp.ClientSession() as web:
            # Anonymous (reads of our own kinds need no AUTH, --read members or not).
            async with wire(web, gate.url) as anon:
                got = await anon.req("l", {"kinds": [KIND_LIST]})
                assert got == [["EVENT", "l", live], ["EOSE", "l"]]
            async with wire(web, gate.url, gate.member) as m:
                got = await m.req("l", {"kinds": [KIND_LIST], "authors": [gate.key.pubkey]})
                assert got == [["EVENT", "l", live], ["EOSE", "l"]]
                # A plain member asking for an invite (members have no invites by default):
                # the relay's own refusal, not the upstream.
                got = await m.req("i", {"kinds": [KIND_INVITE]})
                assert got == [["CLOSED", "i", "restricted: you have no invites left."]]
                # A membership list "published" by a member: the relay's own refusal.
                fake = wire_signed(gate.member.secret, KIND_LIST, [["-"]])
                ok = await m.ok(fake)
                assert ok[2:] == [False, f"blocked: only the relay publishes kind {KIND_LIST}"]
        # None of it is upstream.
        assert await upstream_events(gate.upstream.url, {"kinds": [KIND_LIST, KIND_INVITE]}) == []
        assert await upstream_events(gate.upstream.url, {}) == []

    asyncio.run(scenario())

    async def with_sdk() -> None:
        async with session(gate) as anon:
            (ev,) = await anon.fetch(
                n.Filter().kind(n.Kind(KIND_LIST)).author(n.PublicKey.parse(gate.key.pubkey))
            )
            assert ev.verify()
            assert json.loads(ev.as_json()) == gate.mem.member_list(gate.community_id)
            assert [t.to_vec() for t in ev.tags()] == expected_tags(
                members_of(gate.mem, gate.community_id)
            )

    run(with_sdk)


def test_role_definitions_and_deletions_through_the_gate(gate: Gated) -> None:
    """Kind 33534 is ours; kind 5 is ours in a filter whose authors are the relay key alone
    (the relay's deletions of role definitions), else the upstream's. A member holding defined
    roles, whose member tag names them after the base role, keeps upstream access."""
    cid, mem, relay = gate.community_id, gate.mem, gate.key.pubkey
    ours = {"kinds": [33534, 5], "authors": [relay]}

    async def scenario() -> None:
        async with (
            aiohttp.ClientSession() as web,
            wire(web, gate.url) as anon,
            wire(web, gate.url, gate.member) as m,
        ):
            # Anonymous, --read members or not: our kinds need no AUTH.
            got = await anon.req("defs", {"kinds": [33534]})
            assert sorted(x[2]["tags"][1][1] for x in got[:-1]) == ["admin", "member", "owner"]
            assert [x[2] for x in got[:-1]] == sorted(
                mem.role_definitions(cid), key=lambda e: e["created_at"], reverse=True
            )
            got = await anon.req("ours", ours)
            assert [x[2]["kind"] for x in got[:-1]] == [33534] * 3 and got[-1] == ["EOSE", "ours"]
            # Kind 5 of anyone: the upstream's, for members only.
            got = await anon.req("any5", {"kinds": [5]})
            assert got == [["CLOSED", "any5", "auth-required: this relay is for members"]]
            # Kinds that are not numbers are nobody's membership kinds (and break nothing).
            got = await anon.req("odd", {"kinds": [[5]]})
            assert got == [["CLOSED", "odd", "auth-required: this relay is for members"]]
            assert await m.req("feed", {"kinds": [1]}) == [["EOSE", "feed"]]
            assert await m.req("any5", {"kinds": [5]}) == [["EOSE", "any5"]]

            # Roles change by SQL: the live 33534s and kind 5 reach our subscription.
            with mem.transaction() as tx:
                tx.define_role(cid, "vip", "VIP")
                tx.assign_role(cid, gate.member.pubkey, "vip")
            (vip,) = [ev for ev in tx.events if ev["kind"] == 33534]
            pushed = await anon.expect(lambda x: x[:2] == ["EVENT", "ours"])
            assert pushed[2] == vip
            # The list that names the member with a defined role takes nothing away.
            assert await m.quiet(0.5) == []
            listed = mem.member_list(cid)
            assert ["member", gate.member.pubkey, "member", "vip"] in listed["tags"]
            mine = note(gate.member, "a member with a role")
            assert (await m.ok(mine))[2:] == [True, ""]

            (deletion,) = [ev for ev in mem.delete_role(cid, "vip").events if ev["kind"] == 5]
            pushed = await anon.expect(lambda x: x[:2] == ["EVENT", "ours"])
            assert pushed[2] == deletion
            assert deletion["tags"] == [["-"], ["a", f"33534:{relay}:vip"], ["k", "33534"]]
            # Still a member: nothing closed (its own note came back on its feed, that is all).
            assert [x for x in await m.quiet(0.5) if x[0] != "EVENT"] == []
            assert [x for x in m.received if x[0] in ("CLOSED", "NOTICE")] == []
            # A member deletes their note (NIP-09) through the gate, as on any relay; a kind 5
            # naming one of the relay's events is refused (SPEC sections 7 and 10).
            theirs = wire_signed(gate.member.secret, 5, [["a", f"33534:{relay}:owner"]])
            assert (await m.ok(theirs))[2:] == [False, "blocked: only the relay deletes its events"]
            own_deletion = wire_signed(gate.member.secret, 5, [["e", mine["id"]], ["k", "1"]])
            assert (await m.ok(own_deletion))[2:] == [True, ""]

        # The upstream applied the deletion, and holds none of our events.
        stored = await upstream_events(gate.upstream.url, {})
        assert [e["id"] for e in stored] == [own_deletion["id"]]

    asyncio.run(scenario())


# -------------------------------------------------------------- 6. the upstream goes away


def test_the_upstream_killed_and_restarted_mid_session(gate: Gated) -> None:
    async def scenario() -> None:
        up = gate.upstream
        async with aiohttp.ClientSession() as web, wire(web, gate.url, gate.member) as m:
            first = note(gate.member, "before the crash")
            assert (await m.ok(first))[2:] == [True, ""]
            got = await m.req("feed", {"kinds": [1]})
            assert got == [["EVENT", "feed", first], ["EOSE", "feed"]]
            assert [x[0] for x in await m.req("list", {"kinds": [KIND_LIST]})] == ["EVENT", "EOSE"]

            up.kill()
            closed = await m.expect(lambda x: x[0] == "CLOSED", timeout=5)
            assert closed[:2] == ["CLOSED", "feed"]
            assert closed[2].startswith("error:"), closed
            notice = await m.expect(lambda x: x[0] == "NOTICE", timeout=5)
            assert notice[1].startswith("error:"), notice
            # Only the upstream subscription was closed, once.
            assert [x[1] for x in m.received if x[0] == "CLOSED"] == ["feed"]

            # While it is down: a publish and a REQ get error:; our own kinds still answer.
            down = note(gate.member, "while down", created_at=int(time.time()) - 1)
            ok = await m.ok(down)
            assert ok[2] is False and ok[3].startswith("error:"), ok
            got = await m.req("feed-down", {"kinds": [1]})
            assert len(got) == 1 and got[0][:2] == ["CLOSED", "feed-down"]
            assert got[0][2].startswith("error:"), got
            got = await m.req("list2", {"kinds": [KIND_LIST]})
            assert got == [
                ["EVENT", "list2", gate.mem.member_list(gate.community_id)],
                ["EOSE", "list2"],
            ]

            # Back on the same port: the same client connection works again.
            up.start()
            assert await m.req("feed2", {"kinds": [1]}) == [["EOSE", "feed2"]]  # it forgot all
            again = note(gate.member, "after the restart")
            assert (await m.ok(again))[2:] == [True, ""]
            live = await m.expect(lambda x: x[:2] == ["EVENT", "feed2"])
            assert live[2] == again
            # The old subscription is not revived.
            assert [x for x in m.received if x[:2] == ["EVENT", "feed"] and x[2] == again] == []

        assert [e["id"] for e in await upstream_events(up.url, {"kinds": [1]})] == [again["id"]]

    asyncio.run(scenario())


def test_more_than_a_hundred_connections_reach_the_upstream_at_once(open_gate) -> None:
    """Each client connection holds its own upstream websocket: the 101st must get one too."""
    g = open_gate("--read", "anyone", "--max-connections-per-ip", "200")
    n = 110

    async def scenario() -> None:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as web:
            socks = [await web.ws_connect(g.url) for _ in range(n)]
            for i, ws in enumerate(socks):
                await ws.receive(timeout=5)  # the AUTH challenge
                await ws.send_json(["REQ", f"r{i}", {"kinds": [1], "limit": 1}])
            for i, ws in enumerate(socks):
                while (msg := json.loads((await ws.receive(timeout=10)).data))[0] != "EOSE":
                    assert msg[0] == "EVENT", msg
                assert msg == ["EOSE", f"r{i}"]
            for ws in socks:
                await ws.close()

    asyncio.run(scenario())


# ------------------------------------------------------------------------------ 7. NIP-11


def nip11(process: RelayProcess) -> dict[str, Any]:
    status, body, headers = process.get("/", {"Accept": "application/nostr+json"})
    assert status == 200, body
    assert headers["Content-Type"].startswith("application/nostr+json")
    return json.loads(body)


def test_nip11_through_the_gate_over_the_local_relay(open_gate, upstream: UpstreamRelay) -> None:
    # The LocalRelay has no document of its own: a plain GET gets an empty reply.
    request = urllib.request.Request(
        "http" + upstream.url.removeprefix("ws"), headers={"Accept": "application/nostr+json"}
    )
    with pytest.raises((urllib.error.URLError, ConnectionError, HTTPException)):
        urllib.request.urlopen(request, timeout=5)

    members, anyone = open_gate(), open_gate("--read", "anyone")
    for g, auth_required in ((members, True), (anyone, False)):
        doc = nip11(g.process)
        assert doc["self"] == g.key.pubkey
        assert OUR_NIPS <= set(doc["supported_nips"])
        assert doc["supported_nips"] == sorted(set(doc["supported_nips"]))
        assert doc["limitation"]["auth_required"] is auth_required
        assert doc["limitation"]["restricted_writes"] is True


@pytest.fixture
def document_server() -> Iterator[tuple[str, dict[str, Any]]]:
    """A stand-in upstream that serves only a NIP-11 document (the LocalRelay has none)."""
    document = {
        "name": "upstream relay",
        "description": "an upstream with a document",
        "pubkey": "ab" * 32,
        "software": "git+https://example.org/upstream.git",
        "version": "9.9.9",
        "supported_nips": [1, 2, 9, 11, 40, 45, 50],
        "limitation": {"max_message_length": 12345, "auth_required": False, "max_limit": 77},
    }
    body = json.dumps(document).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/nostr+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"ws://127.0.0.1:{server.server_address[1]}", document
    server.shutdown()
    server.server_close()


def test_nip11_merges_the_upstream_document(open_gate, document_server) -> None:
    url, theirs = document_server
    for flags, auth_required in (((), True), (("--read", "anyone"), False)):
        g = open_gate(*flags, upstream_url=url)
        doc = nip11(g.process)
        # Ours, as self and pubkey (Jumble's clients read the relay key from pubkey): the
        # membership events are signed by it, gate or not.
        assert doc["self"] == doc["pubkey"] == g.key.pubkey != theirs["pubkey"]
        assert doc["supported_nips"] == sorted(OUR_NIPS | set(theirs["supported_nips"]))
        assert doc["limitation"] == theirs["limitation"] | {
            "auth_required": auth_required,
            "restricted_writes": True,
        }
        # No profile set: the upstream's name and description stay.
        for field in ("name", "description", "software", "version"):
            assert doc[field] == theirs[field], field


# -------------------------------------------------------------------------- 8. nostr-tools


def test_nostr_tools_through_the_gate(gate: Gated, node_client) -> None:
    stranger = Person.new()
    run_ = run_client(
        node_client,
        gate,
        {"member": gate.member, "admin": gate.admin, "stranger": stranger},
        [
            connect("m"),
            tools_auth("m", "member"),
            publish("m", "member", "note", 1, [], content="hello from nostr-tools"),
            connect("a"),
            tools_auth("a", "admin"),
            req("a", "read", filters=[{"kinds": [1], "authors": [gate.member.pubkey]}]),
            connect("s"),
            tools_auth("s", "stranger"),
            publish("s", "stranger", "stranger-note", 1, [], content="not a member"),
            connect("anon"),
            publish(
                "anon", "stranger", "anon-note", 1, [], content="not AUTHed", createdAtOffset=-1
            ),
            req("anon", "anon-read", 1),
            req("s", "stranger-read", 1),
        ],
    )
    assert run_.ok("auth-m") == (True, "")
    assert run_.ok("auth-a") == (True, "")
    assert run_.ok("auth-s") == (True, "")
    assert run_.ok("note") == (True, "")
    (published,) = [x for x in run_.where("ok") if x["label"] == "note"]
    (read,) = run_.events("read")
    assert read["id"] == published["id"]
    assert read["content"] == "hello from nostr-tools"
    assert read["pubkey"] == gate.member.pubkey
    assert run_.one("eose", "read")
    assert run_.ok("stranger-note") == (False, "restricted: members only, for their own events")
    assert run_.ok("anon-note") == (False, "auth-required: members only; AUTH first")
    assert run_.closed("anon-read") == "auth-required: this relay is for members"
    assert run_.closed("stranger-read") == "restricted: this relay is for members"

    stored = asyncio.run(upstream_events(gate.upstream.url, {"kinds": [1]}))
    assert [e["id"] for e in stored] == [published["id"]]
    assert stored[0] == read


# ------------------------------------------------------------- a removal during a look-up


class SlowRoleOf(DatabaseBackend):
    """The real backend, whose role look-up waits until the test lets it answer."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def role_of(self, community: Any, pubkey: str) -> str | None:
        role = await super().role_of(community, pubkey)  # read before the removal commits
        self.asked.set()
        await self.answer.wait()
        return role


def test_a_removal_announced_during_a_membership_look_up_has_the_last_word(
    db_url: str, key: RelayKey, mem: Membership
) -> None:
    """The gate asks the database whether its AUTHed pubkey is a member; a list that commits
    meanwhile without them (the hub's deliver) must not be overwritten by the older answer."""
    member = Person.new()
    cid = mem.create_community(new_host(), Person.new().pubkey).details["community_id"]
    mem.add_relay_member(cid, member.pubkey)

    async def main() -> bool:
        async with (
            AsyncConnectionPool(db_url, min_size=1, max_size=2, open=False) as pool,
            aiohttp.ClientSession() as http,
        ):
            backend = SlowRoleOf(pool, key)
            session = RelaySession(Community(cid, "x.example"), backend, Signer(key))
            session.pubkey = member.pubkey  # AUTHed
            gate = Gate(session, http, "ws://127.0.0.1:9", lambda _: None)
            asking = asyncio.create_task(gate._is_member())
            await backend.asked.wait()  # the answer read: a member
            removed = mem.remove_relay_member(cid, member.pubkey)
            (listed,) = [e for e in removed.events if e["kind"] == 13534]
            text = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
            pushed = WireEvent(listed["id"], key.pubkey, 13534, listed["created_at"], text, {})
            gate.deliver([pushed])  # the hub pushes the list that left them out
            backend.answer.set()
            return await asking

    assert asyncio.run(main()) is False
