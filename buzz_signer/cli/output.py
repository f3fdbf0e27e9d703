"""How buzz-admin prints: npubs, times, lists, tables, JSON, a progress bar."""

from __future__ import annotations

import datetime as dt
import json
import sys
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import click

from ..nip19 import encode_npub

T = TypeVar("T")

def npub(pubkey: str) -> str:
    try:
        return encode_npub(pubkey)
    except ValueError:
        return pubkey


def is_pubkey(text: str) -> bool:
    """64 lowercase hex characters: a pubkey as the database stores it."""
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def actor(label: str | None, *, as_hex: bool = False) -> str:
    """Who did something (an added_by, created_by, banned_by): a pubkey as its npub (or hex),
    a label such as 'buzz-admin' or 'invite' as it is."""
    if label is None:
        return "-"
    return npub(label) if is_pubkey(label) and not as_hex else label


def when(created_at: int | None) -> str:
    if created_at is None:
        return "-"
    return dt.datetime.fromtimestamp(created_at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso(ts: dt.datetime | None) -> str | None:
    if ts is None:
        return None
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def member_count(event: dict[str, Any]) -> int:
    return sum(1 for t in event.get("tags", ()) if t and t[0] == "member")


def list_line(event: dict[str, Any]) -> str:
    n = member_count(event)
    return (
        f"list {event['id']} published (created_at {when(event['created_at'])}, "
        f"{n} member{'s' if n != 1 else ''})"
    )


def _default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return iso(value)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(obj: Any, *, indent: int | None = None) -> str:
    return json.dumps(obj, default=_default, ensure_ascii=False, indent=indent)


def echo_json(obj: Any) -> None:
    click.echo(dumps(obj))


def table(rows: list[list[str]], headers: list[str]) -> Iterator[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=False)]
    for row in [headers, *rows]:
        yield "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()


def progress(items: Iterable[T], length: int, label: str) -> Any:
    """A progress bar on stderr when stderr is a terminal; else the items as they are."""
    if sys.stderr.isatty():
        return click.progressbar(items, length=length, label=label, file=sys.stderr)
    return _NoBar(items)


class _NoBar:
    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items

    def __enter__(self) -> Iterable[Any]:
        return self._items

    def __exit__(self, *exc: object) -> None:
        return None
