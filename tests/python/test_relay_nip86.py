"""NIP-86 relay management over HTTP, with NIP-98 headers made by nostr-tools: the methods
of SPEC section 7 (members, bans, the profile, join requests, claims, and the roles of SPEC
section 6).

A running buzz-relay (``relay`` fixture: one community, its owner, an admin and a member) is
sent requests by tests/node/nip86_client.mjs: a Node script that builds each NIP-98
``Authorization`` header with nostr-tools' ``nip98.getToken`` (kind 27235, ``u``, ``method``,
``payload`` the sha256 of the body) and POSTs ``{"method", "params"}`` to the relay's root with
``Content-Type: application/nostr+json+rpc``; its options spoil the header one way at a time
(no header, a changed signature, another kind, ``u``, ``method`` or ``payload``, a stale
``created_at``, the same header twice). The assertions are on the HTTP answers and, through
SQL, on what the database holds: a refused request changes nothing, and an accepted change of
members commits with its signed list (no drift). Claims are used as clients use them, over the
websocket (aiohttp's client), and no claim code may be found in any table, in the relay's log
or in its /metrics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import urllib.error
import urllib.request
from typing import Any

import aiohttp
import psycopg
import pytest
from fixtures_membership import assert_live_list, members_of, state, verify_both
from nip86_node import call, refused, rpc, send
from psycopg import sql
from relay_client import signed
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub

pytest_plugins = ("fixtures_membership", "relay_fixtures", "nip86_node")


# What supportedmethods answers the owner and admins: every method but itself (NIP-86: "the
# other supported methods").
METHODS = [
    "allowpubkey",
    "unallowpubkey",
    "disallowpubkey",
    "listallowedpubkeys",
    "banpubkey",
    "unbanpubkey",
    "listbannedpubkeys",
    "changerelayname",
    "changerelaydescription",
    "changerelayicon",
    "setjoinpolicy",
    "createclaim",
    "listclaims",
    "deleteclaim",
    "listinvites",
    "listeventsneedingmoderation",
    "allowevent",
    "banevent",
    "createrole",
    "editrole",
    "deleterole",
    "assignrole",
    "unassignrole",
    "listroles",
    # Our extensions, for the community's page (docs/relay.md).
    "revokeinvite",
    "setmemberrole",
    # Our extensions for invitations: quotas and branches.
    "removebranch",
    "setinvitequota",
    "listinvitequotas",
    "listinvitetree",
    # Moderation behind the gate (clearkind is our extension).
    "unbanevent",
    "listbannedevents",
    "allowkind",
    "disallowkind",
    "clearkind",
    "listallowedkinds",
    "listdisallowedkinds",
    "blockip",
    "unblockip",
    "listblockedips",
    "assignmethod",
    "unassignmethod",
    "listmethodassignees",
]


# ---------------------------------------------------------------------------- helpers


def expect(answers: list[dict[str, Any]], names: list[str], status: int) -> None:
    """Each answer is refused with `status` and a JSON error; every miss is listed at once."""
    assert len(answers) == len(names)
    wrong = {}
    for name, answer in zip(names, answers, strict=True):
        try:
            refused(answer, status)
        except AssertionError:
            wrong[name] = (answer["status"], answer["body"])
    assert wrong == {}, f"not {status} with a JSON error"


def invites(relay: Any) -> list[dict[str, Any]]:
    """The community's invites as stored (no codes: only their hashes are kept)."""
    cur = relay.mem.conn.execute(
        "SELECT invite_id, created_by, created_at, expires_at, max_uses, use_count"
        " FROM buzz_private.relay_invites WHERE community_id = %s ORDER BY created_at",
        (relay.community_id,),
    )
    names = [c.name for c in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def everything(relay: Any) -> tuple[Any, ...]:
    """What a refused request must leave as it was: the list, members, events, invites."""
    return (*state(relay.mem, relay.community_id), invites(relay))


def live(relay: Any, expected: dict[str, str]) -> None:
    """The committed members are `expected`, and the live signed list names exactly them."""
    assert_live_list(
        relay.mem,
        relay.community_id,
        relay.mem.member_list(relay.community_id),
        relay.key.pubkey,
        expected,
    )
    assert relay.mem.member_list_drift() == []


def initial(relay: Any) -> dict[str, str]:
    return {
        relay.owner.pubkey: "owner",
        relay.admin.pubkey: "admin",
        relay.member.pubkey: "member",
    }


def signer(relay: Any, who: str) -> Person:
    return {"owner": relay.owner, "admin": relay.admin}[who]


BY = pytest.mark.parametrize("who", ["owner", "admin"])
# The method's SQL is the same whoever calls it, and who may call it is the relay's lookup,
# which the tests under BY check on the cluster: there the rest run as the owner only.
BY_OWNER_ON_CLUSTER = pytest.mark.parametrize(
    "who",
    [
        "owner",
        pytest.param(
            "admin",
            marks=pytest.mark.single_server(
                "the owner's case runs the same SQL; the cluster runs it, and admins' rights"
                " in test_supportedmethods and test_allowpubkey_adds_a_member_with_its_list"
            ),
        ),
    ],
)
# Checked by the relay before any SQL: nothing a cluster changes.
HEADER_CHECK = pytest.mark.single_server("the relay checks the request before any SQL")


def welcome(relay: Any) -> str:
    return f"info: welcome to {relay.host}!"


def join_over_websocket(relay: Any, person: Person, tags: list[list[str]], content: str = ""):
    """(accepted, message) of the OK to a kind 28934 sent by `person` on a new connection."""

    async def main() -> tuple[bool, str]:
        async with aiohttp.ClientSession() as http, http.ws_connect(relay.url) as ws:
            assert (await ws.receive_json(timeout=10))[0] == "AUTH"
            event = signed(person.secret, 28934, tags, content)
            await ws.send_str(json.dumps(["EVENT", event]))
            verb, event_id, accepted, message = await ws.receive_json(timeout=10)
            assert (verb, event_id) == ("OK", event["id"])
            return accepted, message

    return asyncio.run(main())


def claim_over_websocket(relay: Any, person: Person, code: str) -> tuple[bool, str]:
    return join_over_websocket(relay, person, [["claim", code]])


def no_code_anywhere(relay: Any, *codes: str) -> None:
    """No claim code in any row of any table of the database (the sealed copy is not the
    code), in the relay's log output, or in its /metrics."""
    wanted = [code.lower() for code in codes]
    with psycopg.connect(relay.db_url, autocommit=True) as conn:
        tables = conn.execute(
            """SELECT n.nspname, c.relname FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE c.relkind IN ('r', 'p', 'm')
                 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                 AND n.nspname !~ '^pg_'"""
        ).fetchall()
        assert len(tables) > 10
        for schema, table in tables:
            query = sql.SQL("COPY (SELECT * FROM {}.{}) TO STDOUT").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            with conn.cursor().copy(query) as copy:
                rows = b"".join(bytes(chunk) for chunk in copy).decode().lower()
            assert not [c for c in wanted if c in rows], f"a claim code is in {schema}.{table}"
    for where, text in (
        ("log", relay.process.log()),
        ("/metrics", relay.process.get("/metrics")[1]),
    ):
        assert not [c for c in wanted if c in text.lower()], (
            f"a claim code is in the relay's {where}"
        )


# ---------------------------------------------------------------------------- the methods


@BY
def test_supportedmethods(relay, nip86_client, who):
    result = call(nip86_client, relay, signer(relay, who), "supportedmethods")
    assert sorted(result) == sorted(METHODS) and len(result) == len(METHODS), result


@BY
def test_allowpubkey_adds_a_member_with_its_list(relay, nip86_client, who):
    newcomer, other = Person.new(), Person.new()
    before = relay.mem.member_list(relay.community_id)
    assert call(nip86_client, relay, signer(relay, who), "allowpubkey", newcomer.pubkey) is True
    expected = initial(relay) | {newcomer.pubkey: "member"}
    live(relay, expected)
    (row,) = [m for m in relay.mem.relay_members(relay.community_id) if m.pubkey == newcomer.pubkey]
    assert row.added_by == signer(relay, who).pubkey  # docs/relay.md: added_by the caller
    after = relay.mem.member_list(relay.community_id)
    assert after["id"] != before["id"] and after["created_at"] > before["created_at"]
    # Its 8000 (member added) event was written in the same transaction as the list.
    added = [
        ev
        for ev in relay.mem.membership_events(relay.community_id)
        if ev["created_at"] == after["created_at"]
    ]
    assert [(ev["kind"], ev["tags"]) for ev in added] == [(8000, [["-"], ["p", newcomer.pubkey]])]

    # With a reason, for another pubkey.
    result = call(
        nip86_client, relay, signer(relay, who), "allowpubkey", other.pubkey, "a supporter"
    )
    assert result is True
    expected[other.pubkey] = "member"
    live(relay, expected)

    # Already a member (also the admin, whose role stays): true, nothing changes.
    unchanged = everything(relay)
    for pubkey in (newcomer.pubkey, relay.admin.pubkey, relay.owner.pubkey):
        assert call(nip86_client, relay, signer(relay, who), "allowpubkey", pubkey) is True
    assert everything(relay) == unchanged
    live(relay, expected)


@BY
@pytest.mark.parametrize("method", ["unallowpubkey", "disallowpubkey"])
def test_unallowpubkey_removes_a_member_with_its_list(relay, nip86_client, who, method):
    before = relay.mem.member_list(relay.community_id)
    result = call(nip86_client, relay, signer(relay, who), method, relay.member.pubkey)
    assert result is True
    expected = initial(relay)
    del expected[relay.member.pubkey]
    live(relay, expected)
    after = relay.mem.member_list(relay.community_id)
    assert after["created_at"] > before["created_at"]
    removed = [
        ev
        for ev in relay.mem.membership_events(relay.community_id)
        if ev["created_at"] == after["created_at"]
    ]
    assert [(ev["kind"], ev["tags"]) for ev in removed] == [
        (8001, [["-"], ["p", relay.member.pubkey]])
    ]

    # Not a member (any more, or never): true, nothing changes.
    unchanged = everything(relay)
    for pubkey in (relay.member.pubkey, Person.new().pubkey):
        assert call(nip86_client, relay, signer(relay, who), method, pubkey, "x") is True
    assert everything(relay) == unchanged

    # The owner: 400, nothing changes.
    (answer,) = send(nip86_client, rpc(relay, signer(relay, who), method, relay.owner.pubkey))
    refused(answer, 400)
    assert everything(relay) == unchanged
    live(relay, expected)


def test_disallowpubkey_of_an_admin_by_the_owner(relay, nip86_client):
    assert call(nip86_client, relay, relay.owner, "disallowpubkey", relay.admin.pubkey) is True
    expected = initial(relay)
    del expected[relay.admin.pubkey]
    live(relay, expected)
    # The former admin may manage no more.
    unchanged = everything(relay)
    (answer,) = send(nip86_client, rpc(relay, relay.admin, "listallowedpubkeys"))
    refused(answer, 403)
    assert everything(relay) == unchanged


@BY_OWNER_ON_CLUSTER
def test_listallowedpubkeys(relay, nip86_client, who):
    newcomer = Person.new()
    relay.mem.add_relay_member(relay.community_id, newcomer.pubkey)
    result = call(nip86_client, relay, signer(relay, who), "listallowedpubkeys")
    members = members_of(relay.mem, relay.community_id)
    assert members == initial(relay) | {newcomer.pubkey: "member"}
    assert result == [{"pubkey": pk, "reason": members[pk]} for pk in sorted(members)]


def bans(relay: Any) -> list[tuple[str, str | None, str | None]]:
    return [(b.pubkey, b.reason, b.banned_by) for b in relay.mem.banned_pubkeys(relay.community_id)]


@BY_OWNER_ON_CLUSTER
def test_banpubkey_unbanpubkey_listbannedpubkeys(relay, nip86_client, who):
    actor, member = signer(relay, who), relay.member.pubkey
    invite = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    assert call(nip86_client, relay, actor, "banpubkey", member, "spam") is True
    expected = initial(relay)
    del expected[member]
    live(relay, expected)  # removed, with its 8001 and list
    after = relay.mem.member_list(relay.community_id)
    removed = [
        ev
        for ev in relay.mem.membership_events(relay.community_id)
        if ev["created_at"] == after["created_at"]
    ]
    assert [(ev["kind"], ev["tags"]) for ev in removed] == [(8001, [["-"], ["p", member]])]
    assert bans(relay) == [(member, "spam", actor.pubkey)]
    assert call(nip86_client, relay, actor, "listbannedpubkeys") == [
        {"pubkey": member, "reason": "spam"}
    ]
    # Banned: no way back by itself (the invite's one use is not spent).
    refusal = (False, "blocked: you are banned from this community.")
    assert claim_over_websocket(relay, relay.member, invite.code) == refusal
    # Again: true, nothing changes.
    unchanged = everything(relay)
    assert call(nip86_client, relay, actor, "banpubkey", member, "still spam") is True
    assert everything(relay) == unchanged and bans(relay) == [(member, "spam", actor.pubkey)]
    # The owner: 400, nothing changes.
    (answer,) = send(nip86_client, rpc(relay, actor, "banpubkey", relay.owner.pubkey, "coup"))
    assert "owner cannot be banned" in refused(answer, 400)
    assert everything(relay) == unchanged and len(bans(relay)) == 1

    # Unbanned: not a member, but may come back.
    assert call(nip86_client, relay, actor, "unbanpubkey", member, "forgiven") is True
    assert bans(relay) == [] and everything(relay) == unchanged
    assert call(nip86_client, relay, actor, "unbanpubkey", member) is True  # not banned: true
    assert claim_over_websocket(relay, relay.member, invite.code) == (True, welcome(relay))
    live(relay, initial(relay))

    # allowpubkey lifts a ban and adds.
    stranger = Person.new()
    assert call(nip86_client, relay, actor, "banpubkey", stranger.pubkey) is True
    assert call(nip86_client, relay, actor, "listbannedpubkeys") == [
        {"pubkey": stranger.pubkey, "reason": None}
    ]
    assert call(nip86_client, relay, actor, "allowpubkey", stranger.pubkey) is True
    assert bans(relay) == []
    live(relay, initial(relay) | {stranger.pubkey: "member"})


def information(relay: Any) -> dict[str, Any]:
    status, body, _ = relay.process.get("/", {"Accept": "application/nostr+json"})
    assert status == 200
    return json.loads(body)


@BY_OWNER_ON_CLUSTER
def test_the_profile_methods_change_what_nip11_shows(relay, nip86_client, who):
    actor = signer(relay, who)
    assert information(relay)["name"] == relay.host  # no name yet
    assert call(nip86_client, relay, actor, "changerelayname", "Night Owls") is True
    assert call(nip86_client, relay, actor, "changerelaydescription", "Up late.\nAll of us.") is True
    assert call(nip86_client, relay, actor, "changerelayicon", "https://example.org/owl.png") is True
    profile = relay.mem.community_profile(relay.community_id)
    assert profile == (
        "Night Owls",
        "Up late.\nAll of us.",
        "https://example.org/owl.png",
        "invite",
    )
    document = information(relay)
    assert (document["name"], document["description"], document["icon"]) == profile[:3]
    # The same again: true, nothing changes; "" (or null) clears a field.
    assert call(nip86_client, relay, actor, "changerelayname", "Night Owls") is True
    assert call(nip86_client, relay, actor, "changerelayicon", "") is True
    assert call(nip86_client, relay, actor, "changerelaydescription", None) is True
    assert relay.mem.community_profile(relay.community_id) == ("Night Owls", None, None, "invite")
    assert "icon" not in information(relay)
    # The database's refusals in our words: 400, nothing changes.
    answers = send(
        nip86_client,
        rpc(relay, actor, "changerelayname", "x" * 65),
        rpc(relay, actor, "changerelayicon", "javascript:alert(1)"),
        # Names a person reads (SPEC section 10): never blank, nothing that shows otherwise.
        rpc(relay, actor, "changerelayname", "   "),
        rpc(relay, actor, "changerelayname", "Night\u202eslwO"),
        rpc(relay, actor, "changerelayname", "Night\u200bOwls"),
        rpc(relay, actor, "changerelaydescription", " \n "),
        rpc(relay, actor, "createrole", "mods", "Mods\u2028"),
    )
    assert "a name must be 1 to 64 characters" in refused(answers[0], 400)
    assert "https://" in refused(answers[1], 400)
    assert "a name must hold more than whitespace" in refused(answers[2], 400)
    for answer in answers[3:5]:
        assert "a name must not hold control, format" in refused(answer, 400)
    assert "a description must hold more than whitespace" in refused(answers[5], 400)
    assert "the label must not hold control, format" in refused(answers[6], 400)
    assert relay.mem.community_profile(relay.community_id) == ("Night Owls", None, None, "invite")
    assert "mods" not in {d["tags"][1][1] for d in relay.mem.role_definitions(relay.community_id)}


@BY_OWNER_ON_CLUSTER
def test_join_requests_are_listed_approved_and_rejected(relay, nip86_client, who):
    actor = signer(relay, who)
    cellist, drummer, stranger = Person.new(), Person.new(), Person.new()
    pending = (False, "restricted: your request to join is pending approval.")
    closed = (False, "restricted: this community requires a claim to join.")
    assert join_over_websocket(relay, cellist, []) == closed  # the default policy: invite
    assert call(nip86_client, relay, actor, "setjoinpolicy", "request") is True
    assert relay.mem.community_profile(relay.community_id).join_policy == "request"
    assert join_over_websocket(relay, cellist, [], "I play the cello") == pending
    assert join_over_websocket(relay, drummer, [["claim", ""]]) == pending
    requests = relay.mem.join_requests(relay.community_id)
    assert [r.pubkey for r in requests] == [cellist.pubkey, drummer.pubkey]

    listed = call(nip86_client, relay, actor, "listeventsneedingmoderation")
    assert listed == [
        {
            "id": requests[0].request_id,
            "reason": f"join request from {encode_npub(cellist.pubkey)}: I play the cello",
            "pubkey": cellist.pubkey,
            "note": "I play the cello",
        },
        {
            "id": requests[1].request_id,
            "reason": f"join request from {encode_npub(drummer.pubkey)}",
            "pubkey": drummer.pubkey,
            "note": None,
        },
    ]
    assert call(nip86_client, relay, actor, "allowevent", requests[0].request_id, "welcome") is True
    (row,) = [m for m in relay.mem.relay_members(relay.community_id) if m.pubkey == cellist.pubkey]
    assert (row.role, row.added_by) == ("member", actor.pubkey)
    live(relay, initial(relay) | {cellist.pubkey: "member"})
    assert call(nip86_client, relay, actor, "banevent", requests[1].request_id, "not now") is True
    assert relay.mem.join_requests(relay.community_id) == []
    assert call(nip86_client, relay, actor, "listeventsneedingmoderation") == []
    # Rejected: not a member, and a new ask within the day is refused.
    assert drummer.pubkey not in members_of(relay.mem, relay.community_id)
    assert join_over_websocket(relay, drummer, [])[0] is False
    # A handled request is not pending: allowevent is 400; banevent bans such an id (and any
    # other) behind the gate instead, and neither changes a member.
    unchanged = everything(relay)
    (answer,) = send(nip86_client, rpc(relay, actor, "allowevent", requests[0].request_id))
    assert "not a pending join request" in refused(answer, 400)
    list_id = relay.mem.member_list(relay.community_id)["id"]
    assert call(nip86_client, relay, actor, "banevent", requests[1].request_id) is True
    assert call(nip86_client, relay, actor, "banevent", list_id, "spam") is True
    assert everything(relay) == unchanged
    assert sorted(call(nip86_client, relay, actor, "listbannedevents"), key=lambda b: b["id"]) == sorted(
        [{"id": requests[1].request_id, "reason": None}, {"id": list_id, "reason": "spam"}],
        key=lambda b: b["id"],
    )

    # Open: whoever asks joins at once.
    assert call(nip86_client, relay, actor, "setjoinpolicy", "open") is True
    assert join_over_websocket(relay, stranger, []) == (True, welcome(relay))
    live(relay, initial(relay) | {cellist.pubkey: "member", stranger.pubkey: "member"})


@BY_OWNER_ON_CLUSTER
def test_claims_create_list_join_delete(relay, nip86_client, who):
    actor = signer(relay, who)
    shared, flotilla, once = "Shared-Link_1", "7152039318437226", "one-use-only"
    t0 = time.time()
    # Flotilla's call: the code alone; then with our extension's max uses and ttl.
    assert call(nip86_client, relay, actor, "createclaim", shared) is True
    assert call(nip86_client, relay, actor, "createclaim", flotilla, 5, 3600) is True
    assert call(nip86_client, relay, actor, "createclaim", once, 1, None) is True
    rows = invites(relay)  # oldest first
    assert [(r["created_by"], r["max_uses"], r["use_count"]) for r in rows] == [
        (actor.pubkey, 100, 0),  # buzz-relay's default --claim-max-uses
        (actor.pubkey, 5, 0),
        (actor.pubkey, 1, 0),
    ]
    expiries = [r["expires_at"].timestamp() - t0 for r in rows]
    assert abs(expiries[0] - 30 * 24 * 3600) < 60 and abs(expiries[1] - 3600) < 60
    assert abs(expiries[2] - 30 * 24 * 3600) < 60  # null: the default --claim-ttl
    # Each kept sealed: the relay key opens it to its code, nothing else shows it.
    for record, code in zip(relay.mem.relay_invites(relay.community_id), [shared, flotilla, once]):
        assert code not in record.sealed and relay.key.unseal(record.sealed) == code

    assert call(nip86_client, relay, actor, "listclaims") == [once, flotilla, shared]

    # A claim of it over the websocket joins, brought in by the claim's creator.
    newcomer = Person.new()
    assert claim_over_websocket(relay, newcomer, flotilla) == (True, welcome(relay))
    (row,) = [m for m in relay.mem.relay_members(relay.community_id) if m.pubkey == newcomer.pubkey]
    assert (row.role, row.added_by) == ("member", actor.pubkey)
    live(relay, initial(relay) | {newcomer.pubkey: "member"})
    # A claim used up is no longer listed (nor is an expired one: it no longer claims).
    assert claim_over_websocket(relay, Person.new(), once)[0] is True
    assert call(nip86_client, relay, actor, "listclaims") == [flotilla, shared]
    # Our invites with their details, every one of them, and no code.
    listed = call(nip86_client, relay, actor, "listinvites")
    assert listed == [
        {
            "id": str(r["invite_id"]),
            "created_by": r["created_by"],
            "created_at": int(r["created_at"].timestamp()),
            "expires_at": int(r["expires_at"].timestamp()),
            "use_count": r["use_count"],
            "max_uses": r["max_uses"],
        }
        for r in invites(relay)
    ]
    assert [c["use_count"] for c in listed] == [0, 1, 1]
    assert not any(code in json.dumps(listed) for code in (shared, flotilla, once))

    # A code equal to a live one (case aside) is refused, and nothing changes.
    unchanged = everything(relay)
    (answer,) = send(nip86_client, rpc(relay, actor, "createclaim", shared.upper()))
    assert "already a live invite" in refused(answer, 400)
    assert everything(relay) == unchanged

    # deleteclaim: the code (case aside) is revoked and invalid from then on; again: false,
    # and so for a code used up (no longer a live claim) or never made.
    assert call(nip86_client, relay, actor, "deleteclaim", flotilla) is True
    assert call(nip86_client, relay, actor, "listclaims") == [shared]
    assert claim_over_websocket(relay, Person.new(), flotilla) == (
        False,
        "restricted: that invite code is invalid.",
    )
    for code in (flotilla, once, "never-made-1"):
        assert call(nip86_client, relay, actor, "deleteclaim", code) is False
    assert call(nip86_client, relay, actor, "deleteclaim", shared.lower()) is True
    assert call(nip86_client, relay, actor, "listclaims") == []
    assert len(invites(relay)) == 1  # the used-up one stays, for listinvites
    no_code_anywhere(relay, shared, flotilla, once)


def test_a_key_rotation_leaves_old_claims_unlisted_but_claiming(
    relay, nip86_client, start_relay, db_url
):
    before, after = "before_rotation-1", "after_rotation-2"
    assert call(nip86_client, relay, relay.owner, "createclaim", before) is True
    assert call(nip86_client, relay, relay.owner, "listclaims") == [before]
    new_key = RelayKey.generate()
    with Membership.connect(db_url, new_key) as rotated:
        while rotated.rotate_relay_key(new_key.pubkey).outcome:
            pass
    relay.process.stop()
    process = start_relay(
        "--community",
        str(relay.community_id),
        env={"BUZZ_RELAY_SECRET_KEY": new_key.secret_hex()},
    )
    moved = dataclasses.replace(relay, process=process, url=process.url, key=new_key)

    # Sealed to the old key: not listed, not found by its code...
    assert call(nip86_client, moved, relay.owner, "listclaims") == []
    assert call(nip86_client, moved, relay.owner, "deleteclaim", before) is False
    # ... but the hash is what claims: it still lets someone in.
    newcomer = Person.new()
    assert claim_over_websocket(moved, newcomer, before) == (True, welcome(moved))
    live(moved, initial(moved) | {newcomer.pubkey: "member"})
    # A new claim is sealed to the new key, and listed.
    assert call(nip86_client, moved, relay.admin, "createclaim", after) is True
    assert call(nip86_client, moved, relay.admin, "listclaims") == [after]
    # The relay says how many it left out, never which.
    assert "1 live claim(s) sealed to another relay key" in process.log()
    no_code_anywhere(moved, before, after)
    assert before not in relay.process.log()


# ---------------------------------------------------------------------------- who may


@pytest.mark.parametrize("who", ["stranger", "member"])
def test_not_owner_or_admin_is_403_and_supportedmethods_is_empty(relay, nip86_client, who):
    actor = relay.member if who == "member" else Person.new()
    relay.mem.set_join_policy(relay.community_id, "request")
    request_id = "ab" * 32
    relay.mem.request_membership(relay.community_id, Person.new().pubkey, request_id)
    relay.mem.ban_pubkey(relay.community_id, Person.new().pubkey)
    unchanged = (everything(relay), relay.mem.community_profile(relay.community_id))
    requests = {
        "allowpubkey": [Person.new().pubkey],
        "allowpubkey self": [actor.pubkey],
        "unallowpubkey": [relay.admin.pubkey],
        "disallowpubkey": [relay.member.pubkey],
        "listallowedpubkeys": [],
        "banpubkey": [relay.admin.pubkey, "coup"],
        "unbanpubkey": [relay.member.pubkey],
        "listbannedpubkeys": [],
        "changerelayname": ["Mine now"],
        "changerelaydescription": ["Mine now"],
        "changerelayicon": ["https://example.org/mine.png"],
        "setjoinpolicy": ["open"],
        "createclaim": ["mine-now-1"],
        "listclaims": [],
        "deleteclaim": ["mine-now-1"],
        "listinvites": [],
        "listeventsneedingmoderation": [],
        "allowevent": [request_id],
        "banevent": [request_id],
    }
    answers = send(nip86_client, *(rpc(relay, actor, m.split()[0], *p) for m, p in requests.items()))
    for answer in answers:
        refused(answer, 403)
        assert answer["event"]["pubkey"] == actor.pubkey
    assert (everything(relay), relay.mem.community_profile(relay.community_id)) == unchanged
    assert [r.request_id for r in relay.mem.join_requests(relay.community_id)] == [request_id]
    live(relay, initial(relay))
    # supportedmethods answers anyone with a valid NIP-98 event: what they may call, none.
    assert call(nip86_client, relay, actor, "supportedmethods") == []


# ---------------------------------------------------------------------------- bad auth

BAD_AUTH = {
    "no header": {"no_auth": True},
    "not Nostr": {"scheme": "Basic "},
    "not base64": {"authorization": "Nostr %%%not-base64%%%"},
    "not an event": {"authorization": "Nostr eyJraW5kIjoyNzIzNX0="},  # {"kind":27235}
    "bad signature": {"tamper_sig": True},
    "kind 1": {"kind": 1},
    "kind 22242": {"kind": 22242},
    "u another host": {"u": "http://relay.invalid"},
    "u another port": {"u": "http://127.0.0.1:1"},
    "u another path": {},  # the relay's URL + /api
    "method GET": {"http_method": "GET"},
    "payload of another body": {"payload_body": {"method": "supportedmethods", "params": []}},
    "payload of nothing": {"payload_body": ""},
    "no payload": {"no_payload": True},
    "created_at -120 s": {"created_at_offset": -120},
    "created_at +120 s": {"created_at_offset": 120},
}


@HEADER_CHECK
def test_bad_auth_is_401(relay, nip86_client):
    here = relay.process.http
    cases = {name: dict(spoil) for name, spoil in BAD_AUTH.items()}
    cases["u another path"]["u"] = here + "/api"
    newcomer = Person.new()
    unchanged = everything(relay)
    # For each spoiled header: a change of members each way, a claim and two reads (which
    # accept an event twice, but no less proven), signed by the owner; each must be refused.
    names, requests = [], []
    for name, spoil in cases.items():
        for request in (
            rpc(relay, relay.owner, "allowpubkey", newcomer.pubkey, **spoil),
            rpc(relay, relay.owner, "disallowpubkey", relay.member.pubkey, **spoil),
            rpc(relay, relay.owner, "createclaim", "spoilt-claim", **spoil),
            rpc(relay, relay.owner, "listallowedpubkeys", **spoil),
            rpc(relay, relay.owner, "listbannedpubkeys", **spoil),
        ):
            names.append(f"{name}: {request['method']}")
            requests.append(request)
    expect(send(nip86_client, *requests), names, 401)
    assert everything(relay) == unchanged
    live(relay, initial(relay))


def test_replayed_header_is_401(relay, nip86_client):
    newcomer = Person.new()
    first, again = send(
        nip86_client, rpc(relay, relay.owner, "allowpubkey", newcomer.pubkey, repeat=2)
    )
    assert (first["status"], first["body"]) == (200, {"result": True}), first
    refused(again, 401)
    live(relay, initial(relay) | {newcomer.pubkey: "member"})

    # The newcomer is removed; the same header and body again must not add it back.
    relay.mem.remove_relay_member(relay.community_id, newcomer.pubkey)
    unchanged = everything(relay)
    header = first["authorization"]
    (replayed,) = send(
        nip86_client,
        rpc(relay, relay.owner, "allowpubkey", newcomer.pubkey, authorization=header),
    )
    assert replayed["event"] == first["event"]
    refused(replayed, 401)
    assert everything(relay) == unchanged
    live(relay, initial(relay))

    # A replayed createclaim or banpubkey is refused.
    made, replayed = send(
        nip86_client, rpc(relay, relay.admin, "createclaim", "replayed-1", repeat=2)
    )
    assert (made["status"], made["body"]) == (200, {"result": True}), made
    refused(replayed, 401)
    assert len(invites(relay)) == 1
    banned, replayed = send(
        nip86_client, rpc(relay, relay.admin, "banpubkey", newcomer.pubkey, repeat=2)
    )
    assert (banned["status"], banned["body"]) == (200, {"result": True}), banned
    refused(replayed, 401)


def test_a_read_accepts_its_header_again(relay, nip86_client):
    # welshman dates NIP-98 events in whole seconds and Flotilla asks supportedmethods twice
    # at once: the same event twice, both answered.
    stranger = Person.new()
    reads = [
        rpc(relay, relay.owner, "supportedmethods", repeat=3),
        rpc(relay, stranger, "supportedmethods", repeat=2),
        rpc(relay, relay.admin, "listallowedpubkeys", repeat=2),
        rpc(relay, relay.admin, "listbannedpubkeys", repeat=2),
        rpc(relay, relay.admin, "listinvites", repeat=2),
        rpc(relay, relay.admin, "listeventsneedingmoderation", repeat=2),
        rpc(relay, relay.admin, "listroles", repeat=2),
    ]
    answers = send(nip86_client, *reads)
    assert [a["status"] for a in answers] == [200] * len(answers), answers
    assert answers[0]["authorization"] == answers[2]["authorization"]
    assert sorted(answers[0]["body"]["result"]) == sorted(METHODS)
    assert answers[3]["body"] == answers[4]["body"] == {"result": []}
    # Still no more than fresh: a minute old, even the first time, it is refused.
    stale = send(nip86_client, rpc(relay, relay.owner, "supportedmethods", created_at_offset=-90))
    refused(stale[0], 401)


@HEADER_CHECK
def test_u_names_the_public_url_in_any_accepted_form(relay, nip86_client):
    """The relay runs with --public-url ws://127.0.0.1:PORT (relay_fixtures): a u naming that,
    over http or ws, is this relay; the community's host, or TLS, is not (SPEC section 10)."""
    port = relay.process.port
    forms = [
        f"http://127.0.0.1:{port}",
        f"http://127.0.0.1:{port}/",
        f"ws://127.0.0.1:{port}",
        f"ws://127.0.0.1:{port}/",
    ]
    others = [f"https://127.0.0.1:{port}", f"wss://{relay.host}/", f"http://{relay.host}"]
    answers = send(
        nip86_client, *(rpc(relay, relay.owner, "supportedmethods", u=u) for u in forms + others)
    )
    for u, answer in zip(forms, answers, strict=False):
        assert answer["status"] == 200, (u, answer)
        assert answer["event"]["tags"][0] == ["u", u]
    for u, answer in zip(others, answers[len(forms) :], strict=True):
        assert "u tag is not this relay's URL" in refused(answer, 401), u


@HEADER_CHECK
def test_u_with_more_than_the_relay_url_is_401(relay, nip86_client):
    # u must be this relay's URL (a trailing / allowed): not one with user info, a query or a
    # fragment added, though each still has this relay's host and port.
    port = relay.process.port
    forms = [
        f"http://someone@127.0.0.1:{port}",
        f"http://127.0.0.1:{port}?x=1",
        f"http://127.0.0.1:{port}#x",
        f"http://127.0.0.1:{port}/api",
        f"http://127.0.0.1:{port}//",
        f"ftp://127.0.0.1:{port}",
        f"127.0.0.1:{port}",
    ]
    newcomer = Person.new()
    unchanged = everything(relay)
    answers = send(
        nip86_client,
        *(rpc(relay, relay.owner, "allowpubkey", newcomer.pubkey, u=u) for u in forms),
    )
    expect(answers, forms, 401)
    assert everything(relay) == unchanged


# ---------------------------------------------------------------------------- bad requests

BAD_REQUESTS = {
    "allowpubkey not hex": ("allowpubkey", ["not-a-pubkey"]),
    "allowpubkey 63 hex": ("allowpubkey", ["a" * 63]),
    "allowpubkey no params": ("allowpubkey", []),
    "allowpubkey a number": ("allowpubkey", [7]),
    "disallowpubkey not hex": ("disallowpubkey", ["zz" * 32]),
    "createclaim no claim": ("createclaim", []),
    "createclaim claim of 7": ("createclaim", ["abcdefg"]),
    "createclaim claim of 129": ("createclaim", ["a" * 129]),
    "createclaim claim with a space": ("createclaim", ["abcd efgh"]),
    "createclaim claim with a slash": ("createclaim", ["abcd/efgh"]),
    "createclaim claim a number": ("createclaim", [12345678]),
    "createclaim the former params": ("createclaim", [1, 3600]),
    "createclaim ttl 5": ("createclaim", ["abcdefgh", 1, 5]),
    "createclaim ttl 31 days": ("createclaim", ["abcdefgh", 1, 2592001]),
    "createclaim max uses 0": ("createclaim", ["abcdefgh", 0]),
    "createclaim max uses 10001": ("createclaim", ["abcdefgh", 10001]),
    "createclaim max uses text": ("createclaim", ["abcdefgh", "3"]),
    "createclaim too many params": ("createclaim", ["abcdefgh", 1, 3600, 1]),
    "deleteclaim no claim": ("deleteclaim", []),
    "deleteclaim not a claim": ("deleteclaim", ["not a claim"]),
    "unallowpubkey not hex": ("unallowpubkey", ["zz" * 32]),
    "banpubkey no params": ("banpubkey", []),
    "banpubkey reason a number": ("banpubkey", ["a" * 64, 5]),
    "banpubkey reason of 1001": ("banpubkey", ["a" * 64, "r" * 1001]),
    "unbanpubkey not hex": ("unbanpubkey", ["not-a-pubkey"]),
    "changerelayname of 65": ("changerelayname", ["n" * 65]),
    "changerelayname with a newline": ("changerelayname", ["a\nb"]),
    "changerelayname no params": ("changerelayname", []),
    "changerelaydescription of 2001": ("changerelaydescription", ["d" * 2001]),
    "changerelaydescription a number": ("changerelaydescription", [5]),
    "changerelayicon http": ("changerelayicon", ["http://example.org/icon.png"]),
    "changerelayicon not a URL": ("changerelayicon", ["icon.png"]),
    "setjoinpolicy closed": ("setjoinpolicy", ["closed"]),
    "setjoinpolicy two": ("setjoinpolicy", ["open", "invite"]),
    "allowevent not an id": ("allowevent", ["not-an-id"]),
    "allowevent no pending request": ("allowevent", ["ab" * 32]),
    "banevent reason a list": ("banevent", ["cd" * 32, ["spam"]]),
    "unknown method": ("nosuchmethod", ["x"]),
    "createrole no label": ("createrole", ["x"]),
    "createrole label a number": ("createrole", ["x", 5]),
    "createrole too many params": ("createrole", ["x", "X", None, None, None, None]),
    "createrole color text": ("createrole", ["x", "X", None, "red"]),
    "createrole color true": ("createrole", ["x", "X", None, True]),
    "createrole order 1.5": ("createrole", ["x", "X", None, None, 1.5]),
    "createrole order over int4": ("createrole", ["x", "X", None, None, 2**31]),
    "deleterole no id": ("deleterole", []),
    "assignrole no role": ("assignrole", ["a" * 64]),
    "assignrole not hex": ("assignrole", ["not-a-pubkey", "vip"]),
    "method not in the list": ("__init__", []),
}

BAD_BODIES = {
    "not JSON": "this is not json",
    "an array": '["supportedmethods", []]',
    "no method": '{"params": []}',
    "method a number": '{"method": 5, "params": []}',
    "params an object": '{"method": "supportedmethods", "params": {}}',
    "empty": "",
}


def test_bad_params_and_bodies_are_400(relay, nip86_client):
    invite = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    unchanged = (everything(relay), relay.mem.community_profile(relay.community_id))
    requests = [
        rpc(relay, relay.owner, method, *params) for method, params in BAD_REQUESTS.values()
    ] + [rpc(relay, relay.owner, "supportedmethods", raw_body=body) for body in BAD_BODIES.values()]
    expect(send(nip86_client, *requests), [*BAD_REQUESTS, *BAD_BODIES], 400)
    assert (everything(relay), relay.mem.community_profile(relay.community_id)) == unchanged
    assert relay.mem.banned_pubkeys(relay.community_id) == []
    assert [row["invite_id"] for row in invites(relay)] == [invite.invite_id]
    live(relay, initial(relay))


@HEADER_CHECK
def test_body_without_params_is_400(relay, nip86_client):
    # The contract: a JSON object with a string method AND an array params; none is not [].
    (answer,) = send(
        nip86_client,
        rpc(relay, relay.owner, "supportedmethods", raw_body='{"method": "supportedmethods"}'),
    )
    refused(answer, 400)


def test_another_content_type_is_415(relay, nip86_client):
    unchanged = everything(relay)
    names, requests = [], []
    for content_type in ("application/json", "text/plain", "application/nostr+json", None):
        spoil = {"content_type": content_type} if content_type else {"no_content_type": True}
        names += [f"{content_type}: allowpubkey", f"{content_type}: createclaim"]
        requests += [
            rpc(relay, relay.owner, "allowpubkey", Person.new().pubkey, **spoil),
            rpc(relay, relay.owner, "createclaim", "typed-claim", **spoil),
        ]
    expect(send(nip86_client, *requests), names, 415)
    assert everything(relay) == unchanged


@HEADER_CHECK
def test_cors_preflight(relay):
    request = urllib.request.Request(
        relay.process.http + "/",
        method="OPTIONS",
        headers={
            "Origin": "https://client.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            status, headers = response.status, response.headers
    except urllib.error.HTTPError as exc:
        status, headers = exc.code, exc.headers
    assert status == 204
    allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed
    assert "POST" in headers["Access-Control-Allow-Methods"]
    assert headers["Access-Control-Allow-Origin"] == "*"


# ---------------------------------------------------------------------------- roles (SPEC §6)


def definitions(relay: Any) -> dict[str, dict[str, Any]]:
    """The live 33534s by role id (each verified), as the database serves them."""
    found = {}
    for ev in relay.mem.role_definitions(relay.community_id):
        verify_both(ev)
        assert ev["pubkey"] == relay.key.pubkey
        found[ev["tags"][1][1]] = ev
    return found


def held(relay: Any) -> dict[str, list[str]]:
    """The defined roles each member holds; the live list's member tags must say the same."""
    members = relay.mem.relay_members(relay.community_id)
    live = relay.mem.member_list(relay.community_id)
    verify_both(live)
    assert live["tags"] == [["-"]] + [["member", m.pubkey, m.role, *m.roles] for m in members]
    assert relay.mem.member_list_drift() == []
    return {m.pubkey: m.roles for m in members if m.roles}


def role_state(relay: Any) -> tuple[Any, ...]:
    """What a refused role request must leave as it was."""
    return (
        everything(relay),
        relay.mem.role_definitions(relay.community_id),
        relay.mem.role_deletions(relay.community_id),
    )


BASE_ROLES = ["admin", "member", "owner"]


@BY_OWNER_ON_CLUSTER
def test_createrole_editrole_listroles(relay, nip86_client, who):
    actor = signer(relay, who)
    before = definitions(relay)
    list_before = relay.mem.member_list(relay.community_id)
    assert sorted(before) == BASE_ROLES
    assert (
        call(nip86_client, relay, actor, "createrole", "vip", "VIP", "Very important", 45, 3) is True
    )
    # The optional ones: null, or left out.
    assert (
        call(nip86_client, relay, actor, "createrole", "mod", "Moderator", None, None, None) is True
    )
    assert call(nip86_client, relay, actor, "createrole", "helper", "Helper") is True
    defined = definitions(relay)
    assert sorted(defined) == sorted([*BASE_ROLES, "helper", "mod", "vip"])
    assert defined["vip"]["tags"] == [
        ["-"],
        ["d", "vip"],
        ["label", "VIP"],
        ["description", "Very important"],
        ["color", "45"],
        ["order", "3"],
    ]
    assert defined["mod"]["tags"] == [["-"], ["d", "mod"], ["label", "Moderator"]]
    assert defined["helper"]["tags"] == [["-"], ["d", "helper"], ["label", "Helper"]]
    assert {k: defined[k] for k in BASE_ROLES} == before  # untouched
    listed = call(nip86_client, relay, actor, "listroles")
    assert [r["id"] for r in listed] == sorted(defined)
    assert listed[[r["id"] for r in listed].index("vip")] == {
        "id": "vip",
        "label": "VIP",
        "description": "Very important",
        "color": 45,
        "order": 3,
    }
    assert {
        "id": "owner",
        "label": "Owner",
        "description": None,
        "color": None,
        "order": 0,
    } in listed

    # editrole: the whole definition again (what is left out or null is unset).
    assert call(nip86_client, relay, actor, "editrole", "vip", "V.I.P.", None, 300) is True
    edited = definitions(relay)["vip"]
    assert edited["tags"] == [["-"], ["d", "vip"], ["label", "V.I.P."], ["color", "300"]]
    assert edited["created_at"] > defined["vip"]["created_at"]
    # The same again: true, and no new event.
    assert call(nip86_client, relay, actor, "editrole", "vip", "V.I.P.", None, 300) is True
    assert definitions(relay)["vip"] == edited
    # A base role may be redefined, not created.
    assert call(nip86_client, relay, actor, "editrole", "member", "Regular", "Everyone", 120, 2)
    assert definitions(relay)["member"]["tags"] == [
        ["-"],
        ["d", "member"],
        ["label", "Regular"],
        ["description", "Everyone"],
        ["color", "120"],
        ["order", "2"],
    ]
    # A definition writes no list.
    assert relay.mem.member_list(relay.community_id) == list_before
    assert held(relay) == {}


def test_createrole_of_a_defined_role_and_editrole_of_a_missing_one_are_400(relay, nip86_client):
    call(nip86_client, relay, relay.owner, "createrole", "vip", "VIP", "first", 10, 1)
    unchanged = role_state(relay)
    answers = send(
        nip86_client,
        rpc(relay, relay.owner, "createrole", "vip", "Another VIP"),
        # Even the same definition; dated a second later, else (sent within the second of
        # the call above) it would be the same NIP-98 event, refused as a replay.
        rpc(relay, relay.owner, "createrole", "vip", "VIP", "first", 10, 1, created_at_offset=1),
        rpc(relay, relay.owner, "createrole", "owner", "Boss"),
        rpc(relay, relay.owner, "editrole", "ghost", "Ghost"),
    )
    messages = [refused(a, 400) for a in answers]
    assert all("defined already" in m and "editrole" in m for m in messages[:3]), messages
    assert "no role 'ghost'" in messages[3] and "createrole" in messages[3]
    assert role_state(relay) == unchanged  # rolled back: the role 'ghost' was never made
    assert "ghost" not in definitions(relay)


def test_createrole_and_editrole_refusals_from_the_database_are_400(relay, nip86_client):
    call(nip86_client, relay, relay.owner, "createrole", "vip", "VIP")
    unchanged = role_state(relay)
    cases = {
        "id upper case": ("createrole", ["VIP2", "x"]),
        "id with a space": ("createrole", ["v ip", "x"]),
        "id empty": ("createrole", ["", "x"]),
        "id of 65": ("createrole", ["a" * 65, "x"]),
        "label empty": ("createrole", ["new", ""]),
        "label of 65": ("createrole", ["new", "x" * 65]),
        "label with a newline": ("createrole", ["new", "a\nb"]),
        "label with NUL": ("createrole", ["new", "a\u0000b"]),
        "description of 501": ("createrole", ["new", "x", "d" * 501]),
        "color 361": ("createrole", ["new", "x", None, 361]),
        "color -1": ("createrole", ["new", "x", None, -1]),
        "editrole color 361": ("editrole", ["vip", "VIP", None, 361]),
        "editrole id upper case": ("editrole", ["VIP", "VIP"]),
    }
    answers = send(nip86_client, *(rpc(relay, relay.admin, m, *p) for m, p in cases.values()))
    messages = dict(zip(cases, (refused(a, 400) for a in answers), strict=True))
    assert all(m.startswith("invalid params:") for m in messages.values()), messages
    assert "role id" in messages["id upper case"] and "p_role" not in messages["id upper case"]
    assert "label" in messages["label empty"] and "p_label" not in messages["label empty"]
    assert "color" in messages["color 361"]
    assert role_state(relay) == unchanged


@BY_OWNER_ON_CLUSTER
def test_assignrole_unassignrole_and_deleterole(relay, nip86_client, who):
    actor = signer(relay, who)
    member, admin = relay.member.pubkey, relay.admin.pubkey
    for role in ("vip", "mod"):
        assert call(nip86_client, relay, actor, "createrole", role, role.upper()) is True
    before = relay.mem.member_list(relay.community_id)

    assert call(nip86_client, relay, actor, "assignrole", member, "vip") is True
    assert call(nip86_client, relay, actor, "assignrole", member.upper(), "mod") is True
    assert call(nip86_client, relay, actor, "assignrole", admin, "vip") is True
    assert held(relay) == {member: ["mod", "vip"], admin: ["vip"]}
    after = relay.mem.member_list(relay.community_id)
    assert ["member", member, "member", "mod", "vip"] in after["tags"]
    assert after["created_at"] > before["created_at"]
    # Already held: true, nothing changes.
    unchanged = role_state(relay)
    assert call(nip86_client, relay, actor, "assignrole", member, "vip") is True
    assert role_state(relay) == unchanged

    assert call(nip86_client, relay, actor, "unassignrole", member, "mod") is True
    assert held(relay) == {member: ["vip"], admin: ["vip"]}
    # Not held, never defined, or not a member: true (the pubkey does not hold it), no change.
    unchanged = role_state(relay)
    for params in ((member, "mod"), (member, "ghost"), (Person.new().pubkey, "vip")):
        assert call(nip86_client, relay, actor, "unassignrole", *params) is True
    assert role_state(relay) == unchanged

    # Deleted: taken from every holder, its kind 5 published with the new list.
    assert call(nip86_client, relay, actor, "deleterole", "vip") is True
    assert held(relay) == {}
    assert sorted(definitions(relay)) == sorted([*BASE_ROLES, "mod"])
    (deletion,) = relay.mem.role_deletions(relay.community_id)
    verify_both(deletion)
    assert deletion["tags"] == [["-"], ["a", f"33534:{relay.key.pubkey}:vip"], ["k", "33534"]]
    assert deletion["created_at"] == relay.mem.member_list(relay.community_id)["created_at"]
    # No such role (any more): false, nothing changes.
    unchanged = role_state(relay)
    assert call(nip86_client, relay, actor, "deleterole", "vip") is False
    assert call(nip86_client, relay, actor, "deleterole", "never") is False
    assert role_state(relay) == unchanged
    assert [r["id"] for r in call(nip86_client, relay, actor, "listroles")] == sorted(
        [*BASE_ROLES, "mod"]
    )


def test_role_refusals_are_400_and_change_nothing(relay, nip86_client):
    call(nip86_client, relay, relay.owner, "createrole", "vip", "VIP")
    call(nip86_client, relay, relay.owner, "assignrole", relay.member.pubkey, "vip")
    unchanged = role_state(relay)
    stranger = Person.new().pubkey
    cases = {
        "deleterole base owner": ("deleterole", ["owner"]),
        "deleterole base member": ("deleterole", ["member"]),
        "deleterole bad id": ("deleterole", ["Not A Role"]),
        "assignrole undefined": ("assignrole", [relay.member.pubkey, "ghost"]),
        "assignrole base": ("assignrole", [relay.member.pubkey, "admin"]),
        "assignrole bad id": ("assignrole", [relay.member.pubkey, "VIP"]),
        "assignrole not a member": ("assignrole", [stranger, "vip"]),
        "assignrole bad pubkey": ("assignrole", ["zz" * 32, "vip"]),
        "unassignrole base": ("unassignrole", [relay.member.pubkey, "member"]),
        "unassignrole bad id": ("unassignrole", [relay.member.pubkey, "v ip"]),
        "unassignrole bad pubkey": ("unassignrole", ["a" * 63, "vip"]),
        "unassignrole role a number": ("unassignrole", [relay.member.pubkey, 5]),
    }
    answers = send(nip86_client, *(rpc(relay, relay.admin, m, *p) for m, p in cases.values()))
    messages = dict(zip(cases, (refused(a, 400) for a in answers), strict=True))
    assert all(m.startswith("invalid params:") for m in messages.values()), messages
    assert "base role" in messages["deleterole base owner"]
    assert "names no role that community" in messages["assignrole undefined"]
    assert "not a member" in messages["assignrole not a member"]
    assert role_state(relay) == unchanged
    assert held(relay) == {relay.member.pubkey: ["vip"]}


@pytest.mark.parametrize("who", ["stranger", "member"])
def test_role_methods_of_a_non_admin_are_403(relay, nip86_client, who):
    call(nip86_client, relay, relay.owner, "createrole", "vip", "VIP")
    actor = relay.member if who == "member" else Person.new()
    unchanged = role_state(relay)
    answers = send(
        nip86_client,
        rpc(relay, actor, "createrole", "mod", "Moderator"),
        rpc(relay, actor, "editrole", "vip", "Hacked"),
        rpc(relay, actor, "editrole", "owner", "Hacked"),
        rpc(relay, actor, "deleterole", "vip"),
        rpc(relay, actor, "assignrole", actor.pubkey, "vip"),
        rpc(relay, actor, "unassignrole", relay.member.pubkey, "vip"),
        rpc(relay, actor, "listroles"),
    )
    for answer in answers:
        assert refused(answer, 403).startswith("restricted:")
    assert role_state(relay) == unchanged


def test_role_methods_on_an_archived_community_are_400(relay, nip86_client):
    call(nip86_client, relay, relay.owner, "createrole", "vip", "VIP")
    relay.mem.archive_community(relay.community_id)
    unchanged = role_state(relay)
    answers = send(
        nip86_client,
        rpc(relay, relay.owner, "createrole", "mod", "Moderator"),
        rpc(relay, relay.owner, "editrole", "vip", "VIP!"),
        rpc(relay, relay.owner, "deleterole", "vip"),
        rpc(relay, relay.owner, "assignrole", relay.member.pubkey, "vip"),
    )
    for answer in answers:
        assert refused(answer, 400) == "restricted: this community is archived"
    assert role_state(relay) == unchanged


# ---------------------------------------------------------------------------- our extensions


@BY_OWNER_ON_CLUSTER
def test_setmemberrole_changes_the_base_role_with_its_list(relay, nip86_client, who):
    actor, member = signer(relay, who), relay.member.pubkey
    before = relay.mem.member_list(relay.community_id)
    assert call(nip86_client, relay, actor, "setmemberrole", member, "admin") == "updated"
    live(relay, initial(relay) | {member: "admin"})
    after = relay.mem.member_list(relay.community_id)
    assert after["created_at"] > before["created_at"]
    assert ["member", member, "admin"] in after["tags"]
    # The new admin manages from now on.
    assert sorted(call(nip86_client, relay, relay.member, "supportedmethods")) == sorted(METHODS)
    # As asked already: "unchanged", and nothing changes.
    unchanged = everything(relay)
    assert call(nip86_client, relay, actor, "setmemberrole", member.upper(), "admin") == "unchanged"
    assert everything(relay) == unchanged
    # And back, the admin of the fixture too (an admin may demote an admin, as it may remove one).
    assert call(nip86_client, relay, actor, "setmemberrole", member, "member") == "updated"
    assert call(nip86_client, relay, relay.owner, "setmemberrole", relay.admin.pubkey, "member")
    live(relay, initial(relay) | {relay.admin.pubkey: "member"})
    (answer,) = send(nip86_client, rpc(relay, relay.member, "setmemberrole", member, "admin"))
    refused(answer, 403)
    live(relay, initial(relay) | {relay.admin.pubkey: "member"})


def test_setmemberrole_refusals_are_400_and_change_nothing(relay, nip86_client):
    member, stranger = relay.member.pubkey, Person.new().pubkey
    unchanged = everything(relay)
    cases = {
        "the owner": ("setmemberrole", [relay.owner.pubkey, "member"]),
        "to owner": ("setmemberrole", [member, "owner"]),
        "a defined role's name": ("setmemberrole", [member, "vip"]),
        "upper case": ("setmemberrole", [member, "Admin"]),
        "not a member": ("setmemberrole", [stranger, "admin"]),
        "not hex": ("setmemberrole", ["not-a-pubkey", "admin"]),
        "no role": ("setmemberrole", [member]),
        "role null": ("setmemberrole", [member, None]),
        "role a number": ("setmemberrole", [member, 1]),
        "pubkey a number": ("setmemberrole", [7, "admin"]),
        "three params": ("setmemberrole", [member, "admin", "x"]),
    }
    answers = send(nip86_client, *(rpc(relay, relay.owner, m, *p) for m, p in cases.values()))
    messages = dict(zip(cases, (refused(a, 400) for a in answers), strict=True))
    assert "transfer of ownership" in messages["the owner"]
    assert "admin, member" in messages["to owner"] and "p_role" not in messages["to owner"]
    assert "not a member" in messages["not a member"]
    assert "pubkey" in messages["not hex"]
    assert everything(relay) == unchanged
    live(relay, initial(relay))


@BY_OWNER_ON_CLUSTER
def test_revokeinvite_by_its_id(relay, nip86_client, who):
    actor = signer(relay, who)
    # A one-use invite of the kind 28935 mints (no claim names it), and a claim.
    minted = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    assert call(nip86_client, relay, actor, "createclaim", "shared-link-9", 3, 3600) is True
    listed = call(nip86_client, relay, actor, "listinvites")
    assert [i["id"] for i in listed] == [str(r["invite_id"]) for r in invites(relay)]
    claim_id = next(i["id"] for i in listed if i["id"] != str(minted.invite_id))

    assert call(nip86_client, relay, actor, "revokeinvite", str(minted.invite_id)) is True
    assert [str(r["invite_id"]) for r in invites(relay)] == [claim_id]
    assert claim_over_websocket(relay, Person.new(), minted.code) == (
        False,
        "restricted: that invite code is invalid.",
    )
    # A claim's invite too, by its id (the way to one sealed before a key rotation).
    assert call(nip86_client, relay, actor, "revokeinvite", claim_id.upper()) is True
    assert invites(relay) == [] and call(nip86_client, relay, actor, "listclaims") == []
    assert claim_over_websocket(relay, Person.new(), "shared-link-9")[0] is False
    # No such invite (any more, or ever): false, nothing changes.
    unchanged = everything(relay)
    for invite_id in (str(minted.invite_id), "00000000-0000-4000-8000-000000000000"):
        assert call(nip86_client, relay, actor, "revokeinvite", invite_id) is False
    assert everything(relay) == unchanged
    live(relay, initial(relay))


def test_revokeinvite_refusals(relay, nip86_client):
    invite = relay.mem.create_relay_invite(relay.community_id, relay.owner.pubkey)
    unchanged = everything(relay)
    bad = {
        "no params": [],
        "not a uuid": ["not-a-uuid"],
        "a number": [5],
        "null": [None],
        "two": [str(invite.invite_id), "x"],
    }
    answers = send(
        nip86_client, *(rpc(relay, relay.owner, "revokeinvite", *p) for p in bad.values())
    )
    for answer in answers:
        assert "invite id" in refused(answer, 400)
    # Not the owner or an admin: 403, whoever they are.
    answers = send(
        nip86_client,
        rpc(relay, relay.member, "revokeinvite", str(invite.invite_id)),
        rpc(relay, None, "revokeinvite", str(invite.invite_id)),
        rpc(relay, relay.member, "setmemberrole", relay.member.pubkey, "admin"),
        rpc(relay, None, "setmemberrole", relay.member.pubkey, "admin"),
    )
    for answer in answers:
        assert refused(answer, 403).startswith("restricted:")
    assert everything(relay) == unchanged
    assert claim_over_websocket(relay, Person.new(), invite.code)[0] is True


# ---------------------------------------------------------------------------- invitations


def tree_of(relay: Any) -> list[dict[str, Any]]:
    """listinvitetree as the database has it: every member, who brought them in, and how many
    more each may bring in."""
    return [
        {
            "pubkey": m.pubkey,
            "role": m.role,
            "added_by": m.added_by,
            "invites_left": relay.mem.invites_left(relay.community_id, m.pubkey),
        }
        for m in relay.mem.relay_members(relay.community_id)
    ]


def quotas(relay: Any) -> dict[str, int | None]:
    return relay.mem.invite_quotas(relay.community_id)


@BY_OWNER_ON_CLUSTER
def test_removebranch_removes_the_member_and_everyone_they_brought_in(relay, nip86_client, who):
    actor, cid, member = signer(relay, who), relay.community_id, relay.member.pubkey
    # member brought in friend, friend brought in cousin; the owner brought in bystander.
    friend, cousin, bystander = Person.new(), Person.new(), Person.new()
    relay.mem.add_relay_member(cid, friend.pubkey, "member", member)
    relay.mem.add_relay_member(cid, cousin.pubkey, "member", friend.pubkey)
    relay.mem.add_relay_member(cid, bystander.pubkey, "member", relay.owner.pubkey)
    owners_invite = relay.mem.create_relay_invite(cid, relay.owner.pubkey)
    before = relay.mem.member_list(cid)

    result = call(nip86_client, relay, actor, "removebranch", member, "a spam ring")
    assert result == {"removed": 3}
    expected = initial(relay) | {bystander.pubkey: "member"}
    del expected[member]
    live(relay, expected)
    # One transaction: one new list, and an 8001 for each of the three, all of its moment.
    after = relay.mem.member_list(cid)
    assert after["created_at"] > before["created_at"]
    since = [e for e in relay.mem.membership_events(cid) if e["created_at"] > before["created_at"]]
    assert {e["created_at"] for e in since} == {after["created_at"]}
    assert sorted((e["kind"], e["tags"][1][1]) for e in since) == sorted(
        (8001, pk) for pk in (member, friend.pubkey, cousin.pubkey)
    )
    # An invite made by someone outside the branch still works.
    assert claim_over_websocket(relay, Person.new(), owners_invite.code)[0] is True

    # Not a member (any more, or never): {"removed": 0}, nothing changes.
    unchanged = everything(relay)
    for pubkey in (member, Person.new().pubkey):
        assert call(nip86_client, relay, actor, "removebranch", pubkey) == {"removed": 0}
    assert everything(relay) == unchanged
    # The owner: 400, nothing changes.
    (answer,) = send(nip86_client, rpc(relay, actor, "removebranch", relay.owner.pubkey, "coup"))
    assert "owner cannot be removed" in refused(answer, 400)
    assert everything(relay) == unchanged


def test_removebranch_of_an_admin_takes_those_they_brought_in(relay, nip86_client):
    cid, admin = relay.community_id, relay.admin.pubkey
    invited = Person.new()
    relay.mem.add_relay_member(cid, invited.pubkey, "member", admin)
    assert call(nip86_client, relay, relay.owner, "removebranch", admin) == {"removed": 2}
    live(relay, {relay.owner.pubkey: "owner", relay.member.pubkey: "member"})


@BY_OWNER_ON_CLUSTER
def test_setinvitequota_and_listinvitequotas(relay, nip86_client, who):
    actor = signer(relay, who)
    assert call(nip86_client, relay, actor, "listinvitequotas") == {"admin": None, "member": 0}
    unchanged = everything(relay)
    assert call(nip86_client, relay, actor, "setinvitequota", "member", 2) == "updated"
    assert quotas(relay) == {"admin": None, "member": 2}
    assert call(nip86_client, relay, actor, "setinvitequota", "member", 2) == "unchanged"
    assert call(nip86_client, relay, actor, "setinvitequota", "admin", 5) == "updated"
    assert call(nip86_client, relay, actor, "listinvitequotas") == {"admin": 5, "member": 2}
    assert call(nip86_client, relay, actor, "setinvitequota", "admin", None) == "updated"
    assert call(nip86_client, relay, actor, "setinvitequota", "member", 0) == "updated"
    assert quotas(relay) == {"admin": None, "member": 0}
    # Not a membership write: no list, no event.
    assert everything(relay) == unchanged


@BY_OWNER_ON_CLUSTER
def test_listinvitetree_answers_every_member_with_who_brought_them_in(relay, nip86_client, who):
    cid, member = relay.community_id, relay.member.pubkey
    relay.mem.set_invite_quota(cid, "member", 3)
    relay.mem.set_invite_quota(cid, "admin", 4)
    newcomer = Person.new()
    relay.mem.add_relay_member(cid, newcomer.pubkey, "member", member)
    relay.mem.create_relay_invite(cid, member)  # one use on a live invite: it counts too
    tree = call(nip86_client, relay, signer(relay, who), "listinvitetree")
    assert tree == tree_of(relay)
    left = {row["pubkey"]: row["invites_left"] for row in tree}
    assert left == {
        relay.owner.pubkey: None,  # the owner has no limit
        relay.admin.pubkey: 4,
        member: 1,  # 3, less the newcomer, less the live invite's use
        newcomer.pubkey: 3,  # a member like any other
    }
    assert {row["pubkey"]: row["added_by"] for row in tree}[newcomer.pubkey] == member
    assert [row["pubkey"] for row in tree] == sorted(left)


def test_createclaim_beyond_the_callers_invites_is_403(relay, nip86_client):
    cid = relay.community_id
    relay.mem.set_invite_quota(cid, "admin", 0)
    unchanged = everything(relay)
    (answer,) = send(nip86_client, rpc(relay, relay.admin, "createclaim", "over-quota-1"))
    assert refused(answer, 403) == "restricted: you have no invites left."
    assert everything(relay) == unchanged
    # Two left: the relay's default uses (100) are more; two are not.
    relay.mem.set_invite_quota(cid, "admin", 2)
    (answer,) = send(nip86_client, rpc(relay, relay.admin, "createclaim", "over-quota-2"))
    assert refused(answer, 403) == "restricted: you have 2 invites left; ask for at most 2 uses."
    assert everything(relay) == unchanged
    assert call(nip86_client, relay, relay.admin, "createclaim", "within-quota", 2) is True
    (answer,) = send(nip86_client, rpc(relay, relay.admin, "createclaim", "over-quota-3", 1))
    assert refused(answer, 403) == "restricted: you have no invites left."
    assert [(i["created_by"], i["max_uses"]) for i in invites(relay)] == [(relay.admin.pubkey, 2)]
    # The owner has no quota.
    assert call(nip86_client, relay, relay.owner, "createclaim", "the-owners-own", 50) is True


def test_invitation_methods_refusals_are_400_and_403(relay, nip86_client):
    unchanged = (everything(relay), quotas(relay))
    bad = {
        "setinvitequota owner": ("setinvitequota", ["owner", 1]),
        "setinvitequota a defined role": ("setinvitequota", ["moderator", 1]),
        "setinvitequota no quota": ("setinvitequota", ["member"]),
        "setinvitequota no params": ("setinvitequota", []),
        "setinvitequota three params": ("setinvitequota", ["member", 1, 2]),
        "setinvitequota negative": ("setinvitequota", ["member", -1]),
        "setinvitequota 1.5": ("setinvitequota", ["member", 1.5]),
        "setinvitequota text": ("setinvitequota", ["member", "3"]),
        "setinvitequota true": ("setinvitequota", ["member", True]),
        "setinvitequota over int4": ("setinvitequota", ["member", 2**31]),
        "setinvitequota role a list": ("setinvitequota", [["member"], 1]),
        "removebranch no params": ("removebranch", []),
        "removebranch not hex": ("removebranch", ["not-a-pubkey"]),
        "removebranch reason a number": ("removebranch", [relay.member.pubkey, 5]),
    }
    answers = send(nip86_client, *(rpc(relay, relay.owner, m, *p) for m, p in bad.values()))
    expect(answers, list(bad), 400)
    assert (everything(relay), quotas(relay)) == unchanged
    # Not the owner or an admin: 403, a member or not.
    for actor in (relay.member, None):
        answers = send(
            nip86_client,
            rpc(relay, actor, "removebranch", relay.admin.pubkey),
            rpc(relay, actor, "setinvitequota", "member", 10),
            rpc(relay, actor, "listinvitequotas"),
            rpc(relay, actor, "listinvitetree"),
        )
        for answer in answers:
            assert refused(answer, 403).startswith("restricted:")
    assert (everything(relay), quotas(relay)) == unchanged
    live(relay, initial(relay))
