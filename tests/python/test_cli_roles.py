"""buzz-admin and the roles clients can discover (SPEC section 6): `role define|delete|assign|
unassign|list` through the real CLI against a real database (as processes, and through
click's runner for the many variations), `members` and `show-list` showing the defined roles
held, `verify` catching role events made wrong behind the API's back, and `watch` printing
role definitions and deletions as they commit.

Exit codes: 0 done or no change, 1 bad input (BZIRL, 22023, BZARC, usage), 2 not found,
5 database or signing failure, and `verify` finding a wrong list or role event.
"""

from __future__ import annotations

import io
import json
import uuid
from contextlib import redirect_stdout
from typing import Any

import psycopg
from cli_runner import (
    Cli,
    InProcess,
    Run,
    as_replica,
    drop_watcher,
    expect,
    live,
    npub,
    read_line,
    wait_listening,
)
from fixtures_membership import Community, new_host, new_pubkey
from psycopg import sql

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import compute_id, verify_event

pytest_plugins = ("fixtures_membership", "cli_runner")

BASE = ("owner", "admin", "member")


def definitions(reader: Membership, cid: Any) -> dict[str, dict[str, Any]]:
    """The live 33534s by role id."""
    return {ev["tags"][1][1]: ev for ev in reader.role_definitions(cid)}


def member_tag(reader: Membership, cid: Any, pubkey: str) -> list[str]:
    (tag,) = [t for t in live(reader, cid)["tags"][1:] if t[1] == pubkey]
    return tag


def checked(data: dict[str, Any], run: Run, reader: Membership, cid: Any, key: RelayKey) -> None:
    """A write's JSON: exit code, and any list and role event it names are live and signed
    by the relay key."""
    assert data["exit_code"] == run.code, run
    if data.get("snapshot") is not None:
        assert data["snapshot"] == live(reader, cid)
        assert data["list_id"] == data["snapshot"]["id"]
    for event in (data.get("snapshot"), data.get("event")):
        if event is not None:
            assert verify_event(event) and event["pubkey"] == key.pubkey, event


# --------------------------------------------------------------------------- as processes


def test_every_role_command_as_a_process(cli: Cli, reader: Membership, key: RelayKey) -> None:
    """Each role command once as a real process, the community named by RELAY_URL."""
    owner, alice, stranger = new_pubkey(), new_pubkey(), new_pubkey()
    host = new_host()
    relay = {"RELAY_URL": f"wss://{host}"}

    def run(*args: str) -> Run:
        return cli(*args, **relay)

    cid = uuid.UUID(
        run("community", "create", host, "--owner", owner, "--json").json()["community_id"]
    )
    expect(run("add-member", alice), 0, "added")

    made = expect(
        run("role", "define", "mods", "--label", "Moderators", "--color", "210", "--order", "5"),
        0,
        "defined role mods of " + host,
        "role definition ",
        "published",
    )
    live_def = definitions(reader, cid)["mods"]
    assert f"role definition {live_def['id']} published" in made.out
    assert "list " not in made.out  # no member changed: no list
    expect(run("role", "list"), 0, "mods", "Moderators", "4 roles of " + host)
    assigned = expect(run("role", "assign", npub(alice), "mods"), 0, f"gave {npub(alice)}", "list")
    assert f"list {live(reader, cid)['id']} published" in assigned.out
    assert member_tag(reader, cid, alice) == ["member", alice, "member", "mods"]
    rows = expect(run("members"), 0, "2 members").out.splitlines()
    assert rows[0].split()[-1] == "ROLES"
    assert next(r for r in rows if npub(alice) in r).split()[-1] == "mods"
    expect(run("role", "assign", stranger, "mods"), 2, "not a member", "nothing was changed")
    expect(run("role", "assign", alice, "nosuch"), 1, "BZIRL", "role define nosuch")
    expect(run("verify"), 0, f"ok    {host}", "4 roles", "all 1 lists verified")
    expect(run("role", "unassign", alice, "mods"), 0, "took the role mods", "published")
    deleted = expect(run("role", "delete", "mods"), 0, "deleted role mods", "role deletion ")
    (deletion,) = reader.role_deletions(cid)
    assert f"role deletion {deletion['id']} published" in deleted.out
    expect(run("role", "delete", "mods"), 2, f"{host} has no role mods", "nothing was changed")
    expect(run("role", "delete", "owner"), 1, "BZIRL", "nothing was changed")


# --------------------------------------------------------------------------- define


def test_role_define_words_json_and_errors(
    fast: InProcess, community: Community, reader: Membership, key: RelayKey
) -> None:
    host, cid = community.host, community.cid

    def write(*args: str) -> dict[str, Any]:
        run = fast("-c", host, "role", *args, "--json")
        data = run.json()
        checked(data, run, reader, cid, key)
        return data

    full = ("--label", "Moderators", "--description", "Keep the peace", "--color", "210")
    made = write("define", "mods", *full, "--order", "5")
    assert made | {"event": None} == {
        "outcome": "defined",
        "snapshot": None,
        "community": {"id": str(cid), "host": host},
        "role": "mods",
        "label": "Moderators",
        "description": "Keep the peace",
        "color": 210,
        "order": 5,
        "event": None,
        "event_id": made["event"]["id"],
        "list_id": None,
        "exit_code": 0,
    }
    assert made["event"] == definitions(reader, cid)["mods"]
    assert made["event"]["kind"] == 33534 and made["event"]["content"] == ""
    assert made["event"]["tags"] == [
        ["-"],
        ["d", "mods"],
        ["label", "Moderators"],
        ["description", "Keep the peace"],
        ["color", "210"],
        ["order", "5"],
    ]

    # The same definition again: no change, no event.
    same = write("define", "mods", *full, "--order", "5")
    assert (same["outcome"], same["event"], same["event_id"]) == ("unchanged", None, None)
    expect(
        fast("-c", host, "role", "define", "mods", *full, "--order", "5"),
        0,
        "already has this definition (no change)",
    )
    assert "published" not in fast("-c", host, "role", "define", "mods", *full, "--order", "5").out
    # A redefinition is the whole definition: what is left out is cleared.
    words = expect(
        fast("-c", host, "role", "define", "mods", "--label", "Mods"), 0, "updated role mods"
    )
    assert f"role definition {definitions(reader, cid)['mods']['id']} published" in words.out
    assert definitions(reader, cid)["mods"]["tags"] == [["-"], ["d", "mods"], ["label", "Mods"]]
    # Base roles may be redefined; color 0 and 360, a negative order are allowed.
    based = write("define", "member", "--label", "Members", "--color", "0", "--order", "-3")
    assert based["outcome"] == "updated"
    assert definitions(reader, cid)["member"]["tags"][2:] == [
        ["label", "Members"],
        ["color", "0"],
        ["order", "-3"],
    ]
    assert write("define", "vip", "--label", "V", "--color", "360")["outcome"] == "defined"
    # Labels and descriptions are text as given (JSON escaping is the database's and the
    # signer's business): quotes, backslashes, non-ASCII.
    odd = 'Ünïcode "quoted" \\ label'
    assert write("define", "odd", "--label", odd)["event"]["tags"][2] == ["label", odd]

    # Refused, exit 1, nothing changed: the role id (BZIRL), the fields (22023).
    before = definitions(reader, cid)
    for role in ("Mods", "a" * 65, "has space", "dot.ted", ""):
        expect(
            fast("-c", host, "role", "define", role, "--label", "L"),
            1,
            "BZIRL",
            "nothing was changed",
        )
    for args in (
        ("--label", ""),
        ("--label", "x" * 65),
        ("--label", "tab\there"),
        ("--label", "L", "--description", "x" * 501),
        ("--label", "L", "--description", "line\nbreak"),
        ("--label", "   "),  # names a person reads (SPEC section 10)
        ("--label", "Mods\u202e"),
        ("--label", "L", "--description", "\u200b"),
        ("--label", "L", "--color", "361"),
        ("--label", "L", "--color", "-1"),
    ):
        run = expect(fast("-c", host, "role", "define", "new", *args), 1, "22023", "nothing")
        assert run.out == "", args
    refused = fast("-c", host, "role", "define", "new", "--label", "L", "--color", "400", "--json")
    data = refused.json()
    assert refused.code == 1 and data["error"]["sqlstate"] == "22023"
    assert (data["changed"], data["exit_code"], data["outcome"]) == (False, 1, None)
    # Usage errors: 1 too.
    expect(fast("-c", host, "role", "define", "new"), 1, "Missing option", "--label")
    expect(fast("-c", host, "role", "define", "new", "--label", "L", "--color", "red"), 1, "red")
    assert definitions(reader, cid) == before
    # The community: missing (2), not named (1), archived (1, BZARC, with the way back).
    expect(fast("-c", "nowhere.example.org", "role", "define", "x", "--label", "X"), 2)
    expect(fast("role", "define", "x", "--label", "X"), 1, "which community")
    fast("community", "archive", host)
    expect(
        fast("-c", host, "role", "define", "x", "--label", "X"),
        1,
        "BZARC",
        "community unarchive",
        "nothing was changed",
    )
    expect(fast("-c", host, "role", "list"), 0, "mods")  # reads work on archived ones


def test_role_define_help_says_a_redefinition_is_the_whole_definition(fast: InProcess) -> None:
    text = " ".join(expect(fast("role", "define", "--help"), 0, "Exit codes").out.split())
    assert "replaces its whole definition" in text and "left out is cleared" in text


# --------------------------------------------------------------------------- assign, unassign,
# delete


def test_role_assign_unassign_delete(
    fast: InProcess, community: Community, mem: Membership, reader: Membership, key: RelayKey
) -> None:
    host, cid, owner = community.host, community.cid, community.owner
    alice, bob, stranger = new_pubkey(), new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, alice)
    mem.add_relay_member(cid, bob, "admin")
    mem.define_role(cid, "mods", "Moderators")
    mem.define_role(cid, "vip", "VIP")
    mem.define_role(cid, "unused", "Nobody")

    def write(*args: str) -> dict[str, Any]:
        run = fast("-c", host, "role", *args, "--json")
        data = run.json()
        checked(data, run, reader, cid, key)
        return data

    # assign: npub or hex of any case; the list's member tag names the role.
    words = expect(
        fast("-c", host, "role", "assign", npub(alice), "mods"),
        0,
        f"gave {npub(alice)} the role mods",
    )
    assert f"list {live(reader, cid)['id']} published" in words.out
    assert member_tag(reader, cid, alice) == ["member", alice, "member", "mods"]
    again = write("assign", alice.upper(), "mods")
    assert (again["outcome"], again["snapshot"], again["pubkey"]) == (
        "already_assigned",
        None,
        alice,
    )
    expect(fast("-c", host, "role", "assign", alice, "mods"), 0, "already has", "(no change)")
    vip = write("assign", alice, "vip")
    assert vip["outcome"] == "assigned" and vip["snapshot"] is not None
    assert member_tag(reader, cid, alice) == ["member", alice, "member", "mods", "vip"]
    assert write("assign", bob, "mods")["outcome"] == "assigned"
    assert write("assign", owner, "vip")["outcome"] == "assigned"  # the owner holds roles too
    assert member_tag(reader, cid, owner) == ["member", owner, "owner", "vip"]

    # assign refused: not a member 2; undefined, base or malformed role 1 (BZIRL).
    r = expect(fast("-c", host, "role", "assign", stranger, "mods"), 2, "not a member")
    assert r.out == "" and "nothing was changed" in r.err
    nm = write("assign", stranger, "mods")
    assert (nm["outcome"], nm["exit_code"], nm["changed"]) == ("not_member", 2, False)
    undefined = expect(
        fast("-c", host, "role", "assign", alice, "nosuch"),
        1,
        "BZIRL",
        "buzz-admin role define nosuch --label",
        "nothing was changed",
    )
    assert undefined.out == ""
    expect(fast("-c", host, "role", "assign", alice, "admin"), 1, "BZIRL", "set-role")
    expect(fast("-c", host, "role", "assign", alice, "MODS"), 1, "BZIRL")
    as_json = fast("-c", host, "role", "assign", alice, "nosuch", "--json")
    assert as_json.code == 1 and as_json.json()["error"]["sqlstate"] == "BZIRL"
    assert "role define" in as_json.json()["error"]["hint"]
    expect(fast("-c", host, "role", "assign", "abc", "mods"), 1, "64 hexadecimal")
    expect(fast("-c", host, "role", "assign", alice), 1, "Missing argument")

    # unassign: the role goes from the tag; not held or undefined is no change (0).
    gone = write("unassign", npub(alice), "mods")
    assert gone["outcome"] == "unassigned" and gone["snapshot"] is not None
    assert member_tag(reader, cid, alice) == ["member", alice, "member", "vip"]
    expect(fast("-c", host, "role", "unassign", alice, "mods"), 0, "does not have", "no change")
    undefined_gone = write("unassign", alice, "nosuch")
    assert (undefined_gone["outcome"], undefined_gone["snapshot"]) == ("not_assigned", None)
    expect(fast("-c", host, "role", "unassign", stranger, "vip"), 2, "not a member")
    expect(fast("-c", host, "role", "unassign", alice, "member"), 1, "BZIRL", "set-role")
    expect(fast("-c", host, "role", "unassign", alice, "Bad!"), 1, "BZIRL")

    # delete: taken from every holder (one new list) and a kind 5 published.
    before = live(reader, cid)["id"]
    deleted = write("delete", "vip")
    assert (deleted["outcome"], deleted["taken_from"]) == ("deleted", 2)
    assert deleted["snapshot"] is not None and deleted["list_id"] != before
    assert "vip" not in json.dumps(deleted["snapshot"]["tags"])
    assert "vip" not in definitions(reader, cid)
    (deletion,) = reader.role_deletions(cid)
    assert deleted["event"] == deletion and deleted["event_id"] == deletion["id"]
    assert deletion["kind"] == 5 and deletion["tags"] == [
        ["-"],
        ["a", f"33534:{key.pubkey}:vip"],
        ["k", "33534"],
    ]
    # A role nobody holds: a kind 5, no list.
    unheld = expect(
        fast("-c", host, "role", "delete", "unused"), 0, "deleted role unused", "role deletion"
    )
    assert "taken from" not in unheld.out and "list " not in unheld.out
    expect(fast("-c", host, "role", "delete", "mods"), 0, "taken from 1 member\n")
    nf = write("delete", "mods")
    assert (nf["outcome"], nf["exit_code"], nf["event"]) == ("not_found", 2, None)
    expect(fast("-c", host, "role", "delete", "mods"), 2, "has no role mods", "nothing")
    for base in BASE:
        expect(fast("-c", host, "role", "delete", base), 1, "BZIRL", "nothing was changed")
    expect(fast("-c", host, "role", "delete", "NOPE"), 1, "BZIRL")
    assert set(definitions(reader, cid)) == set(BASE)
    # A deleted role is gone from the members; defining it again starts afresh.
    assert all(m.roles == [] for m in reader.relay_members(cid))
    expect(fast("-c", host, "role", "define", "vip", "--label", "VIP"), 0, "defined role vip")
    assert reader.role_deletions(cid) and "vip" in definitions(reader, cid)

    # Archived: every role write is refused (1, BZARC), nothing changed.
    fast("community", "archive", host)
    for args in (
        ("assign", alice, "vip"),
        ("unassign", alice, "vip"),
        ("delete", "vip"),
        ("define", "vip", "--label", "Other"),
    ):
        expect(fast("-c", host, "role", *args), 1, "BZARC", "unarchive", "nothing was changed")
    assert definitions(reader, cid)["vip"]["tags"][2] == ["label", "VIP"]


# --------------------------------------------------------------------------- reads


def test_role_list_members_and_show_list_show_roles(
    fast: InProcess, community: Community, mem: Membership, reader: Membership
) -> None:
    host, cid, owner = community.host, community.cid, community.owner
    # A new community: its base roles' definitions.
    text = expect(fast("-c", host, "role", "list"), 0, f"3 roles of {host}").out.splitlines()
    assert text[0].split() == ["ROLE", "LABEL", "ORDER", "COLOR", "MEMBERS", "DESCRIPTION"]
    assert [line.split() for line in text[1:4]] == [
        ["owner", "Owner", "0", "-", "1", "-"],
        ["admin", "Admin", "1", "-", "0", "-"],
        ["member", "Member", "2", "-", "0", "-"],
    ]

    alice, bob = new_pubkey(), new_pubkey()
    mem.add_relay_member(cid, alice)
    mem.add_relay_member(cid, bob, "admin")
    mem.define_role(cid, "vip", "VIP")  # no order: listed last
    mem.define_role(cid, "mods", "Moderator team", "They keep the peace", 210, 5)
    mem.define_role(cid, "early", "Early", None, None, -1)
    mem.assign_role(cid, alice, "mods")
    mem.assign_role(cid, alice, "vip")
    mem.assign_role(cid, bob, "mods")

    listing = expect(fast("-c", host, "role", "list"), 0, f"6 roles of {host}").out.splitlines()
    assert [line.split()[0] for line in listing[1:7]] == [
        "early",
        "owner",
        "admin",
        "member",
        "mods",
        "vip",
    ]
    mods_line = next(line for line in listing if line.startswith("mods"))
    assert "Moderator team" in mods_line and mods_line.endswith("They keep the peace")
    assert mods_line.split()[3:6] == ["5", "210", "2"]
    data = fast("-c", host, "role", "list", "--json").json()
    assert data["community"] == {"id": str(cid), "host": host}
    by_id = {r["id"]: r for r in data["roles"]}
    assert by_id["mods"] == {
        "id": "mods",
        "label": "Moderator team",
        "description": "They keep the peace",
        "color": 210,
        "order": 5,
        "members": 2,
        "event": definitions(reader, cid)["mods"],
    }
    assert (by_id["admin"]["members"], by_id["member"]["members"], by_id["vip"]["order"]) == (
        1,
        1,
        None,
    )
    assert [r["event"] for r in sorted(data["roles"], key=lambda r: r["id"])] == (
        reader.role_definitions(cid)
    )
    assert all(verify_event(r["event"]) for r in data["roles"]) and data["deletions"] == []
    mem.delete_role(cid, "early")
    after = fast("-c", host, "role", "list", "--json").json()
    assert "early" not in {r["id"] for r in after["roles"]}
    assert after["deletions"] == reader.role_deletions(cid) and len(after["deletions"]) == 1

    # members: ROLES is the last column (the others keep their places), "-" for none.
    rows = expect(fast("-c", host, "members"), 0, "3 members").out.splitlines()
    assert rows[0].split() == ["ROLE", "PUBKEY", "ADDED", "BY", "JOINED", "ROLES"]
    cells = {line.split()[1]: line.split() for line in rows[1:4]}
    assert cells[npub(owner)][0] == "owner" and cells[npub(owner)][-1] == "-"
    assert cells[npub(alice)][0] == "member" and cells[npub(alice)][-1] == "mods,vip"
    assert cells[npub(bob)][-1] == "mods"
    assert rows[1].split()[:2] == ["owner", npub(owner)]
    hexed = expect(fast("-c", host, "members", "--hex"), 0).out
    assert any(
        line.split()[1] == alice and line.endswith("mods,vip") for line in hexed.splitlines()
    )
    listed = fast("-c", host, "members", "--json").json()["members"]
    assert {m["pubkey"]: m["roles"] for m in listed} == {
        owner: [],
        alice: ["mods", "vip"],
        bob: ["mods"],
    }
    # --role: a base role as before, or a defined role's holders.
    mods = fast("-c", host, "members", "--role", "mods", "--json").json()["members"]
    assert sorted(m["pubkey"] for m in mods) == sorted([alice, bob])
    expect(fast("-c", host, "members", "--role", "vip"), 0, "1 member of", "(holding vip)")
    admins = fast("-c", host, "members", "--role", "admin", "--json").json()["members"]
    assert [m["pubkey"] for m in admins] == [bob]
    mem.define_role(cid, "empty", "Nobody yet")
    expect(fast("-c", host, "members", "--role", "empty"), 0, "0 members")
    expect(fast("-c", host, "members", "--role", "nosuch"), 2, f"{host} has no role nosuch")

    # show-list: each member's defined roles after its pubkey.
    shown = expect(fast("-c", host, "show-list"), 0, "members    3").out
    assert f"  member  {npub(alice)} mods,vip" in shown
    assert f"  owner   {npub(owner)}\n" in shown
    assert f"{bob} mods" in expect(fast("-c", host, "show-list", "--hex"), 0).out


# --------------------------------------------------------------------------- verify


def test_verify_catches_role_events_made_wrong_by_direct_sql(
    cli: Cli,
    fast: InProcess,
    community: Community,
    mem: Membership,
    reader: Membership,
    db_url: str,
    su: psycopg.Connection,
) -> None:
    host, cid = community.host, community.cid
    alice = new_pubkey()
    mem.add_relay_member(cid, alice)
    mem.define_role(cid, "mods", "Moderators", None, 210, 5)
    mem.define_role(cid, "gone", "Gone")
    mem.assign_role(cid, alice, "mods")
    mem.delete_role(cid, "gone")
    ok = expect(cli("-c", host, "verify"), 0, f"ok    {host}", "2 members, 4 roles")
    assert "all 1 lists verified, with 4 role definitions" in ok.out
    data = cli("-c", host, "verify", "--json").json()
    (result,) = data["communities"]
    assert (result["roles"], result["role_deletions"], result["ok"]) == (4, 1, True)

    def problems() -> list[tuple[str, str]]:
        run = fast("-c", host, "verify", "--json")
        assert run.code == (0 if run.json()["ok"] else 5), run
        (c,) = run.json()["communities"]
        return [(p["problem"], p["detail"]) for p in c["problems"]]

    def tamper(assignment: str, role: str, *params: Any) -> None:
        """As superuser, with the API's triggers on: change the role's live event row."""
        su.execute(
            sql.SQL(
                "UPDATE buzz_private.role_events SET {} WHERE community_id = %s AND role_id = %s"
            ).format(sql.SQL(assignment)),
            (*params, cid, role),
        )

    def drop(role: str) -> None:
        su.execute(
            "DELETE FROM buzz_private.role_events WHERE community_id = %s AND role_id = %s",
            (cid, role),
        )

    # A forged signature on a definition (updated as superuser): role_bad_signature, exit 5.
    tamper("sig = %s", "mods", "ab" * 64)
    run = expect(
        cli("-c", host, "verify"),
        5,
        "role_bad_signature",
        "1 of 1 communities have a wrong list or role event",
        "republish-members",
    )
    fails = [line for line in run.out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and fails[0].startswith(f"FAIL  {host} ({cid}): role_bad_signature: ")
    assert "of role mods" in fails[0]
    assert "deletion" not in run.out  # no word on repairing deletions
    assert [p for p, _ in problems()] == ["role_bad_signature"]
    # The database's drift check agrees (verify's checks are its own, from outside).
    assert [(d.problem, "mods" in d.detail) for d in reader.member_list_drift(cid)] == [
        ("role_bad_signature", True)
    ]

    # Content that does not hash to the id: role_id_mismatch.
    tamper("created_at = created_at + 1", "member")
    assert sorted(p for p, _ in problems()) == ["role_bad_signature", "role_id_mismatch"]
    # A definition gone: a base role (role_missing), a held role (role_missing, with holders).
    drop("admin")
    drop("mods")
    found = problems()
    assert sorted(p for p, _ in found) == ["role_id_mismatch", "role_missing", "role_missing"]
    details = [d for p, d in found if p == "role_missing"]
    assert "base role admin has no live 33534 definition" in details
    assert "role mods is held by 1 member but has no live 33534 definition" in details

    # Repair: republish-members re-signs the list and every definition.
    expect(fast("-c", host, "republish-members"), 0, "republished")
    expect(fast("-c", host, "verify"), 0, "all 1 lists verified, with 4 role definitions")

    # A forged deletion: republish does not re-sign it; the words say how to repair.
    tamper("sig = %s", "gone", "cd" * 64)
    run = expect(fast("-c", host, "verify"), 5, "role_bad_signature", "deletion", "role delete")
    assert [p for p, _ in problems()] == ["role_bad_signature"]
    expect(fast("-c", host, "role", "define", "gone", "--label", "Gone"), 0, "defined")
    expect(fast("-c", host, "role", "delete", "gone"), 0, "deleted")
    expect(fast("-c", host, "verify"), 0, "all 1 lists verified")

    # Another key expected: every definition is role_wrong_key (the list is wrong_key).
    other = RelayKey.generate().pubkey
    wrong = cli("-c", host, "verify", "--relay-pubkey", npub(other), "--json").json()
    kinds = [p["problem"] for p in wrong["communities"][0]["problems"]]
    assert kinds.count("wrong_key") == 1 and kinds.count("role_wrong_key") == 4
    assert wrong["exit_code"] == 5

    # A definition of the wrong shape (label after color), validly signed by the relay key:
    # only its shape is wrong.
    mods = definitions(reader, cid)["mods"]
    tags = [["-"], ["d", "mods"], ["color", "210"], ["label", "Moderators"]]
    bad = dict(mods, tags=tags)
    bad["id"] = compute_id(bad)
    tamper(
        "tags = %s, id = %s, sig = %s",
        "mods",
        json.dumps(tags, separators=(",", ":")),
        bad["id"],
        fast.key.sign(bad["id"]),
    )
    shape = problems()
    assert [p for p, _ in shape] == ["role_malformed"], shape
    assert "label repeated or out of order" in shape[0][1]
    expect(fast("-c", host, "republish-members"), 0)

    # Members' defined roles changed behind the list's back: members_differ names them.
    as_replica(
        db_url,
        cid,
        "UPDATE buzz_private.relay_members SET roles = '{}' WHERE community_id = %s AND pubkey = %s",
        cid,
        alice,
    )
    stale = expect(fast("-c", host, "verify"), 5, "members_differ").out
    assert f"{npub(alice)} is member but the list says member with mods" in stale
    expect(fast("-c", host, "republish-members"), 0)
    expect(cli("-c", host, "verify"), 0, "all 1 lists verified")


# verify's shape checks are the Signer's (signer.EventShapes), by each event's own key: judged
# here on events made in Python, for what direct SQL cannot easily make.

_T = 1_700_000_000


def _event(key: RelayKey, kind: int, tags: Any, content: str = "") -> dict[str, Any]:
    event = {"pubkey": key.pubkey, "created_at": _T, "kind": kind, "tags": tags}
    event["content"] = content
    event["id"] = compute_id(event)
    event["sig"] = key.sign(event["id"])
    return event


def _base_definitions(key: RelayKey) -> list[dict[str, Any]]:
    return [_event(key, 33534, [["-"], ["d", r], ["label", r.title()]]) for r in BASE]


def test_verify_judges_list_shapes_as_the_signer_does() -> None:
    from buzz_signer.cli.verify import check_list

    key, old = RelayKey.generate(), RelayKey.generate()
    pks = sorted(new_pubkey() for _ in range(3))
    stored = [(pk, role, ()) for pk, role in zip(pks, BASE, strict=True)]
    tags = [["-"]] + [["member", pk, role] for pk, role, _ in stored]

    def problems(event: dict[str, Any]) -> list[tuple[str, str]]:
        return check_list(event, stored, key.pubkey)

    assert problems(_event(key, 13534, tags)) == []
    # Another key's list is wrong_key only: its shape is judged by its own key.
    assert [p for p, _ in problems(_event(old, 13534, tags))] == ["wrong_key"]
    # The Signer's order refusal is verify's unordered.
    ev = _event(key, 13534, [tags[0], tags[2], tags[1], tags[3]])
    assert problems(ev) == [
        ("unordered", f"list {ev['id']}: tag 2 is not in strictly increasing pubkey order")
    ]
    # Rules the Signer has: one owner at most, lowercase pubkeys, no base role as defined role.
    two = _event(key, 13534, [tags[0], tags[1], ["member", pks[1], "owner"], tags[3]])
    assert ("malformed", f"list {two['id']}: more than one owner") in problems(two)
    upper = _event(key, 13534, [tags[0], ["member", pks[0].upper(), "owner"], *tags[2:]])
    assert (
        "malformed",
        f"list {upper['id']}: a member pubkey is not 64 lowercase hex characters",
    ) in problems(upper)
    base = _event(key, 13534, [tags[0], [*tags[1], "admin"], *tags[2:]])
    assert (
        "malformed",
        f"list {base['id']}: tag 1 has admin, a base role, as a defined role",
    ) in problems(base)
    # A tag verify cannot read as a member is malformed, and not a crash.
    odd = _event(key, 13534, [tags[0], tags[1], ["member", pks[1], ["x"]], tags[3]])
    assert problems(odd)[0][0] == "malformed"
    # Kind, content and a pubkey that is not one.
    assert problems(_event(key, 8000, tags))[0][1].endswith(": kind 8000, not 13534")
    content = problems(_event(key, 13534, tags, "x"))[0]
    assert content[0] == "malformed" and "empty content" in content[1]
    bad = dict(_event(key, 13534, tags), pubkey="zz")
    assert (
        "malformed",
        f"list {bad['id']}: pubkey is not 64 lowercase hex characters",
    ) in problems(bad)


def test_verify_judges_role_event_shapes_as_the_signer_does() -> None:
    from buzz_signer.cli.verify import check_roles

    key, old = RelayKey.generate(), RelayKey.generate()
    base = _base_definitions(key)

    def problems(definitions: list[Any], deletions: tuple[Any, ...] = ()) -> list[tuple[str, str]]:
        return check_roles(base + definitions, list(deletions), [], None, key.pubkey)

    assert problems([]) == []
    # The Signer's refusal, as the detail: tag numbers as the Signer counts them (from 0).
    ev = _event(key, 33534, [["-"], ["d", "mods"], ["color", "361"], ["label", "Mods"]])
    color = "tag 2: color must be an integer 0-360 in canonical decimal"
    assert problems([ev]) == [("role_malformed", f"definition {ev['id']} of role mods: {color}")]
    ev = _event(key, 33534, [["-"], ["d", "mods"], ["label", "a\nb"]])
    label = "tag 2: label must be 1-64 characters, none of them a control character"
    assert problems([ev]) == [("role_malformed", f"definition {ev['id']} of role mods: {label}")]
    ev = _event(key, 33534, [["-"], ["d", "Mods"], ["label", "Mods"]], "x")
    assert problems([ev]) == [
        ("role_malformed", f"definition {ev['id']} of role ?: content must be empty")
    ]
    ev = _event(key, 33534, 5)
    assert [p for p, _ in problems([ev])] == ["role_malformed", "role_bad_signature"]
    # verify's own rule: a definition has a label (the database always writes one).
    ev = _event(key, 33534, [["-"], ["d", "mods"], ["color", "1"]])
    assert problems([ev]) == [
        ("role_malformed", f"definition {ev['id']} of role mods: it has no label")
    ]
    # Deletions: by any key of ours, addressing that key's definition.
    gone = _event(old, 5, [["-"], ["a", f"33534:{old.pubkey}:gone"], ["k", "33534"]])
    assert problems([], (gone,)) == []
    cross = _event(old, 5, [["-"], ["a", f"33534:{key.pubkey}:gone"], ["k", "33534"]])
    not_own = "the a tag does not address an event of its own key"
    assert problems([], (cross,)) == [
        ("role_malformed", f"deletion {cross['id']} of role gone: {not_own}")
    ]
    extra = _event(key, 5, [["-"], ["a", f"33534:{key.pubkey}:gone"], ["k", "33534"], ["p", "x"]])
    assert "a deletion's tags must be exactly" in problems([], (extra,))[0][1]
    wrong_kind = _event(key, 33534, [["-"], ["a", f"33534:{key.pubkey}:gone"], ["k", "33534"]])
    assert problems([], (wrong_kind,)) == [
        ("role_malformed", f"deletion {wrong_kind['id']} of role ?: kind 33534, not 5")
    ]


# --------------------------------------------------------------------------- watch


def test_watch_prints_role_events_as_they_commit_and_after_a_reconnect(
    cli: Cli,
    community: Community,
    mem: Membership,
    reader: Membership,
    su: psycopg.Connection,
    admin_url: str,
) -> None:
    host, cid = community.host, community.cid
    alice = new_pubkey()
    mem.add_relay_member(cid, alice)
    dbname = su.execute("SELECT current_database()").fetchone()[0]
    watcher = cli.popen("-c", host, "watch", "--count", "6", "--json", "--timeout", "90")
    try:
        wait_listening(watcher)
        defined = cli("-c", host, "role", "define", "mods", "--label", "Mods", "--json").json()
        seen = json.loads(read_line(watcher, "stdout"))
        assert (seen["kind"], seen["role"], seen["id"]) == (33534, "mods", defined["event_id"])
        assert seen["event"] == defined["event"] and seen["after_reconnect"] is False
        assert seen["community"] == {"id": str(cid), "host": host}
        assert seen["created_at"] == defined["event"]["created_at"]

        assigned = cli("-c", host, "role", "assign", alice, "mods", "--json").json()
        seen = json.loads(read_line(watcher, "stdout"))
        assert (seen["kind"], seen["id"]) == (13534, assigned["list_id"])

        # Deleting a held role: a new list and a kind 5, in either order.
        deleted = cli("-c", host, "role", "delete", "mods", "--json").json()
        two = [json.loads(read_line(watcher, "stdout")) for _ in range(2)]
        by_kind = {s["kind"]: s for s in two}
        assert by_kind[13534]["id"] == deleted["list_id"]
        assert (by_kind[5]["role"], by_kind[5]["event"]) == ("mods", deleted["event"])

        # A role defined while the watcher cannot connect is printed once it is back.
        admin = psycopg.connect(admin_url, autocommit=True)
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(dbname))
        )
        try:
            drop_watcher(su)
            assert "connection lost" in read_line(watcher, "stderr")
            missed = mem.define_role(cid, "vip", "VIP")
            missed_gone = mem.define_role(cid, "mods", "Back")  # its deletion is replaced
            assert "connection lost" in read_line(watcher, "stderr")
        finally:
            admin.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(dbname))
            )
            admin.close()
        caught = [json.loads(read_line(watcher, "stdout")) for _ in range(2)]
        assert [(s["role"], s["kind"], s["after_reconnect"]) for s in caught] == [
            ("mods", 33534, True),
            ("vip", 33534, True),
        ]
        assert caught[1]["event"] == missed.events[0]
        assert caught[0]["event"] == missed_gone.events[0]
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        assert out == ""
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


def test_watch_role_events_in_words_and_lists_only(
    cli: Cli, community: Community, mem: Membership
) -> None:
    host, cid = community.host, community.cid
    alice = new_pubkey()
    mem.add_relay_member(cid, alice)
    watcher = cli.popen("-c", host, "watch", "--count", "2", "--timeout", "60")
    try:
        assert f"listening for lists and role events of {host}" in read_line(watcher, "stderr")
        defined = cli("-c", host, "role", "define", "mods", "--label", 'The "Mods"', "--json")
        deleted = cli("-c", host, "role", "delete", "mods", "--json")
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        first, second = out.splitlines()
        assert first.startswith(f"{host} role mods definition {defined.json()['event_id']} ")
        assert first.endswith(' label "The \\"Mods\\""')
        assert second.startswith(f"{host} role mods deletion {deleted.json()['event_id']} ")
        assert "created_at " in second
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()

    # --lists-only: role events are not printed (nor counted).
    watcher = cli.popen("-c", host, "watch", "--count", "1", "--lists-only", "--timeout", "60")
    try:
        assert f"listening for lists of {host}" in read_line(watcher, "stderr")
        cli("-c", host, "role", "define", "vip", "--label", "VIP")
        assigned = cli("-c", host, "role", "assign", alice, "vip", "--json").json()
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        assert out.startswith(f"{host} list {assigned['list_id']} ") and len(out.splitlines()) == 1
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


def test_watch_says_when_a_role_event_is_no_longer_live(
    db_url: str, community: Community, mem: Membership
) -> None:
    """A notification read after a newer event of the role replaced it (in process: which
    notification arrives late cannot be arranged from outside)."""
    from buzz_signer.cli.config import Community as Target
    from buzz_signer.cli.watch import _Watcher

    first = mem.define_role(community.cid, "mods", "One").events[0]
    mem.define_role(community.cid, "mods", "Two")
    with psycopg.connect(db_url, autocommit=True) as conn:
        for as_json in (False, True):
            watcher = _Watcher(Target(community.cid, community.host), as_json)
            payload = {
                "community_id": str(community.cid),
                "id": first["id"],
                "kind": 33534,
                "created_at": first["created_at"],
            }
            out = io.StringIO()
            with redirect_stdout(out):
                assert watcher.notified(conn, json.dumps(payload)) is True
            if as_json:
                line = json.loads(out.getvalue())
                assert (line["role"], line["event"], line["id"]) == (None, None, first["id"])
            else:
                assert out.getvalue() == (
                    f"{community.host} role ? definition {first['id']} created_at "
                    f"{_utc(first['created_at'])} (no longer live)\n"
                )


def _utc(created_at: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(created_at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
