"""AsyncMembership driven from synchronous tests, so every write-path test runs on both APIs.

`BlockingAsyncMembership` has Membership's interface; each call runs the AsyncMembership call of
the same name to completion on a private event loop, over a real psycopg AsyncConnection. It
adds no logic of its own: what the tests check is what AsyncMembership did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from buzz_signer.keys import RelayKey
from buzz_signer.membership import AsyncMembership


class _Blocking:
    """Every attribute of `target` that returns an awaitable, awaited on `loop`."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if asyncio.iscoroutine(result):
                return self._loop.run_until_complete(result)
            return result

        return call


class BlockingAsyncMembership(_Blocking):
    def __init__(self, conninfo: str, key: RelayKey) -> None:
        loop = asyncio.new_event_loop()
        super().__init__(loop.run_until_complete(AsyncMembership.connect(conninfo, key)), loop)

    @property
    def conn(self) -> Any:
        """The AsyncConnection, its calls awaited too (for plain SQL inside a transaction)."""
        return _Blocking(self._target.conn, self._loop)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        block = self._target.transaction()
        tx = self._loop.run_until_complete(block.__aenter__())
        try:
            yield _Blocking(tx, self._loop)
        except BaseException as exc:
            if not self._loop.run_until_complete(block.__aexit__(type(exc), exc, exc.__traceback__)):
                raise
        else:
            self._loop.run_until_complete(block.__aexit__(None, None, None))

    def close(self) -> None:
        self._loop.run_until_complete(self._target.close())
        self._loop.close()
