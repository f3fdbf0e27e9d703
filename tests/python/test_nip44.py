"""NIP-44 v2 (buzz_signer.nip44) against the NIP's vectors, and RelayKey.seal / unseal.

The vectors are a copy of the parts of the official nip44.vectors.json read here
(tests/python/data/nip44_vectors.json says where from). nostr-tools, an implementation we did
not write, opens what RelayKey.seal made and seals what RelayKey.unseal opens
(tests/node/nip44_roundtrip.mjs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from coincurve import PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from buzz_signer import nip44
from buzz_signer.keys import RelayKey
from buzz_signer.nip44 import Nip44Error

VECTORS = json.loads((Path(__file__).parent / "data" / "nip44_vectors.json").read_text())["v2"]
VALID, INVALID = VECTORS["valid"], VECTORS["invalid"]
NODE_DIR = Path(__file__).resolve().parents[1] / "node"
SCRIPT = NODE_DIR / "nip44_roundtrip.mjs"

# Invite codes are 8-128 characters of [A-Za-z0-9_-]; the rest exercises the padding and UTF-8.
TEXTS = [
    "a",
    "Summer-Camp_2026",
    "Z" * 128,
    "x" * 32,
    "x" * 33,
    "ключ-🐝-鍵",
    "b" * 65535,  # the longest with a 2-byte length prefix
    "c" * 70000,  # a 6-byte prefix (NIP-44 as amended to encrypt more than 65535 bytes)
]


def xonly(secret_hex: str) -> str:
    return PrivateKey(bytes.fromhex(secret_hex)).public_key.format()[1:].hex()


def flip(payload: str, index: int) -> str:
    """The payload with one bit of its decoded byte `index` changed, base64 again."""
    data = bytearray(base64.b64decode(payload))
    data[index] ^= 0x01
    return base64.b64encode(bytes(data)).decode()


def ids(vectors: list[dict[str, Any]]) -> list[str]:
    return [v.get("note", str(i)) for i, v in enumerate(vectors)]


# ---------------------------------------------------------------------------- the NIP's vectors


@pytest.mark.parametrize("v", VALID["get_conversation_key"])
def test_conversation_key(v: dict[str, str]) -> None:
    key = nip44.conversation_key(bytes.fromhex(v["sec1"]), v["pub2"])
    assert key.hex() == v["conversation_key"]


@pytest.mark.parametrize("v", VALID["get_message_keys"]["keys"])
def test_message_keys(v: dict[str, str]) -> None:
    conversation = bytes.fromhex(VALID["get_message_keys"]["conversation_key"])
    keys = nip44._message_keys(conversation, bytes.fromhex(v["nonce"]))
    assert [k.hex() for k in keys] == [v["chacha_key"], v["chacha_nonce"], v["hmac_key"]]


def test_calc_padded_len() -> None:
    for unpadded, padded in VALID["calc_padded_len"]:
        assert nip44.calc_padded_len(unpadded) == padded, unpadded


@pytest.mark.parametrize("v", VALID["encrypt_decrypt"], ids=lambda v: v["plaintext"][:20])
def test_encrypt_decrypt(v: dict[str, str]) -> None:
    """Both sides of the conversation: sec1 encrypts to pub2, sec2 decrypts from pub1."""
    sender = nip44.conversation_key(bytes.fromhex(v["sec1"]), xonly(v["sec2"]))
    receiver = nip44.conversation_key(bytes.fromhex(v["sec2"]), xonly(v["sec1"]))
    assert sender.hex() == receiver.hex() == v["conversation_key"]
    payload = nip44.encrypt(v["plaintext"], sender, bytes.fromhex(v["nonce"]))
    assert payload == v["payload"]
    assert nip44.decrypt(payload, receiver) == v["plaintext"]


@pytest.mark.parametrize(
    "v",
    VALID["encrypt_decrypt_long_msg"] + VALID["encrypt_decrypt_extended_prefix"],
    ids=lambda v: f"{v['repeat']}x{v['pattern'].encode().hex()}",
)
def test_encrypt_decrypt_long(v: dict[str, Any]) -> None:
    plaintext = v["pattern"] * v["repeat"]
    assert hashlib.sha256(plaintext.encode()).hexdigest() == v["plaintext_sha256"]
    key = bytes.fromhex(v["conversation_key"])
    payload = nip44.encrypt(plaintext, key, bytes.fromhex(v["nonce"]))
    assert hashlib.sha256(payload.encode()).hexdigest() == v["payload_sha256"]
    assert nip44.decrypt(payload, key) == plaintext


@pytest.mark.parametrize("length", INVALID["encrypt_msg_lengths"])
def test_encrypt_refuses_length(length: int) -> None:
    with pytest.raises(Nip44Error, match="empty"):
        nip44.encrypt("a" * length, bytes(32))


def test_encrypt_refuses_what_decrypt_would_refuse() -> None:
    """Past MAX_PAYLOAD_LENGTH neither side takes it, so whatever encrypt makes, decrypt opens."""
    longest = 655360  # the padding bucket whose payload still fits in 1 MiB of base64
    payload = nip44.encrypt("a" * longest, bytes(32))
    assert len(payload) <= nip44.MAX_PAYLOAD_LENGTH
    assert nip44.decrypt(payload, bytes(32)) == "a" * longest
    with pytest.raises(Nip44Error, match="would pass"):
        nip44.encrypt("a" * (longest + 1), bytes(32))
    with pytest.raises(Nip44Error, match="invalid payload length"):
        nip44.decrypt("A" * (nip44.MAX_PAYLOAD_LENGTH + 4), bytes(32))


@pytest.mark.parametrize("v", INVALID["get_conversation_key"], ids=ids(INVALID["get_conversation_key"]))
def test_conversation_key_refuses(v: dict[str, str]) -> None:
    """The message names the culprit the vector's note names, and never its value."""
    culprit = "secret key" if v["note"].startswith("sec1") else "public key"
    with pytest.raises(Nip44Error, match=culprit) as caught:
        nip44.conversation_key(bytes.fromhex(v["sec1"]), v["pub2"])
    assert v["sec1"] not in str(caught.value) and v["pub2"] not in str(caught.value)


@pytest.mark.parametrize("v", INVALID["decrypt"], ids=ids(INVALID["decrypt"]))
def test_decrypt_refuses(v: dict[str, str]) -> None:
    """Each refusal says what the vector's note says, and holds no plaintext, key or payload."""
    key = bytes.fromhex(v["conversation_key"])
    with pytest.raises(Nip44Error) as caught:
        nip44.decrypt(v["payload"], key)
    message = str(caught.value)
    assert v["note"].split(":")[0] in message
    for material in (v["plaintext"], v["conversation_key"], v["payload"]):
        assert len(material) < 8 or material not in message  # "0" is in any length


@given(st.text(min_size=1))
def test_round_trip_any_text(text: str) -> None:
    key = bytes.fromhex(VALID["encrypt_decrypt"][0]["conversation_key"])
    assert nip44.decrypt(nip44.encrypt(text, key), key) == text


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nip44.conversation_key(b"\x01" * 31, xonly("02" * 32)), "32 bytes"),
        (lambda: nip44.conversation_key(b"\x01" * 32, "npub1x"), "64 hexadecimal"),
        (lambda: nip44.encrypt("a", bytes(31)), "conversation key must be 32 bytes"),
        (lambda: nip44.encrypt("a", bytes(32), nonce=bytes(16)), "nonce must be 32 bytes"),
        (lambda: nip44.encrypt("\ud800", bytes(32)), "UTF-8"),
        (lambda: nip44.encrypt(b"a", bytes(32)), "must be text"),
        (lambda: nip44.decrypt(b"A" * 132, bytes(32)), "must be text"),
    ],
)
def test_bad_arguments(call: Any, message: str) -> None:
    with pytest.raises(Nip44Error, match=message):
        call()


# ------------------------------------------------------------------------ RelayKey.seal / unseal


def test_seal_round_trip() -> None:
    key = RelayKey.generate()
    for text in TEXTS:
        payload = key.seal(text)
        assert base64.b64decode(payload)[0] == 2
        assert key.unseal(payload) == text


def test_seal_uses_a_fresh_nonce() -> None:
    key = RelayKey.generate()
    first, second = key.seal("Summer-Camp_2026"), key.seal("Summer-Camp_2026")
    assert first != second
    assert key.unseal(first) == key.unseal(second) == "Summer-Camp_2026"


def test_unseal_with_another_key() -> None:
    """What a key sealed does not open with the next one (a rotated relay key)."""
    old, new = RelayKey.generate(), RelayKey.generate()
    payload = old.seal("Summer-Camp_2026")
    with pytest.raises(Nip44Error, match="invalid MAC") as caught:
        new.unseal(payload)
    assert "Summer-Camp_2026" not in str(caught.value)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda p: flip(p, 0), "unknown encryption version 3"),
        (lambda p: flip(p, 1), "invalid MAC"),  # the nonce
        (lambda p: flip(p, 40), "invalid MAC"),  # the ciphertext
        (lambda p: flip(p, -1), "invalid MAC"),  # the MAC
        (lambda p: p[:-4], "invalid MAC"),  # 3 bytes fewer: the MAC is read elsewhere
        (lambda p: p + "AAAA", "invalid MAC"),
        (lambda p: p[:100], "invalid payload length"),
        (lambda p: p + "\n", "invalid base64"),
        (lambda p: p[:-1] + "é", "invalid base64"),
        (lambda p: "#" + p[1:], "unknown encryption version"),
        (lambda p: "", "invalid payload length: 0"),
    ],
)
def test_unseal_refuses_altered(tamper: Any, message: str) -> None:
    key = RelayKey.generate()
    # 112 bytes pad to 128: a payload of 195 bytes, 260 base64 characters without "=", so
    # cutting or adding 4 characters still decodes and reaches the MAC.
    code = "Summer-Camp_2026" * 7
    payload = key.seal(code)
    assert len(payload) == 260
    with pytest.raises(Nip44Error, match=message) as caught:
        key.unseal(tamper(payload))
    assert code[:16] not in str(caught.value)
    assert key.unseal(payload) == code


def test_seal_refuses_empty_text() -> None:
    with pytest.raises(Nip44Error, match="empty"):
        RelayKey.generate().seal("")


def test_seal_key_stays_hidden() -> None:
    """The cached conversation key opens every sealed code: not in a repr, not picklable."""
    key = RelayKey.generate()
    conversation = nip44.conversation_key(bytes.fromhex(key.secret_hex()), key.pubkey)
    assert conversation.hex() not in repr(key) and conversation.hex() not in str(key)
    assert not hasattr(key, "__dict__")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(key)


# ------------------------------------------------------------------- nostr-tools interoperability


@pytest.fixture(scope="module")
def nostr_tools() -> list[str]:
    """The command that runs the nostr-tools script; skips when node or nostr-tools is missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node (20 or later) is needed for the nostr-tools NIP-44 test; not on PATH")
    if not (NODE_DIR / "node_modules" / "nostr-tools").is_dir():
        pytest.skip(f"nostr-tools is not installed in {NODE_DIR} (npm ci --prefix {NODE_DIR})")
    return [node, str(SCRIPT)]


def with_nostr_tools(command: list[str], key: RelayKey, open_: list[str], seal: list[str]) -> Any:
    """nostr-tools with `key`'s conversation key: what it opened, and what it sealed."""
    request = {"secret": key.secret_hex(), "pubkey": key.pubkey, "open": open_, "seal": seal}
    done = subprocess.run(
        command,
        input=json.dumps(request),  # the secret key on stdin: never in argv
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    return answer["opened"], answer["sealed"]


def test_nostr_tools_opens_what_seal_made(nostr_tools: list[str]) -> None:
    key, other = RelayKey.generate(), RelayKey.generate()
    good = [key.seal(text) for text in TEXTS]
    refused = [flip(good[1], 40), other.seal("Summer-Camp_2026")]
    opened, _ = with_nostr_tools(nostr_tools, key, good + refused, [])
    assert opened[: len(TEXTS)] == [{"ok": True, "text": text} for text in TEXTS]
    assert [o["ok"] for o in opened[len(TEXTS) :]] == [False, False]
    assert all("invalid MAC" in o["error"] for o in opened[len(TEXTS) :]), opened


def test_unseal_opens_what_nostr_tools_sealed(nostr_tools: list[str]) -> None:
    key, other = RelayKey.generate(), RelayKey.generate()
    _, sealed = with_nostr_tools(nostr_tools, key, [], TEXTS)
    assert [key.unseal(payload) for payload in sealed] == TEXTS
    for payload in sealed:
        with pytest.raises(Nip44Error, match="invalid MAC"):
            other.unseal(payload)
