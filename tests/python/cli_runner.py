"""buzz-admin as the tests run it: as a real process (`Cli`, fixture `cli`) or through
click's runner in the test's process (`InProcess`, fixture `fast`), against the test's
database and relay key; what a run said (`Run`, `expect`); and the helpers of the tests that
watch a running `buzz-admin watch`.

Test modules load its fixtures with pytest_plugins and import the rest.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sessions import behind_the_api

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nip19 import encode_npub

REPO = Path(__file__).resolve().parents[2]
BUZZ_ADMIN = Path(sys.executable).parent / "buzz-admin"
# Variables of the caller's shell that would change what the tool does.
SCRUBBED = (
    "DATABASE_URL", "RELAY_URL", "BUZZ_RELAY_SECRET_KEY", "PGHOST", "PGDATABASE", "BUZZ_LOCAL"
)  # fmt: skip
TIMEOUT = 60


class Run:
    """A finished buzz-admin run: exit code, stdout, stderr."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"Run(code={self.code}, out={self.out!r}, err={self.err!r})"


def base_env(**extra: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env["NO_COLOR"] = "1"
    for k, v in extra.items():
        if v is not None:
            env[k] = v
    return env


class Cli:
    """Runs buzz-admin with DATABASE_URL and the relay key of the test."""

    def __init__(self, url: str, key: RelayKey) -> None:
        self.url = url
        self.key = key

    def env(self, **extra: str | None) -> dict[str, str]:
        values: dict[str, str | None] = {
            "DATABASE_URL": self.url,
            "BUZZ_RELAY_SECRET_KEY": self.key.secret_hex(),
        }
        values.update(extra)
        return base_env(**values)

    def __call__(self, *args: str, input: str | None = None, **env: str | None) -> Run:
        proc = subprocess.run(
            [str(BUZZ_ADMIN), *args],
            env=self.env(**env),
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=REPO,
            check=False,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str, **env: str | None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(BUZZ_ADMIN), *args],
            env=self.env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )


class InProcess(Cli):
    """The same command lines through click's test runner, in this process: the same code
    and the same real database, without the half second a new process costs on this machine.
    For the many variations of a command; every command and every exit code also runs as a
    real process (test_every_command_as_a_process and the scenario tests)."""

    def __call__(self, *args: str, input: str | None = None, **env: str | None) -> Run:
        from click.testing import CliRunner

        from buzz_signer.cli import main

        values: dict[str, str | None] = dict.fromkeys(SCRUBBED)
        values.update(DATABASE_URL=self.url, BUZZ_RELAY_SECRET_KEY=self.key.secret_hex())
        values.update(env)
        result = CliRunner().invoke(
            main, list(args), input=input or "", env=values, prog_name="buzz-admin"
        )
        return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def cli(db_url: str, key: RelayKey) -> Cli:
    """buzz-admin as a real process."""
    return Cli(db_url, key)


@pytest.fixture
def fast(db_url: str, key: RelayKey) -> InProcess:
    """buzz-admin in this process (see InProcess)."""
    return InProcess(db_url, key)


def expect(run: Run, code: int, *words: str) -> Run:
    """The run exited with `code` and says each of `words` (on stdout or stderr)."""
    assert run.code == code, run
    text = run.out + run.err
    for w in words:
        assert w in text, (w, run)
    return run


def npub(pubkey: str) -> str:
    return encode_npub(pubkey)


def live(reader: Membership, cid: Any) -> dict[str, Any] | None:
    return reader.member_list(cid)


def as_replica(url: str, community: Any, sql: str, *params: Any) -> None:
    """Direct SQL on `community`'s rows with triggers off, as a restore does: the lists are not
    rewritten."""
    with behind_the_api(url, community) as restore:
        restore.execute(sql, params)


def read_line(proc: subprocess.Popen[str], stream: str, timeout: float = 30) -> str:
    """The next line of the process's stdout or stderr, or fail after `timeout` seconds.

    Reads the pipe's descriptor itself and keeps what follows the line for the next call:
    a text pipe's readline would buffer a second line that arrived with the first, where
    waiting on the descriptor cannot see it.
    """
    pending: dict[str, bytes] = proc.__dict__.setdefault("_pending_lines", {})
    fd = getattr(proc, stream).fileno()
    data = pending.pop(stream, b"")
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    try:
        while b"\n" not in data:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                proc.kill()
                pytest.fail(f"no line on {stream} within {timeout}s: {data!r} {proc.communicate()}")
            chunk = os.read(fd, 65536)
            if not chunk:  # end of file: what is left, as readline would give it
                return data.decode()
            data += chunk
    finally:
        sel.close()
    line, _, rest = data.partition(b"\n")
    if rest:
        pending[stream] = rest
    return line.decode() + "\n"


def drop_watcher(su: psycopg.Connection) -> None:
    """End the watcher's session from the server side, as a restart or a network cut would."""
    killed = su.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE application_name = 'buzz-admin watch' AND datname = current_database()"
    ).fetchone()[0]
    assert killed == 1


def wait_listening(proc: subprocess.Popen[str]) -> None:
    line = read_line(proc, "stderr")
    assert "listening" in line, line
