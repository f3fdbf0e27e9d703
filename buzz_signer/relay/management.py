"""NIP-86 relay management for one community: a POST in, a JSON-RPC answer out.

`Management` knows no HTTP server and no driver, like RelaySession: it is given the request's
Authorization header, its body and the URLs the request may name, and returns the HTTP status
and the JSON object to answer. Who is calling is NIP-98's business (`authenticated`): a kind
27235 event naming this relay, POST and the body's sha256, fresh. A method that changes
something accepts each event once; the read methods (`supportedmethods`, `list...`) accept it
again within its 60 s (welshman dates NIP-98 events in whole seconds and Flotilla asks
`supportedmethods` twice at once). Who may call what is `may_call`: the owner and admins every
method; a member the methods assigned to them (assignmethod; never those that would hand out
more, NEVER_DELEGATED), and not against the owner or an admin; anyone with a valid event
`supportedmethods`, which answers the other methods they may call (none, for most). Every
method is one call of the SQL API (SPEC §7):

    supportedmethods                         -> [the other methods this caller may call]
    allowpubkey [pubkey, reason?]            -> true   (a member now; lifts a ban)
    unallowpubkey [pubkey, reason?]          -> true   (a member no more; the owner: error)
        disallowpubkey: the same, under its former name
    listallowedpubkeys                       -> [{"pubkey", "reason": role}]
    banpubkey [pubkey, reason?]              -> true   (removed if a member; the owner: error)
    unbanpubkey [pubkey, reason?]            -> true   (not banned now; does not make a member)
    listbannedpubkeys                        -> [{"pubkey", "reason"}] by pubkey
    changerelayname [name]                   -> true   (null or "" clears it)
    changerelaydescription [text]            -> true   (null or "" clears it)
    changerelayicon [https URL]              -> true   (null or "" clears it)
    setjoinpolicy [invite|request|open]      -> true   (an extension, for the community's page)
    createclaim [claim, max uses?, ttl s?]   -> true   (an invite whose code is the claim;
                                                         the numbers default to the relay's)
    listclaims                               -> [claim, ...] the live ones createclaim made,
                                                newest first
    deleteclaim [claim]                      -> true (revoked), or false when no live one
    listinvites                              -> [{"id", "created_by", "created_at",
                                                  "expires_at", "use_count", "max_uses"}]
                                                every invite, oldest first, never a code
    revokeinvite [invite id]                 -> true (revoked), or false when there is no
                                                such invite (an extension: by the id
                                                listinvites gives, for invites with no claim)
    listeventsneedingmoderation              -> [{"id", "reason"}] the pending join requests,
                                                oldest first (reason: who asks, their note)
    allowevent [request id, reason?]         -> true   (the requester is a member now)
    banevent [event id, reason?]             -> true   (a pending join request's id: the
                                                request is rejected; any other id: the event
                                                is banned behind the gate)
    unbanevent [event id, reason?]           -> true   (not banned now)
    listbannedevents                         -> [{"id", "reason"}] by id
    allowkind [kind] / disallowkind [kind]   -> true   (the kind moves to that list)
    clearkind [kind]                         -> true   (an extension: on neither list)
    listallowedkinds / listdisallowedkinds   -> [kind, ...] ascending
    blockip [ip or CIDR, reason?]            -> true   (HTTP 403 for that address or network)
    unblockip [ip or CIDR, reason?]          -> true   (that very address or network)
    listblockedips                           -> [{"ip", "reason"}] IPv4 first, by address
    assignmethod [pubkey, method]            -> true   (a member may call it; a non-member or
                                                a method never assigned: error)
    unassignmethod [pubkey, method]          -> true   (assigned no more)
    listmethodassignees                      -> [{"pubkey", "methods": [...]}] by pubkey
    createrole [id, label, description?, color?, order?]
                                             -> true (defined; a role already defined: error)
    editrole [id, label, description?, color?, order?]
                                             -> true (redefined; a role never defined: error)
    deleterole [id]                          -> true, or false when there is no such role
    assignrole [pubkey, role id]             -> true (holds it now; a non-member: error)
    unassignrole [pubkey, role id]           -> true (does not hold it now)
    listroles                                -> [{"id", "label", "description", "color",
                                                  "order"}] by id
    setmemberrole [pubkey, admin|member]     -> "updated" or "unchanged" (an extension: the
                                                base role; a non-member or the owner: error)
    removebranch [pubkey, reason?]           -> {"removed": n} (an extension: the member and
                                                everyone they brought in, recursively, in
                                                one transaction; 0 for a non-member; the
                                                owner: error)
    setinvitequota [admin|member, quota]     -> "updated" or "unchanged" (an extension: how
                                                many members each may bring in, null for no
                                                limit)
    listinvitequotas                         -> {"admin": quota, "member": quota} (an
                                                extension; null: no limit)
    listinvitetree                           -> [{"pubkey", "role", "added_by",
                                                  "invites_left"}] every member, by pubkey
                                                (an extension: who brought whom in;
                                                invites_left null: no limit)

Claims are invite codes a client chose (Flotilla's shared invite link). The database keeps
only their hash, to claim with, and a copy sealed to the relay key (NIP-44), which only this
relay opens to list them: a code sealed before a key rotation still claims but is no longer
listed.

Statuses: 200 with {"result": ...}; {"error": ...} with 401 (authentication), 403 (a method
this caller may not call, or a createclaim beyond the caller's invites left), 400 (the request
or its params, or the community's state: archived), 503 with Retry-After (a refusal a retry may
cure: the lead bound, a lock timeout, the database unreachable), 500 (any other failure of the
database, logged with its SQLSTATE; the answer never repeats the database's words).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, Protocol

from ..errors import (
    BuzzError,
    CommunityArchived,
    InvalidArgument,
    InviteQuotaExhausted,
    ListTooFarAhead,
    RelayKeyMismatch,
    may_retry,
)
from ..keys import RelayKey
from ..membership import Ban, InviteRecord, JoinRequest, Member
from ..nip19 import encode_npub
from ..nip44 import Nip44Error
from ..nostr import is_lower_hex
from .identity import RETIRED
from .moderation import parse_network
from .nip98 import USED_ALREADY, Refused, authenticated, fresh_until
from .protocol import NO_INVITES_LEFT, Community
from .urls import RelayNames

__all__ = ["CONTENT_TYPE", "DELEGABLE", "Management", "ManagementBackend", "may_call"]

log = logging.getLogger("buzz_relay.management")
# The refusal of a write while the community's lists run ahead of the clock (BZLAG): 503.
LAGGING = "error: too many membership changes right now; try again in a minute"

CONTENT_TYPE = "application/nostr+json+rpc"
MANAGERS = frozenset(("owner", "admin"))
# Never assigned to a member (assignmethod): supportedmethods is anyone's; assignmethod and
# unassignmethod would let a delegate hand out what nobody gave them, setmemberrole make
# themselves an admin. disallowpubkey is assigned as unallowpubkey, whose old name it is.
NEVER_DELEGATED = frozenset(("supportedmethods", "assignmethod", "unassignmethod", "setmemberrole"))
ALIASES = {"disallowpubkey": "unallowpubkey"}
# What a member may be assigned: every other method of this relay (buzz_private.delegable_method
# in the database names the same; a test holds the two equal).
DELEGABLE = frozenset({
    *("allowpubkey", "unallowpubkey", "listallowedpubkeys"),
    *("banpubkey", "unbanpubkey", "listbannedpubkeys"),
    *("changerelayname", "changerelaydescription", "changerelayicon", "setjoinpolicy"),
    *("createclaim", "listclaims", "deleteclaim", "listinvites", "revokeinvite"),
    *("listeventsneedingmoderation", "allowevent", "banevent", "unbanevent", "listbannedevents"),
    *("allowkind", "disallowkind", "clearkind", "listallowedkinds", "listdisallowedkinds"),
    *("blockip", "unblockip", "listblockedips", "listmethodassignees"),
    *("createrole", "editrole", "deleterole", "assignrole", "unassignrole", "listroles"),
    *("removebranch", "setinvitequota", "listinvitequotas", "listinvitetree"),
})  # fmt: skip
# Methods that take a member from the community (their first param the pubkey): a member
# calling them by assignment may not aim them at the owner or an admin.
REMOVES_A_MEMBER = frozenset(("unallowpubkey", "disallowpubkey", "banpubkey", "removebranch"))
# NIP-01 kinds.
KINDS = (0, 65535)
# create_relay_invite's bounds: uses 1 .. 10,000 (or unlimited), ttl 60 s .. 30 days, and a
# chosen code 8 to 128 characters of [A-Za-z0-9_-].
MAX_INVITE_USES = 10_000
TTL_SECONDS = (60, 30 * 24 * 3600)
CLAIM = re.compile(r"[A-Za-z0-9_-]{8,128}")
# The base roles an invite quota is set for (the owner has none).
QUOTA_ROLES = ("admin", "member")


class ManagementBackend(Protocol):
    """The SQL API as management uses it; backend.DatabaseBackend is the real one."""

    async def role_of(self, community: uuid.UUID, pubkey: str) -> str | None: ...

    async def accept_auth_event(self, event_id: str, fresh_until: int) -> bool: ...

    async def allow(self, community: uuid.UUID, pubkey: str, by: str) -> str: ...

    async def leave(self, community: uuid.UUID, pubkey: str) -> str: ...

    async def members(self, community: uuid.UUID) -> list[Member]: ...

    async def ban(
        self, community: uuid.UUID, pubkey: str, reason: str | None, by: str | None
    ) -> str: ...

    async def unban(self, community: uuid.UUID, pubkey: str) -> str: ...

    async def bans(self, community: uuid.UUID) -> list[Ban]: ...

    async def set_profile(self, community: uuid.UUID, field: str, value: str | None) -> str: ...

    async def set_join_policy(self, community: uuid.UUID, policy: str) -> str: ...

    async def invites(self, community: uuid.UUID) -> list[InviteRecord]: ...

    async def create_invite(
        self,
        community: uuid.UUID,
        requester: str,
        max_uses: int | None,
        ttl_seconds: int,
        *,
        code: str | None = None,
        sealed: str | None = None,
    ) -> tuple[uuid.UUID, str, int]: ...

    async def revoke_invite(self, community: uuid.UUID, invite_id: uuid.UUID) -> str: ...

    async def set_member_role(self, community: uuid.UUID, pubkey: str, role: str) -> str: ...

    async def join_requests(self, community: uuid.UUID) -> list[JoinRequest]: ...

    async def approve_request(self, community: uuid.UUID, request_id: str, by: str) -> str: ...

    async def reject_request(
        self, community: uuid.UUID, request_id: str, reason: str | None
    ) -> str: ...

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

    async def remove_branch(self, community: uuid.UUID, pubkey: str) -> tuple[str, int]: ...

    async def set_invite_quota(self, community: uuid.UUID, role: str, quota: int | None) -> str: ...

    async def invite_quotas(self, community: uuid.UUID) -> dict[str, int | None]: ...

    async def invites_left(self, community: uuid.UUID, pubkey: str) -> int | None: ...

    async def invite_tree(
        self, community: uuid.UUID
    ) -> list[tuple[str, str, str | None, int | None]]: ...

    # Moderation behind the gate

    async def ban_event(
        self, community: uuid.UUID, event_id: str, reason: str | None, by: str | None
    ) -> str: ...

    async def unban_event(self, community: uuid.UUID, event_id: str) -> str: ...

    async def banned_events(self, community: uuid.UUID) -> list[tuple[str, str | None]]: ...

    async def set_kind_rule(self, community: uuid.UUID, kind: int, allowed: bool | None) -> str: ...

    async def kind_rules(self, community: uuid.UUID) -> list[tuple[int, bool]]: ...

    async def block_ip(
        self, community: uuid.UUID, network: str, reason: str | None, by: str | None
    ) -> str: ...

    async def unblock_ip(self, community: uuid.UUID, network: str) -> str: ...

    async def blocked_ips(self, community: uuid.UUID) -> list[tuple[Any, str | None]]: ...

    async def assign_method(
        self, community: uuid.UUID, pubkey: str, method: str, by: str | None
    ) -> str: ...

    async def unassign_method(self, community: uuid.UUID, pubkey: str, method: str) -> str: ...

    async def method_assignees(self, community: uuid.UUID) -> list[tuple[str, str]]: ...

    async def assigned_methods(self, community: uuid.UUID, pubkey: str) -> frozenset[str]: ...


class Caller(NamedTuple):
    """Who sent the request: the NIP-98 event's author, and their base role (None: not a
    member)."""

    pubkey: str
    role: str | None
    # The methods assigned to them (assignmethod), read for members only.
    assigned: frozenset[str] = frozenset()


def may_call(role: str | None, method: str, assigned: frozenset[str] = frozenset()) -> bool:
    """Who may call what, in one place: anyone with a valid NIP-98 event `supportedmethods`
    (it answers what else they may call), the owner and admins every method, a member the
    methods assigned to them (an alias by its name's assignment), a non-member nothing else
    whatever was assigned to them."""
    if method == "supportedmethods" or role in MANAGERS:
        return True
    return (
        role is not None
        and method not in NEVER_DELEGATED
        and ALIASES.get(method, method) in assigned
    )


def _branch(root: str, edges: list[tuple[str, str | None]]) -> set[str]:
    """`root` and everyone it brought in, recursively, from (member, added_by) pairs."""
    invitees: dict[str, list[str]] = {}
    for member, added_by in edges:
        if added_by is not None:
            invitees.setdefault(added_by, []).append(member)
    branch, todo = set(), [root]
    while todo:
        member = todo.pop()
        if member not in branch:
            branch.add(member)
            todo.extend(invitees.get(member, ()))
    return branch


def reads_only(method: str) -> bool:
    """The read methods (SPEC §7), which accept one NIP-98 event more than once."""
    return method == "supportedmethods" or method.startswith("list")


# ---------------------------------------------------------------------------- params


def _arity(params: list[Any], least: int, most: int, shape: str) -> None:
    if not least <= len(params) <= most:
        raise Refused(400, f"invalid params: {shape}")


def _reason(params: list[Any], shape: str) -> str | None:
    """The optional second param, a free text; "" says nothing."""
    _arity(params, 1, 2, shape)
    reason = params[1] if len(params) == 2 else None
    if reason is not None and not isinstance(reason, str):
        raise Refused(400, f"invalid params: {shape}, the reason a string or null")
    return reason or None


def _pubkey(params: list[Any]) -> str:
    if not params or not isinstance(params[0], str) or not is_lower_hex(params[0].lower(), 64):
        raise Refused(400, "invalid params: the first must be a pubkey (64 hex characters)")
    return params[0].lower()


def _pubkey_and_reason(params: list[Any]) -> tuple[str, str | None]:
    """[pubkey, reason?]."""
    return _pubkey(params), _reason(params, "[pubkey, reason]")


def _event_id_and_reason(params: list[Any]) -> tuple[str, str | None]:
    """[event id, reason?]."""
    if not params or not isinstance(params[0], str) or not is_lower_hex(params[0].lower(), 64):
        raise Refused(400, "invalid params: the first must be an event id (64 hex characters)")
    return params[0].lower(), _reason(params, "[event id, reason]")


def _kind(params: list[Any]) -> int:
    """[kind]: an integer 0 to 65535 (NIP-01's kinds)."""
    if len(params) != 1 or not (type(params[0]) is int and KINDS[0] <= params[0] <= KINDS[1]):
        raise Refused(400, "invalid params: [kind], the kind an integer from 0 to 65535")
    return params[0]


def _network_and_reason(params: list[Any]) -> tuple[str, str | None]:
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
    return str(network), _reason(params, "[ip, reason]")


def _address_text(network: Any) -> str:
    """A blocked network as listblockedips says it: a single address without its /32 or /128."""
    return str(network.network_address) if network.num_addresses == 1 else str(network)


def _member_and_method(params: list[Any]) -> tuple[str, str]:
    """[pubkey, method]."""
    shape = "invalid params: [pubkey (64 hex characters), method (a NIP-86 method's name)]"
    if len(params) != 2 or not isinstance(params[1], str) or not params[1]:
        raise Refused(400, shape)
    return _pubkey(params), params[1]


def _claim(params: list[Any], shape: str) -> str:
    """A claim (never echoed: it is a secret)."""
    if not params or not isinstance(params[0], str) or not CLAIM.fullmatch(params[0]):
        raise Refused(
            400,
            f"invalid params: {shape}, the claim 8 to 128 characters of A-Z, a-z, 0-9, _ and -",
        )
    return params[0]


def _bounded(value: Any, default: int, bounds: tuple[int, int], what: str) -> int:
    """An integer param within `bounds`; null or left out: `default`."""
    if value is None:
        return default
    if not (type(value) is int and bounds[0] <= value <= bounds[1]):
        raise Refused(400, f"invalid params: {what} is {bounds[0]} to {bounds[1]}, or null")
    return value


def _unix(moment: Any) -> int:
    return int(moment.timestamp())


def _is_live(invite: InviteRecord, now: dt.datetime) -> bool:
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
    _arity(params, 2, 5, "[role id, label, description, color, order]")
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


def _request_reason(request: JoinRequest) -> str:
    """What listeventsneedingmoderation says of a join request: who asks, and their note."""
    who = f"join request from {encode_npub(request.pubkey)}"
    return f"{who}: {request.note}" if request.note else who


Method = Callable[[Community, Caller, list[Any]], Awaitable[Any]]


class Management:
    """NIP-86 for one community over the SQL API.

    key: the relay key, which seals the claims createclaim makes and opens them for
    listclaims.
    claim_max_uses, claim_ttl_seconds: what createclaim makes when its params do not say.
    """

    def __init__(
        self,
        backend: ManagementBackend,
        key: RelayKey,
        *,
        claim_max_uses: int = 100,
        claim_ttl_seconds: int = 30 * 24 * 3600,
    ) -> None:
        if not 1 <= claim_max_uses <= MAX_INVITE_USES:
            raise ValueError(f"claim_max_uses must be 1 to {MAX_INVITE_USES}")
        if not TTL_SECONDS[0] <= claim_ttl_seconds <= TTL_SECONDS[1]:
            raise ValueError(
                f"claim_ttl_seconds must be {TTL_SECONDS[0]} to {TTL_SECONDS[1]} (30 days)"
            )
        self.backend = backend
        self.key = key
        self.claim_max_uses = claim_max_uses
        self.claim_ttl_seconds = claim_ttl_seconds
        self._methods: dict[str, Method] = {
            "supportedmethods": self._supportedmethods,
            "allowpubkey": self._allowpubkey,
            "unallowpubkey": self._unallowpubkey,
            "disallowpubkey": self._unallowpubkey,
            "listallowedpubkeys": self._listallowedpubkeys,
            "banpubkey": self._banpubkey,
            "unbanpubkey": self._unbanpubkey,
            "listbannedpubkeys": self._listbannedpubkeys,
            "changerelayname": self._profile_setter("name"),
            "changerelaydescription": self._profile_setter("description"),
            "changerelayicon": self._profile_setter("icon"),
            "setjoinpolicy": self._setjoinpolicy,
            "createclaim": self._createclaim,
            "listclaims": self._listclaims,
            "deleteclaim": self._deleteclaim,
            "listinvites": self._listinvites,
            "revokeinvite": self._revokeinvite,
            "listeventsneedingmoderation": self._listeventsneedingmoderation,
            "allowevent": self._allowevent,
            "banevent": self._banevent,
            "createrole": self._createrole,
            "editrole": self._editrole,
            "deleterole": self._deleterole,
            "assignrole": self._assignrole,
            "unassignrole": self._unassignrole,
            "listroles": self._listroles,
            "setmemberrole": self._setmemberrole,
            "removebranch": self._removebranch,
            "setinvitequota": self._setinvitequota,
            "listinvitequotas": self._listinvitequotas,
            "listinvitetree": self._listinvitetree,
            "unbanevent": self._unbanevent,
            "listbannedevents": self._listbannedevents,
            "allowkind": self._kind_setter(True),
            "disallowkind": self._kind_setter(False),
            "clearkind": self._kind_setter(None),
            "listallowedkinds": self._kind_lister(True),
            "listdisallowedkinds": self._kind_lister(False),
            "blockip": self._blockip,
            "unblockip": self._unblockip,
            "listblockedips": self._listblockedips,
            "assignmethod": self._assignmethod,
            "unassignmethod": self._unassignmethod,
            "listmethodassignees": self._listmethodassignees,
        }

    async def handle(
        self, community: Community, header: str | None, body: bytes, names: RelayNames
    ) -> tuple[int, dict[str, Any]]:
        """(HTTP status, answer) for one POST; a line of the log at info level."""
        called: list[str] = []  # the method, once the body names one
        status, answer = await self._answer(community, header, body, names, called)
        log.info(
            "NIP-86 %s: %d", called[0] if called else "-", status,
            extra={"community": community.host, "status": status},
        )  # fmt: skip
        return status, answer

    async def _answer(
        self,
        community: Community,
        header: str | None,
        body: bytes,
        names: RelayNames,
        called: list[str],
    ) -> tuple[int, dict[str, Any]]:
        try:
            now = time.time()
            event = authenticated(header, body, names, now)
            name, params = self._request(body)
            called.append(name)
            # Once in every relay process of the database (SPEC section 9).
            if not reads_only(name) and not await self.backend.accept_auth_event(
                event["id"], fresh_until(event)
            ):
                raise Refused(401, USED_ALREADY)
            caller = await self._caller(community, event["pubkey"])
            if not may_call(caller.role, name, caller.assigned):
                raise Refused(
                    403,
                    "restricted: only the community's owner, an admin, or a member this method"
                    " was assigned to may call it",
                )
            if caller.role not in MANAGERS and name in REMOVES_A_MEMBER:
                await self._spare_managers(community, name, params)
            return 200, {"result": await self._methods[name](community, caller, params)}
        except Refused as refused:
            return refused.status, {"error": str(refused)}
        except InvalidArgument as exc:
            return 400, {"error": f"invalid params: {_in_our_words(str(exc))}"}
        except CommunityArchived:
            return 400, {"error": "restricted: this community is archived"}
        except BuzzError as exc:
            # Never the database's own words: they may name the community's id.
            if isinstance(exc, ListTooFarAhead):
                return 503, {"error": LAGGING}
            if isinstance(exc, RelayKeyMismatch):
                return 503, {"error": RETIRED}
            if may_retry(exc):
                return 503, {"error": "error: the database is busy or unreachable; try again"}
            # Logged and counted with its SQLSTATE where it came from (backend.py).
            return 500, {"error": "error: the database could not do it"}

    def _request(self, body: bytes) -> tuple[str, list[Any]]:
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
        if request["method"] not in self._methods:
            raise Refused(400, f"unsupported method: {request['method'][:64]!r}")
        return request["method"], request["params"]

    async def _caller(self, community: Community, pubkey: str) -> Caller:
        role = await self.backend.role_of(community.id, pubkey)
        if role is None or role in MANAGERS:
            return Caller(pubkey, role)
        return Caller(pubkey, role, await self.backend.assigned_methods(community.id, pubkey))

    async def _spare_managers(self, community: Community, name: str, params: list[Any]) -> None:
        """A member removing someone by an assigned method: never the owner or an admin, nor,
        for a branch, anyone in it who is one. (Checked in a read before the write: a promotion
        committed in between is not seen, as for any check made before a call.)"""
        target = params[0].lower() if params and isinstance(params[0], str) else ""
        if not is_lower_hex(target, 64):
            return  # the method itself refuses the params
        if name == "removebranch":
            # The members alone: the tree's invites left would cost a count per member.
            members = await self.backend.members(community.id)
            roles = {m.pubkey: m.role for m in members}
            going = _branch(target, [(m.pubkey, m.added_by) for m in members])
            spared = any(roles.get(pubkey) in MANAGERS for pubkey in going)
        else:
            spared = await self.backend.role_of(community.id, target) in MANAGERS
        if spared:
            raise Refused(
                403,
                "restricted: a member with assigned methods cannot act on the owner or an admin",
            )

    async def _supportedmethods(self, community: Community, caller: Caller, params: list[Any]):
        # As NIP-86 says: the other methods (those this caller may call).
        return [
            m
            for m in self._methods
            if m != "supportedmethods" and may_call(caller.role, m, caller.assigned)
        ]

    # Members and bans ---------------------------------------------------------------

    async def _allowpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = _pubkey_and_reason(params)
        await self.backend.allow(community.id, pubkey, caller.pubkey)
        return True

    async def _unallowpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = _pubkey_and_reason(params)
        if await self.backend.leave(community.id, pubkey) == "is_owner":
            raise Refused(
                400, "restricted: the owner cannot be disallowed (transfer ownership first)"
            )
        return True

    async def _listallowedpubkeys(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"pubkey": m.pubkey, "reason": m.role} for m in await self.backend.members(community.id)
        ]

    async def _banpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, reason = _pubkey_and_reason(params)
        if await self.backend.ban(community.id, pubkey, reason, caller.pubkey) == "is_owner":
            raise Refused(400, "restricted: the owner cannot be banned (transfer ownership first)")
        return True

    async def _unbanpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = _pubkey_and_reason(params)
        await self.backend.unban(community.id, pubkey)
        return True

    async def _listbannedpubkeys(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"pubkey": b.pubkey, "reason": b.reason} for b in await self.backend.bans(community.id)
        ]

    # The community's profile and join policy ---------------------------------------

    def _profile_setter(self, field: str) -> Method:
        async def change(community: Community, caller: Caller, params: list[Any]) -> bool:
            _arity(params, 1, 1, f"[{field}]")
            # A client clearing a field sends ""; the database clears it with NULL.
            value = _text(params[0], f"the {field}", optional=True) or None
            await self.backend.set_profile(community.id, field, value)
            return True

        return change

    async def _setjoinpolicy(self, community: Community, caller: Caller, params: list[Any]):
        _arity(params, 1, 1, "[invite, request or open]")
        await self.backend.set_join_policy(community.id, _text(params[0], "the policy"))
        return True

    # Claims and invites ---------------------------------------------------------------

    async def _createclaim(self, community: Community, caller: Caller, params: list[Any]):
        shape = "[claim, max uses, ttl seconds]"
        _arity(params, 1, 3, shape)
        claim = _claim(params, shape)
        max_uses, ttl = [*params[1:], None, None][:2]
        max_uses = _bounded(max_uses, self.claim_max_uses, (1, MAX_INVITE_USES), "max uses")
        ttl = _bounded(ttl, self.claim_ttl_seconds, TTL_SECONDS, "ttl seconds")
        try:
            await self.backend.create_invite(
                community.id, caller.pubkey, max_uses, ttl, code=claim, sealed=self.key.seal(claim)
            )
        except InviteQuotaExhausted:
            # The caller's quota (SPEC §3): none left, or fewer than the uses asked for.
            left = await self.backend.invites_left(community.id, caller.pubkey)
            if not left:
                raise Refused(403, NO_INVITES_LEFT) from None
            invites = "1 invite" if left == 1 else f"{left} invites"
            raise Refused(
                403, f"restricted: you have {invites} left; ask for at most {left} uses."
            ) from None
        return True

    async def _live_claims(self, community: Community) -> list[tuple[InviteRecord, str]]:
        """The live invites createclaim made, newest first, each with its claim; those sealed
        by another key (one since rotated) are left out, and counted in the log."""
        now = dt.datetime.now(dt.UTC)
        opened, unopened = [], 0
        for invite in reversed(await self.backend.invites(community.id)):
            if invite.sealed is None or not _is_live(invite, now):
                continue
            try:
                opened.append((invite, self.key.unseal(invite.sealed)))
            except Nip44Error:
                unopened += 1
        if unopened:
            log.warning(
                "community %s: %d live claim(s) sealed to another relay key (made before a key "
                "rotation?) left out; they still claim, but cannot be listed or deleted by code",
                community.id,
                unopened,
            )
        return opened

    async def _listclaims(self, community: Community, caller: Caller, params: list[Any]):
        return [claim for _, claim in await self._live_claims(community)]

    async def _deleteclaim(self, community: Community, caller: Caller, params: list[Any]):
        _arity(params, 1, 1, "[claim]")
        # Codes are compared without regard to case, as claim_relay_invite compares them.
        wanted = _claim(params, "[claim]").lower()
        for invite, claim in await self._live_claims(community):
            if claim.lower() == wanted:
                return await self.backend.revoke_invite(community.id, invite.invite_id) == "revoked"
        return False

    async def _listinvites(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {
                "id": str(i.invite_id),
                "created_by": i.created_by,
                "created_at": _unix(i.created_at),
                "expires_at": _unix(i.expires_at),
                "use_count": i.use_count,
                "max_uses": i.max_uses,
            }
            for i in await self.backend.invites(community.id)
        ]

    async def _revokeinvite(self, community: Community, caller: Caller, params: list[Any]):
        # By id, for the invites no claim names (28935's one-use invites, claims sealed to a
        # rotated key): deleteclaim cannot reach them.
        _arity(params, 1, 1, "[invite id]")
        try:
            invite_id = uuid.UUID(params[0]) if isinstance(params[0], str) else None
        except ValueError:
            invite_id = None
        if invite_id is None:
            raise Refused(400, "invalid params: [invite id], the id a UUID as listinvites gives")
        return await self.backend.revoke_invite(community.id, invite_id) == "revoked"

    # Join requests: the events needing moderation -----------------------------------

    async def _listeventsneedingmoderation(
        self, community: Community, caller: Caller, params: list[Any]
    ):
        return [
            {"id": r.request_id, "reason": _request_reason(r)}
            for r in await self.backend.join_requests(community.id)
        ]

    async def _allowevent(self, community: Community, caller: Caller, params: list[Any]):
        request_id, _ = _event_id_and_reason(params)
        outcome = await self.backend.approve_request(community.id, request_id, caller.pubkey)
        if outcome == "not_found":
            raise Refused(400, "invalid params: that id is not a pending join request")
        if outcome == "banned":
            raise Refused(
                400, "restricted: that requester is banned (allowpubkey lifts the ban and adds)"
            )
        return True

    async def _banevent(self, community: Community, caller: Caller, params: list[Any]):
        event_id, reason = _event_id_and_reason(params)
        # A pending join request is an event needing moderation: banning it rejects it. Any
        # other event is banned behind the gate (dropped from the upstream's answers, refused
        # when published).
        if await self.backend.reject_request(community.id, event_id, reason) == "not_found":
            await self.backend.ban_event(community.id, event_id, reason, caller.pubkey)
        return True

    # Moderation behind the gate: events, kinds, addresses, assigned methods ---------

    async def _unbanevent(self, community: Community, caller: Caller, params: list[Any]):
        event_id, _ = _event_id_and_reason(params)
        await self.backend.unban_event(community.id, event_id)
        return True

    async def _listbannedevents(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"id": event_id, "reason": reason}
            for event_id, reason in await self.backend.banned_events(community.id)
        ]

    def _kind_setter(self, allowed: bool | None) -> Method:
        async def move(community: Community, caller: Caller, params: list[Any]) -> bool:
            await self.backend.set_kind_rule(community.id, _kind(params), allowed)
            return True

        return move

    def _kind_lister(self, allowed: bool) -> Method:
        async def listing(community: Community, caller: Caller, params: list[Any]) -> list[int]:
            rules = await self.backend.kind_rules(community.id)
            return [kind for kind, is_allowed in rules if is_allowed is allowed]

        return listing

    async def _blockip(self, community: Community, caller: Caller, params: list[Any]):
        network, reason = _network_and_reason(params)
        await self.backend.block_ip(community.id, network, reason, caller.pubkey)
        return True

    async def _unblockip(self, community: Community, caller: Caller, params: list[Any]):
        network, _ = _network_and_reason(params)
        await self.backend.unblock_ip(community.id, network)
        return True

    async def _listblockedips(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"ip": _address_text(network), "reason": reason}
            for network, reason in await self.backend.blocked_ips(community.id)
        ]

    async def _assignmethod(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, method = _member_and_method(params)
        if method not in DELEGABLE:
            raise Refused(
                400,
                f"invalid params: {method[:64]!r} cannot be assigned (supportedmethods,"
                " assignmethod, unassignmethod and setmemberrole never are; disallowpubkey is"
                " unallowpubkey; any other must be a method of this relay)",
            )
        outcome = await self.backend.assign_method(community.id, pubkey, method, caller.pubkey)
        if outcome == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        return True

    async def _unassignmethod(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, method = _member_and_method(params)
        await self.backend.unassign_method(community.id, pubkey, method)
        return True

    async def _listmethodassignees(self, community: Community, caller: Caller, params: list[Any]):
        methods: dict[str, list[str]] = {}
        for pubkey, method in await self.backend.method_assignees(community.id):
            methods.setdefault(pubkey, []).append(method)
        return [{"pubkey": pubkey, "methods": held} for pubkey, held in methods.items()]

    # Roles (SPEC §6) ------------------------------------------------------------------

    async def _createrole(self, community: Community, caller: Caller, params: list[Any]):
        role, *definition = _role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=False)
        if outcome == "exists":
            raise Refused(
                400,
                f"invalid params: role {role[:64]!r} is defined already; change it with editrole",
            )
        return True

    async def _editrole(self, community: Community, caller: Caller, params: list[Any]):
        role, *definition = _role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=True)
        if outcome == "not_found":
            raise Refused(
                400, f"invalid params: there is no role {role[:64]!r}; define it with createrole"
            )
        return True

    async def _deleterole(self, community: Community, caller: Caller, params: list[Any]):
        _arity(params, 1, 1, "[role id]")
        role = _text(params[0], "the role id")
        return await self.backend.delete_role(community.id, role) == "deleted"

    async def _assignrole(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, role = _member_and_role(params)
        if await self.backend.assign_role(community.id, pubkey, role) == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        return True

    async def _unassignrole(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, role = _member_and_role(params)
        await self.backend.unassign_role(community.id, pubkey, role)
        return True

    async def _listroles(self, community: Community, caller: Caller, params: list[Any]):
        return [_role_listing(ev) for ev in await self.backend.role_definitions(community.id)]

    async def _setmemberrole(self, community: Community, caller: Caller, params: list[Any]):
        # NIP-86 has no method for the base role; the community's page needs one.
        if len(params) != 2 or not isinstance(params[0], str):
            raise Refused(400, "invalid params: [pubkey (64 hex characters), admin or member]")
        pubkey = _pubkey(params)
        role = _text(params[1], "the role")
        outcome = await self.backend.set_member_role(community.id, pubkey, role)
        if outcome == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        if outcome == "is_owner":
            raise Refused(
                400, "restricted: the owner's role changes only by a transfer of ownership"
            )
        return outcome

    # Invitations: quotas and branches (SPEC §3), our extensions ------------------------

    async def _removebranch(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = _pubkey_and_reason(params)
        outcome, removed = await self.backend.remove_branch(community.id, pubkey)
        if outcome == "is_owner":
            raise Refused(400, "restricted: the owner cannot be removed (transfer ownership first)")
        return {"removed": removed}

    async def _setinvitequota(self, community: Community, caller: Caller, params: list[Any]):
        shape = "[admin or member, quota (a whole number from 0, or null for no limit)]"
        if len(params) != 2 or params[0] not in QUOTA_ROLES:
            raise Refused(400, f"invalid params: {shape}")
        quota = params[1]
        if quota is not None and not (type(quota) is int and 0 <= quota <= INT4[1]):
            raise Refused(400, f"invalid params: {shape}")
        return await self.backend.set_invite_quota(community.id, params[0], quota)

    async def _listinvitequotas(self, community: Community, caller: Caller, params: list[Any]):
        return await self.backend.invite_quotas(community.id)

    async def _listinvitetree(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"pubkey": pubkey, "role": role, "added_by": added_by, "invites_left": left}
            for pubkey, role, added_by, left in await self.backend.invite_tree(community.id)
        ]
