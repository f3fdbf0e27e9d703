"""NIP-86 management (buzz_signer/relay/management.py) without HTTP, on a real database: what
a NIP-98 Authorization header must prove, and each method's effect on the community.

The same endpoint over HTTP, with headers built by nostr-tools' nip98 module, is
test_relay_nip86.py.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from typing import Any

import pytest

pytest.register_assert_rewrite("fixtures_membership", "relay_fixtures")
from fixtures_membership import members_of, new_host, new_pubkey
from relay_client import backend_on, signed
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.relay.management import Management, Refused, ReplayGuard, authorize
from buzz_signer.relay.protocol import Community

pytest_plugins = ("fixtures_membership",)

HOST = "relay.example.org:7447"


def header(
    secret: str,
    body: bytes,
    url: str = f"http://{HOST}",
    method: str = "POST",
    kind: int = 27235,
    created_at: int | None = None,
) -> str:
    tags = [["u", url], ["method", method], ["payload", hashlib.sha256(body).hexdigest()]]
    event = signed(secret, kind, tags, created_at=created_at)
    return "Nostr " + base64.b64encode(json.dumps(event).encode()).decode()


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
    hosts = {"relay.example.org:7447", "other.example"}
    assert authorize(header(who.secret, body, url), body, hosts, ReplayGuard(), time.time()) == (
        who.pubkey
    )


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
    status, message = refusal(lambda: authorize(spoilt, body, {HOST}, ReplayGuard(), time.time()))
    assert status == 401
    assert message.split(":")[0] in ("auth-required", "invalid")


def test_a_nip98_event_is_accepted_once() -> None:
    who, body = Person.new(), b"{}"
    replay = ReplayGuard()
    once = header(who.secret, body)
    assert authorize(once, body, {HOST}, replay, time.time()) == who.pubkey
    assert refusal(lambda: authorize(once, body, {HOST}, replay, time.time()))[0] == 401
    # The same request signed anew (another created_at, so another id) is accepted.
    again = header(who.secret, body, created_at=int(time.time()) - 1)
    assert authorize(again, body, {HOST}, replay, time.time()) == who.pubkey


class World:
    def __init__(self, mem: Membership) -> None:
        self.owner, self.admin, self.member = Person.new(), Person.new(), Person.new()
        self.host = new_host()
        self.cid = mem.create_community(self.host, self.owner.pubkey).details["community_id"]
        mem.add_relay_member(self.cid, self.admin.pubkey, "admin")
        mem.add_relay_member(self.cid, self.member.pubkey)


def call(
    db_url: str, key: RelayKey, world: World, who: Person, method: str, params: list[Any]
) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"method": method, "params": params}).encode()

    async def main() -> tuple[int, dict[str, Any]]:
        async with backend_on(db_url, key) as backend:
            management = Management(backend, ReplayGuard())
            community = Community(world.cid, world.host)
            auth = header(who.secret, body, f"https://{world.host}")
            return await management.handle(community, auth, body, {world.host})

    return asyncio.run(main())


def test_methods_change_the_community_through_the_sql_api(db_url, key, mem, reader) -> None:
    world, newcomer = World(mem), new_pubkey()
    assert call(db_url, key, world, world.owner, "supportedmethods", [])[1]["result"][0] == (
        "supportedmethods"
    )
    assert call(db_url, key, world, world.admin, "allowpubkey", [newcomer.upper(), "friend"]) == (
        200,
        {"result": True},
    )
    assert members_of(reader, world.cid)[newcomer] == "member"
    assert reader.member_list_drift(world.cid) == []
    listed = call(db_url, key, world, world.owner, "listallowedpubkeys", [])[1]["result"]
    assert {m["pubkey"]: m["reason"] for m in listed} == members_of(reader, world.cid)
    assert call(db_url, key, world, world.owner, "disallowpubkey", [newcomer]) == (
        200,
        {"result": True},
    )
    assert newcomer not in members_of(reader, world.cid)
    status, answer = call(db_url, key, world, world.admin, "disallowpubkey", [world.owner.pubkey])
    assert status == 400 and "owner" in answer["error"]

    status, answer = call(db_url, key, world, world.admin, "createclaim", [3, 3600])
    claim = answer["result"]
    assert status == 200 and abs(claim["expires_at"] - (time.time() + 3600)) < 60
    assert mem.claim_relay_invite(world.cid, claim["claim"], new_pubkey()).outcome == "joined"
    claims = call(db_url, key, world, world.owner, "listclaims", [])[1]["result"]
    assert [(c["id"], c["created_by"], c["max_uses"]) for c in claims] == [
        (claim["id"], world.admin.pubkey, 3)
    ]
    assert claims[0]["use_count"] == 1
    assert call(db_url, key, world, world.owner, "deleteclaim", [claim["id"]])[1] == {
        "result": True
    }
    assert call(db_url, key, world, world.owner, "deleteclaim", [claim["id"]])[1] == {
        "result": False
    }
    assert call(db_url, key, world, world.owner, "listclaims", [])[1] == {"result": []}


@pytest.mark.parametrize(
    "method, params",
    [
        ("allowpubkey", ["not a pubkey"]),
        ("allowpubkey", []),
        ("allowpubkey", [new_pubkey(), 7]),
        ("createclaim", [0, 3600]),
        ("createclaim", [1, 59]),
        ("createclaim", [True, 3600]),
        ("createclaim", [1]),
        ("deleteclaim", ["nope"]),
        ("nosuchmethod", []),
    ],
)
def test_bad_requests_are_400_and_change_nothing(db_url, key, mem, reader, method, params):
    world = World(mem)
    before = members_of(reader, world.cid)
    status, answer = call(db_url, key, world, world.owner, method, params)
    assert status == 400 and set(answer) == {"error"}
    assert members_of(reader, world.cid) == before
    assert reader.relay_invites(world.cid) == []


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
            management = Management(backend, ReplayGuard())
            community = Community(world.cid, world.host)

            async def create(i: int, label: str) -> tuple[int, dict[str, Any]]:
                body = json.dumps({"method": "createrole", "params": ["vip", label, str(i)]})
                auth = header(world.owner.secret, body.encode(), f"https://{world.host}")
                return await management.handle(community, auth, body.encode(), {world.host})

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
