"""The guard between the database and the relay key.

The database prepares events and asks for signatures. A database that is compromised or
buggy must not be able to make the relay sign anything but a well-formed NIP-43 event of
its own: so every prepared event is parsed and checked in full, in its one canonical byte
form, before any of them is signed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .keys import RelayKey
from .nostr import (
    KIND_ADD_USER,
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    event_id,
    is_lower_hex,
    serialize_event,
    verify_signature,
)

__all__ = ["PreparedEvent", "RefusedToSign", "Signer"]

_KINDS = frozenset((KIND_MEMBERSHIP_LIST, KIND_ADD_USER, KIND_REMOVE_USER))
_ROLES = ("owner", "admin", "member")


@dataclass(frozen=True)
class PreparedEvent:
    """One row of `buzz.prepare_membership_events`: an unsigned event and its id."""

    community_id: str
    id: str
    kind: int
    created_at: int
    serialized: str


class RefusedToSign(Exception):
    """A prepared event is not one the relay signs; the message says what is wrong."""


def _label(ev: PreparedEvent) -> str:
    # The id comes from the database and may be garbage: bound what we echo.
    shown = ev.id if is_lower_hex(ev.id, 64) else repr(ev.id)[:80]
    return f"event {shown}"


class Signer:
    """Checks prepared events against the NIP-43 shapes and signs them with the relay key."""

    def __init__(self, key: RelayKey) -> None:
        self._key = key
        self._pubkey = key.pubkey

    @property
    def pubkey(self) -> str:
        """The relay's public key: the only author this signer signs for."""
        return self._pubkey

    def check(self, ev: PreparedEvent) -> list[Any]:
        """Return the parsed NIP-01 array if `ev` may be signed, else raise RefusedToSign."""
        what = _label(ev)
        serialized = ev.serialized
        if type(serialized) is not str:
            raise RefusedToSign(f"{what}: serialized is not text")
        try:
            digest = event_id(serialized)
        except UnicodeEncodeError:
            raise RefusedToSign(f"{what}: serialized is not valid UTF-8 text") from None
        if digest != ev.id:
            raise RefusedToSign(f"{what}: sha256 of serialized is {digest}, not the given id")
        try:
            arr = json.loads(serialized)
        except ValueError:  # JSONDecodeError
            raise RefusedToSign(f"{what}: serialized is not JSON") from None
        except RecursionError:
            raise RefusedToSign(f"{what}: serialized is nested too deeply") from None
        if type(arr) is not list or len(arr) != 6:
            raise RefusedToSign(f"{what}: not a 6-element NIP-01 array")
        zero, pubkey, created_at, kind, tags, content = arr
        if type(zero) is not int or zero != 0:
            raise RefusedToSign(f"{what}: the array does not start with 0")
        if pubkey != self._pubkey:
            raise RefusedToSign(f"{what}: pubkey is not the relay's key {self._pubkey}")
        if type(created_at) is not int or created_at != ev.created_at or created_at < 0:
            raise RefusedToSign(f"{what}: created_at does not match the prepared row")
        if type(kind) is not int or kind != ev.kind:
            raise RefusedToSign(f"{what}: kind does not match the prepared row")
        if kind not in _KINDS:
            raise RefusedToSign(f"{what}: kind {kind} is not a NIP-43 membership kind")
        if content != "":
            raise RefusedToSign(f"{what}: content must be empty")
        if type(tags) is not list:
            raise RefusedToSign(f"{what}: tags is not an array")
        if kind == KIND_MEMBERSHIP_LIST:
            self._check_list_tags(what, tags)
        else:
            self._check_user_tags(what, tags)
        # Last, because it costs as much as the parse: one canonical byte form means the
        # id we sign is exactly the bytes we checked (no whitespace, escapes or number forms
        # that a client might read differently).
        try:
            canonical = serialize_event(pubkey, created_at, kind, tags, content)
        except (TypeError, ValueError):
            raise RefusedToSign(f"{what}: cannot be re-serialized") from None
        if canonical != serialized:
            raise RefusedToSign(f"{what}: serialized is not in canonical NIP-01 form")
        return arr

    @staticmethod
    def _check_list_tags(what: str, tags: list[Any]) -> None:
        """13534: ["-"], then ["member", pubkey, role] strictly by pubkey, one owner at most."""
        # ["-"] is NIP-70's protected tag: relays accept the event only from its author.
        if not tags or tags[0] != ["-"]:
            raise RefusedToSign(f'{what}: the first tag of a membership list must be ["-"]')
        prev = ""
        owners = 0
        # One pass, inlined: it runs once per member, up to 10,000 times per list.
        for i, tag in enumerate(tags[1:], 1):
            if type(tag) is not list or len(tag) != 3:
                raise RefusedToSign(f'{what}: tag {i} is not ["member", pubkey, role]')
            head, pk, role = tag
            if head != "member":
                raise RefusedToSign(f'{what}: tag {i} is not ["member", pubkey, role]')
            if type(pk) is not str or len(pk) != 64:
                raise RefusedToSign(f"{what}: tag {i} has a malformed pubkey")
            try:
                # fromhex skips spaces and accepts uppercase; the round trip rejects both.
                ok = bytes.fromhex(pk).hex() == pk
            except ValueError:
                ok = False
            if not ok:
                raise RefusedToSign(f"{what}: tag {i} has a malformed pubkey")
            if pk <= prev:
                raise RefusedToSign(f"{what}: tag {i} is not in strictly increasing pubkey order")
            # A tuple, not a set: `in` on a set raises TypeError for an unhashable role.
            if role not in _ROLES:
                raise RefusedToSign(f"{what}: tag {i} has an unknown role")
            if role == "owner":
                owners += 1
                if owners > 1:
                    raise RefusedToSign(f"{what}: more than one owner")
            prev = pk

    @staticmethod
    def _check_user_tags(what: str, tags: list[Any]) -> None:
        """8000/8001: exactly [["-"], ["p", pubkey]]."""
        if (
            len(tags) != 2
            or tags[0] != ["-"]
            or type(tags[1]) is not list
            or len(tags[1]) != 2
            or tags[1][0] != "p"
            or not is_lower_hex(tags[1][1], 64)
        ):
            raise RefusedToSign(f'{what}: tags must be exactly [["-"], ["p", pubkey]]')

    def sign_all(self, events: Sequence[PreparedEvent]) -> list[str]:
        """Check every event, then sign them all; return the sigs in the same order.

        Nothing is signed unless every event passes. Each signature is verified before
        it is returned, so a faulty key or library cannot hand the database a bad sig.
        """
        events = list(events)
        for ev in events:
            self.check(ev)
        sigs: list[str] = []
        for ev in events:
            sig = self._key.sign(ev.id)
            if not verify_signature(self._pubkey, sig, ev.id):
                raise RefusedToSign(f"{_label(ev)}: our own signature did not verify; not used")
            sigs.append(sig)
        return sigs
