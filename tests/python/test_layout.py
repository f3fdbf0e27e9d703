"""Rules of the code's layout that a reader relies on, checked by reading the files."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_another() -> None:
    """What test modules share lives in helper modules (cli_runner, relay_fixtures, ...),
    loaded as plugins or imported: a test module is never imported, so each can be read,
    run and changed on its own."""
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""] if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names] if isinstance(node, ast.Import)
                else []
            )  # fmt: skip
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("test_")]
    assert offenders == []


# SQL that calls the API: a statement naming a function of schema buzz, called (a help text
# that names one is not SQL).
API_CALL = re.compile(r"\bbuzz\.[a-z_]+\s*\(")
STATEMENT = re.compile(r"\b(SELECT|CALL|PERFORM)\b", re.IGNORECASE)
# Where SQL against the API may be written: the API's statements (membership/, which its sync
# and async classes run), and the cluster's set-up, which distributes the functions
# (buzz_signer/citus.py; the migrations are under db/, not in the package).
SQL_ALLOWED = {"membership/statements.py", "citus.py"}


def test_only_the_membership_api_writes_sql_against_the_api() -> None:
    """The relay, the NIP-86 methods and buzz-admin call the membership API
    (buzz_signer.membership); none of them holds SQL of its own against the API (docstrings
    and comments may name the functions), and within the API only its statements do."""
    package = TESTS.parents[1] / "buzz_signer"
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() in SQL_ALLOWED:
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and API_CALL.search(node.value)
                and STATEMENT.search(node.value)
            ):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}: {node.value[:60]!r}")
    assert offenders == []
