"""What the membership API answers: the results of writes and reads, and what a transaction
published."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..nostr import KIND_MEMBERSHIP_LIST
from ..signer import PreparedEvent, signed_event

# A community as the API takes it: its id, as a UUID or as text.
Community = uuid.UUID | str


class Published:
    """The signed events of a transaction, in prepare's order, each parsed when first asked for.

    They are built from the very text that was checked and signed, not read back; parsing a
    10,000-member list into Python objects costs about as much as the database's whole part of
    the write, so a caller that never looks at it does not pay for it.
    """

    def __init__(self, prepared: Sequence[PreparedEvent] = (), sigs: Sequence[str] = ()) -> None:
        self.prepared_events = tuple(prepared)
        self._sigs = tuple(sigs)
        self._parsed: list[dict[str, Any] | None] = [None] * len(self.prepared_events)
        self._list_rows = {
            ev.community_id: i
            for i, ev in enumerate(self.prepared_events)
            if ev.kind == KIND_MEMBERSHIP_LIST
        }

    def _event(self, i: int) -> dict[str, Any]:
        parsed = self._parsed[i]
        if parsed is None:
            parsed = self._parsed[i] = signed_event(self.prepared_events[i], self._sigs[i])
        return parsed

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        """Every signed event (lists, 8000, 8001, 33534, 5)."""
        return tuple(self._event(i) for i in range(len(self.prepared_events)))

    @property
    def lists(self) -> dict[str, dict[str, Any]]:
        """The signed list of each community that changed."""
        return {cid: self._event(i) for cid, i in self._list_rows.items()}

    @property
    def snapshot(self) -> dict[str, Any] | None:
        """The one list, when exactly one community changed; else None."""
        if len(self._list_rows) != 1:
            return None
        return self._event(next(iter(self._list_rows.values())))


@dataclass(frozen=True)
class MembershipWrite:
    """What a write call did.

    outcome: the word the SQL function answered ('added', 'already_member', ...) or, for
        the batch functions, the number of rows it changed.
    snapshot: the signed list the call made live for its community, None when it changed
        nothing, or no member tag (define_role), or several communities (a rotation that
        re-signed several leaves it None: their lists are in events).
    events: every signed event of the transaction (lists, 8000, 8001, 33534, 5), in
        prepare's order.
    details: the other columns of table-returning functions (community_id, use_count, ...).
    """

    outcome: Any
    published: Published = field(default_factory=Published, repr=False, compare=False)
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, answer: Any, published: Published | None) -> MembershipWrite:
        """The write of a call that answered `answer` (a word, a count or a row)."""
        outcome, details = answer, {}
        if isinstance(answer, dict):
            details = dict(answer)
            outcome = details.pop("outcome", None)
        return cls(outcome, published or Published(), details)

    @property
    def snapshot(self) -> dict[str, Any] | None:
        return self.published.snapshot

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        return self.published.events


class Invite(NamedTuple):
    invite_id: uuid.UUID
    code: str
    expires_at: dt.datetime


class InviteRecord(NamedTuple):
    """An invite as buzz.relay_invites lists it: everything but its code.

    sealed: what its maker kept with it (the relay's sealed copy of a code it may list,
    RelayKey.unseal opens it), None for the others."""

    invite_id: uuid.UUID
    created_by: str
    created_at: dt.datetime
    expires_at: dt.datetime
    max_uses: int | None
    use_count: int
    sealed: str | None


class CommunityProfile(NamedTuple):
    name: str | None
    description: str | None
    icon: str | None
    join_policy: str  # invite | request | open


class Ban(NamedTuple):
    pubkey: str
    reason: str | None
    banned_by: str | None
    banned_at: dt.datetime


class JoinRequest(NamedTuple):
    request_id: str  # the id of the kind 28934 event that asked
    pubkey: str
    note: str | None
    requested_at: dt.datetime


class Member(NamedTuple):
    pubkey: str
    role: str
    added_by: str | None
    joined_at: dt.datetime
    roles: list[str]  # the defined roles held (SPEC §6), ascending


class CommunityRow(NamedTuple):
    community_id: uuid.UUID
    host: str
    created_at: dt.datetime
    archived_at: dt.datetime | None


class Drift(NamedTuple):
    community_id: uuid.UUID
    problem: str
    detail: str
