"""A streaming standby serves the lists: member_list there is byte for byte the text the
primary serves (it is built from the stored header and pieces, which replicate; nothing that
cannot be read during recovery is needed).

A throwaway primary and a standby made from it with pg_basebackup, each a LocalCluster of its
own on a free port; both removed at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from fixtures_membership import assert_list_event, live_text, members_of, new_host, new_pubkey
from ports import free_port

from buzz_signer.localdb import LocalCluster
from buzz_signer.membership import Membership
from buzz_signer.migrate import upgrade

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


def test_a_standby_serves_every_list_as_the_primary_does(primary_and_standby, key) -> None:
    primary, standby = primary_and_standby
    # Before the database exists the standby has nothing to show: create, migrate, write.
    url = primary.create_database("buzz")
    upgrade(url)
    with Membership.connect(url, key) as m:
        cid = m.create_community(new_host(), new_pubkey()).details["community_id"]
        other = m.create_community(new_host(), new_pubkey()).details["community_id"]
        m.add_relay_members(cid, [new_pubkey() for _ in range(300)])
        live = live_text(m, cid)
        live_other = live_text(m, other)
        events = m.conn.execute(
            "SELECT e::text FROM buzz.membership_events(%s) e", (cid,)
        ).fetchall()
    assert live is not None and live_other is not None and len(events) == 301

    standby_url = standby.url("buzz")
    with (
        psycopg.connect(url, autocommit=True) as p,
        psycopg.connect(standby_url, autocommit=True) as s,
        Membership.connect(standby_url, key) as on_standby,
    ):
        caught_up(p, s)
        assert s.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        # The same bytes as on the primary: every list, and the 8000/8001 events.
        assert live_text(on_standby, cid) == live
        assert live_text(on_standby, other) == live_other
        assert s.execute("SELECT e::text FROM buzz.membership_events(%s) e", (cid,)).fetchall() == (
            events
        )
        assert_list_event(json.loads(live), key.pubkey, members_of(on_standby, cid))
        assert on_standby.member_list_drift() == []

        # A later write reaches the standby's list as well, the same bytes again.
        with Membership.connect(url, key) as m:
            w = m.add_relay_member(cid, new_pubkey())
            after = live_text(m, cid)
        caught_up(p, s)
        assert after != live
        assert live_text(on_standby, cid) == after
        assert json.loads(after) == w.snapshot
        assert live_text(on_standby, other) == live_other
