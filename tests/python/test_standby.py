"""A streaming standby serves the lists: member_list there builds each list from its stored
pieces, because the copies the primary keeps (live_list_cache) are UNLOGGED and a standby
can neither have nor read them.

A throwaway primary and a standby made from it with pg_basebackup, each a LocalCluster of its
own on a free port; both removed at the end.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from ports import free_port

from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

pytest.register_assert_rewrite("fixtures_membership")
from fixtures_membership import assert_list_event, members_of, new_host, new_pubkey

pytest_plugins = ("fixtures_membership",)


@pytest.fixture
def primary_and_standby(tmp_path: Path) -> Iterator[tuple[LocalCluster, LocalCluster]]:
    primary = LocalCluster(root=tmp_path / "primary", port=free_port())
    standby = LocalCluster(root=tmp_path / "standby", port=free_port())
    try:
        primary.start()
        standby._prepare_dirs()
        r = standby._run(
            [
                str(standby.bindir / "pg_basebackup"),
                "-h", str(primary.socket_dir), "-p", str(primary.port), "-U", "postgres",
                "-D", str(standby.data_dir), "-R", "-X", "stream", "--no-sync",
            ]
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        standby.start()  # standby.signal (from -R): a hot standby streaming from the primary
        yield primary, standby
    finally:
        for c in (standby, primary):
            c.destroy()


def caught_up(primary: psycopg.Connection, standby: psycopg.Connection) -> None:
    lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    deadline = time.monotonic() + 30
    while standby.execute("SELECT pg_last_wal_replay_lsn() < %s::pg_lsn", (lsn,)).fetchone() != (
        False,
    ):
        assert time.monotonic() < deadline, "the standby did not catch up in 30 s"
        time.sleep(0.05)


def test_a_standby_serves_every_list_from_its_pieces(primary_and_standby, key) -> None:
    primary, standby = primary_and_standby
    # Before the database exists the standby has nothing to show: create, migrate, write.
    url = primary.create_database("buzz")
    upgrade(url)
    with Membership.connect(url, key) as m:
        cid = m.create_community(new_host(), new_pubkey()).details["community_id"]
        m.add_relay_members(cid, [new_pubkey() for _ in range(300)])
        live = m.member_list(cid)
        copies = m.conn.execute("SELECT count(*) FROM buzz_private.live_list_cache").fetchone()
    assert copies == (1,)  # the primary serves its copy

    standby_url = standby.url("buzz")
    with (
        psycopg.connect(url, autocommit=True) as p,
        psycopg.connect(standby_url, autocommit=True) as s,
        Membership.connect(standby_url, key) as on_standby,
    ):
        caught_up(p, s)
        assert s.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        # What the served copy would need: PostgreSQL refuses it outright on a standby.
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="unlogged"):
            s.execute("SELECT count(*) FROM buzz_private.live_list_cache")
        assert on_standby.member_list(cid) == live
        assert_list_event(live, key.pubkey, members_of(on_standby, cid))
        assert on_standby.member_list_drift() == []

        # A later write reaches the standby's list as well.
        with Membership.connect(url, key) as m:
            w = m.add_relay_member(cid, new_pubkey())
        caught_up(p, s)
        assert on_standby.member_list(cid) == w.snapshot != live
