"""The signing guard: what the database may and may not get signed."""

from __future__ import annotations

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
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    event_id,
    serialize_event,
    verify_event,
)
from buzz_signer.signer import (
    EventShapes,
    MembersOutOfOrder,
    PreparedEvent,
    RefusedToSign,
    Signer,
    signed_event,
)

SECRET_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
KEY = RelayKey.from_secret(SECRET_HEX)
RELAY = KEY.pubkey
T = 1_700_000_000
COMMUNITY = "5f0c6c1e-8a52-4a0e-9d7b-3c2f4e1a9b10"

PKS = sorted(os.urandom(32).hex() for _ in range(6))
A, B, C, D, E, F = PKS
MEMBERS = [["-"], ["member", A, "owner"], ["member", B, "admin"], ["member", C, "member"]]


def prepared(
    kind: int,
    tags: Any,
    content: Any = "",
    *,
    created_at: Any = T,
    pubkey: Any = RELAY,
    row_kind: int | None = None,
    row_created_at: int | None = None,
) -> PreparedEvent:
    """A row as prepare would return it, with a consistent id unless a test breaks it."""
    ser = serialize_event(pubkey, created_at, kind, tags, content)
    return from_serialized(
        ser,
        kind if row_kind is None else row_kind,
        created_at if row_created_at is None else row_created_at,
    )


def from_serialized(ser: str, kind: int, created_at: int) -> PreparedEvent:
    return PreparedEvent(COMMUNITY, event_id(ser), kind, created_at, ser)


@pytest.fixture
def signer() -> Signer:
    return Signer(KEY)


# --- accepted -----------------------------------------------------------------------------

GOOD = [
    pytest.param(KIND_MEMBERSHIP_LIST, MEMBERS, id="13534"),
    pytest.param(KIND_MEMBERSHIP_LIST, [["-"]], id="13534-empty"),
    pytest.param(KIND_MEMBERSHIP_LIST, [["-"], ["member", D, "member"]], id="13534-no-owner"),
    pytest.param(
        KIND_MEMBERSHIP_LIST,
        [["-"]] + [["member", pk, "admin"] for pk in PKS],
        id="13534-all-admins",
    ),
    pytest.param(KIND_ADD_USER, [["-"], ["p", A]], id="8000"),
    pytest.param(KIND_REMOVE_USER, [["-"], ["p", F]], id="8001"),
]


@pytest.mark.parametrize(("kind", "tags"), GOOD)
def test_accepts_and_signs_valid_events(signer: Signer, kind: int, tags: list[list[str]]) -> None:
    ev = prepared(kind, tags)
    arr = signer.check(ev)
    assert arr == [0, RELAY, T, kind, tags, ""]
    [sig] = signer.sign_all([ev])
    event = signed_event(ev, sig)
    assert verify_event(event)
    assert nostr_sdk.Event.from_json(json.dumps(event)).verify()


def test_sign_all_keeps_order(signer: Signer) -> None:
    events = [
        prepared(KIND_MEMBERSHIP_LIST, MEMBERS),
        prepared(KIND_ADD_USER, [["-"], ["p", C]]),
        prepared(KIND_REMOVE_USER, [["-"], ["p", D]]),
        # The same id twice: two communities with the same members in the same second.
        prepared(KIND_MEMBERSHIP_LIST, MEMBERS),
    ]
    sigs = signer.sign_all(events)
    assert len(sigs) == 4
    for ev, sig in zip(events, sigs, strict=True):
        assert verify_event(signed_event(ev, sig))


def test_sign_all_empty(signer: Signer) -> None:
    assert signer.sign_all([]) == []


def test_signer_pubkey(signer: Signer) -> None:
    assert signer.pubkey == KEY.pubkey


# --- refused ------------------------------------------------------------------------------


def _ser(arr: list[Any]) -> str:
    return json.dumps(arr, separators=(",", ":"), ensure_ascii=False)


def _refused_rows() -> list[Any]:
    canonical = serialize_event(RELAY, T, KIND_MEMBERSHIP_LIST, MEMBERS, "")
    other = RelayKey.generate().pubkey
    rows: list[Any] = [
        ("kind-1", prepared(1, [["-"]])),
        ("kind-1-text-note", prepared(1, [], "hello")),
        ("kind-0", prepared(0, [], "{}")),
        ("kind-30000", prepared(30000, MEMBERS)),
        ("kind-13535", prepared(13535, MEMBERS)),
        ("other-pubkey", prepared(KIND_MEMBERSHIP_LIST, MEMBERS, pubkey=other)),
        ("uppercase-pubkey", prepared(KIND_MEMBERSHIP_LIST, MEMBERS, pubkey=RELAY.upper())),
        ("npub-pubkey", prepared(KIND_ADD_USER, [["-"], ["p", A]], pubkey=KEY.npub)),
        (
            "hash-is-not-id",
            PreparedEvent(COMMUNITY, event_id(canonical + " "), KIND_MEMBERSHIP_LIST, T, canonical),
        ),
        (
            "uppercase-id",
            PreparedEvent(
                COMMUNITY, event_id(canonical).upper(), KIND_MEMBERSHIP_LIST, T, canonical
            ),
        ),
        (
            "id-of-arbitrary-message",
            PreparedEvent(COMMUNITY, "ab" * 32, KIND_MEMBERSHIP_LIST, T, canonical),
        ),
        # Consistent id, but not the canonical bytes: whitespace, escapes, number forms.
        (
            "spaces",
            from_serialized(json.dumps([0, RELAY, T, 13534, MEMBERS, ""]), 13534, T),
        ),
        ("trailing-newline", from_serialized(canonical + "\n", 13534, T)),
        ("leading-space", from_serialized(" " + canonical, 13534, T)),
        (
            "escaped-letter",
            from_serialized(canonical.replace('"member"', '"\\u006dember"', 1), 13534, T),
        ),
        ("escaped-slash-free", from_serialized(canonical.replace('"-"', '"\\u002d"'), 13534, T)),
        (
            "ascii-escaped",
            from_serialized(
                json.dumps([0, RELAY, T, 13534, MEMBERS, ""], separators=(",", ":")).replace(
                    "e", "\\u0065", 1
                ),
                13534,
                T,
            ),
        ),
        ("negative-zero", from_serialized("[-0" + canonical[2:], 13534, T)),
        ("float-created-at", from_serialized(canonical.replace(f",{T},", f",{T}.0,"), 13534, T)),
        ("exp-created-at", from_serialized(canonical.replace(f",{T},", ",17e8,"), 13534, T)),
        ("float-kind", from_serialized(canonical.replace(",13534,", ",13534.0,"), 13534, T)),
        ("false-for-zero", from_serialized("[false" + canonical[2:], 13534, T)),
        ("one-for-zero", from_serialized("[1" + canonical[2:], 13534, T)),
        ("string-created-at", prepared(KIND_MEMBERSHIP_LIST, MEMBERS, created_at=str(T))),
        (
            "bool-created-at",
            prepared(KIND_ADD_USER, [["-"], ["p", A]], created_at=True, row_created_at=1),
        ),
        ("negative-created-at", prepared(KIND_ADD_USER, [["-"], ["p", A]], created_at=-1)),
        ("not-json", from_serialized("[0," + RELAY, 13534, T)),
        ("empty-serialized", from_serialized("", 13534, T)),
        ("deep-nesting", from_serialized("[" * 100_000 + "]" * 100_000, 13534, T)),
        (
            "json-object",
            from_serialized(
                _ser(
                    {
                        "pubkey": RELAY,
                        "kind": 13534,
                        "tags": MEMBERS,
                        "content": "",
                        "created_at": T,
                    }
                ),
                13534,
                T,
            ),
        ),
        ("seven-elements", from_serialized(_ser([0, RELAY, T, 13534, MEMBERS, "", "x"]), 13534, T)),
        ("five-elements", from_serialized(_ser([0, RELAY, T, 13534, MEMBERS]), 13534, T)),
        ("created-at-mismatch", prepared(KIND_MEMBERSHIP_LIST, MEMBERS, row_created_at=T + 1)),
        ("kind-mismatch", prepared(KIND_ADD_USER, [["-"], ["p", A]], row_kind=KIND_REMOVE_USER)),
        ("kind-mismatch-list", prepared(KIND_MEMBERSHIP_LIST, [["-"]], row_kind=KIND_ADD_USER)),
        ("content", prepared(KIND_MEMBERSHIP_LIST, MEMBERS, "hi")),
        ("content-space", prepared(KIND_ADD_USER, [["-"], ["p", A]], " ")),
        ("content-null", prepared(KIND_ADD_USER, [["-"], ["p", A]], None)),
        ("tags-object", prepared(KIND_MEMBERSHIP_LIST, {"-": ""})),
        ("tags-null", prepared(KIND_MEMBERSHIP_LIST, None)),
    ]
    # 13534 tag shapes
    list_tags = {
        "no-tags": [],
        "missing-protected": MEMBERS[1:],
        "protected-not-first": [MEMBERS[1], ["-"], MEMBERS[2]],
        "protected-twice": [["-"], ["-"], MEMBERS[1]],
        "protected-with-value": [["-", ""], *MEMBERS[1:]],
        "protected-as-string": ["-", *MEMBERS[1:]],
        "unsorted": [["-"], ["member", B, "admin"], ["member", A, "owner"]],
        "duplicate": [["-"], ["member", A, "member"], ["member", A, "member"]],
        "duplicate-other-role": [["-"], ["member", A, "owner"], ["member", A, "admin"]],
        "two-owners": [["-"], ["member", A, "owner"], ["member", B, "owner"]],
        "role-capitalized": [["-"], ["member", A, "Owner"]],
        "role-unknown": [["-"], ["member", A, "superuser"]],
        "role-empty": [["-"], ["member", A, ""]],
        "role-null": [["-"], ["member", A, None]],
        "role-list": [["-"], ["member", A, ["owner"]]],
        "role-missing": [["-"], ["member", A]],
        "extra-element": [["-"], ["member", A, "owner", "wss://relay"]],
        "p-tag-in-list": [["-"], ["p", A]],
        "member-tag-p": [["-"], ["p", A, "member"]],
        "other-tag": [["-"], ["member", A, "owner"], ["t", "x"]],
        "uppercase-member-pubkey": [["-"], ["member", A.upper(), "owner"]],
        "short-member-pubkey": [["-"], ["member", A[:-1], "owner"]],
        "long-member-pubkey": [["-"], ["member", A + "0", "owner"]],
        "spaced-member-pubkey": [["-"], ["member", A[:30] + " " + A[31:], "owner"]],
        "nonhex-member-pubkey": [["-"], ["member", "g" + A[1:], "owner"]],
        "npub-member-pubkey": [["-"], ["member", KEY.npub, "owner"]],
        "int-member-pubkey": [["-"], ["member", 7, "owner"]],
        "tag-as-object": [["-"], {"member": A}],
        "tag-as-string": [["-"], "member"],
        "dict-that-iterates-like-a-tag": [["-"], {"member": 1, A: 2, "owner": 3}],
    }
    rows += [
        (f"13534-{name}", prepared(KIND_MEMBERSHIP_LIST, tags)) for name, tags in list_tags.items()
    ]
    user_tags = {
        "no-tags": [],
        "missing-protected": [["p", A]],
        "missing-p": [["-"]],
        "wrong-order": [["p", A], ["-"]],
        "extra-tag": [["-"], ["p", A], ["p", B]],
        "relay-hint": [["-"], ["p", A, "wss://relay"]],
        "capital-p": [["-"], ["P", A]],
        "e-tag": [["-"], ["e", A]],
        "uppercase-pubkey": [["-"], ["p", A.upper()]],
        "short-pubkey": [["-"], ["p", A[:-2]]],
        "npub": [["-"], ["p", KEY.npub]],
        "member-tag": [["-"], ["member", A, "member"]],
        "null-pubkey": [["-"], ["p", None]],
    }
    for kind in (KIND_ADD_USER, KIND_REMOVE_USER):
        rows += [(f"{kind}-{name}", prepared(kind, tags)) for name, tags in user_tags.items()]
    return [pytest.param(ev, id=name) for name, ev in rows]


@pytest.mark.parametrize("ev", _refused_rows())
def test_refuses(signer: Signer, ev: PreparedEvent) -> None:
    with pytest.raises(RefusedToSign) as info:
        signer.check(ev)
    msg = str(info.value)
    assert msg.startswith("event ")
    assert SECRET_HEX not in msg and NSEC not in msg
    with pytest.raises(RefusedToSign):
        signer.sign_all([ev])


def test_refuses_non_text_serialized(signer: Signer) -> None:
    for value in (None, b"[]", ["x"]):
        ev = PreparedEvent(COMMUNITY, "00" * 32, 13534, T, value)  # type: ignore[arg-type]
        with pytest.raises(RefusedToSign):
            signer.check(ev)


def test_refuses_lone_surrogate(signer: Signer) -> None:
    ser = serialize_event(RELAY, T, KIND_MEMBERSHIP_LIST, [["-"]], "\ud800")
    ev = PreparedEvent(COMMUNITY, "00" * 32, KIND_MEMBERSHIP_LIST, T, ser)
    with pytest.raises(RefusedToSign, match="UTF-8"):
        signer.check(ev)


def test_refusal_names_the_problem(signer: Signer) -> None:
    ev = prepared(KIND_MEMBERSHIP_LIST, [["-"], ["member", A, "owner"], ["member", B, "owner"]])
    with pytest.raises(RefusedToSign, match="more than one owner") as info:
        signer.check(ev)
    assert ev.id in str(info.value)
    with pytest.raises(RefusedToSign, match="kind 1 is not"):
        signer.check(prepared(1, [["-"]]))
    with pytest.raises(RefusedToSign, match="not the given id"):
        signer.check(PreparedEvent(COMMUNITY, "ab" * 32, 13534, T, ev.serialized))
    good = prepared(KIND_MEMBERSHIP_LIST, MEMBERS)
    with pytest.raises(RefusedToSign, match=r'tag 1 is not \["member"'):
        signer.check(from_serialized(good.serialized.replace("],[", "], [", 1), 13534, T))
    with pytest.raises(RefusedToSign, match="tag 2 is not in strictly increasing"):
        signer.check(prepared(13534, [["-"], ["member", B, "owner"], ["member", A, "admin"]]))
    user = prepared(KIND_ADD_USER, [["-"], ["p", A]])
    with pytest.raises(RefusedToSign, match="not in canonical NIP-01 form"):
        signer.check(from_serialized(user.serialized.replace(",", ", "), KIND_ADD_USER, T))
    with pytest.raises(RefusedToSign, match="created_at does not match the prepared row"):
        signer.check(from_serialized(user.serialized, KIND_ADD_USER, T + 1))
    with pytest.raises(RefusedToSign, match="kind does not match the prepared row"):
        signer.check(from_serialized(user.serialized, KIND_REMOVE_USER, T))
    with pytest.raises(RefusedToSign, match=r'tags must be exactly \[\["-"\], \["p", pubkey\]\]'):
        signer.check(prepared(KIND_ADD_USER, [["-"], ["p", A.upper()]]))


def test_event_shapes_are_the_signers_checks_for_any_key(signer: Signer) -> None:
    """EventShapes: the Signer's checks without its key (what `buzz-admin verify` uses)."""
    other = RelayKey.generate().pubkey
    shapes = EventShapes(other, author="its own key")
    assert shapes.pubkey == other
    ours = prepared(KIND_MEMBERSHIP_LIST, MEMBERS)
    theirs = prepared(KIND_MEMBERSHIP_LIST, MEMBERS, pubkey=other)
    shapes.check(theirs)
    EventShapes(RELAY).check(ours)
    with pytest.raises(RefusedToSign, match=f"not a membership list by its own key {other} "):
        shapes.check(ours)
    with pytest.raises(RefusedToSign, match="by the relay's key"):
        signer.check(theirs)
    # The order refusal is a MembersOutOfOrder, for the Signer too; `what` starts the message.
    swapped = [["-"], ["member", B, "owner"], ["member", A, "admin"]]
    with pytest.raises(MembersOutOfOrder, match=r"^list X: tag 2 is not in strictly increasing"):
        shapes.check(prepared(13534, swapped, pubkey=other), what="list X")
    with pytest.raises(MembersOutOfOrder, match=r"^event [0-9a-f]{64}: tag 2 is not"):
        signer.check(prepared(13534, swapped))
    for pubkey in (RELAY.upper(), KEY.npub, "", None):
        with pytest.raises(ValueError, match="pubkey is not 64 lowercase hex characters"):
            EventShapes(pubkey)  # type: ignore[arg-type]


def _user_text(kind: int = KIND_ADD_USER, pk: str = A) -> str:
    return serialize_event(RELAY, T, kind, [["-"], ["p", pk]], "")


_CANONICAL = "not in canonical NIP-01 form"
_TAGS = 'tags must be exactly [["-"], ["p", pubkey]]'
_PUBKEY = "pubkey is not the relay's key"
_CREATED_AT = "created_at does not match the prepared row"
_KIND = "kind does not match the prepared row"
_CONTENT = "content must be empty"
_NOT_JSON = "serialized is not JSON"
_NOT_ARRAY = "not a 6-element NIP-01 array"


def _escape_first(text: str, char: str, after: int = 0) -> str:
    """`text` with its first `char` at or after `after` written as a JSON \\u escape."""
    i = text.index(char, after)
    return text[:i] + f"\\u{ord(char):04x}" + text[i + 1 :]


def _user_variants() -> list[Any]:
    """(name, serialized, row kind, row created_at, expected message) for 8000/8001 events
    that must be refused; the id is always the sha256 of the text."""
    rows: list[Any] = []
    for kind in (KIND_ADD_USER, KIND_REMOVE_USER):
        good = _user_text(kind)
        p_at = good.index(A)
        other = RelayKey.generate().pubkey
        k = str(kind)
        variants = [
            # whitespace
            ("space-after-comma", good.replace(",", ", ", 1), _CANONICAL),
            ("space-in-tags", good.replace('["-"],', '["-"], '), _CANONICAL),
            ("tab-before-kind", good.replace(f",{k},", f",\t{k},"), _CANONICAL),
            ("leading-space", " " + good, _CANONICAL),
            ("trailing-newline", good + "\n", _CANONICAL),
            ("trailing-space", good + " ", _CANONICAL),
            ("crlf-inside", good.replace("[[", "[\r\n[", 1), _CANONICAL),
            ("space-in-p-pubkey", good.replace(A, A[:30] + " " + A[31:]), _TAGS),
            ("space-around-p-pubkey", good.replace(f'"{A}"', f'" {A}"'), _TAGS),
            # case
            ("uppercase-p-pubkey", good.replace(A, A.upper()), _TAGS),
            ("one-uppercase-p-digit", good.replace(A, A[:-1] + "F"), _TAGS),
            ("uppercase-relay-pubkey", good.replace(RELAY, RELAY.upper()), _PUBKEY),
            ("capital-p-tag", good.replace('["p"', '["P"'), _TAGS),
            # escapes that decode to the right value
            ("escaped-p", good.replace('["p"', '["\\u0070"'), _CANONICAL),
            ("escaped-dash", good.replace('"-"', '"\\u002d"'), _CANONICAL),
            ("escaped-p-pubkey-digit", _escape_first(good, A[0], p_at), _CANONICAL),
            ("escaped-relay-digit", _escape_first(good, RELAY[0], 4), _CANONICAL),
            ("escaped-empty-content", good[:-3] + '"\\u0000"]', _CONTENT),
            ("escaped-solidus", good.replace('"-"', '"\\/"'), _TAGS),
            # numbers
            ("negative-zero", "[-0" + good[2:], _CANONICAL),
            ("float-zero", "[0.0" + good[2:], "the array does not start with 0"),
            ("false-for-zero", "[false" + good[2:], "the array does not start with 0"),
            ("float-kind", good.replace(f",{k},", f",{k}.0,"), _KIND),
            ("exp-kind", good.replace(f",{k},", f",{k[0]}e3,"), _KIND),
            ("string-kind", good.replace(f",{k},", f',"{k}",'), _KIND),
            ("leading-zero-kind", good.replace(f",{k},", f",0{k},"), _NOT_JSON),
            ("float-created-at", good.replace(f",{T},", f",{T}.0,"), _CREATED_AT),
            ("exp-created-at", good.replace(f",{T},", ",17e8,"), _CREATED_AT),
            ("string-created-at", good.replace(f",{T},", f',"{T}",'), _CREATED_AT),
            ("leading-zero-created-at", good.replace(f",{T},", f",0{T},"), _NOT_JSON),
            ("plus-created-at", good.replace(f",{T},", f",+{T},"), _NOT_JSON),
            # kind
            (
                "text-kind-other-user-kind",
                good.replace(f",{k},", ",8001," if kind == 8000 else ",8000,"),
                _KIND,
            ),
            ("text-kind-13534", good.replace(f",{k},", ",13534,"), _KIND),
            ("text-kind-8002", good.replace(f",{k},", ",8002,"), _KIND),
            # tags
            ("extra-p-tag", good.replace("]],", f'],["p","{B}"]],'), _TAGS),
            ("extra-t-tag", good.replace("]],", '],["t","x"]],'), _TAGS),
            ("protected-twice", good.replace('[["-"]', '[["-"],["-"]'), _TAGS),
            ("protected-with-value", good.replace('["-"]', '["-",""]'), _TAGS),
            ("protected-missing", good.replace('["-"],', ""), _TAGS),
            ("p-missing", good.replace(f',["p","{A}"]', ""), _TAGS),
            ("tags-swapped", good.replace(f'[["-"],["p","{A}"]]', f'[["p","{A}"],["-"]]'), _TAGS),
            ("relay-hint", good.replace(f'"{A}"]', f'"{A}","wss://r"]'), _TAGS),
            ("p-pubkey-short", good.replace(A, A[:-2]), _TAGS),
            ("p-pubkey-long", good.replace(A, A + "00"), _TAGS),
            ("p-pubkey-non-hex", good.replace(A, "g" + A[1:]), _TAGS),
            ("p-pubkey-npub", good.replace(A, KEY.npub), _TAGS),
            ("p-pubkey-number", good.replace(f'"{A}"', "7"), _TAGS),
            ("tags-null", good.replace(f'[["-"],["p","{A}"]]', "null"), _TAGS),
            ("tags-object", good.replace(f'[["-"],["p","{A}"]]', '{"-":""}'), _TAGS),
            ("tags-string", good.replace(f'[["-"],["p","{A}"]]', '"ab"'), _TAGS),
            # pubkey
            ("other-pubkey", good.replace(RELAY, other), _PUBKEY),
            ("npub-pubkey", good.replace(RELAY, KEY.npub), _PUBKEY),
            ("pubkey-with-space", good.replace(RELAY, RELAY + " "), _PUBKEY),
            ("pubkey-null", good.replace(f'"{RELAY}"', "null"), _PUBKEY),
            # content
            ("content", good[:-3] + '"x"]', _CONTENT),
            ("content-space", good[:-3] + '" "]', _CONTENT),
            ("content-null", good[:-3] + "null]", _CONTENT),
            ("content-missing", good[:-4] + "]", _NOT_ARRAY),
            # the same length as the canonical text
            ("content-empty-array", good[:-3] + "[]]", _CONTENT),
            ("content-empty-object", good[:-3] + "{}]", _CONTENT),
            ("content-zero", good[:-3] + "0 ]", _CONTENT),
            ("content-zero-extra-bracket", good[:-7] + '"]],0]]', _NOT_JSON),
            # trailing garbage and structure
            ("trailing-x", good + "x", _NOT_JSON),
            ("trailing-bracket", good + "]", _NOT_JSON),
            ("trailing-comma", good + ",", _NOT_JSON),
            ("trailing-nul", good + "\0", _NOT_JSON),
            ("trailing-array", good + "[]", _NOT_JSON),
            ("seventh-element", good[:-1] + ',"x"]', _NOT_ARRAY),
            ("truncated", good[:-1], _NOT_JSON),
            ("empty", "", _NOT_JSON),
            ("nested", "[" + good + "]", _NOT_ARRAY),
            ("object", '{"kind":' + k + "}", _NOT_ARRAY),
            # non-ASCII
            ("bom", "\ufeff" + good, _NOT_JSON),
            ("nbsp-after-comma", good.replace(",", ",\u00a0", 1), _NOT_JSON),
            ("fullwidth-p-digit", good.replace(A, A[:-1] + "\uff10"), _TAGS),
            ("arabic-indic-p-digit", good.replace(A, A[:-1] + "\u0660"), _TAGS),
            ("non-ascii-relay-digit", good.replace(RELAY, RELAY[:-1] + "\u0660"), _PUBKEY),
            ("non-ascii-content", good[:-3] + '"\u00e9"]', _CONTENT),
            ("line-separator-content", good[:-3] + '"\u2028"]', _CONTENT),
            ("non-ascii-tag-name", good.replace('["p"', '["\u0440"'), _TAGS),
        ]
        rows += [(f"{kind}-{name}", text, kind, T, msg) for name, text, msg in variants]
        # The text is right, the row is not.
        rows += [
            (f"{kind}-row-created-at", good, kind, T + 1, _CREATED_AT),
            (f"{kind}-row-created-at-zero", good, kind, 0, _CREATED_AT),
            (f"{kind}-row-kind-other", good, 8001 if kind == 8000 else 8000, T, _KIND),
            (f"{kind}-row-kind-float", good, float(kind), T, _KIND),
            (f"{kind}-row-kind-string", good, str(kind), T, _KIND),
            (f"{kind}-row-kind-13534", good, KIND_MEMBERSHIP_LIST, T, "not a membership list"),
            (f"{kind}-row-kind-1", good, 1, T, _KIND),
        ]
    rows += [
        ("kind-1-row-and-text", _user_text(1), 1, T, "kind 1 is not a NIP-43 membership kind"),
        ("kind-8002-row-and-text", _user_text(8002), 8002, T, "kind 8002 is not a NIP-43"),
        ("kind-0-row-and-text", _user_text(0), 0, T, "kind 0 is not a NIP-43"),
    ]
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


@pytest.mark.parametrize(("ser", "kind", "created_at", "expected"), _user_variants())
def test_refuses_every_other_form_of_a_user_event(
    signer: Signer, ser: str, kind: Any, created_at: int, expected: str
) -> None:
    ev = from_serialized(ser, kind, created_at)
    with pytest.raises(RefusedToSign) as info:
        signer.check(ev)
    msg = str(info.value)
    assert msg.startswith(f"event {ev.id}: ")
    assert expected in msg
    assert SECRET_HEX not in msg and NSEC not in msg
    with pytest.raises(RefusedToSign):
        signer.sign_all([prepared(KIND_ADD_USER, [["-"], ["p", A]]), ev])


@pytest.mark.parametrize("kind", [KIND_ADD_USER, KIND_REMOVE_USER])
@pytest.mark.parametrize("created_at", [0, 1, T, 2**63 - 1])
@pytest.mark.parametrize(
    "pk", ["00" * 32, "ff" * 32, "0123456789abcdef" * 4, D], ids=["00s", "ffs", "0-f", "random"]
)
def test_accepts_user_events_at_the_edges(
    signer: Signer, kind: int, created_at: int, pk: str
) -> None:
    ev = prepared(kind, [["-"], ["p", pk]], created_at=created_at)
    assert ev.serialized == f'[0,"{RELAY}",{created_at},{kind},[["-"],["p","{pk}"]],""]'
    assert signer.check(ev) == [0, RELAY, created_at, kind, [["-"], ["p", pk]], ""]
    [sig] = signer.sign_all([ev])
    assert verify_event(signed_event(ev, sig))


def test_garbage_id_is_not_echoed_at_length(signer: Signer) -> None:
    ev = PreparedEvent(COMMUNITY, "x" * 10_000, 13534, T, "[]")
    with pytest.raises(RefusedToSign) as info:
        signer.check(ev)
    assert len(str(info.value)) < 300


# --- all or nothing, and the signature is checked -------------------------------------------


def test_sign_all_signs_nothing_if_one_event_is_bad(
    signer: Signer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real_sign = RelayKey.sign

    def counting_sign(self: RelayKey, id_hex: str, **kw: Any) -> str:
        calls.append(id_hex)
        return real_sign(self, id_hex, **kw)

    monkeypatch.setattr(RelayKey, "sign", counting_sign)
    good = [prepared(KIND_MEMBERSHIP_LIST, MEMBERS), prepared(KIND_ADD_USER, [["-"], ["p", C]])]
    bad = prepared(1, [], "pay me")
    for events in ([*good, bad], [bad, *good], [good[0], bad, good[1]]):
        with pytest.raises(RefusedToSign):
            signer.sign_all(events)
        assert calls == []
    assert len(signer.sign_all(good)) == 2
    assert calls == [good[0].id, good[1].id]


def test_the_signer_leaves_verification_to_the_database(
    signer: Signer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One verification on the path, in insert_signed_events (BZSIG there: see
    test_membership_guard): the signer hands over what the key made, unverified."""
    ev = prepared(KIND_ADD_USER, [["-"], ["p", C]])
    monkeypatch.setattr(RelayKey, "sign", lambda self, id_hex, **kw: "00" * 64)
    assert signer.sign_all([ev]) == ["00" * 64]


# --- properties -----------------------------------------------------------------------------

_HEX64 = re.compile(r"[0-9a-f]{64}")
_ROLES = {"owner", "admin", "member"}
_ROLE_ID = re.compile(r"[a-z0-9_-]{1,64}")


def _valid_list_tags(tags: list[list[str]]) -> bool:
    """The 13534 shape, written independently of the signer."""
    if not tags or tags[0] != ["-"]:
        return False
    rest = tags[1:]
    for t in rest:
        if len(t) < 3 or t[0] != "member" or not _HEX64.fullmatch(t[1]) or t[2] not in _ROLES:
            return False
        defined = t[3:]
        if defined != sorted(set(defined)) or not all(
            _ROLE_ID.fullmatch(r) and r not in _ROLES for r in defined
        ):
            return False
    pks = [t[1] for t in rest]
    return pks == sorted(set(pks)) and sum(t[2] == "owner" for t in rest) <= 1


def _valid_user_tags(tags: list[list[str]]) -> bool:
    return (
        len(tags) == 2
        and tags[0] == ["-"]
        and len(tags[1]) == 2
        and tags[1][0] == "p"
        and _HEX64.fullmatch(tags[1][1]) is not None
    )


# Tag elements drawn mostly from the pieces of valid tags, so that near misses are common.
_piece = st.sampled_from(
    ["-", "member", "p", "owner", "admin", "member", "", "x", "mod", A, B, C, A.upper(), A[:-1]]
) | st.text(max_size=3)
_tag = st.lists(_piece, min_size=0, max_size=4)
_defined = st.lists(st.sampled_from(["-", "0", "_", "mod", "x", "admin", "Mod", "", "a b"]))
_member_tag = st.tuples(
    st.sampled_from(PKS), st.sampled_from([*sorted(_ROLES), "Owner"]), _defined
).map(lambda pr: ["member", pr[0], pr[1], *pr[2]])


@settings(max_examples=400, deadline=None)
@given(
    head=st.one_of(st.just([["-"]]), st.lists(_tag, max_size=2)),
    body=st.lists(st.one_of(_member_tag, _tag), max_size=6),
    sort_body=st.booleans(),
)
def test_list_tags_accepted_exactly_when_valid(
    head: list[list[str]], body: list[list[str]], sort_body: bool
) -> None:
    if sort_body:
        body = sorted(body, key=lambda t: t[1] if len(t) > 1 else "")
    tags = head + body
    ev = prepared(KIND_MEMBERSHIP_LIST, tags)
    signer = Signer(KEY)
    valid = _valid_list_tags(tags)
    event("valid" if valid else "invalid")
    if valid:
        signer.check(ev)
    else:
        with pytest.raises(RefusedToSign):
            signer.check(ev)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from([KIND_ADD_USER, KIND_REMOVE_USER]),
    tags=st.one_of(
        st.just([["-"], ["p", A]]),
        st.lists(
            st.one_of(st.just(["-"]), st.just(["p", A]), st.just(["p", B.upper()]), _tag),
            max_size=3,
        ),
    ),
)
def test_user_tags_accepted_exactly_when_valid(kind: int, tags: list[list[str]]) -> None:
    ev = prepared(kind, tags)
    signer = Signer(KEY)
    valid = _valid_user_tags(tags)
    event("valid" if valid else "invalid")
    if valid:
        signer.check(ev)
    else:
        with pytest.raises(RefusedToSign):
            signer.check(ev)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_edit_of_the_bytes_is_refused_or_still_a_valid_event(data: st.DataObject) -> None:
    """Edit a valid serialization anywhere (id kept consistent): the signer either refuses
    or what it accepts is again a canonical, valid event of ours."""
    good = serialize_event(RELAY, T, KIND_MEMBERSHIP_LIST, MEMBERS, "")
    pos = data.draw(st.integers(0, len(good)))
    cut = data.draw(st.integers(0, 3))
    insert = data.draw(st.text(alphabet=' \n"\\,[]{}0123456789abcdefABCDEF-emu', max_size=3))
    ser = good[:pos] + insert + good[pos + cut :]
    ev = from_serialized(ser, KIND_MEMBERSHIP_LIST, T)
    signer = Signer(KEY)
    try:
        arr = signer.check(ev)
    except RefusedToSign:
        event("refused")
        return
    event("accepted")
    assert serialize_event(*arr[1:]) == ser
    assert arr[1] == RELAY and arr[3] == KIND_MEMBERSHIP_LIST and arr[5] == ""
    assert _valid_list_tags(arr[4])


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_any_edit_of_a_user_event_is_refused_or_still_canonical(data: st.DataObject) -> None:
    """The same for 8000/8001: whatever survives an edit is exactly serialize_event of a
    valid event of ours, with the row's kind and created_at."""
    kind = data.draw(st.sampled_from([KIND_ADD_USER, KIND_REMOVE_USER]))
    good = _user_text(kind)
    pos = data.draw(st.integers(0, len(good)))
    cut = data.draw(st.integers(0, 3))
    alphabet = ' \n"\\,[]{}0123456789abcdefABCDEF-pu\u00e9\u0660\uff10'
    insert = data.draw(st.text(alphabet=alphabet, max_size=3))
    ser = good[:pos] + insert + good[pos + cut :]
    ev = from_serialized(ser, kind, T)
    try:
        arr = Signer(KEY).check(ev)
    except RefusedToSign:
        event("refused")
        return
    event("accepted")
    assert ser == serialize_event(RELAY, T, kind, arr[4], "")
    assert arr[:4] == [0, RELAY, T, kind] and arr[5] == ""
    assert _valid_user_tags(arr[4])


# --- a large list --------------------------------------------------------------------------


def test_a_10000_member_list_is_accepted_and_one_swapped_pair_refused(signer: Signer) -> None:
    pks = sorted(os.urandom(32).hex() for _ in range(10_000))
    tags = [["-"]] + [
        ["member", pk, "owner" if i == 0 else ("admin" if i % 100 == 0 else "member")]
        for i, pk in enumerate(pks)
    ]
    ev = prepared(KIND_MEMBERSHIP_LIST, tags)
    assert signer.check(ev)[4] == tags
    swapped = [*tags[:5000], tags[5001], tags[5000], *tags[5002:]]
    with pytest.raises(RefusedToSign, match="tag 5001"):
        signer.check(prepared(KIND_MEMBERSHIP_LIST, swapped))
