"""Several real sessions on one test database, for the concurrency tests; on one server or on a
Citus cluster (BUZZ_TEST_CITUS=1), where every wait is read on the node it happens on.

- ``Background``: a call run in a thread of its own (on a connection of its own); its answer or
  its exception comes back through ``result()``.
- ``wait_until_blocked``: polls ``pg_blocking_pids`` (``citus_lock_waits``) from an observer
  connection until the waiter's backend is provably waiting for the holder's; fails the test
  on timeout, or at once if the waiter's call ended instead of waiting. ``waiting_for`` says
  which lock it waits for; ``finishes_unblocked`` runs a call to its end, failing as soon as
  it is seen waiting.
- ``ListLockHolder``: a superuser transaction holding a community's list lock (the advisory
  lock ``buzz_private.list_lock_key``) by hand, as an operator can: on a cluster, on the
  coordinator, where a prepare takes that lock before the worker's.
- ``backend_pid``: the id the waits know a session by. On a cluster it is the session's global
  pid (``citus_backend_gpid``), which Citus gives its work on every node, and the waits and
  locks are read from ``citus_lock_waits`` and ``citus_locks`` on the coordinator: a shard's
  lock is named by its table.
- ``RawWriter``: a transaction driven step by step (write, prepare, sign and insert, commit),
  so that a test can hold it open at a chosen point.
- ``Stage``: owns a test's sessions and closes them in an order that cannot hang.
- ``behind_the_api``: a transaction in replica mode (no trigger fires) on the server that holds
  a community's rows, to change them as a restore would.

Never sleep-and-hope: every "B waits for A" in these tests is read from pg_locks (on a
cluster, citus_locks).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, Self

import psycopg
from conftest import CITUS

from buzz_signer.citus import connect_to_node
from buzz_signer.errors import translated
from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.signer import PreparedEvent, Signer

# Generous: the machine is shared and has two cores. Nothing here asserts a duration; these
# only bound how long a broken run takes to fail.
BLOCK_TIMEOUT = 30.0
RESULT_TIMEOUT = 60.0
POLL = 0.02


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class Background:
    """Runs fn() in a daemon thread; result() joins it and returns or re-raises."""

    def __init__(self, fn: Callable[[], Any], name: str = "call") -> None:
        self.name = name
        self._fn = fn
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread by result()
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def describe(self) -> str:
        if not self.done():
            return f"{self.name}: still running"
        if self._error is not None:
            return f"{self.name}: raised {type(self._error).__name__}: {self._error}"
        return f"{self.name}: returned {_short(self._value)}"

    def result(self, timeout: float = RESULT_TIMEOUT) -> Any:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError(f"{self.name} did not finish within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value

    def join(self, timeout: float = RESULT_TIMEOUT) -> None:
        self._thread.join(timeout)

    def error(self, timeout: float = RESULT_TIMEOUT) -> BaseException | None:
        """The exception the call raised (None if it returned)."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError(f"{self.name} did not finish within {timeout} s")
        return self._error


class Wait(NamedTuple):
    """The lock a blocked backend waits for (its ungranted pg_locks row), its statement, and
    the tables of the rows it queues for (a backend waiting to lock a row holds that row's
    tuple lock while it waits for the row's locker; an INSERT waiting on a unique key does not).
    """

    locktype: str
    mode: str
    relation: str | None
    advisory_key: int | None  # bigint-space advisory key, when that is what it waits for
    query: str
    queued_rows: list[str]


def global_pid(observer: psycopg.Connection, pid: int) -> int:
    """Backend `pid` of the server `observer` is connected to, as the waits know it."""
    if not CITUS:
        return pid
    return observer.execute(
        "SELECT citus_calculate_gpid(nodeid, %s) FROM pg_dist_node"
        " WHERE groupid = (SELECT groupid FROM pg_dist_local_group) AND noderole = 'primary'",
        (pid,),
    ).fetchone()[0]


def backend_pid(conn: psycopg.Connection) -> int:
    if not CITUS:
        return conn.info.backend_pid
    # Asked on a connection of its own: `conn` may be busy with the very call that waits.
    with connect_to_node(conn, conn.info.host, conn.info.port) as node:
        return global_pid(node, conn.info.backend_pid)


def session_alive(observer: psycopg.Connection, pid: int) -> bool:
    """Whether session `pid` still has a backend (on a cluster: on any node)."""
    if CITUS:
        query = "SELECT EXISTS (SELECT FROM citus_stat_activity WHERE global_pid = %s)"
    else:
        query = "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = %s)"
    return observer.execute(query, (pid,)).fetchone()[0]


def blocking_pids(observer: psycopg.Connection, pid: int) -> list[int]:
    if CITUS:
        return observer.execute(
            "SELECT coalesce(array_agg(DISTINCT blocking_gpid), '{}') FROM citus_lock_waits"
            " WHERE waiting_gpid = %s",
            (pid,),
        ).fetchone()[0]
    return observer.execute("SELECT pg_blocking_pids(%s)", (pid,)).fetchone()[0]


_WAITING_FOR = """
    SELECT l.locktype, l.mode, l.relation::regclass::text,
      CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
           THEN (l.classid::bigint << 32) | l.objid::bigint END,
      a.query,
      ARRAY(SELECT t.relation::regclass::text FROM pg_locks t
            WHERE t.pid = l.pid AND t.locktype = 'tuple' AND t.granted)
    FROM pg_locks l JOIN pg_stat_activity a USING (pid)
    WHERE l.pid = %(pid)s AND NOT l.granted
"""

# The same from every node of a cluster: a lock on a shard named by its table, the statement
# the one the session sent the coordinator.
_WAITING_FOR_ON_CLUSTER = """
    WITH locks AS MATERIALIZED (SELECT * FROM citus_locks WHERE global_pid = %(pid)s),
    tables AS (SELECT shard_name(logicalrelid, shardid) AS shard, logicalrelid::text AS name
               FROM pg_dist_shard)
    SELECT l.locktype, l.mode, coalesce(t.name, l.relation_name),
      CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
           THEN (l.classid::bigint << 32) | l.objid::bigint END,
      (SELECT w.blocked_statement FROM citus_lock_waits w WHERE w.waiting_gpid = l.global_pid
       LIMIT 1),
      ARRAY(SELECT coalesce(qt.name, q.relation_name) FROM locks q
            LEFT JOIN tables qt ON qt.shard = q.relation_name
            WHERE q.nodeid = l.nodeid AND q.pid = l.pid AND q.locktype = 'tuple' AND q.granted)
    FROM locks l LEFT JOIN tables t ON t.shard = l.relation_name
    WHERE NOT l.granted
"""


def waiting_for(observer: psycopg.Connection, pid: int) -> Wait | None:
    """The lock `pid` waits for right now, or None when it waits for none."""
    query = _WAITING_FOR_ON_CLUSTER if CITUS else _WAITING_FOR
    row = observer.execute(query, {"pid": pid}).fetchone()
    return Wait(*row) if row else None


def wait_until_blocked(
    observer: psycopg.Connection,
    waiter_pid: int,
    holder_pid: int,
    timeout: float = BLOCK_TIMEOUT,
    call: Background | None = None,
) -> Wait:
    """Return once `waiter_pid` is blocked by `holder_pid` (pg_blocking_pids), with the lock it
    waits for. Fails after `timeout` seconds, or as soon as `call` (the waiter's background
    call) has ended: a call that finished did not wait."""
    deadline = time.monotonic() + timeout
    while True:
        if holder_pid in blocking_pids(observer, waiter_pid):
            wait = waiting_for(observer, waiter_pid)
            if wait is not None:
                return wait
        if call is not None and call.done():
            raise AssertionError(
                f"backend {waiter_pid} never waited for backend {holder_pid}: {call.describe()}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(
                f"backend {waiter_pid} not blocked by backend {holder_pid} after {timeout} s;"
                f" it waits for {waiting_for(observer, waiter_pid)}"
                + (f"; {call.describe()}" if call is not None else "")
            )
        time.sleep(POLL)


def list_lock_key(observer: psycopg.Connection, community: Any) -> int:
    return observer.execute("SELECT buzz_private.list_lock_key(%s)", (community,)).fetchone()[0]


def _list_lock_sessions(observer: psycopg.Connection, community: Any, granted: bool) -> list[int]:
    source = "global_pid FROM citus_locks" if CITUS else "pid FROM pg_locks"
    # citus_locks gives each node's own database oid: the key alone names the community there.
    this_database = (
        "" if CITUS else " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    return [
        r[0]
        for r in observer.execute(
            f"SELECT DISTINCT {source}"
            " WHERE locktype = 'advisory' AND objsubid = 1 AND granted = %s"
            " AND ((classid::bigint << 32) | objid::bigint) = buzz_private.list_lock_key(%s)"
            + this_database,
            (granted, community),
        )
    ]


def list_lock_holders(observer: psycopg.Connection, community: Any) -> list[int]:
    """The sessions holding the community's list lock, as in docs/operations.md."""
    return _list_lock_sessions(observer, community, granted=True)


def list_lock_waiters(observer: psycopg.Connection, community: Any) -> list[int]:
    """The sessions waiting for the community's list lock."""
    return _list_lock_sessions(observer, community, granted=False)


def worker_of(observer: psycopg.Connection, community: Any) -> tuple[str, int]:
    """The worker (host, port) holding `community`'s shards, on a cluster."""
    return observer.execute(
        "SELECT nodename, nodeport FROM citus_shards"
        " WHERE shardid = get_shard_id_for_distribution_column("
        "       'buzz_private.relay_members', %s)",
        (community,),
    ).fetchone()


def connect_where(url: str, community: Any, **kwargs: Any) -> psycopg.Connection:
    """A new connection to the server that holds `community`'s rows: on a cluster, its worker
    (where its writers lock it and a trigger on its rows runs)."""
    conn = psycopg.connect(url, **kwargs)
    if not CITUS:
        return conn
    with conn:
        host, port = worker_of(conn, community)
        return connect_to_node(conn, host, port, **kwargs)


@contextmanager
def behind_the_api(url: str, community: Any) -> Iterator[psycopg.Connection]:
    """A superuser transaction with session_replication_role = replica on the server holding
    `community`'s rows (on a cluster, its worker: a write there runs on the local shard, where
    the setting holds); committed at the end of the block."""
    with connect_where(url, community) as conn, conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        yield conn


class ListLockHolder:
    """A transaction (superuser: the advisory functions are not PUBLIC) holding a community's
    list lock until release(): on a cluster the coordinator's, which a prepare takes first."""

    def __init__(self, url: str, community: Any) -> None:
        self.conn = psycopg.connect(url)
        self.pid = backend_pid(self.conn)
        self.conn.execute(
            "SELECT pg_advisory_xact_lock(buzz_private.list_lock_key(%s))", (community,)
        )

    def release(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RawWriter:
    """One transaction driven step by step, to hold it open between any two steps."""

    def __init__(self, url: str, key: RelayKey) -> None:
        self.conn = psycopg.connect(url)  # autocommit off: the first statement opens it
        self.pid = backend_pid(self.conn)
        self.signer = Signer(key)
        self.prepared: list[PreparedEvent] = []

    def value(self, sql: str, *params: Any) -> Any:
        with translated():
            return self.conn.execute(sql, params).fetchone()[0]

    def prepare(self) -> list[PreparedEvent]:
        with translated():
            rows = self.conn.execute(
                "SELECT community_id, id, kind, created_at, serialized"
                " FROM buzz.prepare_membership_events(%s)",
                (self.signer.pubkey,),
            ).fetchall()
        self.prepared = [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]
        return self.prepared

    def sign_and_insert(self) -> list[dict[str, Any]]:
        sigs = self.signer.sign_all(self.prepared)
        with translated():
            return [
                r[0]
                for r in self.conn.execute(
                    "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
                    ([ev.id for ev in self.prepared], sigs),
                )
            ]

    def commit(self) -> None:
        with translated():
            self.conn.commit()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def finishes_unblocked(
    observer: psycopg.Connection, pid: int, call: Background, timeout: float = RESULT_TIMEOUT
) -> Any:
    """The result of `call` (running on backend `pid`), failing at once if that backend is
    ever seen waiting for another one: use it only while nothing else runs that it could
    legitimately queue behind."""
    deadline = time.monotonic() + timeout
    while not call.done():
        blockers = blocking_pids(observer, pid)
        if blockers:
            raise AssertionError(
                f"{call.name} (backend {pid}) waits for backends {blockers}:"
                f" {waiting_for(observer, pid)}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"{call.name} did not finish within {timeout} s")
        time.sleep(POLL)
    return call.result()


class Stage:
    """The sessions of one test, closed in an order that cannot hang: on exit the hand-held
    locks and raw transactions end first (releasing whatever the background calls wait for),
    then the background calls are joined, then the remaining connections close."""

    def __init__(self, url: str, key: RelayKey) -> None:
        self.url = url
        self.key = key
        self._holders: list[ListLockHolder | RawWriter] = []
        self._calls: list[Background] = []
        self._conns: list[Any] = []

    def membership(self) -> Membership:
        m = Membership.connect(self.url, self.key)
        self._conns.append(m)
        return m

    def listener(self, channel: str = "buzz_membership") -> psycopg.Connection:
        conn = psycopg.connect(self.url, autocommit=True)
        self._conns.append(conn)
        conn.execute(f"LISTEN {channel}")
        return conn

    def hold_list_lock(self, community: Any) -> ListLockHolder:
        holder = ListLockHolder(self.url, community)
        self._holders.append(holder)
        return holder

    def raw_writer(self) -> RawWriter:
        writer = RawWriter(self.url, self.key)
        self._holders.append(writer)
        return writer

    def background(self, fn: Callable[[], Any], name: str) -> Background:
        call = Background(fn, name)
        self._calls.append(call)
        return call

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        for holder in self._holders:
            holder.close()
        for call in self._calls:
            call.join()  # its outcome is the test's business
        for conn in self._conns:
            conn.close()


# The community's advisory locks of the two-integer space (docs/operations.md), keyed by
# hashtext(community_id::text), which pg_locks shows as classid, objid (an oid: the hash
# unsigned) and objsubid 2: buzz_private.lock_bans's class 5, and on a cluster the community
# lock's class 4 (buzz_private.lock_community).
BAN_LOCK_CLASS = 5
COMMUNITY_LOCK_CLASS = 4


def community_lock_waiters(
    observer: psycopg.Connection, community: Any, lock_class: int
) -> list[int]:
    """The sessions waiting for the community's advisory lock of `lock_class`."""
    source = "global_pid FROM citus_locks" if CITUS else "pid FROM pg_locks"
    # citus_locks gives each node's own database oid: the key alone names the community there.
    this_database = (
        ""
        if CITUS
        else " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    return [
        r[0]
        for r in observer.execute(
            f"SELECT DISTINCT {source}"
            " WHERE locktype = 'advisory' AND objsubid = 2 AND NOT granted AND classid = %s"
            " AND objid::bigint = (pg_catalog.hashtext(%s::text)::bigint & 4294967295)"
            + this_database,
            (lock_class, str(community)),
        )
    ]


def assert_waits_for_the_ban_lock(
    observer: psycopg.Connection, wait: Wait, pid: int, community: Any, mode: str, function: str
) -> None:
    """`pid`'s wait is for the community's ban lock, in `mode`, from a call of `function`."""
    assert wait.locktype == "advisory" and wait.mode == mode, wait
    assert wait.advisory_key is None, wait  # not a list lock (those are bigint keys)
    assert function in wait.query, wait
    assert community_lock_waiters(observer, community, BAN_LOCK_CLASS) == [pid]


def assert_waits_for_the_community_lock(
    observer: psycopg.Connection, wait: Wait, pid: int, community: Any
) -> None:
    """On a cluster: `pid`'s wait is for the community lock on its worker, exclusive (a
    deletion's or a transfer's, docs/scale-out.md)."""
    assert (wait.locktype, wait.mode) == ("advisory", "ExclusiveLock"), wait
    assert community_lock_waiters(observer, community, COMMUNITY_LOCK_CLASS) == [pid]


def publish_and_commit(writer: RawWriter) -> list[dict[str, Any]]:
    """Prepare, sign, insert and commit the held transaction: its signed events."""
    writer.prepare()
    events = writer.sign_and_insert()
    writer.commit()
    return events
