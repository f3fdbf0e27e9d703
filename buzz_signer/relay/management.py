"""NIP-86 relay management for one community: a POST in, a JSON-RPC answer out.

`Management` knows no HTTP server and no driver, like RelaySession: it is given the request's
Authorization header, its body and the URLs the request may name, and returns the HTTP status
and the JSON object to answer. Who is calling is NIP-98's (nip98.py); who may call what,
nip86_access.py's; each method's params, nip86_params.py's; each method is one call of the SQL
API. The methods, their params and answers, and the statuses are in docs/relay.md, "NIP-86
management"; SPEC section 7 is the contract.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

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
from ..membership import InviteRecord
from ..nip44 import Nip44Error
from . import nip86_params
from .answers import answer
from .identity import RETIRED
from .nip86_access import MANAGERS, Caller, may_call, reads_only
from .nip86_params import INT4, MAX_INVITE_USES, QUOTA_ROLES, TTL_SECONDS
from .nip98 import USED_ALREADY, Refused, authenticated, fresh_until
from .protocol import Community
from .urls import RelayNames

if TYPE_CHECKING:
    from .backend import DatabaseBackend

__all__ = ["CONTENT_TYPE", "Management"]

log = logging.getLogger("buzz_relay.management")
# The refusal of a write while the community's lists run ahead of the clock (BZLAG): 503.
LAGGING = "error: too many membership changes right now; try again in a minute"

CONTENT_TYPE = "application/nostr+json+rpc"


Method = Callable[[Community, Caller, list[Any]], Awaitable[Any]]


def _refuse_if_spared(caller: Caller, outcome: str) -> None:
    """A delegate's removal or ban that the database refused because it reached the owner or
    an admin (or, for a branch, one in it)."""
    if outcome == "admin_spared" or (caller.delegate and outcome == "is_owner"):
        raise Refused(
            403, "restricted: a member with assigned methods cannot act on the owner or an admin"
        )


class Management:
    """NIP-86 for one community over the SQL API.

    key: the relay key, which seals the claims createclaim makes and opens them for
    listclaims.
    claim_max_uses, claim_ttl_seconds: what createclaim makes when its params do not say.
    """

    def __init__(
        self,
        backend: DatabaseBackend,
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
            return 200, {"result": await self._methods[name](community, caller, params)}
        except Refused as refused:
            return refused.status, {"error": str(refused)}
        except InvalidArgument as exc:
            return 400, {"error": f"invalid params: {nip86_params.in_our_words(str(exc))}"}
        except CommunityArchived:
            return 400, {"error": answer("archived")}
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

    async def _supportedmethods(self, community: Community, caller: Caller, params: list[Any]):
        # As NIP-86 says: the other methods (those this caller may call).
        return [
            m
            for m in self._methods
            if m != "supportedmethods" and may_call(caller.role, m, caller.assigned)
        ]

    # Members and bans ---------------------------------------------------------------

    async def _allowpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = nip86_params.pubkey_and_reason(params)
        await self.backend.add_relay_member(community.id, pubkey, caller.pubkey)
        return True

    async def _unallowpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = nip86_params.pubkey_and_reason(params)
        outcome = await self.backend.remove_relay_member(
            community.id, pubkey, spare_admins=caller.delegate
        )
        _refuse_if_spared(caller, outcome)
        if outcome == "is_owner":
            raise Refused(
                400, "restricted: the owner cannot be disallowed (transfer ownership first)"
            )
        return True

    async def _listallowedpubkeys(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"pubkey": m.pubkey, "reason": m.role} for m in await self.backend.relay_members(community.id)
        ]

    async def _banpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, reason = nip86_params.pubkey_and_reason(params)
        outcome = await self.backend.ban_pubkey(
            community.id, pubkey, reason, caller.pubkey, spare_admins=caller.delegate
        )
        _refuse_if_spared(caller, outcome)
        if outcome == "is_owner":
            raise Refused(400, "restricted: the owner cannot be banned (transfer ownership first)")
        return True

    async def _unbanpubkey(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = nip86_params.pubkey_and_reason(params)
        await self.backend.unban_pubkey(community.id, pubkey)
        return True

    async def _listbannedpubkeys(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"pubkey": b.pubkey, "reason": b.reason} for b in await self.backend.banned_pubkeys(community.id)
        ]

    # The community's profile and join policy ---------------------------------------

    def _profile_setter(self, field: str) -> Method:
        async def change(community: Community, caller: Caller, params: list[Any]) -> bool:
            nip86_params.arity(params, 1, 1, f"[{field}]")
            # A client clearing a field sends ""; the database clears it with NULL.
            value = nip86_params.text(params[0], f"the {field}", optional=True) or None
            await self.backend.set_community_profile(community.id, field, value)
            return True

        return change

    async def _setjoinpolicy(self, community: Community, caller: Caller, params: list[Any]):
        nip86_params.arity(params, 1, 1, "[invite, request or open]")
        await self.backend.set_join_policy(community.id, nip86_params.text(params[0], "the policy"))
        return True

    # Claims and invites ---------------------------------------------------------------

    async def _createclaim(self, community: Community, caller: Caller, params: list[Any]):
        shape = "[claim, max uses, ttl seconds]"
        nip86_params.arity(params, 1, 3, shape)
        claim = nip86_params.claim(params, shape)
        max_uses, ttl = [*params[1:], None, None][:2]
        max_uses = nip86_params.bounded(max_uses, self.claim_max_uses, (1, MAX_INVITE_USES), "max uses")
        ttl = nip86_params.bounded(ttl, self.claim_ttl_seconds, TTL_SECONDS, "ttl seconds")
        try:
            await self.backend.create_relay_invite(
                community.id, caller.pubkey, max_uses, ttl, code=claim, sealed=self.key.seal(claim)
            )
        except InviteQuotaExhausted:
            # The caller's quota (SPEC §3): none left, or fewer than the uses asked for.
            left = await self.backend.invites_left(community.id, caller.pubkey)
            if not left:
                raise Refused(403, answer("no_invites_left")) from None
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
        for invite in reversed(await self.backend.relay_invites(community.id)):
            if invite.sealed is None or not nip86_params.is_live(invite, now):
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
        nip86_params.arity(params, 1, 1, "[claim]")
        # Codes are compared without regard to case, as claim_relay_invite compares them.
        wanted = nip86_params.claim(params, "[claim]").lower()
        for invite, claim in await self._live_claims(community):
            if claim.lower() == wanted:
                return await self.backend.revoke_relay_invite(community.id, invite.invite_id) == "revoked"
        return False

    async def _listinvites(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {
                "id": str(i.invite_id),
                "created_by": i.created_by,
                "created_at": nip86_params.unix(i.created_at),
                "expires_at": nip86_params.unix(i.expires_at),
                "use_count": i.use_count,
                "max_uses": i.max_uses,
            }
            for i in await self.backend.relay_invites(community.id)
        ]

    async def _revokeinvite(self, community: Community, caller: Caller, params: list[Any]):
        # By id, for the invites no claim names (28935's one-use invites, claims sealed to a
        # rotated key): deleteclaim cannot reach them.
        nip86_params.arity(params, 1, 1, "[invite id]")
        try:
            invite_id = uuid.UUID(params[0]) if isinstance(params[0], str) else None
        except ValueError:
            invite_id = None
        if invite_id is None:
            raise Refused(400, "invalid params: [invite id], the id a UUID as listinvites gives")
        return await self.backend.revoke_relay_invite(community.id, invite_id) == "revoked"

    # Join requests: the events needing moderation -----------------------------------

    async def _listeventsneedingmoderation(
        self, community: Community, caller: Caller, params: list[Any]
    ):
        # NIP-86's id and reason, and beside them who asks and their note as fields of their
        # own, so that a client never reads them back out of the reason's words.
        return [
            {
                "id": r.request_id,
                "reason": nip86_params.request_reason(r),
                "pubkey": r.pubkey,
                "note": r.note,
            }
            for r in await self.backend.join_requests(community.id)
        ]

    async def _allowevent(self, community: Community, caller: Caller, params: list[Any]):
        request_id, _ = nip86_params.event_id_and_reason(params)
        outcome = await self.backend.approve_join_request(community.id, request_id, caller.pubkey)
        if outcome == "not_found":
            raise Refused(400, "invalid params: that id is not a pending join request")
        if outcome == "banned":
            raise Refused(
                400, "restricted: that requester is banned (allowpubkey lifts the ban and adds)"
            )
        return True

    async def _banevent(self, community: Community, caller: Caller, params: list[Any]):
        event_id, reason = nip86_params.event_id_and_reason(params)
        # A pending join request is an event needing moderation: banning it rejects it. Any
        # other event is banned behind the gate (dropped from the upstream's answers, refused
        # when published).
        if await self.backend.reject_join_request(community.id, event_id, reason) == "not_found":
            await self.backend.ban_event(community.id, event_id, reason, caller.pubkey)
        return True

    # Moderation behind the gate: events, kinds, addresses, assigned methods ---------

    async def _unbanevent(self, community: Community, caller: Caller, params: list[Any]):
        event_id, _ = nip86_params.event_id_and_reason(params)
        await self.backend.unban_event(community.id, event_id)
        return True

    async def _listbannedevents(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"id": event_id, "reason": reason}
            for event_id, reason in await self.backend.banned_events(community.id)
        ]

    def _kind_setter(self, allowed: bool | None) -> Method:
        async def move(community: Community, caller: Caller, params: list[Any]) -> bool:
            await self.backend.set_kind_rule(community.id, nip86_params.kind(params), allowed)
            return True

        return move

    def _kind_lister(self, allowed: bool) -> Method:
        async def listing(community: Community, caller: Caller, params: list[Any]) -> list[int]:
            rules = await self.backend.kind_rules(community.id)
            return [kind for kind, is_allowed in rules if is_allowed is allowed]

        return listing

    async def _blockip(self, community: Community, caller: Caller, params: list[Any]):
        network, reason = nip86_params.network_and_reason(params)
        await self.backend.block_ip(community.id, network, reason, caller.pubkey)
        return True

    async def _unblockip(self, community: Community, caller: Caller, params: list[Any]):
        network, _ = nip86_params.network_and_reason(params)
        await self.backend.unblock_ip(community.id, network)
        return True

    async def _listblockedips(self, community: Community, caller: Caller, params: list[Any]):
        return [
            {"ip": nip86_params.address_text(network), "reason": reason}
            for network, reason in await self.backend.blocked_ips(community.id)
        ]

    async def _assignmethod(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, method = nip86_params.member_and_method(params)
        # A method never assigned, or none of this relay's: 22023 from the database (400).
        outcome = await self.backend.assign_method(community.id, pubkey, method, caller.pubkey)
        if outcome == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        return True

    async def _unassignmethod(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, method = nip86_params.member_and_method(params)
        await self.backend.unassign_method(community.id, pubkey, method)
        return True

    async def _listmethodassignees(self, community: Community, caller: Caller, params: list[Any]):
        methods: dict[str, list[str]] = {}
        for pubkey, method in await self.backend.method_assignees(community.id):
            methods.setdefault(pubkey, []).append(method)
        return [{"pubkey": pubkey, "methods": held} for pubkey, held in methods.items()]

    # Roles (SPEC §6) ------------------------------------------------------------------

    async def _createrole(self, community: Community, caller: Caller, params: list[Any]):
        role, *definition = nip86_params.role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=False)
        if outcome == "exists":
            raise Refused(
                400,
                f"invalid params: role {role[:64]!r} is defined already; change it with editrole",
            )
        return True

    async def _editrole(self, community: Community, caller: Caller, params: list[Any]):
        role, *definition = nip86_params.role_definition(params)
        outcome = await self.backend.define_role(community.id, role, *definition, exists=True)
        if outcome == "not_found":
            raise Refused(
                400, f"invalid params: there is no role {role[:64]!r}; define it with createrole"
            )
        return True

    async def _deleterole(self, community: Community, caller: Caller, params: list[Any]):
        nip86_params.arity(params, 1, 1, "[role id]")
        role = nip86_params.text(params[0], "the role id")
        return await self.backend.delete_role(community.id, role) == "deleted"

    async def _assignrole(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, role = nip86_params.member_and_role(params)
        if await self.backend.assign_role(community.id, pubkey, role) == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        return True

    async def _unassignrole(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, role = nip86_params.member_and_role(params)
        await self.backend.unassign_role(community.id, pubkey, role)
        return True

    async def _listroles(self, community: Community, caller: Caller, params: list[Any]):
        return [nip86_params.role_listing(ev) for ev in await self.backend.role_definitions(community.id)]

    async def _setmemberrole(self, community: Community, caller: Caller, params: list[Any]):
        # NIP-86 has no method for the base role; the community's page needs one.
        if len(params) != 2 or not isinstance(params[0], str):
            raise Refused(400, "invalid params: [pubkey (64 hex characters), admin or member]")
        pubkey = nip86_params.pubkey(params)
        role = nip86_params.text(params[1], "the role")
        outcome = await self.backend.update_relay_member_role(community.id, pubkey, role)
        if outcome == "not_member":
            raise Refused(400, "invalid params: that pubkey is not a member (allowpubkey it first)")
        if outcome == "is_owner":
            raise Refused(
                400, "restricted: the owner's role changes only by a transfer of ownership"
            )
        return outcome

    # Invitations: quotas and branches (SPEC §3), our extensions ------------------------

    async def _removebranch(self, community: Community, caller: Caller, params: list[Any]):
        pubkey, _ = nip86_params.pubkey_and_reason(params)
        outcome, removed = await self.backend.remove_branch(
            community.id, pubkey, spare_admins=caller.delegate
        )
        _refuse_if_spared(caller, outcome)
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
