"""The DBA's backup round trip, exactly as docs/operations.md gives it.

`pg_dumpall --roles-only` and `pg_dump -Fc` of a database with communities, members, invites
and events; a fresh cluster (a LocalCluster of its own on a free port, the buzz_bip340 extension
installed on the machine); the roles, then `pg_restore --disable-triggers` into a new database.
Every list and event is byte-identical (the text member_list and membership_events serve),
drift is empty, a write commits with its list, and a write without its list still fails at
COMMIT with BZUNS.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest
from fixtures_membership import Community, assert_live_list, new_host, new_pubkey
from ports import free_port

from buzz_signer.keys import RelayKey
from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership

pytest_plugins = ("fixtures_membership",)


def run(*argv: str | Path) -> str:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done.stdout


def lists(url: str) -> dict[str, str]:
    """Each community's live list, as the text member_list serves."""
    with psycopg.connect(url) as c:
        return dict(
            c.execute(
                "SELECT community_id::text, buzz.member_list(community_id)::text"
                " FROM buzz.communities() ORDER BY 1"
            ).fetchall()
        )


def events(url: str) -> list[tuple[str, str]]:
    """Every community's 8000/8001 events, as the text membership_events serves."""
    with psycopg.connect(url) as c:
        return c.execute(
            "SELECT c.community_id::text, e::text FROM buzz.communities() c,"
            " LATERAL buzz.membership_events(c.community_id) WITH ORDINALITY AS x (e, n)"
            " ORDER BY 1, x.n"
        ).fetchall()


def test_dump_and_restore_into_a_fresh_cluster(
    mem: Membership, key: RelayKey, community: Community, db_url: str, admin_url: str, tmp_path
):
    for _ in range(3):
        mem.add_relay_member(community.cid, new_pubkey())
    other = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    mem.add_relay_members(other, [new_pubkey() for _ in range(50)], "member", "import")
    mem.create_relay_invite(community.cid, community.owner, max_uses=5)
    before, before_events = lists(db_url), events(db_url)
    assert len(before) == 2 and all(before.values())
    assert len(before_events) == 1 + 3 + 1 + 50

    source = LocalCluster()  # only for its binaries
    bindir = source.bindir
    roles, dump = tmp_path / "roles.sql", tmp_path / "buzz.dump"
    roles.write_text(run(bindir / "pg_dumpall", "--roles-only", "-d", admin_url))
    run(bindir / "pg_dump", "-Fc", "-f", dump, "-d", db_url)

    fresh = LocalCluster(root=tmp_path / "fresh", port=free_port())
    try:
        fresh.start()
        # The roles first (postgres exists already: psql goes on past that one error).
        subprocess.run(
            [str(bindir / "psql"), "-X", "-q", "-d", fresh.url("postgres"), "-f", str(roles)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        fresh.create_database("buzz")
        url = fresh.url("buzz")
        run(bindir / "pg_restore", "--disable-triggers", "--exit-on-error", "-d", url, dump)

        assert lists(url) == before, "a list changed in the round trip"
        assert events(url) == before_events, "an event changed in the round trip"
        with Membership.connect(url, key) as restored:
            assert restored.member_list_drift() == []
            write = restored.add_relay_member(community.cid, new_pubkey())
            assert write.outcome == "added"
            assert_live_list(restored, community.cid, write.snapshot, key.pubkey)
        with psycopg.connect(url) as c:
            c.execute("SELECT buzz.add_relay_member(%s, %s)", (community.cid, new_pubkey()))
            with pytest.raises(psycopg.Error) as refused:
                c.commit()
            assert refused.value.sqlstate == "BZUNS"
    finally:
        fresh.destroy()
