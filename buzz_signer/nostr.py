"""NIP-01 event bytes, ids and BIP-340 signature checks.

The serialization here is the one the database builds with `to_json(text)` and
`string_agg`: no whitespace, strings escaped like JavaScript's `JSON.stringify`, which is
what `json.dumps(..., ensure_ascii=False)` produces. The defaults of `json.dumps` (spaces,
`\\uXXXX` for non-ASCII) would give different bytes and so a different id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from coincurve import PublicKeyXOnly

__all__ = [
    "EVENT_FIELDS",
    "KIND_ADD_USER",
    "KIND_AUTH",
    "KIND_DELETION",
    "KIND_HTTP_AUTH",
    "KIND_INVITE",
    "KIND_JOIN_REQUEST",
    "KIND_LEAVE_REQUEST",
    "KIND_MEMBERSHIP_LIST",
    "KIND_PROFILE",
    "KIND_REMOVE_USER",
    "KIND_ROLE",
    "compute_id",
    "event_id",
    "is_lower_hex",
    "is_well_formed",
    "parse_pubkey",
    "serialize_event",
    "verify_event",
    "verify_signature",
    "verify_signature_by",
]

KIND_MEMBERSHIP_LIST = 13534
KIND_ADD_USER = 8000
KIND_REMOVE_USER = 8001
# NIP-43 over the wire (SPEC section 7), NIP-42, and the kinds only the relay publishes.
KIND_JOIN_REQUEST = 28934
KIND_INVITE = 28935
KIND_LEAVE_REQUEST = 28936
KIND_AUTH = 22242
KIND_ROLE = 33534
KIND_DELETION = 5
KIND_HTTP_AUTH = 27235  # NIP-98
KIND_PROFILE = 0  # NIP-01 user metadata: a member's own, kept by the relay (SPEC section 8)

_SEPARATORS = (",", ":")


def serialize_event(
    pubkey: str, created_at: int, kind: int, tags: list[list[str]], content: str
) -> str:
    """Return the NIP-01 array `[0,pubkey,created_at,kind,tags,content]` whose sha256 is the id."""
    return json.dumps(
        [0, pubkey, created_at, kind, tags, content], separators=_SEPARATORS, ensure_ascii=False
    )


def event_id(serialized: str) -> str:
    """Return the id (lowercase sha256 hex) of a serialized event."""
    return hashlib.sha256(serialized.encode("utf-8")).hexdigest()


def compute_id(event: dict[str, Any]) -> str:
    """Recompute an event's id from its fields (ignores any `id` it carries)."""
    return event_id(
        serialize_event(
            event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"]
        )
    )


def is_lower_hex(value: object, length: int) -> bool:
    """True if `value` is a str of exactly `length` lowercase hex digits."""
    if type(value) is not str or len(value) != length or length % 2:
        return False
    # fromhex alone would accept uppercase and skip spaces; the round trip rejects both,
    # and is cheaper than a regex (this runs once per member of a 10,000-member list).
    try:
        return bytes.fromhex(value).hex() == value
    except ValueError:
        return False


def parse_pubkey(pubkey: str) -> PublicKeyXOnly:
    """Parse an x-only pubkey (64 lowercase hex); ValueError if it is not one on the curve.

    For a caller that verifies many signatures by one key (see `verify_signature_by`).
    """
    if not is_lower_hex(pubkey, 64):
        raise ValueError("a pubkey must be 64 lowercase hexadecimal characters")
    return PublicKeyXOnly(bytes.fromhex(pubkey))


def verify_signature_by(key: PublicKeyXOnly, sig: str, id_hex: str) -> bool:
    """`verify_signature` with the pubkey already parsed by `parse_pubkey`."""
    if not (is_lower_hex(sig, 128) and is_lower_hex(id_hex, 64)):
        return False
    return key.verify(bytes.fromhex(sig), bytes.fromhex(id_hex))


def verify_signature(pubkey: str, sig: str, id_hex: str) -> bool:
    """Check a BIP-340 signature (128 hex) over a 32-byte id (64 hex) by an x-only pubkey."""
    try:
        key = parse_pubkey(pubkey)
    except ValueError:  # not lowercase hex, or not an x coordinate on the curve
        return False
    return verify_signature_by(key, sig, id_hex)


def _is_int(value: object, lo: int, hi: int) -> bool:
    # bool is a subclass of int and json gives True for `true`: exclude it explicitly.
    return type(value) is int and lo <= value <= hi


EVENT_FIELDS = ("id", "pubkey", "created_at", "kind", "tags", "content", "sig")


def is_well_formed(event: object) -> bool:
    """True if each of NIP-01's fields is there with its type: lower-case hex of its length,
    an integer (not `"7"`, `7.0` or `true`) in range, a string, a list of lists of strings."""
    if not isinstance(event, dict) or not all(name in event for name in EVENT_FIELDS):
        return False
    tags = event["tags"]
    return (
        is_lower_hex(event["pubkey"], 64)
        and is_lower_hex(event["id"], 64)
        and is_lower_hex(event["sig"], 128)
        and _is_int(event["created_at"], 0, 2**63 - 1)
        and _is_int(event["kind"], 0, 65535)
        and type(event["content"]) is str
        and type(tags) is list
        and all(type(tag) is list and all(type(item) is str for item in tag) for tag in tags)
    )


def verify_event(event: dict[str, Any]) -> bool:
    """True if the event's id matches its fields and its sig is valid for its pubkey.

    Never raises: any missing or malformed field gives False.
    """
    try:
        if not is_well_formed(event):
            return False
        pubkey, claimed_id = event["pubkey"], event["id"]
        serialized = serialize_event(
            pubkey, event["created_at"], event["kind"], event["tags"], event["content"]
        )
        if event_id(serialized) != claimed_id:
            return False
        return verify_signature(pubkey, event["sig"], claimed_id)
    except (KeyError, TypeError, ValueError):
        # ValueError includes UnicodeEncodeError (a lone surrogate cannot be UTF-8).
        return False
