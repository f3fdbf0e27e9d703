"""NIP-98 HTTP auth for NIP-86's POSTs: who sent this request, proven by a kind 27235 event.

`authenticated` checks an Authorization header against the request it came with (this relay's
URL, POST, the body's sha256, a fresh created_at) and answers the event. A method that changes
something accepts each event once, in every relay process of the database: the caller records
it with buzz.accept_auth_event until `fresh_until` (management.py). No HTTP server and no
database here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from ..nostr import KIND_HTTP_AUTH, verify_event
from .urls import RelayNames

__all__ = ["AUTH_WINDOW_SECONDS", "USED_ALREADY", "Refused", "authenticated", "fresh_until"]

# NIP-98: an auth event's created_at must be this close to the clock.
AUTH_WINDOW_SECONDS = 60


class Refused(Exception):
    """An answer other than a result: its HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _tag(event: dict[str, Any], name: str) -> str | None:
    values = [t[1] for t in event["tags"] if len(t) >= 2 and t[0] == name]
    return values[0] if len(values) == 1 else None


def _decoded_event(header: str | None) -> dict[str, Any]:
    if not header:
        raise Refused(401, "auth-required: send a NIP-98 Authorization header")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "nostr" or not token:
        raise Refused(401, "invalid: Authorization must be 'Nostr <base64 event>'")
    try:
        event = json.loads(base64.b64decode(token.strip(), validate=True))
    except (binascii.Error, ValueError, RecursionError):
        raise Refused(401, "invalid: the Authorization event is not base64 JSON") from None
    if not verify_event(event):
        raise Refused(401, "invalid: the Authorization event's id or signature does not verify")
    return event


def authenticated(header: str | None, body: bytes, names: RelayNames, now: float) -> dict[str, Any]:
    """The NIP-98 event of an Authorization header that proves its author sent this POST of
    `body`, whether or not it was used before; Refused (401) when it proves nothing.
    `names`: the URLs its `u` may name (urls.py)."""
    event = _decoded_event(header)
    if event["kind"] != KIND_HTTP_AUTH:
        raise Refused(401, f"invalid: the Authorization event must be of kind {KIND_HTTP_AUTH}")
    if not names.name_this_relay(_tag(event, "u")):
        raise Refused(401, "invalid: the Authorization event's u tag is not this relay's URL")
    if _tag(event, "method") != "POST":
        raise Refused(401, "invalid: the Authorization event's method tag must be POST")
    if _tag(event, "payload") != hashlib.sha256(body).hexdigest():
        raise Refused(401, "invalid: the Authorization event's payload is not the body's sha256")
    if abs(event["created_at"] - now) > AUTH_WINDOW_SECONDS:
        raise Refused(
            401, f"invalid: the Authorization event is not within {AUTH_WINDOW_SECONDS} s of now"
        )
    return event


def fresh_until(event: dict[str, Any]) -> int:
    """Until when (Unix time) `event` could be accepted as fresh: how long it is remembered."""
    return event["created_at"] + AUTH_WINDOW_SECONDS + 1


USED_ALREADY = "invalid: that Authorization event was used already"
