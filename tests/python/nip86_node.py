"""NIP-86 calls made by nostr-tools (tests/node/nip86_client.mjs), for the relay's tests.

One node process serves a test session (``--serve``: a request a line on stdin, its answers as
JSON lines, then ``{"done": true}``): starting node and loading nostr-tools for each call cost
more than most calls. Test modules load the ``nip86_client`` fixture with ``pytest_plugins =
(..., "nip86_node")`` and pass it to ``send`` and ``call``.
"""

from __future__ import annotations

import hashlib
import json
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from node_clients import NODE_DIR, node_with
from relay_fixtures import Person

__all__ = ["Nip86Client", "call", "check_header", "nip86_client", "refused", "rpc", "send"]

SCRIPT = NODE_DIR / "nip86_client.mjs"
RUN_TIMEOUT = 30.0


class Nip86Client:
    """The client script, running: one batch of requests at a time."""

    def __init__(self, node: str) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._proc = subprocess.Popen(
            [node, str(SCRIPT), "--serve"],
            cwd=NODE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        # Read on a thread, so that a script that stops answering fails a test, not hangs it.
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put("")  # the script exited

    def _failure(self, what: str) -> str:
        self._stderr.seek(0)
        return f"{what}; node's stderr:\n{self._stderr.read().decode(errors='replace')}"

    def send(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The answers to `requests` (sent one after another), then the end-of-batch line."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(requests) + "\n")
        self._proc.stdin.flush()
        deadline = time.monotonic() + RUN_TIMEOUT
        answers = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(self._failure("the NIP-86 client did not answer")) from None
            if not line:
                raise AssertionError(self._failure("the NIP-86 client exited"))
            answer = json.loads(line)
            if answer == {"done": True}:
                return answers
            assert "error" not in answer, self._failure(answer["error"])
            answers.append(answer)

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._stderr.close()


@pytest.fixture(scope="session")
def nip86_client() -> Iterator[Nip86Client]:
    """The NIP-86 client, its modules installed if missing."""
    client = Nip86Client(node_with("nostr-tools"))
    yield client
    client.close()


def rpc(relay: Any, who: Person | None, method: str, *params: Any, **spoil: Any) -> dict[str, Any]:
    """One request description for the client (who None: a stranger's key)."""
    return {
        "url": relay.process.http,
        "secret": (who or Person.new()).secret,
        "method": method,
        "params": list(params),
        **spoil,
    }


def send(client: Nip86Client, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the requests one after another; one answer per request (per attempt)."""
    answers = client.send(list(requests))
    assert len(answers) == sum(r.get("repeat", 1) for r in requests), answers
    return answers


# How often each (relay, signer, body) was sent by call(): see there.
_sent: dict[tuple[int, str, str], int] = {}


def call(client: Nip86Client, relay: Any, who: Person | None, method: str, *params: Any) -> Any:
    """The result of one well-made request (it must answer 200 {"result": ...}).

    getToken's created_at has whole seconds, so the same request by the same signer twice in a
    second is the same event, whose second use the relay refuses as a replay. A repeat is
    made a distinct event by dating it a second later for each earlier send (well within the
    60 s the relay allows), as a client whose clock is a little ahead would: the k-th send is
    dated at least a second after every earlier one.
    """
    who = who or Person.new()
    key = (relay.process.port, who.secret, json.dumps([method, params]))
    earlier = _sent.get(key, 0)
    _sent[key] = earlier + 1
    spoil = {"created_at_offset": earlier} if earlier else {}
    (answer,) = send(client, rpc(relay, who, method, *params, **spoil))
    assert answer["status"] == 200, answer
    assert set(answer["body"]) == {"result"}, answer
    check_header(answer, who, relay, method, list(params))
    return answer["body"]["result"]


def check_header(answer: dict[str, Any], who: Person | None, relay: Any, method: str, params):
    """The client sent a NIP-98 event as the contract wants it (so a refusal is the server's)."""
    event = answer["event"]
    body = json.dumps({"method": method, "params": params}, separators=(",", ":"))
    assert event["kind"] == 27235
    if who is not None:
        assert event["pubkey"] == who.pubkey
    tags = {t[0]: t[1] for t in event["tags"]}
    assert tags == {
        "u": relay.process.http,
        "method": "POST",
        "payload": hashlib.sha256(body.encode()).hexdigest(),
    }
    assert abs(event["created_at"] - time.time()) < 20


def refused(answer: dict[str, Any], status: int) -> str:
    """The answer is `status` with a JSON {"error": <message>}; returns the message."""
    assert answer["status"] == status, answer
    assert isinstance(answer["body"], dict) and set(answer["body"]) == {"error"}, answer
    assert isinstance(answer["body"]["error"], str) and answer["body"]["error"], answer
    assert answer["headers"]["content-type"].startswith("application/"), answer
    return answer["body"]["error"]
