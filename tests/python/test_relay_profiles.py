"""Members' own profiles (kind 0, SPEC sections 7 and 8) over real websockets: kept from a
member AUTHed as the author, served for kind 0 REQs to anyone, pushed as they are stored,
gone with the membership; `--no-profiles` keeps and serves none; behind the gate a member's
kind 0 goes upstream as before and is kept too. The database is the truth."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from gate_fixtures import Gated, upstream_events, wire
from relay_client import signed
from relay_fixtures import Person, Relay

from buzz_signer.membership import Membership

pytest_plugins = ("fixtures_membership", "relay_fixtures", "gate_fixtures")


def profile(person: Person, name: str, created_at: int | None = None, **more: Any) -> dict[str, Any]:
    return signed(person.secret, 0, [], json.dumps({"name": name, **more}), created_at=created_at)


def stored(mem: Membership, relay_community: Any, *authors: str) -> list[dict[str, Any]]:
    """The database's profiles of `authors`."""
    return [json.loads(t) for t in mem.member_profiles(relay_community, list(authors))]


def test_a_members_profile_is_kept_served_pushed_and_gone_with_them(relay: Relay) -> None:
    cid, mem = relay.community_id, relay.mem
    member, outsider = relay.member, Person.new()

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web:
            async with wire(web, relay.url) as anyone, wire(web, relay.url, member) as m:
                # Anyone may ask; nothing is kept yet.
                assert await anyone.req("p", {"kinds": [0]}) == [["EOSE", "p"]]
                first = profile(member, "Alice <b>", created_at=1_800_000_000)
                assert (await m.ok(first))[2:] == [True, ""]
                # Pushed to the open subscription as it commits, as sent.
                pushed = await anyone.expect(lambda x: x[0] == "EVENT")
                assert pushed == ["EVENT", "p", first]
                assert stored(mem, cid, member.pubkey) == [first]
                # Replaceable: an older one is acknowledged and changes nothing.
                older = profile(member, "Old Alice", created_at=1_700_000_000)
                ok = await m.ok(older)
                assert ok[2] is True and ok[3].startswith("duplicate:")
                assert stored(mem, cid, member.pubkey) == [first]
                newer = profile(member, "Alice", created_at=1_800_000_001)
                assert (await m.ok(newer))[2:] == [True, ""]
                assert (await anyone.expect(lambda x: x[0] == "EVENT"))[2] == newer
                # Served by author, and not to a filter it does not match.
                assert await anyone.req("a", {"kinds": [0], "authors": [member.pubkey]}) == [
                    ["EVENT", "a", newer],
                    ["EOSE", "a"],
                ]
                assert await anyone.req("b", {"kinds": [0], "until": 1_800_000_000}) == [
                    ["EOSE", "b"]
                ]
                # Someone else's profile, even from an AUTHed member: not its author.
                ok = await m.ok(profile(relay.admin, "not mine"))
                assert ok[2] is False and ok[3].startswith("auth-required:")
                # Not AUTHed at all.
                ok = await anyone.ok(profile(member, "anonymous"))
                assert ok[2] is False and ok[3].startswith("auth-required:")
            # A non-member AUTHed as the author.
            async with wire(web, relay.url, outsider) as o:
                ok = await o.ok(profile(outsider, "Mallory"))
                assert ok[2:] == [False, "restricted: this relay keeps only its members' profiles"]
                # Over 16,384 bytes: refused before the database.
                big = profile(outsider, "x", about="y" * 16_400)
                ok = await o.ok(big)
                assert ok[2] is False and ok[3].startswith("invalid:")
            assert stored(mem, cid, outsider.pubkey) == []
            # Hostile but signed: a control character JSON cannot carry as NIP-01 writes it,
            # and a forged signature. Refused with invalid:, nothing kept, the socket usable.
            async with wire(web, relay.url, relay.admin) as a:
                control = signed(relay.admin.secret, 0, [], '{"name":"bell\x07"}')
                ok = await a.ok(control)
                assert ok[2] is False and ok[3].startswith("invalid:"), ok
                forged = profile(relay.admin, "Ada") | {"sig": "0" * 128}
                ok = await a.ok(forged)
                assert ok[2:] == [False, "invalid: bad event id or signature"]
                ada = profile(relay.admin, "Ada")
                assert (await a.ok(ada))[2:] == [True, ""]
                # By its id alone, with a newer profile kept: found by that id, not looked for
                # among the newest.
                assert await a.req("i", {"ids": [ada["id"]], "limit": 1}) == [
                    ["EVENT", "i", ada],
                    ["EOSE", "i"],
                ]
            assert [p["content"] for p in stored(mem, cid, relay.admin.pubkey)] == [
                json.dumps({"name": "Ada"})
            ]

    asyncio.run(scenario())
    # Removed through SQL: the profile goes in the same transaction, and is served no more.
    assert mem.remove_relay_member(cid, member.pubkey).outcome == "removed"
    assert stored(mem, cid, member.pubkey) == []

    async def after() -> None:
        async with aiohttp.ClientSession() as web, wire(web, relay.url) as anyone:
            assert await anyone.req("p", {"kinds": [0], "authors": [member.pubkey]}) == [
                ["EOSE", "p"]
            ]

    asyncio.run(after())


def test_no_profiles_keeps_and_serves_none(start_relay, relay: Relay) -> None:
    cid, mem, member = relay.community_id, relay.mem, relay.member
    private = start_relay("--community", str(cid), "--no-profiles")
    # One kept before, by the relay that keeps them: the private one serves it to no one.
    kept = profile(member, "Alice")
    assert mem.set_member_profile(cid, json.dumps(kept)) == "stored"

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web, wire(web, private.url, member) as m:
            (closed,) = await m.req("p", {"kinds": [0]})
            assert closed[:2] == ["CLOSED", "p"] and closed[2].startswith("unsupported:")
            (closed,) = await m.req("q", {"kinds": [0, 13534]})
            assert closed[:2] == ["CLOSED", "q"] and closed[2].startswith("unsupported:")
            # A filter without kinds: the membership events, no profile.
            got = await m.req("all", {})
            assert got and all(x[0] == "EOSE" or x[2]["kind"] != 0 for x in got)
            ok = await m.ok(profile(member, "Alice again", created_at=1_900_000_000))
            assert ok[2] is False and ok[3].startswith("blocked:")

    asyncio.run(scenario())
    assert stored(mem, cid, member.pubkey) == [kept]


def test_behind_the_gate_a_members_profile_goes_upstream_and_is_kept(gate: Gated) -> None:
    cid, mem, member = gate.community_id, gate.mem, gate.member

    async def scenario() -> None:
        async with aiohttp.ClientSession() as web:
            async with wire(web, gate.url, member) as m:
                mine = profile(member, "Alice")
                assert (await m.ok(mine))[2:] == [True, ""]  # the upstream's OK
            # The upstream stored it, and so did we.
            assert await upstream_events(gate.upstream.url, {"kinds": [0]}) == [mine]
            assert stored(mem, cid, member.pubkey) == [mine]
            # A kind 0 REQ is ours to answer, to anyone, under --read members.
            async with wire(web, gate.url) as anyone:
                assert await anyone.req("p", {"kinds": [0]}) == [
                    ["EVENT", "p", mine],
                    ["EOSE", "p"],
                ]
                # Kind 0 with another kind: the upstream's, for members only.
                (closed,) = await anyone.req("n", {"kinds": [0, 1]})
                assert closed[:2] == ["CLOSED", "n"] and closed[2].startswith("auth-required:")

    asyncio.run(scenario())


def test_a_profile_kept_by_one_process_is_pushed_by_another(start_relay, relay: Relay) -> None:
    """Two relay processes on one database (SPEC section 9): the profile one keeps reaches the
    other's subscribers at commit, through NOTIFY buzz_profiles."""
    other = start_relay("--community", str(relay.community_id))

    async def scenario() -> None:
        async with (
            aiohttp.ClientSession() as web,
            wire(web, other.url) as reader,
            wire(web, relay.url, relay.admin) as a,
        ):
            assert await reader.req("p", {"kinds": [0], "authors": [relay.admin.pubkey]}) == [
                ["EOSE", "p"]
            ]
            mine = profile(relay.admin, "Ada")
            assert (await a.ok(mine))[2:] == [True, ""]
            assert await reader.expect(lambda x: x[0] == "EVENT") == ["EVENT", "p", mine]
            # Filters hold for pushed profiles too: another author's is not sent here.
            assert (await a.ok(profile(relay.admin, "Ada", created_at=1_900_000_000)))[2]
            await reader.expect(lambda x: x[0] == "EVENT")
            async with wire(web, relay.url, relay.member) as m:
                assert (await m.ok(profile(relay.member, "Bob")))[2:] == [True, ""]
            assert await reader.quiet(0.5) == []

    asyncio.run(scenario())
