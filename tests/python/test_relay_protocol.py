"""The protocol module, message by message and outcome by outcome, on a real database.

Each test drives a RelaySession (no websocket) over the DatabaseBackend of the test database
and checks the exact relay messages, then what the database holds.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from typing import Any

import pytest
from fixtures_membership import members_of, new_host, new_pubkey, state, verify_both
from relay_client import auth_event, backend_on, session, signed
from relay_fixtures import Person

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.relay.backend import DatabaseBackend
from buzz_signer.relay.filters import WireEvent
from buzz_signer.relay.limits import FAILED_CLAIM_SECONDS, Limits
from buzz_signer.relay.protocol import MAX_STORED_READS

pytest_plugins = ("fixtures_membership",)

# Each case is refused by the relay's own parsing, before any SQL: a cluster runs the first.
PARSED_BY_THE_RELAY = pytest.mark.cluster_runs_first_case("the relay refuses it before any SQL")

HOST = "relay.test"


class World:
    """A community with an owner, an admin and a member whose keys the test holds."""

    def __init__(self, mem: Membership) -> None:
        self.mem = mem
        self.owner, self.admin, self.member = Person.new(), Person.new(), Person.new()
        self.host = new_host()
        self.cid = mem.create_community(self.host, self.owner.pubkey).details["community_id"]
        mem.add_relay_member(self.cid, self.admin.pubkey, "admin")
        mem.add_relay_member(self.cid, self.member.pubkey)


@pytest.fixture
def world(mem: Membership) -> World:
    return World(mem)


def run(db_url: str, key: RelayKey, world: World, scenario: Any, **kw: Any) -> Any:
    """Run `scenario(client)` on a session of `world`'s community."""

    async def main() -> Any:
        async with backend_on(db_url, key) as backend:
            client = session(backend, key, world.cid, world.host, **kw)
            return await scenario(client)

    return asyncio.run(main())


def ok(answer: list[list[Any]]) -> tuple[bool, str]:
    [[verb, _id, accepted, reason]] = answer
    assert verb == "OK"
    return accepted, reason


def test_greeting_is_a_challenge(db_url, key, world):
    async def scenario(c):
        [[verb, challenge]] = [json.loads(m) for m in c.session.greeting()]
        assert verb == "AUTH" and len(challenge) == 32
        return challenge

    assert run(db_url, key, world, scenario) != run(db_url, key, world, scenario)


def test_req_answers_the_live_list_then_eose(db_url, key, world, reader):
    async def scenario(c):
        return await c.send("REQ", "s", {"kinds": [13534]})

    [[verb, sub, event], eose] = run(db_url, key, world, scenario)
    assert (verb, sub, eose) == ("EVENT", "s", ["EOSE", "s"])
    assert event == reader.member_list(world.cid)
    verify_both(event)


def test_req_filters_select_membership_events(db_url, key, world, reader):
    joiner = new_pubkey()
    world.mem.add_relay_member(world.cid, joiner)
    world.mem.remove_relay_member(world.cid, joiner)
    events = reader.membership_events(world.cid)
    adds = [e for e in events if e["kind"] == 8000]
    last = events[-1]

    async def scenario(c):
        return {
            "all": await c.send("REQ", "a", {"kinds": [8000, 8001]}),
            "p": await c.send("REQ", "p", {"kinds": [8000, 8001], "#p": [joiner]}),
            "limit": await c.send("REQ", "l", {"kinds": [8000, 8001], "limit": 1}),
            "ids": await c.send("REQ", "i", {"ids": [last["id"]]}),
            "since": await c.send("REQ", "t", {"kinds": [8000], "since": last["created_at"]}),
            "until": await c.send("REQ", "u", {"kinds": [8000], "until": adds[0]["created_at"]}),
            "stranger": await c.send("REQ", "x", {"authors": [new_pubkey()]}),
            "relay": await c.send("REQ", "r", {"authors": [key.pubkey], "kinds": [8001]}),
        }

    got = run(db_url, key, world, scenario)

    def events_of(answer):
        assert answer[-1][0] == "EOSE"
        return [m[2] for m in answer[:-1]]

    newest_first = sorted(events, key=lambda e: e["created_at"], reverse=True)
    assert events_of(got["all"]) == newest_first
    assert [e["tags"][1][1] for e in events_of(got["p"])] == [joiner, joiner]
    assert events_of(got["limit"]) == newest_first[:1]
    assert events_of(got["ids"]) == [last]
    assert events_of(got["since"]) == []  # the last event is an 8001
    assert events_of(got["until"]) == [adds[0]]
    assert events_of(got["stranger"]) == []
    assert [e["kind"] for e in events_of(got["relay"])] == [8001]


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize(
    ("message", "prefix"),
    [
        (["REQ", "s", {"kinds": [1]}], "unsupported:"),
        (["REQ", "s", {"kinds": [13534, 30023]}], "unsupported:"),
        (["REQ", "s", {"search": "x"}], "unsupported:"),
        (["REQ", "s", {"kinds": "13534"}], "invalid:"),
        (["REQ", "s", {"kinds": [True]}], "invalid:"),
        (["REQ", "s", {"ids": ["ABC"]}], "invalid:"),
        (["REQ", "s", {"since": -1}], "invalid:"),
        (["REQ", "s", {"limit": 1.5}], "invalid:"),
        (["REQ", "s", "not a filter"], "invalid:"),
        (["REQ", "s", *[{}] * 11], "invalid:"),
    ],
)
def test_req_refusals_are_closed_with_their_prefix(db_url, key, world, message, prefix):
    async def scenario(c):
        return await c.send(*message)

    [[verb, sub, reason]] = run(db_url, key, world, scenario)
    assert (verb, sub) == ("CLOSED", "s")
    assert reason.startswith(prefix), reason


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "{}",
        "[]",
        "[1, 2]",
        '["NOPE"]',
        '["REQ"]',
        '["REQ", 5, {}]',
        '["REQ", "' + "x" * 65 + '", {}]',
        '["EVENT"]',
        '["EVENT", "x"]',
        '["AUTH", 3]',
        '["CLOSE"]',
        "[" * 100_000,
    ],
)
def test_what_is_not_a_client_message_gets_a_notice(db_url, key, world, text):
    async def scenario(c):
        answer = await c.raw(text)
        # The connection stays usable.
        return answer, await c.send("REQ", "after", {"kinds": [13534]})

    answer, after = run(db_url, key, world, scenario, limits=Limits(max_message_bytes=200_000))
    [[verb, reason]] = answer
    assert verb == "NOTICE" and reason.startswith("invalid:")
    assert after[-1] == ["EOSE", "after"]


def test_a_message_over_the_size_limit_gets_a_notice(db_url, key, world):
    async def scenario(c):
        return await c.raw(json.dumps(["REQ", "s", {"#p": ["x" * 2000]}]))

    [[verb, reason]] = run(db_url, key, world, scenario, limits=Limits(max_message_bytes=1000))
    assert verb == "NOTICE" and "too large" in reason


def test_subscriptions_are_bounded_replaced_and_closed(db_url, key, world):
    async def scenario(c):
        for i in range(3):
            assert (await c.send("REQ", f"s{i}", {"kinds": [8000]}))[-1][0] == "EOSE"
        over = await c.send("REQ", "s3", {"kinds": [8000]})
        replaced = await c.send("REQ", "s0", {"kinds": [13534]})
        count = c.session.subscription_count
        await c.send("CLOSE", "s1")
        after_close = await c.send("REQ", "s4", {"kinds": [8000]})
        return over, replaced, count, after_close

    over, replaced, count, after_close = run(
        db_url, key, world, scenario, limits=Limits(max_subscriptions=3)
    )
    assert over[0][:2] == ["CLOSED", "s3"] and over[0][2].startswith("rate-limited:")
    assert replaced[-1] == ["EOSE", "s0"] and count == 3
    assert after_close[-1] == ["EOSE", "s4"]


def test_reqs_at_once_read_a_bounded_number_at_a_time(db_url, key, world, reader):
    """Thousands of clients subscribing at once (after a restart) wait for their stored
    events behind MAX_STORED_READS reads, not each in the pool's own queue; all are answered."""
    n = 3 * MAX_STORED_READS
    reads = {"now": 0, "most": 0}

    class Counting(DatabaseBackend):
        async def live_list(self, community):
            reads["now"] += 1
            reads["most"] = max(reads["most"], reads["now"])
            try:
                return await super().live_list(community)
            finally:
                reads["now"] -= 1

    async def main():
        async with backend_on(db_url, key) as backend:
            counting = Counting(backend.pool, key)
            clients = [session(counting, key, world.cid, world.host) for _ in range(n)]
            return await asyncio.gather(*(c.send("REQ", "s", {"kinds": [13534]}) for c in clients))

    answers = asyncio.run(main())
    live = reader.member_list(world.cid)
    assert all(a == [["EVENT", "s", live], ["EOSE", "s"]] for a in answers)
    assert reads["most"] == MAX_STORED_READS


# ------------------------------------------------------------------ AUTH


def test_auth_accepts_this_connections_challenge_for_this_relay(db_url, key, world):
    async def scenario(c):
        answer = await c.send("AUTH", auth_event(world.member.secret, c.session.challenge, "wss://" + world.host))
        return answer, c.session.pubkey

    answer, pubkey = run(db_url, key, world, scenario)
    assert ok(answer) == (True, "")
    assert pubkey == world.member.pubkey


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize(
    "case", ["other_challenge", "other_relay", "stale", "future", "wrong_kind", "bad_sig", "no_tags"]
)
def test_auth_refusals(db_url, key, world, case):
    async def scenario(c):
        secret, challenge = world.member.secret, c.session.challenge
        url = f"wss://{world.host}"
        ev = {
            "other_challenge": lambda: auth_event(secret, "0" * 32, url),
            "other_relay": lambda: auth_event(secret, challenge, "wss://elsewhere.example.org"),
            "stale": lambda: auth_event(secret, challenge, url, created_at=int(time.time()) - 601),
            "future": lambda: auth_event(secret, challenge, url, created_at=int(time.time()) + 601),
            "wrong_kind": lambda: signed(secret, 1, [["relay", url], ["challenge", challenge]]),
            "bad_sig": lambda: {**auth_event(secret, challenge, url), "sig": "0" * 128},
            "no_tags": lambda: signed(secret, 22242),
        }[case]()
        return await c.send("AUTH", ev), c.session.pubkey

    answer, pubkey = run(db_url, key, world, scenario)
    accepted, reason = ok(answer)
    assert not accepted and reason.startswith("invalid:"), reason
    assert pubkey is None


def test_auth_attempts_are_rate_limited(db_url, key, world):
    async def scenario(c):
        answers = [await c.send("AUTH", auth_event(world.member.secret, "0" * 32, "x")) for _ in range(4)]
        return [ok(a)[1].split(":")[0] for a in answers]

    reasons = run(db_url, key, world, scenario, limits=Limits(auth_per_minute=3))
    assert reasons == ["invalid", "invalid", "invalid", "rate-limited"]


# ------------------------------------------------------------------ invites (28935)


def _invite(answer: list[list[Any]]) -> dict[str, Any]:
    [[verb, sub, event], eose] = answer
    assert (verb, eose) == ("EVENT", ["EOSE", sub])
    return event


def test_an_admin_gets_a_signed_one_use_invite(db_url, key, world, su):
    async def scenario(c):
        assert ok(await c.auth(world.admin.secret, f"ws://{world.host}"))[0]
        return await c.send("REQ", "inv", {"kinds": [28935]})

    event = _invite(run(db_url, key, world, scenario))
    verify_both(event)
    assert event["pubkey"] == key.pubkey and event["kind"] == 28935 and event["content"] == ""
    [dash, claim, p, expiration] = event["tags"]
    assert dash == ["-"] and claim[0] == "claim" and p == ["p", world.admin.pubkey]
    assert expiration[0] == "expiration"
    assert abs(int(expiration[1]) - (time.time() + 72 * 3600)) < 60
    row = su.execute(
        "SELECT created_by, max_uses, use_count FROM buzz_private.relay_invites"
        " WHERE community_id = %s",
        (world.cid,),
    ).fetchall()
    assert row == [(world.admin.pubkey, 1, 0)]


@pytest.mark.parametrize(("who", "prefix"), [(None, "auth-required:"), ("stranger", "restricted:")])
def test_invite_refusals(db_url, key, world, su, who, prefix):
    async def scenario(c):
        if who is not None:
            await c.auth(Person.new().secret, f"ws://{world.host}")
        return await c.send("REQ", "inv", {"kinds": [28935]})

    [[verb, sub, reason]] = run(db_url, key, world, scenario)
    assert (verb, sub) == ("CLOSED", "inv") and reason.startswith(prefix), reason
    count = su.execute("SELECT count(*) FROM buzz_private.relay_invites").fetchone()[0]
    assert count == 0


def _mint(db_url: str, key: RelayKey, world: World, person: Person, times: int) -> list[Any]:
    """What `times` 28935 REQs of `person`, AUTHed, are answered: the invite event, or the
    CLOSED reason."""

    async def scenario(c):
        assert ok(await c.auth(person.secret, f"ws://{world.host}"))[0]
        answers = []
        for i in range(times):
            answer = await c.send("REQ", f"inv{i}", {"kinds": [28935]})
            answers.append(answer[0][2] if answer[0][0] == "CLOSED" else _invite(answer))
        return answers

    return run(db_url, key, world, scenario)


def _invites_of(su: Any, world: World) -> list[tuple[str, int | None]]:
    return su.execute(
        "SELECT created_by, max_uses FROM buzz_private.relay_invites WHERE community_id = %s",
        (world.cid,),
    ).fetchall()


def test_a_member_mints_by_the_quota_then_is_refused_in_words(db_url, key, world, su):
    assert world.mem.set_invite_quota(world.cid, "member", 1) == "updated"
    first, second = _mint(db_url, key, world, world.member, 2)
    assert first["kind"] == 28935 and first["tags"][2] == ["p", world.member.pubkey]
    verify_both(first)
    assert second == "restricted: you have no invites left."
    assert _invites_of(su, world) == [(world.member.pubkey, 1)]
    assert world.mem.invites_left(world.cid, world.member.pubkey) == 0
    # The invite used, its newcomer a member: still none left (they count against the quota).
    code = first["tags"][1][1]
    assert world.mem.claim_relay_invite(world.cid, code, new_pubkey()).outcome == "joined"
    assert _mint(db_url, key, world, world.member, 1) == ["restricted: you have no invites left."]
    # A quota raised: one more.
    world.mem.set_invite_quota(world.cid, "member", 2)
    assert _mint(db_url, key, world, world.member, 1)[0]["kind"] == 28935
    assert len(_invites_of(su, world)) == 2


def test_a_member_by_default_is_refused_in_words(db_url, key, world, su):
    assert world.mem.invite_quotas(world.cid) == {"admin": None, "member": 0}
    assert _mint(db_url, key, world, world.member, 1) == ["restricted: you have no invites left."]
    assert _invites_of(su, world) == []


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_the_owner_and_an_admin_by_default_mint_freely(db_url, key, world, su, who):
    person = getattr(world, who)
    minted = _mint(db_url, key, world, person, 4)
    assert [m["kind"] for m in minted] == [28935] * 4
    assert len({m["tags"][1][1] for m in minted}) == 4
    assert _invites_of(su, world) == [(person.pubkey, 1)] * 4


def test_an_admin_quota_binds_admins_and_never_the_owner(db_url, key, world, su):
    world.mem.set_invite_quota(world.cid, "admin", 0)
    assert _mint(db_url, key, world, world.admin, 1) == ["restricted: you have no invites left."]
    assert _mint(db_url, key, world, world.owner, 1)[0]["kind"] == 28935
    assert _invites_of(su, world) == [(world.owner.pubkey, 1)]


def test_invites_are_rate_limited_per_pubkey(db_url, key, world, su):
    async def scenario(c):
        await c.auth(world.admin.secret, f"ws://{world.host}")
        return [(await c.send("REQ", f"i{i}", {"kinds": [28935]}))[0][0] for i in range(4)]

    verbs = run(db_url, key, world, scenario, limits=Limits(invites_per_hour=3))
    assert verbs == ["EVENT", "EVENT", "EVENT", "CLOSED"]
    assert su.execute("SELECT count(*) FROM buzz_private.relay_invites").fetchone()[0] == 3


# ------------------------------------------------------------------ join (28934) and leave (28936)


def _code(mem: Membership, world: World, **kw: Any) -> str:
    return mem.create_relay_invite(world.cid, world.admin.pubkey, **kw).code


def test_join_outcomes(db_url, key, world, su, reader):
    joiner, again, late = Person.new(), Person.new(), Person.new()
    one_use = _code(world.mem, world)
    expiring = _code(world.mem, world, ttl=dt.timedelta(minutes=5))
    su.execute("UPDATE buzz_private.relay_invites SET expires_at = now() - interval '1 second'"
               " WHERE expires_at < now() + interval '10 minutes'")

    async def scenario(c):
        return [
            ok(await c.send("EVENT", signed(joiner.secret, 28934, [["claim", one_use]]))),
            ok(await c.send("EVENT", signed(joiner.secret, 28934, [["claim", one_use]]))),
            ok(await c.send("EVENT", signed(again.secret, 28934, [["claim", one_use]]))),
            ok(await c.send("EVENT", signed(late.secret, 28934, [["claim", expiring]]))),
            ok(await c.send("EVENT", signed(late.secret, 28934, [["claim", "ab" * 16]]))),
        ]

    assert run(db_url, key, world, scenario) == [
        (True, f"info: welcome to {world.host}!"),
        (True, "duplicate: you are already a member of this relay."),
        (False, "restricted: that invite code has been used up."),
        (False, "restricted: that invite code is expired."),
        (False, "restricted: that invite code is invalid."),
    ]
    members = members_of(reader, world.cid)
    assert members[joiner.pubkey] == "member"
    assert again.pubkey not in members and late.pubkey not in members
    assert reader.member_list_drift(world.cid) == []


@pytest.mark.parametrize("case", ["long_claim", "stale", "protected_without_auth", "bad_sig"])
def test_join_refusals_change_nothing(db_url, key, world, reader, case):
    joiner = Person.new()
    code = _code(world.mem, world)
    before = members_of(reader, world.cid)

    async def scenario(c):
        ev = {
            "long_claim": lambda: signed(joiner.secret, 28934, [["claim", "x" * 257]]),
            "stale": lambda: signed(joiner.secret, 28934, [["claim", code]], created_at=1),
            "protected_without_auth": lambda: signed(joiner.secret, 28934, [["-"], ["claim", code]]),
            "bad_sig": lambda: {**signed(joiner.secret, 28934, [["claim", code]]), "content": "x"},
        }[case]()
        return ok(await c.send("EVENT", ev))

    accepted, reason = run(db_url, key, world, scenario)
    prefix = "auth-required:" if case == "protected_without_auth" else "invalid:"
    assert not accepted and reason.startswith(prefix), reason
    assert members_of(reader, world.cid) == before


def test_a_protected_join_from_its_authed_author_is_accepted(db_url, key, world, reader):
    joiner = Person.new()
    code = _code(world.mem, world)

    async def scenario(c):
        await c.auth(joiner.secret, f"ws://{world.host}")
        return ok(await c.send("EVENT", signed(joiner.secret, 28934, [["-"], ["claim", code]])))

    assert run(db_url, key, world, scenario)[0] is True
    assert joiner.pubkey in members_of(reader, world.cid)


@pytest.mark.parametrize("tags", [[["-"]], []], ids=["protected", "without_dash"])
def test_leave_outcomes(db_url, key, world, reader, tags):
    stranger = Person.new()

    async def leave(c, person):
        await c.auth(person.secret, f"ws://{world.host}")
        return ok(await c.send("EVENT", signed(person.secret, 28936, tags)))

    async def scenario(c):
        return [await leave(c, world.member), await leave(c, stranger), await leave(c, world.owner)]

    assert run(db_url, key, world, scenario) == [
        (True, ""),
        (False, "restricted: you are not a member of this relay."),
        (False, "restricted: the owner cannot leave; transfer ownership first."),
    ]
    members = members_of(reader, world.cid)
    assert world.member.pubkey not in members and world.owner.pubkey in members


@pytest.mark.parametrize(
    "case", ["not_authed", "authed_as_other", "stale", "no_dash_not_authed", "no_dash_as_other"]
)
def test_leave_refusals_change_nothing(db_url, key, world, reader, case):
    before = members_of(reader, world.cid)
    member = world.member

    async def scenario(c):
        if case.endswith("as_other"):
            await c.auth(world.admin.secret, f"ws://{world.host}")
        elif not case.endswith("not_authed"):
            await c.auth(member.secret, f"ws://{world.host}")
        tags = [] if case.startswith("no_dash") else [["-"]]
        created_at = 1 if case == "stale" else None
        return ok(await c.send("EVENT", signed(member.secret, 28936, tags, created_at=created_at)))

    accepted, reason = run(db_url, key, world, scenario)
    prefix = "invalid:" if case == "stale" else "auth-required:"
    assert not accepted and reason.startswith(prefix), reason
    assert members_of(reader, world.cid) == before


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize("kind", [13534, 8000, 8001, 33534, 28935, 5])
def test_relay_kinds_from_clients_are_blocked(db_url, key, world, kind):
    async def scenario(c):
        return ok(await c.send("EVENT", signed(world.owner.secret, kind, [["-"]])))

    assert run(db_url, key, world, scenario) == (False, f"blocked: only the relay publishes kind {kind}")


def test_other_kinds_are_blocked(db_url, key, world):
    async def scenario(c):
        return ok(await c.send("EVENT", signed(world.owner.secret, 1, [], "hello")))

    accepted, reason = run(db_url, key, world, scenario)
    assert not accepted and reason.startswith("blocked:")


def test_joins_on_an_archived_community_are_restricted(db_url, key, world, reader):
    code = _code(world.mem, world)
    world.mem.archive_community(world.cid)

    async def scenario(c):
        return ok(await c.send("EVENT", signed(Person.new().secret, 28934, [["claim", code]])))

    assert run(db_url, key, world, scenario) == (False, "restricted: this community is archived")


# ------------------------------------------------------------------ joins without a claim


WELCOME = "info: welcome to {host}!"
DUPLICATE = (True, "duplicate: you are already a member of this relay.")
CLOSED = (False, "restricted: this community requires a claim to join.")
PENDING = (False, "restricted: your request to join is pending approval.")
DECLINED = (False, "restricted: your request to join was declined; you may ask again later.")
BANNED = (False, "blocked: you are banned from this community.")


def _pending(reader: Membership, world: World) -> list[tuple[str, str, str | None]]:
    return [(r.request_id, r.pubkey, r.note) for r in reader.join_requests(world.cid)]


def _join_rows(su: Any, world: World) -> list[tuple[Any, ...]]:
    """Every join request row of the community, pending or rejected."""
    return su.execute(
        "SELECT request_id, pubkey, note, rejected_at IS NOT NULL FROM buzz_private.join_requests"
        " WHERE community_id = %s ORDER BY requested_at, request_id",
        (world.cid,),
    ).fetchall()


@pytest.mark.parametrize("tags", [[], [["claim", ""]], [["claim"]]], ids=["none", "empty", "bare"])
def test_a_claimless_join_under_invite_is_closed(db_url, key, world, reader, su, tags):
    stranger = Person.new()
    before = state(reader, world.cid)

    async def scenario(c):
        return [
            ok(await c.send("EVENT", signed(stranger.secret, 28934, tags, "let me in"))),
            ok(await c.send("EVENT", signed(world.member.secret, 28934, tags))),
        ]

    assert run(db_url, key, world, scenario) == [CLOSED, DUPLICATE]
    assert state(reader, world.cid) == before
    assert _join_rows(su, world) == []


@pytest.mark.parametrize("tags", [[], [["claim", ""]]], ids=["none", "empty"])
def test_a_claimless_join_under_request_is_kept_pending(db_url, key, world, reader, tags):
    assert world.mem.set_join_policy(world.cid, "request") == "updated"
    asker = Person.new()
    before = state(reader, world.cid)
    first = signed(asker.secret, 28934, tags, "  hello, I run the Tuesday meetup  ")
    again = signed(asker.secret, 28934, tags, "me again")

    async def scenario(c):
        return [
            ok(await c.send("EVENT", first)),
            ok(await c.send("EVENT", again)),
            ok(await c.send("EVENT", signed(world.member.secret, 28934, tags))),
        ]

    assert run(db_url, key, world, scenario) == [PENDING, PENDING, DUPLICATE]
    # One pending request, the first, with its note; no member until an admin approves.
    assert _pending(reader, world) == [(first["id"], asker.pubkey, "hello, I run the Tuesday meetup")]
    assert state(reader, world.cid) == before
    approved = world.mem.approve_join_request(world.cid, first["id"], world.admin.pubkey)
    assert approved.outcome == "joined"
    assert members_of(reader, world.cid)[asker.pubkey] == "member"


def test_a_claimless_join_under_open_joins(db_url, key, world, reader):
    assert world.mem.set_join_policy(world.cid, "open") == "updated"
    newcomer = Person.new()

    async def scenario(c):
        return [
            ok(await c.send("EVENT", signed(newcomer.secret, 28934, [["claim", ""]]))),
            ok(await c.send("EVENT", signed(newcomer.secret, 28934, []))),
        ]

    assert run(db_url, key, world, scenario) == [
        (True, WELCOME.format(host=world.host)),
        DUPLICATE,
    ]
    assert members_of(reader, world.cid)[newcomer.pubkey] == "member"
    assert newcomer.pubkey in {t[1] for t in reader.member_list(world.cid)["tags"][1:]}
    assert _pending(reader, world) == []
    assert reader.member_list_drift(world.cid) == []


def test_a_declined_request_is_told_so(db_url, key, world, reader, su):
    world.mem.set_join_policy(world.cid, "request")
    asker = Person.new()
    asked = signed(asker.secret, 28934, [])

    async def ask(c):
        return ok(await c.send("EVENT", signed(asker.secret, 28934, [], "please")))

    assert run(db_url, key, world, lambda c: _send_ok(c, asked)) == PENDING
    assert world.mem.reject_join_request(world.cid, asked["id"], "not now") == "rejected"
    assert run(db_url, key, world, ask) == DECLINED
    assert _pending(reader, world) == []
    assert _join_rows(su, world) == [(asked["id"], asker.pubkey, None, True)]
    assert asker.pubkey not in members_of(reader, world.cid)


async def _send_ok(c, event):
    return ok(await c.send("EVENT", event))


def test_a_request_note_is_the_content_cut_and_cleaned(db_url, key, world, reader):
    world.mem.set_join_policy(world.cid, "request")
    people = [Person.new() for _ in range(3)]
    events = [
        signed(people[0].secret, 28934, [], "é" * 1500),
        signed(people[1].secret, 28934, [], "bell\x07 and\x00 nul\ttab\nline"),
        signed(people[2].secret, 28934, [], " \n "),
    ]

    async def scenario(c):
        return [await _send_ok(c, ev) for ev in events]

    assert run(db_url, key, world, scenario) == [PENDING] * 3
    notes = {pubkey: note for _, pubkey, note in _pending(reader, world)}
    assert notes == {
        people[0].pubkey: "é" * 1000,
        people[1].pubkey: "bell and nul\ttab\nline",
        people[2].pubkey: None,
    }


def test_a_protected_claimless_join_needs_its_author(db_url, key, world, reader, su):
    world.mem.set_join_policy(world.cid, "open")
    newcomer = Person.new()
    protected = signed(newcomer.secret, 28934, [["-"]])

    async def scenario(c):
        refused = ok(await c.send("EVENT", protected))
        await c.auth(world.member.secret, f"ws://{world.host}")
        as_other = ok(await c.send("EVENT", protected))
        await c.auth(newcomer.secret, f"ws://{world.host}")
        return refused, as_other, ok(await c.send("EVENT", signed(newcomer.secret, 28934, [["-"]])))

    refused, as_other, accepted = run(db_url, key, world, scenario)
    assert not refused[0] and refused[1].startswith("auth-required:")
    assert not as_other[0] and as_other[1].startswith("auth-required:")
    assert accepted == (True, WELCOME.format(host=world.host))
    assert members_of(reader, world.cid)[newcomer.pubkey] == "member"


@pytest.mark.parametrize("case", ["stale", "bad_sig"])
def test_claimless_refusals_change_nothing(db_url, key, world, reader, su, case):
    world.mem.set_join_policy(world.cid, "open")
    newcomer = Person.new()
    before = state(reader, world.cid)
    ev = {
        "stale": lambda: signed(newcomer.secret, 28934, [], created_at=int(time.time()) - 601),
        "bad_sig": lambda: {**signed(newcomer.secret, 28934, []), "content": "x"},
    }[case]()

    accepted, reason = run(db_url, key, world, lambda c: _send_ok(c, ev))
    assert not accepted and reason.startswith("invalid:"), reason
    assert state(reader, world.cid) == before
    assert _join_rows(su, world) == []


@pytest.mark.parametrize("policy", ["invite", "request", "open"])
def test_a_banned_key_is_blocked_with_or_without_a_claim(db_url, key, world, reader, su, policy):
    world.mem.set_join_policy(world.cid, policy)
    banned = Person.new()
    assert world.mem.ban_pubkey(world.cid, banned.pubkey, "spam").outcome == "banned"
    code = _code(world.mem, world)
    before = state(reader, world.cid)

    async def scenario(c):
        await c.auth(banned.secret, f"ws://{world.host}")
        return [
            ok(await c.send("EVENT", signed(banned.secret, 28934, [["claim", code]]))),
            ok(await c.send("EVENT", signed(banned.secret, 28934, [["-"], ["claim", code]]))),
            ok(await c.send("EVENT", signed(banned.secret, 28934, [], "let me back"))),
            ok(await c.send("EVENT", signed(banned.secret, 28934, [["claim", ""]]))),
        ]

    assert run(db_url, key, world, scenario) == [BANNED] * 4
    assert state(reader, world.cid) == before
    assert _join_rows(su, world) == []
    [invite] = world.mem.relay_invites(world.cid)
    assert invite.use_count == 0


# ------------------------------------------------------------------ failed claims


def age_failed_claims(su: Any, seconds: int) -> None:
    """Move every failed claim counted so far `seconds` into the past (the window is the
    database's, buzz.take_rate)."""
    su.execute(
        "UPDATE buzz_private.rate_windows"
        " SET hits = ARRAY(SELECT h - make_interval(secs => %s) FROM unnest(hits) h),"
        " expires_at = expires_at - make_interval(secs => %s)"
        " WHERE scope = 'failed_claim'",
        (seconds, seconds),
    )


def run_sessions(db_url: str, key: RelayKey, world: World, scenario: Any) -> Any:
    """Run `scenario(connect)`, where `connect(**kw)` opens a session of `world`'s community."""

    async def main() -> Any:
        async with backend_on(db_url, key) as backend:
            return await scenario(lambda **kw: session(backend, key, world.cid, world.host, **kw))

    return asyncio.run(main())


def _claim(person: Person, code: str) -> dict[str, Any]:
    return signed(person.secret, 28934, [["claim", code]])


LIMITED = (False, "rate-limited: too many failed claims; try again later.")
USED_UP = (False, "restricted: that invite code has been used up.")
EXPIRED = (False, "restricted: that invite code is expired.")
INVALID = (False, "restricted: that invite code is invalid.")


def _failing_codes(world: World, su: Any) -> tuple[str, str, str]:
    """An expired code, a used-up code and a code that never was."""
    expired = _code(world.mem, world, ttl=dt.timedelta(minutes=5))
    su.execute(
        "UPDATE buzz_private.relay_invites SET expires_at = now() - interval '1 second'"
        " WHERE community_id = %s",
        (world.cid,),
    )
    used_up = _code(world.mem, world)
    world.mem.claim_relay_invite(world.cid, used_up, new_pubkey())
    return expired, used_up, "cd" * 16


def test_failed_claims_are_limited_per_pubkey(db_url, key, world, reader, su):
    failing = _failing_codes(world, su)
    right = _code(world.mem, world, max_uses=None)
    guesser, other = Person.new(), Person.new()
    limits = Limits(max_failed_claims=3)

    async def scenario(connect):
        here = connect(address="192.0.2.1", limits=limits)
        failed = [await _send_ok(here, _claim(guesser, code)) for code in failing]
        # Elsewhere, the same pubkey: its right code is refused unread; another pubkey joins.
        there = connect(address="198.51.100.7", limits=limits)
        limited = [
            await _send_ok(there, _claim(guesser, right)),
            await _send_ok(there, _claim(guesser, "cd" * 16)),
        ]
        before = (state(reader, world.cid), world.mem.relay_invites(world.cid))
        other_joined = await _send_ok(there, _claim(other, right))
        age_failed_claims(su, FAILED_CLAIM_SECONDS - 1)
        still = await _send_ok(there, _claim(guesser, right))
        age_failed_claims(su, 1)
        after_window = await _send_ok(there, _claim(guesser, right))
        return failed, limited, before, other_joined, still, after_window

    failed, limited, before, other_joined, still, after_window = run_sessions(
        db_url, key, world, scenario
    )
    assert failed == [EXPIRED, USED_UP, INVALID]
    assert limited == [LIMITED, LIMITED]
    members, invites = before[0][1], before[1]
    assert guesser.pubkey not in members
    assert [i.use_count for i in invites if i.max_uses is None] == [0]
    assert other_joined == (True, WELCOME.format(host=world.host))
    assert still == LIMITED
    assert after_window == (True, WELCOME.format(host=world.host))
    assert {guesser.pubkey, other.pubkey} <= set(members_of(reader, world.cid))


def test_failed_claims_are_limited_per_address(db_url, key, world, reader, su):
    right = _code(world.mem, world, max_uses=None)
    guessers = [Person.new() for _ in range(3)]
    late, elsewhere, after = Person.new(), Person.new(), Person.new()
    limits = Limits(max_failed_claims=3)

    async def scenario(connect):
        failed = []
        for person in guessers:  # one connection each, one address
            c = connect(address="192.0.2.1", limits=limits)
            failed.append(await _send_ok(c, _claim(person, "ef" * 16)))
        same_address = connect(address="192.0.2.1", limits=limits)
        limited = await _send_ok(same_address, _claim(late, right))
        # A claim that is not a guess is not counted, nor refused: a claimless join.
        claimless = await _send_ok(same_address, signed(late.secret, 28934, []))
        before = state(reader, world.cid)
        other_address = connect(address="198.51.100.7", limits=limits)
        joined_elsewhere = await _send_ok(other_address, _claim(elsewhere, right))
        age_failed_claims(su, FAILED_CLAIM_SECONDS)
        joined_after = await _send_ok(same_address, _claim(after, right))
        return failed, limited, claimless, before, joined_elsewhere, joined_after

    failed, limited, claimless, before, joined_elsewhere, joined_after = run_sessions(
        db_url, key, world, scenario
    )
    assert failed == [INVALID] * 3
    assert limited == LIMITED
    assert claimless == CLOSED
    assert late.pubkey not in before[1]
    [invite] = [i for i in world.mem.relay_invites(world.cid) if i.max_uses is None]
    assert invite.use_count == 2  # elsewhere and after; never late
    assert joined_elsewhere == joined_after == (True, WELCOME.format(host=world.host))
    members = members_of(reader, world.cid)
    assert late.pubkey not in members and {elsewhere.pubkey, after.pubkey} <= set(members)


def test_joins_and_bans_do_not_count_as_failed_claims(db_url, key, world):
    right = _code(world.mem, world, max_uses=None)
    banned = Person.new()
    world.mem.ban_pubkey(world.cid, banned.pubkey)
    async def scenario(connect):
        c = connect(address="192.0.2.1", limits=Limits(max_failed_claims=2))
        answers = [await _send_ok(c, _claim(banned, right)) for _ in range(3)]
        answers += [await _send_ok(c, _claim(world.member, right)) for _ in range(3)]
        answers.append(await _send_ok(c, _claim(Person.new(), right)))
        return answers

    assert run_sessions(db_url, key, world, scenario) == [BANNED] * 3 + [DUPLICATE] * 3 + [
        (True, WELCOME.format(host=world.host))
    ]


# ------------------------------------------------------------------ live events


def _wire(ev: dict[str, Any]) -> WireEvent:
    tags = {"p": (ev["tags"][1][1],)} if ev["kind"] in (8000, 8001) else {}
    return WireEvent(ev["id"], ev["pubkey"], ev["kind"], ev["created_at"], json.dumps(ev), tags)


def test_deliver_sends_each_event_once_to_the_subscriptions_it_matches(db_url, key, world):
    joiner = new_pubkey()

    async def scenario(c):
        await c.send("REQ", "lists", {"kinds": [13534]})
        await c.send("REQ", "adds", {"kinds": [8000], "#p": [joiner]})
        await c.send("REQ", "others", {"kinds": [8000], "#p": [new_pubkey()]})
        await c.send("REQ", "removals", {"kinds": [8001]})
        write = world.mem.add_relay_member(world.cid, joiner)  # commits after the REQs
        events = [_wire(ev) for ev in write.events]
        first = [json.loads(m) for m in c.session.deliver(events)]
        return write, first, c.session.deliver(events)

    write, first, again = run(db_url, key, world, scenario)
    listed, added = write.events
    assert first == [["EVENT", "lists", listed], ["EVENT", "adds", added]]
    assert again == []


def test_events_committed_during_the_stored_read_follow_eose(db_url, key, world):
    async def scenario(c):
        backend = c.session._backend
        real = backend.live_list
        committed = []

        async def live_list_then_a_commit(cid):
            answer = await real(cid)
            # A write commits after the stored list was read, before the 8000s are, and its
            # announcement reaches the session before the stored answer is complete.
            write = world.mem.add_relay_member(world.cid, new_pubkey())
            committed.append(write)
            assert c.session.deliver([_wire(ev) for ev in write.events]) == []
            return answer

        backend.live_list = live_list_then_a_commit
        return await c.send("REQ", "s", {"kinds": [13534, 8000]}), committed[0]

    answer, write = run(db_url, key, world, scenario)
    new_list, new_add = write.events
    eose = answer.index(["EOSE", "s"])
    stored, live = answer[:eose], answer[eose + 1 :]
    assert stored[0][2]["id"] != new_list["id"]  # the list read before the commit
    assert ["EVENT", "s", new_add] in stored  # read by the events query after the commit
    assert live == [["EVENT", "s", new_list]]  # sent once, after EOSE; the 8000 not again


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize(
    "fields",
    [
        {"#p": ["0" * 64]},
        {"authors": ["0" * 64]},
        {"ids": ["0" * 64]},
        {"since": 4_000_000_000},
        {"until": 1000},
        {"limit": 0},
    ],
)
def test_no_invite_is_minted_for_a_filter_it_would_not_match(db_url, key, world, su, fields):
    async def scenario(c):
        await c.auth(world.admin.secret, f"ws://{world.host}")
        return await c.send("REQ", "inv", {"kinds": [28935], **fields})

    assert run(db_url, key, world, scenario) == [["EOSE", "inv"]]
    assert su.execute("SELECT count(*) FROM buzz_private.relay_invites").fetchone()[0] == 0


def test_an_invite_filter_naming_the_requester_and_relay_gets_one(db_url, key, world):
    async def scenario(c):
        await c.auth(world.admin.secret, f"ws://{world.host}")
        f = {"kinds": [28935], "authors": [key.pubkey], "#p": [world.admin.pubkey], "limit": 1}
        return await c.send("REQ", "inv", f)

    assert _invite(run(db_url, key, world, scenario))["kind"] == 28935


def test_the_size_limit_counts_bytes_not_characters(db_url, key, world):
    text = json.dumps(["REQ", "s", {"#p": ["€" * 400]}], ensure_ascii=False)  # 3 bytes each

    async def scenario(c):
        return await c.raw(text)

    assert len(text) < 1000 < len(text.encode())
    [[verb, reason]] = run(db_url, key, world, scenario, limits=Limits(max_message_bytes=1000))
    assert verb == "NOTICE" and "too large" in reason


# ------------------------------------------------------------------ roles (33534 and kind 5)


def _events_of(answer: list[list[Any]], sub: str) -> list[dict[str, Any]]:
    """The EVENTs of a stored answer, which must end with its EOSE."""
    assert answer[-1] == ["EOSE", sub], answer
    assert all(m[:2] == ["EVENT", sub] for m in answer[:-1]), answer
    return [m[2] for m in answer[:-1]]


def _newest_first(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: e["created_at"], reverse=True)


def _defined(world: World) -> dict[str, dict[str, Any]]:
    """The community's live 33534s by role id, each verified."""
    found = {}
    for ev in world.mem.role_definitions(world.cid):
        verify_both(ev)
        found[ev["tags"][1][1]] = ev
    return found


def test_req_answers_the_role_definitions(db_url, key, world):
    world.mem.define_role(world.cid, "mod", "Moderator", "Keeps order", 200, 5)
    world.mem.define_role(world.cid, "vip", "VIP")
    defined = _defined(world)
    assert sorted(defined) == ["admin", "member", "mod", "owner", "vip"]
    vip, mod = defined["vip"], defined["mod"]
    assert vip["created_at"] > mod["created_at"] > defined["owner"]["created_at"]
    assert mod["tags"] == [
        ["-"], ["d", "mod"], ["label", "Moderator"], ["description", "Keeps order"],
        ["color", "200"], ["order", "5"],
    ]
    stranger = new_pubkey()

    async def scenario(c):
        return {
            "all": await c.send("REQ", "a", {"kinds": [33534]}),
            "d": await c.send("REQ", "d", {"kinds": [33534], "#d": ["vip", "nope"]}),
            "d-none": await c.send("REQ", "n", {"kinds": [33534], "#d": ["nope"]}),
            "relay": await c.send("REQ", "r", {"kinds": [33534], "authors": [key.pubkey]}),
            "both": await c.send("REQ", "b", {"kinds": [33534], "authors": [stranger, key.pubkey]}),
            "stranger": await c.send("REQ", "x", {"kinds": [33534], "authors": [stranger]}),
            "limit": await c.send("REQ", "l", {"kinds": [33534], "limit": 1}),
            "limit0": await c.send("REQ", "z", {"kinds": [33534], "limit": 0}),
            "since": await c.send("REQ", "s", {"kinds": [33534], "since": mod["created_at"]}),
            "until": await c.send("REQ", "u", {"kinds": [33534], "until": mod["created_at"]}),
            "ids": await c.send("REQ", "i", {"ids": [mod["id"]]}),
            "p": await c.send("REQ", "p", {"kinds": [33534], "#p": [world.member.pubkey]}),
            "other-tag": await c.send("REQ", "t", {"kinds": [33534], "#t": ["vip"]}),
        }

    got = {name: _events_of(answer, answer[-1][1]) for name, answer in run(db_url, key, world, scenario).items()}
    every = _newest_first(list(defined.values()))
    assert got["all"] == got["relay"] == got["both"] == every
    assert got["d"] == [vip]
    assert got["d-none"] == got["stranger"] == got["limit0"] == got["p"] == got["other-tag"] == []
    assert got["limit"] == [vip]
    assert got["since"] == [vip, mod]
    assert got["until"] == [ev for ev in every if ev["created_at"] <= mod["created_at"]]
    assert mod in got["until"] and vip not in got["until"]
    assert got["ids"] == [mod]


def test_req_answers_the_relays_deletions_of_role_definitions(db_url, key, world):
    world.mem.define_role(world.cid, "mod", "Moderator")
    world.mem.define_role(world.cid, "vip", "VIP")
    world.mem.assign_role(world.cid, world.member.pubkey, "mod")
    deleted = world.mem.delete_role(world.cid, "mod")
    assert deleted.outcome == "deleted"
    (deletion,) = world.mem.role_deletions(world.cid)
    verify_both(deletion)
    address = f"33534:{key.pubkey}:mod"
    assert deletion["tags"] == [["-"], ["a", address], ["k", "33534"]]
    assert deletion in deleted.events
    live = world.mem.member_list(world.cid)

    async def scenario(c):
        return {
            "5": await c.send("REQ", "5", {"kinds": [5]}),
            "a": await c.send("REQ", "a", {"kinds": [5], "#a": [address]}),
            "a-other": await c.send("REQ", "o", {"kinds": [5], "#a": [f"33534:{key.pubkey}:vip"]}),
            "k": await c.send("REQ", "k", {"kinds": [5], "#k": ["33534"], "authors": [key.pubkey]}),
            "k-other": await c.send("REQ", "q", {"kinds": [5], "#k": ["1"]}),
            "stranger": await c.send("REQ", "x", {"kinds": [5], "authors": [new_pubkey()]}),
            "defs": await c.send("REQ", "d", {"kinds": [33534], "#d": ["mod", "vip"]}),
            # A REQ mixing kinds is answered per filter, newest first over them all.
            "mixed": await c.send("REQ", "m", {"kinds": [13534, 33534, 5], "limit": 2}),
            "two": await c.send("REQ", "t", {"kinds": [5]}, {"kinds": [13534]}),
            "any": await c.send("REQ", "y", {}),
        }

    got = {name: _events_of(answer, answer[-1][1]) for name, answer in run(db_url, key, world, scenario).items()}
    assert got["5"] == got["a"] == got["k"] == [deletion]
    assert got["a-other"] == got["k-other"] == got["stranger"] == []
    assert [ev["tags"][1][1] for ev in got["defs"]] == ["vip"]  # mod is gone
    # delete_role published the kind 5 and the list without mod in one transaction.
    assert live["created_at"] == deletion["created_at"]
    assert ["member", world.member.pubkey, "member"] in live["tags"]
    assert {ev["id"] for ev in got["mixed"]} == {live["id"], deletion["id"]}
    assert {ev["id"] for ev in got["two"]} == {live["id"], deletion["id"]}
    # Without kinds: every stored kind, the role events included.
    stored = (
        [live, *world.mem.membership_events(world.cid), *world.mem.role_definitions(world.cid), deletion]
    )
    assert sorted(ev["id"] for ev in got["any"]) == sorted(ev["id"] for ev in stored)


def test_member_tags_carry_defined_roles_and_nothing_breaks_on_them(db_url, key, world, reader):
    for role in ("vip", "mod"):
        world.mem.define_role(world.cid, role, role.upper())
        world.mem.assign_role(world.cid, world.member.pubkey, role)
    world.mem.assign_role(world.cid, world.admin.pubkey, "vip")
    live = reader.member_list(world.cid)
    verify_both(live)
    assert ["member", world.member.pubkey, "member", "mod", "vip"] in live["tags"]
    assert ["member", world.admin.pubkey, "admin", "vip"] in live["tags"]

    async def scenario(c):
        answer = await c.send("REQ", "l", {"kinds": [13534]})
        # The base role decides, whatever defined roles follow it in the tag.
        roles = [await c.session.role_of(p.pubkey) for p in (world.owner, world.admin, world.member)]
        # An admin holding a defined role mints invites as an admin.
        await c.auth(world.admin.secret, f"ws://{world.host}")
        invite = await c.send("REQ", "inv", {"kinds": [28935]})
        # A member holding defined roles leaves like any other.
        await c.auth(world.member.secret, f"ws://{world.host}")
        left = ok(await c.send("EVENT", signed(world.member.secret, 28936, [["-"]])))
        return answer, roles, invite, left

    answer, roles, invite, left = run(db_url, key, world, scenario)
    assert _events_of(answer, "l") == [live]
    assert roles == ["owner", "admin", "member"]
    assert _invite(invite)["kind"] == 28935
    assert left == (True, "")
    after = reader.member_list(world.cid)
    assert [t for t in after["tags"] if t[1:2] == [world.member.pubkey]] == []
    assert ["member", world.admin.pubkey, "admin", "vip"] in after["tags"]
    assert reader.member_list_drift(world.cid) == []


@PARSED_BY_THE_RELAY
@pytest.mark.parametrize(
    "kind, tags",
    [
        (33534, [["-"], ["d", "vip"], ["label", "VIP"]]),
        (33534, [["d", "admin"], ["label", "Admin"]]),
        (5, [["-"], ["a", "33534:{relay}:vip"], ["k", "33534"]]),
        (5, [["e", "0" * 64]]),
    ],
)
def test_role_events_from_clients_are_blocked(db_url, key, world, kind, tags):
    tags = [[v.format(relay=key.pubkey) for v in t] for t in tags]

    async def scenario(c):
        await c.auth(world.owner.secret, f"ws://{world.host}")
        return ok(await c.send("EVENT", signed(world.owner.secret, kind, tags)))

    before = world.mem.role_definitions(world.cid)
    assert run(db_url, key, world, scenario) == (False, f"blocked: only the relay publishes kind {kind}")
    assert world.mem.role_definitions(world.cid) == before
    assert world.mem.role_deletions(world.cid) == []


def test_deliver_sends_role_events_to_the_subscriptions_they_match(db_url, key, world):
    async def scenario(c):
        await c.send("REQ", "vip", {"kinds": [33534], "#d": ["vip"]})
        await c.send("REQ", "mod", {"kinds": [33534], "#d": ["mod"]})
        await c.send("REQ", "deletions", {"kinds": [5], "#k": ["33534"]})
        await c.send("REQ", "lists", {"kinds": [13534]})
        defined = world.mem.define_role(world.cid, "vip", "VIP", color=120)
        assigned = world.mem.assign_role(world.cid, world.member.pubkey, "vip")
        deleted = world.mem.delete_role(world.cid, "vip")
        out = []
        for write in (defined, assigned, deleted):
            events = [_role_wire(ev) for ev in write.events]
            out.append([json.loads(m) for m in c.session.deliver(events)])
        return defined, assigned, deleted, out

    defined, assigned, deleted, (first, middle, second) = run(db_url, key, world, scenario)
    (definition,) = defined.events  # a definition alone: no list
    assert definition["kind"] == 33534 and defined.snapshot is None
    assert first == [["EVENT", "vip", definition]]
    assert middle == [["EVENT", "lists", assigned.snapshot]]
    assert ["member", world.member.pubkey, "member", "vip"] in assigned.snapshot["tags"]
    # Deleting a role someone holds: its kind 5 and the list without it.
    by_kind = {ev["kind"]: ev for ev in deleted.events}
    assert sorted(by_kind) == [5, 13534]
    assert sorted(second, key=lambda m: m[1]) == [
        ["EVENT", "deletions", by_kind[5]],
        ["EVENT", "lists", by_kind[13534]],
    ]


def _role_wire(ev: dict[str, Any]) -> WireEvent:
    """A WireEvent as the backend builds it, tags of every kind included."""
    letters: dict[str, tuple[str, ...]] = {}
    for t in ev["tags"][1:] if ev["kind"] != 13534 else []:
        if len(t[0]) == 1 and t[0] not in letters:
            letters[t[0]] = (t[1],)
    return WireEvent(ev["id"], ev["pubkey"], ev["kind"], ev["created_at"], json.dumps(ev), letters)


def test_the_refusal_of_another_kind_names_the_served_ones(db_url, key, world):
    async def scenario(c):
        return await c.send("REQ", "s", {"kinds": [33534, 1]})

    [[verb, _sub, reason]] = run(db_url, key, world, scenario)
    assert verb == "CLOSED"
    assert reason.startswith("unsupported: kind 1 ") and "33534 and 5" in reason
