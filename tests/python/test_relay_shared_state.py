"""What several relay processes of one database share (SPEC section 9): the NIP-98 events
accepted and the rates (invites minted, failed claims), kept in PostgreSQL.

- In the database: sessions racing for a window's last hit, or for the same authorization,
  queue on its row; exactly the limit is counted, the authorization accepted once, and a
  rolled back hit leaves its place to the waiter.
- Over the wire: two buzz-relay processes on one database. An authorization accepted by one
  is refused by the other; invites and failed claims are counted across both; a list written
  through SQL reaches the subscribers of both.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import urllib.error
import urllib.request
from typing import Any, NamedTuple

import aiohttp
import psycopg
import pytest
from fixtures_membership import members_of, new_host, new_pubkey
from relay_client import auth_event, signed
from relay_fixtures import Person, RelayProcess
from sessions import Background, backend_pid, wait_until_blocked

from buzz_signer.membership import Membership

pytest_plugins = ("fixtures_membership", "relay_fixtures")

TAKE = "SELECT buzz.take_rate('invite', ARRAY['c/alice'], 1, 3600)"
ACCEPT = "SELECT buzz.accept_auth_event(repeat('a', 64), now() + interval '61 s')"


@pytest.mark.parametrize("statement", [TAKE, ACCEPT], ids=["take_rate", "accept_auth_event"])
@pytest.mark.parametrize("holder_ends", ["commit", "rollback"])
def test_racing_for_the_last_place_queues_on_its_row(db_url, su, statement, holder_ends):
    """The holder counts the last hit (accepts the authorization) and has not committed; the
    other session waits for it. At the holder's commit the waiter is refused; at its rollback
    the waiter gets the place."""
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as waiter:
        assert holder.execute(statement).fetchone()[0] is True
        call = Background(lambda: waiter.execute(statement).fetchone()[0], "waiter")
        wait_until_blocked(su, backend_pid(waiter), backend_pid(holder), call=call)
        getattr(holder, holder_ends)()
        assert call.result() is (holder_ends == "rollback")
    table = "rate_windows" if statement == TAKE else "accepted_auth_events"
    assert su.execute(f"SELECT count(*) FROM buzz_private.{table}").fetchone()[0] == 1


# ------------------------------------------------------------------ two processes


class Socket:
    """One client connection, its answers parsed."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, challenge: str) -> None:
        self.ws, self.challenge = ws, challenge

    @classmethod
    async def open(cls, http: aiohttp.ClientSession, relay: RelayProcess) -> Socket:
        ws = await http.ws_connect(relay.url)
        verb, challenge = json.loads((await ws.receive(timeout=10)).data)
        assert verb == "AUTH"
        return cls(ws, challenge)

    async def send(self, *message: Any) -> None:
        await self.ws.send_str(json.dumps(list(message)))

    async def recv(self) -> list[Any]:
        msg = await self.ws.receive(timeout=10)
        assert msg.type == aiohttp.WSMsgType.TEXT, msg
        return json.loads(msg.data)

    async def ok(self, event: dict[str, Any]) -> tuple[bool, str]:
        await self.send("EVENT", event)
        while (answer := await self.recv())[0] != "OK":
            pass
        return answer[2], answer[3]

    async def auth(self, person: Person, public_url: str) -> None:
        assert await self.ok_auth(auth_event(person.secret, self.challenge, public_url))

    async def ok_auth(self, event: dict[str, Any]) -> bool:
        await self.send("AUTH", event)
        while (answer := await self.recv())[0] != "OK":
            pass
        return answer[2]


def _post(relay: RelayProcess, authorization: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{relay.port}/",
        data=body,
        method="POST",
        headers={"Content-Type": "application/nostr+json+rpc", "Authorization": authorization},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


class Two(NamedTuple):
    """One community served by two relay processes, a and b, on one database."""

    cid: Any
    host: str
    owner: Person
    a: RelayProcess
    b: RelayProcess


@pytest.fixture
def two(start_relay, mem: Membership) -> Two:
    owner, host = Person.new(), new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    # Two processes behind one public URL, as behind a proxy: AUTH and NIP-98 name it.
    flags = ("--community", str(cid), "--invites-per-hour", "2", "--max-failed-claims", "2")
    flags += ("--public-url", f"wss://{host}")
    return Two(cid, host, owner, start_relay(*flags), start_relay(*flags))


def test_an_authorization_accepted_by_one_process_is_refused_by_the_other(two: Two, reader):
    cid, host, owner, a, b = two
    newcomer = new_pubkey()
    body = json.dumps({"method": "allowpubkey", "params": [newcomer, "friend"]}).encode()
    tags = [
        ["u", f"https://{host}"],
        ["method", "POST"],
        ["payload", hashlib.sha256(body).hexdigest()],
    ]
    event = signed(owner.secret, 27235, tags)
    authorization = "Nostr " + base64.b64encode(json.dumps(event).encode()).decode()

    assert _post(a, authorization, body) == (200, {"result": True})
    status, answer = _post(b, authorization, body)
    assert (status, answer) == (
        401,
        {"error": "invalid: that Authorization event was used already"},
    )
    assert _post(a, authorization, body)[0] == 401
    assert members_of(reader, cid)[newcomer] == "member"


def test_invites_and_failed_claims_are_counted_across_both_processes(two: Two, mem, reader):
    cid, host, owner, a, b = two
    right = mem.create_relay_invite(cid, owner.pubkey, max_uses=None).code
    guesser = Person.new()

    async def main() -> tuple[list[str], list[tuple[bool, str]]]:
        async with aiohttp.ClientSession() as http:
            on_a, on_b = await Socket.open(http, a), await Socket.open(http, b)
            await on_a.auth(owner, f"wss://{host}")
            await on_b.auth(owner, f"wss://{host}/")
            minted = []
            for n, sock in enumerate((on_a, on_a, on_b)):  # 2 per hour, across both
                await sock.send("REQ", f"inv{n}", {"kinds": [28935]})
                minted.append((await sock.recv())[0])
                while minted[-1] == "EVENT" and (await sock.recv())[0] != "EOSE":
                    pass
            claims = [
                await on_a.ok(signed(guesser.secret, 28934, [["claim", "ab" * 16]])),
                await on_a.ok(signed(guesser.secret, 28934, [["claim", "cd" * 16]])),
                # The guesser's third claim, on the other process, is refused unread.
                await on_b.ok(signed(guesser.secret, 28934, [["claim", right]])),
            ]
            return minted, claims

    minted, claims = asyncio.run(main())
    assert minted == ["EVENT", "EVENT", "CLOSED"]
    assert claims == [(False, "restricted: that invite code is invalid.")] * 2 + [
        (False, "rate-limited: too many failed claims; try again later.")
    ]
    assert guesser.pubkey not in members_of(reader, cid)
    minted_by_owner = [i for i in mem.relay_invites(cid) if i.max_uses == 1]
    assert len(minted_by_owner) == 2


def test_a_list_written_through_sql_reaches_the_subscribers_of_both(two: Two, mem):
    cid, a, b = two.cid, two.a, two.b

    async def main() -> list[dict[str, Any]]:
        async with aiohttp.ClientSession() as http:
            socks = [await Socket.open(http, a), await Socket.open(http, b)]
            for sock in socks:
                await sock.send("REQ", "list", {"kinds": [13534]})
                while (await sock.recv())[0] != "EOSE":
                    pass
            write = await asyncio.to_thread(mem.add_relay_member, cid, new_pubkey())
            assert write.outcome == "added"
            return [(await sock.recv())[2] for sock in socks]

    pushed = asyncio.run(main())
    assert [ev["kind"] for ev in pushed] == [13534, 13534]
    assert pushed[0]["id"] == pushed[1]["id"] == mem.member_list(cid)["id"]
