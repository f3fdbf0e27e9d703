"""NIP-19, NIP-01 serialization/ids and BIP-340 verification, checked against vectors and
against nostr-sdk (rust-nostr), an implementation independent of ours."""

from __future__ import annotations

import hashlib
import json

import nostr_sdk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buzz_signer import nip19
from buzz_signer.keys import RelayKey
from buzz_signer.nostr import (
    KIND_ADD_USER,
    KIND_MEMBERSHIP_LIST,
    KIND_REMOVE_USER,
    compute_id,
    event_id,
    is_lower_hex,
    parse_pubkey,
    serialize_event,
    verify_event,
    verify_signature,
    verify_signature_by,
)

# NIP-19's own examples.
NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
NPUB_HEX = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
NSEC_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"

# Every character JSON must escape, plus the ones that JSON.stringify leaves alone but
# naive encoders get wrong (DEL, the JS line separators, non-ASCII, astral plane).
AWKWARD = (
    'q"uote\\back/slash '
    + "".join(chr(c) for c in range(1, 0x20))
    + "\x7f\u2028\u2029 é ß 中文 \U0001f600\U0001f9d1\u200d\U0001f4bb"
)


def _bech32m_variant(hrp: str, data: bytes) -> str:
    """The same payload with a bech32m checksum (which NIP-19 does not use)."""
    values = nip19._convertbits(data, 8, 5, pad=True)
    polymod = nip19._polymod(nip19._hrp_expand(hrp) + values + [0] * 6) ^ 0x2BC830A3
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(nip19._CHARSET[d] for d in values + checksum)


# --- NIP-19 -------------------------------------------------------------------------------


def test_nip19_vectors_both_ways() -> None:
    assert nip19.encode_npub(NPUB_HEX) == NPUB
    assert nip19.encode_nsec(NSEC_HEX) == NSEC
    assert nip19.decode(NPUB) == ("npub", NPUB_HEX)
    assert nip19.decode(NSEC) == ("nsec", NSEC_HEX)
    # Uppercase hex in, lowercase bech32 out.
    assert nip19.encode_npub(NPUB_HEX.upper()) == NPUB


def test_nip19_all_uppercase_is_valid_bech32() -> None:
    assert nip19.decode(NPUB.upper()) == ("npub", NPUB_HEX)
    assert nip19.decode(NSEC.upper()) == ("nsec", NSEC_HEX)


def test_nip19_agrees_with_nostr_sdk() -> None:
    keys = nostr_sdk.Keys.generate()
    pub_hex = keys.public_key().to_hex()
    sec_hex = keys.secret_key().to_hex()
    assert nip19.encode_npub(pub_hex) == keys.public_key().to_bech32()
    assert nip19.encode_nsec(sec_hex) == keys.secret_key().to_bech32()
    assert nip19.decode(keys.public_key().to_bech32()) == ("npub", pub_hex)


def _flip_last(s: str) -> str:
    return s[:-1] + ("q" if s[-1] != "q" else "p")


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(_flip_last(NPUB), id="npub-bad-checksum"),
        pytest.param(_flip_last(NSEC), id="nsec-bad-checksum"),
        pytest.param(NPUB[:10] + NPUB[10].upper() + NPUB[11:], id="npub-mixed-case"),
        pytest.param(NSEC[:10] + NSEC[10].upper() + NSEC[11:], id="nsec-mixed-case"),
        pytest.param(nip19._encode("note", bytes.fromhex(NPUB_HEX)), id="wrong-hrp-note"),
        pytest.param(nip19._encode("nprofile", bytes.fromhex(NPUB_HEX)), id="wrong-hrp-nprofile"),
        pytest.param(nip19._encode("npub", bytes.fromhex(NPUB_HEX)[:31]), id="npub-31-bytes"),
        pytest.param(nip19._encode("nsec", bytes.fromhex(NSEC_HEX) + b"\0"), id="nsec-33-bytes"),
        pytest.param(_bech32m_variant("npub", bytes.fromhex(NPUB_HEX)), id="npub-bech32m"),
        pytest.param(_bech32m_variant("nsec", bytes.fromhex(NSEC_HEX)), id="nsec-bech32m"),
        pytest.param(NPUB[:-1], id="truncated"),
        pytest.param(NSEC.replace("v", "b", 1), id="nsec-char-outside-alphabet"),
        pytest.param(" " + NPUB, id="leading-space"),
        pytest.param("npub1", id="no-data"),
        pytest.param(NPUB_HEX, id="hex-not-bech32"),
        pytest.param("", id="empty"),
        pytest.param(NPUB + "q" * 40, id="too-long"),
    ],
)
def test_nip19_rejects(bad: str) -> None:
    with pytest.raises(ValueError) as info:
        nip19.decode(bad)
    msg = str(info.value)
    assert msg
    # Nothing of the input comes back: not the string, not its data part, not the hex.
    if len(bad) > 8:
        assert bad not in msg and bad.lower() not in msg and bad[8:] not in msg
    assert NSEC_HEX not in msg and NSEC[5:] not in msg


def test_nip19_encode_rejects_bad_hex() -> None:
    for bad in ["", "ab", NPUB_HEX[:-1], NPUB_HEX + "00", "g" * 64, " " + NPUB_HEX[1:]]:
        with pytest.raises(ValueError):
            nip19.encode_npub(bad)
    with pytest.raises(ValueError) as info:
        nip19.encode_nsec(NSEC_HEX[:-2] + "zz")
    assert NSEC_HEX[:-2] not in str(info.value)


def test_pubkey_to_hex() -> None:
    assert nip19.pubkey_to_hex(NPUB_HEX) == NPUB_HEX
    assert nip19.pubkey_to_hex(NPUB_HEX.upper()) == NPUB_HEX
    assert nip19.pubkey_to_hex(NPUB) == NPUB_HEX
    assert nip19.pubkey_to_hex(NPUB.upper()) == NPUB_HEX
    assert nip19.pubkey_to_hex(f"  {NPUB}\n") == NPUB_HEX
    for bad in ["", "xyz", NPUB_HEX[:-1], NPUB_HEX + "0", _flip_last(NPUB), "g" * 64]:
        with pytest.raises(ValueError):
            nip19.pubkey_to_hex(bad)


def test_pubkey_to_hex_refuses_an_nsec_without_echoing_it() -> None:
    for secret in (NSEC, NSEC.upper()):
        with pytest.raises(ValueError) as info:
            nip19.pubkey_to_hex(secret)
        msg = str(info.value)
        assert "nsec" in msg
        assert NSEC not in msg and NSEC[5:] not in msg and NSEC_HEX not in msg


# --- BIP-340 verification vectors -----------------------------------------------------------

# bitcoin/bips bip-0340/test-vectors.csv, rows 0-14 of the final (even-y R) version; columns:
# index, secret key, public key, aux_rand, message, signature, verification result. Rows 0-3
# are also signing vectors (test_keys.py). Later rows sign messages that are not 32 bytes,
# which an event id never is, so they are left out.
BIP340_VECTORS = """\
0,0000000000000000000000000000000000000000000000000000000000000003,F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9,0000000000000000000000000000000000000000000000000000000000000000,0000000000000000000000000000000000000000000000000000000000000000,E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA821525F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0,TRUE
1,B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,0000000000000000000000000000000000000000000000000000000000000001,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE33418906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A,TRUE
2,C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9,DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8,C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906,7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C,5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1BAB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7,TRUE
3,0B432B2677937381AEF05BB02A66ECD012773062CF3FA2549E44F58ED2401710,25D1DFF95105F5253C4022F628A996AD3A0D95FBF21D468A1B33F8C160D8F517,FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF,FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF,7EB0509757E246F19449885651611CB965ECC1A187DD51B64FDA1EDC9637D5EC97582B9CB13DB3933705B32BA982AF5AF25FD78881EBB32771FC5922EFC66EA3,TRUE
4,,D69C3509BB99E412E68B0FE8544E72837DFA30746D8BE2AA65975F29D22DC7B9,,4DF3C3F68FCC83B27E9D42C90431A72499F17875C81A599B566C9889B9696703,00000000000000000000003B78CE563F89A0ED9414F5AA28AD0D96D6795F9C6376AFB1548AF603B3EB45C9F8207DEE1060CB71C04E80F593060B07D28308D7F4,TRUE
5,,EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E17776969E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B,FALSE
6,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,FFF97BD5755EEEA420453A14355235D382F6472F8568A18B2F057A14602975563CC27944640AC607CD107AE10923D9EF7A73C643E166BE5EBEAFA34B1AC553E2,FALSE
7,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,1FA62E331EDBC21C394792D2AB1100A7B432B013DF3F6FF4F99FCB33E0E1515F28890B3EDB6E7189B630448B515CE4F8622A954CFE545735AAEA5134FCCDB2BD,FALSE
8,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769961764B3AA9B2FFCB6EF947B6887A226E8D7C93E00C5ED0C1834FF0D0C2E6DA6,FALSE
9,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,0000000000000000000000000000000000000000000000000000000000000000123DDA8328AF9C23A94C1FEECFD123BA4FB73476F0D594DCB65C6425BD186051,FALSE
10,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,00000000000000000000000000000000000000000000000000000000000000017615FBAF5AE28864013C099742DEADB4DBA87F11AC6754F93780D5A1837CF197,FALSE
11,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,4A298DACAE57395A15D0795DDBFD1DCB564DA82B0F269BC70A74F8220429BA1D69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B,FALSE
12,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B,FALSE
13,,DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141,FALSE
14,,FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC30,,243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89,6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E17776969E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B,FALSE
"""


def bip340_rows() -> list[tuple[int, str, str, str, str, str, bool]]:
    rows = []
    for line in BIP340_VECTORS.splitlines():
        idx, sec, pub, aux, msg, sig, result = line.split(",")
        rows.append(
            (
                int(idx),
                sec.lower(),
                pub.lower(),
                aux.lower(),
                msg.lower(),
                sig.lower(),
                result == "TRUE",
            )
        )
    return rows


@pytest.mark.parametrize("row", bip340_rows(), ids=lambda r: f"vector-{r[0]}")
def test_bip340_verification_vectors(row: tuple[int, str, str, str, str, str, bool]) -> None:
    _, _, pub, _, msg, sig, expected = row
    assert verify_signature(pub, sig, msg) is expected


def test_verify_signature_rejects_malformed_arguments_without_raising() -> None:
    _, _, pub, _, msg, sig, _ = bip340_rows()[1]
    assert verify_signature(pub, sig, msg)
    assert not verify_signature(pub.upper(), sig, msg)
    assert not verify_signature(pub, sig.upper(), msg)
    assert not verify_signature(pub, sig, msg[:-2])
    assert not verify_signature(pub, sig[:-2], msg)
    assert not verify_signature(None, sig, msg)  # type: ignore[arg-type]
    assert not verify_signature(pub, "zz" * 64, msg)


@pytest.mark.parametrize("row", bip340_rows(), ids=lambda r: f"vector-{r[0]}")
def test_verify_signature_by_a_parsed_key_agrees_with_the_vectors(
    row: tuple[int, str, str, str, str, str, bool],
) -> None:
    _, _, pub, _, msg, sig, expected = row
    try:
        key = parse_pubkey(pub)
    except ValueError:
        assert not expected  # vectors 5 and 14: the pubkey is not on the curve
        return
    assert verify_signature_by(key, sig, msg) is expected


@pytest.mark.parametrize(
    "pub",
    [
        pytest.param(bip340_rows()[5][2], id="not-on-curve"),
        pytest.param(bip340_rows()[14][2], id="above-field-size"),
        pytest.param(bip340_rows()[1][2].upper(), id="uppercase"),
        pytest.param(bip340_rows()[1][2][:-2], id="short"),
        pytest.param(bip340_rows()[1][2] + "00", id="long"),
        pytest.param(" " + bip340_rows()[1][2][1:], id="space"),
        pytest.param(NPUB, id="npub"),
        pytest.param(None, id="none"),
        pytest.param(bytes.fromhex(bip340_rows()[1][2]), id="bytes"),
    ],
)
def test_parse_pubkey_refuses(pub: object) -> None:
    with pytest.raises(ValueError):
        parse_pubkey(pub)  # type: ignore[arg-type]


def test_verify_signature_by_rejects_malformed_arguments_without_raising() -> None:
    _, _, pub, _, msg, sig, _ = bip340_rows()[1]
    key = parse_pubkey(pub)
    assert verify_signature_by(key, sig, msg)
    assert not verify_signature_by(key, sig.upper(), msg)
    assert not verify_signature_by(key, sig, msg.upper())
    assert not verify_signature_by(key, sig, msg[:-2])
    assert not verify_signature_by(key, sig[:-2], msg)
    assert not verify_signature_by(key, sig + "00", msg)
    assert not verify_signature_by(key, None, msg)  # type: ignore[arg-type]
    assert not verify_signature_by(key, sig, None)  # type: ignore[arg-type]
    assert not verify_signature_by(key, "zz" * 64, msg)
    assert not verify_signature_by(key, sig[:100] + " " + sig[101:], msg)
    # The right signature by another key.
    assert not verify_signature_by(parse_pubkey(bip340_rows()[2][2]), sig, msg)


def test_is_lower_hex() -> None:
    assert is_lower_hex("00ff", 4)
    assert not is_lower_hex("00FF", 4)
    assert not is_lower_hex("00 f", 4)
    assert not is_lower_hex(" 0ff", 4)
    assert not is_lower_hex("00f", 3)
    assert not is_lower_hex("0\u0660ff", 4)  # a non-ASCII digit
    assert not is_lower_hex(b"00ff", 4)


# --- NIP-01 bytes ---------------------------------------------------------------------------


def test_serialize_event_exact_bytes() -> None:
    got = serialize_event(NPUB_HEX, 1700000000, 1, [["t", "a b"], ["-"]], "hi")
    assert got == f'[0,"{NPUB_HEX}",1700000000,1,[["t","a b"],["-"]],"hi"]'
    # JSON.stringify escaping: short escapes where JSON has them, \u00XX for the other
    # controls, lowercase hex, and everything else (DEL, U+2028, non-ASCII) raw.
    got = serialize_event(NPUB_HEX, 0, 1, [], '"\\/\b\f\n\r\t\x00\x01\x1f\x7f\u2028é\U0001f600')
    assert got.endswith(
        r',0,1,[],"\"\\/\b\f\n\r\t\u0000\u0001\u001f' + "\x7f\u2028é\U0001f600" + '"]'
    )


def test_event_id_is_sha256_of_utf8() -> None:
    assert event_id("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert event_id("\u00e9") == hashlib.sha256(b"\xc3\xa9").hexdigest()


def _sdk_event_json(
    keys: nostr_sdk.Keys, kind: int, tags: list[list[str]], content: str, created_at: int
) -> str:
    builder = (
        nostr_sdk.EventBuilder(nostr_sdk.Kind(kind), content)
        .tags([nostr_sdk.Tag.parse(t) for t in tags])
        .custom_created_at(nostr_sdk.Timestamp.from_secs(created_at))
    )
    return builder.finalize(keys).as_json()


def _our_event(
    key: RelayKey, kind: int, tags: list[list[str]], content: str, created_at: int
) -> dict:
    ser = serialize_event(key.pubkey, created_at, kind, tags, content)
    eid = event_id(ser)
    return {
        "id": eid,
        "pubkey": key.pubkey,
        "created_at": created_at,
        "kind": kind,
        "tags": tags,
        "content": content,
        "sig": key.sign(eid),
    }


AWKWARD_CASES = [
    pytest.param(1, [["t", AWKWARD], ["x", "", AWKWARD[::-1]]], AWKWARD, id="awkward"),
    pytest.param(1, [], "", id="empty"),
    pytest.param(1, [["-"]], "\u2028\u2029", id="line-separators"),
    pytest.param(KIND_MEMBERSHIP_LIST, [["-"], ["member", NPUB_HEX, "owner"]], "", id="13534"),
    pytest.param(KIND_ADD_USER, [["-"], ["p", NPUB_HEX]], "", id="8000"),
    pytest.param(KIND_REMOVE_USER, [["-"], ["p", NPUB_HEX]], "", id="8001"),
]


@pytest.mark.parametrize(("kind", "tags", "content"), AWKWARD_CASES)
def test_our_events_verify_in_nostr_sdk(kind: int, tags: list[list[str]], content: str) -> None:
    key = RelayKey.from_secret(NSEC_HEX)
    ev = _our_event(key, kind, tags, content, 1_700_000_123)
    assert verify_event(ev)
    sdk_ev = nostr_sdk.Event.from_json(json.dumps(ev))
    assert sdk_ev.verify()  # recomputes the id and checks the signature
    assert sdk_ev.id().to_hex() == ev["id"]
    recomputed = nostr_sdk.EventId.compute(
        nostr_sdk.PublicKey.parse(key.pubkey),
        nostr_sdk.Timestamp.from_secs(ev["created_at"]),
        nostr_sdk.Kind(kind),
        [nostr_sdk.Tag.parse(t) for t in tags],
        content,
    )
    assert recomputed.to_hex() == ev["id"]


@pytest.mark.parametrize(("kind", "tags", "content"), AWKWARD_CASES)
def test_nostr_sdk_events_verify_with_ours(kind: int, tags: list[list[str]], content: str) -> None:
    keys = nostr_sdk.Keys.parse(NSEC)
    raw = _sdk_event_json(keys, kind, tags, content, 1_700_000_456)
    ev = json.loads(raw)
    assert ev["content"] == content and ev["tags"] == tags
    assert compute_id(ev) == ev["id"]
    assert verify_event(ev)


def test_verify_event_refuses_tampering() -> None:
    key = RelayKey.from_secret(NSEC_HEX)
    ev = _our_event(key, 1, [["t", AWKWARD]], AWKWARD, 1_700_000_000)
    assert verify_event(ev)
    other = RelayKey.generate()
    for field, value in [
        ("content", AWKWARD + " "),
        ("tags", [["t", AWKWARD + " "]]),
        ("created_at", 1_700_000_001),
        ("kind", 2),
        ("pubkey", other.pubkey),
        ("id", other.sign(ev["id"])[:64]),
        ("sig", other.sign(ev["id"])),
        ("sig", ev["sig"][:-2] + ("00" if ev["sig"][-2:] != "00" else "01")),
    ]:
        assert not verify_event({**ev, field: value}), field


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", None),
        ("id", "A" * 64),
        ("pubkey", NPUB_HEX.upper()),
        ("pubkey", NPUB),
        ("sig", "0" * 127),
        ("sig", 5),
        ("created_at", True),
        ("created_at", 1.5),
        ("created_at", "1700000000"),
        ("created_at", -1),
        ("kind", 70000),
        ("kind", None),
        ("tags", "[]"),
        ("tags", [["t", 1]]),
        ("tags", [("t", "x")]),
        ("tags", None),
        ("content", None),
        ("content", "\ud800"),  # a lone surrogate cannot be encoded as UTF-8
    ],
)
def test_verify_event_malformed_fields_are_false(field: str, value: object) -> None:
    key = RelayKey.from_secret(NSEC_HEX)
    ev = _our_event(key, 1, [["t", "x"]], "x", 1_700_000_000)
    assert not verify_event({**ev, field: value})
    missing = dict(ev)
    del missing[field]
    assert not verify_event(missing)


def test_verify_event_non_dict_is_false() -> None:
    for thing in (None, [], "{}", 5):
        assert not verify_event(thing)  # type: ignore[arg-type]


# Text as it can appear in a NIP-01 event: any code point except lone surrogates (not valid
# UTF-8) and U+0000 (PostgreSQL text cannot hold it).
_event_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))


@settings(max_examples=200, deadline=None)
@given(
    created_at=st.integers(0, 2**40),
    kind=st.integers(0, 65535),
    tags=st.lists(st.lists(_event_text, min_size=1, max_size=4), max_size=4),
    content=_event_text,
)
def test_ids_match_nostr_sdk_for_any_text(
    created_at: int, kind: int, tags: list[list[str]], content: str
) -> None:
    ours = event_id(serialize_event(NPUB_HEX, created_at, kind, tags, content))
    theirs = nostr_sdk.EventId.compute(
        nostr_sdk.PublicKey.parse(NPUB_HEX),
        nostr_sdk.Timestamp.from_secs(created_at),
        nostr_sdk.Kind(kind),
        [nostr_sdk.Tag.parse(t) for t in tags],
        content,
    )
    assert ours == theirs.to_hex()


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["id", "pubkey", "created_at", "kind", "tags", "content", "sig", "x"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=70),
            lambda inner: st.lists(inner, max_size=3),
            max_leaves=6,
        ),
    )
)
def test_verify_event_never_raises(event: dict) -> None:
    assert verify_event(event) is False
