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

The fixtures are lazy: tests that request none of them start no server. Tests that use them
get the ``db`` marker, so ``pytest -m "not db"`` runs the rest without PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "db: needs PostgreSQL (added to every test that uses a database fixture)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)


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


@pytest.fixture(scope="session")
def admin_url() -> str:
    url = os.environ.get("BUZZ_TEST_ADMIN_URL")
    if url:
        return url
    from buzz_signer.localdb import LocalCluster

    root = os.environ.get("BUZZ_LOCAL_DB") or REPO / ".buzz" / "pg"
    return LocalCluster(root).start().url("postgres")


@pytest.fixture(scope="session")
def template_db(admin_url: str) -> Iterator[str]:
    from psycopg import sql

    from buzz_signer.localdb import url_with_dbname
    from buzz_signer.migrate import upgrade

    name = f"buzz_template_{os.getpid()}_{secrets.token_hex(3)}"
    ident = sql.Identifier(name)
    _drop(admin_url, name)
    _admin_execute(admin_url, sql.SQL("CREATE DATABASE {}").format(ident))
    try:
        upgrade(url_with_dbname(admin_url, name))
        # A template must have no sessions: close any the migration left, and take no more.
        _admin_execute(
            admin_url,
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(ident),
            sql.SQL(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = {} AND pid <> pg_backend_pid()"
            ).format(sql.Literal(name)),
        )
        yield name
    finally:
        _drop(admin_url, name)


@pytest.fixture
def db_url(admin_url: str, template_db: str) -> Iterator[str]:
    from psycopg import sql

    from buzz_signer.localdb import url_with_dbname

    name = f"buzz_test_{os.getpid()}_{next(_db_numbers)}"
    stmt = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
        sql.Identifier(name), sql.Identifier(template_db)
    )
    if CREATE_STRATEGY:
        stmt = sql.SQL("{} STRATEGY {}").format(stmt, sql.SQL(CREATE_STRATEGY))
    _drop(admin_url, name)
    _admin_execute(admin_url, stmt)
    try:
        yield url_with_dbname(admin_url, name)
    finally:
        _drop(admin_url, name)


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    import psycopg

    c = psycopg.connect(db_url, autocommit=False)
    try:
        yield c
    finally:
        c.close()
