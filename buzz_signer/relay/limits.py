"""What a public endpoint bounds, and the sliding-window counter that enforces the rates."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass


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
    # Invites minted per pubkey per hour (SPEC section 7: 10).
    invites_per_hour: int = 10
    # Failed claims (invalid, expired or used-up codes) per address and per pubkey within
    # FAILED_CLAIM_SECONDS, after which claims are refused unread (SPEC section 7: 20).
    max_failed_claims: int = 20
    # Outgoing messages queued for one connection before it is closed as too slow.
    max_queued_messages: int = 10_000


DEFAULT_LIMITS = Limits()
# The window of max_failed_claims: a guesser waits this long once over it.
FAILED_CLAIM_SECONDS = 600


class SlidingWindow:
    """At most `count` events per key within the last `seconds`; memory bounded by use."""

    def __init__(
        self, count: int, seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._count = count
        self._seconds = seconds
        self._clock = clock
        self._hits: dict[Hashable, deque[float]] = {}

    def allow(self, key: Hashable) -> bool:
        """Count one event for `key` if it is within the limit; False (not counted) if not."""
        now = self._clock()
        hits = self._hits.setdefault(key, deque())
        self._expire(hits, now)
        if len(hits) >= self._count:
            return False
        hits.append(now)
        if len(self._hits) > 4 * 1024:
            self._prune(now)
        return True

    def full(self, key: Hashable) -> bool:
        """True when `key` has reached the limit within the window; counts nothing (to
        refuse before an event that is counted only when it fails)."""
        hits = self._hits.get(key)
        if not hits:
            return False
        self._expire(hits, self._clock())
        return len(hits) >= self._count

    def _expire(self, hits: deque[float], now: float) -> None:
        while hits and hits[0] <= now - self._seconds:
            hits.popleft()

    def _prune(self, now: float) -> None:
        cutoff = now - self._seconds
        for key in [k for k, h in self._hits.items() if not h or h[-1] <= cutoff]:
            del self._hits[key]
