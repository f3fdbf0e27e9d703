"""buzz-admin as operators run it: real processes of the installed console script against a
real database. Every command, its words, its --json (parsed and checked against the database),
its error paths and exit codes; `verify` catching lists made wrong behind the API's back;
`watch` printing a list another process commits, and reconnecting; two runs at once.

Exit codes: 0 done or no change, 1 bad input, 2 not found, 3 owner, 4 role mismatch,
5 database or signing failure (docs/cli.md).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cli_runner import (
    BUZZ_ADMIN,
    TIMEOUT,
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
from fixtures_membership import Community, members_of, new_host, new_pubkey
from psycopg import sql
from sessions import ListLockHolder, list_lock_waiters

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import compute_id, verify_event

pytest_plugins = ("fixtures_membership", "cli_runner")

# --------------------------------------------------------------------------- help


def test_help_documents_every_command_with_an_example_and_the_exit_codes(cli: Cli) -> None:
    from click.testing import CliRunner

    from buzz_signer.cli import main

    top = expect(cli("--help"), 0, "Exit codes", "RELAY_URL", "DATABASE_URL", "--community")
    for code in range(6):
        assert f"  {code}  " in top.out
    runner = CliRunner()

    def walk(group: Any, path: list[str]) -> Iterator[list[str]]:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from walk(command, [*path, name])
            else:
                yield [*path, name]

    paths = list(walk(main, []))
    assert len(paths) >= 25
    for path in paths:
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.output, path
        assert "Exit codes" in result.output, path
    # The commands of the issue are all there.
    names = {" ".join(p) for p in paths}
    for name in (
        "community create",
        "community list",
        "community archive",
        "community unarchive",
        "community delete",
        "add-member",
        "remove-member",
        "set-role",
        "bootstrap-owner",
        "transfer-ownership",
        "members",
        "invite create",
        "invite claim",
        "invite revoke",
        "allowlist add",
        "allowlist import",
        "backfill",
        "show-list",
        "republish-members",
        "verify",
        "watch",
        "keygen",
        "migrate",
        "db start",
        "db stop",
        "db status",
        "role define",
        "role delete",
        "role assign",
        "role unassign",
        "role list",
    ):
        assert name in names, name


# --------------------------------------------------------------------------- every command


def test_every_command_as_a_process(
    cli: Cli, reader: Membership, key: RelayKey, tmp_path: Path
) -> None:
    """Each command once as a real process, through every exit code, with RELAY_URL naming
    the community as a relay operator configures it."""
    owner, alice, bob, carol, dave = (new_pubkey() for _ in range(5))
    host = new_host()
    relay = {"RELAY_URL": f"wss://{host.upper()}/nostr"}

    def run(*args: str, **env: str | None) -> Run:
        return cli(*args, **{**relay, **env})

    created = expect(run("community", "create", host, "--owner", npub(owner), "--json"), 0)
    cid = uuid.UUID(created.json()["community_id"])
    expect(run("community", "create", host, "--owner", alice), 1, "another owner", "nothing")
    expect(run("community", "list"), 0, host, str(cid))

    added = expect(run("add-member", npub(alice), "--role", "admin", "--json"), 0).json()
    assert added["outcome"] == "added" and added["snapshot"] == live(reader, cid)
    assert verify_event(added["snapshot"]) and added["snapshot"]["pubkey"] == key.pubkey
    expect(run("add-member", alice.upper()), 0, "already a member, as admin (no change)")
    expect(run("remove-member", bob), 2, "not a member", "nothing was changed")
    expect(run("remove-member", owner), 3, "is the owner", "nothing was changed")
    expect(run("remove-member", alice, "--if-role", "member"), 4, "is an admin, not a member")
    expect(run("set-role", alice, "member"), 0, f"{npub(alice)} is now member", "published")
    expect(run("claim-membership", bob), 0, f"{npub(bob)} joined as member")
    expect(run("transfer-ownership", alice, "--expected-owner", owner), 0, "transferred")
    expect(run("bootstrap-owner", npub(owner)), 0, f"made {npub(owner)} the owner")
    members = run("members", "--json").json()["members"]
    assert {m["pubkey"]: m["role"] for m in members} == {
        owner: "owner",
        alice: "admin",
        bob: "member",
    }
    expect(run("members"), 0, "3 members", npub(owner))

    invite = run("invite", "create", "--max-uses", "5", "--ttl", "2h", "--json").json()
    expect(run("invite", "claim", invite["code"], carol), 0, "joined with invite", "1 of 5")
    expect(run("invite", "claim", "ff" * 16, dave), 2, "no invite")
    expect(run("invite", "revoke", invite["invite_id"]), 0, "revoked")

    expect(run("allowlist", "add", dave), 0, f"allowlisted {npub(dave)}")
    listing = tmp_path / "allow.txt"
    listing.write_text(f"{npub(dave)}\n{new_pubkey()}\nnot-a-key\n")
    imported = expect(run("allowlist", "import", str(listing)), 1, ":3:", "valid lines")
    assert "allowlisted 1 pubkeys; 1 already listed" in imported.out
    expect(run("backfill"), 0, "backfilled nobody (no change)")

    shown = expect(run("show-list", "--json"), 0)
    assert json.loads(shown.out) == live(reader, cid)
    expect(run("show-list"), 0, "signature  valid", "members    4")
    republished = expect(run("republish-members", "--json"), 0).json()
    assert republished["list_id"] == live(reader, cid)["id"] != json.loads(shown.out)["id"]
    expect(run("verify"), 0, f"ok    {host}", "all 1 lists verified")

    expect(run("community", "archive"), 0, f"archived {host}")
    expect(run("add-member", new_pubkey()), 1, "BZARC", "nothing was changed")
    expect(run("community", "unarchive"), 0, f"unarchived {host}")
    other_key = RelayKey.generate()
    expect(
        run("add-member", new_pubkey(), BUZZ_RELAY_SECRET_KEY=other_key.secret_hex()),
        5,
        "BZKEY",
        "nothing was changed",
    )

    new_key = tmp_path / "new.key"
    made = expect(run("keygen", str(new_key), "--json"), 0).json()
    assert stat.S_IMODE(new_key.stat().st_mode) == 0o600
    assert RelayKey.from_file(new_key).pubkey == made["pubkey"] and "secret" not in made
    expect(run("--key-file", str(new_key), "rotate-key", "--yes"), 0, "re-signed 1 lists")
    assert live(reader, cid)["pubkey"] == made["pubkey"]

    expect(run("migrate"), 0, "nothing to do")
    status = run("db", "status", "--json")
    assert status.code == (0 if status.json()["running"] else 1), status
    if status.code == 0:  # idempotent on a running cluster (never stopped here: it is shared)
        expect(run("db", "start"), 0, "postgresql://")

    expect(run("community", "delete", "--yes", "--key-file", str(new_key)), 0, f"deleted {host}")
    expect(run("members"), 2, "no community is mapped to RELAY_URL's host")


# --------------------------------------------------------------------------- communities


def test_community_create_list_archive_delete(
    fast: InProcess, reader: Membership, su: psycopg.Connection, key: RelayKey
) -> None:
    owner, other = new_pubkey(), new_pubkey()
    host = new_host()
    created = expect(
        fast("community", "create", host.upper(), "--owner", npub(owner), "--json"), 0
    ).json()
    assert created["outcome"] == "created"
    cid = uuid.UUID(created["community_id"])
    assert created["community"] == {"id": str(cid), "host": host}
    assert created["snapshot"] == live(reader, cid)
    assert created["list_id"] == created["snapshot"]["id"]
    assert verify_event(created["snapshot"])
    assert created["snapshot"]["pubkey"] == key.pubkey
    assert members_of(reader, cid) == {owner: "owner"}

    # Words, and the no-change and refused outcomes.
    expect(fast("community", "create", host, "--owner", owner), 0, "already exists", "no change")
    taken = expect(
        fast("community", "create", host, "--owner", other), 1, "another owner", "nothing"
    )
    assert taken.out == ""
    expect(fast("community", "create", "not a host", "--owner", other), 1, "BZHST", "nothing")
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    limit = expect(fast("community", "create", new_host(), "--owner", owner, "--json"), 1).json()
    assert limit["outcome"] == "limit_reached"
    assert limit["snapshot"] is None and limit["changed"] is False
    second = expect(fast("community", "create", new_host(), "--owner", other), 0, "created")
    assert "list " in second.out

    listed = expect(fast("community", "list", "--json"), 0).json()["communities"]
    mine = next(c for c in listed if c["host"] == host)
    assert mine == {
        "id": str(cid),
        "host": host,
        "archived": False,
        "owner": owner,
        "members": 1,
        "list_id": created["list_id"],
        "list_created_at": created["snapshot"]["created_at"],
    }
    text = expect(fast("community", "list"), 0, host, str(cid), npub(owner), "active")
    assert len(text.out.splitlines()) == 1 + len(listed)

    # Archive: the community is an argument, or --community.
    expect(fast("community", "archive", host), 0, f"archived {host}")
    expect(
        fast("--community", str(cid), "community", "archive"), 0, "already archived", "no change"
    )
    listed = expect(fast("community", "list", "--json"), 0).json()["communities"]
    assert next(c for c in listed if c["host"] == host)["archived"] is True
    expect(fast("community", "list"), 0, "archived")
    refused = expect(fast("-c", host, "add-member", other), 1, "BZARC", "unarchive")
    assert "nothing was changed" in refused.err
    assert members_of(reader, cid) == {owner: "owner"}
    as_json = expect(fast("-c", host, "add-member", other, "--json"), 1).json()
    assert as_json["error"]["sqlstate"] == "BZARC"
    assert as_json["changed"] is False
    expect(fast("community", "unarchive", "-c", host), 0, f"unarchived {host}")
    expect(fast("community", "unarchive", host), 0, "not archived", "no change")
    expect(fast("-c", host, "add-member", other), 0, "added")

    # Delete asks first; without an answer nothing happens.
    expect(fast("community", "delete", host), 1, "not confirmed", "nothing was changed")
    expect(fast("community", "delete", host, input="n\n"), 1, "not confirmed")
    assert reader.community_id(host) == cid
    deleted = expect(fast("community", "delete", host, input="y\n"), 0, f"deleted {host}")
    assert "2 members" in deleted.err  # the question names what goes
    assert reader.community_id(host) is None
    expect(fast("community", "delete", host, "--yes"), 2, "no community")
    expect(fast("community", "delete", str(cid), "--yes"), 2, "no community has id")
    # Two different communities named at once.
    expect(fast("-c", "a.example.org", "community", "delete", "b.example.org"), 1, "two")


def test_the_community_comes_from_relay_url_or_community(
    fast: InProcess, mem: Membership, reader: Membership
) -> None:
    a_owner, b_owner = new_pubkey(), new_pubkey()
    a = mem.create_community("relay.example.org", a_owner).details["community_id"]
    b = mem.create_community("relay.example.org:7447", b_owner).details["community_id"]

    def owners(run: Run) -> list[str]:
        return [m["pubkey"] for m in run.json()["members"] if m["role"] == "owner"]

    # Host lower-cased, port kept, scheme and path dropped.
    assert owners(fast("members", "--json", RELAY_URL="wss://Relay.Example.ORG:7447/x?y")) == [
        b_owner
    ]
    assert owners(fast("members", "--json", RELAY_URL="wss://relay.example.org/")) == [a_owner]
    assert owners(fast("members", "--json", RELAY_URL="relay.example.org:7447")) == [b_owner]
    # --community (id or host, before or after the command) wins over RELAY_URL.
    for args in (
        ("-c", str(b), "members", "--json"),
        ("members", "--community", "RELAY.example.org:7447", "--json"),
        ("--json", "members", "-c", str(b)),
    ):
        assert owners(fast(*args, RELAY_URL="wss://relay.example.org")) == [b_owner], args
    # The same value in both places is fine; two different ones are bad input.
    expect(fast("-c", str(a), "members", "-c", str(a)), 0)
    expect(fast("-c", str(a), "members", "-c", str(b)), 1, "different values")

    # A URL's default port is the host a client's Host header names (relay/urls.py), another
    # port another host.
    assert owners(fast("members", "--json", RELAY_URL="wss://relay.example.org:443")) == [a_owner]
    unmapped = expect(
        fast("add-member", new_pubkey(), RELAY_URL="wss://relay.example.org:8443"),
        2,
        "relay.example.org:8443",
        "nothing was changed",
    )
    assert "RELAY_URL" in unmapped.err
    expect(fast("members", RELAY_URL="wss://relay.example.org:99999"), 1, "invalid port")
    expect(fast("members"), 1, "which community", "RELAY_URL")
    expect(fast("members", "-c", str(uuid.uuid4())), 2, "no community has id")
    expect(fast("members", "-c", "nowhere.example.org"), 2, "no community is mapped")
    expect(fast("show-list", "-c", "nowhere.example.org", "--json"), 2)


# --------------------------------------------------------------------------- members


def test_member_writes_words_json_and_exit_codes(
    fast: InProcess,
    community: Community,
    reader: Membership,
    key: RelayKey,
    db_url: str,
    su: psycopg.Connection,
) -> None:
    c = fast
    host, cid, owner = community.host, community.cid, community.owner
    alice, bob, carol, dave = (new_pubkey() for _ in range(4))

    def write(*args: str) -> dict[str, Any]:
        run = c("-c", host, *args, "--json")
        data = run.json()
        assert data["exit_code"] == run.code, run
        if data["snapshot"] is not None:
            # The list the command reports is the live one, and it verifies.
            assert data["snapshot"] == live(reader, cid)
            assert data["list_id"] == data["snapshot"]["id"]
            assert verify_event(data["snapshot"])
            assert data["snapshot"]["pubkey"] == key.pubkey
        return data

    # add-member: npub or hex of any case; words name the npub and the role.
    added = expect(c("-c", host, "add-member", npub(alice)), 0, f"added {npub(alice)} as member")
    assert f"list {live(reader, cid)['id']} published" in added.out
    expect(
        c("-c", host, "add-member", alice.upper(), "--role", "admin"),
        0,
        "already a member, as member (no change)",
    )
    assert write("add-member", bob, "--role", "admin") | {"snapshot": None} == {
        "outcome": "added",
        "snapshot": None,
        "community": {"id": str(cid), "host": host},
        "pubkey": bob,
        "role": "admin",
        "current_role": "admin",
        "list_id": live(reader, cid)["id"],
        "exit_code": 0,
    }
    same = write("add-member", bob)
    assert (same["outcome"], same["snapshot"], same["current_role"]) == (
        "already_member",
        None,
        "admin",
    )
    # Several at once: one list.
    before = live(reader, cid)["created_at"]
    many = write("add-member", carol, dave, alice)
    assert (many["outcome"], many["added"], many["already_members"]) == (2, 2, 1)
    assert many["snapshot"]["created_at"] > before
    expect(c("-c", host, "add-member", new_pubkey(), "--role", "owner"), 1, "BZIRL", "nothing")

    # members: a table by role, and JSON.
    table = expect(c("-c", host, "members"), 0, "5 members", "1 owner", "1 admin", "3 members")
    rows = table.out.splitlines()
    assert rows[0].split()[:2] == ["ROLE", "PUBKEY"]
    assert rows[1].split()[:2] == ["owner", npub(owner)]
    assert rows[2].split()[:2] == ["admin", npub(bob)]
    assert bob in expect(c("-c", host, "members", "--hex"), 0).out
    listed = c("-c", host, "members", "--json").json()
    assert listed["community"] == {"id": str(cid), "host": host}
    assert {m["pubkey"]: m["role"] for m in listed["members"]} == members_of(reader, cid)
    assert all(m["npub"] == npub(m["pubkey"]) for m in listed["members"])
    admins = c("-c", host, "members", "--role", "admin", "--json").json()["members"]
    assert [m["pubkey"] for m in admins] == [bob]

    # remove-member and its refusals: 2 not a member, 3 owner, 4 role mismatch.
    stranger = new_pubkey()
    r = expect(c("-c", host, "remove-member", stranger), 2, "not a member", "nothing was changed")
    assert r.out == ""
    assert write("remove-member", stranger)["outcome"] == "not_member"
    expect(c("-c", host, "remove-member", owner), 3, "is the owner", "transfer-ownership")
    expect(c("-c", host, "remove-member", owner, "--if-role", "owner"), 3)
    expect(
        c("-c", host, "remove-member", bob, "--if-role", "member"),
        4,
        "is an admin, not a member",
        "nothing was changed",
    )
    mismatch = write("remove-member", bob, "--if-role", "member")
    assert (mismatch["outcome"], mismatch["current_role"], mismatch["exit_code"]) == (
        "role_mismatch",
        "admin",
        4,
    )
    assert members_of(reader, cid)[bob] == "admin"
    removed = write("remove-member", carol, "--if-role", "member")
    assert removed["outcome"] == "removed" and carol not in members_of(reader, cid)
    expect(c("-c", host, "remove-member", dave), 0, f"removed {npub(dave)}", "published")

    # set-role
    expect(c("-c", host, "set-role", npub(alice), "admin"), 0, f"{npub(alice)} is now admin")
    assert write("set-role", alice, "admin")["outcome"] == "unchanged"
    expect(c("-c", host, "set-role", stranger, "member"), 2, "not a member")
    expect(c("-c", host, "set-role", owner, "member"), 3, "owner")
    expect(c("-c", host, "set-role", alice, "owner"), 1, "BZIRL")
    expect(c("-c", host, "set-role", alice, "boss"), 1, "boss")

    # transfer-ownership: 4 when the expected owner is not the owner; then done, then no-op.
    conflict = write("transfer-ownership", alice, "--expected-owner", bob)
    assert (conflict["outcome"], conflict["exit_code"]) == ("owner_conflict", 4)
    expect(c("-c", host, "transfer-ownership", alice, "--expected-owner", bob), 4, "not")
    done = write("transfer-ownership", alice, "--expected-owner", npub(owner))
    assert done["outcome"] == "transferred"
    assert members_of(reader, cid)[alice] == "owner"
    assert members_of(reader, cid)[owner] == "member"
    expect(c("-c", host, "transfer-ownership", alice), 0, "already the owner", "no change")
    # limit_reached: alice may own one community only, and owns this one.
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 1")
    other = reader.community_id(host)
    assert other == cid
    expect(c("community", "create", new_host(), "--owner", owner), 0, "created")
    expect(c("-c", host, "transfer-ownership", owner), 1, "most communities", "nothing")
    su.execute("UPDATE buzz_private.settings SET max_communities_per_owner = 50")

    # bootstrap-owner: makes the owner; any other owner becomes an admin.
    boot = write("bootstrap-owner", bob)
    assert boot["outcome"] == "provisioned"
    assert members_of(reader, cid)[bob] == "owner" and members_of(reader, cid)[alice] == "admin"
    expect(c("-c", host, "bootstrap-owner", bob), 0, "already the owner", "no change")
    # no_owner: a community whose owner row went away behind the API's back.
    as_replica(
        db_url,
        cid,
        "DELETE FROM buzz_private.relay_members WHERE community_id = %s AND pubkey = %s",
        cid,
        bob,
    )
    expect(c("-c", host, "transfer-ownership", alice), 2, "has no owner", "bootstrap-owner")

    # claim-membership
    eve = new_pubkey()
    claim = write("claim-membership", eve, "--policy-version", "v1")
    assert claim["outcome"] == "joined" and members_of(reader, cid)[eve] == "member"
    expect(c("-c", host, "claim-membership", eve), 0, "already a member", "no change")
    expect(c("-c", host, "claim-membership", eve, "--policy-version", "x" * 65), 1, "22023")


def test_bad_input_keys_and_database_failures(
    fast: InProcess, community: Community, reader: Membership, tmp_path: Path
) -> None:
    host = community.host
    secret = RelayKey.generate()
    # A pubkey that is not one: exit 1; a pasted nsec is refused and never echoed.
    bad = expect(fast("-c", host, "add-member", "abc"), 1, "64 hexadecimal")
    assert "Usage" in bad.err
    pasted = expect(fast("-c", host, "add-member", secret.nsec()), 1, "secret key")
    assert secret.nsec() not in pasted.out + pasted.err
    expect(fast("-c", host, "remove-member", "npub1qqqq"), 1)
    expect(fast("nosuch"), 1, "No such command")
    expect(fast("-c", host, "add-member"), 1, "Missing argument")

    # The relay key: from the environment or --key-file only, never printed.
    pk = new_pubkey()
    expect(
        fast("-c", host, "add-member", pk, BUZZ_RELAY_SECRET_KEY=None),
        1,
        "BUZZ_RELAY_SECRET_KEY",
        "nothing was changed",
    )
    garbage = expect(
        fast("-c", host, "add-member", pk, BUZZ_RELAY_SECRET_KEY="not-a-key-123"), 1, "relay key"
    )
    assert "not-a-key-123" not in garbage.err
    key_file = tmp_path / "relay.key"
    key_file.write_text(fast.key.nsec() + "\n")
    key_file.chmod(0o600)
    ok = fast("--key-file", str(key_file), "-c", host, "add-member", pk, BUZZ_RELAY_SECRET_KEY=None)
    expect(ok, 0, "added")
    assert fast.key.secret_hex() not in ok.out + ok.err and fast.key.nsec() not in ok.out + ok.err
    key_file.chmod(0o644)
    loose = fast(
        "-c", host, "add-member", pk, "--key-file", str(key_file), BUZZ_RELAY_SECRET_KEY=None
    )
    expect(loose, 0, "readable by group or others", "already a member")
    expect(fast("-c", host, "members", "--key-file", str(tmp_path / "none")), 0)  # reads need none
    expect(
        fast("-c", host, "add-member", new_pubkey(), "--key-file", str(tmp_path / "none")),
        1,
        "cannot read key file",
    )

    # Another key than the relay's recorded one: BZKEY, 5, nothing changed.
    other = RelayKey.generate()
    wrong = fast("-c", host, "add-member", new_pubkey(), BUZZ_RELAY_SECRET_KEY=other.secret_hex())
    expect(wrong, 5, "BZKEY", "nothing was changed (the transaction was rolled back)")
    data = fast(
        "-c", host, "add-member", new_pubkey(), "--json", BUZZ_RELAY_SECRET_KEY=other.secret_hex()
    ).json()
    assert data["error"]["sqlstate"] == "BZKEY"
    assert (data["exit_code"], data["changed"], data["outcome"]) == (5, False, None)
    assert len(members_of(reader, community.cid)) == 2

    # An unreachable database: 5.
    gone = "postgresql://nobody@/no_such_db?host=/nonexistent&port=1"
    expect(fast("-c", host, "members", DATABASE_URL=gone), 5, "could not connect")
    expect(
        fast("-c", host, "add-member", pk, DATABASE_URL=gone),
        5,
        "could not connect",
        "nothing was changed",
    )


# --------------------------------------------------------------------------- invites, allowlist


def test_invites(
    fast: InProcess, community: Community, reader: Membership, su: psycopg.Connection
) -> None:
    host, cid = community.host, community.cid
    made = expect(fast("-c", host, "invite", "create", "--max-uses", "2", "--ttl", "1h"), 0)
    lines = dict(line.split(None, 1) for line in made.out.splitlines())
    code, invite_id = lines["code"], lines["invite"].split()[0]
    assert len(code) == 32 and "shown this once" in made.err
    # Only the hash is stored.
    stored = su.execute(
        "SELECT count(*) FROM buzz_private.relay_invites WHERE invite_id = %s", (invite_id,)
    )
    assert stored.fetchone()[0] == 1
    assert code not in str(su.execute("SELECT * FROM buzz_private.relay_invites").fetchall())

    a, b, d = new_pubkey(), new_pubkey(), new_pubkey()
    joined = fast("-c", host, "invite", "claim", code, npub(a), "--json").json()
    assert (joined["outcome"], joined["use_count"], joined["uses_remaining"]) == ("joined", 1, 1)
    assert joined["snapshot"] == live(reader, cid)
    expect(fast("-c", host, "invite", "claim", code.upper(), a), 0, "already a member", "no use")
    expect(fast("-c", host, "invite", "claim", code, b), 0, "joined", "used 2 of 2", "published")
    exhausted = expect(fast("-c", host, "invite", "claim", code, d), 1, "no use left", "nothing")
    assert exhausted.out == ""
    expect(fast("-c", host, "invite", "claim", "00" * 16, d), 2, "no invite", "this code")
    assert d not in members_of(reader, cid)

    unlimited = fast("-c", host, "invite", "create", "--unlimited", "--json").json()
    assert unlimited["max_uses"] is None and len(unlimited["code"]) == 32
    expect(fast("-c", host, "invite", "claim", unlimited["code"], d), 0, "unlimited")
    su.execute(
        "UPDATE buzz_private.relay_invites SET expires_at = now() - interval '1 second'"
        " WHERE invite_id = %s",
        (unlimited["invite_id"],),
    )
    expired = fast("-c", host, "invite", "claim", unlimited["code"], new_pubkey(), "--json")
    assert (expired.code, expired.json()["outcome"]) == (1, "expired")

    expect(fast("-c", host, "invite", "revoke", invite_id), 0, f"revoked invite {invite_id}")
    expect(fast("-c", host, "invite", "revoke", invite_id), 2, "no invite")
    expect(fast("-c", host, "invite", "revoke", "12345"), 1, "UUID")
    expect(fast("-c", host, "invite", "claim", code, new_pubkey()), 2)

    expect(fast("-c", host, "invite", "create", "--ttl", "10s"), 1, "BZINV", "nothing")
    expect(fast("-c", host, "invite", "create", "--max-uses", "0"), 1, "BZINV")
    expect(fast("-c", host, "invite", "create", "--ttl", "soon"), 1, "not a duration")
    expect(fast("-c", host, "invite", "create", "--unlimited", "--max-uses", "3"), 1, "not both")
    week = fast("-c", host, "invite", "create", "--ttl", "6d23h", "--json").json()
    assert week["outcome"] == "created" and week["exit_code"] == 0


def test_allowlist_import_and_backfill(
    fast: InProcess,
    community: Community,
    reader: Membership,
    su: psycopg.Connection,
    tmp_path: Path,
) -> None:
    host, cid, owner = community.host, community.cid, community.owner
    first = new_pubkey()
    expect(fast("-c", host, "allowlist", "add", npub(first), "--note", "early"), 0, "allowlisted")
    again = fast("-c", host, "allowlist", "add", first, "--json").json()
    assert (again["outcome"], again["snapshot"]) == ("already_listed", None)

    keys = [new_pubkey() for _ in range(1203)]  # more than one chunk of 1000
    lines = ["# supporters", "", npub(keys[0]), keys[1].upper(), "not a key", first]
    lines += keys[2:1100] + ["nsec1" + "q" * 58] + keys[1100:] + [keys[5]]
    path = tmp_path / "allow.txt"
    path.write_text("\n".join(lines) + "\n")
    run = fast("-c", host, "allowlist", "import", str(path), "--json")
    assert run.code == 1, run
    data = run.json()
    assert (data["added"], data["already_listed"]) == (1203, 2)
    assert [i["line"] for i in data["invalid"]] == [5, 1105]
    assert "secret key" in data["invalid"][1]["reason"]
    assert f"{path}:5:" in run.err and f"{path}:1105:" in run.err
    listed = su.execute(
        "SELECT pubkey FROM buzz_private.relay_allowlist WHERE community_id = %s", (cid,)
    ).fetchall()
    assert {r[0] for r in listed} == {first, *keys}
    # Not a membership change: no list was written.
    assert members_of(reader, cid) == {owner: "owner"}
    # Again, from stdin, without the bad lines: no change, exit 0.
    clean = "\n".join(k for k in keys[:10]) + "\n"
    expect(
        fast("-c", host, "allowlist", "import", "-", input=clean),
        0,
        "allowlisted 0 pubkeys; 10 already listed",
    )

    # A refused chunk (a note over 1000 characters) keeps nothing of itself.
    refused = fast("-c", host, "allowlist", "import", "-", "--note", "x" * 1001, input=new_pubkey())
    expect(refused, 1, "22023", "nothing was changed (the transaction was rolled back)")

    before = live(reader, cid)["id"]
    filled = fast("-c", host, "backfill", "--json").json()
    assert (filled["outcome"], filled["added"]) == (1204, 1204)
    assert filled["snapshot"] == live(reader, cid) and filled["list_id"] != before
    assert len(members_of(reader, cid)) == 1205
    expect(fast("-c", host, "backfill"), 0, "backfilled nobody (no change)")


def test_progress_bar_only_on_a_terminal(cli: Cli, community: Community, tmp_path: Path) -> None:
    import pty

    path = tmp_path / "keys.txt"
    path.write_text("\n".join(new_pubkey() for _ in range(5)) + "\n")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [str(BUZZ_ADMIN), "-c", community.host, "allowlist", "import", str(path)],
            env=cli.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
        )
        os.close(slave)
        slave = -1
        out, _ = proc.communicate(timeout=TIMEOUT)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert proc.returncode == 0 and "allowlisted 5 pubkeys" in out
    assert b"allowlisting 5 pubkeys" in shown  # the bar, on the terminal only
    assert "allowlisting" not in out


# --------------------------------------------------------------------------- lists


def test_show_list_and_republish(
    fast: InProcess,
    community: Community,
    mem: Membership,
    reader: Membership,
    db_url: str,
    su: psycopg.Connection,
) -> None:
    host, cid = community.host, community.cid
    mem.add_relay_member(cid, new_pubkey(), "admin")
    event = live(reader, cid)
    raw = expect(fast("-c", host, "show-list", "--json"), 0)
    assert json.loads(raw.out) == event and raw.out.count("\n") == 1
    text = expect(fast("-c", host, "show-list"), 0, event["id"], "signature  valid", "members    2")
    assert npub(community.owner) in text.out
    assert community.owner in expect(fast("-c", host, "show-list", "--hex"), 0).out

    again = fast("-c", host, "republish-members", "--json").json()
    assert again["outcome"] == "republished"
    assert again["snapshot"] == live(reader, cid) and again["list_id"] != event["id"]
    assert again["snapshot"]["created_at"] > event["created_at"]
    assert again["snapshot"]["tags"] == event["tags"]

    other = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    mem.archive_community(other)  # republish is a repair: it works on archived ones
    everything = fast("republish-members", "--all", "--json").json()
    assert {r["community"]["id"] for r in everything["republished"]} == {str(cid), str(other)}
    assert everything["failed"] == []
    expect(fast("republish-members", "--all"), 0, "republished 2 of 2 communities")
    expect(fast("republish-members", "--all", "--drifted"), 0, "republished 0 of 0")
    expect(fast("-c", host, "republish-members", "--all"), 1, "not both")
    expect(fast("republish-members", "--drifted"), 1, "--all")

    # One community that cannot be republished does not stop the others: here its list is
    # far ahead of the clock (BZLAG); the other is republished, and the run exits 5.
    su.execute("UPDATE buzz_private.settings SET max_list_lead_seconds = 50")
    ahead = (
        "UPDATE buzz_private.member_lists SET created_at = extract(epoch FROM now())::bigint + 100"
        " WHERE community_id = %s"
    )
    as_replica(db_url, other, ahead, other)
    partial = fast("republish-members", "--all", "--json")
    assert partial.code == 5, partial
    result = partial.json()
    assert [r["community"]["id"] for r in result["republished"]] == [str(cid)]
    assert [(f["community"]["id"], f["changed"]) for f in result["failed"]] == [(str(other), False)]
    assert "BZLAG" not in partial.out and "ahead" in result["failed"][0]["error"]
    words = fast("republish-members", "--all")
    expect(words, 5, "republished 1 of 2 communities; 1 failed", "nothing of it was changed")
    su.execute("UPDATE buzz_private.settings SET max_list_lead_seconds = 300")

    # A community whose list went missing behind the API's back: show-list says so (2).
    as_replica(db_url, cid, "DELETE FROM buzz_private.member_lists WHERE community_id = %s", cid)
    expect(fast("-c", host, "show-list"), 2, "no live membership list", "republish-members")


def test_verify_catches_lists_made_wrong_by_direct_sql(
    cli: Cli,
    fast: InProcess,
    mem: Membership,
    reader: Membership,
    db_url: str,
    key: RelayKey,
) -> None:
    hosts = [new_host() for _ in range(3)]
    cids = [mem.create_community(h, new_pubkey()).details["community_id"] for h in hosts]
    ok = expect(cli("verify"), 0, "all 3 lists verified")
    assert all(h in ok.out for h in hosts)
    assert cli("verify", "--json").json()["ok"] is True

    # Stale: a member added with triggers off, another's role changed; the list is untouched.
    sneaky = new_pubkey()
    insert = (
        "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
        " VALUES (%s, %s, 'member')"
    )
    as_replica(db_url, cids[0], insert, cids[0], sneaky)
    # Forged: a valid-looking list whose signature is not the relay's.
    forge = "UPDATE buzz_private.member_lists SET sig = %s WHERE community_id = %s"
    as_replica(db_url, cids[1], forge, "ab" * 64, cids[1])
    run = expect(cli("verify"), 5, "2 of 3 communities have a wrong list", "republish-members")
    fails = [line for line in run.out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 2, run
    assert hosts[0] in fails[0] or hosts[0] in fails[1]
    stale = next(line for line in fails if hosts[0] in line)
    assert "members_differ" in stale and npub(sneaky) in stale and "not in the list" in stale
    forged = next(line for line in fails if hosts[1] in line)
    assert "bad_signature" in forged
    assert f"ok    {hosts[2]}" in run.out
    # The database's drift check sees both too (verify's checks are its own, from outside).
    assert sorted((str(d.community_id), d.problem) for d in reader.member_list_drift()) == sorted(
        [(str(cids[0]), "members_differ"), (str(cids[1]), "bad_signature")]
    )

    data = cli("verify", "--json").json()
    assert data["ok"] is False and data["exit_code"] == 5
    by_host = {c["community"]["host"]: c for c in data["communities"]}
    assert [p["problem"] for p in by_host[hosts[0]]["problems"]] == ["members_differ"]
    assert [p["problem"] for p in by_host[hosts[1]]["problems"]] == ["bad_signature"]
    assert by_host[hosts[2]]["ok"] is True
    # One community only, by --community or RELAY_URL.
    expect(fast("verify", "-c", hosts[2]), 0, "all 1 lists verified")
    expect(fast("verify", RELAY_URL=f"wss://{hosts[0]}"), 5, "members_differ")
    # The key that signed: another expected key is a problem of its own.
    other = RelayKey.generate().pubkey
    expect(fast("verify", "-c", hosts[2], "--relay-pubkey", npub(other)), 5, "wrong_key")
    expect(
        fast("verify", "-c", hosts[2], BUZZ_RELAY_SECRET_KEY=None),
        0,
        "not checked which key signed",
    )
    # An id that does not match the content.
    later = (
        "UPDATE buzz_private.member_lists SET created_at = created_at + 1 WHERE community_id = %s"
    )
    as_replica(db_url, cids[2], later, cids[2])
    expect(fast("verify", "-c", hosts[2]), 5, "id_mismatch", "hashes to")

    # Repair: republish the drifted ones (the forged signature is drift too); all verify.
    expect(fast("republish-members", "--all", "--drifted"), 0, "republished 3 of 3")
    expect(cli("verify"), 0, "all 3 lists verified")
    assert sneaky in members_of(reader, cids[0])
    assert sneaky in {t[1] for t in live(reader, cids[0])["tags"][1:]}
    assert compute_id(live(reader, cids[0])) == live(reader, cids[0])["id"]


# --------------------------------------------------------------------------- watch


def test_watch_prints_lists_committed_by_other_processes_and_reconnects(
    cli: Cli, community: Community, su: psycopg.Connection, mem: Membership, admin_url: str
) -> None:
    host, cid = community.host, community.cid
    dbname = su.execute("SELECT current_database()").fetchone()[0]
    # Lists only: republish-members also re-signs every role definition (test_cli_roles.py
    # watches those).
    watcher = cli.popen(
        "-c", host, "watch", "--count", "4", "--json", "--timeout", "90", "--lists-only"
    )
    try:
        wait_listening(watcher)
        first = cli("-c", host, "add-member", new_pubkey(), "--json").json()
        seen = json.loads(read_line(watcher, "stdout"))
        assert seen["id"] == first["list_id"]
        assert seen["community"] == {"id": str(cid), "host": host}
        assert seen["event"] == first["snapshot"] and seen["members"] == 2
        assert seen["created_at"] == first["snapshot"]["created_at"]

        # Another community's list is not printed.
        cli("community", "create", new_host(), "--owner", new_pubkey())

        # The server drops the watcher's connection: it reconnects and listens again.
        drop_watcher(su)
        assert "connection lost" in read_line(watcher, "stderr")
        wait_listening(watcher)
        second = cli("-c", host, "remove-member", first["pubkey"], "--json").json()
        seen = json.loads(read_line(watcher, "stdout"))
        assert (seen["id"], seen["members"], seen["after_reconnect"]) == (
            second["list_id"],
            1,
            False,
        )
        third = cli("-c", host, "republish-members", "--json").json()
        seen = json.loads(read_line(watcher, "stdout"))
        assert seen["id"] == third["list_id"]

        # A list committed while the watcher cannot connect is printed once it is back.
        admin = psycopg.connect(admin_url, autocommit=True)  # not from the database itself
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(dbname))
        )
        try:
            drop_watcher(su)
            assert "connection lost" in read_line(watcher, "stderr")
            missed = mem.add_relay_member(cid, new_pubkey())  # a connection opened before
            assert "connection lost" in read_line(watcher, "stderr")  # it cannot get back
        finally:
            admin.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(dbname))
            )
            admin.close()
        seen = json.loads(read_line(watcher, "stdout"))
        assert (seen["id"], seen["after_reconnect"]) == (missed.snapshot["id"], True)
        assert seen["event"] == missed.snapshot
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        assert out == ""
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


def test_watch_in_words_every_community_and_timeout(cli: Cli, mem: Membership) -> None:
    # A new community: its list and the definitions of its three base roles.
    watcher = cli.popen("watch", "--count", "4", "--timeout", "60")
    try:
        wait_listening(watcher)
        host = new_host()
        created = cli("community", "create", host, "--owner", new_pubkey(), "--json").json()
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        lines = out.splitlines()
        assert len(lines) == 4, out
        (listed,) = [line for line in lines if line.startswith(f"{host} list ")]
        assert listed.startswith(f"{host} list {created['list_id']} created_at ")
        assert listed.endswith("1 members")
        roles = sorted(line.split()[2] for line in lines if line.startswith(f"{host} role "))
        assert roles == ["admin", "member", "owner"]
        assert any(line.endswith('label "Owner"') for line in lines)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
    # Nothing happens: --timeout ends it, exit 0.
    start = time.monotonic()
    expect(cli("watch", "--timeout", "1"), 0, "listening")
    assert time.monotonic() - start < 15
    expect(cli("watch", "-c", "nowhere.example.org", "--timeout", "1"), 2, "no community")


# --------------------------------------------------------------------------- concurrency


def test_two_runs_at_once_both_succeed_and_both_are_in_the_list(
    cli: Cli, community: Community, reader: Membership, db_url: str, su: psycopg.Connection
) -> None:
    """They serialize in the database: both wait on the community's list lock, held here by
    hand, then both commit, and the final list names both."""
    host, cid = community.host, community.cid
    a, b = new_pubkey(), new_pubkey()
    with ListLockHolder(db_url, cid) as holder:
        procs = [cli.popen("-c", host, "add-member", pk, "--json") for pk in (a, b)]
        deadline = time.monotonic() + 30
        # Both runs are inside their transactions, waiting for the list lock.
        while len(list_lock_waiters(su, cid)) < 2:
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            assert time.monotonic() < deadline, "the two runs never both waited for the lock"
            time.sleep(0.05)
        holder.release()  # they go one after the other
        results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    outs = [json.loads(out) for out, _ in results]
    assert {o["outcome"] for o in outs} == {"added"}
    final = live(reader, cid)
    assert {t[1] for t in final["tags"][1:]} == {community.owner, a, b}
    assert final["id"] in {o["list_id"] for o in outs}
    assert outs[0]["snapshot"]["created_at"] != outs[1]["snapshot"]["created_at"]
    expect(cli("verify", "-c", host), 0)


# --------------------------------------------------------------------------- commit lost

# On a cluster the trigger on member_lists fires on the worker, in Citus's session there.
FAULT_IN_THE_CLIENTS_SESSION = "a trigger that ends buzz-admin's own session at COMMIT"


@pytest.mark.single_server(FAULT_IN_THE_CLIENTS_SESSION)
def test_a_connection_lost_during_commit_says_the_outcome_is_unknown(
    cli: Cli, community: Community, su: psycopg.Connection
) -> None:
    # A deferred trigger that ends buzz-admin's session at COMMIT, after the list is signed.
    su.execute("""
        CREATE FUNCTION public.die_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF current_setting('application_name') = 'buzz-admin' THEN
                PERFORM pg_terminate_backend(pg_backend_pid());
                PERFORM pg_sleep(5);
            END IF;
            RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER die_at_commit AFTER INSERT OR UPDATE
            ON buzz_private.member_lists DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION public.die_at_commit();
    """)
    run = expect(
        cli("-c", community.host, "add-member", new_pubkey()),
        5,
        "lost during COMMIT",
        "may or may not",
        "show-list",
    )
    assert "nothing was changed" not in run.err
    data = cli("-c", community.host, "add-member", new_pubkey(), "--json").json()
    assert (data["outcome"], data["changed"], data["exit_code"]) == ("unknown", "unknown", 5)
    # A failure before COMMIT (here: the community is archived) says nothing was kept.
    su.execute("DROP TRIGGER die_at_commit ON buzz_private.member_lists")
    cli("community", "archive", community.host)
    expect(cli("-c", community.host, "add-member", new_pubkey()), 1, "nothing was changed")


# --------------------------------------------------------------------------- key rotation


def test_rotate_key(
    fast: InProcess, community: Community, reader: Membership, tmp_path: Path
) -> None:
    host = community.host
    new_file = tmp_path / "new.key"
    made = expect(fast("keygen", str(new_file), "--json"), 0).json()
    expect(
        fast("--key-file", str(new_file), "rotate-key"), 1, "not confirmed", "nothing was changed"
    )
    assert live(reader, community.cid)["pubkey"] == fast.key.pubkey
    rotated = fast("--key-file", str(new_file), "rotate-key", "--yes", "--json").json()
    assert (rotated["outcome"], rotated["relay_pubkey"], rotated["re_signed"]) == (
        "rotated",
        made["pubkey"],
        1,
    )
    assert live(reader, community.cid)["pubkey"] == made["pubkey"]
    expect(fast("-c", host, "add-member", new_pubkey()), 5, "BZKEY", "nothing was changed")
    expect(fast("-c", host, "add-member", new_pubkey(), "--key-file", str(new_file)), 0, "added")
    expect(fast("verify", "--key-file", str(new_file)), 0, "all 1 lists verified")
    expect(fast("verify"), 5, "wrong_key")  # the old key, from the environment


# --------------------------------------------------------------------------- local commands


def test_keygen(fast: InProcess, tmp_path: Path) -> None:
    path = tmp_path / "relay.key"
    run = expect(fast("keygen", str(path)), 0, "pubkey ", "npub   npub1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = RelayKey.from_file(path)
    assert key.pubkey in run.out and key.npub in run.out
    assert key.secret_hex() not in run.out + run.err and key.nsec() not in run.out + run.err
    expect(fast("keygen", str(path)), 1, "exists", "not overwriting")
    assert RelayKey.from_file(path).pubkey == key.pubkey
    shown = fast("keygen", str(tmp_path / "k2"), "--show-secret", "--json").json()
    assert RelayKey.from_file(tmp_path / "k2").secret_hex() == shown["secret"]
    assert RelayKey.from_secret(shown["nsec"]).pubkey == shown["pubkey"]
    expect(fast("keygen", str(tmp_path / "no" / "dir" / "k")), 1, "cannot create")


def test_json_flag_works_on_every_reading_command(fast: InProcess, community: Community) -> None:
    host = community.host
    for args in (
        ("members",),
        ("show-list",),
        ("verify",),
        ("community", "list"),
        ("role", "list"),
    ):
        for placed in (("--json", "-c", host, *args), ("-c", host, *args, "--json")):
            run = fast(*placed)
            assert run.code == 0, run
            assert isinstance(run.json(), dict), placed
