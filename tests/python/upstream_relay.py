"""An upstream relay we did not write, for the members-only gate tests: rust-nostr's LocalRelay
(nostr-sdk's ``LocalRelayBuilder``), in a process of its own so that a test can kill it.

As a script: ``python upstream_relay.py PORT`` starts a LocalRelay on 127.0.0.1:PORT, prints
its URL on one line once it listens, and runs until killed. (``LocalRelay.run(builder)``, the
builder as argument, segfaults: the builder is built first, then ``run()`` is awaited.)

As a module: ``UpstreamRelay(port, log)`` starts that script with this interpreter and waits
for the URL; ``kill()`` is a SIGKILL (no shutdown of any kind), ``start()`` runs it again on the
same port. The LocalRelay keeps its events in memory: a restarted one has none.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


class UpstreamRelay:
    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.url = f"ws://127.0.0.1:{port}"
        self._log = log
        self._starts = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def log(self) -> str:
        return self._log.read_text(errors="replace") if self._log.exists() else ""

    def start(self, timeout: float = 20) -> UpstreamRelay:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self._starts += 1
        log = self._log.with_suffix(f".{self._starts}.log")
        self._log = log
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(self.port)],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the LocalRelay exited {self.proc.returncode}:\n{self.log()}")
            if self.url in self.log():
                return self
            time.sleep(0.05)
        raise AssertionError(f"the LocalRelay did not start in {timeout} s:\n{self.log()}")

    def kill(self) -> None:
        """kill -9."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def _main(port: int) -> None:
    import asyncio

    from nostr_sdk import LocalRelayBuilder

    async def serve() -> None:
        relay = LocalRelayBuilder().port(port).build()
        await relay.run()
        print(await relay.url(), flush=True)
        await asyncio.Event().wait()  # until killed

    asyncio.run(serve())


if __name__ == "__main__":
    _main(int(sys.argv[1]))
