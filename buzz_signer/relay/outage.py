"""Whether the database answers (SPEC section 10, "Failures an operator sees").

A request that finds the database unreachable (its connection broken, none to be had from
the pool in time) reports it here (`suspect`). One probe then connects on its own; if that
fails too, the outage has begun: one line in the log, and from then on every request is
answered 503 with Retry-After at once (server.py) instead of waiting on the pool. The probe
tries again every PROBE_SECONDS; when it connects, the pool is opened afresh (psycopg_pool's
own reconnection backs off exponentially, so after half a minute down it could wait as long
again before it tried), and one line says how long the outage lasted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import psycopg
from psycopg_pool import PoolTimeout

from ..errors import BuzzError, DatabaseUnreachable

log = logging.getLogger("buzz_relay")

PROBE_SECONDS = 0.5
# A probe that has not connected in this long has failed (a database that hangs, not refuses).
PROBE_TIMEOUT_SECONDS = 2.0
# SQLSTATEs of a server going away: shutdown, crash, not yet accepting connections.
_GOING_AWAY = frozenset(("57P01", "57P02", "57P03"))


def unreachable(exc: BaseException) -> bool:
    """Whether `exc` says the database could not be reached (not that it refused a request):
    no connection from the pool in time, or a connection that failed or broke."""
    if isinstance(exc, PoolTimeout | DatabaseUnreachable):
        return True
    cause = exc.__cause__ if isinstance(exc, BuzzError) else exc
    if not isinstance(cause, psycopg.OperationalError):
        return False
    code = cause.sqlstate
    return code is None or code.startswith("08") or code in _GOING_AWAY


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Outage:
    """The database's state as this process sees it: `down` from the first failed probe to
    the first that connects."""

    def __init__(self, conninfo: str, reopen: Callable[[], Awaitable[None]]) -> None:
        self._conninfo = conninfo
        self._reopen = reopen  # a fresh pool, once the database answers again
        self.since: float | None = None  # time.monotonic() when the outage began
        self._probe: asyncio.Task[None] | None = None

    @property
    def down(self) -> bool:
        return self.since is not None

    def suspect(self, exc: BaseException) -> None:
        """A request could not reach the database: make sure, and follow it (one probe)."""
        if self._probe is None:
            self._probe = asyncio.create_task(self._watch(_reason(exc)), name="buzz-relay probe")

    async def _watch(self, reason: str) -> None:
        try:
            if await self._answers():
                return  # one connection broke; the pool replaces it
            self.since = time.monotonic()
            log.error("the database does not answer (%s); answering 503 until it does", reason)
            while True:
                await asyncio.sleep(PROBE_SECONDS)
                if await self._answers():
                    try:
                        await self._reopen()
                    except (PoolTimeout, psycopg.Error, OSError):
                        continue  # it went away again
                    break
            log.warning("the database answers again, after %.1f s", time.monotonic() - self.since)
            self.since = None
        finally:
            self._probe = None

    async def _answers(self) -> bool:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
                conn = await psycopg.AsyncConnection.connect(
                    self._conninfo,
                    autocommit=True,
                    application_name="buzz-relay probe",
                    connect_timeout=max(1, int(PROBE_TIMEOUT_SECONDS)),
                )
                async with conn:
                    await conn.execute("SELECT 1")
            return True
        except (TimeoutError, psycopg.Error, OSError):
            return False

    async def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
