"""Building the database: Alembic's versioned migrations, then every function file.

Versioned migrations (db/migrations/versions) own tables, roles and grants. Functions live one
per file in db/functions and are re-applied, all of them, in the same transaction after the
migrations (a "repeatable migration"): the file is the single source of truth for a function,
and no migration copies a body. Versioned migrations therefore never call API functions, and a
change of a function's signature drops the old one in a versioned migration.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_DIR = ROOT / "db" / "functions"
# Helpers first, then the API that calls them; sorted within each schema so runs are repeatable.
FUNCTION_SCHEMAS = ("buzz_private", "buzz")


def run_sql(sql: str) -> None:
    """Run raw SQL inside the current migration's transaction.

    Through the driver connection, not op.execute: SQLAlchemy's text() would read ':word' as a
    bind parameter even inside comments, and no parameters are passed, so psycopg leaves '%' alone.
    """
    from alembic import op

    op.get_bind().connection.driver_connection.execute(sql)


def function_files() -> list[Path]:
    return [
        f for schema in FUNCTION_SCHEMAS for f in sorted((FUNCTIONS_DIR / schema).glob("*.sql"))
    ]


def apply_functions(conn: psycopg.Connection) -> None:
    """Create or replace every function (with its grants and triggers) in the open transaction."""
    # Bodies may name functions defined in a later file; plpgsql_check and the tests validate them.
    conn.execute("SET LOCAL check_function_bodies = off")
    for path in function_files():
        conn.execute(path.read_text(encoding="utf-8"))
    conn.execute("RESET check_function_bodies")


def alembic_config(database_url: str):
    from alembic.config import Config

    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.attributes["database_url"] = database_url
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    """What `alembic upgrade head` and `buzz-admin migrate` do: migrations, then functions."""
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)
