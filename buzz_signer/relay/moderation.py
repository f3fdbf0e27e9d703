"""Moderation behind the gate (SPEC §7, NIP-86): what each relay process enforces, from memory.

A community's rules live in the database (buzz.ban_event, allow_kind, disallow_kind,
clear_kind_rule, block_ip, and their reads). Each process keeps a copy of every community's
(`Moderation`), read in one statement (`buzz.moderation_rules`):

- all of them at start, before the first request is served, and again each time the hub's
  LISTEN connection (re)connects: a change that committed while it was down is not missed;
- one community's again whenever a change of its rules commits: the writes NOTIFY
  buzz_moderation with the community's id, and the hub hands the payload over (`changed`).

Reloads run one at a time, in a task of their own, so a burst of changes costs a read per
community, not per change; a read that fails is tried again shortly (and the copy kept till
then). The checks themselves (`Rules`) cost a set look-up per event or connection.

The address a block is checked against is the client's (`client_address`): the peer's, or,
when the peer is a trusted proxy (`--trusted-proxy`), the rightmost X-Forwarded-For entry
that is not one; an IPv4-mapped IPv6 address counts as its IPv4 address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "EMPTY",
    "IPAddress",
    "IPNetwork",
    "Moderation",
    "Rules",
    "client_address",
    "parse_address",
    "parse_network",
]

log = logging.getLogger("buzz_relay.moderation")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
CHANNEL = "buzz_moderation"
RETRY_FIRST, RETRY_MAX = 0.1, 2.0


def _unmapped(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address (::ffff:192.0.2.1) as the IPv4 address it maps."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_address(text: str | None) -> IPAddress | None:
    """A peer's or an X-Forwarded-For entry's address, or None when it is not one. Entries
    some proxies write with a port (192.0.2.1:4711, [2001:db8::1]:4711) are read too."""
    if not text:
        return None
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return _unmapped(ipaddress.ip_address(text))
    except ValueError:
        return None


def parse_network(text: str) -> IPNetwork:
    """An address or a network in CIDR notation, IPv4 or IPv6, as a network (an address is
    its /32 or /128), an IPv4-mapped IPv6 one as IPv4. ValueError for anything else, and for
    a network with bits set beyond its mask (10.0.0.1/8)."""
    network = ipaddress.ip_network(text.strip(), strict=True)
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96:
        mapped = network.network_address.ipv4_mapped
        if mapped is not None:
            return ipaddress.ip_network(f"{mapped}/{network.prefixlen - 96}")
    return network


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[IPNetwork]
) -> IPAddress | None:
    """The client's address: the peer's, unless the peer is a trusted proxy; then, walking the
    X-Forwarded-For entries from the right (each appended by the proxy that received the
    request), the first that is not a trusted proxy (or the leftmost, when all are). The
    entries left of it are the client's to write and never read. An entry that is no address
    ends the walk at the proxy that wrote it. `forwarded_for`: the header's values, in order.
    """
    address = parse_address(peer)
    if address is None or not trusted:
        return address
    entries = [e for value in forwarded_for for e in value.split(",") if e.strip()]
    while entries and any(address in network for network in trusted):
        entry = parse_address(entries.pop())
        if entry is None:
            break
        address = entry
    return address


@dataclass(frozen=True)
class Rules:
    """One community's rules, as the gate and the server check them."""

    banned_events: frozenset[str] = frozenset()
    allowed_kinds: frozenset[int] = frozenset()
    disallowed_kinds: frozenset[int] = frozenset()
    # Blocked single addresses (a set look-up) and wider networks (a scan; at most 1,000).
    blocked_addresses: frozenset[IPAddress] = frozenset()
    blocked_networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str]]) -> Rules:
        """From buzz.moderation_rules' (rule, subject) rows."""
        banned: set[str] = set()
        kinds: dict[bool, set[int]] = {True: set(), False: set()}
        addresses: set[IPAddress] = set()
        networks: list[IPNetwork] = []
        for rule, subject in rows:
            if rule == "banned_event":
                banned.add(subject)
            elif rule in ("allowed_kind", "disallowed_kind"):
                kinds[rule == "allowed_kind"].add(int(subject))
            elif rule == "blocked_ip":
                network = ipaddress.ip_network(subject)
                if network.num_addresses == 1:
                    addresses.add(network.network_address)
                else:
                    networks.append(network)
            else:
                log.warning("ignoring a moderation rule of an unknown sort")
        return cls(
            frozenset(banned),
            frozenset(kinds[True]),
            frozenset(kinds[False]),
            frozenset(addresses),
            tuple(networks),
        )

    def kind_refused(self, kind: int) -> str | None:
        """Why an event of this kind may not go upstream (a NIP-01 `blocked:` reason), or
        None when it may."""
        if kind in self.disallowed_kinds:
            return f"blocked: kind {kind} is not allowed here"
        if self.allowed_kinds and kind not in self.allowed_kinds:
            return f"blocked: kind {kind} is not among the kinds allowed here"
        return None

    def blocks(self, address: IPAddress | None) -> bool:
        if address is None:
            return False
        return address in self.blocked_addresses or any(
            address in network for network in self.blocked_networks
        )


EMPTY = Rules()


class RulesSource(Protocol):
    """Where the rules are read: backend.DatabaseBackend.moderation_rules."""

    async def moderation_rules(
        self, community: uuid.UUID | None
    ) -> list[tuple[uuid.UUID, str, str]]: ...


@dataclass
class Moderation:
    """Every community's rules, in memory, kept current (see the module docstring)."""

    source: RulesSource
    # Told after each (re)load: the server closes the websockets of addresses now blocked.
    on_reload: Callable[[], None] = lambda: None
    _rules: dict[uuid.UUID, Rules] = field(default_factory=dict)
    # What the reload task still has to read: every community, and/or these.
    _all_pending: bool = False
    _pending: set[uuid.UUID] = field(default_factory=set)
    _task: asyncio.Task[None] | None = None

    def rules(self, community: uuid.UUID) -> Rules:
        return self._rules.get(community, EMPTY)

    async def load_all(self) -> None:
        """Every community's rules, in one statement; those without any have none."""
        by_community: dict[uuid.UUID, list[tuple[str, str]]] = {}
        for community, rule, subject in await self.source.moderation_rules(None):
            by_community.setdefault(community, []).append((rule, subject))
        self._rules = {c: Rules.of(rows) for c, rows in by_community.items()}
        self.on_reload()

    async def load(self, community: uuid.UUID) -> None:
        rows = await self.source.moderation_rules(community)
        rules = Rules.of((rule, subject) for _, rule, subject in rows)
        if rules == EMPTY:
            self._rules.pop(community, None)
        else:
            self._rules[community] = rules
        self.on_reload()

    # Asked by the hub; the reads happen in the reload task ----------------------------

    def changed(self, payload: str) -> None:
        """A NOTIFY buzz_moderation: the community it names has new rules."""
        try:
            community = uuid.UUID(payload)
        except ValueError:
            log.warning("ignoring a malformed moderation notification")
            return
        self._pending.add(community)
        self._kick()

    def reconnected(self) -> None:
        """The LISTEN connection is (again) up: what changed meanwhile was not announced here."""
        self._all_pending = True
        self._kick()

    def _kick(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._reload(), name="buzz-relay moderation")

    async def _reload(self) -> None:
        delay = RETRY_FIRST
        while self._all_pending or self._pending:
            try:
                if self._all_pending:
                    # Taken off before the read: a change announced during it is read again.
                    self._all_pending = False
                    self._pending.clear()
                    try:
                        await self.load_all()
                    except BaseException:
                        self._all_pending = True
                        raise
                else:
                    community = self._pending.pop()
                    try:
                        await self.load(community)
                    except BaseException:
                        self._pending.add(community)
                        raise
                delay = RETRY_FIRST
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not read the moderation rules; trying again in %.1f s", delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
