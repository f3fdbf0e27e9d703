"""buzz-admin and what a community shows and who may come in (SPEC section 3, amended
2026-12-02): `ban`, `unban`, `bans`, `requests [list|approve|reject]`, `profile [set]`,
`join-policy`, `invite create --code` with `invite list [--codes]`, and `members --tree`,
through the real CLI against a real database (as processes, and through click's runner for
the many variations). Each outcome with its words, --json and exit code; bad input exits
non-zero with nothing changed.

Exit codes: 0 done or no change, 1 bad input (usage, BZIPK, BZINV, 22023, a banned pubkey),
2 not found (ban, join request), 3 the owner.
"""

from __future__ import annotations

import secrets
from typing import Any

import psycopg
from cli_runner import Cli, InProcess, expect, live, npub
from fixtures_membership import Community, members_of, new_pubkey

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership

pytest_plugins = ("fixtures_membership", "cli_runner")


def listed(reader: Membership, cid: Any) -> set[str]:
    """The pubkeys the live list names."""
    return {tag[1] for tag in live(reader, cid)["tags"][1:]}


def bans_of(su: psycopg.Connection, cid: Any) -> list[tuple[Any, ...]]:
    return su.execute("SELECT * FROM buzz.banned_pubkeys(%s)", (cid,)).fetchall()


def request_id() -> str:
    """The id of a kind 28934 event, as a join request is known."""
    return secrets.token_hex(32)


def profile_of(su: psycopg.Connection, cid: Any) -> tuple[Any, ...]:
    return su.execute("SELECT * FROM buzz.community_profile(%s)", (cid,)).fetchone()


# --------------------------------------------------------------------------- bans


def test_ban_removes_a_member_and_its_list_no_longer_names_them(
    fast: InProcess, community: Community, mem: Membership, reader: Membership, su: Any
) -> None:
    c, cid = ("-c", community.host), community.cid
    alice, bob = new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, alice)
    assert alice in listed(reader, cid)

    banned = expect(fast(*c, "ban", npub(alice), "--reason", "spam", "--json"), 0).json()
    assert (banned["outcome"], banned["pubkey"], banned["removed"]) == ("banned", alice, True)
    assert banned["reason"] == "spam" and banned["exit_code"] == 0
    assert banned["snapshot"] == live(reader, cid) and banned["list_id"] is not None
    assert alice not in members_of(reader, cid) and alice not in listed(reader, cid)
    expect(fast(*c, "ban", alice.upper()), 0, f"{npub(alice)} is already banned (no change)")

    # Someone who is not a member is banned without a new list.
    list_before = live(reader, cid)["id"]
    words = expect(fast(*c, "ban", bob), 0, f"banned {npub(bob)}")
    assert "removed" not in words.out and "published" not in words.out
    assert live(reader, cid)["id"] == list_before

    # The owner cannot be banned; a bad pubkey is refused; neither changes anything.
    before = bans_of(su, cid)
    owner = fast(*c, "ban", community.owner, "--json")
    assert (owner.code, owner.json()["outcome"], owner.json()["changed"]) == (3, "is_owner", False)
    expect(fast(*c, "ban", community.owner), 3, "is the owner", "nothing was changed")
    bad = expect(fast(*c, "ban", "npub1notakey"), 1)
    assert "npub1notakey" not in bad.err
    expect(fast(*c, "ban", "ab" * 31), 1)
    expect(fast(*c, "ban"), 1, "Missing argument")
    assert bans_of(su, cid) == before and community.owner in members_of(reader, cid)

    # A banned pubkey cannot come back by itself.
    expect(fast(*c, "claim-membership", alice), 1, "is banned", "nothing was changed")
    assert alice not in members_of(reader, cid)

    table = expect(fast(*c, "bans"), 0, npub(alice), npub(bob), "spam", "buzz-admin")
    assert table.out.splitlines()[0].split() == ["PUBKEY", "BANNED", "BY", "BANNED", "REASON"]
    assert table.out.splitlines()[-1] == f"2 banned pubkeys in {community.host}"
    expect(fast(*c, "bans", "--hex"), 0, alice, bob)
    listed_bans = fast(*c, "bans", "--json").json()
    assert listed_bans["community"] == {"id": str(cid), "host": community.host}
    by_pubkey = {b["pubkey"]: b for b in listed_bans["bans"]}
    assert set(by_pubkey) == {alice, bob}
    assert by_pubkey[alice]["npub"] == npub(alice) and by_pubkey[alice]["reason"] == "spam"
    assert by_pubkey[bob]["reason"] is None and by_pubkey[bob]["banned_by"] == "buzz-admin"

    unbanned = expect(fast(*c, "unban", npub(alice), "--json"), 0).json()
    assert (unbanned["outcome"], unbanned["snapshot"]) == ("unbanned", None)
    assert alice not in members_of(reader, cid)  # unbanning does not make a member
    expect(fast(*c, "unban", alice), 2, f"{npub(alice)} is not banned", "nothing was changed")
    expect(fast(*c, "unban", "zz"), 1)
    assert [b[0] for b in bans_of(su, cid)] == [bob]
    expect(fast(*c, "claim-membership", alice), 0, "joined as member")
    # add-member lifts a ban.
    expect(fast(*c, "add-member", bob, "--json"), 0)
    assert bans_of(su, cid) == [] and bob in members_of(reader, cid)
    expect(fast(*c, "bans"), 0, f"0 banned pubkeys in {community.host}")


# --------------------------------------------------------------------------- join requests


def test_join_requests_list_approve_reject(
    fast: InProcess, community: Community, mem: Membership, reader: Membership, su: Any
) -> None:
    c, cid = ("-c", community.host), community.cid
    expect(fast(*c, "join-policy", "request"), 0, "is now request")
    alice, bob, carol = new_pubkey(), new_pubkey(), new_pubkey()
    ra, rb, rc = request_id(), request_id(), request_id()
    assert mem.request_membership(cid, alice, ra, "hello").outcome == "requested"
    assert mem.request_membership(cid, bob, rb).outcome == "requested"
    assert mem.request_membership(cid, carol, rc).outcome == "requested"

    shown = expect(fast(*c, "requests"), 0, ra, npub(alice), "hello", rb, npub(bob))
    assert shown.out.splitlines()[-1] == (
        f"3 pending join requests to {community.host} (join policy: request)"
    )
    assert fast(*c, "requests", "list").out == shown.out
    expect(fast(*c, "requests", "list", "--hex"), 0, alice, bob)
    pending = fast(*c, "requests", "--json").json()
    assert pending["join_policy"] == "request"
    assert [(r["request_id"], r["pubkey"], r["note"]) for r in pending["requests"]] == [
        (ra, alice, "hello"),
        (rb, bob, None),
        (rc, carol, None),
    ]
    assert pending["requests"][0]["npub"] == npub(alice)

    approved = expect(fast(*c, "requests", "approve", ra, "--json"), 0).json()
    assert (approved["outcome"], approved["pubkey"], approved["request_id"]) == (
        "joined",
        alice,
        ra,
    )
    assert approved["snapshot"] == live(reader, cid) and alice in listed(reader, cid)
    # The approver is the operator, as add-member and invite create name it.
    (joined,) = [m for m in reader.relay_members(cid) if m.pubkey == alice]
    assert (joined.role, joined.added_by) == ("member", "buzz-admin")
    expect(fast(*c, "requests", "approve", ra), 2, "has no pending join request", "nothing")

    before = su.execute("SELECT * FROM buzz.join_requests(%s)", (cid,)).fetchall()
    for bad in ("xyz", "AB" * 31):  # not an event id: bad input, nothing changed
        expect(fast(*c, "requests", "approve", bad), 1, "nothing was changed")
        expect(fast(*c, "requests", "reject", bad), 1)
    unknown = fast(*c, "requests", "approve", request_id(), "--json")
    assert (unknown.code, unknown.json()["outcome"], unknown.json()["changed"]) == (
        2,
        "not_found",
        False,
    )
    expect(fast(*c, "requests", "reject", request_id()), 2, "has no pending join request")
    assert su.execute("SELECT * FROM buzz.join_requests(%s)", (cid,)).fetchall() == before

    rejected = expect(fast(*c, "requests", "reject", rb, "--reason", "who?"), 0)
    assert f"rejected request {rb} of {npub(bob)}" in rejected.out
    assert bob not in members_of(reader, cid)
    assert mem.request_membership(cid, bob, request_id()).outcome == "rejected"  # for 24 h

    # Someone added meanwhile: the request is closed, members unchanged.
    mem.add_relay_member(cid, carol)
    list_before = live(reader, cid)["id"]
    expect(fast(*c, "requests", "approve", rc), 0, "already a member", "members unchanged")
    assert live(reader, cid)["id"] == list_before
    expect(fast(*c, "requests"), 0, f"0 pending join requests to {community.host}")


# --------------------------------------------------------------------------- profile


def test_profile_and_join_policy(fast: InProcess, community: Community, su: Any) -> None:
    c, cid = ("-c", community.host), community.cid
    expect(fast(*c, "profile"), 0, "name        - (clients show the host)", "join policy invite")
    assert fast(*c, "profile", "--json").json() == {
        "community": {"id": str(cid), "host": community.host},
        "name": None,
        "description": None,
        "icon": None,
        "join_policy": "invite",
    }
    expect(fast(*c, "profile", "set", "name", "Example Relay"), 0, "set the name of")
    expect(fast(*c, "profile", "set", "name", "Example Relay"), 0, "already that (no change)")
    icon = "https://relay.example.org/icon.png"
    done = expect(fast(*c, "profile", "set", "icon", icon, "--json"), 0).json()
    assert (done["outcome"], done["field"], done["value"], done["snapshot"]) == (
        "updated",
        "icon",
        icon,
        None,
    )
    expect(fast(*c, "profile", "set", "description", "Our place."), 0, "set the description")
    shown = fast(*c, "profile", "--json").json()
    assert (shown["name"], shown["description"], shown["icon"]) == (
        "Example Relay",
        "Our place.",
        icon,
    )

    before = profile_of(su, cid)
    for bad in (
        ("icon", "http://relay.example.org/icon.png"),  # not https
        ("icon", "relay.example.org/icon.png"),
        ("name", ""),
        ("name", "x" * 65),
        ("name", "tab\there"),
        ("description", "y" * 2001),
        # Names a person reads (SPEC section 10), as NIP-86 and the page are refused them.
        ("name", "   "),
        ("name", "Example\u202eyaleR"),
        ("name", "Exa\u200dmple"),
        ("description", "\n\n"),
        ("description", "one\u2029two"),
    ):
        expect(fast(*c, "profile", "set", *bad), 1, "22023", "nothing was changed")
    refused = fast(*c, "profile", "set", "icon", "ftp://x.org/i.png", "--json")
    assert (refused.code, refused.json()["changed"]) == (1, False)
    expect(fast(*c, "profile", "set", "colour", "red"), 1, "Invalid value")
    expect(fast(*c, "profile", "set", "name"), 1, "give a value for name, or --clear")
    expect(fast(*c, "profile", "set", "name", "X", "--clear"), 1, "not both")
    assert profile_of(su, cid) == before

    expect(fast(*c, "profile", "set", "description", "--clear"), 0, "cleared the description")
    expect(fast(*c, "profile", "set", "description", "--clear"), 0, "already unset (no change)")
    assert fast(*c, "profile", "--json").json()["description"] is None

    expect(fast(*c, "join-policy"), 0, "invite: joining needs an invite code")
    assert fast(*c, "join-policy", "--json").json() == {
        "community": {"id": str(cid), "host": community.host},
        "join_policy": "invite",
    }
    opened = expect(fast(*c, "join-policy", "open", "--json"), 0).json()
    assert (opened["outcome"], opened["join_policy"]) == ("updated", "open")
    expect(fast(*c, "join-policy", "open"), 0, "already open (no change)")
    expect(fast(*c, "join-policy", "closed"), 1, "Invalid value")
    expect(fast(*c, "join-policy", "OPEN"), 1)
    assert fast(*c, "join-policy", "--json").json()["join_policy"] == "open"
    expect(fast(*c, "profile"), 0, "join policy open: anyone who asks joins at once")
    expect(fast("-c", "nowhere.example.org", "join-policy"), 2, "no community")


# --------------------------------------------------------------------------- invite codes


def test_a_chosen_invite_code_is_sealed_to_the_relay_key_and_listed_with_codes(
    fast: InProcess, community: Community, reader: Membership, su: Any, key: RelayKey
) -> None:
    c, cid = ("-c", community.host), community.cid
    code = "Summer-team_2027"
    made = expect(fast(*c, "invite", "create", "--code", code, "--max-uses", "5", "--json"), 0)
    shared = made.json()
    assert (shared["code"].lower(), shared["sealed"], shared["max_uses"]) == (code.lower(), True, 5)
    drawn = fast(*c, "invite", "create").out
    drawn_code = dict(line.split(None, 1) for line in drawn.splitlines())["code"]

    # The database holds the code sealed to the relay key, never readable.
    (sealed,) = su.execute(
        "SELECT sealed FROM buzz.relay_invites(%s) WHERE invite_id = %s",
        (cid, shared["invite_id"]),
    ).fetchone()
    assert key.unseal(sealed) == code
    rows = str(su.execute("SELECT * FROM buzz_private.relay_invites").fetchall())
    assert code not in rows and code.lower() not in rows

    # Without --codes no code is shown, and no key is needed.
    plain = expect(fast(*c, "invite", "list", BUZZ_RELAY_SECRET_KEY=None), 0, shared["invite_id"])
    assert code not in plain.out and drawn_code not in plain.out
    assert plain.out.splitlines()[0].split()[-1] == "CODE"
    assert f"2 invites of {community.host}, 2 live" in plain.out
    listed_plain = fast(*c, "invite", "list", "--json").json()["invites"]
    assert [i["sealed"] for i in listed_plain] == [True, False]
    assert all("code" not in i for i in listed_plain)
    assert listed_plain[0]["use_count"] == 0 and listed_plain[0]["state"] == "live"

    with_codes = expect(fast(*c, "invite", "list", "--codes"), 0, code)
    assert drawn_code not in with_codes.out and with_codes.err == ""
    codes = fast(*c, "invite", "list", "--codes", "--json").json()["invites"]
    assert [(i["invite_id"], i["code"]) for i in codes] == [
        (shared["invite_id"], code),
        (codes[1]["invite_id"], None),
    ]

    # After a rotation the old sealed code no longer opens with the configured key.
    other = RelayKey.generate()
    moved = expect(
        fast(*c, "invite", "list", "--codes", BUZZ_RELAY_SECRET_KEY=other.secret_hex()),
        0,
        "(sealed to another key)",
    )
    assert code not in moved.out
    moved_json = fast(
        *c, "invite", "list", "--codes", "--json", BUZZ_RELAY_SECRET_KEY=other.secret_hex()
    ).json()["invites"][0]
    assert (moved_json["code"], moved_json["sealed_to_another_key"]) == (None, True)
    expect(fast(*c, "invite", "list", "--codes", BUZZ_RELAY_SECRET_KEY=None), 1, "relay key")

    # The chosen code works as any code (compared case-insensitively).
    alice = new_pubkey()
    expect(fast(*c, "invite", "claim", code.upper(), alice), 0, "joined", "used 1 of 5")
    assert fast(*c, "invite", "list", "--json").json()["invites"][0]["use_count"] == 1

    # A code taken, or out of shape: exit 1, nothing changed, and the code never in a message.
    count = len(codes)
    taken = expect(fast(*c, "invite", "create", "--code", code.lower()), 1, "BZINV", "nothing")
    assert code.lower() not in taken.err + taken.out
    for bad in ("short", "x" * 129, "has space in it", "semi;colon"):
        expect(fast(*c, "invite", "create", "--code", bad), 1, "nothing was changed")
    expect(fast(*c, "invite", "create", "--code", "-"), 1, "read no code")
    assert len(fast(*c, "invite", "list", "--json").json()["invites"]) == count


# --------------------------------------------------------------------------- members --tree


def test_members_tree_draws_who_brought_in_whom(
    fast: InProcess, community: Community, mem: Membership
) -> None:
    c, cid, owner = ("-c", community.host), community.cid, community.owner
    a, b, d, e, f, stranger = (new_pubkey() for _ in range(6))
    mem.add_relay_member(cid, a, "admin", owner)  # under the owner
    mem.add_relay_member(cid, b, "member", a)  # under a, so under the owner too
    mem.add_relay_member(cid, d, "member", "invite")
    mem.add_relay_member(cid, e)  # nobody recorded
    mem.add_relay_member(cid, f, "member", stranger)  # someone who is not a member

    tree = expect(fast(*c, "members", "--tree"), 0).out.splitlines()
    assert tree == [
        "added by create: 3 members",
        f"  owner   {npub(owner)}  brought in 1, 2 in all",
        f"    admin   {npub(a)}  brought in 1",
        f"      member  {npub(b)}",
        f"added by {npub(stranger)} (not a member): 1 member",
        f"  member  {npub(f)}",
        "added by invite: 1 member",
        f"  member  {npub(d)}",
        "added by nobody recorded: 1 member",
        f"  member  {npub(e)}",
        f"6 members of {community.host}: 1 owner, 1 admin, 4 members",
    ]
    hexed = fast(*c, "members", "--tree", "--hex").out
    assert owner in hexed and stranger in hexed and npub(owner) not in hexed

    data = fast(*c, "members", "--tree", "--json").json()
    groups = {g["added_by"]: g for g in data["tree"]}
    assert set(groups) == {"create", "invite", stranger, None}
    assert data["tree"][0]["added_by"] == "create"  # the owner's group first
    (top,) = groups["create"]["children"]
    assert (top["pubkey"], top["role"], top["brought_in"], top["in_all"]) == (owner, "owner", 1, 2)
    (child,) = top["children"]
    assert (child["pubkey"], child["added_by"], child["brought_in"]) == (a, owner, 1)
    assert [g["pubkey"] for g in child["children"]] == [b]
    assert groups["create"]["members"] == 3 and groups[None]["members"] == 1

    expect(fast(*c, "members", "--tree", "--role", "admin"), 1, "not both")


# --------------------------------------------------------------------------- as processes


def test_every_community_command_as_a_process(
    cli: Cli, community: Community, mem: Membership
) -> None:
    """Each new command once as a real process, with RELAY_URL naming the community."""
    relay = {"RELAY_URL": f"wss://{community.host}"}

    def run(*args: str, input: str | None = None) -> Any:
        return cli(*args, input=input, **relay)

    alice = new_pubkey()
    expect(run("add-member", alice), 0)
    expect(run("ban", alice, "--reason", "spam"), 0, "removed them from the members", "published")
    expect(run("bans", "--json"), 0, alice)
    expect(run("unban", npub(alice)), 0, "unbanned")
    expect(run("unban", alice), 2, "not banned")
    expect(run("join-policy", "request"), 0, "is now request")
    rid = request_id()
    assert mem.request_membership(community.cid, alice, rid).outcome == "requested"
    expect(run("requests"), 0, rid, npub(alice))
    expect(run("requests", "approve", rid), 0, "joined as member", "published")
    expect(run("requests", "reject", rid), 2, "no pending join request")
    expect(run("profile", "set", "name", "Process"), 0, "set the name")
    expect(run("profile"), 0, "Process", "join policy request")
    # --code - reads the code from stdin, out of the shell's history and of ps.
    made = expect(run("invite", "create", "--code", "-", "--json", input="from-stdin-1\n"), 0)
    assert made.json()["sealed"] is True
    expect(run("invite", "list", "--codes"), 0, "from-stdin-1")
    # The approved member hangs under the operator who approved them.
    expect(run("members", "--tree"), 0, "added by create: 1 member", "added by buzz-admin: 1")


def test_json_flag_works_on_every_new_reading_command(
    fast: InProcess, community: Community
) -> None:
    host = community.host
    for args in (
        ("bans",),
        ("requests",),
        ("requests", "list"),
        ("profile",),
        ("join-policy",),
        ("invite", "list"),
        ("invite", "list", "--codes"),
        ("members", "--tree"),
    ):
        for placed in (("--json", "-c", host, *args), ("-c", host, *args, "--json")):
            run = fast(*placed)
            assert run.code == 0, run
            assert isinstance(run.json(), dict), placed
