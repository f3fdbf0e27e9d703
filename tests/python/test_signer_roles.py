"""The signing guard for SPEC section 6: defined roles in 13534 member tags, kind 33534 role
definitions, and the kind 5 deletions of them; each accepted shape, and its near misses."""

from __future__ import annotations

import itertools
import json
import os
import re
from typing import Any

import nostr_sdk
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from buzz_signer.keys import RelayKey
from buzz_signer.nostr import (
    KIND_ADD_USER,
    KIND_DELETION,
    KIND_MEMBERSHIP_LIST,
    KIND_ROLE,
    event_id,
    serialize_event,
    verify_event,
)
from buzz_signer.signer import PreparedEvent, RefusedToSign, Signer, signed_event

SECRET_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
KEY = RelayKey.from_secret(SECRET_HEX)
RELAY = KEY.pubkey
OTHER = RelayKey.generate().pubkey
T = 1_700_000_000
COMMUNITY = "5f0c6c1e-8a52-4a0e-9d7b-3c2f4e1a9b10"
PKS = sorted(os.urandom(32).hex() for _ in range(4))
A, B, C, D = PKS
ID64 = "a" * 64


def text(kind: int, tags: Any, content: Any = "", *, pubkey: Any = RELAY, at: Any = T) -> str:
    return serialize_event(pubkey, at, kind, tags, content)


def row(ser: str, kind: Any, created_at: Any = T) -> PreparedEvent:
    """A prepared row for `ser`, its id consistent (the guard must still refuse bad text)."""
    return PreparedEvent(COMMUNITY, event_id(ser), kind, created_at, ser)


def role_tags(role: str = "editor", **fields: str) -> list[list[str]]:
    """A 33534's tags: the optional fields in SPEC order, whatever order they are passed in."""
    order = ("label", "description", "color", "order")
    return [["-"], ["d", role], *([f, fields[f]] for f in order if f in fields)]


def deletion_tags(address: str = f"{KIND_ROLE}:{RELAY}:editor") -> list[list[str]]:
    return [["-"], ["a", address], ["k", str(KIND_ROLE)]]


@pytest.fixture
def signer() -> Signer:
    return Signer(KEY)


def assert_signed(signer: Signer, ev: PreparedEvent) -> None:
    """Accepted, signed, and the signed event valid for us and for rust-nostr."""
    arr = signer.check(ev)
    assert serialize_event(*arr[1:]) == ev.serialized
    [sig] = signer.sign_all([ev])
    signed = signed_event(ev, sig)
    assert verify_event(signed)
    assert nostr_sdk.Event.from_json(json.dumps(signed)).verify()


# --- accepted -----------------------------------------------------------------------------

ROLED_LISTS = {
    "owner-with-role": [["-"], ["member", A, "owner", "editor"]],
    "every-base-with-roles": [
        ["-"],
        ["member", A, "owner", "editor"],
        ["member", B, "admin", "editor", "mod"],
        ["member", C, "member", "a", "b", "z"],
    ],
    "mixed-plain-and-roled": [
        ["-"],
        ["member", A, "owner"],
        ["member", B, "member", "mod"],
        ["member", C, "admin"],
        ["member", D, "member"],
    ],
    # '-' < '0' < '9' < '_' < 'a' in bytes, as in COLLATE "C".
    "byte-order": [["-"], ["member", A, "member", "-", "0", "9", "_", "a", "a-", "a0", "a_"]],
    "64-char-id": [["-"], ["member", A, "admin", "0" * 64, ID64]],
    "one-char-ids": [["-"], ["member", A, "member", "-"], ["member", B, "member", "_"]],
    "same-roles-two-members": [["-"], ["member", A, "admin", "mod"], ["member", B, "admin", "mod"]],
    "no-owner-roled": [["-"], ["member", A, "admin", "x"], ["member", B, "admin", "x"]],
}


@pytest.mark.parametrize("tags", ROLED_LISTS.values(), ids=ROLED_LISTS.keys())
def test_accepts_lists_with_defined_roles(signer: Signer, tags: list[list[str]]) -> None:
    ev = row(text(KIND_MEMBERSHIP_LIST, tags), KIND_MEMBERSHIP_LIST)
    assert signer.check(ev) == [0, RELAY, T, KIND_MEMBERSHIP_LIST, tags, ""]
    assert_signed(signer, ev)


_FIELDS = {"label": "Editor", "description": "Edits the wiki", "color": "200", "order": "3"}
_SUBSETS = [
    dict(c) for n in range(len(_FIELDS) + 1) for c in itertools.combinations(_FIELDS.items(), n)
]


@pytest.mark.parametrize("fields", _SUBSETS, ids=lambda f: "+".join(f) or "no-fields")
@pytest.mark.parametrize("role", ["editor", "owner", "admin", "member", "-", "_", "0", ID64])
def test_accepts_role_definitions(signer: Signer, role: str, fields: dict[str, str]) -> None:
    tags = role_tags(role, **fields)
    ev = row(text(KIND_ROLE, tags), KIND_ROLE)
    assert signer.check(ev) == [0, RELAY, T, KIND_ROLE, tags, ""]
    assert_signed(signer, ev)


GOOD_FIELDS = {
    "label-1-char": {"label": "x"},
    "label-64-chars": {"label": "L" * 64},
    "label-64-astral": {"label": "\U0001f600" * 64},  # characters, not UTF-8 or UTF-16 units
    "label-quotes-backslash": {"label": 'say "hi" \\o/'},  # escaped as to_json does
    "label-non-ascii": {"label": "Rédaction été ✓ ключ"},
    "label-nbsp-and-line-separator": {"label": "a\u00a0b\u2028c"},
    "label-angle-brackets-slash": {"label": "</script>"},
    "description-empty": {"description": ""},
    "description-500": {"description": "d" * 500},
    "description-500-non-ascii": {"description": "é" * 500},
    "color-0": {"color": "0"},
    "color-9": {"color": "9"},
    "color-10": {"color": "10"},
    "color-360": {"color": "360"},
    "order-0": {"order": "0"},
    "order-negative": {"order": "-1"},
    "order-int32-max": {"order": "2147483647"},
    "order-int32-min": {"order": "-2147483648"},
    "everything-at-limits": {
        "label": "L" * 64,
        "description": "d" * 500,
        "color": "360",
        "order": "-2147483648",
    },
}


@pytest.mark.parametrize("fields", GOOD_FIELDS.values(), ids=GOOD_FIELDS.keys())
def test_accepts_role_fields_at_their_limits(signer: Signer, fields: dict[str, str]) -> None:
    ev = row(text(KIND_ROLE, role_tags(**fields)), KIND_ROLE)
    assert_signed(signer, ev)


def test_a_role_definition_is_what_the_database_builds(signer: Signer) -> None:
    """The text of buzz_private.role_event_tags: to_json for text, integers as strings."""
    label, description = 'Ed "the" \\ editor', "Rédige\u00a0✓"
    tags_json = (
        f'[["-"],["d","editor"],["label",{json.dumps(label, ensure_ascii=False)}],'
        f'["description",{json.dumps(description, ensure_ascii=False)}],'
        '["color","120"],["order","-7"]]'
    )
    ser = f'[0,"{RELAY}",{T},33534,{tags_json},""]'
    assert '\\"the\\" \\\\' in ser
    assert signer.check(row(ser, KIND_ROLE))[4][2] == ["label", label]


@pytest.mark.parametrize("role", ["editor", "owner", "-", "_", "0", ID64])
@pytest.mark.parametrize("created_at", [0, T, 2**63 - 1])
def test_accepts_role_deletions(signer: Signer, role: str, created_at: int) -> None:
    tags = deletion_tags(f"33534:{RELAY}:{role}")
    ser = text(KIND_DELETION, tags, at=created_at)
    assert ser == (
        f'[0,"{RELAY}",{created_at},5,[["-"],["a","33534:{RELAY}:{role}"],["k","33534"]],""]'
    )
    ev = row(ser, KIND_DELETION, created_at)
    assert signer.check(ev) == [0, RELAY, created_at, KIND_DELETION, tags, ""]
    assert_signed(signer, ev)


def test_sign_all_signs_every_kind_in_order(signer: Signer) -> None:
    events = [
        row(text(KIND_MEMBERSHIP_LIST, ROLED_LISTS["every-base-with-roles"]), 13534),
        row(text(KIND_ADD_USER, [["-"], ["p", C]]), KIND_ADD_USER),
        row(text(KIND_ROLE, role_tags(**_FIELDS)), KIND_ROLE),
        row(text(KIND_ROLE, role_tags("owner", label="Owner")), KIND_ROLE),
        row(text(KIND_DELETION, deletion_tags()), KIND_DELETION),
    ]
    sigs = signer.sign_all(events)
    assert len(sigs) == len(events)
    for ev, sig in zip(events, sigs, strict=True):
        assert verify_event(signed_event(ev, sig))


@pytest.mark.parametrize(
    "bad",
    [
        row(text(KIND_ROLE, role_tags(color="361")), KIND_ROLE),
        row(text(KIND_DELETION, deletion_tags(f"33534:{OTHER}:editor")), KIND_DELETION),
        row(text(KIND_MEMBERSHIP_LIST, [["-"], ["member", A, "member", "b", "a"]]), 13534),
    ],
    ids=["33534", "5", "13534"],
)
def test_sign_all_signs_nothing_if_one_role_event_is_bad(
    signer: Signer, monkeypatch: pytest.MonkeyPatch, bad: PreparedEvent
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(RelayKey, "sign", lambda self, id_hex, **kw: calls.append(id_hex) or "")
    good = [row(text(KIND_ROLE, role_tags()), KIND_ROLE), row(text(5, deletion_tags()), 5)]
    for events in ([*good, bad], [bad, *good], [good[0], bad, good[1]]):
        with pytest.raises(RefusedToSign):
            signer.sign_all(events)
        assert calls == []
    signer.sign_all(good)
    assert calls == [good[0].id, good[1].id]


# --- refused: the rows ----------------------------------------------------------------------
# Each row: (name, good text, bad text, row kind, row created_at, part of the message). The
# test checks that the good text is accepted and the bad one refused with that message, so
# that a row cannot pass by refusing everything.

_CANONICAL = "not in canonical NIP-01 form"
_PUBKEY = "pubkey is not the relay's key"
_CREATED_AT = "created_at does not match the prepared row"
_KIND = "kind does not match the prepared row"
_CONTENT = "content must be empty"
_NOT_JSON = "serialized is not JSON"
_MEMBER_SHAPE = 'is not ["member", pubkey, role, role id...] with role ids of 1-64 [a-z0-9_-]'


def _list_rows() -> list[Any]:
    good_tags = [["-"], ["member", A, "owner", "editor"], ["member", B, "admin", "a", "b"]]
    good = text(KIND_MEMBERSHIP_LIST, good_tags)

    def tags_with(roles: list[Any], base: str = "admin") -> str:
        return text(KIND_MEMBERSHIP_LIST, [good_tags[0], good_tags[1], ["member", B, base, *roles]])

    variants = [
        ("unsorted", tags_with(["b", "a"]), "tag 2 has roles out of order"),
        ("unsorted-bytes", tags_with(["a", "_"]), "tag 2 has roles out of order"),
        ("unsorted-digit-dash", tags_with(["0", "-"]), "tag 2 has roles out of order"),
        ("unsorted-prefix", tags_with(["ab", "a"]), "tag 2 has roles out of order"),
        ("duplicate", tags_with(["a", "a"]), "tag 2 repeats defined role a"),
        ("duplicate-after-another", tags_with(["a", "b", "b"]), "tag 2 repeats defined role b"),
        ("base-owner", tags_with(["a", "owner"]), "tag 2 has owner, a base role, as a defined"),
        ("base-admin", tags_with(["admin"]), "tag 2 has admin, a base role"),
        ("base-member", tags_with(["a", "member"]), "tag 2 has member, a base role"),
        ("base-own-base", tags_with(["member"], "member"), "tag 2 has member, a base role"),
        ("uppercase", tags_with(["Editor"]), f"tag 2 {_MEMBER_SHAPE}"),
        ("65-chars", tags_with(["a" * 65]), f"tag 2 {_MEMBER_SHAPE}"),
        ("space", tags_with(["a b"]), f"tag 2 {_MEMBER_SHAPE}"),
        ("empty", tags_with([""]), f"tag 2 {_MEMBER_SHAPE}"),
        ("non-ascii", tags_with(["é"]), f"tag 2 {_MEMBER_SHAPE}"),
        ("dot", tags_with(["a.b"]), f"tag 2 {_MEMBER_SHAPE}"),
        ("colon", tags_with(["a:b"]), f"tag 2 {_MEMBER_SHAPE}"),
        ("quote", tags_with(['a"b']), f"tag 2 {_MEMBER_SHAPE}"),
        ("number", tags_with([7]), f"tag 2 {_MEMBER_SHAPE}"),
        ("null", tags_with([None]), f"tag 2 {_MEMBER_SHAPE}"),
        ("list", tags_with([["a"]]), f"tag 2 {_MEMBER_SHAPE}"),
        ("bad-base-with-roles", tags_with(["a"], "moderator"), f"tag 2 {_MEMBER_SHAPE}"),
        ("base-missing", tags_with([], "a"), f"tag 2 {_MEMBER_SHAPE}"),
        ("capital-base", tags_with(["a"], "Admin"), f"tag 2 {_MEMBER_SHAPE}"),
        (
            "two-owners-with-roles",
            tags_with(["a"], "owner"),
            "more than one owner",
        ),
        (
            "two-owners-one-plain",
            text(13534, [["-"], ["member", A, "owner"], ["member", B, "owner", "a"]]),
            "more than one owner",
        ),
        (
            "two-owners-same-roles",
            text(13534, [["-"], ["member", A, "owner", "a"], ["member", B, "owner", "a"]]),
            "more than one owner",
        ),
        (
            "unsorted-pubkeys-with-roles",
            text(13534, [["-"], ["member", B, "admin", "a"], ["member", A, "owner", "a"]]),
            "tag 2 is not in strictly increasing pubkey order",
        ),
        (
            "uppercase-pubkey-with-roles",
            text(13534, [["-"], ["member", A.upper(), "admin", "a"]]),
            "a member pubkey is not 64 lowercase hex",
        ),
        (
            "bad-roles-in-tag-1",
            text(13534, [["-"], ["member", A, "owner", "b", "a"], ["member", B, "admin", "a"]]),
            "tag 1 has roles out of order",
        ),
        ("other-tag-after", good.replace(']],""]', '],["t","a"]],""]'), f"tag 2 {_MEMBER_SHAPE}"),
        # the right values, not the canonical bytes
        (
            "space-before-role",
            good.replace('"admin","a"', '"admin", "a"'),
            f"tag 2 {_MEMBER_SHAPE}",
        ),
        (
            "escaped-role-letter",
            good.replace('"editor"', '"\\u0065ditor"'),
            f"tag 1 {_MEMBER_SHAPE}",
        ),
        ("escaped-role-dash", tags_with(["-"]).replace('"-"]]', '"\\u002d"]]'), _MEMBER_SHAPE),
        ("escaped-solidus", good.replace('"admin","a"', '"admin","\\/"'), _MEMBER_SHAPE),
        ("newline-in-role", good.replace('"b"]', '"b\\n"]'), _MEMBER_SHAPE),
        ("space-before-bracket", good.replace('"b"]', '"b" ]'), _MEMBER_SHAPE),
        ("trailing-comma", good.replace('"b"]', '"b",]'), _MEMBER_SHAPE),
        # A line break before the end passes re's `$`, never fullmatch.
        ("role-then-newline", good.replace('"b"]', '"b"]\n', 1), _MEMBER_SHAPE),
    ]
    return [(f"13534-{n}", good, bad, KIND_MEMBERSHIP_LIST, T, msg) for n, bad, msg in variants]


def _role_rows() -> list[Any]:
    good_tags = role_tags(**_FIELDS)
    good = text(KIND_ROLE, good_tags)
    full = ',["label","Editor"],["description","Edits the wiki"],["color","200"],["order","3"]'
    assert full in good
    d_and_fields = '["d","editor"]' + full

    def tags(*extra: list[Any], role: Any = "editor") -> str:
        return text(KIND_ROLE, [["-"], ["d", role], *extra])

    def field(name: str, value: Any) -> str:
        return tags([name, value])

    shape = 'tags must start with ["-"], ["d", role id]'
    d_msg = 'tag 1 is not ["d", role id] with a role id of 1-64 [a-z0-9_-]'
    name_msg = "is not [name, text] with name label, description, color or order"
    order_msg = "repeated or out of order (label, description, color, order)"
    label_msg = "tag 2: label must be 1-64 characters, none of them a control character"
    desc_msg = "tag 2: description must be at most 500 characters, none of them a control"
    color_msg = "tag 2: color must be an integer 0-360 in canonical decimal"
    ord_msg = "tag 2: order must be a 32-bit integer in canonical decimal"
    variants: list[tuple[str, str, str]] = [
        # tag order, repetition, unknown tags, extra elements
        ("label-after-color", tags(["color", "1"], ["label", "x"]), f"tag 3: label {order_msg}"),
        ("order-before-color", tags(["order", "1"], ["color", "1"]), f"tag 3: color {order_msg}"),
        (
            "description-before-label",
            tags(["description", "x"], ["label", "x"]),
            f"tag 3: label {order_msg}",
        ),
        ("label-twice", tags(["label", "x"], ["label", "x"]), f"tag 3: label {order_msg}"),
        ("color-twice", tags(["color", "1"], ["color", "2"]), f"tag 3: color {order_msg}"),
        ("order-twice", tags(["order", "1"], ["order", "1"]), f"tag 3: order {order_msg}"),
        (
            "description-twice",
            tags(["description", ""], ["description", ""]),
            f"tag 3: description {order_msg}",
        ),
        ("d-twice", tags(["d", "editor"]), f"tag 2 {name_msg}"),
        ("d-after-label", text(KIND_ROLE, [["-"], ["label", "x"], ["d", "editor"]]), d_msg),
        ("d-first", text(KIND_ROLE, [["d", "editor"], ["-"]]), shape),
        ("protected-missing", text(KIND_ROLE, [["d", "editor"]]), shape),
        ("protected-twice", text(KIND_ROLE, [["-"], ["-"], ["d", "editor"]]), d_msg),
        ("protected-last", tags(["-"]), f"tag 2 {name_msg}"),
        ("protected-with-value", text(KIND_ROLE, [["-", ""], ["d", "editor"]]), shape),
        ("protected-as-string", text(KIND_ROLE, ["-", ["d", "editor"]]), shape),
        ("d-missing", text(KIND_ROLE, [["-"]]), shape),
        ("d-missing-label-present", text(KIND_ROLE, [["-"], ["label", "x"]]), d_msg),
        ("no-tags", text(KIND_ROLE, []), shape),
        ("tags-null", text(KIND_ROLE, None), shape),
        ("tags-object", text(KIND_ROLE, {"d": "editor"}), shape),
        ("unknown-name", tags(["name", "x"]), f"tag 2 {name_msg}"),
        ("unknown-t", tags(["t", "x"]), f"tag 2 {name_msg}"),
        ("p-tag", tags(["p", A]), f"tag 2 {name_msg}"),
        ("capital-label", tags(["Label", "x"]), f"tag 2 {name_msg}"),
        ("unknown-after-all", text(KIND_ROLE, [*good_tags, ["x", "y"]]), f"tag 6 {name_msg}"),
        ("label-extra-element", tags(["label", "x", "y"]), f"tag 2 {name_msg}"),
        ("color-extra-element", tags(["color", "1", "2"]), f"tag 2 {name_msg}"),
        ("label-no-value", tags(["label"]), f"tag 2 {name_msg}"),
        ("empty-tag", tags([]), f"tag 2 {name_msg}"),
        ("tag-as-string", tags("label"), f"tag 2 {name_msg}"),
        ("tag-as-object", tags({"label": "x"}), f"tag 2 {name_msg}"),
        ("d-extra-element", text(KIND_ROLE, [["-"], ["d", "editor", "x"]]), d_msg),
        ("d-no-value", text(KIND_ROLE, [["-"], ["d"]]), d_msg),
        ("capital-d", text(KIND_ROLE, [["-"], ["D", "editor"]]), d_msg),
        # color
        ("color-361", field("color", "361"), color_msg),
        ("color-1000", field("color", "1000"), color_msg),
        ("color-minus-1", field("color", "-1"), color_msg),
        ("color-minus-0", field("color", "-0"), color_msg),
        ("color-leading-zero", field("color", "07"), color_msg),
        ("color-00", field("color", "00"), color_msg),
        ("color-float", field("color", "1.0"), color_msg),
        ("color-exp", field("color", "1e2"), color_msg),
        ("color-plus", field("color", "+7"), color_msg),
        ("color-space", field("color", " 7"), color_msg),
        ("color-trailing-space", field("color", "7 "), color_msg),
        ("color-newline", field("color", "7\n"), color_msg),
        ("color-underscore", field("color", "1_0"), color_msg),
        ("color-hex", field("color", "0x10"), color_msg),
        ("color-arabic-indic", field("color", "\u0663"), color_msg),
        ("color-fullwidth", field("color", "\uff11"), color_msg),
        ("color-empty", field("color", ""), color_msg),
        ("color-number", field("color", 7), "tag 2: color is not text"),
        ("color-null", field("color", None), "tag 2: color is not text"),
        # order
        ("order-leading-zero", field("order", "01"), ord_msg),
        ("order-minus-0", field("order", "-0"), ord_msg),
        ("order-negative-leading-zero", field("order", "-01"), ord_msg),
        ("order-int32-max-plus-1", field("order", "2147483648"), ord_msg),
        ("order-int32-min-minus-1", field("order", "-2147483649"), ord_msg),
        ("order-11-digits", field("order", "10000000000"), ord_msg),
        ("order-float", field("order", "1.0"), ord_msg),
        ("order-plus", field("order", "+1"), ord_msg),
        ("order-space", field("order", " 1"), ord_msg),
        ("order-underscore", field("order", "1_000"), ord_msg),
        ("order-minus-only", field("order", "-"), ord_msg),
        ("order-empty", field("order", ""), ord_msg),
        ("order-arabic-indic", field("order", "\u0661"), ord_msg),
        ("order-number", field("order", 1), "tag 2: order is not text"),
        # label and description
        ("label-empty", field("label", ""), label_msg),
        ("label-65-chars", field("label", "L" * 65), label_msg),
        ("label-nul", field("label", "a\x00"), label_msg),
        ("label-newline", field("label", "a\nb"), label_msg),
        ("label-tab", field("label", "\t"), label_msg),
        ("label-unit-separator", field("label", "\x1f"), label_msg),
        ("label-del", field("label", "a\x7f"), label_msg),
        ("label-c1-first", field("label", "\x80"), label_msg),
        ("label-c1-nel", field("label", "a\x85"), label_msg),
        ("label-c1-last", field("label", "\x9f"), label_msg),
        ("label-number", field("label", 7), "tag 2: label is not text"),
        ("label-null", field("label", None), "tag 2: label is not text"),
        ("description-501", field("description", "d" * 501), desc_msg),
        ("description-tab", field("description", "a\tb"), desc_msg),
        ("description-del", field("description", "\x7f"), desc_msg),
        ("description-c1", field("description", "\x9b"), desc_msg),
        ("description-list", field("description", ["x"]), "tag 2: description is not text"),
        # role id
        ("role-uppercase", tags(role="Editor"), d_msg),
        ("role-65-chars", tags(role="a" * 65), d_msg),
        ("role-space", tags(role="a b"), d_msg),
        ("role-empty", tags(role=""), d_msg),
        ("role-non-ascii", tags(role="é"), d_msg),
        ("role-colon", tags(role="a:b"), d_msg),
        ("role-dot", tags(role="a.b"), d_msg),
        ("role-newline", tags(role="editor\n"), d_msg),
        ("role-number", tags(role=7), d_msg),
        ("role-null", tags(role=None), d_msg),
        # content
        ("content", text(KIND_ROLE, good_tags, "x"), _CONTENT),
        ("content-space", text(KIND_ROLE, good_tags, " "), _CONTENT),
        ("content-null", text(KIND_ROLE, good_tags, None), _CONTENT),
        ("content-json", text(KIND_ROLE, good_tags, '{"label":"x"}'), _CONTENT),
        # author
        ("other-pubkey", text(KIND_ROLE, good_tags, pubkey=OTHER), _PUBKEY),
        ("uppercase-pubkey", text(KIND_ROLE, good_tags, pubkey=RELAY.upper()), _PUBKEY),
        ("npub-pubkey", text(KIND_ROLE, good_tags, pubkey=KEY.npub), _PUBKEY),
        # the right values, not the canonical bytes
        ("escaped-A-in-label", field("label", "A").replace('"A"', '"\\u0041"'), _CANONICAL),
        ("escaped-label-name", good.replace('["label"', '["\\u006cabel"'), _CANONICAL),
        ("escaped-d", good.replace('["d"', '["\\u0064"'), _CANONICAL),
        ("escaped-dash", good.replace('"-"', '"\\u002d"'), _CANONICAL),
        ("escaped-solidus", field("label", "a/b").replace("a/b", "a\\/b"), _CANONICAL),
        ("escaped-non-ascii", field("label", "é").replace("é", "\\u00e9"), _CANONICAL),
        (
            "escaped-astral",
            field("label", "\U0001f600").replace("\U0001f600", "\\ud83d\\ude00"),
            _CANONICAL,
        ),
        ("escaped-quote-as-u", field("label", 'a"b').replace('\\"', "\\u0022"), _CANONICAL),
        ("escaped-color-digit", good.replace('"200"', '"\\u0032\\u0030\\u0030"'), _CANONICAL),
        (
            "ascii-escaped",
            json.dumps([0, RELAY, T, KIND_ROLE, role_tags(label="é"), ""], separators=(",", ":")),
            _CANONICAL,
        ),
        (
            "escaped-relay-digit",
            good.replace(RELAY, f"\\u{ord(RELAY[0]):04x}" + RELAY[1:]),
            _CANONICAL,
        ),
        ("space-after-comma", good.replace(",", ", ", 1), _CANONICAL),
        ("spaces", json.dumps([0, RELAY, T, KIND_ROLE, good_tags, ""]), _CANONICAL),
        (
            "space-in-tags",
            good.replace(d_and_fields, d_and_fields.replace("],[", "], [")),
            _CANONICAL,
        ),
        ("newline-between-tags", good.replace('["d"', '\n["d"'), _CANONICAL),
        ("trailing-newline", good + "\n", _CANONICAL),
        ("leading-space", " " + good, _CANONICAL),
        ("negative-zero", "[-0" + good[2:], _CANONICAL),
        ("float-zero", "[0.0" + good[2:], "the array does not start with 0"),
        ("float-created-at", good.replace(f",{T},", f",{T}.0,"), _CREATED_AT),
        ("exp-created-at", good.replace(f",{T},", ",17e8,"), _CREATED_AT),
        ("string-created-at", good.replace(f",{T},", f',"{T}",'), _CREATED_AT),
        ("float-kind", good.replace(",33534,", ",33534.0,"), _KIND),
        ("string-kind", good.replace(",33534,", ',"33534",'), _KIND),
        ("huge-number", good.replace(f",{T},", "," + "9" * 5000 + ","), _NOT_JSON),
        # structure
        ("trailing-x", good + "x", _NOT_JSON),
        ("truncated", good[:-1], _NOT_JSON),
        ("seventh-element", good[:-1] + ',"x"]', "not a 6-element NIP-01 array"),
        ("nested", "[" + good + "]", "not a 6-element NIP-01 array"),
        ("deep-nesting", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("nan-created-at", good.replace(f",{T},", ",NaN,"), _CREATED_AT),
        # the kind in the text
        ("text-kind-30000", good.replace(",33534,", ",30000,"), _KIND),
        ("text-kind-13534", good.replace(",33534,", ",13534,"), _KIND),
        ("text-kind-5", good.replace(",33534,", ",5,"), _KIND),
        ("text-kind-33535", good.replace(",33534,", ",33535,"), _KIND),
    ]
    rows = [(f"33534-{n}", good, bad, KIND_ROLE, T, msg) for n, bad, msg in variants]
    # The text is right, the row is not.
    rows += [
        ("33534-row-created-at", good, good, KIND_ROLE, T + 1, _CREATED_AT),
        ("33534-row-created-at-0", good, good, KIND_ROLE, 0, _CREATED_AT),
        ("33534-row-kind-5", good, good, KIND_DELETION, T, _KIND),
        ("33534-row-kind-8000", good, good, KIND_ADD_USER, T, _KIND),
        ("33534-row-kind-30000", good, good, 30000, T, _KIND),
        ("33534-row-kind-13534", good, good, KIND_MEMBERSHIP_LIST, T, "not a membership list"),
        ("33534-row-kind-float", good, good, float(KIND_ROLE), T, _KIND),
        ("33534-row-kind-string", good, good, str(KIND_ROLE), T, _KIND),
    ]
    return rows


def _deletion_rows() -> list[Any]:
    good = text(KIND_DELETION, deletion_tags())
    address = f"33534:{RELAY}:editor"

    def addressing(value: Any) -> str:
        return text(KIND_DELETION, deletion_tags(value))

    def tags(*tags: Any) -> str:
        return text(KIND_DELETION, list(tags))

    shape = (
        "a deletion's tags must be exactly "
        '[["-"], ["a", "33534:<relay pubkey>:<role id>"], ["k", "33534"]]'
    )
    not_ours = "the a tag does not address an event of the relay's key"
    not_role = "the a tag does not address a kind 33534 event"
    bad_id = "the a tag's role id is not 1-64 [a-z0-9_-]"
    a, k = ["a", address], ["k", "33534"]
    variants = [
        # what is deleted
        ("other-pubkey-address", addressing(f"33534:{OTHER}:editor"), not_ours),
        ("uppercase-pubkey-address", addressing(f"33534:{RELAY.upper()}:editor"), not_ours),
        ("npub-address", addressing(f"33534:{KEY.npub}:editor"), not_ours),
        ("empty-pubkey-address", addressing("33534::editor"), not_ours),
        ("kind-30000-address", addressing(f"30000:{RELAY}:editor"), not_role),
        ("kind-13534-address", addressing(f"13534:{RELAY}:"), not_role),
        ("kind-033534-address", addressing(f"033534:{RELAY}:editor"), not_role),
        ("no-kind-address", addressing(f"{RELAY}:editor"), not_role),
        ("role-uppercase", addressing(f"33534:{RELAY}:Editor"), bad_id),
        ("role-65-chars", addressing(f"33534:{RELAY}:{'a' * 65}"), bad_id),
        ("role-space", addressing(f"33534:{RELAY}:a b"), bad_id),
        ("role-empty", addressing(f"33534:{RELAY}:"), bad_id),
        ("role-missing", addressing(f"33534:{RELAY}"), bad_id),
        ("role-extra-colon", addressing(f"33534:{RELAY}:editor:x"), bad_id),
        ("role-non-ascii", addressing(f"33534:{RELAY}:é"), bad_id),
        ("role-newline", addressing(f"33534:{RELAY}:editor\n"), bad_id),
        ("address-number", addressing(33534), shape),
        # other tags
        ("k-30000", tags(["-"], a, ["k", "30000"]), shape),
        ("k-number", tags(["-"], a, ["k", 33534]), shape),
        ("e-tag-added", tags(["-"], a, k, ["e", "ab" * 32]), shape),
        ("e-tag-instead", tags(["-"], ["e", "ab" * 32], k), shape),
        ("e-tag-first", tags(["-"], ["e", "ab" * 32], a, k), shape),
        ("second-a-tag", tags(["-"], a, ["a", f"33534:{RELAY}:mod"], k), shape),
        ("p-tag", tags(["-"], a, k, ["p", A]), shape),
        ("k-missing", tags(["-"], a), shape),
        ("a-missing", tags(["-"], k), shape),
        ("protected-missing", tags(a, k), shape),
        ("protected-last", tags(a, k, ["-"]), shape),
        ("k-before-a", tags(["-"], k, a), shape),
        ("a-relay-hint", tags(["-"], [*a, "wss://relay"], k), shape),
        ("k-extra", tags(["-"], a, [*k, "x"]), shape),
        ("capital-a", tags(["-"], ["A", address], k), shape),
        ("no-tags", tags(), shape),
        ("tags-null", text(KIND_DELETION, None), shape),
        # content, author
        ("content", text(KIND_DELETION, deletion_tags(), "role removed"), _CONTENT),
        ("content-space", text(KIND_DELETION, deletion_tags(), " "), _CONTENT),
        ("other-pubkey", text(KIND_DELETION, deletion_tags(), pubkey=OTHER), _PUBKEY),
        (
            "other-pubkey-both",
            text(KIND_DELETION, deletion_tags(f"33534:{OTHER}:editor"), pubkey=OTHER),
            _PUBKEY,
        ),
        # the right values, not the canonical bytes
        ("escaped-role-letter", good.replace(":editor", ":\\u0065ditor"), _CANONICAL),
        ("escaped-kind-digit", good.replace('"33534:', '"\\u0033' + "3534:"), _CANONICAL),
        ("escaped-k-value", good.replace('["k","33534"]', '["k","3353\\u0034"]'), _CANONICAL),
        ("escaped-dash", good.replace('"-"', '"\\u002d"'), _CANONICAL),
        ("escaped-a", good.replace('["a"', '["\\u0061"'), _CANONICAL),
        ("space-after-comma", good.replace(",", ", ", 1), _CANONICAL),
        ("spaces", json.dumps([0, RELAY, T, 5, deletion_tags(), ""]), _CANONICAL),
        ("trailing-newline", good + "\n", _CANONICAL),
        ("leading-space", " " + good, _CANONICAL),
        ("negative-zero", "[-0" + good[2:], _CANONICAL),
        ("float-created-at", good.replace(f",{T},", f",{T}.0,"), _CREATED_AT),
        ("float-kind", good.replace(",5,", ",5.0,"), _KIND),
        ("exp-kind", good.replace(",5,", ",5e0,"), _KIND),
        ("leading-zero-kind", good.replace(",5,", ",05,"), _NOT_JSON),
        ("truncated", good[:-1], _NOT_JSON),
        ("trailing-x", good + "x", _NOT_JSON),
        ("seventh-element", good[:-1] + ',""]', "not a 6-element NIP-01 array"),
        # the kind in the text
        ("text-kind-33534", good.replace(",5,", ",33534,"), _KIND),
        ("text-kind-8000", good.replace(",5,", ",8000,"), _KIND),
        ("text-kind-1", good.replace(",5,", ",1,"), _KIND),
    ]
    rows = [(f"5-{n}", good, bad, KIND_DELETION, T, msg) for n, bad, msg in variants]
    rows += [
        ("5-row-created-at", good, good, KIND_DELETION, T + 1, _CREATED_AT),
        ("5-row-created-at-earlier", good, good, KIND_DELETION, T - 1, _CREATED_AT),
        ("5-row-kind-33534", good, good, KIND_ROLE, T, _KIND),
        ("5-row-kind-8001", good, good, 8001, T, _KIND),
        ("5-row-kind-1", good, good, 1, T, _KIND),
        ("5-row-kind-float", good, good, 5.0, T, _KIND),
        ("5-row-kind-true", good, good, True, T, _KIND),
        ("5-row-kind-13534", good, good, KIND_MEMBERSHIP_LIST, T, "not a membership list"),
    ]
    # Another kind 5 altogether: deleting a note, with row and text agreeing.
    note = text(KIND_DELETION, [["e", "ab" * 32], ["k", "1"]], "spam")
    rows += [("5-note-deletion", good, note, KIND_DELETION, T, _CONTENT)]
    note = text(KIND_DELETION, [["e", "ab" * 32], ["k", "1"]])
    rows += [("5-note-deletion-no-content", good, note, KIND_DELETION, T, shape)]
    return rows


def _other_kind_rows() -> list[Any]:
    """Role-like events of kinds the relay does not sign, with row and text agreeing."""
    good = text(KIND_ROLE, role_tags(label="x"))
    return [
        (f"kind-{kind}", good, text(kind, tags), kind, T, f"kind {kind} is not a NIP-43")
        for kind, tags in [
            (30000, role_tags(label="x")),
            (33535, role_tags(label="x")),
            (30078, role_tags()),
            (1, deletion_tags()),
            (10000, deletion_tags()),
        ]
    ]


ROWS = _list_rows() + _role_rows() + _deletion_rows() + _other_kind_rows()


@pytest.mark.parametrize(
    ("good", "bad", "kind", "created_at", "expected"),
    [pytest.param(*r[1:], id=r[0]) for r in ROWS],
)
def test_refuses_near_misses(
    signer: Signer, good: str, bad: str, kind: Any, created_at: Any, expected: str
) -> None:
    good_kind = json.loads(good)[3]
    signer.check(row(good, good_kind))
    ev = row(bad, kind, created_at)
    with pytest.raises(RefusedToSign) as info:
        signer.check(ev)
    msg = str(info.value)
    assert msg.startswith(f"event {ev.id}: ")
    assert expected in msg
    assert SECRET_HEX not in msg
    with pytest.raises(RefusedToSign):
        signer.sign_all([row(good, good_kind), ev])


def test_row_names_are_unique() -> None:
    names = [r[0] for r in ROWS]
    assert len(names) == len(set(names))


# --- a large list with roles ---------------------------------------------------------------


def test_a_10000_member_list_with_roles(signer: Signer) -> None:
    pks = sorted(os.urandom(32).hex() for _ in range(10_000))
    roles = ["a", "b", "c", "d"]

    def base(i: int) -> str:
        return "owner" if i == 0 else ("admin" if i % 100 == 0 else "member")

    tags = [["-"]] + [
        ["member", pk, base(i), *roles[: i % 5], *([f"r{i:05d}"] if i % 7 == 0 else [])]
        for i, pk in enumerate(pks)
    ]
    assert signer.check(row(text(13534, tags), 13534))[4] == tags
    bad = [t.copy() for t in tags]
    bad[7001][3:5] = ["b", "a"]
    with pytest.raises(RefusedToSign, match="tag 7001 has roles out of order"):
        signer.check(row(text(13534, bad), 13534))
    bad = [t.copy() for t in tags]
    bad[9999][2] = "owner"
    with pytest.raises(RefusedToSign, match="more than one owner"):
        signer.check(row(text(13534, bad), 13534))


# --- properties ------------------------------------------------------------------------------

_ID = re.compile(r"[a-z0-9_-]{1,64}")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_FIELD_NAMES = ["label", "description", "color", "order"]


def _valid_value(name: str, value: Any) -> bool:
    """The 33534 field rules, written independently of the signer."""
    if type(value) is not str:
        return False
    if name in ("label", "description"):
        low, high = (1, 64) if name == "label" else (0, 500)
        return low <= len(value) <= high and not _CONTROLS.search(value)
    if not value.isascii() or not re.fullmatch(r"-?[0-9]+", value):
        return False
    n = int(value)
    low, high = (0, 360) if name == "color" else (-(2**31), 2**31 - 1)
    return str(n) == value and low <= n <= high


def _valid_role_tags(tags: list[Any]) -> bool:
    if len(tags) < 2 or tags[0] != ["-"] or len(tags[1]) != 2 or tags[1][0] != "d":
        return False
    if type(tags[1][1]) is not str or not _ID.fullmatch(tags[1][1]):
        return False
    names = [t[0] if len(t) == 2 else None for t in tags[2:]]
    if any(n not in _FIELD_NAMES for n in names) or names != sorted(
        set(names), key=_FIELD_NAMES.index
    ):
        return False
    return all(_valid_value(t[0], t[1]) for t in tags[2:])


_NUMBERS = ["0", "7", "07", "-0", "-1", "360", "361", "1.0", str(2**31 - 1), str(2**31)]
_TEXTS = ["", "x", "Editor", "a\x00", "a\x85", "\u00e9", " 1", "L" * 64, "L" * 65, "d" * 501]
_value = st.sampled_from(_NUMBERS + _TEXTS) | st.text(max_size=4)
_field = st.tuples(st.sampled_from([*_FIELD_NAMES, "d", "t"]), _value).map(list)
_role_id = st.sampled_from(["editor", "owner", "-", "a" * 64, "a" * 65, "Editor", "", "a b"])


@settings(max_examples=500, deadline=None)
@given(
    role=_role_id,
    fields=st.one_of(
        st.sampled_from([role_tags(**f)[2:] for f in _SUBSETS]),
        st.lists(st.one_of(_field, st.lists(_value, max_size=3)), max_size=5),
    ),
    sort_fields=st.booleans(),
)
def test_role_tags_accepted_exactly_when_valid(
    role: str, fields: list[list[str]], sort_fields: bool
) -> None:
    if sort_fields:
        fields = sorted(
            fields, key=lambda t: _FIELD_NAMES.index(t[0]) if t and t[0] in _FIELD_NAMES else 9
        )
    tags = [["-"], ["d", role], *fields]
    ev = row(text(KIND_ROLE, tags), KIND_ROLE)
    valid = _valid_role_tags(tags)
    event("valid" if valid else "invalid")
    if valid:
        Signer(KEY).check(ev)
    else:
        with pytest.raises(RefusedToSign):
            Signer(KEY).check(ev)


_GOOD_TEXTS = [
    (KIND_ROLE, text(KIND_ROLE, role_tags(**_FIELDS))),
    (KIND_ROLE, text(KIND_ROLE, role_tags(label='é "q" \\'))),
    (KIND_DELETION, text(KIND_DELETION, deletion_tags())),
    (
        KIND_MEMBERSHIP_LIST,
        text(13534, [["-"], ["member", A, "owner", "a", "b"], ["member", B, "member", "c"]]),
    ),
]


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_any_edit_of_a_role_event_is_refused_or_still_valid(data: st.DataObject) -> None:
    """Edit a valid 33534, kind 5 or roled list anywhere (id kept consistent): what the
    signer still accepts is canonical and of a valid shape, with the row's kind."""
    kind, good = data.draw(st.sampled_from(_GOOD_TEXTS))
    pos = data.draw(st.integers(0, len(good)))
    cut = data.draw(st.integers(0, 3))
    alphabet = ' \n"\\,:[]0123456789abcdefABz-_u\u00e9\x7f'
    ser = good[:pos] + data.draw(st.text(alphabet=alphabet, max_size=3)) + good[pos + cut :]
    try:
        arr = Signer(KEY).check(row(ser, kind))
    except RefusedToSign:
        event("refused")
        return
    event("accepted")
    assert serialize_event(*arr[1:]) == ser
    assert arr[:4] == [0, RELAY, T, kind] and arr[5] == ""
    tags = arr[4]
    if kind == KIND_ROLE:
        assert _valid_role_tags(tags)
    elif kind == KIND_DELETION:
        assert len(tags) == 3 and tags[0] == ["-"] and tags[2] == ["k", "33534"]
        prefix = f"33534:{RELAY}:"
        assert tags[1][0] == "a" and tags[1][1].startswith(prefix)
        assert _ID.fullmatch(tags[1][1][len(prefix) :])
    else:
        for t in tags[1:]:
            defined = t[3:]
            assert t[2] in ("owner", "admin", "member")
            assert defined == sorted(set(defined))
            assert all(_ID.fullmatch(r) and r not in ("owner", "admin", "member") for r in defined)
