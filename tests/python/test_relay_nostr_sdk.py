"""buzz-relay as a client library we did not write sees it: rust-nostr's Python bindings
(nostr-sdk 0.45) against a running relay, for the NIP-43 flows of SPEC section 7.

Each test runs one coroutine with ``asyncio.run`` (no pytest-asyncio). What nostr-sdk 0.45
does here, as observed (and as its source, sdk/src/relay/inner.rs and api/send_event.rs, says):

- NIP-42 only with an authenticator: ``ClientBuilder().authenticator(SignerAuthenticator(keys))``.
  Such a client AUTHs as soon as the relay's greeting ``["AUTH", challenge]`` arrives, in the
  background, so a ``REQ`` or ``EVENT`` sent right after connecting may still reach the relay
  first. A ``CLOSED`` ``auth-required:`` then keeps the subscription and sends the ``REQ`` again
  once AUTH is accepted; an ``OK false auth-required:`` makes ``send_event`` wait for AUTH and
  send the same event again (once). Without an authenticator it never AUTHs: the refusal is
  what the caller gets. ``GatedAuthenticator`` below holds AUTH back, so that the retry path
  is taken for certain.
- An authenticator written in Python (``SignerAuthenticator`` included, a uniffi callback
  interface) runs on the Rust runtime's threads: without ``uniffi_set_event_loop(<the running
  loop>)`` it fails with "no running event loop" (an unraisable exception, seen only as a
  pytest warning) and the client never AUTHs. ``run`` below sets it for each scenario.
- ``send_event`` returns a ``SendEventOutput`` whose ``success`` lists relay URLs and whose
  ``failed`` maps a URL to the relay's ``OK`` message; the message of an accepted ``OK`` is not
  in it, so these tests read it from ``client.notifications()`` (every relay message).
- NIP-70: nostr-sdk does not treat a ``["-"]`` event specially (it does not AUTH before
  sending one); it relies on the relay's ``auth-required:`` refusal and the retry above.
- It refuses to send an event whose id or signature does not verify (``NostrSdkError``
  "Invalid event ID" / "Invalid signature"); ``Relay.send_msg`` sends one anyway.
- Its notifications may trail what its calls return: a test waits for a message, then looks.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import nostr_sdk as n
import pytest
from fixtures_membership import expected_tags, members_of
from sdk_client import WAIT, Session, run, session, signed, tags_of

pytest_plugins = ("fixtures_membership", "relay_fixtures")

KIND_LIST, KIND_ADD, KIND_REMOVE = 13534, 8000, 8001
KIND_JOIN, KIND_INVITE, KIND_LEAVE = 28934, 28935, 28936












class GatedAuthenticator(n.Authenticator):
    """NIP-42 with `keys`, but only once `gate` is set (to take nostr-sdk's retry path)."""

    def __init__(self, keys: n.Keys) -> None:
        self._inner = n.SignerAuthenticator(keys)
        self.gate = asyncio.Event()
        self.challenges: list[str] = []

    async def make_auth_event(self, relay_url: n.RelayUrl, challenge: str) -> n.Event | None:
        self.challenges.append(challenge)
        await self.gate.wait()
        return await self._inner.make_auth_event(relay_url, challenge)


def list_filter(relay: Any) -> n.Filter:
    return n.Filter().kind(n.Kind(KIND_LIST)).author(n.PublicKey.parse(relay.key.pubkey))


def assert_list(relay: Any, event: n.Event) -> None:
    """`event` is the relay's signed list naming exactly the committed members."""
    assert event.verify()
    assert event.kind().as_u16() == KIND_LIST
    assert event.author().to_hex() == relay.key.pubkey
    assert event.content() == ""
    assert tags_of(event) == expected_tags(members_of(relay.mem, relay.community_id))


async def fetch_list(relay: Any, s: Session) -> n.Event:
    events = await s.fetch(list_filter(relay))
    assert len(events) == 1, [e.as_json() for e in events]
    return events[0]


# ---------------------------------------------------------------------------- 1. the list


def test_fetch_and_verify_the_list(relay) -> None:
    async def scenario() -> None:
        async with session(relay) as s:
            # No author in the filter: the relay serves its own list all the same.
            events = await s.fetch(n.Filter().kind(n.Kind(KIND_LIST)))
            assert len(events) == 1
            ev = events[0]
            assert_list(relay, ev)
            members = members_of(relay.mem, relay.community_id)
            assert members == {
                relay.owner.pubkey: "owner",
                relay.admin.pubkey: "admin",
                relay.member.pubkey: "member",
            }
            assert [t[1] for t in tags_of(ev)[1:]] == sorted(members)
            # Byte for byte what the database holds as the live list.
            assert json.loads(ev.as_json()) == relay.mem.member_list(relay.community_id)
            assert ev.is_protected()
            # Nobody had to AUTH for it.
            assert s.of("OK") == [] and s.of("CLOSED") == []

    run(scenario)


# ---------------------------------------------------------------------------- 2. live push


def test_live_push_of_lists_and_user_events(relay) -> None:
    async def scenario() -> None:
        async with session(relay) as s:
            f = n.Filter().kinds([n.Kind(KIND_LIST), n.Kind(KIND_ADD)])
            sub = await s.client.subscribe(n.ReqTarget.auto([f]))
            assert [str(u) for u in sub.success] == [str(s.url)] and sub.failed == {}
            await s.wait_for(lambda m: m[:2] == ["EOSE", sub.id])
            stored = [m[2] for m in s.of("EVENT") if m[1] == sub.id]
            # The owner, the admin and the member were each added with an 8000.
            assert sorted(ev["kind"] for ev in stored) == [KIND_ADD] * 3 + [KIND_LIST]
            old_list = next(ev for ev in stored if ev["kind"] == KIND_LIST)

            newcomer = n.Keys.generate().public_key().to_hex()
            write = relay.mem.add_relay_member(relay.community_id, newcomer)  # sync, brief
            assert write.outcome == "added"

            def live(kind: int) -> Callable[[tuple[str, n.Event]], bool]:
                def match(item: tuple[str, n.Event]) -> bool:
                    sub_id, ev = item
                    return (
                        sub_id == sub.id
                        and ev.kind().as_u16() == kind
                        and ev.created_at().as_secs() == write.snapshot["created_at"]
                    )

                return match

            # nostr-sdk verified both and handed them to the subscription (NEW_EVENT).
            _, pushed_list = await s.wait_for(live(KIND_LIST), of=s.new_events)
            _, add = await s.wait_for(live(KIND_ADD), of=s.new_events)
            assert json.loads(pushed_list.as_json()) == write.snapshot
            assert pushed_list.created_at().as_secs() > old_list["created_at"]
            assert_list(relay, pushed_list)
            assert ["member", newcomer, "member"] in tags_of(pushed_list)
            assert add.verify()
            assert add.author().to_hex() == relay.key.pubkey
            assert add.content() == ""
            assert tags_of(add) == [["-"], ["p", newcomer]]
            # Each once, as the relay sent it.
            live_msgs = [
                m for m in s.of("EVENT") if m[2]["created_at"] == write.snapshot["created_at"]
            ]
            assert sorted(m[2]["id"] for m in live_msgs) == sorted(
                [pushed_list.id().to_hex(), add.id().to_hex()]
            )

            # A fresh fetch gets the new list.
            assert (await fetch_list(relay, s)).id().to_hex() == pushed_list.id().to_hex()

            # A second subscription, for the 8001 of the newcomer only (#p): nothing stored;
            # its removal then reaches it, and the first subscription gets the list without it.
            removed = n.Filter().kind(n.Kind(KIND_REMOVE)).pubkey(n.PublicKey.parse(newcomer))
            sub2 = await s.client.subscribe(n.ReqTarget.auto([removed]))
            await s.wait_for(lambda m: m[:2] == ["EOSE", sub2.id])
            gone = relay.mem.remove_relay_member(relay.community_id, newcomer)
            assert gone.outcome == "removed"
            _, remove = await s.wait_for(
                lambda item: item[0] == sub2.id and item[1].kind().as_u16() == KIND_REMOVE,
                of=s.new_events,
            )
            assert remove.verify() and tags_of(remove) == [["-"], ["p", newcomer]]
            assert remove.created_at().as_secs() == gone.snapshot["created_at"]
            _, newest = await s.wait_for(
                lambda item: (
                    item[0] == sub.id
                    and item[1].created_at().as_secs() == gone.snapshot["created_at"]
                ),
                of=s.new_events,
            )
            assert json.loads(newest.as_json()) == gone.snapshot
            assert_list(relay, newest)
            assert newcomer not in [t[1] for t in tags_of(newest)[1:]]
            await asyncio.sleep(0.2)  # nothing else arrives on either
            assert [m[2]["kind"] for m in s.of("EVENT") if m[1] == sub2.id] == [KIND_REMOVE]
            assert [
                m[2]["kind"]
                for m in s.of("EVENT")
                if m[1] == sub.id and m[2]["created_at"] == gone.snapshot["created_at"]
            ] == [KIND_LIST]
            await s.client.unsubscribe_all()

    run(scenario)


# ---------------------------------------------------------------- 3. invite, join, leave


def test_auth_invite_join_and_leave(relay) -> None:
    async def scenario() -> None:
        admin_keys = n.Keys.parse(relay.admin.secret)
        async with session(relay, admin_keys) as admin:
            before = time.time()
            invites = await admin.fetch(n.Filter().kind(n.Kind(KIND_INVITE)))
            assert len(invites) == 1
            invite = invites[0]
            assert invite.verify()
            assert invite.author().to_hex() == relay.key.pubkey
            assert invite.kind().as_u16() == KIND_INVITE
            assert invite.content() == ""
            tags = tags_of(invite)
            assert [t[0] for t in tags] == ["-", "claim", "p", "expiration"]
            assert tags[0] == ["-"]
            assert tags[2] == ["p", relay.admin.pubkey]
            code = tags[1][1]
            assert len(tags[1]) == 2 and code
            expiration = int(tags[3][1])
            assert before + 72 * 3600 - 5 <= expiration <= time.time() + 72 * 3600 + 5
            await admin.wait_for(lambda m: m[0] == "EOSE")  # notifications may trail the fetch
            # nostr-sdk AUTHed once (OK true); if its REQ beat the AUTH, the relay answered
            # CLOSED auth-required: and nostr-sdk sent the REQ again.
            assert [m[2] for m in admin.of("OK")] == [True]
            closed = [m[2] for m in admin.of("CLOSED")]
            assert len(closed) <= 1 and all(c.startswith("auth-required:") for c in closed)

        newcomer = n.Keys.generate()
        pk = newcomer.public_key().to_hex()
        auth = GatedAuthenticator(newcomer)
        async with session(relay, authenticator=auth) as s:
            join = signed(newcomer, KIND_JOIN, [["claim", code]])
            out = await s.send(join)
            assert [str(u) for u in out.success] == [str(s.url)], out
            assert out.failed == {}
            assert out.id.to_hex() == join.id().to_hex()
            ok = await s.wait_for(lambda m: m[0] == "OK" and m[1] == join.id().to_hex())
            assert ok[2:] == [True, f"info: welcome to {relay.host}!"]
            # A join without "-" needs no AUTH (none was sent: the gate is shut).
            assert s.of("OK") == [ok]
            # nostr-sdk began AUTH on the greeting (and waits at the gate).
            await s.wait_for(lambda challenge: True, of=auth.challenges)
            assert len(auth.challenges) == 1

            assert members_of(relay.mem, relay.community_id)[pk] == "member"
            listed = await fetch_list(relay, s)
            assert_list(relay, listed)
            assert ["member", pk, "member"] in tags_of(listed)

            # NIP-70 leave before AUTH: the relay refuses it auth-required:, nostr-sdk waits
            # for AUTH (let through once the refusal is seen), then sends it again: accepted.
            leave = signed(newcomer, KIND_LEAVE, [["-"]])
            assert leave.is_protected()
            sending = asyncio.create_task(s.send(leave))
            refusal = await s.wait_for(lambda m: m[0] == "OK" and m[1] == leave.id().to_hex())
            assert refusal[2] is False
            assert refusal[3] == (
                "auth-required: this event may only be published by its author; AUTH first"
            )
            assert pk in members_of(relay.mem, relay.community_id)
            auth.gate.set()
            out = await asyncio.wait_for(sending, 10)
            assert [str(u) for u in out.success] == [str(s.url)], out
            assert out.failed == {}
            await s.wait_for(lambda m: len(s.ok_for(leave)) == 2)
            assert [m[2:] for m in s.ok_for(leave)] == [[False, refusal[3]], [True, ""]]
            mine = (join.id().to_hex(), leave.id().to_hex())
            others = [m for m in s.of("OK") if m[1] not in mine]
            assert [m[2:] for m in others] == [[True, ""]]  # the one AUTH
            assert auth.challenges == [auth.challenges[0]]

            assert pk not in members_of(relay.mem, relay.community_id)
            after = await fetch_list(relay, s)
            assert_list(relay, after)
            assert pk not in [t[1] for t in tags_of(after)[1:]]
            assert after.created_at().as_secs() > listed.created_at().as_secs()

    run(scenario)


def test_an_invite_is_used_once_and_a_member_rejoining_is_a_duplicate(relay) -> None:
    async def scenario() -> None:
        async with session(relay, n.Keys.parse(relay.owner.secret)) as owner:
            (invite,) = await owner.fetch(n.Filter().kind(n.Kind(KIND_INVITE)))
            code = next(t[1] for t in tags_of(invite) if t[0] == "claim")
            assert ["p", relay.owner.pubkey] in tags_of(invite)
            # The owner cannot leave (AUTHed already: the one answer is the refusal).
            leave = signed(n.Keys.parse(relay.owner.secret), KIND_LEAVE, [["-"]])
            out = await owner.send(leave)
            assert out.success == []
            assert list(out.failed.values()) == [
                "restricted: the owner cannot leave; transfer ownership first."
            ]

        first, second = n.Keys.generate(), n.Keys.generate()
        async with session(relay) as s:
            out = await s.send(signed(first, KIND_JOIN, [["claim", code]]))
            assert out.failed == {} and len(out.success) == 1
            # The same key again: accepted, as a duplicate.
            again = signed(first, KIND_JOIN, [["claim", code]], ago=2)
            out = await s.send(again)
            assert out.failed == {} and len(out.success) == 1
            ok = await s.wait_for(lambda m: m[0] == "OK" and m[1] == again.id().to_hex())
            assert ok[2:] == [True, "duplicate: you are already a member of this relay."]
            # Another key with the same one-use code.
            out = await s.send(signed(second, KIND_JOIN, [["claim", code]]))
            assert out.success == []
            assert list(out.failed.values()) == ["restricted: that invite code has been used up."]
        members = members_of(relay.mem, relay.community_id)
        assert first.public_key().to_hex() in members
        assert second.public_key().to_hex() not in members

    run(scenario)


def test_a_protected_join_is_sent_again_after_auth(relay) -> None:
    async def scenario() -> None:
        async with session(relay, n.Keys.parse(relay.admin.secret)) as admin:
            (invite,) = await admin.fetch(n.Filter().kind(n.Kind(KIND_INVITE)))
        code = next(t[1] for t in tags_of(invite) if t[0] == "claim")

        newcomer = n.Keys.generate()
        auth = GatedAuthenticator(newcomer)
        async with session(relay, authenticator=auth) as s:
            join = signed(newcomer, KIND_JOIN, [["-"], ["claim", code]])
            sending = asyncio.create_task(s.send(join))
            refusal = await s.wait_for(lambda m: m[0] == "OK" and m[1] == join.id().to_hex())
            assert refusal[2:] == [
                False,
                "auth-required: this event may only be published by its author; AUTH first",
            ]
            # Refused before the invite was looked at: the code is still unused.
            assert newcomer.public_key().to_hex() not in members_of(relay.mem, relay.community_id)
            auth.gate.set()
            out = await asyncio.wait_for(sending, 10)
            assert out.failed == {} and len(out.success) == 1
            await s.wait_for(lambda m: len(s.ok_for(join)) == 2)
            assert s.ok_for(join)[1][2:] == [True, f"info: welcome to {relay.host}!"]
        assert members_of(relay.mem, relay.community_id)[newcomer.public_key().to_hex()] == "member"

    run(scenario)


def test_invite_requests_are_rate_limited(relay) -> None:
    async def scenario() -> None:
        async with session(relay, n.Keys.parse(relay.owner.secret)) as owner:
            codes = set()
            for _ in range(10):  # the default: 10 per pubkey per hour
                (invite,) = await owner.fetch(n.Filter().kind(n.Kind(KIND_INVITE)))
                codes.add(next(t[1] for t in tags_of(invite) if t[0] == "claim"))
            assert len(codes) == 10  # each REQ mints a new one-use code
            assert await owner.fetch(n.Filter().kind(n.Kind(KIND_INVITE))) == []
            closed = await owner.wait_for(lambda m: m[0] == "CLOSED" and "rate" in m[2])
            assert closed[2] == "rate-limited: at most 10 invites per hour"

    run(scenario)


# ---------------------------------------------------------------------------- 4. refusals


def test_refusals_as_nostr_sdk_reports_them(relay) -> None:
    async def scenario() -> None:
        before = members_of(relay.mem, relay.community_id)
        member_keys = n.Keys.parse(relay.member.secret)
        async with session(relay, member_keys) as s:
            # A plain member asks for an invite: AUTH happens, then CLOSED restricted:.
            started = time.monotonic()
            assert await s.fetch(n.Filter().kind(n.Kind(KIND_INVITE))) == []
            await s.wait_for(lambda m: m[0] == "CLOSED" and m[2].startswith("restricted:"))
            closed = [m[2] for m in s.of("CLOSED")]
            # Members have no invites by default (SPEC §3's invite quotas).
            assert closed[-1] == "restricted: you have no invites left."
            # Before it, at most one auth-required: (when the REQ beat nostr-sdk's AUTH).
            assert len(closed) <= 2 and all(c.startswith("auth-required:") for c in closed[:-1])
            assert [m[2] for m in s.of("OK")] == [True]  # the AUTH
            # nostr-sdk ends the fetch on CLOSED, without waiting for its timeout.
            assert time.monotonic() - started < WAIT.total_seconds()

            # Kind 1: blocked:.
            note = signed(member_keys, 1, [], "hello")
            out = await s.send(note)
            assert out.success == []
            (reason,) = out.failed.values()
            assert reason.startswith("blocked:"), reason

            # A relay-only kind: blocked: with the kind named.
            fake_list = signed(member_keys, KIND_LIST, [["-"]])
            out = await s.send(fake_list)
            assert list(out.failed.values()) == [
                f"blocked: only the relay publishes kind {KIND_LIST}"
            ]

            # Deletions are the relay's too.
            out = await s.send(signed(member_keys, 5, [["e", fake_list.id().to_hex()]]))
            assert list(out.failed.values()) == ["blocked: only the relay publishes kind 5"]

            # A join with an invalid code.
            out = await s.send(signed(n.Keys.generate(), KIND_JOIN, [["claim", "not-a-code"]]))
            assert out.success == []
            assert list(out.failed.values()) == ["restricted: that invite code is invalid."]

            # Events that do not verify: nostr-sdk refuses to send them (it checks the id, then
            # the signature). Sent as a raw client message, the relay answers invalid:.
            good = signed(member_keys, KIND_JOIN, [["claim", "x"]])
            tampered = json.loads(good.as_json()) | {"content": "changed"}
            with pytest.raises(n.NostrSdkError, match="Invalid event ID"):
                await s.send(n.Event.from_json(json.dumps(tampered)))
            wrong_sig = json.loads(good.as_json()) | {"sig": note.signature()}
            bad = n.Event.from_json(json.dumps(wrong_sig))
            assert bad.verify_id() and not bad.verify()
            with pytest.raises(n.NostrSdkError, match="Invalid signature"):
                await s.send(bad)
            raw = await s.client.relay(s.url)
            assert raw is not None
            await raw.send_msg(n.ClientMessage.event(bad))
            ok = await s.wait_for(lambda m: m[0] == "OK" and m[1] == bad.id().to_hex())
            assert ok[2:] == [False, "invalid: bad event id or signature"]

            # The member leaving is fine; a second leave is refused (no longer a member).
            out = await s.send(signed(member_keys, KIND_LEAVE, [["-"]]))
            assert out.failed == {} and len(out.success) == 1
            out = await s.send(signed(member_keys, KIND_LEAVE, [["-"]], ago=2))
            assert list(out.failed.values()) == ["restricted: you are not a member of this relay."]
        del before[relay.member.pubkey]

        # Without an authenticator nostr-sdk never AUTHs: the refusal is what it reports.
        async with session(relay) as anon:
            invite_req = n.Filter().kind(n.Kind(KIND_INVITE))
            assert await anon.fetch(invite_req, timedelta(seconds=2)) == []
            await anon.wait_for(lambda m: m[0] == "CLOSED")
            assert [m[2] for m in anon.of("CLOSED")] == [
                "auth-required: AUTH as a member to request an invite"
            ]
            stranger = n.Keys.generate()
            out = await anon.send(signed(stranger, KIND_LEAVE, [["-"]]))
            assert out.success == []
            (reason,) = out.failed.values()
            assert reason.startswith("auth-required:"), reason
            ok = await anon.wait_for(lambda m: m[0] == "OK")
            assert ok == ["OK", out.id.to_hex(), False, reason]
            assert len(anon.of("OK")) == 1  # not sent again: no authenticator

        assert members_of(relay.mem, relay.community_id) == before

    run(scenario)
