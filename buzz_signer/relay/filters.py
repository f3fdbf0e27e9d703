"""NIP-01 filters: parsed once from a REQ, then matched against events.

A filter is parsed into a Filter or refused with a reason (the caller answers `CLOSED`
`invalid: <reason>`). Matching uses only what every membership event has at hand without
parsing its tags again: id, pubkey, kind, created_at, and the single-letter tags that a
filter can name (`#p` of 8000/8001, `#d` of 33534, `#a` and `#k` of the kind 5 deletion of a
33534). Another single-letter tag filter is accepted and matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..nostr import is_lower_hex

__all__ = ["Filter", "InvalidFilter", "WireEvent", "parse_filter"]

_TAG_FILTERS = ("#p", "#d", "#a", "#k")
_KNOWN = frozenset({"ids", "authors", "kinds", "since", "until", "limit", *_TAG_FILTERS})
# Bounds that keep one filter cheap to hold and to match.
MAX_VALUES = 1000
MAX_KIND = 65535
MAX_TIME = 2**53  # beyond any real created_at; what JavaScript clients can express


class InvalidFilter(ValueError):
    """A filter refused; `prefix` and the message make the client's `CLOSED` reason."""

    def __init__(self, message: str, prefix: str = "invalid") -> None:
        super().__init__(message)
        self.prefix = prefix


@dataclass(frozen=True)
class WireEvent:
    """A signed event as the relay sends it: its fields to match, and its JSON text.

    `text` is sent verbatim (built once, whatever the number of subscribers); `tags` holds
    the single-letter tag values filters can name, e.g. {"p": ("<pubkey>",)} for an 8000,
    {"d": ("<role id>",)} for a 33534, {"a": ("33534:<relay>:<role id>",), "k": ("33534",)}
    for a kind 5.
    """

    id: str
    pubkey: str
    kind: int
    created_at: int
    text: str
    tags: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Filter:
    ids: frozenset[str] | None = None
    authors: frozenset[str] | None = None
    kinds: frozenset[int] | None = None
    since: int | None = None
    until: int | None = None
    limit: int | None = None
    tags: tuple[tuple[str, frozenset[str]], ...] = ()

    def matches(self, ev: WireEvent) -> bool:
        if self.kinds is not None and ev.kind not in self.kinds:
            return False
        if self.ids is not None and ev.id not in self.ids:
            return False
        if self.authors is not None and ev.pubkey not in self.authors:
            return False
        if self.since is not None and ev.created_at < self.since:
            return False
        if self.until is not None and ev.created_at > self.until:
            return False
        for letter, wanted in self.tags:
            if wanted.isdisjoint(ev.tags.get(letter, ())):
                return False
        return True

    def wants_kind(self, kind: int) -> bool:
        return self.kinds is None or kind in self.kinds


def _strings(name: str, value: Any, hex_length: int | None) -> frozenset[str]:
    if type(value) is not list or len(value) > MAX_VALUES:
        raise InvalidFilter(f'"{name}" must be a list of at most {MAX_VALUES} strings')
    for item in value:
        if type(item) is not str:
            raise InvalidFilter(f'"{name}" must be a list of strings')
        if hex_length is not None and not is_lower_hex(item, hex_length):
            raise InvalidFilter(f'"{name}" must hold {hex_length} lowercase hex characters each')
        if len(item) > 1024:
            raise InvalidFilter(f'"{name}" holds a value too long to match anything')
    return frozenset(value)


def _integer(name: str, value: Any, lo: int, hi: int) -> int:
    # bool is an int in Python and `true` parses to True: refuse it explicitly.
    if type(value) is not int or not lo <= value <= hi:
        raise InvalidFilter(f'"{name}" must be an integer from {lo} to {hi}')
    return value


def parse_filter(raw: Any) -> Filter:
    """The Filter of a REQ's filter object, or InvalidFilter saying what is wrong."""
    if type(raw) is not dict:
        raise InvalidFilter("a filter must be a JSON object")
    fields: dict[str, Any] = {}
    tags: list[tuple[str, frozenset[str]]] = []
    for name, value in raw.items():
        if name == "ids":
            fields["ids"] = _strings(name, value, 64)
        elif name == "authors":
            fields["authors"] = _strings(name, value, 64)
        elif name == "kinds":
            if type(value) is not list or len(value) > MAX_VALUES:
                raise InvalidFilter(f'"kinds" must be a list of at most {MAX_VALUES} integers')
            fields["kinds"] = frozenset(_integer("kinds", k, 0, MAX_KIND) for k in value)
        elif name in ("since", "until"):
            fields[name] = _integer(name, value, 0, MAX_TIME)
        elif name == "limit":
            fields["limit"] = _integer(name, value, 0, MAX_TIME)
        elif name in _TAG_FILTERS:
            tags.append((name[1], _strings(name, value, None)))
        elif len(name) == 2 and name[0] == "#" and name[1].isalpha():
            # Another single-letter tag: no membership event carries it, so nothing matches.
            _strings(name, value, None)
            tags.append((name[1], frozenset()))
        elif name not in _KNOWN:
            # e.g. NIP-50's "search": ignoring it would answer events it does not select.
            raise InvalidFilter(f'filter field "{name[:32]}" is not supported', "unsupported")
    return Filter(tags=tuple(tags), **fields)
