"""buzz-admin and invitations as a pyramid runs them (SPEC section 3, amended 2026-12-02), and
the key-admin role (SPEC section 4), through the real CLI against a real database (as
processes, and through click's runner for the variations): `quota show|set`, `members
--invites`, `invite create` refused for want of invites (BZQTA), `remove-member --branch`
(asked at a terminal, refused without one unless --yes), and `rotate-key` refused to a
writer for want of buzz_key_admin, done by a key admin.

Exit codes: 0 done or no change, 1 bad input (BZIRL, 22023, BZQTA, not confirmed), 3 owner,
5 database failure (42501).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from cli_runner import BUZZ_ADMIN, REPO, TIMEOUT, Cli, InProcess, expect, npub
from db_roles import as_role
from fixtures_membership import Community, members_of, new_pubkey

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import KIND_REMOVE_USER

pytest_plugins = ("fixtures_membership", "cli_runner", "db_roles")


def a_tree(mem: Membership, community: Community) -> dict[str, str]:
    """owner -> top -> child -> grandchild, owner -> other."""
    people = {name: new_pubkey() for name in ("top", "child", "grandchild", "other")}
    mem.add_relay_member(community.cid, people["top"], "member", community.owner)
    mem.add_relay_member(community.cid, people["child"], "member", people["top"])
    mem.add_relay_member(community.cid, people["grandchild"], "member", people["child"])
    mem.add_relay_member(community.cid, people["other"], "member", community.owner)
    return people


# --------------------------------------------------------------------------- quotas


def test_quota_show_and_set(fast: InProcess, community: Community, reader: Membership) -> None:
    c, cid = ("-c", community.host), community.cid
    shown = expect(fast(*c, "quota", "show"), 0).out.splitlines()
    assert shown == [
        f"invite quotas of {community.host}: how many members each may bring in",
        "  owner   any number of members",
        "  admin   any number of members",
        "  member  nobody",
    ]
    assert fast(*c, "quota", "show", "--json").json() == {
        "community": {"id": str(cid), "host": community.host},
        "quotas": {"admin": None, "member": 0},
    }

    expect(
        fast(*c, "quota", "set", "member", "3"), 0, "members of", "may now bring in 3 members each"
    )
    assert reader.invite_quotas(cid) == {"admin": None, "member": 3}
    expect(
        fast(*c, "quota", "set", "member", "3"), 0, "already bring in 3 members each (no change)"
    )
    done = fast(*c, "quota", "set", "admin", "1", "--json").json()
    assert (done["outcome"], done["role"], done["quota"], done["snapshot"]) == (
        "updated",
        "admin",
        1,
        None,
    )
    expect(fast(*c, "quota", "set", "admin", "none"), 0, "admins of", "any number of members")
    expect(fast(*c, "quota", "set", "member", "0"), 0, "may now bring in nobody")
    assert reader.invite_quotas(cid) == {"admin": None, "member": 0}

    # Refusals change nothing.
    expect(fast(*c, "quota", "set", "member", "--", "-1"), 1, "22023", "nothing was changed")
    expect(
        fast(*c, "quota", "set", "member", "three"), 1, "a number of members", "nothing was changed"
    )
    expect(fast(*c, "quota", "set", "owner", "1"), 1, "'owner' is not one of")
    assert reader.invite_quotas(cid) == {"admin": None, "member": 0}


def test_members_show_invites_left(fast: InProcess, community: Community, mem: Membership) -> None:
    c, cid, owner = ("-c", community.host), community.cid, community.owner
    people = a_tree(mem, community)
    admin = new_pubkey()
    mem.add_relay_member(cid, admin, "admin")
    assert mem.set_invite_quota(cid, "member", 2) == "updated"
    mem.create_relay_invite(cid, people["child"])

    rows = expect(fast(*c, "members", "--invites"), 0, "6 members").out.splitlines()
    assert rows[0].split() == [
        "ROLE",
        "PUBKEY",
        "ADDED",
        "BY",
        "JOINED",
        "INVITES",
        "LEFT",
        "ROLES",
    ]
    left = {line.split()[1]: line.split()[-2:] for line in rows[1:7]}
    assert left[npub(owner)] == ["limit", "-"]  # "no limit", then ROLES
    assert left[npub(admin)] == ["limit", "-"]
    assert left[npub(people["top"])][0] == "1"  # brought in child
    assert left[npub(people["child"])][0] == "0"  # grandchild and an invite
    assert left[npub(people["grandchild"])][0] == "2"
    # Without --invites the table is as it was; --json always says it.
    plain = expect(fast(*c, "members"), 0).out.splitlines()
    assert plain[0].split() == ["ROLE", "PUBKEY", "ADDED", "BY", "JOINED", "ROLES"]
    listed = fast(*c, "members", "--json").json()["members"]
    assert {m["pubkey"]: m["invites_left"] for m in listed} == {
        m.pubkey: mem.invites_left(cid, m.pubkey) for m in mem.relay_members(cid)
    }
    tree = expect(fast(*c, "members", "--tree", "--invites"), 0).out
    assert f"{npub(people['top'])}  brought in 1, 2 in all  invites left: 1" in tree
    assert f"owner   {npub(owner)}  brought in 2, 4 in all  invites left: no limit" in tree
    data = fast(*c, "members", "--tree", "--json").json()
    (top,) = data["tree"][0]["children"]
    assert (top["pubkey"], top["invites_left"]) == (owner, None)


def test_an_invite_without_invites_left_is_refused(
    fast: InProcess, community: Community, mem: Membership, reader: Membership
) -> None:
    c, cid = ("-c", community.host), community.cid
    member = new_pubkey()
    mem.add_relay_member(cid, member)
    run = expect(
        fast(*c, "invite", "create", "--created-by", member),
        1,
        "no invites left",
        "[BZQTA]",
        "set_invite_quota",
        "nothing was changed",
    )
    assert member not in run.out + run.err
    expect(fast(*c, "quota", "set", "member", "1"), 0)
    expect(
        fast(*c, "invite", "create", "--created-by", member, "--max-uses", "2"),
        1,
        "has 1 invites left",
    )
    expect(fast(*c, "invite", "create", "--created-by", member), 0, "code")
    assert [i.created_by for i in reader.relay_invites(cid)] == [member]
    expect(fast(*c, "invite", "create", "--unlimited"), 0, "uses unlimited")  # buzz-admin's own


# --------------------------------------------------------------------------- branches


def test_remove_member_with_the_branch(
    fast: InProcess, community: Community, mem: Membership, reader: Membership, key: RelayKey
) -> None:
    c, cid, owner = ("-c", community.host), community.cid, community.owner
    people = a_tree(mem, community)
    before = members_of(reader, cid)

    # Not at a terminal and no --yes: refused, naming how many would go; nothing changes.
    run = expect(
        fast(*c, "remove-member", people["top"], "--branch"),
        1,
        f"--branch would remove {npub(people['top'])} and the 2 members they brought in (3 in all)",
        "not at a terminal",
        "--yes",
        "nothing was changed",
    )
    assert "list " not in run.out
    assert members_of(reader, cid) == before
    expect(
        fast(*c, "remove-member", people["top"], "--branch", "--if-role", "member"), 1, "not both"
    )
    expect(fast(*c, "remove-member", owner, "--branch"), 3, "is the owner", "nothing was changed")

    removed = fast(*c, "remove-member", people["top"], "--branch", "--yes", "--json").json()
    gone = {people["top"], people["child"], people["grandchild"]}
    assert (removed["outcome"], set(removed["removed"])) == ("removed", gone)
    assert removed["snapshot"] == reader.member_list(cid)
    assert members_of(reader, cid) == {owner: "owner", people["other"]: "member"}
    kinds = {(ev["kind"], ev["tags"][1][1]) for ev in reader.membership_events(cid)}
    assert {(KIND_REMOVE_USER, pk) for pk in gone} <= kinds

    # A member who brought in nobody: asked the same way, said as such.
    expect(
        fast(*c, "remove-member", people["other"], "--branch", "-y"),
        0,
        f"removed {npub(people['other'])} (they brought in nobody)",
        "list ",
    )


def test_remove_member_branch_asks_at_a_terminal(
    cli: Cli, community: Community, mem: Membership, reader: Membership
) -> None:
    """A real process on a terminal: the question names how many go; 'n' changes nothing,
    'y' removes them."""
    people = a_tree(mem, community)
    cid = community.cid
    args = ["-c", community.host, "remove-member", people["top"], "--branch"]
    said, code = on_a_terminal(cli, args, "n\n")
    assert f"Remove {npub(people['top'])} and the 2 members they brought in (3 in all)?" in said
    assert code == 1 and "not confirmed" in said
    assert people["top"] in members_of(reader, cid)
    said, code = on_a_terminal(cli, args, "y\n")
    assert code == 0, said
    assert f"removed {npub(people['top'])} and the 2 members they brought in" in said
    assert members_of(reader, cid) == {community.owner: "owner", people["other"]: "member"}


def on_a_terminal(cli: Cli, args: list[str], answer: str) -> tuple[str, int]:
    """buzz-admin `args` with a pseudo-terminal as stdin, stdout and stderr, answering
    `answer` once it has asked: what it printed, and its exit code."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [str(BUZZ_ADMIN), *args],
            env=cli.env(),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO,
        )
        os.close(slave)
        slave = -1
        said = _read_until(master, b"[y/N]")
        os.write(master, answer.encode())
        proc.wait(timeout=TIMEOUT)
        said += _read_until(master, None)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    return said.decode(errors="replace"), proc.returncode


def _read_until(fd: int, marker: bytes | None) -> bytes:
    """What the terminal shows until `marker` (None: until its other end closes)."""
    import select

    shown = b""
    while marker is None or marker not in shown:
        ready, _, _ = select.select([fd], [], [], TIMEOUT)
        if not ready:
            raise AssertionError(f"nothing more on the terminal; it showed {shown!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        shown += chunk
    return shown


# --------------------------------------------------------------------------- the key admin


def test_rotate_key_needs_the_key_admin_role(
    db_url: str,
    community: Community,
    reader: Membership,
    login_role: Any,
    tmp_path: Path,
    key: RelayKey,
) -> None:
    new_file = tmp_path / "new.key"
    new_key = RelayKey.generate()
    new_file.write_text(new_key.secret_hex() + "\n")
    new_file.chmod(0o600)
    writer = InProcess(as_role(db_url, login_role("buzz_writer")), key)
    run = expect(
        writer("--key-file", str(new_file), "rotate-key", "--yes"),
        5,
        "may not rotate the relay key",
        "buzz_key_admin",
        'GRANT buzz_key_admin TO "buzz_sec_',
        "[42501]",
        "nothing was changed",
    )
    assert new_key.secret_hex() not in run.out + run.err
    assert reader.member_list(community.cid)["pubkey"] == key.pubkey  # not rotated
    failed = writer("--key-file", str(new_file), "rotate-key", "--yes", "--json").json()
    assert (failed["exit_code"], failed["error"]["sqlstate"], failed["changed"]) == (
        5,
        "42501",
        False,
    )

    admin = InProcess(as_role(db_url, login_role("buzz_key_admin")), key)
    expect(admin("--key-file", str(new_file), "rotate-key", "--yes"), 0, "re-signed 1 lists")
    assert reader.member_list(community.cid)["pubkey"] == new_key.pubkey
