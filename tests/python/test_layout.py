"""Rules of the code's layout that a reader relies on, checked by reading the files."""

from __future__ import annotations

import ast
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
