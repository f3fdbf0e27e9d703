"""Database fixtures for the Python tests (generic; domain fixtures live in other files).

- ``admin_url`` (session): a superuser URL to the ``postgres`` database of the server the tests
  use: ``$BUZZ_TEST_ADMIN_URL`` (``make pytest`` sets it), else the project's local cluster
  (``.buzz/pg``), started if needed and left running.
- ``template_db`` (session): the name of a database migrated to head by
  ``buzz_signer.migrate.upgrade``, made once per run, dropped at the end. It accepts no
  connections (``ALLOW_CONNECTIONS false``), so that it can always serve as a template.
- ``db_url`` (function): the URL of a new database copied from the template, dropped after
  the test.
- ``conn`` (function): a psycopg 3 connection to ``db_url`` (autocommit off), closed after.

With ``BUZZ_TEST_CITUS=1`` (``make test-citus``) the server is the project's local Citus
cluster (buzz_signer.localcitus, ``.buzz/citus``): ``admin_url`` is its coordinator's, and each
database above exists on every node (a copy of the template on each, which Citus sees as one
sharded database), migrated and distributed as `buzz-admin migrate` does on a coordinator.
``servers`` (session) lists the superuser URLs of every node, the coordinator's first.

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)
        marker = item.get_closest_marker("single_server")
        if CITUS and marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"on one server only: {marker.args[0]}"))


def _admin_execute(admin_url: str, *statements) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as c:
        for stmt in statements:
            c.execute(stmt)


def _drop(admin_url: str, name: str) -> None:
    from psycopg import sql

    _admin_execute(
        admin_url, sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    )


def _drop_everywhere(servers: list[str], name: str) -> None:
    """Drop `name` on the server, or on every node of the cluster: the coordinator first,
    through `_drop` (which the secret watch scans, and which reads the workers' shards), then
    the workers' copies."""
    from psycopg import sql

    _drop(servers[0], name)
    for url in servers[1:]:
        _admin_execute(
            url, sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


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
def admin_url(servers: list[str]) -> str:
    return servers[0]


@pytest.fixture(scope="session")
def template_db(servers: list[str]) -> Iterator[str]:
    from psycopg import sql

    from buzz_signer.localdb import url_with_dbname
    from buzz_signer.migrate import upgrade

    name = f"buzz_template_{os.getpid()}_{secrets.token_hex(3)}"
    ident = sql.Identifier(name)
    _drop_everywhere(servers, name)
    if CITUS:
        local_citus().create_database(name)
    else:
        _admin_execute(servers[0], sql.SQL("CREATE DATABASE {}").format(ident))
    try:
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
        _drop_everywhere(servers, name)


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
        _drop_everywhere(servers, name)


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
