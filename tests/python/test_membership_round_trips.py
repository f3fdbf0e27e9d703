"""A call of its own through Membership and AsyncMembership: two round trips (BEGIN, the write
and prepare; the signatures with COMMIT), observed in libpq's trace of the connection; and a
failing call leaves the connection as ready as a successful one."""

from __future__ import annotations

import itertools
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fixtures_membership import assert_live_list, members_of, new_pubkey

from buzz_signer.errors import CommunityNotFound

pytest_plugins = ("fixtures_membership",)


@pytest.fixture
def mem(either_api):
    return either_api


def round_trips(conn: Any, call: Callable[..., Any], *args: Any, trace: Path) -> tuple[Any, int]:
    """What call(*args) answered, and how many round trips it took: in libpq's trace of the
    connection, each run of messages the client sent (F) followed by the server's (B)."""
    with open(trace, "wb") as f:
        fd = os.dup(f.fileno())  # libpq keeps its own stream on it, flushed by untrace
    conn.pgconn.trace(fd)
    conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
    try:
        answer = call(*args)
    finally:
        conn.pgconn.untrace()
        os.close(fd)
    directions = [line.split("\t", 1)[0] for line in trace.read_text().splitlines()]
    return answer, sum(1 for a, b in itertools.pairwise(directions) if (a, b) == ("F", "B"))


def test_a_write_of_its_own_is_two_round_trips(mem, reader, key, community, tmp_path):
    pk = new_pubkey()
    for i in range(8):  # past psycopg's prepare threshold (5): prepared statements too
        write = mem.add_relay_member if i % 2 == 0 else mem.remove_relay_member
        w, trips = round_trips(mem.conn, write, community.cid, pk, trace=tmp_path / f"trace-{i}")
        assert w.outcome == ("added" if i % 2 == 0 else "removed")
        assert trips == 2, f"write {i}"
        assert [ev["kind"] for ev in w.events] == [13534, 8000 if i % 2 == 0 else 8001]
    # A call that changes nothing: still two, and no list.
    w, trips = round_trips(
        mem.conn, mem.add_relay_member, community.cid, community.owner, trace=tmp_path / "noop"
    )
    assert (w.outcome, w.snapshot, trips) == ("already_member", None, 2)
    assert members_of(reader, community.cid) == {community.owner: "owner"}
    assert_live_list(reader, community.cid, reader.member_list(community.cid), key.pubkey)


def test_a_failing_write_leaves_the_connection_ready(mem, reader, key, community, caplog):
    """A write that fails in the pipeline skips what was queued after it (prepare); the
    transaction is rolled back and every statement psycopg prepared stays usable: twelve
    failures, each followed by a write that commits, cross the prepare threshold both ways.
    Nothing is logged: the skipped answers are collected before the pipeline ends."""
    caplog.set_level(logging.DEBUG, logger="psycopg")
    added = []
    for _ in range(12):
        with pytest.raises(CommunityNotFound):
            mem.add_relay_member(uuid.uuid4(), new_pubkey())
        assert mem.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        added.append(new_pubkey())
        assert mem.add_relay_member(community.cid, added[-1]).outcome == "added"
    assert members_of(reader, community.cid) == {community.owner: "owner"} | dict.fromkeys(
        added, "member"
    )
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert_live_list(reader, community.cid, reader.member_list(community.cid), key.pubkey)
