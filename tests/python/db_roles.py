"""LOGIN roles of the test's own, members of the project's roles (buzz_writer, buzz_reader,
buzz_key_admin), for tests that act as a service would: the fixture `login_role` makes them
(on every node of a cluster) and drops them after the test; `as_role` is the test database's
URL for one."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo


@pytest.fixture
def login_role(servers: list[str], db_url: str) -> Iterator[Callable[..., str]]:
    """make(*roles) -> the name of a new LOGIN role, member of `roles`; dropped after the test
    (with everything it owns in the test database). On a cluster, a role of every node's."""
    made: list[str] = []

    def make(*member_of: str) -> str:
        name = f"buzz_sec_{os.getpid()}_{secrets.token_hex(4)}"
        stmt = sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name))
        if member_of:
            stmt = sql.SQL("{} IN ROLE {}").format(
                stmt, sql.SQL(", ").join(map(sql.Identifier, member_of))
            )
        for url in servers:
            with psycopg.connect(url, autocommit=True) as c:
                c.execute(stmt)
        made.append(name)
        return name

    yield make
    errors = []
    for name in made:
        try:
            with psycopg.connect(db_url, autocommit=True) as c:
                c.execute(
                    "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                    " WHERE usename = %s",
                    (name,),
                )
                c.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            for url in servers:
                with psycopg.connect(url, autocommit=True) as c:
                    c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
        except psycopg.Error as exc:  # pragma: no cover - reported, the others still dropped
            errors.append(f"{name}: {exc}")
    assert not errors, errors


def as_role(db_url: str, role: str) -> str:
    """The test database's URL for LOGIN role `role` (the local cluster trusts local users)."""
    return make_conninfo(db_url, user=role)
