"""The guard between the database and the relay key.

The database prepares events and asks for signatures. A database that is compromised or
buggy must not be able to make the relay sign anything but a well-formed event of its own
(NIP-43 membership, SPEC section 2; role definitions and their deletions, section 6): so
every prepared event is parsed and checked in full, in its one canonical byte form, before
any of them is signed.

The checks (EventShapes) need only a public key, so `buzz-admin verify` uses them too, on
the live events: the shapes are written once, here.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from .keys import RelayKey
from .nostr import (
    KIND_ADD_USER,
    KIND_DELETION,
    KIND_INVITE,
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    KIND_ROLE,
    event_id,
    is_lower_hex,
    serialize_event,
)

__all__ = [
    "BASE_ROLES",
    "EventShapes",
    "MembersOutOfOrder",
    "PreparedEvent",
    "RefusedToSign",
    "Signer",
    "is_role_id",
    "signed_event",
]

_KINDS = frozenset((KIND_MEMBERSHIP_LIST, KIND_ADD_USER, KIND_REMOVE_USER))
BASE_ROLES = frozenset(("owner", "admin", "member"))
# SPEC section 6. fullmatch, never match with $ (which also matches before a final newline).
_ROLE_ID = re.compile(r"[a-z0-9_-]{1,64}")
# The canonical text of a 13534 list, in pieces (see EventShapes._check_list).
_MEMBER_TAG = ',["member","'
_ROLE_ENDINGS = frozenset(f'","{role}"]' for role in BASE_ROLES)
_OWNER_ENDING = '","owner"]'
# The ending of a member who holds defined roles: base role, then role ids (no escapes).
_ROLES_ENDING = re.compile(r'","(?:owner|admin|member)"(?:,"[a-z0-9_-]{1,64}")+\]')
_OWNER_WITH_ROLES = '","owner",'
_LIST_TAIL = '],""]'
# A member tag's text after ',["member","' is the pubkey, then the role's ending.
_PUBKEY = operator.itemgetter(slice(0, 64))
_AFTER_PUBKEY = operator.itemgetter(slice(64, None))
# The canonical text of an 8000/8001 event: head, 64 lowercase hex (the p tag), tail.
_USER_KINDS = frozenset((KIND_ADD_USER, KIND_REMOVE_USER))
_USER_TAGS_HEAD = '[["-"],["p","'
_USER_TAIL = '"]],""]'
# A 33534 definition's optional tags, in their one order, and their values: no control
# character in text; numbers in canonical decimal, [0-9] and not \d (Unicode digits).
_ROLE_FIELDS = ("label", "description", "color", "order")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_COLOR = re.compile("0|[1-9][0-9]{0,2}")
_ORDER = re.compile("0|-?[1-9][0-9]{0,9}")
_INT32 = range(-(2**31), 2**31)
# The canonical text of a kind 5 deletion ends with the role id, then this.
_DELETION_TAIL = f'"],["k","{KIND_ROLE}"]],""]'


@dataclass(frozen=True)
class PreparedEvent:
    """One row of `buzz.prepare_membership_events`: an unsigned event and its id."""

    community_id: str
    id: str
    kind: int
    created_at: int
    serialized: str


def signed_event(ev: PreparedEvent, sig: str) -> dict[str, Any]:
    """The NIP-01 object of a prepared event (its serialized form) and its signature."""
    _zero, pubkey, created_at, kind, tags, content = json.loads(ev.serialized)
    return {
        "id": ev.id,
        "pubkey": pubkey,
        "created_at": created_at,
        "kind": kind,
        "tags": tags,
        "content": content,
        "sig": sig,
    }


class RefusedToSign(Exception):
    """A prepared event is not one the relay signs; the message says what is wrong."""


class MembersOutOfOrder(RefusedToSign):
    """A membership list, well-formed but for its member tags' pubkey order."""


def _label(ev: PreparedEvent) -> str:
    # The id comes from the database and may be garbage: bound what we echo.
    shown = ev.id if is_lower_hex(ev.id, 64) else repr(ev.id)[:80]
    return f"event {shown}"


def is_role_id(value: object) -> bool:
    """A role id of SPEC section 6: 1-64 characters of [a-z0-9_-]."""
    return type(value) is str and _ROLE_ID.fullmatch(value) is not None


def _defined_roles_fault(ending: str) -> str | None:
    """What is wrong with a member tag's text after its pubkey, if it is not a base role alone.

    It must be `","<base>"`, then `,"<role id>"` ascending (str order is byte order for
    these ids, as COLLATE "C" in the database), none of them a base role, then `]`.
    """
    if not _ROLES_ENDING.fullmatch(ending):
        return 'is not ["member", pubkey, role, role id...] with role ids of 1-64 [a-z0-9_-]'
    ids = ending[3:-2].split('","')[1:]
    for prev, role in pairwise(ids):
        if prev >= role:
            return f"repeats defined role {role}" if prev == role else "has roles out of order"
    base = BASE_ROLES.intersection(ids)
    return f"has {min(base)}, a base role, as a defined role" if base else None


def _role_field_fault(name: str, value: object) -> str | None:
    """What is wrong with the value of a 33534 label, description, color or order tag."""
    if type(value) is not str:
        return "is not text"
    if name == "label":
        if not 1 <= len(value) <= 64 or _CONTROL.search(value):
            return "must be 1-64 characters, none of them a control character"
    elif name == "description":
        if len(value) > 500 or _CONTROL.search(value):
            return "must be at most 500 characters, none of them a control character"
    elif name == "color":
        if not _COLOR.fullmatch(value) or int(value) > 360:
            return "must be an integer 0-360 in canonical decimal"
    elif not _ORDER.fullmatch(value) or int(value) not in _INT32:
        return "must be a 32-bit integer in canonical decimal"
    return None


class EventShapes:
    """The shapes of SPEC sections 2 and 6 for the events of one key: the checking part of the
    Signer, which needs only the public key.

    The Signer refuses to sign anything that `check` refuses; `buzz-admin verify` asks the
    same of each live event, by the event's own key (which key signed is a problem of its own).
    `author` names the key in refusals ("the relay's key", or e.g. "its own key").
    """

    def __init__(self, pubkey: str, *, author: str = "the relay's key") -> None:
        if not is_lower_hex(pubkey, 64):
            raise ValueError("pubkey is not 64 lowercase hex characters")
        self._pubkey = pubkey
        self._author = author

    @property
    def pubkey(self) -> str:
        """The only author whose events pass."""
        return self._pubkey

    def check(self, ev: PreparedEvent, *, what: str | None = None) -> None:
        """Return if `ev` is well-formed, else raise RefusedToSign (MembersOutOfOrder for a list
        whose only fault is its order), its message starting with `what` (default: its id)."""
        what = _label(ev) if what is None else what
        serialized = ev.serialized
        if type(serialized) is not str:
            raise RefusedToSign(f"{what}: serialized is not text")
        try:
            digest = event_id(serialized)
        except UnicodeEncodeError:
            raise RefusedToSign(f"{what}: serialized is not valid UTF-8 text") from None
        if digest != ev.id:
            raise RefusedToSign(f"{what}: sha256 of serialized is {digest}, not the given id")
        if type(ev.created_at) is not int or ev.created_at < 0:
            raise RefusedToSign(f"{what}: created_at is not a non-negative integer")
        kind = ev.kind if type(ev.kind) is int else None  # 13534.0 == 13534, True == 1
        if kind == KIND_MEMBERSHIP_LIST:
            self._check_list(what, ev)
        elif kind == KIND_ROLE:
            self._check_role(what, ev)
        elif kind == KIND_DELETION:
            self._check_deletion(what, ev)
        else:
            self._check_user_event(what, ev)

    def _check_list(self, what: str, ev: PreparedEvent) -> None:
        """A kind 13534 list, checked on its one canonical text.

        A list can have 10,000 members (870 kB), so rather than parse JSON and serialize it
        again to prove the form canonical, the text is read as exactly what a canonical list
        is: the head, ["-"], then `,["member","<64 lowercase hex>","<role>"]` repeated with
        pubkeys strictly increasing and one owner at most, then `],""]`. Anything else fails.
        The checks run over the whole list at once (split, join, sort), not member by member.
        A member with defined roles (`,"<role id>"` before the `]`, ascending) is the rare
        case: only those endings take the slower path, `_check_defined_roles`.
        """
        text = ev.serialized
        head = f'[0,"{self._pubkey}",{ev.created_at},{KIND_MEMBERSHIP_LIST},[["-"]'
        if not text.startswith(head):
            raise RefusedToSign(
                f"{what}: not a membership list by {self._author} {self._pubkey} at its "
                'created_at, with ["-"] as first tag'
            )
        if not text.endswith(_LIST_TAIL) or len(text) < len(head) + len(_LIST_TAIL):
            raise RefusedToSign(f"{what}: a membership list must end its tags with empty content")
        body = text[len(head) : len(text) - len(_LIST_TAIL)]
        if not body:
            return
        chunks = body.split(_MEMBER_TAG)
        if chunks[0]:
            raise RefusedToSign(f'{what}: tag 1 is not ["member", pubkey, role]')
        del chunks[0]
        # map over slices runs in C: at 10,000 members about half the cost of comprehensions.
        endings = list(map(_AFTER_PUBKEY, chunks))
        owners = endings.count(_OWNER_ENDING)
        with_roles = set(endings) - _ROLE_ENDINGS
        if with_roles:
            owners += self._check_defined_roles(what, endings, with_roles)
        if owners > 1:
            raise RefusedToSign(f"{what}: more than one owner")
        pubkeys = list(map(_PUBKEY, chunks))
        joined = "".join(pubkeys)
        try:
            # fromhex skips whitespace (then fewer bytes come out) and takes uppercase.
            is_hex = len(bytes.fromhex(joined)) * 2 == len(joined) == 64 * len(pubkeys)
        except ValueError:
            is_hex = False
        if not is_hex or joined != joined.lower():
            raise RefusedToSign(f"{what}: a member pubkey is not 64 lowercase hex characters")
        if not all(map(operator.lt, pubkeys, pubkeys[1:])):
            bad = next(i for i in range(1, len(pubkeys)) if pubkeys[i - 1] >= pubkeys[i])
            raise MembersOutOfOrder(
                f"{what}: tag {bad + 1} is not in strictly increasing pubkey order"
            )

    @staticmethod
    def _check_defined_roles(what: str, endings: list[str], with_roles: set[str]) -> int:
        """Check the distinct member tag endings that are not a plain base role (each once;
        a tag number is looked up only to refuse); return how many tags they make owners."""
        faults = {e: f for e in with_roles if (f := _defined_roles_fault(e))}
        if faults:
            first = min(endings.index(e) for e in faults)
            raise RefusedToSign(f"{what}: tag {first + 1} {faults[endings[first]]}")
        return sum(endings.count(e) for e in with_roles if e.startswith(_OWNER_WITH_ROLES))

    def _check_role(self, what: str, ev: PreparedEvent) -> None:
        """A kind 33534 role definition: parsed, checked field by field, then proved canonical.

        Definitions are small and rare, so unlike a list they are parsed as JSON; the text
        must then be byte for byte serialize_event of what was parsed (which is what the
        database's to_json makes of the label and description).
        """
        tags, content = self._parsed(what, ev)
        if content != "":
            raise RefusedToSign(f"{what}: content must be empty")
        if type(tags) is not list or len(tags) < 2 or tags[0] != ["-"]:
            raise RefusedToSign(
                f'{what}: tags must start with ["-"], ["d", role id] in a role definition'
            )
        d = tags[1]
        if type(d) is not list or len(d) != 2 or d[0] != "d" or not is_role_id(d[1]):
            raise RefusedToSign(
                f'{what}: tag 1 is not ["d", role id] with a role id of 1-64 [a-z0-9_-]'
            )
        last = -1
        for i, tag in enumerate(tags[2:], 2):
            if type(tag) is not list or len(tag) != 2 or tag[0] not in _ROLE_FIELDS:
                raise RefusedToSign(
                    f"{what}: tag {i} is not [name, text] with name label, description, color "
                    "or order"
                )
            name, value = tag
            place = _ROLE_FIELDS.index(name)
            if place <= last:
                raise RefusedToSign(
                    f"{what}: tag {i}: {name} repeated or out of order (label, description, "
                    "color, order)"
                )
            last = place
            fault = _role_field_fault(name, value)
            if fault:
                raise RefusedToSign(f"{what}: tag {i}: {name} {fault}")
        if serialize_event(self._pubkey, ev.created_at, KIND_ROLE, tags, "") != ev.serialized:
            raise RefusedToSign(f"{what}: serialized is not in canonical NIP-01 form")

    def _check_deletion(self, what: str, ev: PreparedEvent) -> None:
        """A kind 5 deletion of one of our role definitions, checked on its canonical text.

        The one text accepted: `[0,"<relay pubkey>",<created_at>,5,[["-"],["a","33534:<relay
        pubkey>:<role id>"],["k","33534"]],""]`. Anything else is explained (`_explain_deletion`).
        """
        text = ev.serialized
        head = (
            f'[0,"{self._pubkey}",{ev.created_at},{KIND_DELETION},'
            f'[["-"],["a","{KIND_ROLE}:{self._pubkey}:'
        )
        if (
            len(text) > len(head) + len(_DELETION_TAIL)
            and text.startswith(head)
            and text.endswith(_DELETION_TAIL)
            and _ROLE_ID.fullmatch(text, len(head), len(text) - len(_DELETION_TAIL))
        ):
            return
        self._explain_deletion(what, ev)

    def _explain_deletion(self, what: str, ev: PreparedEvent) -> None:
        """Raise RefusedToSign saying what is wrong with a kind 5 `_check_deletion` refused."""
        tags, content = self._parsed(what, ev)
        if content != "":
            raise RefusedToSign(f"{what}: content must be empty")
        shape = f'[["-"], ["a", "{KIND_ROLE}:<relay pubkey>:<role id>"], ["k", "{KIND_ROLE}"]]'
        if (
            type(tags) is not list
            or len(tags) != 3
            or tags[0] != ["-"]
            or type(tags[1]) is not list
            or len(tags[1]) != 2
            or tags[1][0] != "a"
            or type(tags[1][1]) is not str
            or tags[2] != ["k", str(KIND_ROLE)]
        ):
            raise RefusedToSign(f"{what}: a deletion's tags must be exactly {shape}")
        kind, _, rest = tags[1][1].partition(":")
        pubkey, _, role = rest.partition(":")
        if kind != str(KIND_ROLE):
            raise RefusedToSign(f"{what}: the a tag does not address a kind {KIND_ROLE} event")
        if pubkey != self._pubkey:
            raise RefusedToSign(f"{what}: the a tag does not address an event of {self._author}")
        if not is_role_id(role):
            raise RefusedToSign(f"{what}: the a tag's role id is not 1-64 [a-z0-9_-]")
        raise RefusedToSign(f"{what}: serialized is not in canonical NIP-01 form")

    def _parsed(self, what: str, ev: PreparedEvent) -> tuple[Any, Any]:
        """Parse an event to check it field by field; return its tags and content.

        The pubkey must be ours, created_at and kind those of the row.
        """
        try:
            arr = json.loads(ev.serialized)
        except ValueError:  # JSONDecodeError, and integers past int_max_str_digits
            raise RefusedToSign(f"{what}: serialized is not JSON") from None
        except RecursionError:
            raise RefusedToSign(f"{what}: serialized is nested too deeply") from None
        if type(arr) is not list or len(arr) != 6:
            raise RefusedToSign(f"{what}: not a 6-element NIP-01 array")
        zero, pubkey, created_at, kind, tags, content = arr
        if type(zero) is not int or zero != 0:
            raise RefusedToSign(f"{what}: the array does not start with 0")
        if pubkey != self._pubkey:
            raise RefusedToSign(f"{what}: pubkey is not {self._author} {self._pubkey}")
        if type(created_at) is not int or created_at != ev.created_at:
            raise RefusedToSign(f"{what}: created_at does not match the prepared row")
        if type(kind) is not int or type(ev.kind) is not int or kind != ev.kind:
            raise RefusedToSign(f"{what}: kind does not match the prepared row")
        return tags, content

    def _check_user_event(self, what: str, ev: PreparedEvent) -> None:
        """8000/8001 (and anything else, to be refused), checked on its one canonical text.

        The only text accepted is `[0,"<relay pubkey>",<created_at>,<kind>,[["-"],["p",
        "<64 lowercase hex>"]],""]` with created_at and kind those of the row and kind 8000
        or 8001: byte for byte what serialize_event makes of such an event, so the id we
        sign is exactly the bytes checked (no whitespace, escapes or other number forms).
        """
        kind = ev.kind
        if type(kind) is int and kind in _USER_KINDS:
            text = ev.serialized
            head = f'[0,"{self._pubkey}",{ev.created_at},{kind},{_USER_TAGS_HEAD}'
            end = len(head) + 64
            if (
                len(text) == end + len(_USER_TAIL)
                and text.startswith(head)
                and text.endswith(_USER_TAIL)
                and is_lower_hex(text[len(head) : end], 64)
            ):
                return
        self._explain_user_event(what, ev)

    def _explain_user_event(self, what: str, ev: PreparedEvent) -> None:
        """Raise RefusedToSign saying what is wrong with an event `_check_user_event` refused.

        Only reached for refused events, so it can afford to parse the JSON to name the
        field at fault. It never accepts: whatever it finds no fault in is still refused.
        """
        tags, content = self._parsed(what, ev)
        kind = ev.kind
        if kind not in _KINDS:
            raise RefusedToSign(f"{what}: kind {kind} is not a NIP-43 membership kind")
        if kind == KIND_MEMBERSHIP_LIST:  # a list whose row claims another kind
            raise RefusedToSign(f"{what}: kind does not match the prepared row")
        if content != "":
            raise RefusedToSign(f"{what}: content must be empty")
        self._check_user_tags(what, tags)
        # Every field is right, so the bytes are not the canonical form (whitespace,
        # escapes or number forms that a client might read differently).
        raise RefusedToSign(f"{what}: serialized is not in canonical NIP-01 form")

    @staticmethod
    def _check_user_tags(what: str, tags: list[Any]) -> None:
        """8000/8001: exactly [["-"], ["p", pubkey]]."""
        if (
            type(tags) is not list
            or len(tags) != 2
            or tags[0] != ["-"]
            or type(tags[1]) is not list
            or len(tags[1]) != 2
            or tags[1][0] != "p"
            or not is_lower_hex(tags[1][1], 64)
        ):
            raise RefusedToSign(f'{what}: tags must be exactly [["-"], ["p", pubkey]]')


class Signer:
    """Checks prepared events against the shapes of SPEC sections 2 and 6 (EventShapes of the
    relay key); signs them."""

    def __init__(self, key: RelayKey) -> None:
        self._key = key
        self._pubkey = key.pubkey
        self._shapes = EventShapes(key.pubkey)

    @property
    def pubkey(self) -> str:
        """The relay's public key: the only author this signer signs for."""
        return self._pubkey

    def check(self, ev: PreparedEvent) -> list[Any]:
        """Return the parsed NIP-01 array if `ev` may be signed, else raise RefusedToSign."""
        self._shapes.check(ev)
        return json.loads(ev.serialized)

    def invite(self, code: str, requester: str, expiration: int, created_at: int) -> dict[str, Any]:
        """A kind 28935 invite for `requester`, signed: built here, never by the database.

        SPEC section 7's one shape: tags ["-"], ["claim", code], ["p", requester],
        ["expiration", unix time], content "". The code is the 32 hex of create_relay_invite;
        anything else is refused, so a database answer cannot put other text under our key.
        """
        if not is_lower_hex(code, 32):
            raise RefusedToSign("invite: the claim code is not 32 lowercase hex characters")
        if not is_lower_hex(requester, 64):
            raise RefusedToSign("invite: the requester is not a 64 lowercase hex pubkey")
        for name, value in (("expiration", expiration), ("created_at", created_at)):
            if type(value) is not int or value < 0:
                raise RefusedToSign(f"invite: {name} is not a non-negative integer")
        tags = [["-"], ["claim", code], ["p", requester], ["expiration", str(expiration)]]
        serialized = serialize_event(self._pubkey, created_at, KIND_INVITE, tags, "")
        ev = PreparedEvent("", event_id(serialized), KIND_INVITE, created_at, serialized)
        return signed_event(ev, self._key.sign(ev.id))

    def sign_all(self, events: Sequence[PreparedEvent]) -> list[str]:
        """Check every event, then sign them all; return the sigs in the same order.

        Nothing is signed unless every event passes. The signatures are not verified here:
        insert_signed_events verifies each one (BIP-340, for the recorded relay key) before it
        stores anything, so a faulty key or library is refused there (BZSIG), once.
        """
        events = list(events)
        check = self._shapes.check
        for ev in events:
            check(ev)
        sign = self._key.sign
        return [sign(ev.id, verify=False) for ev in events]
