"""Database fixtures for the Python tests (generic; domain fixtures live in other files).

- ``admin_url`` (session): a superuser URL to the ``postgres`` database of the server the tests
  use: ``$BUZZ_TEST_ADMIN_URL`` (``make pytest`` sets it), else the project's local cluster
  (``.buzz/pg``), started if needed and left running.
- ``template_db`` (session): the name of a database migrated to head by
  ``buzz_signer.migrate.upgrade``, made once per run, dropped at the end. It accepts no
  connections (``ALLOW_CONNECTIONS false``), so that it can always serve as a template.
- ``db_url`` (function): the URL of a new database copied from the template, dropped after
  the test (on a thread of its own, while the next tests run).
- ``conn`` (function): a psycopg 3 connection to ``db_url`` (autocommit off), closed after.

With ``BUZZ_TEST_CITUS=1`` (``make test-citus``) the server is the project's local Citus
cluster (buzz_signer.localcitus, ``$BUZZ_LOCAL_CITUS`` or ``.buzz/citus``): ``admin_url`` is its coordinator's, and each
database above exists on every node (a copy of the template on each, which Citus sees as one
sharded database), migrated and distributed as `buzz-admin migrate` does on a coordinator.
``servers`` (session) lists the superuser URLs of every node, the coordinator's first.

Under pytest-xdist (``make test TEST_WORKERS=2``, docs/testing.md) each worker has its own
template and databases; the migrations' roles belong to the whole server, so ``admin_url``
waits for the template.

The fixtures are lazy: tests that request none of them start no server. Tests that use them
get the ``db`` marker, so ``pytest -m "not db"`` runs the rest without PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import psycopg

# The helper modules the test modules share (fixtures and assertions): their asserts are
# rewritten wherever a test module imports them first.
pytest.register_assert_rewrite(
    "cli_runner", "db_roles", "fixtures_membership", "gate_fixtures", "nip86_node",
    "node_clients", "page_browser", "processes", "relay_client", "relay_fixtures", "sdk_client",
    "sessions", "wire_client",
)  # fmt: skip

pytest_plugins = ["secret_watch"]

REPO = Path(__file__).resolve().parents[2]
DB_FIXTURES = frozenset({"admin_url", "template_db", "db_url", "conn"})

# CREATE DATABASE ... TEMPLATE: the default strategy (WAL_LOG) measured faster here than
# FILE_COPY for our small database (FILE_COPY forces two checkpoints per copy), at every load.
# An empty string means the server's default.
CREATE_STRATEGY = os.environ.get("BUZZ_TEST_CREATE_STRATEGY", "")

_db_numbers = itertools.count(1)

CITUS = os.environ.get("BUZZ_TEST_CITUS") == "1"
# What differs on a cluster (docs/scale-out.md), for pytest.mark.single_server.
PLAIN_SQL_WRITES = "members changed by plain SQL on the tables (refused with BZUNS on a cluster)"
ONE_COMMUNITY_PER_TRANSACTION = "a transaction writing several communities"


def params(cases: dict[str, Any], single_server: dict[str, str] | None = None) -> list[Any]:
    """pytest.param of each case, by name; those named in `single_server` marked with the
    reason given."""
    single_server = single_server or {}
    return [
        pytest.param(
            case,
            id=name,
            marks=[pytest.mark.single_server(single_server[name])] if name in single_server else [],
        )
        for name, case in cases.items()
    ]


def local_citus():  # -> buzz_signer.localcitus.LocalCitus
    """The project's local Citus cluster (BUZZ_LOCAL_CITUS, else .buzz/citus)."""
    from buzz_signer.localcitus import LocalCitus

    return LocalCitus(os.environ.get("BUZZ_LOCAL_CITUS") or REPO / ".buzz" / "citus")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "db: needs PostgreSQL (added to every test that uses a database fixture)"
    )
    config.addinivalue_line(
        "markers",
        "single_server(reason): asserts what only one server does (skipped on a Citus cluster;"
        " docs/scale-out.md says what differs)",
    )
    config.addinivalue_line(
        "markers",
        "cluster_runs_first_case(reason): cases of input the relay checks before any SQL: a"
        " Citus cluster runs the first case only (docs/testing.md)",
    )
    config.addinivalue_line(
        "markers",
        "alone_on_server(reason): disturbs the server every test shares (kills a node): the"
        " Makefile runs these after the others, in one process (docs/testing.md)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first_cases: set[tuple[str, str]] = set()
    for item in items:
        if DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)
        marker = item.get_closest_marker("single_server")
        if CITUS and marker is None:
            marker = item.get_closest_marker("cluster_runs_first_case")
            function = (item.nodeid.split("::")[0], getattr(item, "originalname", item.name))
            if marker is not None and function not in first_cases:
                first_cases.add(function)
                marker = None
        if CITUS and marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"on one server only: {marker.args[0]}"))


@pytest.hookimpl(trylast=True)  # after the skips: a skipped test is not in the way
def pytest_runtest_setup(item: pytest.Item) -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    if workers > 1 and item.get_closest_marker("alone_on_server") is not None:
        pytest.fail(
            "this test disturbs the server the other workers' tests share: run it in one"
            " process (`-m alone_on_server`, without -n), as `make test-citus` does"
        )


def _admin_execute(admin_url: str, *statements) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as c:
        for stmt in statements:
            c.execute(stmt)


def _drop(admin_url: str, name: str) -> None:
    """Drop the database `name` on one server (the hook the secret watch scans through)."""
    _drop_database(admin_url, name)


def _drop_database(url: str, name: str) -> None:
    """DROP DATABASE ... WITH (FORCE), tried again while a session holds on: FORCE waits 5 s
    for the sessions it ends, and on a loaded machine a Citus maintenance daemon can start
    again within them."""
    import time

    import psycopg
    from psycopg import sql

    stmt = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    for attempt in range(3):
        try:
            _admin_execute(url, stmt)
            return
        except psycopg.errors.ObjectInUse:
            if attempt == 2:
                raise
            time.sleep(1)


def _drop_everywhere(servers: list[str], name: str) -> None:
    """Drop `name` on the server, or on every node of the cluster: the coordinator first,
    through `_drop` (which the secret watch scans, and which reads the workers' shards), then
    the workers' copies."""
    _drop(servers[0], name)
    for url in servers[1:]:
        _drop_database(url, name)


@contextmanager
def _server_lock(admin_url: str, what: str) -> Iterator[None]:
    """A session-level advisory lock on the server, held by one run at a time."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute("SELECT pg_advisory_lock(hashtext(%s))", (f"buzz tests: {what}",))
        yield


@pytest.fixture(scope="session")
def servers() -> list[str]:
    if CITUS:
        return [n.url("postgres") for n in local_citus().start().nodes.values()]
    url = os.environ.get("BUZZ_TEST_ADMIN_URL")
    if url:
        return [url]
    from buzz_signer.localdb import LocalCluster

    root = os.environ.get("BUZZ_LOCAL_DB") or REPO / ".buzz" / "pg"
    return [LocalCluster(root).start().url("postgres")]


@pytest.fixture(scope="session")
def admin_url(servers: list[str], template_db: str) -> str:
    # The template first: its migration creates the project's roles, which belong to the whole
    # server, so that no test migrating a database of its own races another worker to create
    # (or GRANT) them.
    return servers[0]


@pytest.fixture(scope="session")
def template_db(servers: list[str]) -> Iterator[str]:
    from psycopg import sql

    from buzz_signer.localdb import url_with_dbname
    from buzz_signer.migrate import upgrade

    name = f"buzz_template_{os.getpid()}_{secrets.token_hex(3)}"
    ident = sql.Identifier(name)
    _drop_everywhere(servers, name)
    try:
        # The migrations create the project's roles, which belong to the whole server: runs
        # that share a server (pytest-xdist's workers) make their templates one at a time.
        with _server_lock(servers[0], "the test template"):
            if CITUS:
                local_citus().create_database(name)
            else:
                _admin_execute(servers[0], sql.SQL("CREATE DATABASE {}").format(ident))
            upgrade(url_with_dbname(servers[0], name))
        # A template must have no sessions: close any the migration left, and take no more.
        for url in servers:
            _admin_execute(
                url,
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(ident),
                sql.SQL(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = {} AND pid <> pg_backend_pid()"
                ).format(sql.Literal(name)),
            )
        yield name
    finally:
        _dropper.wait()
        _drop_everywhere(servers, name)


class _Dropper:
    """Drops the tests' databases on threads of its own, while the next tests run.

    DROP DATABASE takes a tenth of a second or more a node (it waits for the database's
    sessions, Citus's maintenance daemon among them, to end, then checkpoints), almost all of it
    waiting: doing it in the background takes it off every test's time. A failed drop fails the
    run when the template is dropped at the end (``wait``), as it would have failed a test."""

    def __init__(self) -> None:
        self._pool: Any = None
        self._pending: list[Any] = []

    def drop_later(self, servers: list[str], name: str) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="drop-database")
        self._pending = [f for f in self._pending if not f.done() or f.exception()]
        self._pending.append(self._pool.submit(_drop_everywhere, servers, name))

    def wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()


_dropper = _Dropper()


@contextmanager
def copy_of_template(servers: list[str], template_db: str, name: str) -> Iterator[str]:
    """The URL of a new database `name` copied from the template, dropped at the end."""
    from psycopg import sql

    from buzz_signer.localdb import url_with_dbname

    stmt = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
        sql.Identifier(name), sql.Identifier(template_db)
    )
    if CREATE_STRATEGY:
        stmt = sql.SQL("{} STRATEGY {}").format(stmt, sql.SQL(CREATE_STRATEGY))
    _drop_everywhere(servers, name)
    # On a cluster, a copy on every node: the coordinator's metadata names the same shards,
    # which each worker's copy holds.
    for url in servers:
        _admin_execute(url, stmt)
    try:
        yield url_with_dbname(servers[0], name)
    finally:
        _dropper.drop_later(servers, name)


@pytest.fixture
def db_url(servers: list[str], template_db: str) -> Iterator[str]:
    with copy_of_template(servers, template_db, f"buzz_test_{os.getpid()}_{next(_db_numbers)}") as url:
        yield url


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    import psycopg

    c = psycopg.connect(db_url, autocommit=False)
    try:
        yield c
    finally:
        c.close()
