"""RelayKey: loading, signing (BIP-340 vectors) and keeping the secret out of every output."""

from __future__ import annotations

import copy
import os
import pickle
import warnings
from pathlib import Path

import pytest
from coincurve import PrivateKey

from buzz_signer import keys as keys_module
from buzz_signer.keys import InsecureKeyFileWarning, InvalidKey, RelayKey
from buzz_signer.nostr import verify_signature

# NIP-19's example key pair.
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
SECRET_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
PUBKEY_HEX = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"

CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

# bitcoin/bips bip-0340/test-vectors.csv, the rows with a secret key (0-3):
# (secret key, public key, aux_rand, message, signature).
BIP340_SIGNING = [
    (
        "0000000000000000000000000000000000000000000000000000000000000003",
        "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000000",
        (
            "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA8215"
            "25F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0"
        ),
    ),
    (
        "B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
        "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
        "0000000000000000000000000000000000000000000000000000000000000001",
        "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
        (
            "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE3341"
            "8906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A"
        ),
    ),
    (
        "C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9",
        "DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8",
        "C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906",
        "7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C",
        (
            "5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1B"
            "AB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7"
        ),
    ),
    (
        "0B432B2677937381AEF05BB02A66ECD012773062CF3FA2549E44F58ED2401710",
        "25D1DFF95105F5253C4022F628A996AD3A0D95FBF21D468A1B33F8C160D8F517",
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
        (
            "7EB0509757E246F19449885651611CB965ECC1A187DD51B64FDA1EDC9637D5EC"
            "97582B9CB13DB3933705B32BA982AF5AF25FD78881EBB32771FC5922EFC66EA3"
        ),
    ),
]


def _secret_forms(secret_hex: str) -> list[str]:
    key = RelayKey.from_secret(secret_hex)
    nsec = key.nsec()
    return [secret_hex.lower(), secret_hex.upper(), nsec, nsec.upper(), nsec[5:], nsec[5:-6]]


def _assert_no_secret(text: str, secret_hex: str = SECRET_HEX) -> None:
    for form in _secret_forms(secret_hex):
        assert form not in text


# --- signing ------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", BIP340_SIGNING, ids=[f"vector-{i}" for i in range(4)])
def test_bip340_signing_vectors(vector: tuple[str, str, str, str, str]) -> None:
    secret, pub, aux, msg, sig = (v.lower() for v in vector)
    key = RelayKey.from_secret(secret)
    assert key.pubkey == pub
    assert key.sign(msg, aux_rand32=bytes.fromhex(aux)) == sig
    # Without aux_rand32 the signature is randomized but must still verify, by our path.
    fresh = key.sign(msg)
    assert fresh != sig
    assert verify_signature(pub, fresh, msg)
    assert verify_signature(pub, sig, msg)


def test_signatures_use_fresh_randomness() -> None:
    key = RelayKey.generate()
    msg = os.urandom(32).hex()
    a, b = key.sign(msg), key.sign(msg)
    assert a != b
    assert len(a) == 128 and a == a.lower()
    assert verify_signature(key.pubkey, a, msg) and verify_signature(key.pubkey, b, msg)


@pytest.mark.parametrize("bad", ["", "00" * 31, "00" * 33, "zz" * 32, None, b"\0" * 32])
def test_sign_rejects_a_non_id(bad: object) -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    with pytest.raises(ValueError):
        key.sign(bad)  # type: ignore[arg-type]


def test_sign_accepts_uppercase_id() -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    msg = os.urandom(32).hex()
    assert verify_signature(key.pubkey, key.sign(msg.upper()), msg)


@pytest.mark.parametrize("vector", BIP340_SIGNING, ids=[f"vector-{i}" for i in range(4)])
def test_bip340_signing_vectors_without_the_self_check(
    vector: tuple[str, str, str, str, str],
) -> None:
    secret, pub, aux, msg, sig = (v.lower() for v in vector)
    key = RelayKey.from_secret(secret)
    assert key.sign(msg, aux_rand32=bytes.fromhex(aux), verify=False) == sig
    assert key.sign(msg, aux_rand32=bytearray.fromhex(aux)) == sig
    fresh = key.sign(msg, verify=False)
    assert fresh != sig
    assert verify_signature(pub, fresh, msg)


def test_signing_agrees_with_coincurve() -> None:
    key = RelayKey.generate()
    reference = PrivateKey(bytes.fromhex(key.secret_hex()))
    for _ in range(20):
        msg, aux = os.urandom(32), os.urandom(32)
        expected = reference.sign_schnorr(msg, aux).hex()
        assert key.sign(msg.hex(), aux_rand32=aux) == expected
        assert key.sign(msg.hex(), aux_rand32=aux, verify=False) == expected


@pytest.mark.parametrize("verify", [True, False])
def test_every_signature_draws_its_own_aux_randomness(
    monkeypatch: pytest.MonkeyPatch, verify: bool
) -> None:
    key = RelayKey.generate()
    msg = os.urandom(32).hex()
    drawn: list[bytes] = []
    real_urandom = os.urandom

    def recording_urandom(n: int) -> bytes:
        drawn.append(real_urandom(n))
        return drawn[-1]

    monkeypatch.setattr(keys_module.os, "urandom", recording_urandom)
    sigs = [key.sign(msg, verify=verify) for _ in range(5)]
    monkeypatch.undo()
    assert [len(aux) for aux in drawn] == [32] * 5
    assert len(set(sigs)) == 5
    # Each signature is the one BIP-340 gives for exactly the aux drawn for it.
    for sig, aux in zip(sigs, drawn, strict=True):
        assert key.sign(msg, aux_rand32=aux) == sig
        assert verify_signature(key.pubkey, sig, msg)


@pytest.mark.parametrize(
    "aux",
    [b"", b"\0" * 31, b"\0" * 33, "0" * 32, "00" * 32, 0, [0] * 32],
    ids=["empty", "31-bytes", "33-bytes", "str-32", "hex-str", "int", "list"],
)
def test_sign_rejects_bad_aux(aux: object) -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    for verify in (True, False):
        with pytest.raises(ValueError, match="aux_rand32"):
            key.sign("00" * 32, aux_rand32=aux, verify=verify)  # type: ignore[arg-type]


def test_sign_refuses_to_return_a_signature_that_does_not_verify() -> None:
    # Stand in for a faulty library: the check runs against another key's pubkey.
    key = RelayKey.from_secret(SECRET_HEX)
    other = RelayKey.generate()
    key._xonly = other._xonly  # type: ignore[attr-defined]
    msg = os.urandom(32).hex()
    with pytest.raises(ValueError, match="did not verify") as info:
        key.sign(msg)
    _assert_no_secret(str(info.value))
    assert info.value.__cause__ is None
    # verify=False leaves the check to where the signature is used (the database, for Signer).
    assert verify_signature(PUBKEY_HEX, key.sign(msg, verify=False), msg)


# --- loading ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        SECRET_HEX,
        SECRET_HEX.upper(),
        NSEC,
        NSEC.upper(),
        f"  {SECRET_HEX}\n",
        f"\t{NSEC}\r\n",
    ],
)
def test_from_secret_forms(text: str) -> None:
    key = RelayKey.from_secret(text)
    assert key.pubkey == PUBKEY_HEX
    assert key.npub == NPUB
    assert key.secret_hex() == SECRET_HEX
    assert key.nsec() == NSEC


def test_generate_gives_distinct_valid_keys() -> None:
    a, b = RelayKey.generate(), RelayKey.generate()
    assert a.pubkey != b.pubkey
    assert RelayKey.from_secret(a.nsec()).pubkey == a.pubkey
    assert RelayKey.from_secret(a.secret_hex()).pubkey == a.pubkey


def _flip_last(s: str) -> str:
    return s[:-1] + ("q" if s[-1] != "q" else "p")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("   \n", id="blank"),
        pytest.param(SECRET_HEX[:-1], id="63-hex"),
        pytest.param(SECRET_HEX + "0", id="65-hex"),
        pytest.param(SECRET_HEX[:-2] + "zz", id="not-hex"),
        pytest.param(SECRET_HEX[:30] + " " + SECRET_HEX[31:], id="inner-space"),
        pytest.param("0x" + SECRET_HEX[2:], id="0x-prefix"),
        pytest.param("00" * 32, id="zero"),
        pytest.param(f"{CURVE_ORDER:064x}", id="curve-order"),
        pytest.param(f"{CURVE_ORDER + 1:064x}", id="above-order"),
        pytest.param("ff" * 32, id="all-ff"),
        pytest.param(_flip_last(NSEC), id="nsec-bad-checksum"),
        pytest.param(NSEC[:10] + NSEC[10].upper() + NSEC[11:], id="nsec-mixed-case"),
        pytest.param(NPUB, id="npub"),
        pytest.param(PUBKEY_HEX[:-1], id="truncated-pubkey"),
    ],
)
def test_from_secret_rejects_without_echoing(text: str) -> None:
    with pytest.raises(InvalidKey) as info:
        RelayKey.from_secret(text)
    msg = str(info.value)
    assert msg
    stripped = text.strip()
    if stripped:
        assert stripped not in msg
        assert stripped[5:-6] not in msg  # the data part of a bech32 string
        assert stripped[:40] not in msg
    _assert_no_secret(msg)
    # Nothing chained either: a traceback would print the cause.
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


def test_invalid_key_is_a_value_error() -> None:
    assert issubclass(InvalidKey, ValueError)
    with pytest.raises(InvalidKey):
        RelayKey.from_secret(b"\x01" * 32)  # type: ignore[arg-type]


def test_npub_is_refused_with_a_useful_message() -> None:
    with pytest.raises(InvalidKey, match="public key"):
        RelayKey.from_secret(NPUB)


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUZZ_RELAY_SECRET_KEY", NSEC + "\n")
    assert RelayKey.from_env().pubkey == PUBKEY_HEX
    monkeypatch.setenv("OTHER_KEY_VAR", SECRET_HEX.upper())
    assert RelayKey.from_env("OTHER_KEY_VAR").pubkey == PUBKEY_HEX


@pytest.mark.parametrize("value", [None, "", "  "])
def test_from_env_missing_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("BUZZ_RELAY_SECRET_KEY", raising=False)
    else:
        monkeypatch.setenv("BUZZ_RELAY_SECRET_KEY", value)
    with pytest.raises(InvalidKey, match="BUZZ_RELAY_SECRET_KEY"):
        RelayKey.from_env()
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(InvalidKey, match="MY_KEY"):
        RelayKey.from_env("MY_KEY")


def test_from_env_invalid_names_the_variable_not_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = SECRET_HEX[:-1]
    monkeypatch.setenv("BUZZ_RELAY_SECRET_KEY", bad)
    with pytest.raises(InvalidKey) as info:
        RelayKey.from_env()
    assert "BUZZ_RELAY_SECRET_KEY" in str(info.value)
    assert bad not in str(info.value) and bad[:32] not in str(info.value)


def _write_key(path: Path, text: str, mode: int) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_from_file_private(tmp_path: Path) -> None:
    path = _write_key(tmp_path / "relay.key", SECRET_HEX + "\n", 0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RelayKey.from_file(path).pubkey == PUBKEY_HEX
        assert RelayKey.from_file(str(path)).pubkey == PUBKEY_HEX


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_from_file_warns_when_others_can_read(tmp_path: Path, mode: int) -> None:
    path = _write_key(tmp_path / "relay.key", NSEC + "\n", mode)
    with pytest.warns(InsecureKeyFileWarning, match="chmod 600") as record:
        key = RelayKey.from_file(path)
    assert key.pubkey == PUBKEY_HEX
    _assert_no_secret(str(record[0].message))


def test_from_file_invalid_content(tmp_path: Path) -> None:
    bad = SECRET_HEX[:-2] + "zz"
    path = _write_key(tmp_path / "relay.key", bad + "\n", 0o600)
    with pytest.raises(InvalidKey) as info:
        RelayKey.from_file(path)
    assert str(path) in str(info.value)
    assert bad not in str(info.value) and bad[:32] not in str(info.value)


def test_from_file_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        RelayKey.from_file(tmp_path / "nope.key")


# --- keeping the secret in -------------------------------------------------------------------


def test_repr_and_str_show_only_the_pubkey() -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    texts = [repr(key), str(key), f"{key}", f"{key!r}", format(key, "")]
    texts.append("%s" % key)  # noqa: UP031 - the %-format path, on purpose
    for text in texts:
        assert PUBKEY_HEX in text
        _assert_no_secret(text)
    _assert_no_secret(repr([key, {"k": key}]))


def test_no_attribute_shows_the_secret() -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    for name in RelayKey.__slots__:
        _assert_no_secret(repr(getattr(key, name)))
        _assert_no_secret(str(getattr(key, name)))


def test_no_instance_dict_to_dump() -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    with pytest.raises(TypeError):
        vars(key)
    with pytest.raises(AttributeError):
        key.extra = 1  # type: ignore[attr-defined]


def test_pickling_and_copying_refused() -> None:
    key = RelayKey.from_secret(SECRET_HEX)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError) as info:
            pickle.dumps(key, protocol=protocol)
        _assert_no_secret(str(info.value))
    with pytest.raises(TypeError):
        copy.copy(key)
    with pytest.raises(TypeError):
        copy.deepcopy(key)
    with pytest.raises(TypeError):
        key.__getstate__()


def test_direct_construction_refused() -> None:
    with pytest.raises(TypeError):
        RelayKey(bytes.fromhex(SECRET_HEX))
    with pytest.raises(TypeError):
        RelayKey(bytes.fromhex(SECRET_HEX), _token=object())
