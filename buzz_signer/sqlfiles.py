"""The project's SQL files (db/): where they are, how a file is cut into statements, and how
the function files are applied. Both the migrations (buzz_signer.migrate) and the cluster's
set-up (buzz_signer.citus) read them from here.

Where the files are: in a checkout (and its editable install) the repository's db/; in an
installed wheel the package itself, as buzz_signer/db (the same db/ directory, which
pyproject.toml maps to the package data buzz_signer.db).
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parent  # the repository, when running from a checkout
_INSTALLED_DB_DIR = PACKAGE_DIR / "db"  # only in an installed wheel (no such directory in git)
DB_DIR = _INSTALLED_DB_DIR if (_INSTALLED_DB_DIR / "migrations").is_dir() else ROOT / "db"
FUNCTIONS_DIR = DB_DIR / "functions"
CITUS_DIR = DB_DIR / "citus"  # a Citus cluster's tables and functions (buzz_signer.citus)
MIGRATIONS_DIR = DB_DIR / "migrations"
# Helpers first, then the API that calls them; sorted within each schema so runs are repeatable.
FUNCTION_SCHEMAS = ("buzz_private", "buzz")


def function_files() -> list[Path]:
    return [
        f for schema in FUNCTION_SCHEMAS for f in sorted((FUNCTIONS_DIR / schema).glob("*.sql"))
    ]


def apply_function_files(conn: psycopg.Connection, one_statement_at_a_time: bool) -> None:
    """Create or replace every function (with its grants and triggers) in the open
    transaction; one statement at a time for a Citus coordinator, which sends a function's DDL
    to the workers as the command it came in."""
    # Bodies may name functions defined in a later file; plpgsql_check and the tests validate them.
    conn.execute("SET LOCAL check_function_bodies = off")
    for path in function_files():
        sql = path.read_text(encoding="utf-8")
        for statement in split_statements(sql) if one_statement_at_a_time else [sql]:
            conn.execute(statement)
    conn.execute("RESET check_function_bodies")


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
