"""A real buzz-relay process on a loopback port, over a test database, for wire tests.

Test modules load it with ``pytest_plugins = ("fixtures_membership", "relay_fixtures")``.

- ``start_relay(*flags, port=, env=, public_url=)``: starts ``buzz-relay`` (the console script
  of this checkout's .venv) on a free port against the test's ``db_url``, with the relay key in
  its environment, and waits until ``/healthz`` answers. Returns a ``RelayProcess``; every
  process is stopped after the test and its log is checked for the relay secret.
  With ``--community``, it adds ``--public-url ws://127.0.0.1:PORT`` as an operator would
  (``public_url=False`` leaves it out); it raises the bounds on joins per address and per
  pubkey to 1,000 unless the flags set them (every test client has one address).
- ``relay``: one community (owner, one admin, one member, keys known) served by a running
  relay with ``--community``: a ``Relay`` with everything a client test needs.

Clients connect to ``relay.url`` (``ws://127.0.0.1:PORT``); that is also what their AUTH
``relay`` tag and NIP-98 ``u`` should name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from coincurve import PrivateKey
from fixtures_membership import new_host
from ports import free_port
from secret_watch import leaks_in

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership

BUZZ_RELAY = Path(sys.executable).with_name("buzz-relay")


@dataclass(frozen=True)
class Person:
    """A client's keypair (a test key, not a relay secret)."""

    secret: str
    pubkey: str

    @classmethod
    def new(cls) -> Person:
        sk = PrivateKey()
        return cls(sk.secret.hex(), sk.public_key_xonly.format().hex())


def _family(pid: int) -> list[int]:
    """`pid` and its descendants (--workers: the workers listen, not their parent)."""
    family, i = [pid], 0
    while i < len(family):
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{family[i]}/task").iterdir():
                family += [int(c) for c in (task / "children").read_text().split()]
        i += 1
    return family


def listening(pid: int, port: int) -> bool:
    """Whether process `pid` (or a process it started) holds a TCP socket listening on `port`
    (Linux's /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    for member in _family(pid):
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{member}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return True
    return False


class RelayProcess:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log_path = log
        self.url = f"ws://127.0.0.1:{port}"
        self.http = f"http://127.0.0.1:{port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, Any]:
        """(status, body, headers) of an HTTP GET."""
        req = urllib.request.Request(self.http + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, resp.read().decode(), resp.headers
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), exc.headers

    def wait_ready(self, timeout: float = 20) -> None:
        """Until this process listens on its port and /healthz answers 200. (With
        --reuse-port another process may answer /healthz on the port first: the listening
        socket is looked for among this process's own.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"buzz-relay exited {self.proc.returncode}:\n{self.log()}")
            try:
                if listening(self.proc.pid, self.port) and self.get("/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"buzz-relay did not answer /healthz:\n{self.log()}")

    def kill(self) -> None:
        """kill -9: no shutdown of any kind."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass(frozen=True)
class Relay:
    """A running relay serving one community, and the people in it."""

    process: RelayProcess
    url: str
    db_url: str
    key: RelayKey
    community_id: Any
    host: str
    owner: Person
    admin: Person
    member: Person
    mem: Membership  # SQL writes, as an outside service makes them


@pytest.fixture
def start_relay(
    db_url: str, key: RelayKey, tmp_path: Path
) -> Iterator[Callable[..., RelayProcess]]:
    started: list[RelayProcess] = []

    def start(
        *flags: str,
        port: int | None = None,
        env: dict[str, str] | None = None,
        public_url: bool = True,
    ):
        port = port or free_port()
        # Every test client comes from 127.0.0.1: the bounds on joins per address and per
        # pubkey (SPEC section 10: 10 and 3 in 10 minutes) are raised unless the test sets them.
        for flag in ("--max-joins", "--max-joins-per-pubkey"):
            if flag not in flags:
                flags = (*flags, flag, "1000")
        if public_url and "--community" in flags and "--public-url" not in flags:
            # As an operator runs it: one community, and the URL its clients use (AUTH and
            # NIP-98 must name it; the Host they send does not count).
            flags = (*flags, "--public-url", f"ws://127.0.0.1:{port}")
        log = tmp_path / f"relay-{port}-{len(started)}.log"
        environ = os.environ | {
            "DATABASE_URL": db_url,
            "BUZZ_RELAY_SECRET_KEY": key.secret_hex(),
        } | (env or {})
        proc = subprocess.Popen(
            [str(BUZZ_RELAY), "--listen", f"127.0.0.1:{port}", *flags],
            env=environ,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        relay = RelayProcess(proc, port, log)
        started.append(relay)
        relay.wait_ready()
        return relay

    yield start
    for relay in started:
        if relay.proc.poll() is None:
            for path in ("/metrics", "/"):
                assert leaks_in(relay.get(path, {"Accept": "application/nostr+json"})[1]) == 0
        relay.stop()
    for relay in started:
        assert leaks_in(relay.log()) == 0, "the relay's log holds its secret key"


@pytest.fixture
def relay(start_relay, mem: Membership, key: RelayKey, db_url: str) -> Relay:
    owner, admin, member = Person.new(), Person.new(), Person.new()
    host = new_host()
    cid = mem.create_community(host, owner.pubkey).details["community_id"]
    mem.add_relay_member(cid, admin.pubkey, "admin")
    mem.add_relay_member(cid, member.pubkey)
    process = start_relay("--community", str(cid))
    return Relay(process, process.url, db_url, key, cid, host, owner, admin, member, mem)
