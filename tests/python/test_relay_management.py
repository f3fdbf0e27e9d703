"""NIP-86 management (buzz_signer/relay/management.py) without HTTP, on a real database: what
a NIP-98 Authorization header must prove, and each method's effect on the community.

The same endpoint over HTTP, with headers built by nostr-tools' nip98 module, is
test_relay_nip86.py.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
import uuid
from typing import Any

import pytest
from fixtures_membership import members_of, new_host, new_pubkey
from relay_client import backend_on, nip98_header
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub
from buzz_signer.relay.management import Management
from buzz_signer.relay.nip98 import Refused, authenticated, fresh_until
from buzz_signer.relay.protocol import Community
from buzz_signer.relay.urls import RelayNames

pytest_plugins = ("fixtures_membership",)

HOST = "relay.example.org:7447"
THIS_RELAY = RelayNames(hosts=frozenset({HOST}))


def header(secret: str, body: bytes, url: str = f"http://{HOST}", **kw: Any) -> str:
    return nip98_header(secret, body, url, **kw)


def refusal(call: Any) -> tuple[int, str]:
    with pytest.raises(Refused) as caught:
        call()
    return caught.value.status, str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        f"http://{HOST}",
        f"http://{HOST}/",
        f"wss://{HOST}",
        f"ws://{HOST}/",
        "https://RELAY.example.org:7447",
        "http://other.example:80",  # the Host the client used, its default port dropped
    ],
)
def test_a_nip98_event_for_this_relay_proves_its_author(url: str) -> None:
    who, body = Person.new(), b'{"method":"supportedmethods","params":[]}'
    names = RelayNames(hosts=frozenset({"relay.example.org:7447", "other.example"}))
    event = authenticated(header(who.secret, body, url), body, names, time.time())
    assert event["pubkey"] == who.pubkey


@pytest.mark.parametrize(
    "case",
    [
        "none",
        "scheme",
        "base64",
        "json",
        "sig",
        "kind",
        "u",
        "u_path",
        "ftp",
        "method",
        "payload",
        "old",
        "future",
    ],
)
def test_what_a_nip98_header_must_prove(case: str) -> None:
    who, body = Person.new(), b'{"method":"supportedmethods","params":[]}'
    now = int(time.time())
    good = header(who.secret, body)
    spoilt = {
        "none": None,
        "scheme": good.replace("Nostr ", "Bearer "),
        "base64": "Nostr ###",
        "json": "Nostr " + base64.b64encode(b"[1,2").decode(),
        "sig": "Nostr "
        + base64.b64encode(
            json.dumps(json.loads(base64.b64decode(good[6:])) | {"sig": "00" * 64}).encode()
        ).decode(),
        "kind": header(who.secret, body, kind=27236),
        "u": header(who.secret, body, url="http://elsewhere.example"),
        "u_path": header(who.secret, body, url=f"http://{HOST}/admin"),
        "ftp": header(who.secret, body, url=f"ftp://{HOST}"),
        "method": header(who.secret, body, method="GET"),
        "payload": header(who.secret, b"another body"),
        "old": header(who.secret, body, created_at=now - 61),
        "future": header(who.secret, body, created_at=now + 61),
    }[case]
    status, message = refusal(lambda: authenticated(spoilt, body, THIS_RELAY, time.time()))
    assert status == 401
    assert message.split(":")[0] in ("auth-required", "invalid")


def test_a_nip98_event_is_accepted_once_in_the_database(db_url: str, key: RelayKey) -> None:
    """buzz.accept_auth_event: true the first time, false for the same id again, whichever
    connection (relay process) asks; an expired one is deleted by later calls."""
    who, body = Person.new(), b"{}"
    once = authenticated(header(who.secret, body), body, THIS_RELAY, time.time())
    again = authenticated(
        header(who.secret, body, created_at=int(time.time()) - 1), body, THIS_RELAY, time.time()
    )

    async def main() -> list[bool]:
        async with backend_on(db_url, key) as one, backend_on(db_url, key) as other:
            return [
                await one.accept_auth_event(once["id"], fresh_until(once)),
                await other.accept_auth_event(once["id"], fresh_until(once)),
                await one.accept_auth_event(once["id"], fresh_until(once)),
                # The same request signed anew (another created_at, so another id).
                await other.accept_auth_event(again["id"], fresh_until(again)),
            ]

    assert asyncio.run(main()) == [True, False, False, True]


class World:
    def __init__(self, mem: Membership) -> None:
        self.owner, self.admin, self.member = Person.new(), Person.new(), Person.new()
        self.host = new_host()
        self.cid = mem.create_community(self.host, self.owner.pubkey).details["community_id"]
        mem.add_relay_member(self.cid, self.admin.pubkey, "admin")
        mem.add_relay_member(self.cid, self.member.pubkey)


def request(
    world: World, who: Person, method: str, params: list[Any], **kw: Any
) -> tuple[str, bytes]:
    """(Authorization header, body) of one well-made request to the world's community."""
    body = json.dumps({"method": method, "params": params}).encode()
    return header(who.secret, body, f"https://{world.host}", **kw), body


def answers(
    db_url: str,
    key: RelayKey,
    world: World,
    *requests: tuple[str, bytes],
    **options: Any,
) -> list[tuple[int, dict[str, Any]]]:
    """The answers of one Management (the relay key `key`) to the requests,
    in order."""

    async def main() -> list[tuple[int, dict[str, Any]]]:
        async with backend_on(db_url, key) as backend:
            management = Management(backend, key, **options)
            community = Community(world.cid, world.host)
            return [
                await management.handle(community, auth, body, RelayNames(hosts=frozenset({world.host})))
                for auth, body in requests
            ]

    return asyncio.run(main())


# Seconds back for each call's created_at: the same request made twice within a second would
# otherwise be the same event, which the relay accepts once (a replay). One second younger at
# each call, so that created_at grows at every call: with ages one second older at each call,
# a call made in the next second had the created_at of the one before (the same event).
_CALL_AGES = itertools.cycle(range(49, -1, -1))


def call(
    db_url: str, key: RelayKey, world: World, who: Person, method: str, params: list[Any]
) -> tuple[int, dict[str, Any]]:
    created_at = int(time.time()) - next(_CALL_AGES)
    (answer,) = answers(
        db_url, key, world, request(world, who, method, params, created_at=created_at)
    )
    return answer


def test_methods_change_the_community_through_the_sql_api(db_url, key, mem, reader) -> None:
    world, newcomer = World(mem), new_pubkey()
    offered = call(db_url, key, world, world.owner, "supportedmethods", [])[1]["result"]
    assert "allowpubkey" in offered and "createclaim" in offered
    assert "supportedmethods" not in offered  # NIP-86: "all the other supported methods"
    assert call(db_url, key, world, world.admin, "allowpubkey", [newcomer.upper(), "friend"]) == (
        200,
        {"result": True},
    )
    assert members_of(reader, world.cid)[newcomer] == "member"
    assert reader.member_list_drift(world.cid) == []
    listed = call(db_url, key, world, world.owner, "listallowedpubkeys", [])[1]["result"]
    assert {m["pubkey"]: m["reason"] for m in listed} == members_of(reader, world.cid)
    for method in ("unallowpubkey", "disallowpubkey"):
        assert call(db_url, key, world, world.owner, method, [newcomer]) == (200, {"result": True})
        assert newcomer not in members_of(reader, world.cid)
        status, answer = call(db_url, key, world, world.admin, method, [world.owner.pubkey])
        assert status == 400 and "owner" in answer["error"]
        mem.add_relay_member(world.cid, newcomer)

    assert call(db_url, key, world, world.admin, "createclaim", ["Shared-Link_42"])[1] == {
        "result": True
    }
    (invite,) = reader.relay_invites(world.cid)
    assert (invite.created_by, invite.max_uses, invite.use_count) == (world.admin.pubkey, 100, 0)
    assert abs(invite.expires_at.timestamp() - (time.time() + 30 * 24 * 3600)) < 60
    assert "Shared-Link_42" not in invite.sealed and key.unseal(invite.sealed) == "Shared-Link_42"
    claimer = new_pubkey()
    assert mem.claim_relay_invite(world.cid, "shared-link_42", claimer).outcome == "joined"
    assert [m.added_by for m in reader.relay_members(world.cid) if m.pubkey == claimer] == [
        world.admin.pubkey
    ]
    assert call(db_url, key, world, world.owner, "listclaims", [])[1] == {
        "result": ["Shared-Link_42"]
    }
    (listed,) = call(db_url, key, world, world.owner, "listinvites", [])[1]["result"]
    assert listed == {
        "id": str(invite.invite_id),
        "created_by": world.admin.pubkey,
        "created_at": int(invite.created_at.timestamp()),
        "expires_at": int(invite.expires_at.timestamp()),
        "use_count": 1,
        "max_uses": 100,
    }
    # Codes compare without regard to case, as when claiming.
    assert call(db_url, key, world, world.owner, "deleteclaim", ["SHARED-LINK_42"])[1] == {
        "result": True
    }
    assert call(db_url, key, world, world.owner, "deleteclaim", ["Shared-Link_42"])[1] == {
        "result": False
    }
    assert call(db_url, key, world, world.owner, "listclaims", [])[1] == {"result": []}
    assert reader.relay_invites(world.cid) == []


def test_bans_profile_and_join_policy_through_the_sql_api(db_url, key, mem, reader) -> None:
    world = World(mem)
    member = world.member.pubkey

    def ok(who: Person, method: str, params: list[Any]) -> Any:
        status, answer = call(db_url, key, world, who, method, params)
        assert status == 200, answer
        return answer["result"]

    assert ok(world.admin, "banpubkey", [member.upper(), "spam"]) is True
    assert member not in members_of(reader, world.cid)
    assert [(b.pubkey, b.reason, b.banned_by) for b in reader.banned_pubkeys(world.cid)] == [
        (member, "spam", world.admin.pubkey)
    ]
    assert reader.member_list_drift(world.cid) == []
    assert ok(world.owner, "banpubkey", [member, "again"]) is True  # already banned: unchanged
    assert ok(world.owner, "listbannedpubkeys", []) == [{"pubkey": member, "reason": "spam"}]
    status, answer = call(db_url, key, world, world.admin, "banpubkey", [world.owner.pubkey])
    assert status == 400 and "owner cannot be banned" in answer["error"]
    assert world.owner.pubkey not in {b.pubkey for b in reader.banned_pubkeys(world.cid)}
    assert ok(world.owner, "unbanpubkey", [member, "forgiven"]) is True
    assert reader.banned_pubkeys(world.cid) == []
    assert member not in members_of(reader, world.cid)  # an unban does not make a member
    assert ok(world.owner, "unbanpubkey", [member]) is True  # not banned: true all the same
    # allowpubkey lifts a ban and adds.
    assert ok(world.owner, "banpubkey", [member]) is True
    assert ok(world.owner, "listbannedpubkeys", []) == [{"pubkey": member, "reason": None}]
    assert ok(world.admin, "allowpubkey", [member]) is True
    assert members_of(reader, world.cid)[member] == "member"
    assert reader.banned_pubkeys(world.cid) == []

    assert ok(world.admin, "changerelayname", ["Night Owls"]) is True
    assert ok(world.admin, "changerelaydescription", ["Who stays up.\nAll of us."]) is True
    assert ok(world.owner, "changerelayicon", ["https://example.org/owl.png"]) is True
    assert ok(world.owner, "setjoinpolicy", ["request"]) is True
    assert reader.community_profile(world.cid) == (
        "Night Owls",
        "Who stays up.\nAll of us.",
        "https://example.org/owl.png",
        "request",
    )
    # "" or null clears a field.
    assert ok(world.owner, "changerelaydescription", [""]) is True
    assert ok(world.owner, "changerelayicon", [None]) is True
    assert reader.community_profile(world.cid) == ("Night Owls", None, None, "request")


def test_join_requests_are_the_events_needing_moderation(db_url, key, mem, reader) -> None:
    world = World(mem)
    mem.set_join_policy(world.cid, "request")
    asking = [Person.new() for _ in range(3)]
    ids = [f"{i:x}" * 64 for i in range(10, 13)]
    mem.request_membership(world.cid, asking[0].pubkey, ids[0], "I play the cello")
    mem.request_membership(world.cid, asking[1].pubkey, ids[1])
    mem.request_membership(world.cid, asking[2].pubkey, ids[2])

    def ok(who: Person, method: str, params: list[Any]) -> Any:
        status, answer = call(db_url, key, world, who, method, params)
        assert status == 200, answer
        return answer["result"]

    pending = ok(world.admin, "listeventsneedingmoderation", [])
    assert [p["id"] for p in pending] == ids  # oldest first
    assert pending[0]["reason"] == (
        f"join request from {encode_npub(asking[0].pubkey)}: I play the cello"
    )
    assert pending[1]["reason"] == f"join request from {encode_npub(asking[1].pubkey)}"

    assert ok(world.admin, "allowevent", [ids[0].upper(), "welcome"]) is True
    (row,) = [m for m in reader.relay_members(world.cid) if m.pubkey == asking[0].pubkey]
    assert (row.role, row.added_by) == ("member", world.admin.pubkey)
    assert reader.member_list_drift(world.cid) == []
    assert ok(world.owner, "banevent", [ids[1], "not now"]) is True
    assert asking[1].pubkey not in members_of(reader, world.cid)
    assert [r.request_id for r in reader.join_requests(world.cid)] == [ids[2]]
    # Neither a handled request nor any other id is pending: allowevent is 400, and nothing
    # changes; banevent bans such an event behind the gate (and still changes no member).
    before = (members_of(reader, world.cid), reader.join_requests(world.cid))
    for method, params in (("allowevent", [ids[0]]), ("allowevent", [ids[1]])):
        status, answer = call(db_url, key, world, world.owner, method, params)
        assert status == 400 and "not a pending join request" in answer["error"], answer
    assert ok(world.owner, "banevent", [ids[1]]) is True
    assert ok(world.owner, "banevent", ["ab" * 32, "an event of another kind"]) is True
    assert (members_of(reader, world.cid), reader.join_requests(world.cid)) == before
    assert ok(world.admin, "listbannedevents", []) == [
        {"id": "ab" * 32, "reason": "an event of another kind"},
        {"id": ids[1], "reason": None},
    ]


@pytest.mark.parametrize(
    "method, params",
    [
        ("allowpubkey", ["not a pubkey"]),
        ("allowpubkey", []),
        ("allowpubkey", [new_pubkey(), 7]),
        ("allowpubkey", [new_pubkey(), "why", "more"]),
        ("unallowpubkey", ["zz" * 32]),
        ("banpubkey", []),
        ("banpubkey", [new_pubkey(), ["a list"]]),
        ("banpubkey", [new_pubkey(), "r" * 1001]),
        ("unbanpubkey", ["a" * 63]),
        ("changerelayname", []),
        ("changerelayname", ["x" * 65]),
        ("changerelayname", ["a\nb"]),
        ("changerelayname", [5]),
        ("changerelayname", ["Owls", "more"]),
        ("changerelaydescription", ["d" * 2001]),
        ("changerelayicon", ["http://example.org/owl.png"]),
        ("changerelayicon", ["https://example.org/o wl.png"]),
        ("setjoinpolicy", ["closed"]),
        ("setjoinpolicy", []),
        ("setjoinpolicy", [None]),
        ("createclaim", []),
        ("createclaim", ["seven77"]),
        ("createclaim", ["x" * 129]),
        ("createclaim", ["has space"]),
        ("createclaim", ["dotted.code"]),
        ("createclaim", [12345678]),
        ("createclaim", [None]),
        ("createclaim", ["goodcode", 0]),
        ("createclaim", ["goodcode", 10001]),
        ("createclaim", ["goodcode", True]),
        ("createclaim", ["goodcode", "3"]),
        ("createclaim", ["goodcode", 1, 59]),
        ("createclaim", ["goodcode", 1, 2592001]),
        ("createclaim", ["goodcode", 1, 60, 1]),
        ("deleteclaim", []),
        ("deleteclaim", ["short"]),
        ("deleteclaim", [str(uuid.uuid4()), "more"]),
        ("allowevent", ["not an id"]),
        ("allowevent", []),
        ("banevent", ["ab" * 32, 5]),
        ("nosuchmethod", []),
    ],
)
def test_bad_requests_are_400_and_change_nothing(db_url, key, mem, reader, method, params):
    world = World(mem)
    before = (members_of(reader, world.cid), reader.community_profile(world.cid))
    status, answer = call(db_url, key, world, world.owner, method, params)
    assert status == 400 and set(answer) == {"error"}
    assert answer["error"].startswith(("invalid params:", "unsupported method:")), answer
    assert "p_" not in answer["error"]  # in the caller's words, not the SQL API's
    assert (members_of(reader, world.cid), reader.community_profile(world.cid)) == before
    assert reader.relay_invites(world.cid) == []
    assert reader.banned_pubkeys(world.cid) == []


def test_a_claim_is_never_echoed(db_url, key, mem) -> None:
    world = World(mem)
    assert call(db_url, key, world, world.owner, "createclaim", ["Secret_Code-77"])[0] == 200
    # Refused: its own again (case aside), and malformed ones; no answer repeats the code.
    for params in (["SECRET_CODE-77"], ["Secret_Code-77", 0], ["Secret Code-77"]):
        status, answer = call(db_url, key, world, world.owner, "createclaim", params)
        assert status == 400, answer
        assert "secret" not in answer["error"].lower() and "77" not in answer["error"], answer
    status, answer = call(db_url, key, world, world.owner, "createclaim", ["secret_code-77"])
    assert "already a live invite" in answer["error"]


def test_only_the_owner_and_admins_manage(db_url, key, mem, reader) -> None:
    world = World(mem)
    before = members_of(reader, world.cid)
    for who in (world.member, Person.new()):
        status, answer = call(db_url, key, world, who, "allowpubkey", [new_pubkey()])
        assert status == 403 and answer["error"].startswith("restricted:")
    assert members_of(reader, world.cid) == before


def test_role_methods_through_the_sql_api(db_url, key, mem, reader) -> None:
    world = World(mem)
    member = world.member.pubkey

    def ok(who: Person, method: str, params: list[Any]) -> Any:
        status, answer = call(db_url, key, world, who, method, params)
        assert status == 200, answer
        return answer["result"]

    assert ok(world.admin, "createrole", ["vip", "VIP", "Very important", 45, 3]) is True
    assert ok(world.owner, "editrole", ["vip", "V.I.P.", None, None, 4]) is True
    (vip,) = [ev for ev in reader.role_definitions(world.cid) if ev["tags"][1] == ["d", "vip"]]
    assert vip["tags"] == [["-"], ["d", "vip"], ["label", "V.I.P."], ["order", "4"]]
    assert ok(world.owner, "assignrole", [member, "vip"]) is True
    assert [m.roles for m in reader.relay_members(world.cid) if m.pubkey == member] == [["vip"]]
    assert ["member", member, "member", "vip"] in reader.member_list(world.cid)["tags"]
    assert ok(world.owner, "unassignrole", [member, "vip"]) is True
    assert ok(world.owner, "deleterole", ["vip"]) is True
    assert ok(world.owner, "deleterole", ["vip"]) is False
    assert [r["id"] for r in ok(world.owner, "listroles", [])] == ["admin", "member", "owner"]
    assert reader.member_list_drift(world.cid) == []


def test_concurrent_createroles_of_one_id_define_it_once(db_url, key, mem, reader) -> None:
    """createrole refuses an existing role in the transaction that would define it, so of
    several at once exactly one defines it, whatever their labels."""
    world = World(mem)
    labels = [f"Label {i}" for i in range(6)] + ["Same", "Same"]

    async def main() -> list[tuple[int, dict[str, Any]]]:
        async with backend_on(db_url, key) as backend:
            management = Management(backend, key)
            community = Community(world.cid, world.host)

            async def create(i: int, label: str) -> tuple[int, dict[str, Any]]:
                body = json.dumps({"method": "createrole", "params": ["vip", label, str(i)]})
                auth = header(world.owner.secret, body.encode(), f"https://{world.host}")
                return await management.handle(community, auth, body.encode(), RelayNames(hosts=frozenset({world.host})))

            return await asyncio.gather(*(create(i, label) for i, label in enumerate(labels)))

    answers = asyncio.run(main())
    winners = [i for i, (status, answer) in enumerate(answers) if status == 200]
    assert len(winners) == 1, answers
    assert all(
        status == 400 and "defined already" in answer["error"]
        for i, (status, answer) in enumerate(answers)
        if i not in winners
    ), answers
    (vip,) = [ev for ev in reader.role_definitions(world.cid) if ev["tags"][1] == ["d", "vip"]]
    (winner,) = winners
    assert vip["tags"][2:4] == [["label", labels[winner]], ["description", str(winner)]]


ALL_METHODS = {
    *("allowpubkey", "unallowpubkey", "disallowpubkey", "listallowedpubkeys"),
    *("banpubkey", "unbanpubkey", "listbannedpubkeys"),
    *("changerelayname", "changerelaydescription", "changerelayicon", "setjoinpolicy"),
    *("createclaim", "listclaims", "deleteclaim", "listinvites"),
    *("listeventsneedingmoderation", "allowevent", "banevent"),
    *("createrole", "editrole", "deleterole", "assignrole", "unassignrole", "listroles"),
    *("revokeinvite", "setmemberrole"),  # our extensions, for the community's page
    *("removebranch", "setinvitequota", "listinvitequotas", "listinvitetree"),  # and these
    # moderation behind the gate (clearkind our extension)
    *("unbanevent", "listbannedevents", "allowkind", "disallowkind", "clearkind"),
    *("listallowedkinds", "listdisallowedkinds", "blockip", "unblockip", "listblockedips"),
    *("assignmethod", "unassignmethod", "listmethodassignees"),
}


def test_supportedmethods_answers_what_this_caller_may_call(db_url, key, mem) -> None:
    world = World(mem)
    for who in (world.owner, world.admin):
        status, answer = call(db_url, key, world, who, "supportedmethods", [])
        assert status == 200 and set(answer["result"]) == ALL_METHODS, answer
        assert len(answer["result"]) == len(ALL_METHODS)
    # Anyone else, a member or not, may call none of them (yet): an empty list, not a 403.
    for who in (world.member, Person.new()):
        assert call(db_url, key, world, who, "supportedmethods", []) == (200, {"result": []})
        for method in sorted(ALL_METHODS):
            status, answer = call(db_url, key, world, who, method, [])
            assert status == 403 and answer["error"].startswith("restricted:"), (method, answer)


@pytest.mark.parametrize(
    "options", [{"claim_max_uses": 0}, {"claim_max_uses": 10_001}, {"claim_ttl_seconds": 59}]
)
def test_claim_defaults_out_of_the_databases_bounds_are_refused(options) -> None:
    with pytest.raises(ValueError):
        Management(None, RelayKey.generate(), **options)  # type: ignore[arg-type]


def test_a_read_accepts_its_nip98_event_again_a_change_only_once(db_url, key, mem, reader):
    world, newcomer, stranger = World(mem), new_pubkey(), Person.new()
    reads = [
        request(world, world.owner, "listallowedpubkeys", []),
        request(world, world.admin, "supportedmethods", []),
        request(world, stranger, "supportedmethods", []),
    ]
    write = request(world, world.owner, "allowpubkey", [newcomer])
    refused = request(world, world.member, "allowpubkey", [new_pubkey()])
    got = answers(db_url, key, world, *reads, *reads, write, write, refused, refused)
    assert got[:3] == got[3:6] and [status for status, _ in got[:6]] == [200] * 6
    assert got[2] == (200, {"result": []})
    assert got[6] == (200, {"result": True})
    assert got[7][0] == 401 and "used already" in got[7][1]["error"]
    assert got[8][0] == 403 and got[9][0] == 401
    assert members_of(reader, world.cid)[newcomer] == "member"
    # A read's event is no more than fresh: a minute old, it is refused, the first time too.
    stale = request(world, world.owner, "listclaims", [], created_at=int(time.time()) - 61)
    assert answers(db_url, key, world, stale)[0][0] == 401


def test_claims_sealed_by_a_rotated_key_still_claim_but_are_not_listed(
    db_url, key, mem, reader, caplog
) -> None:
    world = World(mem)
    old_code, new_code = "before-rotation-1", "after_rotation_2"
    assert call(db_url, key, world, world.owner, "createclaim", [old_code])[1] == {"result": True}
    new_key = RelayKey.generate()
    with Membership.connect(db_url, new_key) as rotated:
        while rotated.rotate_relay_key(new_key.pubkey).outcome:
            pass
        (listed, created, relisted, deleted) = answers(
            db_url,
            new_key,
            world,
            request(world, world.admin, "listclaims", []),
            request(world, world.admin, "createclaim", [new_code]),
            request(world, world.admin, "listclaims", [], created_at=int(time.time()) - 1),
            request(world, world.admin, "deleteclaim", [old_code]),
        )
        assert listed == (200, {"result": []})
        assert created == (200, {"result": True})
        assert relisted == (200, {"result": [new_code]})
        assert deleted == (200, {"result": False})  # it cannot be found by its code any more
        # The hash is what claims: the old code still lets someone in.
        newcomer = new_pubkey()
        assert rotated.claim_relay_invite(world.cid, old_code, newcomer).outcome == "joined"
    assert members_of(reader, world.cid)[newcomer] == "member"
    unopened = [r.getMessage() for r in caplog.records if "sealed to another" in r.getMessage()]
    assert unopened and all(": 1 live claim(s)" in m for m in unopened), unopened
    assert not any(old_code in r.getMessage() for r in caplog.records)
