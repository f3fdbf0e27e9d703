"""A live database upgraded from the oldest revision still supported (0006) to head, as
docs/operations.md ("Upgrading with live data") tells an operator to.

The database is built and filled by that release's own code (its migrations, its function
files, its Python API), checked out from git into a temporary directory; then this
checkout's `buzz-admin migrate` upgrades it. After it: every member kept with their role,
every list verifying, nothing drifted, and writes through both the old release's API (an old
relay still serving during a rolling restart) and the new one.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.migrate import head_revision
from buzz_signer.nostr import verify_event

REPO = Path(__file__).resolve().parents[2]
OLDEST_SUPPORTED = "0006"

pytest_plugins = ("fixtures_membership",)
BIN = Path(sys.executable).parent

# Run by the old release's Python: the database built, then filled through its API. Prints
# what it made. argv: the URL, the relay key (hex), the number of members.
FILL = """
import json, secrets, sys
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
url, key, n = sys.argv[1], RelayKey.from_secret(sys.argv[2]), int(sys.argv[3])
pk = lambda: secrets.token_bytes(32).hex()
made = {}
with Membership.connect(url, key) as m:
    for host in ("old-a.example.org", "old-b.example.org"):
        owner = pk()
        cid = m.create_community(host, owner).details["community_id"]
        members = [pk() for _ in range(n)]
        m.add_relay_members(cid, members)
        admin, gone = members[0], members[1]
        m.update_relay_member_role(cid, admin, "admin")
        m.remove_relay_member(cid, gone)
        made[str(cid)] = {"owner": owner, "admin": admin, "gone": gone, "members": members}
print(json.dumps(made))
"""
# An old relay's write after the upgrade. argv: the URL, the key, the community, a pubkey.
OLD_WRITE = """
import sys
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
with Membership.connect(sys.argv[1], RelayKey.from_secret(sys.argv[2])) as m:
    print(m.add_relay_member(sys.argv[3], sys.argv[4]).outcome)
"""


def release_commit(revision: str) -> str:
    """The last commit whose newest migration is `revision`: the one before the next was
    added."""
    following = f"{int(revision) + 1:04d}"
    added = subprocess.run(
        ["git", "-C", str(REPO), "log", "--diff-filter=A", "--format=%H", "--",
         f"db/migrations/versions/{following}_*.py"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()  # fmt: skip
    assert added, f"no commit adds migration {following}"
    return f"{added[-1]}^"


@pytest.fixture
def old_release(tmp_path: Path) -> Path:
    """The release at OLDEST_SUPPORTED, its files as git has them, in a directory."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the repository's history (a git clone)")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", release_commit(OLDEST_SUPPORTED),
         "alembic.ini", "buzz_signer", "db"],
        capture_output=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    tree = tmp_path / "old"
    with tarfile.open(fileobj=BytesIO(archive)) as t:
        t.extractall(tree, filter="data")
    return tree


def old(tree: Path, *argv: str, script: str | None = None) -> str:
    """Run the old release's Python (its buzz_signer first on the path); its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUZZ_", "PG"))}
    env["PYTHONPATH"] = str(tree)
    command = [sys.executable, "-c", script, *argv] if script else [sys.executable, *argv]
    done = subprocess.run(
        command, cwd=tree, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_database_filled_by_the_oldest_supported_release_upgrades_with_its_data(
    old_release: Path, empty_database: str, tmp_path: Path
) -> None:
    url, key = empty_database, RelayKey.generate()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUZZ_", "PG"))}
    old_env = env | {"DATABASE_URL": url, "PYTHONPATH": str(old_release)}
    built = subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(old_release / "alembic.ini"), "upgrade", "head"],
        cwd=old_release, env=old_env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    made = json.loads(old(old_release, url, key.secret_hex(), "200", script=FILL))

    # This checkout's migrate, as an operator runs it (no checkout of the old one needed).
    migrated = subprocess.run(
        [str(BIN / "buzz-admin"), "migrate"], cwd=tmp_path, env=env | {"DATABASE_URL": url},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert migrated.stdout.strip() == f"{OLDEST_SUPPORTED} -> {head_revision()}", migrated

    def check(mem: Membership, cid: str, expected: dict[str, str]) -> None:
        assert {m.pubkey: m.role for m in mem.relay_members(cid)} == expected
        live = mem.member_list(cid)
        assert verify_event(live) and live["pubkey"] == key.pubkey
        listed = {t[1]: t[2] for t in live["tags"] if t[0] == "member"}
        assert listed == expected

    with Membership.connect(url, key) as mem:
        for cid, c in made.items():
            expected = dict.fromkeys(c["members"], "member")
            expected |= {c["owner"]: "owner", c["admin"]: "admin"}
            del expected[c["gone"]]
            check(mem, cid, expected)
        drift = mem.conn.execute("SELECT * FROM buzz.member_list_drift()").fetchall()
        assert drift == []

        # During a rolling restart an old relay still writes, and a new one too.
        cid, c = next(iter(made.items()))
        from_old, from_new = secrets.token_bytes(32).hex(), secrets.token_bytes(32).hex()
        assert old(old_release, url, key.secret_hex(), cid, from_old, script=OLD_WRITE) == (
            "added\n"
        )
        assert mem.add_relay_member(cid, from_new).outcome == "added"
        expected = dict.fromkeys(c["members"], "member") | {from_old: "member", from_new: "member"}
        expected |= {c["owner"]: "owner", c["admin"]: "admin"}
        del expected[c["gone"]]
        check(mem, cid, expected)
        assert mem.conn.execute("SELECT * FROM buzz.member_list_drift()").fetchall() == []

    verified = subprocess.run(
        [str(BIN / "buzz-admin"), "verify", "--all", "--relay-pubkey", key.pubkey],
        cwd=tmp_path, env=env | {"DATABASE_URL": url},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified
