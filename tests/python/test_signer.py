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
from buzz_signer.signer import PreparedEvent, RefusedToSign, Signer

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


def _signed(ev: PreparedEvent, sig: str) -> dict[str, Any]:
    _, pubkey, created_at, kind, tags, content = json.loads(ev.serialized)
    return {
        "id": ev.id,
        "pubkey": pubkey,
        "created_at": created_at,
        "kind": kind,
        "tags": tags,
        "content": content,
        "sig": sig,
    }


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
    event = _signed(ev, sig)
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
        assert verify_event(_signed(ev, sig))


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


def test_a_signature_that_does_not_verify_is_not_returned(
    signer: Signer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ev = prepared(KIND_ADD_USER, [["-"], ["p", C]])
    other = RelayKey.generate()
    other_sig = other.sign(ev.id)  # a valid signature, by the wrong key
    monkeypatch.setattr(RelayKey, "sign", lambda self, id_hex, **kw: other_sig)
    with pytest.raises(RefusedToSign, match="did not verify"):
        signer.sign_all([ev])
    monkeypatch.setattr(RelayKey, "sign", lambda self, id_hex, **kw: "00" * 64)
    with pytest.raises(RefusedToSign, match="did not verify"):
        signer.sign_all([ev])


# --- properties -----------------------------------------------------------------------------

_HEX64 = re.compile(r"[0-9a-f]{64}")
_ROLES = {"owner", "admin", "member"}


def _valid_list_tags(tags: list[list[str]]) -> bool:
    """The 13534 shape, written independently of the signer."""
    if not tags or tags[0] != ["-"]:
        return False
    rest = tags[1:]
    for t in rest:
        if len(t) != 3 or t[0] != "member" or not _HEX64.fullmatch(t[1]) or t[2] not in _ROLES:
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
    ["-", "member", "p", "owner", "admin", "member", "", "x", A, B, C, A.upper(), A[:-1]]
) | st.text(max_size=3)
_tag = st.lists(_piece, min_size=0, max_size=4)
_member_tag = st.tuples(st.sampled_from(PKS), st.sampled_from([*sorted(_ROLES), "Owner"])).map(
    lambda pr: ["member", pr[0], pr[1]]
)


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
