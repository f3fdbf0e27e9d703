"""The Nostr clients people use, with their own libraries, against a running buzz-relay.

Each test plays what one client does, as its public code does it (docs/relay.md, "Clients"):

- Flotilla, with @welshman/util, net, signer and lib 0.8.15 (tests/node/flotilla_client.mjs):
  NIP-86 through welshman's makeHttpAuth and sendManagementRequest (what @welshman/app's
  manageRelay does), its invite link, its join (AUTH, then a 28934 on welshman's socket) and
  its leave (a 28936 without tags).
- Jumble and Fevela, built on nostr-tools (tests/node/nip43_client.mjs): the relay key from
  NIP-11 `pubkey`, their exact filters, AUTH after `auth-required:` and the same event again,
  Fevela's one-click join with an empty claim.
- Amethyst: its exact filter (no authors) and its 28934 without a claim and without `-`.
- A claimless join under each join policy, join requests approved and rejected through NIP-86
  (`allowevent`, `banevent`), and a banned key's ways back in (`allowpubkey`).

The client scripts get their keys on stdin, never on argv. The assertions are on what each
client saw and, through SQL, on what the database holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from fixtures_membership import members_of
from node_clients import (
    NODE_DIR,
    Run,
    auth,
    connect,
    named,
    node_with,
    pause,
    publish,
    req,
    run_scenario,
    tag_of,
)
from relay_fixtures import Person

from buzz_signer.nip19 import encode_npub

pytest_plugins = ("fixtures_membership", "relay_fixtures")

REQUIRES_CLAIM = "restricted: this community requires a claim to join."
PENDING = "restricted: your request to join is pending approval."
BANNED = "blocked: you are banned from this community."
DUPLICATE = "duplicate: you are already a member of this relay."


@pytest.fixture(scope="session")
def node() -> str:
    """Node, with tests/node's modules (nostr-tools, welshman) installed by npm ci if missing."""
    return node_with("nostr-tools", "ws", "@welshman/net", "@welshman/util", "@welshman/signer")


def run_script(
    node: str,
    script: str,
    relay: Any,
    keys: dict[str, Person],
    steps: Sequence[dict[str, Any]],
    pauses: Sequence[Callable[[Run], None]] = (),
) -> Run:
    return run_scenario([node, str(NODE_DIR / script)], relay, keys, steps, pauses)


def flotilla(node: str, relay: Any, keys: dict[str, Person], steps: list, pauses=()) -> Run:
    return run_script(node, "flotilla_client.mjs", relay, keys, steps, pauses)


def nostr_tools(node: str, relay: Any, keys: dict[str, Person], steps: list, pauses=()) -> Run:
    run = run_script(node, "nip43_client.mjs", relay, keys, steps, pauses)
    # Every event the relay sent passed nostr-tools' verification and its filter.
    assert not run.where("invalid_event"), run
    assert all(x["verify"] is True for x in run.where("event")), run
    assert not run.where("notice"), run
    return run


# Steps of flotilla_client.mjs.


def manage(who: str, label: str, method: str, *params: Any) -> dict[str, Any]:
    return {"op": "manage", "as": who, "label": label, "method": method, "params": list(params)}


def join(who: str, label: str, claim: str | None, *, protect: bool = True) -> dict[str, Any]:
    return {"op": "join", "as": who, "label": label, "claim": claim, "protect": protect}


def answer(run: Run, label: str, method: str | None = None) -> Any:
    """The JSON answer of the one NIP-86 call of step `label` (of `method`, when several)."""
    calls = [x for x in run.where("manage", label) if method is None or x["method"] == method]
    assert len(calls) == 1, f"{len(calls)} {method or ''} calls for {label!r}:\n{run!r}"
    return calls[0]["response"]


def result(run: Run, label: str, method: str | None = None) -> Any:
    response = answer(run, label, method)
    assert "result" in response, f"{label}: {response}\n{run!r}"
    return response["result"]


def set_policy(relay: Any, policy: str) -> None:
    assert relay.mem.set_join_policy(relay.community_id, policy) in ("updated", "unchanged")


# ---------------------------------------------------------------------------- Flotilla


def test_flotilla_invite_link_join_and_leave(relay, node):
    """Flotilla's whole flow with welshman's own code: the admin check (supportedmethods, asked
    twice in one second with one and the same NIP-98 event), a shared invite code of its own
    (listclaims, then createclaim [randomId()]), the link, the join on an AUTHed welshman socket,
    the list naming the newcomer, a second join, and the leave without `-`."""
    newcomer = Person.new()
    welcome = f"info: welcome to {relay.host}!"
    checked = []

    def joined(run: Run) -> None:
        members = relay.mem.relay_members(relay.community_id)
        (row,) = [m for m in members if m.pubkey == newcomer.pubkey]
        assert (row.role, row.added_by) == ("member", relay.owner.pubkey)
        assert newcomer.pubkey in named(relay.mem.member_list(relay.community_id))
        checked.append("joined")

    def left(run: Run) -> None:
        assert newcomer.pubkey not in members_of(relay.mem, relay.community_id)
        # Their profile went with them, in the leave's transaction.
        assert relay.mem.member_profiles(relay.community_id, [newcomer.pubkey]) == []
        assert newcomer.pubkey not in named(relay.mem.member_list(relay.community_id))
        checked.append("left")

    run = flotilla(
        node,
        relay,
        {"owner": relay.owner, "newcomer": newcomer},
        [
            {"op": "invite", "as": "owner", "label": "invite"},
            # Flotilla opens the invite dialog again: the code is now listed, first.
            {"op": "invite", "as": "owner", "label": "again"},
            join("newcomer", "join", "@invite"),
            pause("joined"),
            {
                "op": "read",
                "as": "newcomer",
                "label": "list",
                "filters": [{"kinds": [13534], "authors": [relay.key.pubkey], "limit": 1}],
            },
            # Then Flotilla re-publishes the person's profile to the space (broadcastUserData).
            {
                "op": "profile",
                "as": "newcomer",
                "label": "profile",
                "content": {"name": "newcomer", "display_name": "New Comer"},
                "createdAt": 1_700_000_000,
            },
            {
                "op": "read",
                "as": None,
                "label": "profiles",
                "filters": [{"kinds": [0], "authors": [newcomer.pubkey]}],
            },
            join("newcomer", "join-again", "@invite"),
            {"op": "leave", "as": "newcomer", "label": "leave"},
            pause("left"),
        ],
        [joined, left],
    )
    assert checked == ["joined", "left"]

    # supportedmethods, twice at once: the same event both times, the owner's methods both times.
    asks = [x for x in run.where("manage", "invite") if x["method"] == "supportedmethods"]
    assert len(asks) == 2
    assert asks[0]["authId"] == asks[1]["authId"], "the two asks were not one NIP-98 event"
    methods = asks[0]["response"]["result"]
    assert asks[1]["response"] == {"result": methods}
    assert {"createclaim", "listclaims", "deleteclaim"} <= set(methods)

    # No code was listed, so Flotilla made one: createclaim [randomId()], a string of digits.
    assert result(run, "invite", "listclaims") == []
    (invite,) = run.where("invite", "invite")
    code = invite["claim"]
    assert code.isdigit() and len(code) >= 8
    created = [x for x in run.where("manage", "invite") if x["method"] == "createclaim"]
    assert [x["params"] for x in created] == [[code]]
    assert "error" not in created[0]["response"], run
    assert invite["link"] == (
        f"https://app.flotilla.social/join?r=127.0.0.1%3A{relay.process.port}&c={code}"
    )
    # The second time the code is listed (a string, first) and no other is made.
    assert result(run, "again", "listclaims") == [code]
    assert [x["method"] for x in run.where("manage", "again")].count("createclaim") == 0
    assert run.one("invite", "again")["claim"] == code

    # The invite is kept sealed: the relay's key opens it to the code.
    (record,) = relay.mem.relay_invites(relay.community_id)
    assert record.created_by == relay.owner.pubkey
    assert record.use_count == 1
    assert record.sealed is not None and code not in record.sealed
    assert relay.key.unseal(record.sealed) == code

    first = run.one("join", "join")
    assert first["auth"]["status"] == "ok"
    assert first["tags"] == [["claim", code], ["-"]]
    assert (first["status"], first["detail"], first["message"]) == ("success", welcome, None)
    (listed,) = run.one("read", "list")["events"]
    assert (listed["kind"], listed["pubkey"]) == (13534, relay.key.pubkey)
    assert newcomer.pubkey in named(listed)
    assert run.one("read", "list")["eoseMs"] is not None  # AUTHed: welshman passes the EOSE on
    again = run.one("join", "join-again")
    assert (again["status"], again["detail"], again["message"]) == ("success", DUPLICATE, None)
    # The profile Flotilla sent is kept, and anyone reading kind 0 gets it.
    sent = run.one("profile", "profile")
    assert (sent["status"], sent["detail"]) == ("success", ""), sent
    assert run.one("read", "profiles")["events"] == [sent["event"]]
    leave = run.one("leave", "leave")
    assert leave["tags"] == []
    assert leave["status"] == "success"


def test_flotilla_join_refusals_in_its_words(relay, node):
    """What Flotilla tells the person for our refusals: no claim (its older join sends
    ["claim", ""] without `-`), a wrong code."""
    stranger = Person.new()
    run = flotilla(
        node,
        relay,
        {"stranger": stranger},
        [
            join("stranger", "empty", "", protect=False),
            join("stranger", "none", None),
            join("stranger", "wrong", "0123456789012345"),
        ],
    )
    for label in ("empty", "none"):
        line = run.one("join", label)
        assert (line["status"], line["detail"]) == ("failure", REQUIRES_CLAIM)
        assert line["message"] == "This space requires an invite code"
    wrong = run.one("join", "wrong")
    assert (wrong["status"], wrong["detail"]) == (
        "failure",
        "restricted: that invite code is invalid.",
    )
    assert wrong["message"] == "join request rejected"
    assert stranger.pubkey not in members_of(relay.mem, relay.community_id)
    assert relay.mem.join_requests(relay.community_id) == []


# ---------------------------------------------------------------------------- Jumble, Fevela


def test_jumble_and_fevela(relay, node):
    """Jumble's and Fevela's NIP-43 code with nostr-tools: the relay key from NIP-11 `pubkey`,
    the member list and an invite by their exact filters (AUTH after `auth-required:`, the same
    REQ again), a join with the invite (`-`: AUTH after `auth-required:`, the same event again),
    Fevela's one-click join with an empty claim, and the leave with `-`."""
    joiner, clicker = Person.new(), Person.new()
    pk = relay.key.pubkey
    members_filter = [{"kinds": [13534], "authors": [pk], "limit": 1}]
    invite_filter = [{"kinds": [28935], "authors": [pk], "limit": 1}]
    run = nostr_tools(
        node,
        relay,
        {"admin": relay.admin, "joiner": joiner, "clicker": clicker},
        [
            {"op": "info", "label": "nip11"},
            connect("c"),
            req("c", "members", filters=members_filter),
            connect("a"),
            req("a", "invite-anon", filters=invite_filter),
            auth("a", "admin"),
            req("a", "invite", filters=invite_filter),
            connect("j"),
            publish("j", "joiner", "join-anon", 28934, [["claim", "@invite"], ["-"]]),
            auth("j", "joiner"),
            publish("j", "joiner", "join", 28934, [], again="join-anon"),
            req("j", "members-after", filters=members_filter),
            publish("j", "joiner", "leave", 28936, [["-"]]),
            connect("f"),
            auth("f", "clicker"),
            publish("f", "clicker", "one-click", 28934, [["claim", ""], ["-"]]),
        ],
    )
    document = run.one("info", "nip11")["document"]
    assert document["pubkey"] == pk == document["self"]
    assert 43 in document["supported_nips"]  # Jumble's checkNip43Support: 43 and a pubkey

    (listed,) = run.events("members")
    assert (listed["kind"], listed["pubkey"]) == (13534, pk)
    assert named(listed) == {relay.owner.pubkey, relay.admin.pubkey, relay.member.pubkey}

    assert run.closed("invite-anon").startswith("auth-required:")
    (invite,) = run.events("invite")
    assert invite["pubkey"] == pk and invite["kind"] == 28935
    code = tag_of(invite, "claim")[1]

    accepted, reason = run.ok("join-anon")
    assert not accepted and reason.startswith("auth-required:")
    assert run.ok("join") == (True, f"info: welcome to {relay.host}!")
    (after,) = run.events("members-after")
    assert joiner.pubkey in named(after)
    assert run.ok("leave") == (True, "")
    assert run.ok("one-click") == (False, REQUIRES_CLAIM)

    members = members_of(relay.mem, relay.community_id)
    assert joiner.pubkey not in members and clicker.pubkey not in members
    assert relay.mem.join_requests(relay.community_id) == []
    # The invite was used once, by the joiner; the one-click join used none.
    (record,) = relay.mem.relay_invites(relay.community_id)
    assert (record.created_by, record.use_count, record.max_uses) == (relay.admin.pubkey, 1, 1)
    assert code


# ---------------------------------------------------------------------------- Amethyst


def test_amethyst(relay, node):
    """Amethyst asks for the list without authors and sends a 28934 with no tags at all, from a
    connection that has not AUTHed; its leave carries `-`."""
    person = Person.new()
    amethyst_list = [{"kinds": [13534], "limit": 1}]
    steps = [
        connect("c"),
        req("c", "list", filters=amethyst_list),
        publish("c", "person", "join", 28934, []),
    ]
    run = nostr_tools(node, relay, {"person": person}, steps)
    (listed,) = run.events("list")
    assert listed == relay.mem.member_list(relay.community_id)
    assert run.ok("join") == (False, REQUIRES_CLAIM)
    assert person.pubkey not in members_of(relay.mem, relay.community_id)

    set_policy(relay, "open")
    run = nostr_tools(
        node,
        relay,
        {"person": person},
        [*steps, auth("c", "person"), publish("c", "person", "leave", 28936, [["-"]])],
    )
    assert run.ok("join") == (True, f"info: welcome to {relay.host}!")
    assert run.ok("leave") == (True, "")
    assert person.pubkey not in members_of(relay.mem, relay.community_id)


# ---------------------------------------------------------------------------- join policies


def test_claimless_join_under_invite_and_open(relay, node):
    """Under `invite` a claimless join is refused and nothing is kept; under `open` it joins at
    once, and again is a duplicate."""
    first, second = Person.new(), Person.new()
    keys = {"first": first, "second": second}
    run = flotilla(node, relay, keys, [join("first", "invite", None)])
    line = run.one("join", "invite")
    assert (line["status"], line["detail"]) == ("failure", REQUIRES_CLAIM)
    assert first.pubkey not in members_of(relay.mem, relay.community_id)
    assert relay.mem.join_requests(relay.community_id) == []

    set_policy(relay, "open")
    run = flotilla(
        node,
        relay,
        keys,
        [join("first", "open", None), join("second", "open-2", ""), join("first", "dup", None)],
    )
    welcome = f"info: welcome to {relay.host}!"
    assert (run.one("join", "open")["status"], run.one("join", "open")["detail"]) == (
        "success",
        welcome,
    )
    assert run.one("join", "open-2")["detail"] == welcome
    assert run.one("join", "dup")["detail"] == DUPLICATE
    members = members_of(relay.mem, relay.community_id)
    assert members[first.pubkey] == members[second.pubkey] == "member"
    assert {first.pubkey, second.pubkey} <= named(relay.mem.member_list(relay.community_id))


def test_join_requests_approved_and_rejected_through_nip86(relay, node):
    """Under `request` a claimless join is kept as pending; the admin sees it among the events
    needing moderation, approves one (`allowevent`: a member) and rejects the other
    (`banevent`: not a member, no longer pending)."""
    set_policy(relay, "request")
    alice, bob = Person.new(), Person.new()
    pending = []

    def both_pending(run: Run) -> None:
        requests = relay.mem.join_requests(relay.community_id)
        pending.extend(requests)
        assert [r.pubkey for r in requests] == [alice.pubkey, bob.pubkey]
        assert [r.request_id for r in requests] == [
            run.one("join", "alice")["id"],
            run.one("join", "bob")["id"],
        ]
        assert alice.pubkey not in members_of(relay.mem, relay.community_id)

    run = flotilla(
        node,
        relay,
        {"admin": relay.admin, "alice": alice, "bob": bob},
        [
            join("alice", "alice", None),
            join("bob", "bob", ""),
            join("alice", "alice-again", None),
            pause("pending"),
            manage("admin", "queue", "listeventsneedingmoderation"),
        ],
        [both_pending],
    )
    for label in ("alice", "bob"):
        line = run.one("join", label)
        assert (line["status"], line["detail"]) == ("failure", PENDING)
        assert line["message"] == "your request to join is pending approval."
    assert run.one("join", "alice-again")["detail"] == PENDING  # one pending request each
    queue_ = result(run, "queue")
    assert [item["id"] for item in queue_] == [r.request_id for r in pending]
    assert [item["reason"] for item in queue_] == [
        f"join request from {encode_npub(alice.pubkey)}",
        f"join request from {encode_npub(bob.pubkey)}",
    ]

    alice_id, bob_id = (r.request_id for r in pending)
    run = flotilla(
        node,
        relay,
        {"admin": relay.admin, "alice": alice, "bob": bob},
        [
            manage("admin", "approve", "allowevent", alice_id, "welcome"),
            manage("admin", "reject", "banevent", bob_id, "not now"),
            manage("admin", "queue", "listeventsneedingmoderation"),
            join("alice", "member-now", None),
            join("bob", "bob-again", None),
        ],
    )
    assert "error" not in answer(run, "approve"), run
    assert "error" not in answer(run, "reject"), run
    assert result(run, "queue") == []
    assert run.one("join", "member-now")["detail"] == DUPLICATE
    bob_again = run.one("join", "bob-again")
    assert (bob_again["status"], bob_again["detail"]) == (
        "failure",
        "restricted: your request to join was declined; you may ask again later.",
    )
    members = relay.mem.relay_members(relay.community_id)
    (row,) = [m for m in members if m.pubkey == alice.pubkey]
    assert (row.role, row.added_by) == ("member", relay.admin.pubkey)
    assert bob.pubkey not in {m.pubkey for m in members}
    assert alice.pubkey in named(relay.mem.member_list(relay.community_id))
    assert relay.mem.join_requests(relay.community_id) == []


# ---------------------------------------------------------------------------- bans


def test_banned_key_claim_request_and_allowpubkey(relay, node):
    """A banned key cannot come back by a claim or a request; `allowpubkey` lifts the ban and
    makes it a member."""
    outcast = Person.new()
    steps = [
        manage("admin", "ban", "banpubkey", outcast.pubkey, "spam"),
        manage("admin", "bans", "listbannedpubkeys"),
        manage("admin", "code", "createclaim", "outcast-code-0001"),
        join("outcast", "claim", "outcast-code-0001"),
    ]
    run = flotilla(node, relay, {"admin": relay.admin, "outcast": outcast}, steps)
    assert "error" not in answer(run, "ban"), run
    assert [b["pubkey"] for b in result(run, "bans")] == [outcast.pubkey]
    claim = run.one("join", "claim")
    assert (claim["status"], claim["detail"]) == ("failure", BANNED)
    assert claim["message"] == "you are banned from this community."
    (record,) = relay.mem.relay_invites(relay.community_id)
    assert record.use_count == 0  # a banned key's claim uses nothing

    set_policy(relay, "request")
    run = flotilla(
        node,
        relay,
        {"admin": relay.admin, "outcast": outcast},
        [
            join("outcast", "request", None),
            manage("admin", "allow", "allowpubkey", outcast.pubkey, "forgiven"),
            manage("admin", "bans", "listbannedpubkeys"),
            join("outcast", "back", "outcast-code-0001"),
        ],
    )
    request = run.one("join", "request")
    assert (request["status"], request["detail"]) == ("failure", BANNED)
    assert relay.mem.join_requests(relay.community_id) == []
    assert "error" not in answer(run, "allow"), run
    assert result(run, "bans") == []
    assert run.one("join", "back")["detail"] == DUPLICATE
    assert members_of(relay.mem, relay.community_id)[outcast.pubkey] == "member"
    assert relay.mem.banned_pubkeys(relay.community_id) == []
    assert outcast.pubkey in named(relay.mem.member_list(relay.community_id))
