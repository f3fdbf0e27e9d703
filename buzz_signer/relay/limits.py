"""What a public endpoint bounds, and the sliding windows that enforce the rates: in the
database for what every relay process of it counts together (SharedWindow), in memory for what
one connection counts (SlidingWindow)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Limits:
    """Every bound of one relay process; each is a buzz-relay flag of the same name."""

    # Largest client message read, in bytes; a larger one is answered with NOTICE.
    max_message_bytes: int = 131_072
    # Open subscriptions per connection, and filters per REQ.
    max_subscriptions: int = 50
    max_filters: int = 10
    # Most stored events answered per filter (a smaller `limit` is honoured).
    max_limit: int = 500
    # Concurrent websocket connections from one IP address.
    max_connections_per_ip: int = 64
    # AUTH messages per connection per minute.
    auth_per_minute: int = 10
    # Invites minted per pubkey per hour (SPEC section 7: 10), across every process.
    invites_per_hour: int = 10
    # Failed claims (invalid, expired or used-up codes) per address and per pubkey within
    # FAILED_CLAIM_SECONDS, after which claims are refused unread (SPEC section 7: 20);
    # across every process.
    max_failed_claims: int = 20
    # Joins and join requests that succeed (28934: joined, or a request kept) per address and
    # per pubkey within JOIN_SECONDS, across every process (SPEC section 10: 10 and 3).
    max_joins: int = 10
    max_joins_per_pubkey: int = 3
    # Outgoing messages queued for one connection before it is closed as too slow, and the
    # bytes they and the socket's buffer in this process may hold (SPEC section 10: 4 MiB).
    max_queued_messages: int = 10_000
    max_queued_bytes: int = 4 * 1024 * 1024


DEFAULT_LIMITS = Limits()
# The window of max_failed_claims: a guesser waits this long once over it.
FAILED_CLAIM_SECONDS = 600
# The window of max_joins and max_joins_per_pubkey.
JOIN_SECONDS = 600


class RateStore(Protocol):
    """Where shared windows count: the SQL API's buzz.take_rate and buzz.rate_reached
    (backend.DatabaseBackend)."""

    async def take_rate(
        self, scope: str, keys: Sequence[str], limit: int, seconds: int
    ) -> bool: ...

    async def rate_reached(
        self, scope: str, keys: Sequence[str], limit: int, seconds: int
    ) -> bool: ...


@dataclass(frozen=True)
class SharedWindow:
    """At most `count` events per key within the last `seconds`, counted in the database, so
    that every relay process of one database counts them together (SPEC section 9)."""

    store: RateStore
    scope: str
    count: int
    seconds: int

    async def allow(self, *keys: str) -> bool:
        """Count one event for every key, unless one of them has reached the limit: then
        False, and nothing is counted."""
        return await self.store.take_rate(self.scope, keys, self.count, self.seconds)

    async def reached(self, *keys: str) -> bool:
        """True when one of the keys has reached the limit; counts nothing (to refuse before
        an event that is counted only when it fails)."""
        return await self.store.rate_reached(self.scope, keys, self.count, self.seconds)


class SlidingWindow:
    """At most `count` events within the last `seconds`, in this process's memory: for what
    one connection counts (its AUTH attempts)."""

    __slots__ = ("_clock", "_count", "_hits", "_seconds")

    def __init__(
        self, count: int, seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._count = count
        self._seconds = seconds
        self._clock = clock
        # The times counted, oldest first: at most `count` of them (a list; a deque is 760
        # bytes even when it holds two).
        self._hits: list[float] = []

    def allow(self) -> bool:
        """Count one event if it is within the limit; False (not counted) if not."""
        now = self._clock()
        hits = self._hits
        expired = 0
        while expired < len(hits) and hits[expired] <= now - self._seconds:
            expired += 1
        del hits[:expired]
        if len(hits) >= self._count:
            return False
        hits.append(now)
        return True
