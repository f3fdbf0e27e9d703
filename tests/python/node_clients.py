"""Driving the Node clients of tests/node from pytest: a scenario in, what the client saw out.

Each script (nip43_client.mjs with nostr-tools, flotilla_client.mjs with @welshman) takes a
scenario (the relay's URL and key, the actors' secret keys, a list of steps) as the first line
of its stdin, never on argv, performs each step with its client library, and prints one JSON
line per observation. A `pause` step stops the script until this side has looked at (or
changed) the database and written a line back. Node's modules are installed by `npm ci` when
tests/node/node_modules lacks one that is wanted.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from relay_fixtures import Person

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
NIP43_SCRIPT = NODE_DIR / "nip43_client.mjs"  # nostr-tools, as Jumble speaks NIP-43
RUN_TIMEOUT = 60.0


def node_with(*modules: str) -> str:
    """The node executable, with tests/node's `modules` installed (npm ci) if missing."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (20 or later) is needed for the client tests and is not on PATH")
    installed = NODE_DIR / "node_modules"
    if not all((installed / name).is_dir() for name in modules):
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is needed to install {NODE_DIR}'s modules and is not on PATH")
        done = subprocess.run(
            [npm, "ci", "--prefix", str(NODE_DIR), "--silent", "--no-audit", "--no-fund"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(
                f"npm ci --prefix {NODE_DIR} failed ({done.returncode}):\n"
                f"{done.stdout}\n{done.stderr}"
            )
    return node


class Run:
    """What the client printed, one dict per line, with lookups by op and label."""

    def __init__(self, lines: list[dict[str, Any]], stderr: str) -> None:
        self.lines = lines
        self.stderr = stderr

    def __repr__(self) -> str:
        return "\n".join(json.dumps(line) for line in self.lines) + "\n" + self.stderr

    def where(self, op: str, label: str | None = None) -> list[dict[str, Any]]:
        return [x for x in self.lines if x["op"] == op and (label is None or x["label"] == label)]

    def one(self, op: str, label: str) -> dict[str, Any]:
        found = self.where(op, label)
        assert len(found) == 1, f"{len(found)} {op!r} lines for {label!r} in:\n{self!r}"
        return found[0]

    def events(self, label: str, *, live: bool | None = None) -> list[dict[str, Any]]:
        """The events a subscription received (before its EOSE: live False; after: True)."""
        return [x["event"] for x in self.where("event", label) if live is None or x["live"] is live]

    def ok(self, label: str) -> tuple[bool, str]:
        """(accepted, reason) of a publish or an AUTH."""
        found = [x for x in self.lines if x["op"] in ("ok", "auth") and x["label"] == label]
        assert len(found) == 1, f"{len(found)} answers for {label!r} in:\n{self!r}"
        return found[0]["ok"], found[0]["reason"]

    def closed(self, label: str) -> str:
        assert not self.where("eose", label), f"{label!r} got EOSE, not CLOSED:\n{self!r}"
        return self.one("closed", label)["reason"]


def run_scenario(
    command: Sequence[str],
    relay: Any,
    keys: dict[str, Any],
    steps: Sequence[dict[str, Any]],
    pauses: Sequence[Callable[[Run], None]] = (),
) -> Run:
    """Run one scenario in one node process (`command`: node and its script); at the i-th
    pause, call pauses[i] and let the script go on. Fails unless the script ends with `done`
    and every pause was reached."""
    scenario = {
        "url": relay.url,
        "relayPubkey": relay.key.pubkey,
        "keys": {name: person.secret for name, person in keys.items()},
        "steps": list(steps),
    }
    proc = subprocess.Popen(
        [*command, "-"],
        cwd=NODE_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdin.write(json.dumps(scenario) + "\n")
    proc.stdin.flush()
    out: queue.Queue[str | None] = queue.Queue()
    err: list[str] = []

    def pump_stdout() -> None:
        for line in proc.stdout:
            out.put(line)
        out.put(None)

    threading.Thread(target=pump_stdout, daemon=True).start()
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    run = Run([], "")
    pending = list(pauses)
    deadline = time.monotonic() + RUN_TIMEOUT
    script = Path(command[-1]).name
    try:
        while True:
            try:
                text = out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"{script} did not finish in {RUN_TIMEOUT} s:\n{run!r}")
            if text is None:
                break
            try:
                line = json.loads(text)
            except ValueError:
                pytest.fail(f"{script} printed a line that is not JSON: {text!r}\n{run!r}")
            run.lines.append(line)
            if line["op"] == "pause":
                assert pending, f"more pauses than callbacks:\n{run!r}"
                pending.pop(0)(run)
                proc.stdin.write("go\n")
                proc.stdin.flush()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        run.stderr = "".join(err)
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{run!r}"
    assert run.lines and run.lines[-1]["op"] == "done", run
    assert not pending, f"{len(pending)} pause callbacks were not reached:\n{run!r}"
    return run


# The steps of a scenario


def connect(conn: str) -> dict[str, Any]:
    return {"op": "connect", "conn": conn}


def auth(conn: str, who: str, label: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"op": "auth", "conn": conn, "as": who, "label": label or f"auth-{conn}", **extra}


def req(
    conn: str, label: str, *kinds: int, keep: bool = False, filters: list | None = None
) -> dict[str, Any]:
    filters = [{"kinds": list(kinds)}] if filters is None else filters
    return {"op": "req", "conn": conn, "label": label, "filters": filters, "keep": keep}


def publish(conn: str, who: str, label: str, kind: int, tags: list, **extra: Any) -> dict:
    return {
        "op": "publish",
        "conn": conn,
        "as": who,
        "label": label,
        "kind": kind,
        "tags": tags,
        **extra,
    }


def pause(label: str) -> dict[str, Any]:
    return {"op": "pause", "label": label}


def tag_of(event: dict[str, Any], name: str) -> list[str]:
    (tag,) = [t for t in event["tags"] if t[0] == name]
    return tag


def named(event: dict[str, Any]) -> set[str]:
    return {t[1] for t in event["tags"] if t[0] == "member"}


@pytest.fixture(scope="session")
def node_client() -> list[str]:
    """The command that runs the client script, its modules installed (npm ci) if missing."""
    return [node_with("nostr-tools", "ws"), str(NIP43_SCRIPT)]


def run_client(
    command: list[str],
    relay: Any,
    keys: dict[str, Person],
    steps: Sequence[dict[str, Any]],
    pauses: Sequence[Callable[[Run], None]] = (),
) -> Run:
    """Run one scenario in one node process; at the i-th pause, call pauses[i] and go on."""
    run = run_scenario(command, relay, keys, steps, pauses)
    # Every event the relay sent passed nostr-tools' verification (else: invalid_event), and
    # verifies again on a fresh copy.
    assert not run.where("invalid_event"), run
    assert all(x["verify"] is True for x in run.where("event")), run
    assert not run.where("notice"), run
    return run
