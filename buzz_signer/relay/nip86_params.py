"""The params of each NIP-86 method, checked and read into what the SQL API takes; a wrong
one is `Refused(400, "invalid params: ...")`, in our words, never the database's."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..membership import InviteRecord, JoinRequest
from ..nip19 import encode_npub
from ..nostr import is_lower_hex
from .moderation import parse_network
from .nip98 import Refused

# NIP-01 kinds.
KINDS = (0, 65535)
# create_relay_invite's bounds: uses 1 .. 10,000 (or unlimited), ttl 60 s .. 30 days, and a
# chosen code 8 to 128 characters of [A-Za-z0-9_-].
MAX_INVITE_USES = 10_000
TTL_SECONDS = (60, 30 * 24 * 3600)
CLAIM = re.compile(r"[A-Za-z0-9_-]{8,128}")
# The base roles an invite quota is set for (the owner has none).
QUOTA_ROLES = ("admin", "member")



def arity(params: list[Any], least: int, most: int, shape: str) -> None:
    if not least <= len(params) <= most:
        raise Refused(400, f"invalid params: {shape}")


def reason(params: list[Any], shape: str) -> str | None:
    """The optional second param, a free text; "" says nothing."""
    arity(params, 1, 2, shape)
    given = params[1] if len(params) == 2 else None
    if given is not None and not isinstance(given, str):
        raise Refused(400, f"invalid params: {shape}, the reason a string or null")
    return given or None


def pubkey(params: list[Any]) -> str:
    if not params or not isinstance(params[0], str) or not is_lower_hex(params[0].lower(), 64):
        raise Refused(400, "invalid params: the first must be a pubkey (64 hex characters)")
    return params[0].lower()


def pubkey_and_reason(params: list[Any]) -> tuple[str, str | None]:
    """[pubkey, reason?]."""
    return pubkey(params), reason(params, "[pubkey, reason]")


def event_id_and_reason(params: list[Any]) -> tuple[str, str | None]:
    """[event id, reason?]."""
    if not params or not isinstance(params[0], str) or not is_lower_hex(params[0].lower(), 64):
        raise Refused(400, "invalid params: the first must be an event id (64 hex characters)")
    return params[0].lower(), reason(params, "[event id, reason]")


def kind(params: list[Any]) -> int:
    """[kind]: an integer 0 to 65535 (NIP-01's kinds)."""
    if len(params) != 1 or not (type(params[0]) is int and KINDS[0] <= params[0] <= KINDS[1]):
        raise Refused(400, "invalid params: [kind], the kind an integer from 0 to 65535")
    return params[0]


def network_and_reason(params: list[Any]) -> tuple[str, str | None]:
    """[ip, reason?]: an IPv4 or IPv6 address, or a network in CIDR notation, as the
    network's text (an IPv4-mapped IPv6 one as IPv4)."""
    try:
        network = parse_network(params[0]) if params and isinstance(params[0], str) else None
    except ValueError:
        network = None
    if network is None:
        raise Refused(
            400,
            "invalid params: [ip, reason], the ip an IPv4 or IPv6 address, or a network in CIDR"
            " notation with no bit set beyond its mask (10.0.0.0/8)",
        )
    return str(network), reason(params, "[ip, reason]")


def address_text(network: Any) -> str:
    """A blocked network as listblockedips says it: a single address without its /32 or /128."""
    return str(network.network_address) if network.num_addresses == 1 else str(network)


def member_and_method(params: list[Any]) -> tuple[str, str]:
    """[pubkey, method]."""
    shape = "invalid params: [pubkey (64 hex characters), method (a NIP-86 method's name)]"
    if len(params) != 2 or not isinstance(params[1], str) or not params[1]:
        raise Refused(400, shape)
    return pubkey(params), params[1]


def claim(params: list[Any], shape: str) -> str:
    """A claim (never echoed: it is a secret)."""
    if not params or not isinstance(params[0], str) or not CLAIM.fullmatch(params[0]):
        raise Refused(
            400,
            f"invalid params: {shape}, the claim 8 to 128 characters of A-Z, a-z, 0-9, _ and -",
        )
    return params[0]


def bounded(value: Any, default: int, bounds: tuple[int, int], what: str) -> int:
    """An integer param within `bounds`; null or left out: `default`."""
    if value is None:
        return default
    if not (type(value) is int and bounds[0] <= value <= bounds[1]):
        raise Refused(400, f"invalid params: {what} is {bounds[0]} to {bounds[1]}, or null")
    return value


def unix(moment: Any) -> int:
    return int(moment.timestamp())


def is_live(invite: InviteRecord, now: dt.datetime) -> bool:
    """Not expired, not used up: its code still claims."""
    return invite.expires_at > now and (
        invite.max_uses is None or invite.use_count < invite.max_uses
    )


# PostgreSQL's integer: define_role's color and order (a larger number would not reach it).
INT4 = (-(2**31), 2**31 - 1)
# The SQL API's messages name its parameters; a NIP-86 caller knows them by these names.
_PARAMETER_NAMES = {
    "p_role": "the role id",
    "p_label": "the label",
    "p_description": "the description",
    "p_color": "the color",
    "p_pubkey": "the pubkey",
    "p_reason": "the reason",
    "p_policy": "the policy",
    "p_request_id": "the event id",
    "p_code": "the claim",
    "p_event_id": "the event id",
    "p_method": "the method",
    "p_kind": "the kind",
    "p_address": "the ip",
    "this function": "this method",
}


def in_our_words(message: str) -> str:
    for name, words in _PARAMETER_NAMES.items():
        message = message.replace(name, words)
    return message


def text(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or "\x00" in value:
        expected = "a string or null" if optional else "a string"
        raise Refused(400, f"invalid params: {what} must be {expected} (without NUL characters)")
    return value


def integer(value: Any, what: str) -> int | None:
    if value is not None and not (type(value) is int and INT4[0] <= value <= INT4[1]):
        raise Refused(400, f"invalid params: {what} must be an integer or null")
    return value


def role_definition(params: list[Any]) -> tuple[str, str, str | None, int | None, int | None]:
    """[id, label, description?, color?, order?]: the optional ones null or left out."""
    arity(params, 2, 5, "[role id, label, description, color, order]")
    role, label, description, color, order = [*params, None, None, None][:5]
    return (
        text(role, "the role id"),
        text(label, "the label"),
        text(description, "the description", optional=True),
        integer(color, "the color (a hue, 0 to 360)"),
        integer(order, "the order"),
    )


def member_and_role(params: list[Any]) -> tuple[str, str]:
    """[pubkey, role id]."""
    if (
        len(params) != 2
        or not isinstance(params[0], str)
        or not is_lower_hex(params[0].lower(), 64)
    ):
        raise Refused(400, "invalid params: [pubkey (64 hex characters), role id]")
    return params[0].lower(), text(params[1], "the role id")


def role_listing(event: dict[str, Any]) -> dict[str, Any]:
    """A 33534 as listroles answers it: its tags by name, color and order as numbers."""
    tags = {t[0]: t[1] for t in event["tags"] if len(t) >= 2}
    color, order = tags.get("color"), tags.get("order")
    return {
        "id": tags.get("d"),
        "label": tags.get("label"),
        "description": tags.get("description"),
        "color": None if color is None else int(color),
        "order": None if order is None else int(order),
    }


def request_reason(request: JoinRequest) -> str:
    """What listeventsneedingmoderation says of a join request: who asks, and their note."""
    who = f"join request from {encode_npub(request.pubkey)}"
    return f"{who}: {request.note}" if request.note else who



