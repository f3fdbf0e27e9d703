"""Building the database: Alembic's versioned migrations, then every function file.

Versioned migrations (db/migrations/versions) own tables, roles and grants. Functions live one
per file in db/functions and are re-applied, all of them, in the same transaction after the
migrations (a "repeatable migration"): the file is the single source of truth for a function,
and no migration copies a body. Versioned migrations therefore never call API functions, and a
change of a function's signature drops the old one in a versioned migration.

Where the files are: in a checkout (and its editable install) in the repository's db/, with
alembic.ini next to it; in an installed wheel in the package itself, as buzz_signer/db (the
same db/ directory, which pyproject.toml maps to the package data buzz_signer.db), with the
Alembic configuration built here instead of read from alembic.ini.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parent  # the repository, when running from a checkout
_INSTALLED_DB_DIR = PACKAGE_DIR / "db"  # only in an installed wheel (no such directory in git)
DB_DIR = _INSTALLED_DB_DIR if (_INSTALLED_DB_DIR / "migrations").is_dir() else ROOT / "db"
# The checkout's alembic.ini (the one `alembic` reads there); None installed.
ALEMBIC_INI: Path | None = None
if DB_DIR == ROOT / "db" and (ROOT / "alembic.ini").is_file():
    ALEMBIC_INI = ROOT / "alembic.ini"
FUNCTIONS_DIR = DB_DIR / "functions"
CITUS_DIR = DB_DIR / "citus"  # a Citus cluster's tables and functions (buzz_signer.citus)
MIGRATIONS_DIR = DB_DIR / "migrations"
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
    """Create or replace every function (with its grants and triggers) in the open transaction.

    On a Citus coordinator the schema is sharded by community first (buzz_signer.citus).
    """
    if is_citus(conn):
        from buzz_signer import citus

        citus.distribute(conn)
    else:
        apply_function_files(conn, one_statement_at_a_time=False)


def apply_function_files(conn: psycopg.Connection, one_statement_at_a_time: bool) -> None:
    # Bodies may name functions defined in a later file; plpgsql_check and the tests validate them.
    conn.execute("SET LOCAL check_function_bodies = off")
    for path in function_files():
        sql = path.read_text(encoding="utf-8")
        for statement in split_statements(sql) if one_statement_at_a_time else [sql]:
            conn.execute(statement)
    conn.execute("RESET check_function_bodies")


def is_citus(conn: psycopg.Connection) -> bool:
    """Whether the database is a Citus coordinator's (the citus extension is installed)."""
    return conn.execute("SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus'").rowcount > 0


# Where a statement may not end: a comment, a quoted string or name, a dollar-quoted body, an
# SQL-standard body (BEGIN ATOMIC ... END, whose CASE ... END pairs are counted).
_SQL_TOKEN = re.compile(
    r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|(\$[A-Za-z_0-9]*\$).*?\1"
    r"|\bBEGIN\s+ATOMIC\b|\bCASE\b|\bEND\b|;",
    re.DOTALL | re.IGNORECASE,
)


def split_statements(sql: str) -> list[str]:
    """The statements of a file of SQL, each without its ';' (empty ones dropped)."""
    statements, start, depth = [], 0, 0
    for m in _SQL_TOKEN.finditer(sql):
        token = m.group().upper()
        if token.startswith("BEGIN") or (token == "CASE" and depth):
            depth += 1
        elif token == "END" and depth:
            depth -= 1
        elif token == ";" and not depth:
            statements.append(sql[start : m.start()])
            start = m.end()
    statements.append(sql[start:])
    return [s for s in statements if _SQL_TOKEN.sub(_keep_words, s).strip()]


def _keep_words(m: re.Match[str]) -> str:
    """What of a token is a statement's content (all but comments and ';')."""
    return "" if m.group().startswith(("--", "/*", ";")) else m.group()


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
