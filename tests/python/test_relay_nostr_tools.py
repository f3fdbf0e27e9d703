"""NIP-43 over the wire with nostr-tools, a JavaScript client library we did not write.

A running buzz-relay (``relay`` fixture) is driven by tests/node/nip43_client.mjs: a Node
script that takes a scenario (the relay's URL, the actors' secret keys, a list of steps) and
performs each step with nostr-tools (``Relay.connect``, ``relay.auth``, ``relay.subscribe``,
``relay.publish``, ``finalizeEvent``), printing one JSON line per observation. Every event the
client reports has passed nostr-tools' own ``verifyEvent`` (the script also reports it on a
fresh copy); the assertions here are on what the client saw, and on the database through SQL.

A ``pause`` step stops the script until this side has looked at (or changed) the database.
The driver and the steps are tests/python/node_clients.py's.
"""

from __future__ import annotations

import time

from fixtures_membership import expected_tags, members_of
from node_clients import (
    NODE_DIR,
    Run,
    auth,
    connect,
    named,
    pause,
    publish,
    req,
    run_client,
    tag_of,
)
from relay_fixtures import Person

pytest_plugins = ("fixtures_membership", "relay_fixtures", "node_clients")

SCRIPT = NODE_DIR / "nip43_client.mjs"






# ---------------------------------------------------------------------------- 1. the list


def test_list_read_with_nostr_tools(relay, node_client):
    run = run_client(
        node_client,
        relay,
        {"member": relay.member},
        [{"op": "info", "label": "nip11"}, connect("c"), req("c", "list", 13534)],
    )
    document = run.one("info", "nip11")["document"]
    assert document["self"] == relay.key.pubkey
    # SPEC section 7 also names 86 (the management API), which this relay does not serve yet.
    assert {1, 11, 42, 43, 70} <= set(document["supported_nips"])
    assert document["limitation"]["auth_required"] is False  # reads need no AUTH here
    (event,) = run.events("list")
    assert run.one("eose", "list")["step"] == 2
    assert event["kind"] == 13534
    assert event["pubkey"] == relay.key.pubkey
    assert event["content"] == ""
    members = members_of(relay.mem, relay.community_id)
    assert members == {
        relay.owner.pubkey: "owner",
        relay.admin.pubkey: "admin",
        relay.member.pubkey: "member",
    }
    assert event["tags"] == expected_tags(members)
    assert event == relay.mem.member_list(relay.community_id)
    # The EOSE came after the event, and nothing else came on that subscription.
    lines = [x["op"] for x in run.lines if x.get("label") == "list"]
    assert lines == ["event", "eose"]


# ---------------------------------------------------------------------------- 2. live push


def test_live_push_of_a_new_list_and_its_8000(relay, node_client):
    newcomer = Person.new()
    before = relay.mem.member_list(relay.community_id)
    writes = []

    def add_member(run: Run) -> None:
        # The subscription has had its EOSE: everything from here on is pushed live.
        assert run.where("eose", "live")
        writes.append(relay.mem.add_relay_member(relay.community_id, newcomer.pubkey))

    run = run_client(
        node_client,
        relay,
        {},
        [
            connect("c"),
            req("c", "live", 13534, 8000, keep=True),
            pause("after-eose"),
            {"op": "wait", "label": "live", "count": 2, "settleMs": 500},
        ],
        [add_member],
    )
    (write,) = writes
    assert write.outcome == "added"
    stored = run.events("live", live=False)
    assert [ev for ev in stored if ev["kind"] == 13534] == [before]
    assert {tag_of(ev, "p")[1] for ev in stored if ev["kind"] == 8000} == {
        relay.owner.pubkey,
        relay.admin.pubkey,
        relay.member.pubkey,
    }

    pushed = sorted(run.events("live", live=True), key=lambda ev: ev["kind"])
    assert [ev["kind"] for ev in pushed] == [8000, 13534], run
    added, new_list = pushed
    assert new_list == write.snapshot == relay.mem.member_list(relay.community_id)
    assert new_list["pubkey"] == relay.key.pubkey
    assert newcomer.pubkey in named(new_list)
    assert new_list["tags"] == expected_tags(members_of(relay.mem, relay.community_id))
    assert added["pubkey"] == relay.key.pubkey
    assert added["tags"] == [["-"], ["p", newcomer.pubkey]]
    assert added["content"] == ""
    assert added["created_at"] == new_list["created_at"]
    assert new_list["created_at"] > before["created_at"]


# ---------------------------------------------------------------------------- 3. invite flow


def test_invite_join_reuse_and_leave(relay, node_client):
    j1, j2, j3 = Person.new(), Person.new(), Person.new()
    welcome = f"info: welcome to {relay.host}!"
    checked = []

    def after_first_join(run: Run) -> None:
        assert run.ok("join1") == (True, welcome)
        assert members_of(relay.mem, relay.community_id)[j1.pubkey] == "member"
        assert j1.pubkey in named(relay.mem.member_list(relay.community_id))
        checked.append(True)

    started = time.time()
    run = run_client(
        node_client,
        relay,
        {"admin": relay.admin, "j1": j1, "j2": j2, "j3": j3},
        [
            # A watcher of every stored kind: it gets each list and 8000/8001, never an invite.
            connect("w"),
            req("w", "watch", keep=True, filters=[{}]),
            connect("a"),
            auth("a", "admin"),
            req("a", "inv1", 28935),
            req("a", "inv2", 28935),
            # A join without AUTH and without "-": the signature is enough.
            connect("c1"),
            publish("c1", "j1", "join1", 28934, [["claim", "@inv1"]]),
            pause("joined"),
            req("c1", "list1", 13534),
            # The NIP-70 variant: with "-", from a connection AUTHed as the author.
            connect("c2"),
            auth("c2", "j2"),
            publish("c2", "j2", "join2", 28934, [["-"], ["claim", "@inv2"]]),
            # The first invite is used up, for anyone else.
            connect("c3"),
            publish("c3", "j3", "reuse", 28934, [["claim", "@inv1"]]),
            # Its claimer, already a member, is told so (SPEC: checked before exhausted).
            publish("c1", "j1", "again", 28934, [["claim", "@inv1"]], createdAtOffset=-1),
            # Leave: AUTHed as itself, with "-".
            auth("c1", "j1"),
            publish("c1", "j1", "leave", 28936, [["-"]]),
            req("c1", "list2", 13534),
            # Three membership changes: each a list and an 8000 or 8001.
            {"op": "wait", "label": "watch", "count": 6, "settleMs": 500},
        ],
        [after_first_join],
    )
    assert checked
    assert run.ok("auth-a") == (True, "")
    invites = []
    for label in ("inv1", "inv2"):
        (invite,) = run.events(label)
        assert run.one("eose", label)
        assert [x["op"] for x in run.lines if x.get("label") == label] == ["event", "eose"]
        assert invite["kind"] == 28935
        assert invite["pubkey"] == relay.key.pubkey
        assert invite["content"] == ""
        assert [t[0] for t in invite["tags"]] == ["-", "claim", "p", "expiration"]
        assert invite["tags"][0] == ["-"]
        assert invite["tags"][2] == ["p", relay.admin.pubkey]
        code = tag_of(invite, "claim")[1]
        assert len(code) >= 22  # at least 128 bits, whatever the alphabet
        expiration = int(tag_of(invite, "expiration")[1])
        assert abs(expiration - (started + 72 * 3600)) < 60
        assert abs(invite["created_at"] - started) < 60
        invites.append(code)
    assert invites[0] != invites[1]

    (list1,) = run.events("list1")
    assert j1.pubkey in named(list1)
    assert run.ok("join2") == (True, welcome)
    assert run.ok("reuse") == (False, "restricted: that invite code has been used up.")
    assert run.ok("again") == (True, "duplicate: you are already a member of this relay.")
    assert run.ok("auth-c1") == (True, "")
    assert run.ok("leave") == (True, "")
    (list2,) = run.events("list2")
    assert j1.pubkey not in named(list2)
    assert j2.pubkey in named(list2)
    assert j3.pubkey not in named(list2)

    members = members_of(relay.mem, relay.community_id)
    assert members == {
        relay.owner.pubkey: "owner",
        relay.admin.pubkey: "admin",
        relay.member.pubkey: "member",
        j2.pubkey: "member",
    }
    assert list2 == relay.mem.member_list(relay.community_id)
    assert list2["tags"] == expected_tags(members)

    watched = [(ev["kind"], ev["tags"][1:]) for ev in run.events("watch", live=True)]
    assert sorted(watched[:2]) == [(8000, [["p", j1.pubkey]]), (13534, list1["tags"][1:])]
    (middle,) = [ev for ev in run.events("watch", live=True)[2:4] if ev["kind"] == 13534]
    assert min(watched[2:4]) == (8000, [["p", j2.pubkey]])
    assert named(middle) == named(list1) | {j2.pubkey}
    assert sorted(watched[4:]) == [(8001, [["p", j1.pubkey]]), (13534, list2["tags"][1:])]
    assert all(ev["kind"] != 28935 for ev in run.events("watch"))


# ---------------------------------------------------------------------------- 4. refusals


def test_refusals(relay, node_client):
    stranger = Person.new()
    before = relay.mem.member_list(relay.community_id)

    def nothing_changed(run: Run) -> None:
        assert relay.mem.member_list(relay.community_id) == before
        assert stranger.pubkey not in members_of(relay.mem, relay.community_id)

    run = run_client(
        node_client,
        relay,
        {"owner": relay.owner, "admin": relay.admin, "member": relay.member, "stranger": stranger},
        [
            connect("anon"),
            req("anon", "inv-anon", 28935),
            connect("m"),
            auth("m", "member"),
            req("m", "inv-member", 28935),
            publish("m", "member", "list", 13534, [["-"]]),
            publish("m", "member", "note", 1, [], content="hello"),
            publish("m", "member", "tampered", 28934, [["claim", "x"]], tamper=True),
            req("m", "kind1", 1),
            # A leave without "-" is taken from its AUTHed author only (SPEC §7).
            publish("anon", "member", "leave-no-dash", 28936, []),
            publish("m", "member", "leave-stale", 28936, [["-"]], createdAtOffset=-3600),
            publish("anon", "member", "leave-no-auth", 28936, [["-"]]),
            connect("x"),
            auth("x", "member", relayTag="wss://elsewhere.example.org"),
            connect("s"),
            auth("s", "stranger"),
            publish("s", "stranger", "leave-stranger", 28936, [["-"]]),
            connect("o"),
            auth("o", "owner"),
            publish("o", "owner", "leave-owner", 28936, [["-"]]),
            publish("s", "stranger", "bad-code", 28934, [["claim", "not-a-real-code"]]),
            connect("a"),
            auth("a", "admin"),
            req("a", "inv", 28935),
            publish("s", "stranger", "stale", 28934, [["claim", "@inv"]], createdAtOffset=-3600),
            publish("s", "stranger", "future", 28934, [["claim", "@inv"]], createdAtOffset=3600),
            publish("anon", "stranger", "dash-no-auth", 28934, [["-"], ["claim", "@inv"]]),
            pause("refused"),
            # Neither refusal used the invite.
            publish("s", "stranger", "fresh", 28934, [["claim", "@inv"]]),
        ],
        [nothing_changed],
    )
    assert run.closed("inv-anon").startswith("auth-required:")
    assert run.ok("auth-m") == (True, "")
    assert run.closed("inv-member").startswith("restricted:")
    assert run.ok("list") == (False, "blocked: only the relay publishes kind 13534")
    accepted, reason = run.ok("note")
    assert not accepted and reason.startswith("blocked:")
    accepted, reason = run.ok("tampered")
    assert not accepted and reason.startswith("invalid:")
    assert run.closed("kind1").startswith("unsupported:")
    accepted, reason = run.ok("leave-no-dash")
    assert not accepted and reason.startswith("auth-required:")
    accepted, reason = run.ok("leave-stale")
    assert not accepted and reason.startswith("invalid:")
    accepted, reason = run.ok("leave-no-auth")
    assert not accepted and reason.startswith("auth-required:")
    accepted, reason = run.ok("auth-x")
    assert not accepted and reason.startswith("invalid:")
    assert run.ok("auth-s") == (True, "")
    accepted, reason = run.ok("leave-stranger")
    assert not accepted and reason.startswith("restricted:")
    assert run.ok("auth-o") == (True, "")
    accepted, reason = run.ok("leave-owner")
    assert not accepted and reason.startswith("restricted:")
    assert run.ok("bad-code") == (False, "restricted: that invite code is invalid.")
    assert run.events("inv")
    accepted, reason = run.ok("stale")
    assert not accepted and reason.startswith("invalid:")
    accepted, reason = run.ok("future")
    assert not accepted and reason.startswith("invalid:")
    accepted, reason = run.ok("dash-no-auth")
    assert not accepted and reason.startswith("auth-required:")
    assert run.ok("fresh") == (True, f"info: welcome to {relay.host}!")

    members = members_of(relay.mem, relay.community_id)
    assert members == {
        relay.owner.pubkey: "owner",
        relay.admin.pubkey: "admin",
        relay.member.pubkey: "member",
        stranger.pubkey: "member",
    }


# ---------------------------------------------------------------------------- known relay bug


def test_invite_answer_matches_its_filter(relay, node_client):
    someone_else = Person.new().pubkey
    run = run_client(
        node_client,
        relay,
        {"admin": relay.admin},
        [
            connect("a"),
            auth("a", "admin"),
            req("a", "for-other", filters=[{"kinds": [28935], "#p": [someone_else]}]),
        ],
    )
    assert run.events("for-other") == []


# ---------------------------------------------------------------------------- 5. roles (SPEC §6)


def test_role_definitions_and_member_roles_with_nostr_tools(relay, node_client):
    """nostr-tools reads the role definitions (kind 33534, all of them and by #d), the list
    whose member tags carry defined roles after the base role, and the relay's kind 5
    deletions of definitions, stored and live; it verifies every event (verifyEvent) and
    checks that each matches its subscription's filter (else it reports an invalid event)."""
    cid, mem = relay.community_id, relay.mem
    mem.define_role(cid, "vip", "VIP", "Very important", 45, 3)
    mem.define_role(cid, "mod", "Moderator")
    with mem.transaction() as tx:
        tx.assign_role(cid, relay.member.pubkey, "vip")
        tx.assign_role(cid, relay.member.pubkey, "mod")
        tx.assign_role(cid, relay.admin.pubkey, "vip")
    live_list = mem.member_list(cid)
    writes = []

    def change_roles(run: Run) -> None:
        assert run.where("eose", "live")
        writes.append(mem.define_role(cid, "helper", "Helper", color=200))
        writes.append(mem.delete_role(cid, "mod"))

    address = f"33534:{relay.key.pubkey}:mod"
    run = run_client(
        node_client,
        relay,
        {},
        [
            connect("c"),
            req("c", "defs", 33534),
            req(
                "c",
                "vip",
                filters=[{"kinds": [33534], "#d": ["vip"], "authors": [relay.key.pubkey]}],
            ),
            req("c", "list", 13534),
            req("c", "none", 5),
            req("c", "live", keep=True, filters=[{"kinds": [33534, 5]}, {"kinds": [13534]}]),
            req("c", "by-a", keep=True, filters=[{"kinds": [5], "#a": [address], "#k": ["33534"]}]),
            pause("after-eose"),
            {"op": "wait", "label": "live", "count": 3, "settleMs": 500},
            {"op": "wait", "label": "by-a", "count": 1, "settleMs": 0},
            req("c", "after", 33534, 5),
        ],
        [change_roles],
    )
    stored = {ev["tags"][1][1]: ev for ev in run.events("defs")}
    assert sorted(stored) == ["admin", "member", "mod", "owner", "vip"]
    for ev in stored.values():
        assert ev["kind"] == 33534 and ev["pubkey"] == relay.key.pubkey and ev["content"] == ""
        assert ev["tags"][0] == ["-"]
    assert stored["vip"]["tags"] == [
        ["-"],
        ["d", "vip"],
        ["label", "VIP"],
        ["description", "Very important"],
        ["color", "45"],
        ["order", "3"],
    ]
    assert stored["owner"]["tags"] == [["-"], ["d", "owner"], ["label", "Owner"], ["order", "0"]]
    assert run.events("vip") == [stored["vip"]]
    assert run.events("none") == []

    (listed,) = run.events("list")
    assert listed == live_list
    assert ["member", relay.member.pubkey, "member", "mod", "vip"] in listed["tags"]
    assert ["member", relay.admin.pubkey, "admin", "vip"] in listed["tags"]
    assert ["member", relay.owner.pubkey, "owner"] in listed["tags"]

    defined, deleted = writes
    (helper,) = defined.events
    by_kind = {ev["kind"]: ev for ev in deleted.events}
    assert run.events("live", live=True) == [helper, by_kind[5], by_kind[13534]]
    assert run.events("by-a", live=True) == [by_kind[5]]
    assert by_kind[5]["tags"] == [["-"], ["a", address], ["k", "33534"]]
    assert ["member", relay.member.pubkey, "member", "vip"] in by_kind[13534]["tags"]
    after = run.events("after")
    assert sorted((ev["kind"], ev["tags"][1][1]) for ev in after) == [
        (5, address),
        *((33534, r) for r in ["admin", "helper", "member", "owner", "vip"]),
    ]
    assert {ev["id"] for ev in after} == {
        ev["id"] for ev in [*mem.role_definitions(cid), *mem.role_deletions(cid)]
    }
