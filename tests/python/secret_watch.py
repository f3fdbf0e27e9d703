"""pytest plugin: for a whole run, no relay secret key appears in the server log, in any
exception text, or in any table.

conftest.py loads it (``pytest_plugins = ["secret_watch"]``), so it watches every test of the
run, whichever tests are selected:

1. Secrets. Every RelayKey made in this process is recorded (its secret as 64 hex and as
   ``nsec1...``), whether it came from ``generate``, ``from_secret``, ``from_env`` or
   ``from_file``. Tests may add more with ``watch(secret)`` (a key made in a subprocess).
2. The server log. When the tests first need the server (the ``admin_url`` fixture) and its
   log file can be read from here (the project's local cluster: ``<root>/log/postgresql.log``,
   or ``pg_current_logfile()`` when the logging collector runs), ``log_statement = 'all'`` is
   set for the cluster (ALTER SYSTEM, reload) and restored at the end; then every statement and
   its bound parameters reach the log. At the end the part of the log written during the run
   is scanned. For a server whose log cannot be read, the log is not scanned and the summary
   says so. Concurrent runs on one cluster share the setting: the last one to finish restores it.
3. Tables. Each database made by conftest's ``db_url`` is scanned, every row of every table
   (all columns, as COPY text), just before it is dropped.
4. Exceptions. The text of every BuzzError, InvalidKey, Nip44Error, RefusedToSign and psycopg
   error made in this process (message, and for psycopg errors detail, hint, context and
   internal query), whether or not a test caught it, and of every failed test report.

Scans do not search for each secret separately: they pull every run of 64 or more hex
digits (each 64-character window of it) and every ``nsec1`` + 58 bech32 characters out of the
text, lowercase them, and look them up in the set of secrets. A secret found anywhere fails
the run (exit status 1) with a summary that says where, never what.

Under pytest-xdist each worker watches its own tests (its keys, its databases, the server log
while it ran) and hands its counts and findings to the controller, which prints one summary and
fails the run for any worker's finding, or for a worker that ended without handing them over.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import secrets
import tempfile
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_HEX_RUN = re.compile(rb"[0-9a-fA-F]{64,}")
_NSEC = re.compile(rb"nsec1[02-9ac-hj-np-z]{58}", re.IGNORECASE)
_MAX_FINDINGS = 20


@dataclass
class _Watch:
    secrets: set[bytes] = field(default_factory=set)
    blocks: dict[bytes, list[tuple[bytes, int]]] = field(default_factory=dict)
    keys: int = 0
    structured: set[str] = field(default_factory=set)
    findings: list[str] = field(default_factory=list)
    # the server log
    log_path: Path | None = None
    log_start: int = 0
    log_note: str = "the tests did not use the database server"
    log_bytes: int = 0
    marker: str = ""
    admin_url: str | None = None
    restore: dict[str, Any] | None = None
    run_lock: Any = None  # open file holding a shared flock while log_statement is ours
    # tables and exceptions
    databases: int = 0
    tables: int = 0
    table_bytes: int = 0
    table_note: str = ""
    exceptions: int = 0
    failed_reports: int = 0
    patched: list[tuple[Any, str, Any]] = field(default_factory=list)


_watch = _Watch()


def watch(secret: str) -> None:
    """Also look for this secret (64 hex, or an nsec) everywhere."""
    value = secret.strip().lower().encode()
    if value in _watch.secrets:
        return
    _watch.secrets.add(value)
    if len(value) == 64:
        # A secret inside a longer run of hex covers a whole 32-character block that starts at
        # a multiple of 32 in that run: index each such block of the secret by its offset.
        for offset in range(33):
            _watch.blocks.setdefault(value[offset : offset + 32], []).append((value, offset))


def leaks_in(data: bytes | str) -> int:
    """How many recorded secrets occur in `data` (0 when none)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    known, blocks = _watch.secrets, _watch.blocks
    if not known:
        return 0
    found: set[bytes] = set()
    for m in _HEX_RUN.finditer(data):
        run = m.group().lower()
        if len(run) == 64:
            if run in known:
                found.add(run)
            continue
        for j in range(0, len(run) - 31, 32):
            for value, offset in blocks.get(run[j : j + 32], ()):
                start = j - offset
                if start >= 0 and run[start : start + 64] == value:
                    found.add(value)
    for m in _NSEC.finditer(data):
        if m.group().lower() in known:
            found.add(m.group().lower())
    return len(found)


def _finding(where: str) -> None:
    if where in _watch.findings:
        return
    if len(_watch.findings) < _MAX_FINDINGS:
        _watch.findings.append(where)
    elif len(_watch.findings) == _MAX_FINDINGS:
        _watch.findings.append("... (more findings left out)")


def _check(text: bytes | str, where: str) -> None:
    if leaks_in(text):
        _finding(where)


# ------------------------------------------------------------------ 1 and 4: in-process hooks


def _patch(owner: Any, name: str, wrapper: Any) -> None:
    _watch.patched.append((owner, name, owner.__dict__[name]))
    setattr(owner, name, wrapper)


def _exception_texts(exc: BaseException) -> Iterable[str]:
    yield str(exc)
    diag = getattr(exc, "diag", None)
    if diag is not None:
        for attr in ("message_detail", "message_hint", "context", "internal_query"):
            try:
                value = getattr(diag, attr)
            except Exception:  # noqa: BLE001 -- a diag without a result
                value = None
            if value:
                yield str(value)


def _install_in_process_hooks() -> None:
    import psycopg

    from buzz_signer.errors import BuzzError
    from buzz_signer.keys import InvalidKey, RelayKey
    from buzz_signer.nip44 import Nip44Error
    from buzz_signer.signer import RefusedToSign

    real_init = RelayKey.__init__

    @functools.wraps(real_init)
    def recording_init(self: RelayKey, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        _watch.keys += 1
        secret = self.secret_hex()
        if len(set(secret)) < 10:
            # A made-up test vector such as 00...03 (a random key has about 16 distinct digits):
            # other tests may well use the same text as a pubkey or an id, and it guards nothing.
            _watch.structured.add(secret)
            return
        watch(secret)
        watch(self.nsec())

    _patch(RelayKey, "__init__", recording_init)

    for cls in (BuzzError, InvalidKey, Nip44Error, RefusedToSign, psycopg.Error):
        own = cls.__dict__.get("__init__")
        _watch.patched.append((cls, "__init__", own))  # None: inherited, delete to restore
        cls.__init__ = _checking_init(own or cls.__init__)


def _checking_init(real: Any) -> Any:
    @functools.wraps(real)
    def checking_init(self: BaseException, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        _watch.exceptions += 1
        try:
            texts = list(_exception_texts(self))
        except Exception:  # noqa: BLE001 -- never let the watch break an exception
            return
        for text in texts:
            if leaks_in(text):
                _finding(f"the text of a {type(self).__name__} made at {_site()}")

    return checking_init


def _site() -> str:
    """Where the exception was made: the innermost frame outside this file and the libraries."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if "site-packages" not in frame.filename and not frame.filename.endswith(__file__):
            return f"{Path(frame.filename).name}:{frame.lineno} ({frame.name})"
    return "unknown place"


def _remove_in_process_hooks() -> None:
    while _watch.patched:
        owner, name, original = _watch.patched.pop()
        if original is None:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


# ------------------------------------------------------------------------ 2: the server log


def _locate_log(conn: Any) -> tuple[Path | None, str]:
    data_dir = Path(conn.execute("SHOW data_directory").fetchone()[0])
    current = conn.execute("SELECT pg_current_logfile()").fetchone()[0]
    if current:
        path = Path(current) if Path(current).is_absolute() else data_dir / current
    else:  # stderr to a file given to pg_ctl -l: the local cluster's layout (buzz_signer.localdb)
        path = data_dir.parent / "log" / "postgresql.log"
    if not path.is_file() or not os.access(path, os.R_OK):
        return None, (
            f"the server log was not scanned: the server (data directory {data_dir}) is not one "
            f"whose log this process can read (looked for {path})"
        )
    return path, ""


def _state_files(log_path: Path) -> tuple[Path, Path]:
    tag = hashlib.sha256(str(log_path).encode()).hexdigest()[:16]
    base = Path(tempfile.gettempdir()) / f"buzz-secret-watch-{tag}"
    return base.with_suffix(".lock"), base.with_suffix(".json")


def _log_statement_source(conn: Any) -> dict[str, Any]:
    value, sourcefile = conn.execute(
        "SELECT setting, sourcefile FROM pg_settings WHERE name = 'log_statement'"
    ).fetchone()
    return {"value": value, "in_auto_conf": (sourcefile or "").endswith("postgresql.auto.conf")}


def _start_log_watch(admin_url: str) -> None:
    import psycopg

    _watch.admin_url = admin_url
    with psycopg.connect(admin_url, autocommit=True) as c:
        path, note = _locate_log(c)
        if path is None:
            _watch.log_note = note
            return
        lock_path, state_path = _state_files(path)
        control = os.open(lock_path.with_suffix(".control"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(control, fcntl.LOCK_EX)
            run_lock = open(lock_path, "a+")  # noqa: SIM115 - held until the run ends
            try:
                fcntl.flock(run_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                first = True
            except BlockingIOError:
                first = False
            if first and not state_path.exists():
                # No other run watches: what is set now is the operator's, to restore at the end.
                # (A state file left by a run that died keeps the operator's value.)
                state_path.write_text(json.dumps(_log_statement_source(c)))
            fcntl.flock(run_lock, fcntl.LOCK_SH)
            log_start = path.stat().st_size
            try:
                c.execute("ALTER SYSTEM SET log_statement = 'all'")
                c.execute("SELECT pg_reload_conf()")
            except psycopg.Error as exc:  # not a superuser: say so, scan the rest
                run_lock.close()
                _watch.log_note = f"the server log was not scanned: log_statement: {exc}"
                return
            _watch.run_lock, _watch.log_path, _watch.log_start = run_lock, path, log_start
        finally:
            os.close(control)
    # The reload is asynchronous: wait until new sessions log everything, then leave a marker
    # that the final scan must find (proof that it read the right file from the right place).
    deadline = time.monotonic() + 10
    while True:
        with psycopg.connect(admin_url, autocommit=True) as c:
            if c.execute("SHOW log_statement").fetchone()[0] == "all":
                _watch.marker = f"secret_watch marker {secrets.token_hex(8)}"
                c.execute("SELECT %s::text", (_watch.marker,))
                break
        if time.monotonic() > deadline:
            pytest.exit("secret_watch: log_statement = 'all' did not take effect", returncode=3)
        time.sleep(0.05)


def _restore_log_statement() -> None:
    """Give log_statement back to the operator, unless another run still watches."""
    import psycopg
    from psycopg import sql

    if _watch.run_lock is None or _watch.admin_url is None or _watch.log_path is None:
        return
    lock_path, state_path = _state_files(_watch.log_path)
    control = os.open(lock_path.with_suffix(".control"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(control, fcntl.LOCK_EX)
        try:
            fcntl.flock(_watch.run_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            last = True
        except BlockingIOError:
            last = False
        if last:
            saved = json.loads(state_path.read_text()) if state_path.exists() else None
            with psycopg.connect(_watch.admin_url, autocommit=True) as c:
                if saved is None or not saved["in_auto_conf"]:
                    c.execute("ALTER SYSTEM RESET log_statement")
                else:
                    c.execute(
                        sql.SQL("ALTER SYSTEM SET log_statement = {}").format(
                            sql.Literal(saved["value"])
                        )
                    )
                c.execute("SELECT pg_reload_conf()")
            state_path.unlink(missing_ok=True)
        _watch.run_lock.close()
        _watch.run_lock = None
    finally:
        os.close(control)


def _scan_log() -> None:
    path = _watch.log_path
    if path is None:
        return
    with path.open("rb") as f:
        f.seek(_watch.log_start)
        data = f.read()
    _watch.log_bytes = len(data)
    _watch.log_note = f"{path}, from byte {_watch.log_start}"
    if _watch.marker.encode() not in data:
        _finding(
            f"the server log {path} does not hold this run's marker statement: it was not "
            "logged there (log_statement not in effect, or another log file), so it proves nothing"
        )
    _check(data, f"the server log {path} (after byte {_watch.log_start})")


# ----------------------------------------------------------------------------- 3: tables


def _scan_database(admin_url: str, name: str) -> None:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(admin_url, autocommit=True) as c:
        row = c.execute(
            "SELECT datallowconn FROM pg_database WHERE datname = %s", (name,)
        ).fetchone()
    if row is None or not row[0]:  # not there, or the template (written only by migrations)
        return
    with psycopg.connect(make_conninfo(admin_url, dbname=name), autocommit=True) as c:
        # A test that left a session holding an exclusive lock must not hang the run.
        c.execute("SET lock_timeout = '10s'")
        rels = c.execute(
            """SELECT n.nspname, c.relname FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE c.relkind IN ('r', 'p', 'm')
                 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                 AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'
               ORDER BY 1, 2"""
        ).fetchall()
        _watch.databases += 1
        for schema, table in rels:
            query = sql.SQL("COPY (SELECT * FROM {}.{}) TO STDOUT").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            with c.cursor().copy(query) as copy:
                data = b"".join(bytes(chunk) for chunk in copy)
            _watch.tables += 1
            _watch.table_bytes += len(data)
            _check(data, f"table {schema}.{table} of database {name}")


def _wrap_drop(module_globals: dict[str, Any]) -> None:
    real_drop = module_globals.get("_drop")
    if real_drop is None or getattr(real_drop, "_secret_watch", False):
        if real_drop is None:
            _watch.table_note = "tables were not scanned: conftest.py has no _drop to hook"
        return

    @functools.wraps(real_drop)
    def scanning_drop(admin_url: str, name: str) -> None:
        _scan_database(admin_url, name)
        real_drop(admin_url, name)

    scanning_drop._secret_watch = True  # type: ignore[attr-defined]
    module_globals["_drop"] = scanning_drop
    _watch.patched.append((_GlobalsSlot(module_globals), "_drop", real_drop))


class _GlobalsSlot:
    """setattr/delattr on a module's globals dict, so that _remove_in_process_hooks undoes it."""

    def __init__(self, globals_: dict[str, Any]) -> None:
        object.__setattr__(self, "g", globals_)

    def __setattr__(self, name: str, value: Any) -> None:
        self.g[name] = value

    def __delattr__(self, name: str) -> None:
        del self.g[name]


# ----------------------------------------------------------------------------- pytest hooks


def pytest_configure(config: pytest.Config) -> None:
    _install_in_process_hooks()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest):
    if fixturedef.argname == "db_url":
        _wrap_drop(getattr(fixturedef.func, "__globals__", {}))
    result = yield
    if fixturedef.argname == "admin_url" and _watch.admin_url is None:
        _start_log_watch(result)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.failed or call.excinfo is not None:
        _watch.failed_reports += 1
        texts = [str(report.longrepr)]
        if call.excinfo is not None:
            texts.append(call.excinfo.exconly())
        for text in texts:
            _check(text, f"the failure report of {item.nodeid} ({call.when})")
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    try:
        _scan_log()
    finally:
        _restore_log_statement()
        _remove_in_process_hooks()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        # A pytest-xdist worker: its exit status is not the run's, so the controller
        # (pytest_testnodedown below) adds up what each worker watched and found.
        workeroutput["secret_watch"] = _summary()
    if _watch.findings:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _summary() -> dict[str, Any]:
    w = _watch
    return {
        "secrets": sum(len(s) == 64 for s in w.secrets),
        "keys": w.keys,
        "structured": len(w.structured),
        "log_bytes": w.log_bytes,
        "log_notes": [w.log_note] if w.log_path or w.admin_url else [],
        "databases": w.databases,
        "tables": w.tables,
        "table_bytes": w.table_bytes,
        "table_notes": [w.table_note] if w.table_note else [],
        "exceptions": w.exceptions,
        "failed_reports": w.failed_reports,
        "findings": list(w.findings),
    }


_worker_summaries: list[dict[str, Any]] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    summary = getattr(node, "workeroutput", {}).get("secret_watch")
    if summary is None:
        _watch.findings.append(
            f"worker {getattr(node, 'gateway', node)} ended without its secret watch summary "
            "(it crashed?): what it saw was not checked"
        )
        return
    _worker_summaries.append(summary)
    _watch.findings.extend(summary["findings"])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    tr = terminalreporter
    if hasattr(tr.config, "workeroutput"):
        return
    runs = _worker_summaries or [_summary()]
    total = {k: sum(r[k] for r in runs) for k in runs[0] if not isinstance(runs[0][k], list)}
    log_notes = "; ".join(n for r in runs for n in r["log_notes"]) or (
        "the tests did not use the database server"
    )
    table_notes = "; ".join(n for r in runs for n in r["table_notes"])
    workers = f" over {len(_worker_summaries)} workers" if _worker_summaries else ""
    tr.section("secret watch")
    tr.write_line(
        f"{total['secrets']} relay secrets watched{workers} "
        f"({total['keys']} RelayKeys made, {total['structured']} test-vector secrets like 00..03"
        f" not watched); server log: {total['log_bytes']} bytes scanned ({log_notes}); "
        f"{total['databases']} databases, {total['tables']} tables, {total['table_bytes']} bytes"
        f" of rows scanned{' (' + table_notes + ')' if table_notes else ''}; "
        f"{total['exceptions']} exception texts and {total['failed_reports']} failure reports"
        " checked"
    )
    if _watch.findings:
        tr.write_line("A RELAY SECRET KEY WAS FOUND; the run fails:", red=True, bold=True)
        for where in _watch.findings:
            tr.write_line(f"  in {where}", red=True)
    else:
        tr.write_line("no relay secret found", green=True)
