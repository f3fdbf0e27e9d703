"""Building the database: Alembic's versioned migrations, then every function file.

Versioned migrations (db/migrations/versions) own tables, roles and grants. Functions live one
per file in db/functions and are re-applied, all of them, in the same transaction after the
migrations (a "repeatable migration"): the file is the single source of truth for a function,
and no migration copies a body. Versioned migrations therefore never call API functions, and a
change of a function's signature drops the old one in a versioned migration.

The files are found by buzz_signer.sqlfiles: in a checkout the repository's db/, with
alembic.ini next to it; in an installed wheel the package's own copy, with the Alembic
configuration built here instead of read from alembic.ini. On a Citus coordinator the
functions are applied by buzz_signer.citus, which shards the schema first.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from . import citus
from .sqlfiles import (
    DB_DIR,
    MIGRATIONS_DIR,
    ROOT,
    apply_function_files,
    function_files,
    split_statements,
)

__all__ = [
    "ALEMBIC_INI",
    "DB_DIR",
    "alembic_config",
    "apply_functions",
    "current_revision",
    "function_files",
    "head_revision",
    "is_citus",
    "run_sql",
    "run_statements",
    "split_statements",
    "upgrade",
]

# The checkout's alembic.ini (the one `alembic` reads there); None installed.
ALEMBIC_INI: Path | None = None
if DB_DIR == ROOT / "db" and (ROOT / "alembic.ini").is_file():
    ALEMBIC_INI = ROOT / "alembic.ini"


def run_sql(sql: str) -> None:
    """Run raw SQL inside the current migration's transaction.

    Through the driver connection, not op.execute: SQLAlchemy's text() would read ':word' as a
    bind parameter even inside comments, and no parameters are passed, so psycopg leaves '%' alone.
    """
    from alembic import op

    op.get_bind().connection.driver_connection.execute(sql)


def run_statements(script: str) -> None:
    """run_sql, one statement of `script` at a time: on a cluster Citus sends the workers a
    statement on a distributed object as the command it came in, and a worker refuses several
    commands in one."""
    for statement in split_statements(script):
        run_sql(statement)


def apply_functions(conn: psycopg.Connection) -> None:
    """Create or replace every function (with its grants and triggers) in the open transaction.

    On a Citus coordinator the schema is sharded by community first (buzz_signer.citus).
    """
    if is_citus(conn):
        citus.distribute(conn)
    else:
        apply_function_files(conn, one_statement_at_a_time=False)


def is_citus(conn: psycopg.Connection) -> bool:
    """Whether the database is a Citus coordinator's (the citus extension is installed)."""
    return conn.execute("SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus'").rowcount > 0


def alembic_config(database_url: str):
    """The checkout's alembic.ini; installed (no alembic.ini), the same [alembic] settings."""
    from alembic.config import Config

    if ALEMBIC_INI is not None:
        cfg = Config(str(ALEMBIC_INI))
    else:
        cfg = Config()
        # Config values are interpolated: a '%' in the path must be doubled.
        cfg.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
        cfg.set_main_option("path_separator", "os")
    cfg.attributes["database_url"] = database_url
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    """What `alembic upgrade head` and `buzz-admin migrate` do: migrations, then functions."""
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)


def current_revision(database_url: str) -> tuple[str | None, str | None]:
    """The revision the database is at (alembic_version; None before the first migration), and
    a digest of its functions' definitions (None without the buzz schemas)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        (digest,) = conn.execute(
            "SELECT md5(string_agg(pg_get_functiondef(p.oid), '' ORDER BY p.oid::regprocedure::text))"
            " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname IN ('buzz', 'buzz_private') AND p.prokind IN ('f', 'p')"
        ).fetchone()
        if conn.execute("SELECT to_regclass('public.alembic_version')").fetchone()[0] is None:
            return None, digest
        row = conn.execute("SELECT version_num FROM public.alembic_version").fetchone()
        return (row[0] if row is not None else None), digest


def head_revision() -> str:
    """The newest revision of the migrations this package holds."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("")).get_current_head()
    assert head is not None, "no migrations found"
    return head
