"""buzz-relay's Prometheus metrics (GET /metrics), one registry per server."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .protocol import Observer

__all__ = ["CONTENT_TYPE_LATEST", "RelayMetrics"]


class RelayMetrics(Observer):
    """The counters of one server; as an Observer it records what sessions report."""

    def __init__(self, subscriptions: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Gauge(
            "buzz_relay_connections",
            "Open websocket connections.",
            registry=r,
            multiprocess_mode="livesum",  # with --workers: the live workers' sum
        )
        self.subscriptions = Gauge(
            "buzz_relay_subscriptions",
            "Open subscriptions over all connections.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.subscriptions.set_function(subscriptions)
        self.joins_waiting = Gauge(
            "buzz_relay_joins_waiting",
            "Joins waiting to go into the next group written to their community (joins.py).",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.events_pushed = Counter(
            "buzz_relay_events_pushed",
            "EVENT messages sent to subscriptions as their transactions committed.",
            registry=r,
        )
        self.requests = Counter(
            "buzz_relay_requests",
            "Client requests by kind and outcome.",
            ["kind", "outcome"],
            registry=r,
        )
        self.writes = Counter(
            "buzz_relay_writes",
            "Membership writes (join, request_membership, leave, invite) by outcome.",
            ["kind", "outcome"],
            registry=r,
        )
        self.write_seconds = Histogram(
            "buzz_relay_write_seconds",
            "Time of a membership write through the SQL API, COMMIT included.",
            ["kind"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=r,
        )
        self.listener_connected = Gauge(
            "buzz_relay_listener_connected",
            "1 while the LISTEN connection is up (with --workers: every worker's).",
            registry=r,
            multiprocess_mode="livemin",
        )
        self.database_errors = Counter(
            "buzz_relay_database_errors",
            "Requests the database refused for a reason that is neither an outcome of the API"
            " nor the caller's input, by SQLSTATE (each also logged).",
            ["sqlstate"],
            registry=r,
        )
        self.database_down = Gauge(
            "buzz_relay_database_down",
            "1 while the database does not answer (every request then gets 503).",
            registry=r,
            multiprocess_mode="livemax",
        )
        self.key_retired = Gauge(
            "buzz_relay_key_retired",
            "1 while this process's relay key is not the database's (writes are refused).",
            registry=r,
            multiprocess_mode="livemax",
        )
        self.listener_reconnects = Counter(
            "buzz_relay_listener_reconnects",
            "Times the LISTEN connection was made again after a loss.",
            registry=r,
        )

    def database_error(self, sqlstate: str) -> None:
        self.database_errors.labels(sqlstate).inc()

    def request(self, kind: str, outcome: str) -> None:
        self.requests.labels(kind, outcome).inc()

    def write(self, kind: str, outcome: str, seconds: float) -> None:
        self.writes.labels(kind, outcome).inc()
        self.write_seconds.labels(kind).observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
