"""Fault injection: clients that die or hang half way through a write, the server killed with
kill -9 during a burst of writes, and bursts against the created_at lead bound (BZLAG).

- A client killed between prepare and insert (and between insert and COMMIT), or whose
  backend is terminated: nothing of its transaction is kept, the previous list stays live,
  no scratch rows are left, and a writer waiting for the community goes on at once.
- A client that hangs holding a community: the project's idle_timeout_ms ends its session
  and the community is writable again within that bound; with lock_timeout_ms a waiter
  gives up with 55P03 and changes nothing. Both come from buzz_private.settings, documented
  in docs/operations.md.
- kill -9 of a throwaway cluster during writes on four sessions: after restart every write
  whose COMMIT returned is there with its list and events, writes in doubt (COMMIT sent, no
  answer) are all or nothing, member_list_drift() is empty, every stored event verifies,
  the unlogged scratch tables are empty, and member_list serves each list as the very text
  (byte for byte) the primary served before the crash.
- Several sessions bursting on one community: BZLAG, and no committed or served list is ever
  more than the bound ahead of the clock. (The single-session burst and the batched
  transaction are test_membership_guard.py::test_burst_is_bounded_and_a_batch_is_not.)

Figures (timings, counts) are printed at the end of the module; run with -s to see them.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fixtures_membership import (
    assert_list_event,
    assert_live_list,
    live_text,
    members_of,
    new_host,
    new_pubkey,
    state,
    verify_both,
)
from ports import free_port
from processes import children_of, gone
from sessions import backend_pid, blocking_pids, global_pid, list_lock_holders, session_alive

from buzz_signer.errors import BuzzError, ListTooFarAhead
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership, MembershipWrite, Published
from buzz_signer.migrate import is_citus

pytest_plugins = ("fixtures_membership",)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CLIENT = HERE / "fault_client.py"
SCRATCH_TABLES = (
    "tx_pending_lists",
    "tx_member_changes",
    "tx_prepared_events",
    "tx_published_events",
)

# Generous: these only stop a broken test from hanging; no assertion is tight.
PATIENCE_S = 60


# --------------------------------------------------------------------------- figures


_FIGURES: list[str] = []


def figure(text: str) -> None:
    """Record a measured figure; all are printed at the end of the module (and now)."""
    _FIGURES.append(text)
    print(f"\n[faults] {text}", flush=True)


@pytest.fixture(scope="module", autouse=True)
def _print_figures() -> Iterator[None]:
    yield
    if _FIGURES:
        print("\n==== fault injection figures ====")
        for line in _FIGURES:
            print(f"  {line}")
        print("==== end of figures ====", flush=True)


# --------------------------------------------------------------------------- helpers


def wait_until(pred: Callable[[], Any], what: str, timeout: float = PATIENCE_S) -> float:
    """Poll pred every 5 ms until it is true; return the seconds it took."""
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)
    return time.monotonic() - t0


def scratch_rows(su: psycopg.Connection) -> dict[str, int]:
    """The rows of each scratch table: on a cluster, of every node's."""
    counts = {}
    cluster = is_citus(su)  # the kill -9 tests' own server is a single one
    for t in SCRATCH_TABLES:
        count = f"SELECT count(*) FROM buzz_private.{t}"
        counts[t] = su.execute(count).fetchone()[0]
        if cluster:
            counts[t] += su.execute(
                "SELECT sum(result::bigint) FROM run_command_on_workers(%s)", (count,)
            ).fetchone()[0]
    return counts


def set_bounds(su: psycopg.Connection, **settings: int) -> None:
    for name, value in settings.items():
        assert name in ("idle_timeout_ms", "lock_timeout_ms", "max_list_lead_seconds")
        su.execute(f"UPDATE buzz_private.settings SET {name} = %s", (value,))


@dataclass
class Client:
    """A fault_client.py process, stopped half way through its write."""

    proc: subprocess.Popen[str]
    info: dict[str, Any]
    session: int  # as the waits know it (sessions.global_pid)

    @property
    def backend_pid(self) -> int:
        return self.info["backend_pid"]


class Clients:
    """Starts fault_client.py processes; kills those still running at teardown."""

    def __init__(self, db_url: str, key: RelayKey) -> None:
        self.db_url = db_url
        self.key = key
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, cid: Any, pubkey: str, stage: str) -> Client:
        env = dict(os.environ, BUZZ_RELAY_SECRET_KEY=self.key.secret_hex())
        proc = subprocess.Popen(
            [sys.executable, str(CLIENT), self.db_url, str(cid), pubkey, stage],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=REPO,
            env=env,
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE_S)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            _, err = proc.communicate(timeout=PATIENCE_S)
            pytest.fail(f"fault client did not get ready (exit {proc.returncode}): {err}")
        info = json.loads(line)
        with psycopg.connect(self.db_url) as observer:
            return Client(proc, info, global_pid(observer, info["backend_pid"]))

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=PATIENCE_S)


@pytest.fixture
def clients(db_url: str, key: RelayKey) -> Iterator[Clients]:
    c = Clients(db_url, key)
    try:
        yield c
    finally:
        c.close()


class Waiter(threading.Thread):
    """A write on a connection of its own, in a thread: started, it may block on a lock."""

    def __init__(self, db_url: str, key: RelayKey, call: Callable[[Membership], Any]) -> None:
        super().__init__(daemon=True)
        self.m = Membership.connect(db_url, key)
        self.pid = backend_pid(self.m.conn)
        self.call = call
        self.result: Any = None
        self.error: BaseException | None = None
        self.t_start = self.t_end = 0.0
        self.start()

    def run(self) -> None:
        self.t_start = time.monotonic()
        try:
            self.result = self.call(self.m)
        except (BuzzError, psycopg.Error) as e:  # the test looks at it
            self.error = e
        self.t_end = time.monotonic()

    def outcome(self) -> Any:
        self.join(PATIENCE_S)
        assert not self.is_alive(), "the waiting write never finished"
        return self.result

    @property
    def waited(self) -> float:
        return self.t_end - self.t_start

    def close(self) -> None:
        self.join(PATIENCE_S)
        self.m.close()


def server_clock(su: psycopg.Connection) -> float:
    return su.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()[0]


def idle_since(su: psycopg.Connection, pid: int) -> float:
    """When the backend went idle in transaction (epoch seconds, the server's clock)."""
    row = su.execute(
        "SELECT state, extract(epoch FROM state_change)::float8 FROM pg_stat_activity"
        " WHERE pid = %s",
        (pid,),
    ).fetchone()
    assert row is not None and row[0] == "idle in transaction", row
    return row[1]


# --------------------------------------------------------------------------- dead clients


FAULTS = ("kill_client", "terminate_backend")
STAGES = ("prepared", "inserted")


def inject(fault: str, client: Client, su: psycopg.Connection) -> None:
    if fault == "kill_client":
        os.kill(client.proc.pid, signal.SIGKILL)
        client.proc.wait(PATIENCE_S)
    else:
        assert su.execute("SELECT pg_terminate_backend(%s::integer)", (client.backend_pid,)).fetchone()[0]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("fault", FAULTS)
def test_client_dying_mid_write_leaves_nothing(
    fault, stage, db_url, mem, reader, su, key, community, clients
):
    """stage 'prepared': killed between prepare and insert; 'inserted': signatures stored,
    COMMIT never sent. The process is SIGKILLed, or its backend terminated by a superuser."""
    cid = community.cid
    # Timeouts far away: whatever frees the community here is the fault, not a timeout.
    set_bounds(su, idle_timeout_ms=600_000, lock_timeout_ms=600_000)
    before = state(reader, cid)
    before_list = reader.member_list(cid)

    # Round 1: the client dies; nobody waits. Everything is as before, to the byte.
    doomed = new_pubkey()
    client = clients.start(cid, doomed, stage)
    assert client.info["outcome"] == "added"
    assert [k for k, _, _ in client.info["prepared"]] == [13534, 8000]
    assert list_lock_holders(su, cid) == [client.session]
    assert state(reader, cid) == before  # nothing visible while it is open
    t0 = time.monotonic()
    inject(fault, client, su)
    gone = wait_until(lambda: not session_alive(su, client.session), "the backend to exit")
    gone_after = time.monotonic() - t0
    assert state(reader, cid) == before  # same list (text, so same id), members, events
    assert reader.member_list(cid)["id"] == before_list["id"]
    assert doomed not in members_of(reader, cid)
    assert list_lock_holders(su, cid) == []
    assert scratch_rows(su) == dict.fromkeys(SCRATCH_TABLES, 0)
    assert reader.member_list_drift() == []
    # A new write goes through at once.
    t1 = time.monotonic()
    w = mem.add_relay_member(cid, new_pubkey())
    write_s = time.monotonic() - t1
    assert_live_list(reader, cid, w.snapshot, key.pubkey)
    assert w.snapshot["created_at"] > before_list["created_at"]

    # Round 2: a writer already waits for the community's list lock when the client dies.
    before = state(reader, cid)
    doomed = new_pubkey()
    client = clients.start(cid, doomed, stage)
    other = new_pubkey()
    waiter = Waiter(db_url, key, lambda m: m.add_relay_member(cid, other))
    try:
        wait_until(
            lambda: client.session in blocking_pids(su, waiter.pid),
            "the writer to wait for the client",
        )
        assert waiter.is_alive()
        t0 = time.monotonic()
        inject(fault, client, su)
        w = waiter.outcome()
        released_after = waiter.t_end - t0
    finally:
        waiter.close()
    assert waiter.error is None, waiter.error
    assert w.outcome == "added"
    assert not session_alive(su, client.session)
    expected = {**before[1], other: "member"}
    assert_live_list(reader, cid, w.snapshot, key.pubkey, expected)
    assert [(ev["kind"], ev["tags"][1][1]) for ev in w.events[1:]] == [(8000, other)]
    assert reader.membership_events(cid) == [*before[2], w.events[1]]
    assert scratch_rows(su) == dict.fromkeys(SCRATCH_TABLES, 0)
    # Far below the 600 s timeouts: the release came from the fault.
    assert released_after < 30
    figure(
        f"{fault} at '{stage}': backend gone {gone * 1000:.0f} ms after the fault"
        f" ({gone_after * 1000:.0f} ms incl. the kill); next write took {write_s * 1000:.0f} ms;"
        f" a writer already waiting went on {released_after * 1000:.0f} ms after the fault"
    )


# --------------------------------------------------------------------------- hung clients


@pytest.mark.parametrize("stage", STAGES)
def test_hung_client_is_cut_off_by_the_idle_timeout(
    stage, db_url, reader, su, key, community, clients
):
    bound_ms = 2000
    cid = community.cid
    set_bounds(su, idle_timeout_ms=bound_ms, lock_timeout_ms=600_000)
    before = state(reader, cid)
    hung_pk, other = new_pubkey(), new_pubkey()

    client = clients.start(cid, hung_pk, stage)
    # The client's session has no timeout (it says so); the write applied the project's.
    assert client.info["session_timeouts_before"] == ["0", "0"]
    assert client.info["timeouts_in_transaction"] == [f"{bound_ms // 1000}s", "10min"]
    idle_from = idle_since(su, client.backend_pid)
    waiter = Waiter(db_url, key, lambda m: m.add_relay_member(cid, other))
    try:
        wait_until(
            lambda: client.session in blocking_pids(su, waiter.pid),
            "the writer to wait for the hung client",
            timeout=bound_ms / 1000,
        )
        w = waiter.outcome()
        done_at = server_clock(su)
    finally:
        waiter.close()
    assert waiter.error is None, waiter.error
    # The server ended the session; the client process itself still hangs.
    assert client.proc.poll() is None
    assert not session_alive(su, client.session)
    held = done_at - idle_from
    # The timeout cannot fire early (state_change is set before its timer starts);
    # 50 ms of slack for the two clock readings.
    assert held >= bound_ms / 1000 - 0.05
    assert held < bound_ms / 1000 + 10
    assert w.outcome == "added"
    assert_live_list(reader, cid, w.snapshot, key.pubkey, {**before[1], other: "member"})
    assert hung_pk not in members_of(reader, cid)
    assert reader.membership_events(cid) == [*before[2], w.events[1]]
    assert scratch_rows(su) == dict.fromkeys(SCRATCH_TABLES, 0)
    figure(
        f"hung client at '{stage}', idle_timeout_ms={bound_ms}: community held"
        f" {held * 1000:.0f} ms from the client going idle until the waiter's write returned;"
        f" the waiter waited {waiter.waited * 1000:.0f} ms"
    )


@pytest.mark.parametrize("wait_on", ["list_lock", "same_member"])
def test_waiter_gives_up_after_the_lock_timeout(
    wait_on, db_url, mem, reader, su, key, community, clients
):
    """list_lock: the waiter adds another pubkey and waits at prepare for the list lock;
    same_member: it adds the hung client's pubkey and waits for its uncommitted row."""
    bound_ms = 1000
    cid = community.cid
    set_bounds(su, idle_timeout_ms=600_000, lock_timeout_ms=bound_ms)
    before = state(reader, cid)
    hung_pk = new_pubkey()
    client = clients.start(cid, hung_pk, "prepared")
    target = new_pubkey() if wait_on == "list_lock" else hung_pk
    waiter = Waiter(db_url, key, lambda m: m.add_relay_member(cid, target))
    try:
        wait_until(
            lambda: not waiter.is_alive() or client.session in blocking_pids(su, waiter.pid),
            "the writer to wait for the hung client",
        )
        assert waiter.is_alive(), waiter.error  # it was seen waiting for the hung client
        waiter.outcome()
    finally:
        waiter.close()
    assert isinstance(waiter.error, BuzzError), waiter.error
    assert waiter.error.sqlstate == "55P03"
    assert waiter.waited >= bound_ms / 1000 - 0.05
    assert waiter.waited < bound_ms / 1000 + 10
    # Nothing changed; the hung client still holds the community.
    assert state(reader, cid) == before
    assert session_alive(su, client.session)
    assert list_lock_holders(su, cid) == [client.session]
    # Once the holder is gone, the waiter's own connection writes normally.
    os.kill(client.proc.pid, signal.SIGKILL)
    client.proc.wait(PATIENCE_S)
    wait_until(lambda: not session_alive(su, client.session), "the backend to exit")
    with Membership.connect(db_url, key) as m:
        w = m.add_relay_member(cid, target)
    assert_live_list(reader, cid, w.snapshot, key.pubkey, {**before[1], target: "member"})
    figure(
        f"lock_timeout_ms={bound_ms}, waiting on {wait_on}: the waiter failed with 55P03"
        f" after {waiter.waited * 1000:.0f} ms, changing nothing"
    )


def test_bounds_are_documented_configurable_and_per_transaction(db_url, mem, su, community):
    """The defaults docs/operations.md states are the database's; a write applies them to its
    own transaction only (the session's settings are untouched after COMMIT)."""
    doc = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    documented = {
        name: int(re.search(rf"SET {name} = (\d+);", doc).group(1))
        for name in ("idle_timeout_ms", "lock_timeout_ms")
    }
    assert documented == {"idle_timeout_ms": 10000, "lock_timeout_ms": 30000}
    row = su.execute("SELECT idle_timeout_ms, lock_timeout_ms FROM buzz_private.settings")
    assert dict(zip(documented, row.fetchone(), strict=True)) == documented

    def session_timeouts(conn: psycopg.Connection) -> tuple[str, str]:
        return conn.execute(
            "SELECT current_setting('idle_in_transaction_session_timeout'),"
            " current_setting('lock_timeout')"
        ).fetchone()

    mem.conn.execute("SET idle_in_transaction_session_timeout = 0")
    mem.conn.execute("SET lock_timeout = 0")
    assert session_timeouts(mem.conn) == ("0", "0")
    mem.add_relay_member(community.cid, new_pubkey())
    assert session_timeouts(mem.conn) == ("0", "0")
    set_bounds(su, idle_timeout_ms=1234, lock_timeout_ms=567)
    with mem.transaction() as tx:
        tx.add_relay_member(community.cid, new_pubkey())
        assert session_timeouts(mem.conn) == ("1234ms", "567ms")
    assert session_timeouts(mem.conn) == ("0", "0")


# --------------------------------------------------------------------------- kill -9


@dataclass
class Write:
    """One write of a crash-test session, and what its client learned."""

    session: int
    seq: int
    op: str
    cid: str
    changes: dict[str, str | None]  # pubkey -> role after the write (None: not a member)
    status: str = "running"  # committed | in_doubt | failed
    snapshot: dict[str, Any] | None = None
    events: tuple[dict[str, Any], ...] = ()
    error: str = ""
    t_end: float = 0.0


@dataclass
class Session:
    """A client writing in a loop until its connection breaks; records every write."""

    n: int
    url: str
    key: RelayKey
    cids: list[str]
    options: str = ""  # libpq options, e.g. "-c synchronous_commit=local"
    writes: list[Write] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        rng = random.Random(self.n)
        deadline = time.monotonic() + PATIENCE_S
        try:
            m = Membership.connect(self.url, self.key, connect_timeout=10, options=self.options)
        except BuzzError as e:
            self.writes.append(Write(self.n, 0, "connect", "", {}, "failed", error=repr(e)))
            return
        published: dict[str, Published] = {}
        real_publish = m._publish

        def publish() -> Published:  # the events exist, signed and inserted; COMMIT comes next
            published["signed"] = real_publish()
            return published["signed"]

        m._publish = publish
        mine: dict[tuple[str, str], str] = {}  # committed members this session added
        try:
            for seq in range(1, 1_000_000):
                if time.monotonic() > deadline:
                    return
                w, call = self._next(seq, rng, mine)
                published.clear()
                self.writes.append(w)
                try:
                    result = call(m)
                except (BuzzError, psycopg.Error) as e:
                    w.t_end = time.monotonic()
                    w.error = repr(e)
                    if "signed" in published:
                        w.status = "in_doubt"
                        w.events = published["signed"].events
                        w.snapshot = published["signed"].lists[w.cid]
                    else:
                        w.status = "failed"
                    return
                w.t_end = time.monotonic()
                w.status = "committed"
                w.events = published["signed"].events
                w.snapshot = published["signed"].lists[w.cid]
                if isinstance(result, MembershipWrite):
                    assert result.snapshot == w.snapshot
                for pk, role in w.changes.items():
                    if role is None:
                        mine.pop((w.cid, pk))
                    else:
                        mine[(w.cid, pk)] = role
        finally:
            m.close()

    def _next(self, seq, rng, mine) -> tuple[Write, Callable[[Membership], Any]]:
        r = rng.random()
        if mine and r < 0.25:
            cid, pk = rng.choice(sorted(mine))
            w = Write(self.n, seq, "remove", cid, {pk: None})
            return w, lambda m: self._expect(m.remove_relay_member(cid, pk), "removed")
        if mine and r < 0.40:
            cid, pk = rng.choice(sorted(mine))
            role = "admin" if mine[(cid, pk)] == "member" else "member"
            w = Write(self.n, seq, "role", cid, {pk: role})
            return w, lambda m: self._expect(m.update_relay_member_role(cid, pk, role), "updated")
        cid = rng.choice(self.cids)
        if r < 0.50:
            a, b = new_pubkey(), new_pubkey()
            w = Write(self.n, seq, "batch", cid, {a: "member", b: "admin"})

            def batch(m: Membership) -> None:
                with m.transaction() as tx:
                    assert tx.add_relay_member(cid, a) == "added"
                    assert tx.add_relay_member(cid, b, "admin") == "added"

            return w, batch
        pk = new_pubkey()
        w = Write(self.n, seq, "add", cid, {pk: "member"})
        return w, lambda m: self._expect(m.add_relay_member(cid, pk), "added")

    @staticmethod
    def _expect(w: MembershipWrite, outcome: str) -> MembershipWrite:
        assert w.outcome == outcome, w
        return w


def set_sync_standby(url: str, su: psycopg.Connection, names: str) -> None:
    """ALTER SYSTEM synchronous_standby_names, reload, and wait until new sessions have it."""
    if names:
        su.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'")
    else:
        su.execute("ALTER SYSTEM RESET synchronous_standby_names")
    su.execute("SELECT pg_reload_conf()")

    def applied() -> bool:
        with psycopg.connect(url, autocommit=True) as c:
            return c.execute("SHOW synchronous_standby_names").fetchone()[0] == names

    wait_until(applied, "the configuration reload")








@dataclass
class CrashCluster:
    cluster: Any
    server_pids: list[int] = field(default_factory=list)  # killed ones, for the cleanup


@pytest.fixture
def crash_cluster(tmp_path: Path) -> Iterator[CrashCluster]:
    """A throwaway cluster of our own, removed at the end even when the test fails."""
    from buzz_signer.localdb import LocalCluster

    c = CrashCluster(LocalCluster(root=tmp_path / "pg", port=free_port()))
    try:
        c.cluster.start()
        yield c
    finally:
        try:
            c.cluster.destroy()
        finally:
            for pid in c.server_pids:
                if not gone(pid):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("victims", ["postmaster", "every_server_process"])
def test_kill_9_during_a_burst_loses_no_committed_write(victims, crash_cluster, key):
    """postmaster: kill -9 of the postmaster alone (its backends notice and exit);
    every_server_process: kill -9 of the postmaster and every child at once."""
    from buzz_signer.migrate import upgrade

    cluster = crash_cluster.cluster
    url = cluster.create_database("buzz")
    upgrade(url)
    communities: dict[str, dict[str, Any]] = {}
    with Membership.connect(url, key) as m:
        for _ in range(7):
            w = m.create_community(new_host(), new_pubkey())
            communities[str(w.details["community_id"])] = w.snapshot
    cids = sorted(communities)
    burst_cids, doubt_cid = cids[:6], cids[6]
    with psycopg.connect(url, autocommit=True) as su:
        # Four sessions on a few communities write far more than one list a second each:
        # the lead bound is not what this test is about.
        set_bounds(su, max_list_lead_seconds=10_000_000)
        # A write certain to be in doubt at the crash: with a synchronous standby that never
        # comes, COMMIT writes and flushes the commit record, then waits for the standby and
        # never answers. The burst sessions commit with synchronous_commit = local (what
        # 'on' means without standbys); one more session keeps 'on' and hangs in its COMMIT.
        set_sync_standby(url, su, "nobody")

    sessions = [
        Session(n, url, key, burst_cids, options="-c synchronous_commit=local") for n in range(4)
    ]
    for s in sessions:
        s.start()
    t_begin = time.monotonic()
    wait_until(
        lambda: (
            time.monotonic() - t_begin > 2.5
            and all(sum(w.status == "committed" for w in s.writes) >= 5 for s in sessions)
        ),
        "every session to commit writes",
    )
    # Started last: while its COMMIT waits it holds the database's NOTIFY commit lock, so
    # the other sessions' COMMITs (each NOTIFYs its list) queue behind it until the crash.
    doubter = Session(4, url, key, [doubt_cid])
    doubter.start()
    sessions.append(doubter)
    with psycopg.connect(url, autocommit=True) as su:
        wait_until(
            lambda: su.execute(
                "SELECT EXISTS (SELECT FROM pg_stat_activity"
                " WHERE wait_event = 'SyncRep' AND query LIKE 'COMMIT%%')"
            ).fetchone()[0],
            "a COMMIT to wait for the missing standby",
        )
        # Nothing commits from here to the crash (every other COMMIT queues behind the one
        # held, and that one is not visible until it ends): each list as the primary serves
        # it now, its text, is what member_list must serve after the crash.
        served = dict(
            su.execute(
                "SELECT c::text, buzz.member_list(c)::text FROM unnest(%s::uuid[]) c", (cids,)
            ).fetchall()
        )
    postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
    children = children_of(postmaster)
    crash_cluster.server_pids[:] = [postmaster, *children]
    t_kill = time.monotonic()
    os.kill(postmaster, signal.SIGKILL)
    if victims == "every_server_process":
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for s in sessions:
        s.thread.join(PATIENCE_S)
        assert not s.thread.is_alive(), f"session {s.n} still runs after the crash"
    down = wait_until(
        lambda: all(gone(p) for p in [postmaster, *children]), "every server process to exit"
    )
    t_restart = time.monotonic()
    cluster.start()
    restart_s = time.monotonic() - t_restart
    with psycopg.connect(url, autocommit=True) as su:
        set_sync_standby(url, su, "")

    writes = [w for s in sessions for w in s.writes]
    early = [w for w in writes if w.status != "committed" and w.t_end < t_kill]
    assert not early, f"writes failed before the crash: {early[:3]}"
    # A session's last write is the only one that may have failed: at the crash.
    for s in sessions:
        assert all(w.status == "committed" for w in s.writes[:-1])
        assert s.writes[-1].status in ("in_doubt", "failed"), s.writes[-1]
    assert [w.status for w in doubter.writes] == ["in_doubt"]

    with psycopg.connect(url, autocommit=True) as su, Membership.connect(url, key) as reader:
        # Nothing half written: no scratch rows (unlogged: reset by crash recovery), no orphans.
        assert scratch_rows(su) == dict.fromkeys(SCRATCH_TABLES, 0)
        for table in ("relay_members", "member_lists", "member_list_pieces", "membership_events"):
            orphans = su.execute(
                f"SELECT count(*) FROM buzz_private.{table} t WHERE NOT EXISTS"
                " (SELECT FROM buzz_private.communities c WHERE c.community_id = t.community_id)"
            ).fetchone()[0]
            assert orphans == 0, table
        rows = su.execute("SELECT community_id::text FROM buzz_private.communities").fetchall()
        assert sorted(c for (c,) in rows) == cids
        assert reader.member_list_drift() == []

        members = {cid: members_of(reader, cid) for cid in cids}
        stored = {cid: reader.membership_events(cid) for cid in cids}
        live = {cid: reader.member_list(cid) for cid in cids}
        stored_ids = {cid: {ev["id"] for ev in evs} for cid, evs in stored.items()}

        # Writes in doubt (COMMIT sent, no answer): all or nothing, decided by what is stored.
        in_doubt = [w for w in writes if w.status == "in_doubt"]
        kept_in_doubt = []
        for w in in_doubt:
            applied = [members[w.cid].get(pk) == role for pk, role in w.changes.items()]
            events_in = [ev["id"] in stored_ids[w.cid] for ev in w.events[1:]]
            assert len(set(applied + events_in)) == 1, (w, applied, events_in)
            if applied[0]:
                kept_in_doubt.append(w)
        done = [w for w in writes if w.status == "committed"] + kept_in_doubt

        # Every committed write is there: its member changes (unless a later write of the
        # same session changed that pubkey again), its 8000/8001 events, and its list, live
        # or replaced by a later committed list.
        expected: dict[str, dict[str, str]] = {
            cid: {communities[cid]["tags"][1][1]: "owner"} for cid in cids
        }
        for w in sorted(done, key=lambda w: (w.session, w.seq)):
            for pk, role in w.changes.items():
                if role is None:
                    expected[w.cid].pop(pk)
                else:
                    expected[w.cid][pk] = role
        assert members == expected
        lost = [w for w in done if not all(ev in stored[w.cid] for ev in w.events[1:])]
        assert lost == []
        newest = dict(communities)
        for w in done:
            if w.snapshot["created_at"] > newest[w.cid]["created_at"]:
                newest[w.cid] = w.snapshot
            assert w.snapshot["created_at"] <= live[w.cid]["created_at"]
        assert live == newest
        # Every list is byte for byte the text the primary served just before the crash, but
        # the doubter's community's when its write (held in COMMIT, not yet visible then) was
        # kept: then it is the list that write signed.
        for cid in cids:
            text = live_text(reader, cid)
            if cid == doubt_cid and doubter.writes[0] in kept_in_doubt:
                assert text != served[cid]
                assert json.loads(text) == doubter.writes[0].snapshot
            else:
                assert text == served[cid], cid
        # Nothing else was stored: every event belongs to a write that committed.
        done_ids = {(w.cid, ev["id"]) for w in done for ev in w.events[1:]}
        created_owner = {(cid, e["id"]) for cid in cids for e in stored[cid][:1]}
        for cid in cids:
            for ev in stored[cid]:
                assert (cid, ev["id"]) in done_ids | created_owner, ev
                verify_both(ev)
            assert_list_event(live[cid], key.pubkey, members[cid])
            assert [e["kind"] for e in stored[cid][:1]] == [8000]  # the owner's, at creation
        # Lists of one community never share a created_at, across the crash too.
        for cid in cids:
            stamps = [w.snapshot["created_at"] for w in done if w.cid == cid]
            assert len(stamps) == len(set(stamps))

        # The server takes writes again, on every community, after the newest list.
        with Membership.connect(url, key) as m:
            for cid in cids:
                w = m.add_relay_member(cid, new_pubkey())
                assert w.snapshot["created_at"] > live[cid]["created_at"]
                assert_live_list(reader, cid, w.snapshot, key.pubkey)
        assert reader.member_list_drift() == []

    committed = sum(w.status == "committed" for w in writes)
    figure(
        f"kill -9 ({victims}) after {t_kill - t_begin:.1f} s of writes on 4 sessions,"
        f" 6 communities: {committed} writes committed before the crash"
        f" ({sum(len(w.changes) for w in writes if w.status == 'committed')} member changes),"
        f" {len(in_doubt)} in doubt ({len(kept_in_doubt)} of them kept; the one held in"
        f" COMMIT by the missing standby"
        f" {'kept' if doubter.writes[0] in kept_in_doubt else 'not kept'}),"
        f" {sum(w.status == 'failed' for w in writes)} cut off before COMMIT (none kept),"
        f" lost: {len(lost)}; server processes gone {down:.2f} s after the kill,"
        f" restart with crash recovery {restart_s:.2f} s"
    )


# --------------------------------------------------------------------------- BZLAG


def test_concurrent_burst_never_runs_ahead_of_the_bound(db_url, reader, su, key, community):
    """Four sessions burst single writes on one community while a reader watches the live
    list. No list, committed or served, is ever more than the bound ahead of the clock.

    Why no slack is needed: prepare refuses created_at - floor(clock at prepare) > bound, and
    the clock at prepare is before the commit returned (or the read was answered), so
    created_at <= floor(that later time) + bound. Python's time.time() and PostgreSQL's
    clock_timestamp() read the same system clock."""
    bound = 3
    cid = community.cid
    set_bounds(su, max_list_lead_seconds=bound)
    before = state(reader, cid)
    committed: list[tuple[dict[str, Any], float, str]] = []
    refused: list[str] = []
    seen: list[tuple[int, float]] = []
    errors: list[BaseException] = []
    finished: list[str] = []  # each thread says it ended normally
    stop = threading.Event()
    lock = threading.Lock()

    def burst() -> None:
        with Membership.connect(db_url, key) as m:
            while not stop.is_set():
                pk = new_pubkey()
                try:
                    w = m.add_relay_member(cid, pk)
                except ListTooFarAhead:
                    with lock:
                        refused.append(pk)
                    time.sleep(0.02)
                    continue
                except BuzzError as e:
                    errors.append(e)
                    return
                t_after = time.time()
                with lock:
                    committed.append((w.snapshot, t_after, pk))
        finished.append("burst")

    def watch() -> None:
        with Membership.connect(db_url, key) as m:
            while not stop.is_set():
                live = m.member_list(cid)
                seen.append((live["created_at"], time.time()))
                time.sleep(0.01)
        finished.append("watch")

    threads = [threading.Thread(target=burst, daemon=True) for _ in range(4)]
    threads.append(threading.Thread(target=watch, daemon=True))
    for t in threads:
        t.start()
    time.sleep(2.5)
    stop.set()
    for t in threads:
        t.join(PATIENCE_S)
        assert not t.is_alive()
    assert errors == []
    assert sorted(finished) == ["burst"] * 4 + ["watch"]

    assert refused, "the burst never hit BZLAG"
    worst = max(s["created_at"] - math.floor(t) for s, t, _ in committed)
    assert worst <= bound
    assert max(c - math.floor(t) for c, t in seen) <= bound
    stamps = [s["created_at"] for s, _, _ in committed]
    assert len(stamps) == len(set(stamps))
    newest = max((s for s, _, _ in committed), key=lambda s: s["created_at"])
    expected = {**before[1], **{pk: "member" for _, _, pk in committed}}
    assert_live_list(reader, cid, newest, key.pubkey, expected)
    assert not set(refused) & set(members_of(reader, cid))
    assert len(reader.membership_events(cid)) == len(before[2]) + len(committed)
    assert scratch_rows(su) == dict.fromkeys(SCRATCH_TABLES, 0)
    figure(
        f"concurrent burst, 4 sessions, lead bound {bound} s, 2.5 s: {len(committed)} lists"
        f" committed, {len(refused)} writes refused with BZLAG; the furthest ahead was"
        f" {worst} s (commit) / {max(c - math.floor(t) for c, t in seen)} s (served),"
        f" over {len(seen)} reads"
    )
