"""NIP-86 relay management for one community: a POST in, a JSON-RPC answer out.

`Management` knows no HTTP server and no driver, like RelaySession: it is given the request's
Authorization header, its body and the hosts the request may name, and returns the HTTP status
and the JSON object to answer. Who may call it is NIP-98's business (`authorize`): a kind 27235
event, signed by the community's owner or an admin, naming this relay, POST and the body's
sha256, fresh, and never seen before. Every method is one call of the SQL API (SPEC §7):

    supportedmethods                         -> [method names]
    allowpubkey [pubkey, reason?]            -> true   (becomes a member)
    disallowpubkey [pubkey, reason?]         -> true   (stops being one; the owner: error)
    listallowedpubkeys                       -> [{"pubkey", "reason": role}]
    createclaim [max uses or null, ttl s]    -> {"id", "claim", "expires_at"}
    listclaims                               -> [{"id", "created_by", "created_at", ...}]
    deleteclaim [invite id]                  -> true, or false when there is no such invite
    createrole [id, label, description?, color?, order?]
                                             -> true (defined; a role already defined: error)
    editrole [id, label, description?, color?, order?]
                                             -> true (redefined; a role never defined: error)
    deleterole [id]                          -> true, or false when there is no such role
    assignrole [pubkey, role id]             -> true (holds it now; a non-member: error)
    unassignrole [pubkey, role id]           -> true (does not hold it now)
    listroles                                -> [{"id", "label", "description", "color",
                                                  "order"}] by id

Statuses: 200 with {"result": ...}; {"error": ...} with 401 (authentication), 403 (not the
owner or an admin), 400 (the request or its params, or the community's state: archived),
500 (the database failed).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..errors import BuzzError, CommunityArchived, InvalidArgument
from ..membership import InviteRecord, Member
from ..nostr import KIND_HTTP_AUTH, is_lower_hex, verify_event
from .protocol import Community, normalize_host

__all__ = ["CONTENT_TYPE", "Management", "ManagementBackend", "ReplayGuard"]

CONTENT_TYPE = "application/nostr+json+rpc"
# NIP-98: an auth event's created_at must be this close to the clock.
AUTH_WINDOW_SECONDS = 60
MANAGERS = frozenset(("owner", "admin"))
MAX_INVITE_USES = 10_000
TTL_SECONDS = (60, 30 * 24 * 3600)  # create_relay_invite's bounds: 60 s .. 30 days


class ManagementBackend(Protocol):
    """The SQL API as management uses it; backend.DatabaseBackend is the real one."""

    async def role_of(self, community: uuid.UUID, pubkey: str) -> str | None: ...

    async def allow(self, community: uuid.UUID, pubkey: str, by: str) -> str: ...

    async def leave(self, community: uuid.UUID, pubkey: str) -> str: ...

    async def members(self, community: uuid.UUID) -> list[Member]: ...

    async def invites(self, community: uuid.UUID) -> list[InviteRecord]: ...

    async def create_invite(
        self, community: uuid.UUID, requester: str, max_uses: int | None, ttl_seconds: int
    ) -> tuple[uuid.UUID, str, int]: ...

    async def revoke_invite(self, community: uuid.UUID, invite_id: uuid.UUID) -> str: ...

    async def define_role(
        self,
        community: uuid.UUID,
        role: str,
        label: str,
        description: str | None,
        color: int | None,
        order: int | None,
        *,
        exists: bool | None = None,
    ) -> str: ...

    async def delete_role(self, community: uuid.UUID, role: str) -> str: ...

    async def assign_role(self, community: uuid.UUID, pubkey: str, role: str) -> str: ...

    async def unassign_role(self, community: uuid.UUID, pubkey: str, role: str) -> str: ...

    async def role_definitions(self, community: uuid.UUID) -> list[dict[str, Any]]: ...


class Refused(Exception):
    """An answer other than a result: its HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ReplayGuard:
    """The NIP-98 events accepted lately, each kept until it could no longer be fresh.

    One per process: a relay run as several processes behind one address would accept an
    event once per process (docs/relay.md).
    """

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def first_use(self, event_id: str, created_at: int, now: float) -> bool:
        """Record `event_id`; False if it was accepted before (a replay)."""
        if len(self._until) > 1000:
            self._until = {k: t for k, t in self._until.items() if t > now}
        if event_id in self._until:
            return False
        self._until[event_id] = created_at + AUTH_WINDOW_SECONDS + 1
        return True


def _tag(event: dict[str, Any], name: str) -> str | None:
    values = [t[1] for t in event["tags"] if len(t) >= 2 and t[0] == name]
    return values[0] if len(values) == 1 else None


def _names_this_relay(url: str | None, hosts: set[str]) -> bool:
    """Is `url` this relay's URL: http(s) or ws(s), one of `hosts`, at most a trailing `/`?"""
    if not url:
        return False
    parts = urlsplit(url)
    return (
        parts.scheme.lower() in ("http", "https", "ws", "wss")
        and "@" not in parts.netloc
        and parts.path in ("", "/")
        and not parts.query
        and not parts.fragment
        and not url.endswith(("?", "#"))
        and normalize_host(url) in hosts
    )


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


def authorize(
    header: str | None, body: bytes, hosts: Iterable[str], replay: ReplayGuard, now: float
) -> str:
    """The pubkey a NIP-98 Authorization header proves for this POST of `body`; Refused
    (401) when it proves nothing. `hosts`: the hosts its `u` may name."""
    event = _decoded_event(header)
    if event["kind"] != KIND_HTTP_AUTH:
        raise Refused(401, f"invalid: the Authorization event must be of kind {KIND_HTTP_AUTH}")
    if not _names_this_relay(_tag(event, "u"), set(hosts)):
        raise Refused(401, "invalid: the Authorization event's u tag is not this relay's URL")
    if _tag(event, "method") != "POST":
        raise Refused(401, "invalid: the Authorization event's method tag must be POST")
    if _tag(event, "payload") != hashlib.sha256(body).hexdigest():
        raise Refused(401, "invalid: the Authorization event's payload is not the body's sha256")
    if abs(event["created_at"] - now) > AUTH_WINDOW_SECONDS:
        raise Refused(
            401, f"invalid: the Authorization event is not within {AUTH_WINDOW_SECONDS} s of now"
        )
    if not replay.first_use(event["id"], event["created_at"], now):
        raise Refused(401, "invalid: that Authorization event was used already")
    return event["pubkey"]


def _pubkey(params: list[Any]) -> str:
    if not params or not isinstance(params[0], str) or not is_lower_hex(params[0].lower(), 64):
        raise Refused(400, "invalid params: the first must be a pubkey (64 hex characters)")
    if len(params) > 2 or (len(params) == 2 and not isinstance(params[1], str | None)):
        raise Refused(400, "invalid params: [pubkey, reason]")
    return params[0].lower()


def _unix(moment: Any) -> int:
    return int(moment.timestamp())


# PostgreSQL's integer: define_role's color and order (a larger number would not reach it).
INT4 = (-(2**31), 2**31 - 1)
# The SQL API's messages name its parameters; a NIP-86 caller knows them by these names.
_PARAMETER_NAMES = {
    "p_role": "the role id",
    "p_label": "the label",
    "p_description": "the description",
    "p_color": "the color",
    "p_pubkey": "the pubkey",
    "this function": "this method",
}


def _in_our_words(message: str) -> str:
    for name, words in _PARAMETER_NAMES.items():
        message = message.replace(name, words)
    return message


def _text(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or "\x00" in value:
        kind = "a string or null" if optional else "a string"
        raise Refused(400, f"invalid params: {what} must be {kind} (without NUL characters)")
    return value


def _integer(value: Any, what: str) -> int | None:
    if value is not None and not (type(value) is int and INT4[0] <= value <= INT4[1]):
        raise Refused(400, f"invalid params: {what} must be an integer or null")
    return value


def _role_definition(params: list[Any]) -> tuple[str, str, str | None, int | None, int | None]:
    """[id, label, description?, color?, order?]: the optional ones null or left out."""
    if not 2 <= len(params) <= 5:
        raise Refused(400, "invalid params: [role id, label, description, color, order]")
    role, label, description, color, order = [*params, None, None, None][:5]
    return (
        _text(role, "the role id"),
        _text(label, "the label"),
        _text(description, "the description", optional=True),
        _integer(color, "the color (a hue, 0 to 360)"),
        _integer(order, "the order"),
    )


def _member_and_role(params: list[Any]) -> tuple[str, str]:
    """[pubkey, role id]."""
    if (
        len(params) != 2
        or not isinstance(params[0], str)
        or not is_lower_hex(params[0].lower(), 64)
    ):
        raise Refused(400, "invalid params: [pubkey (64 hex characters), role id]")
    return params[0].lower(), _text(params[1], "the role id")


def _role_listing(event: dict[str, Any]) -> dict[str, Any]:
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


class Management:
    """NIP-86 for one community over the SQL API."""

    def __init__(self, backend: ManagementBackend, replay: ReplayGuard) -> None:
        self.backend = backend
        self.replay = replay
        self._methods: dict[str, Callable[[Community, str, list[Any]], Awaitable[Any]]] = {
            "supportedmethods": self._supportedmethods,
            "allowpubkey": self._allowpubkey,
            "disallowpubkey": self._disallowpubkey,
            "listallowedpubkeys": self._listallowedpubkeys,
            "listclaims": self._listclaims,
            "createclaim": self._createclaim,
            "deleteclaim": self._deleteclaim,
            "createrole": self._createrole,
            "editrole": self._editrole,
            "deleterole": self._deleterole,
            "assignrole": self._assignrole,
            "unassignrole": self._unassignrole,
            "listroles": self._listroles,
        }

    async def handle(
        self, community: Community, header: str | None, body: bytes, hosts: Iterable[str]
    ) -> tuple[int, dict[str, Any]]:
        """(HTTP status, answer) for one POST."""
        try:
            requester = authorize(header, body, hosts, self.replay, time.time())
            if await self.backend.role_of(community.id, requester) not in MANAGERS:
                raise Refused(403, "restricted: only the community's owner or an admin manages it")
            method, params = self._request(body)
            return 200, {"result": await method(community, requester, params)}
        except Refused as refused:
            return refused.status, {"error": str(refused)}
        except InvalidArgument as exc:
            return 400, {"error": f"invalid params: {_in_our_words(str(exc))}"}
        except CommunityArchived:
            return 400, {"error": "restricted: this community is archived"}
        except BuzzError as exc:
            return 500, {"error": f"error: {exc}"}

    def _request(self, body: bytes) -> tuple[Callable[..., Awaitable[Any]], list[Any]]:
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):
            raise Refused(400, "invalid request: the body is not JSON") from None
        if not (
            isinstance(request, dict)
            and isinstance(request.get("method"), str)
            and isinstance(request.get("params"), list)
        ):
            raise Refused(400, 'invalid request: expected {"method": <name>, "params": [...]}')
        method = self._methods.get(request["method"])
        if method is None:
            raise Refused(400, f"unsupported method: {request['method'][:64]!r}")
        return method, request["params"]

    async def _supportedmethods(self, community: Community, requester: str, params: list[Any]):
        return list(self._methods)

    async def _allowpubkey(self, community: Community, requester: str, params: list[Any]):
        await self.backend.allow(community.id, _pubkey(params), requester)
        return True

    async def _disallowpubkey(self, community: Community, requester: str, params: list[Any]):
        if await self.backend.leave(community.id, _pubkey(params)) == "is_owner":
            raise Refused(
                400, "restricted: the owner cannot be disallowed (transfer ownership first)"
            )
        return True

    async def _listallowedpubkeys(self, community: Community, requester: str, params: list[Any]):
        return [
            {"pubkey": m.pubkey, "reason": m.role} for m in await self.backend.members(community.id)
        ]

    async def _listclaims(self, community: Community, requester: str, params: list[Any]):
        return [
            {
                "id": str(i.invite_id),
                "created_by": i.created_by,
                "created_at": _unix(i.created_at),
                "expires_at": _unix(i.expires_at),
                "max_uses": i.max_uses,
                "use_count": i.use_count,
            }
            for i in await self.backend.invites(community.id)
        ]

    async def _createclaim(self, community: Community, requester: str, params: list[Any]):
        if len(params) != 2:
            raise Refused(400, "invalid params: [max uses or null, ttl seconds]")
        max_uses, ttl = params
        if max_uses is not None and not (
            type(max_uses) is int and 1 <= max_uses <= MAX_INVITE_USES
        ):
            raise Refused(400, f"invalid params: max uses is null or 1..{MAX_INVITE_USES}")
        if not (type(ttl) is int and TTL_SECONDS[0] <= ttl <= TTL_SECONDS[1]):
            raise Refused(400, f"invalid params: ttl is {TTL_SECONDS[0]}..{TTL_SECONDS[1]} seconds")
        invite_id, code, expires_at = await self.backend.create_invite(
            community.id, requester, max_uses, ttl
        )
        return {"id": str(invite_id), "claim": code, "expires_at": expires_at}

    async def _deleteclaim(self, community: Community, requester: str, params: list[Any]):
        try:
            invite_id = (
                uuid.UUID(params[0]) if len(params) == 1 and isinstance(params[0], str) else None
            )
        except ValueError:
            invite_id = None
        if invite_id is None:
            raise Refused(400, "invalid params: [invite id]")
        return await self.backend.revoke_invite(community.id, invite_id) == "revoked"

    async def _createrole(self, community: Community, requester: str, params: list[Any]):
        role, *definition = _role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=False)
        if outcome == "exists":
            raise Refused(
                400,
                f"invalid params: role {role[:64]!r} is defined already; change it with editrole",
            )
        return True

    async def _editrole(self, community: Community, requester: str, params: list[Any]):
        role, *definition = _role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=True)
        if outcome == "not_found":
            raise Refused(
                400, f"invalid params: there is no role {role[:64]!r}; define it with createrole"
            )
        return True

    async def _deleterole(self, community: Community, requester: str, params: list[Any]):
        if len(params) != 1:
            raise Refused(400, "invalid params: [role id]")
        role = _text(params[0], "the role id")
        return await self.backend.delete_role(community.id, role) == "deleted"

    async def _assignrole(self, community: Community, requester: str, params: list[Any]):
        pubkey, role = _member_and_role(params)
        if await self.backend.assign_role(community.id, pubkey, role) == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        return True

    async def _unassignrole(self, community: Community, requester: str, params: list[Any]):
        pubkey, role = _member_and_role(params)
        await self.backend.unassign_role(community.id, pubkey, role)
        return True

    async def _listroles(self, community: Community, requester: str, params: list[Any]):
        return [_role_listing(ev) for ev in await self.backend.role_definitions(community.id)]
