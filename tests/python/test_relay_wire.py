"""buzz-relay as a process, over real websockets: routing by Host, NIP-11, /metrics, limits,
hostile input, races, a client dying mid-join, kill -9 of the relay, and live push that
survives the loss of its LISTEN connection.

The websocket client here is aiohttp's; interoperability with client libraries we did not
write is in test_relay_nostr_tools.py and test_relay_nostr_sdk.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import secrets
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import psycopg
import pytest
from fixtures_membership import members_of, new_host, new_pubkey, verify_both
from ports import free_port
from psycopg.conninfo import conninfo_to_dict
from relay_client import MALFORMED, auth_event, nip98_header, signed
from relay_fixtures import BUZZ_RELAY, Person, Relay, RelayProcess
from secret_watch import leaks_in
from sessions import ListLockHolder, list_lock_waiters
from wire_client import RECEIVED, Socket, connect

from buzz_signer.membership import Membership

pytest_plugins = ("fixtures_membership", "relay_fixtures")




@pytest.fixture(autouse=True)
def no_secret_in_any_answer() -> Iterator[None]:
    RECEIVED.clear()
    yield
    assert leaks_in("\n".join(RECEIVED)) == 0, "an answer holds the relay secret"






def live_id(mem: Membership, cid: Any) -> str:
    return mem.member_list(cid)["id"]


# ------------------------------------------------------------------ HTTP


def test_hosts_choose_the_community_and_unknown_hosts_are_404(start_relay, mem: Membership):
    owner = new_pubkey()
    hosts = [new_host(), new_host()]
    cids = [mem.create_community(h, owner).details["community_id"] for h in hosts]
    relay = start_relay()

    async def main() -> list[Any]:
        async with aiohttp.ClientSession() as http:
            lists = []
            for host in hosts:
                sock, _ = await connect(http, relay.url, host.upper())
                await sock.send("REQ", "l", {"kinds": [13534]})
                lists.append((await sock.until("EOSE"))[0][2])
            with pytest.raises(aiohttp.WSServerHandshakeError) as unknown:
                await connect(http, relay.url, "nowhere.example.org")
            return [lists, unknown.value.status]

    lists, status = asyncio.run(main())
    assert [ev["id"] for ev in lists] == [live_id(mem, c) for c in cids]
    assert status == 404
    assert relay.get("/", {"Host": "nowhere.example.org"})[0] == 404


def test_nip11_document_with_cors(relay: Relay):
    status, body, headers = relay.process.get("/", {"Accept": "application/nostr+json"})
    assert status == 200
    assert headers["Content-Type"].startswith("application/nostr+json")
    assert headers["Access-Control-Allow-Origin"] == "*"
    doc = json.loads(body)
    assert doc["self"] == doc["pubkey"] == relay.key.pubkey
    assert {1, 11, 42, 43, 70, 86} <= set(doc["supported_nips"])
    assert doc["limitation"]["auth_required"] is False
    # No profile yet: the host names it, and nothing unset is sent.
    assert doc["name"] == relay.host
    assert not {"description", "icon", "contact"} & set(doc)


def test_nip11_names_the_community_by_its_profile_and_contact(start_relay, mem: Membership):
    host = new_host()
    cid = mem.create_community(host, new_pubkey()).details["community_id"]
    mem.set_community_profile(cid, "name", "Tuesday Hackers")
    mem.set_community_profile(cid, "description", "We meet on Tuesdays.\nBring a laptop.")
    mem.set_community_profile(cid, "icon", "https://example.org/icon.png")
    relay = start_relay("--community", str(cid), "--contact", "mailto:ops@example.org")

    def document() -> dict[str, Any]:
        status, body, headers = relay.get("/", {"Accept": "application/nostr+json"})
        assert status == 200 and headers["Access-Control-Allow-Origin"] == "*"
        return json.loads(body)

    doc = document()
    assert doc["name"] == "Tuesday Hackers"
    assert doc["description"] == "We meet on Tuesdays.\nBring a laptop."
    assert doc["icon"] == "https://example.org/icon.png"
    assert doc["contact"] == "mailto:ops@example.org"
    assert doc["pubkey"] == doc["self"]
    # A change shows at the next request; a cleared field is left out.
    mem.set_community_profile(cid, "name", None)
    mem.set_community_profile(cid, "icon", None)
    doc = document()
    assert doc["name"] == host and "icon" not in doc
    assert doc["description"] == "We meet on Tuesdays.\nBring a laptop."


def test_a_contact_is_printable(start_relay):
    with pytest.raises(AssertionError, match=r"exited 2:[\s\S]*'--contact'"):
        start_relay("--contact", "mailto:a@example.org\x1b[31m")


def test_metrics_and_healthz(relay: Relay):
    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            await sock.send("REQ", "l", {"kinds": [13534]})
            await sock.until("EOSE")
            relay.mem.add_relay_member(relay.community_id, new_pubkey())
            assert (await sock.recv())[0] == "EVENT"
            status, text, _ = relay.process.get("/metrics")
            assert status == 200
            assert "buzz_relay_connections 1.0" in text
            assert "buzz_relay_subscriptions 1.0" in text
            assert 'buzz_relay_requests_total{kind="req",outcome="ok"} 1.0' in text
            assert "buzz_relay_events_pushed_total 1.0" in text
            assert "buzz_relay_listener_connected 1.0" in text

    asyncio.run(main())
    assert relay.process.get("/healthz")[:2] == (200, "ok\n")


def test_healthz_is_503_when_the_database_is_gone(relay: Relay, admin_url: str):
    with psycopg.connect(admin_url, autocommit=True) as admin:
        dbname = conninfo_to_dict(relay.db_url)["dbname"]
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
            " AND application_name LIKE 'buzz-relay%%'",
            (dbname,),
        )
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
        try:
            assert relay.process.get("/healthz")[0] == 503
        finally:
            admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
    deadline = time.monotonic() + 10
    while relay.process.get("/healthz")[0] != 200:
        assert time.monotonic() < deadline, "healthz did not recover"
        time.sleep(0.1)


# ------------------------------------------------------------------ hostile input


def test_hostile_messages_get_answers_and_the_connection_stays(relay: Relay):
    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, challenge = await connect(http, relay.url)
            await sock.ws.send_str("x" * (10 * 1024 * 1024))
            verb, reason = await sock.recv()
            assert verb == "NOTICE" and "too large" in reason
            for text in ["{", "null", '["EVENT", {"id": 1}]', '["REQ", {}]', '"REQ"']:
                await sock.ws.send_str(text)
                assert (await sock.recv())[0] == "NOTICE", text
            await sock.ws.send_bytes(b'["REQ","b",{"kinds":[13534]}]')
            assert (await sock.until("EOSE"))[-1] == ["EOSE", "b"]
            # 1,000 subscriptions: the first 50 are served, the rest refused.
            for i in range(1000):
                await sock.send("REQ", f"s{i}", {"kinds": [8001]})
            answers = [await sock.recv() for _ in range(1000)]
            eoses = [a for a in answers if a[0] == "EOSE"]
            closed = [a for a in answers if a[0] == "CLOSED"]
            assert len(eoses) == 50 - 1  # "b" is open too
            assert len(closed) == 951 and all(a[2].startswith("rate-limited:") for a in closed)
            # Forged relay kinds, a stale join, and the connection still answers.
            for kind in (13534, 8000, 8001):
                await sock.send("EVENT", signed(relay.owner.secret, kind, [["-"]]))
                _, _, accepted, reason = await sock.recv()
                assert not accepted and reason.startswith("blocked:")
            await sock.send("EVENT", signed(relay.owner.secret, 28934, [["claim", "00"]], created_at=5))
            assert (await sock.recv())[3].startswith("invalid:")
            await sock.send("AUTH", auth_event(relay.owner.secret, challenge, relay.url))
            assert (await sock.recv())[2] is True

    asyncio.run(main())
    assert relay.process.proc.poll() is None


def test_malformed_messages_get_a_notice_and_the_connection_stays(relay: Relay):
    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            for n, text in enumerate(MALFORMED):
                await sock.ws.send_str(text)
                verb, reason = await sock.recv()
                assert verb == "NOTICE" and reason.startswith("invalid:"), text
                await sock.send("REQ", f"after{n}", {"kinds": [13534]})
                assert (await sock.until("EOSE"))[-1] == ["EOSE", f"after{n}"], text

    asyncio.run(main())
    assert "Traceback" not in relay.process.log()


def test_auth_from_another_connection_or_for_another_relay_is_refused(relay: Relay):
    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            first, first_challenge = await connect(http, relay.url)
            second, _ = await connect(http, relay.url)
            replayed = auth_event(relay.admin.secret, first_challenge, relay.url)
            await second.send("AUTH", replayed)
            assert (await second.recv())[2:] == [
                False,
                "invalid: the challenge tag is not this connection's",
            ]
            await first.send("AUTH", auth_event(relay.admin.secret, first_challenge, "wss://evil.example.org"))
            assert (await first.recv())[2:] == [False, "invalid: the relay tag does not name this relay"]
            # The replayed event is valid where it belongs.
            await first.send("AUTH", replayed)
            assert (await first.recv())[2] is True
            # ...but the second connection is still anonymous: no invite for it.
            await second.send("REQ", "inv", {"kinds": [28935]})
            assert (await second.recv())[2].startswith("auth-required:")

    asyncio.run(main())


def _nip86(
    relay: RelayProcess,
    who: Person,
    method: str,
    params: list[Any],
    u: str | None = None,
    host: str | None = None,
) -> tuple[int, Any, str]:
    """(status, headers, body) of a NIP-86 call whose NIP-98 event names `u` (by default the
    relay's address), sent with Host `host`."""
    body = json.dumps({"method": method, "params": params}).encode()
    headers = {
        "Content-Type": "application/nostr+json+rpc",
        "Authorization": nip98_header(who.secret, body, u or relay.http),
    } | ({"Host": host} if host else {})
    request = urllib.request.Request(relay.http, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def _manage(relay: RelayProcess, who: Person, u: str, host: str | None = None) -> int:
    """The HTTP status of a NIP-86 supportedmethods whose NIP-98 event names `u`, sent with
    Host `host`."""
    return _nip86(relay, who, "supportedmethods", [], u, host)[0]


async def _auth_names(
    http: aiohttp.ClientSession, relay: RelayProcess, who: Person, named: str, host: str
) -> tuple[bool, str]:
    """(accepted, reason) of an AUTH whose relay tag names `named`, on a connection that sent
    Host `host`."""
    sock, challenge = await connect(http, relay.url, host)
    await sock.send("AUTH", auth_event(who.secret, challenge, named))
    _, _, accepted, reason = await sock.recv()
    await sock.ws.close()
    return accepted, reason


NOT_THIS_RELAY = "invalid: the relay tag does not name this relay"


def test_with_one_community_a_host_the_client_sends_is_not_this_relay(start_relay, mem):
    """A relay that forwards our AUTH challenge (and the Host) to a member's client must not
    become that member here: with --community and no --public-url, only the community's host."""
    owner = Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    relay = start_relay("--community", str(cid), public_url=False)

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            evil = "evil.example.org"
            assert await _auth_names(http, relay, owner, f"wss://{evil}", evil) == (
                False,
                NOT_THIS_RELAY,
            )
            assert await _auth_names(http, relay, owner, relay.url, relay.url[5:]) == (
                False,
                NOT_THIS_RELAY,
            )
            assert (await _auth_names(http, relay, owner, f"wss://{host}", evil))[0] is True

    asyncio.run(main())
    assert _manage(relay, owner, "https://evil.example.org", "evil.example.org") == 401
    assert _manage(relay, owner, relay.http) == 401
    assert _manage(relay, owner, f"https://{host}/", "evil.example.org") == 200


def test_with_a_public_url_only_that_url_is_this_relay(start_relay, mem):
    owner = Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    public = "wss://relay.example.org"
    relay = start_relay("--community", str(cid), "--public-url", public)

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            for named, sent in [
                (relay.url, relay.url[5:]),  # the address it listens on
                (f"wss://{host}", host),  # the community's host, which the URL does not name
                ("ws://relay.example.org", "relay.example.org"),  # not TLS
                ("wss://relay.example.org:8443", "relay.example.org:8443"),
            ]:
                assert await _auth_names(http, relay, owner, named, sent) == (
                    False,
                    NOT_THIS_RELAY,
                ), named
            assert (await _auth_names(http, relay, owner, public + "/", "x.example"))[0] is True

    asyncio.run(main())
    assert _manage(relay, owner, relay.http) == 401
    assert _manage(relay, owner, f"https://{host}", host) == 401
    assert _manage(relay, owner, "https://relay.example.org/") == 200
    # The invite link the page draws names the public URL, whatever Host the browser sent.
    status, page, _ = relay.get("/?claim=abc", {"Accept": "text/html"})
    assert status == 200
    assert "r=wss%3A%2F%2Frelay.example.org&amp;c=abc" in page


def test_by_host_with_a_public_url_the_host_chooses_the_community_only(start_relay, mem):
    owner = Person.new()
    port = free_port()
    host = f"127.0.0.1:{port}"
    mem.create_community(host, owner.pubkey)
    relay = start_relay("--public-url", "wss://relay.example.org", port=port)

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            assert await _auth_names(http, relay, owner, relay.url, host) == (False, NOT_THIS_RELAY)
            assert (await _auth_names(http, relay, owner, "wss://relay.example.org", host))[0]

    asyncio.run(main())


def test_public_urls_from_the_environment(start_relay, mem):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    env = {"BUZZ_RELAY_PUBLIC_URL": "wss://a.example.org, wss://b.example.org"}
    relay = start_relay("--community", str(cid), env=env, public_url=False)

    async def main() -> list[bool]:
        async with aiohttp.ClientSession() as http:
            return [
                (await _auth_names(http, relay, owner, named, "a.example.org"))[0]
                for named in ("wss://a.example.org", "wss://b.example.org/", relay.url)
            ]

    assert asyncio.run(main()) == [True, True, False]


def test_a_public_url_that_is_not_a_relays_is_a_usage_error(db_url: str, key) -> None:
    done = subprocess.run(
        [str(BUZZ_RELAY), "--public-url", "https://relay.example.org/admin"],
        env=os.environ | {"DATABASE_URL": db_url, "BUZZ_RELAY_SECRET_KEY": key.secret_hex()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a relay's URL" in done.stderr


def test_connections_per_address_are_bounded(start_relay, mem: Membership):
    cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    relay = start_relay("--community", str(cid), "--max-connections-per-ip", "3")

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            kept = [await connect(http, relay.url) for _ in range(3)]
            ws = await http.ws_connect(relay.url)
            msg = await ws.receive(timeout=5)
            assert json.loads(msg.data)[1].startswith("rate-limited:")
            assert (await ws.receive(timeout=5)).type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
            )
            await kept[0][0].ws.close()
            await asyncio.sleep(0.2)
            await connect(http, relay.url)  # a place was freed

    asyncio.run(main())


def _raw_websocket(port: int, host: str) -> socket.socket:
    """A websocket that never reads: the handshake by hand, a receive buffer kept small, and
    not one byte taken from it after the handshake's answer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(secrets.token_bytes(16)).decode()
    sock.sendall(
        (
            f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(1)  # one byte at a time: nothing past the headers is read
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return sock


def _client_frame(text: str) -> bytes:
    """A masked text frame, as a client sends it (RFC 6455)."""
    payload, mask = text.encode(), secrets.token_bytes(4)
    n = len(payload)
    head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0xFE]) + n.to_bytes(2, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def test_a_client_that_never_reads_is_closed_and_counted(start_relay, mem: Membership):
    """SPEC section 10: what a connection was sent and did not read is bounded in bytes. A
    client asks for a 180 kB list again and again and reads nothing: the relay holds at most
    the bound for it (the same list asked again replaces the copy still waiting), then closes
    it and counts it; another client is served meanwhile."""
    owner = Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    mem.add_relay_members(cid, [new_pubkey() for _ in range(2000)])
    relay = start_relay("--community", str(cid), "--max-queued-bytes", "1000000")
    sock = _raw_websocket(relay.port, host)
    try:
        for i in range(400):  # 72 MB of answers if each were kept
            try:
                sock.sendall(_client_frame(json.dumps(["REQ", f"s{i % 40}", {"kinds": [13534]}])))
            except (BrokenPipeError, ConnectionResetError):
                break  # closed by the relay
        closed = False
        deadline = time.monotonic() + 30
        while not closed and time.monotonic() < deadline:
            metrics = relay.get("/metrics")[1]
            closed = 'buzz_relay_requests_total{kind="connection",outcome="too_slow"} 1.0' in metrics
            time.sleep(0.05)
        assert closed, "the relay did not close the client that does not read"

        async def served() -> list[Any]:
            async with aiohttp.ClientSession() as http:
                other, _ = await connect(http, relay.url)
                await other.send("REQ", "l", {"kinds": [13534]})
                return await other.until("EOSE")

        assert [m[0] for m in asyncio.run(served())] == ["EVENT", "EOSE"]
        # The socket is closed from the relay's side: reading it to its end ends.
        sock.settimeout(10)
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass  # the socket itself was closed, the close frame not taken
    finally:
        sock.close()
    assert relay.proc.poll() is None
    assert "Traceback" not in relay.log()


def test_claim_defaults_reach_nip86_createclaim(start_relay, mem: Membership):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    relay = start_relay("--community", str(cid), "--claim-max-uses", "7", "--claim-ttl", "3600")
    status, _, answer = _nip86(relay, owner, "createclaim", ["tuesday-hackers"])
    assert (status, json.loads(answer)) == (200, {"result": True})
    [invite] = mem.relay_invites(cid)
    assert invite.max_uses == 7
    assert abs((invite.expires_at - invite.created_at).total_seconds() - 3600) < 5


# ------------------------------------------------------------------ joins without a claim, bans, leave


CLOSED = "restricted: this community requires a claim to join."
PENDING = "restricted: your request to join is pending approval."
BANNED = "blocked: you are banned from this community."
DUPLICATE = "duplicate: you are already a member of this relay."


async def _answer(sock: Socket, event: dict[str, Any]) -> tuple[bool, str]:
    await sock.send("EVENT", event)
    verb, event_id, accepted, reason = await sock.recv()
    assert (verb, event_id) == ("OK", event["id"])
    return accepted, reason


def test_claimless_joins_follow_the_join_policy(relay: Relay, reader: Membership):
    cid, mem = relay.community_id, relay.mem
    asker, newcomer, banned = Person.new(), Person.new(), Person.new()
    mem.ban_pubkey(cid, banned.pubkey, "spam")
    code = mem.create_relay_invite(cid, relay.admin.pubkey).code

    async def main() -> dict[str, Any]:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            got: dict[str, Any] = {}
            got["invite"] = await _answer(sock, signed(asker.secret, 28934, [], "hi"))
            got["invite_requests"] = reader.join_requests(cid)
            mem.set_join_policy(cid, "request")
            first = signed(asker.secret, 28934, [], "I run the Tuesday meetup")
            got["request"] = [
                await _answer(sock, first),
                await _answer(sock, signed(asker.secret, 28934, [["claim", ""]])),
            ]
            got["first_id"] = first["id"]
            got["pending"] = reader.join_requests(cid)
            got["after_request"] = members_of(reader, cid)
            mem.set_join_policy(cid, "open")
            got["open"] = [
                await _answer(sock, signed(newcomer.secret, 28934, [["claim", ""]])),
                await _answer(sock, signed(newcomer.secret, 28934, [])),
                await _answer(sock, signed(relay.member.secret, 28934, [])),
            ]
            got["banned"] = [
                await _answer(sock, signed(banned.secret, 28934, [["claim", code]])),
                await _answer(sock, signed(banned.secret, 28934, [])),
            ]
            return got

    got = asyncio.run(main())
    assert got["invite"] == (False, CLOSED) and got["invite_requests"] == []
    assert got["request"] == [(False, PENDING), (False, PENDING)]
    [pending] = got["pending"]
    assert (pending.request_id, pending.pubkey, pending.note) == (
        got["first_id"], asker.pubkey, "I run the Tuesday meetup"
    )
    assert asker.pubkey not in got["after_request"]
    assert got["open"] == [
        (True, f"info: welcome to {relay.host}!"), (True, DUPLICATE), (True, DUPLICATE)
    ]
    assert got["banned"] == [(False, BANNED), (False, BANNED)]
    members = members_of(reader, cid)
    assert members[newcomer.pubkey] == "member"
    assert asker.pubkey not in members and banned.pubkey not in members
    assert [r.pubkey for r in reader.join_requests(cid)] == [asker.pubkey]
    assert [i.use_count for i in mem.relay_invites(cid)] == [0]
    assert reader.member_list_drift(cid) == []
    metrics = relay.process.get("/metrics")[1]
    assert 'buzz_relay_writes_total{kind="request_membership",outcome="requested"} 1.0' in metrics
    assert 'buzz_relay_writes_total{kind="join",outcome="banned"} 1.0' in metrics


def test_a_leave_without_the_dash_needs_its_authed_author(relay: Relay, reader: Membership):
    member = relay.member

    async def main() -> list[Any]:
        async with aiohttp.ClientSession() as http:
            sock, challenge = await connect(http, relay.url)
            leave = signed(member.secret, 28936, [])
            answers = [await _answer(sock, leave)]
            await sock.send("AUTH", auth_event(relay.admin.secret, challenge, relay.url))
            assert (await sock.recv())[2] is True
            answers.append(await _answer(sock, signed(member.secret, 28936, [])))
            answers.append(members_of(reader, relay.community_id).get(member.pubkey))
            other, challenge = await connect(http, relay.url)
            await other.send("AUTH", auth_event(member.secret, challenge, relay.url))
            assert (await other.recv())[2] is True
            answers.append(await _answer(other, leave))
            return answers

    not_authed, as_admin, still, accepted = asyncio.run(main())
    assert not not_authed[0] and not_authed[1].startswith("auth-required:")
    assert not as_admin[0] and as_admin[1].startswith("auth-required:")
    assert still == "member"
    assert accepted == (True, "")
    assert member.pubkey not in members_of(reader, relay.community_id)
    assert reader.member_list_drift(relay.community_id) == []


def test_failed_claims_from_one_address_are_limited(start_relay, mem: Membership, reader):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    right = mem.create_relay_invite(cid, owner.pubkey, max_uses=None).code
    relay = start_relay("--community", str(cid), "--max-failed-claims", "3")
    late = Person.new()

    async def main() -> tuple[list[tuple[bool, str]], tuple[bool, str]]:
        async with aiohttp.ClientSession() as http:
            failed = []
            for _ in range(3):  # three people, three connections, one address
                sock, _ = await connect(http, relay.url)
                failed.append(await _answer(sock, signed(Person.new().secret, 28934, [["claim", "ab" * 16]])))
            sock, _ = await connect(http, relay.url)
            return failed, await _answer(sock, signed(late.secret, 28934, [["claim", right]]))

    failed, limited = asyncio.run(main())
    assert failed == [(False, "restricted: that invite code is invalid.")] * 3
    assert limited == (False, "rate-limited: too many failed claims; try again later.")
    assert set(members_of(reader, cid)) == {owner.pubkey}
    assert [i.use_count for i in mem.relay_invites(cid)] == [0]
    metrics = relay.get("/metrics")[1]
    assert 'buzz_relay_requests_total{kind="join",outcome="rate_limited"} 1.0' in metrics
    assert 'buzz_relay_writes_total{kind="join",outcome="invalid"} 3.0' in metrics


def test_joins_are_limited_per_address_and_per_pubkey_across_processes(
    start_relay, mem: Membership, reader
):
    """SPEC section 10: a flood of joins under the open policy from one address, spread over
    two relay processes, stops at --max-joins; one key joining again and again stops at
    --max-joins-per-pubkey; a refused join writes nothing."""
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    assert mem.set_join_policy(cid, "open") == "updated"
    flags = ("--community", str(cid), "--max-joins", "4", "--max-joins-per-pubkey", "2")
    one, two = start_relay(*flags), start_relay(*flags)
    again = Person.new()

    async def main() -> tuple[list[tuple[bool, str]], list[tuple[bool, str]]]:
        async with aiohttp.ClientSession() as http:
            flood = []
            for n in range(6):  # six fresh keys, one address, both processes in turn
                sock, _ = await connect(http, (one, two)[n % 2].url)
                flood.append(await _answer(sock, signed(Person.new().secret, 28934, [])))
            return flood, []

    flood, _ = asyncio.run(main())
    welcome = [a for a in flood if a[0] and a[1].startswith("info: welcome")]
    assert len(welcome) == 4
    limited = (False, "rate-limited: too many joins from your address or key; try again later.")
    assert flood[4:] == [limited, limited]
    assert len(members_of(reader, cid)) == 1 + 4
    # One key, from another process with room per address: joins, leaves, joins, then no more.
    per_key = start_relay("--community", str(cid), "--max-joins-per-pubkey", "2")

    async def cycle() -> list[tuple[bool, str]]:
        async with aiohttp.ClientSession() as http:
            sock, challenge = await connect(http, per_key.url)
            await sock.send("AUTH", auth_event(again.secret, challenge, per_key.url))
            assert (await sock.recv())[2] is True
            answers = []
            for i in range(3):
                answers.append(await _answer(sock, signed(again.secret, 28934, [], created_at=int(time.time()) - i)))
                await _answer(sock, signed(again.secret, 28936, [], created_at=int(time.time()) - i))
            return answers

    answers = asyncio.run(cycle())
    assert [a[0] for a in answers[:2]] == [True, True] and answers[2] == limited
    assert again.pubkey not in members_of(reader, cid)
    assert reader.member_list_drift(cid) == []


def test_a_refusal_a_retry_may_cure_is_503_or_try_again_and_names_no_id(
    start_relay, mem: Membership, su
):
    """SPEC section 10: the lead bound (BZLAG) over NIP-86 is 503 with Retry-After, over the
    websocket `error: ...; try again`; neither says the community's id."""
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    assert mem.set_join_policy(cid, "open") == "updated"
    relay = start_relay("--community", str(cid))
    # The live list dated 20 minutes ahead, as a restore from a faster clock would leave it.
    with su.transaction():
        su.execute("SET LOCAL session_replication_role = replica")
        su.execute(
            "UPDATE buzz_private.member_lists SET created_at = created_at + 1200"
            " WHERE community_id = %s",
            (cid,),
        )
    status, headers, answer = _nip86(relay, owner, "allowpubkey", [new_pubkey()])
    assert (status, headers["Retry-After"]) == (503, "5")
    assert json.loads(answer)["error"].startswith("error: ") and "try again" in answer
    assert str(cid) not in answer

    async def join() -> tuple[bool, str]:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            return await _answer(sock, signed(Person.new().secret, 28934, []))

    accepted, reason = asyncio.run(join())
    assert not accepted and reason.startswith("error: ") and "try again" in reason
    assert str(cid) not in reason


def wait_for(condition: Callable[[], bool], timeout: float = 30) -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


async def _ok(sock: Socket, event_id: str) -> tuple[bool, str]:
    """The OK of an EVENT sent earlier on `sock`."""
    verb, answered, accepted, reason = await sock.recv(30)
    assert (verb, answered) == ("OK", event_id)
    return accepted, reason


def _joins_waiting(relay: RelayProcess) -> float:
    metrics = relay.get("/metrics")[1]
    found = re.search(r"^buzz_relay_joins_waiting (\S+)$", metrics, re.MULTILINE)
    assert found, metrics
    return float(found[1])


def test_joins_that_arrive_while_a_list_is_written_go_into_the_next_together(
    start_relay, mem: Membership, reader, su, db_url
):
    """SPEC section 10: a join's write waits for the community's list lock (held here by
    hand); five joins that arrive meanwhile wait in the relay, then go into one transaction,
    one list, an 8000 each; each joiner is answered after that commit, and the list names
    exactly the members."""
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    assert mem.set_join_policy(cid, "open") == "updated"
    relay = start_relay("--community", str(cid))
    people = [Person.new() for _ in range(6)]

    async def main(holder: ListLockHolder) -> list[tuple[bool, str]]:
        async with aiohttp.ClientSession() as http:
            socks = [(await connect(http, relay.url))[0] for _ in people]
            joins = [signed(p.secret, 28934, []) for p in people]
            await socks[0].send("EVENT", joins[0])
            # The first join's group waits for the list lock: provably, in pg_locks.
            await asyncio.to_thread(wait_for, lambda: len(list_lock_waiters(su, cid)) == 1)
            for sock, join in zip(socks[1:], joins[1:], strict=True):
                await sock.send("EVENT", join)
            await asyncio.to_thread(wait_for, lambda: _joins_waiting(relay) == 5)
            assert list_lock_waiters(su, cid) and len(list_lock_waiters(su, cid)) == 1
            holder.release()
            return [await _ok(sock, join["id"]) for sock, join in zip(socks, joins, strict=True)]

    with ListLockHolder(db_url, cid) as holder:
        answers = asyncio.run(main(holder))
    assert all(ok and reason.startswith("info: welcome") for ok, reason in answers), answers
    added = [e for e in reader.membership_events(cid) if e["kind"] == 8000]
    joined = {p.pubkey for p in people}
    dates = {e["created_at"] for e in added if e["tags"][1][1] in joined}
    assert len(dates) == 2, "the five that waited were not written together"
    assert set(members_of(reader, cid)) == joined | {owner.pubkey}
    assert reader.member_list_drift(cid) == []
    assert _joins_waiting(relay) == 0


def test_a_flood_of_joins_writes_few_lists_and_the_owner_still_writes(
    start_relay, mem: Membership, reader
):
    """SPEC section 10: 80 claimless joins from 20 clients at once under the open policy (the
    bound per address raised) go into a few lists, not one each, and never run the lists ahead
    of the clock; the owner's NIP-86 write made during the flood succeeds."""
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    assert mem.set_join_policy(cid, "open") == "updated"
    relay = start_relay("--community", str(cid))
    friend = new_pubkey()

    async def joiner(http: aiohttp.ClientSession, n: int) -> list[tuple[bool, str]]:
        sock, _ = await connect(http, relay.url)
        return [await _answer(sock, signed(Person.new().secret, 28934, [])) for _ in range(n)]

    async def main() -> tuple[list[tuple[bool, str]], int]:
        async with aiohttp.ClientSession() as http:
            flood = [asyncio.create_task(joiner(http, 4)) for _ in range(20)]
            await asyncio.sleep(0)
            status = await asyncio.to_thread(
                lambda: _nip86(relay, owner, "allowpubkey", [friend])[0]
            )
            answers = [a for task in flood for a in await task]
            return answers, status

    answers, status = asyncio.run(main())
    assert status == 200
    assert all(ok and reason.startswith("info: welcome") for ok, reason in answers), answers
    members = members_of(reader, cid)
    assert len(members) == 1 + 80 + 1 and friend in members
    added = [e for e in reader.membership_events(cid) if e["kind"] == 8000]
    lists = {e["created_at"] for e in added if e["tags"][1][1] != friend}
    assert len(lists) <= 20, f"{len(lists)} lists for 80 joins"
    assert reader.member_list(cid)["created_at"] <= time.time() + 2  # not ahead of the clock
    assert reader.member_list_drift(cid) == []


# ------------------------------------------------------------------ races and faults


def test_twenty_clients_race_a_five_use_invite(relay: Relay, reader: Membership):
    code = relay.mem.create_relay_invite(relay.community_id, relay.admin.pubkey, max_uses=5).code
    people = [Person.new() for _ in range(20)]

    async def join(http: aiohttp.ClientSession, person: Person) -> tuple[bool, str]:
        sock, _ = await connect(http, relay.url)
        await sock.send("EVENT", signed(person.secret, 28934, [["claim", code]]))
        _, _, accepted, reason = await sock.recv(30)
        return accepted, reason

    async def main() -> list[tuple[bool, str]]:
        async with aiohttp.ClientSession() as http:
            return await asyncio.gather(*(join(http, p) for p in people))

    answers = asyncio.run(main())
    joined = {p.pubkey for p, (ok, _) in zip(people, answers, strict=True) if ok}
    assert [r for ok, r in answers if ok] == [f"info: welcome to {relay.host}!"] * 5
    assert [r for ok, r in answers if not ok] == ["restricted: that invite code has been used up."] * 15
    members = members_of(reader, relay.community_id)
    assert {p.pubkey for p in people} & set(members) == joined
    listed = {t[1] for t in reader.member_list(relay.community_id)["tags"][1:]}
    assert listed == set(members)
    assert reader.member_list_drift(relay.community_id) == []


def test_a_client_that_drops_mid_join_leaves_no_half_state(relay: Relay, reader: Membership, su):
    people = [Person.new() for _ in range(10)]
    code = relay.mem.create_relay_invite(relay.community_id, relay.admin.pubkey, max_uses=None).code

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            for person in people:
                sock, _ = await connect(http, relay.url)
                await sock.send("EVENT", signed(person.secret, 28934, [["claim", code]]))
                await sock.ws.close()  # gone before any answer

    asyncio.run(main())
    time.sleep(1)
    members = members_of(reader, relay.community_id)
    joined = [p for p in people if p.pubkey in members]
    (use_count,) = su.execute(
        "SELECT use_count FROM buzz_private.relay_invites WHERE community_id = %s",
        (relay.community_id,),
    ).fetchone()
    # Each join committed whole (member, use, list) or not at all.
    assert use_count == len(joined)
    listed = {t[1] for t in reader.member_list(relay.community_id)["tags"][1:]}
    assert listed == set(members)
    assert reader.member_list_drift(relay.community_id) == []


def test_kill_9_during_a_burst_of_joins_loses_no_acknowledged_join(
    start_relay, mem: Membership, reader: Membership
):
    owner = Person.new()
    cid = mem.create_community(new_host(), owner.pubkey).details["community_id"]
    code = mem.create_relay_invite(cid, owner.pubkey, max_uses=None).code
    relay: RelayProcess = start_relay("--community", str(cid))
    acknowledged: list[str] = []
    sent: list[str] = []

    async def joiner(http: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        try:
            sock, _ = await connect(http, relay.url)
            while not stop.is_set():
                person = Person.new()
                sent.append(person.pubkey)
                await sock.send("EVENT", signed(person.secret, 28934, [["claim", code]]))
                _, _, accepted, _ = await sock.recv(10)
                if accepted:
                    acknowledged.append(person.pubkey)
        except (TimeoutError, ConnectionError, aiohttp.ClientError, TypeError):
            return  # the relay died under us

    async def main() -> None:
        stop = asyncio.Event()
        async with aiohttp.ClientSession() as http:
            tasks = [asyncio.create_task(joiner(http, stop)) for _ in range(8)]
            while len(acknowledged) < 40:
                await asyncio.sleep(0.01)
            relay.kill()
            stop.set()
            await asyncio.gather(*tasks)

    asyncio.run(main())
    members = members_of(reader, cid)
    assert set(acknowledged) <= set(members), "an acknowledged join was lost"
    # Joins the relay committed but could not acknowledge are whole members too.
    assert set(members) - {owner.pubkey} <= set(sent)
    listed = {t[1] for t in reader.member_list(cid)["tags"][1:]}
    assert listed == set(members)
    assert reader.member_list_drift(cid) == []
    verify_both(reader.member_list(cid))


def test_live_push_survives_the_loss_of_the_listening_connection(
    relay: Relay, reader: Membership, admin_url: str
):
    """The listening backend is terminated during 30 writes; then again, with reconnection
    held off while 5 more writes commit. Every subscriber ends with the live list, has seen
    its lists in increasing created_at order without repeats, and got every 8000 of the
    writes made while nothing listened."""
    writes_done = threading.Event()
    dbname = conninfo_to_dict(relay.db_url)["dbname"]
    terminated: list[int] = []
    unheard: list[str] = []  # pubkeys added while no LISTEN connection existed

    def terminate_listener(admin: psycopg.Connection) -> None:
        row = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'buzz-relay listen'"
            " AND datname = %s",
            (dbname,),
        ).fetchone()
        assert row is not None, "no listening connection"
        admin.execute("SELECT pg_terminate_backend(%s)", (row[0],))
        terminated.append(row[0])

    def writer() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            for i in range(30):
                relay.mem.add_relay_member(relay.community_id, new_pubkey())
                if i == 10:
                    terminate_listener(admin)
                time.sleep(0.02)
            time.sleep(1)  # listening again
            admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
            try:
                terminate_listener(admin)
                for _ in range(5):  # relay.mem's connection is already open
                    pubkey = new_pubkey()
                    relay.mem.add_relay_member(relay.community_id, pubkey)
                    unheard.append(pubkey)
                time.sleep(0.5)  # the relay tries, and fails, to listen again
            finally:
                admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
        writes_done.set()

    async def subscriber(http: aiohttp.ClientSession) -> tuple[list[dict], list[dict]]:
        sock, _ = await connect(http, relay.url)
        await sock.send("REQ", "l", {"kinds": [13534]})
        await sock.send("REQ", "adds", {"kinds": [8000], "since": int(time.time())})
        lists = [m[2] for m in await sock.until("EOSE") if m[0] == "EVENT"]
        await sock.until("EOSE")
        adds: list[dict] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = writes_done.is_set() and lists[-1] == reader.member_list(relay.community_id)
            if done and len(adds) >= 35:
                break
            try:
                msg = await sock.recv(0.5)
            except TimeoutError:
                continue
            if msg[0] == "EVENT":
                (lists if msg[1] == "l" else adds).append(msg[2])
        return lists, adds

    async def main() -> list[tuple[list[dict], list[dict]]]:
        async with aiohttp.ClientSession() as http:
            subs = [asyncio.create_task(subscriber(http)) for _ in range(5)]
            await asyncio.sleep(0.5)
            thread = threading.Thread(target=writer)
            thread.start()
            try:
                return await asyncio.gather(*subs)
            finally:
                await asyncio.to_thread(thread.join)

    results = asyncio.run(main())
    assert len(terminated) == 2
    final = reader.member_list(relay.community_id)
    for lists, adds in results:
        assert lists[-1] == final
        created = [ev["created_at"] for ev in lists]
        assert created == sorted(set(created)), "a list was sent twice or out of order"
        added = [ev["tags"][1][1] for ev in adds]
        assert len(added) == len(set(added)) == 35
        assert set(unheard) <= set(added), "an 8000 committed while not listening was missed"
    assert "buzz_relay_listener_reconnects_total 2.0" in relay.process.get("/metrics")[1]


# ------------------------------------------------------------------ roles (33534 and kind 5)


async def _quiet(sock: Socket, seconds: float = 0.5) -> list[list[Any]]:
    """Whatever arrives within `seconds` (nothing, when all is well)."""
    extra = []
    try:
        while True:
            extra.append(await sock.recv(seconds))
    except TimeoutError:
        return extra


def test_role_definitions_and_deletions_are_pushed_as_they_commit(relay: Relay, reader: Membership):
    """Role writes made through SQL by another service reach open subscriptions at COMMIT:
    a definition alone (no list), a redefinition, a definition and its assignment in one
    transaction (the 33534 before the list naming it), a deletion (its kind 5 before the list
    without it); a rolled-back definition never."""
    cid, mem = relay.community_id, relay.mem
    member = relay.member.pubkey

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            await sock.send("REQ", "defs", {"kinds": [33534]})
            stored = await sock.until("EOSE")
            assert sorted(m[2]["tags"][1][1] for m in stored[:-1]) == ["admin", "member", "owner"]
            await sock.send("REQ", "vip", {"kinds": [33534], "#d": ["vip"], "authors": [relay.key.pubkey]})
            assert await sock.until("EOSE") == [["EOSE", "vip"]]
            await sock.send("REQ", "del", {"kinds": [5], "#k": ["33534"]})
            assert await sock.until("EOSE") == [["EOSE", "del"]]
            await sock.send("REQ", "lists", {"kinds": [13534]})
            assert len(await sock.until("EOSE")) == 2

            # A definition alone: its 33534 to both subscriptions that match, no list.
            write = mem.define_role(cid, "vip", "VIP", "Very important", 45, 10)
            (vip,) = write.events
            got = [await sock.recv(), await sock.recv()]
            assert sorted(got, key=lambda m: m[1]) == [["EVENT", "defs", vip], ["EVENT", "vip", vip]]
            verify_both(got[0][2])
            assert await _quiet(sock) == []

            # Rolled back: nothing.
            with pytest.raises(LookupError), mem.transaction() as tx:
                tx.define_role(cid, "ghost", "Ghost")
                raise LookupError("changed my mind")
            # Redefined: the new 33534 replaces the old (same d).
            (vip2,) = mem.define_role(cid, "vip", "V.I.P.").events
            got = [await sock.recv(), await sock.recv()]
            assert sorted(got, key=lambda m: m[1]) == [["EVENT", "defs", vip2], ["EVENT", "vip", vip2]]
            assert vip2["created_at"] > vip["created_at"]
            assert vip2["tags"] == [["-"], ["d", "vip"], ["label", "V.I.P."]]

            # Defined and assigned in one transaction: the definition comes before the list.
            with mem.transaction() as tx:
                tx.define_role(cid, "mod", "Moderator")
                tx.assign_role(cid, member, "mod")
                tx.assign_role(cid, member, "vip")
            by_kind = {ev["kind"]: ev for ev in tx.events}
            assert sorted(by_kind) == [13534, 33534]
            assert [await sock.recv(), await sock.recv()] == [
                ["EVENT", "defs", by_kind[33534]],
                ["EVENT", "lists", by_kind[13534]],
            ]
            assert ["member", member, "member", "mod", "vip"] in by_kind[13534]["tags"]

            # Deleted while held: the kind 5, then the list without it.
            deleted = mem.delete_role(cid, "vip")
            by_kind = {ev["kind"]: ev for ev in deleted.events}
            assert [await sock.recv(), await sock.recv()] == [
                ["EVENT", "del", by_kind[5]],
                ["EVENT", "lists", by_kind[13534]],
            ]
            verify_both(by_kind[5])
            assert by_kind[5]["tags"] == [["-"], ["a", f"33534:{relay.key.pubkey}:vip"], ["k", "33534"]]
            assert ["member", member, "member", "mod"] in by_kind[13534]["tags"]
            assert await _quiet(sock) == []

            # A new connection reads what is live now: no vip, mod, and the deletion.
            late, _ = await connect(http, relay.url)
            await late.send("REQ", "r", {"kinds": [33534, 5], "#d": ["vip", "mod"]}, {"kinds": [5]})
            answer = await late.until("EOSE")
            assert [m[2]["kind"] for m in answer[:-1]] == [5, 33534]
            assert answer[1][2]["tags"][1] == ["d", "mod"]

    asyncio.run(main())
    assert reader.member_list_drift(cid) == []


def test_role_events_committed_while_not_listening_are_caught_up(
    relay: Relay, reader: Membership, admin_url: str
):
    cid, mem = relay.community_id, relay.mem
    dbname = conninfo_to_dict(relay.db_url)["dbname"]

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, _ = await connect(http, relay.url)
            await sock.send("REQ", "roles", {"kinds": [33534, 5]})
            await sock.until("EOSE")
            (first,) = mem.define_role(cid, "first", "First").events
            assert await sock.recv() == ["EVENT", "roles", first]
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
                try:
                    admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name = 'buzz-relay listen' AND datname = %s",
                        (dbname,),
                    )
                    (second,) = mem.define_role(cid, "second", "Second").events
                    (deletion,) = mem.delete_role(cid, "first").events
                    await asyncio.sleep(0.5)  # the relay tries, and fails, to listen again
                finally:
                    admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
            got = [await sock.recv(15), await sock.recv(15)]
            assert got == [["EVENT", "roles", second], ["EVENT", "roles", deletion]]
            assert await _quiet(sock) == []

    asyncio.run(main())
    assert "buzz_relay_listener_reconnects_total 1.0" in relay.process.get("/metrics")[1]


def test_client_role_events_are_blocked_over_the_wire(relay: Relay, reader: Membership):
    before = reader.role_definitions(relay.community_id)

    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            sock, challenge = await connect(http, relay.url)
            await sock.send("AUTH", auth_event(relay.owner.secret, challenge, relay.url))
            assert (await sock.recv())[2] is True
            forged = [
                (33534, [["-"], ["d", "owner"], ["label", "Pwned"]]),
                (5, [["-"], ["a", f"33534:{relay.key.pubkey}:admin"], ["k", "33534"]]),
            ]
            for kind, tags in forged:
                ev = signed(relay.owner.secret, kind, tags)
                await sock.send("EVENT", ev)
                assert await sock.recv() == [
                    "OK", ev["id"], False, f"blocked: only the relay publishes kind {kind}"
                ]

    asyncio.run(main())
    assert reader.role_definitions(relay.community_id) == before
    assert reader.role_deletions(relay.community_id) == []
