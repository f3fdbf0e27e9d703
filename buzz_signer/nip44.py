"""NIP-44 version 2: encrypted payloads between two secp256k1 keys.

buzz-relay seals each client-chosen invite code to its own key (RelayKey.seal), so the relay
can list the codes while a dump of the database alone shows none of them.

The steps are the NIP's: the conversation key is HKDF-extract (salt "nip44-v2") of the unhashed
x coordinate of the ECDH point; each message's ChaCha20 key and nonce and HMAC key are
HKDF-expand of it with a random 32-byte nonce; the plaintext is padded to a power-of-two bucket
behind its length (2 bytes, or 6 from 65536 bytes on); the MAC is HMAC-SHA256 over
nonce || ciphertext; the payload is base64(0x02 || nonce || ciphertext || mac).

ChaCha20 and HKDF-expand come from the `cryptography` package, the ECDH from coincurve
(libsecp256k1). No message of Nip44Error holds a plaintext, a key or a payload.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from coincurve import PublicKey
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

__all__ = [
    "MAX_PAYLOAD_LENGTH",
    "Nip44Error",
    "calc_padded_len",
    "conversation_key",
    "decrypt",
    "encrypt",
]

VERSION = 2
_SALT = b"nip44-v2"
_HEX = frozenset("0123456789abcdefABCDEF")
_CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_EXTENDED_PREFIX_THRESHOLD = 65536  # from this plaintext length on, a 6-byte length prefix
_MAX_PLAINTEXT = 0xFFFFFFFF
_MIN_PAYLOAD_LENGTH = 132  # base64 characters: 99 bytes, the smallest payload
_MIN_DATA_LENGTH = 99  # version 1 + nonce 32 + smallest padded text 2 + 32 + mac 32
# The NIP lets an implementation refuse big payloads before decoding them (a sealed invite
# code is under 200 characters). 1 MiB of base64 holds 655360 bytes of plaintext; encrypt
# refuses what would not fit, so that every payload made here opens here.
MAX_PAYLOAD_LENGTH = 1 << 20


class Nip44Error(ValueError):
    """A payload that does not decrypt, or an argument NIP-44 refuses.

    The message says which check failed; it never holds a plaintext, a key or a payload.
    """


def conversation_key(secret: bytes, pubkey_hex: str) -> bytes:
    """The 32-byte conversation key of a secret key and an x-only public key (64 hex).

    The same for both sides: conversation_key(a, B) == conversation_key(b, A).
    """
    if not isinstance(secret, bytes | bytearray) or len(secret) != 32:
        raise Nip44Error("a secret key must be 32 bytes")
    if not 0 < int.from_bytes(secret, "big") < _CURVE_ORDER:
        raise Nip44Error("the secret key is out of range for secp256k1 (zero or >= the order)")
    if not isinstance(pubkey_hex, str) or len(pubkey_hex) != 64 or not _HEX.issuperset(pubkey_hex):
        raise Nip44Error("a public key must be 64 hexadecimal characters")
    try:
        # 0x02: the x-only key's point with even y; its x after the multiplication is the same
        # as the odd one's, so either serves.
        point = PublicKey(b"\x02" + bytes.fromhex(pubkey_hex))
    except ValueError:
        raise Nip44Error("the public key is not a point of secp256k1") from None
    shared_x = point.multiply(bytes(secret)).format(compressed=True)[1:]
    # HKDF-extract is HMAC-SHA256 keyed with the salt (RFC 5869, 2.2).
    return hmac.new(_SALT, shared_x, hashlib.sha256).digest()


def calc_padded_len(length: int) -> int:
    """The padded length of a plaintext of `length` bytes (1 or more), without its prefix."""
    if length < 1:
        raise Nip44Error("a plaintext must be 1 byte or more")
    if length <= 32:
        return 32
    next_power = 1 << (length - 1).bit_length()  # the NIP's 1 << (floor(log2(length - 1)) + 1)
    chunk = 32 if next_power <= 256 else next_power // 8
    return chunk * ((length - 1) // chunk + 1)


def encrypt(plaintext: str, conversation_key: bytes, nonce: bytes | None = None) -> str:
    """The NIP-44 v2 payload of `plaintext` (1 or more UTF-8 bytes), as base64 text.

    Leave `nonce` out: each payload then gets 32 fresh random bytes, as the NIP requires. It
    exists for the NIP's test vectors.
    """
    if not isinstance(plaintext, str):
        raise Nip44Error("a plaintext must be text")
    if nonce is None:
        nonce = os.urandom(32)
    elif not isinstance(nonce, bytes | bytearray) or len(nonce) != 32:
        raise Nip44Error("a nonce must be 32 bytes")
    chacha_key, chacha_nonce, hmac_key = _message_keys(conversation_key, bytes(nonce))
    padded = _pad(plaintext)
    ciphertext = _chacha20(chacha_key, chacha_nonce, padded)
    mac = _mac(hmac_key, nonce, ciphertext)
    return base64.b64encode(bytes([VERSION]) + nonce + ciphertext + mac).decode("ascii")


def decrypt(payload: str, conversation_key: bytes) -> str:
    """The plaintext of a NIP-44 v2 payload; Nip44Error if it does not decrypt with this key."""
    nonce, ciphertext, mac = _decode_payload(payload)
    chacha_key, chacha_nonce, hmac_key = _message_keys(conversation_key, nonce)
    if not hmac.compare_digest(_mac(hmac_key, nonce, ciphertext), mac):
        raise Nip44Error("invalid MAC: the payload was altered or sealed with another key")
    return _unpad(_chacha20(chacha_key, chacha_nonce, ciphertext))


def _message_keys(key: bytes, nonce: bytes) -> tuple[bytes, bytes, bytes]:
    """(ChaCha20 key, ChaCha20 nonce, HMAC key) of one message: HKDF-expand, info = nonce."""
    if not isinstance(key, bytes | bytearray) or len(key) != 32:
        raise Nip44Error("a conversation key must be 32 bytes")
    keys = HKDFExpand(algorithm=hashes.SHA256(), length=76, info=nonce).derive(bytes(key))
    return keys[0:32], keys[32:44], keys[44:76]


def _chacha20(key: bytes, nonce: bytes, data: bytes) -> bytes:
    # cryptography takes RFC 8439's 12-byte nonce behind the 4-byte little-endian block
    # counter, which NIP-44 starts at 0.
    cipher = Cipher(algorithms.ChaCha20(key, b"\x00\x00\x00\x00" + nonce), mode=None)
    return cipher.encryptor().update(data)


def _mac(hmac_key: bytes, nonce: bytes, ciphertext: bytes) -> bytes:
    return hmac.new(hmac_key, nonce + ciphertext, hashlib.sha256).digest()


def _payload_length(plaintext_length: int) -> int:
    """Base64 characters of the payload of a plaintext of this many bytes."""
    prefix = 2 if plaintext_length < _EXTENDED_PREFIX_THRESHOLD else 6
    data = 1 + 32 + prefix + calc_padded_len(plaintext_length) + 32
    return 4 * ((data + 2) // 3)


def _pad(plaintext: str) -> bytes:
    try:
        unpadded = plaintext.encode("utf-8")
    except UnicodeEncodeError:
        raise Nip44Error("the plaintext cannot be encoded as UTF-8 (a lone surrogate)") from None
    length = len(unpadded)
    if length < 1:
        raise Nip44Error("the plaintext is empty; NIP-44 encrypts 1 byte or more")
    if length > _MAX_PLAINTEXT or _payload_length(length) > MAX_PAYLOAD_LENGTH:
        raise Nip44Error(
            f"the plaintext is {length} bytes; its payload would pass {MAX_PAYLOAD_LENGTH} characters"
        )
    if length < _EXTENDED_PREFIX_THRESHOLD:
        prefix = length.to_bytes(2, "big")
    else:
        prefix = b"\x00\x00" + length.to_bytes(4, "big")
    return prefix + unpadded + bytes(calc_padded_len(length) - length)


def _unpad(padded: bytes) -> str:
    length, prefix = int.from_bytes(padded[0:2], "big"), 2
    if length == 0:  # a zero u16 (no plaintext is empty) announces the 6-byte prefix
        length, prefix = int.from_bytes(padded[2:6], "big"), 6
        if length < _EXTENDED_PREFIX_THRESHOLD:
            raise Nip44Error("invalid padding: a 6-byte length prefix for a short plaintext")
    # calc_padded_len(length) >= length, so this also proves the plaintext is all there.
    if len(padded) != prefix + calc_padded_len(length):
        raise Nip44Error("invalid padding: the length prefix does not match the padded size")
    try:
        return padded[prefix : prefix + length].decode("utf-8")
    except UnicodeDecodeError:
        raise Nip44Error("the decrypted plaintext is not valid UTF-8") from None


def _decode_payload(payload: str) -> tuple[bytes, bytes, bytes]:
    """(nonce, ciphertext, mac) of a payload, after the NIP's checks of its form."""
    if not isinstance(payload, str):
        raise Nip44Error("a NIP-44 payload must be text")
    if payload[:1] == "#":  # the NIP's flag of a future, non-base64 encoding
        raise Nip44Error("unknown encryption version (a payload starting with '#')")
    if not _MIN_PAYLOAD_LENGTH <= len(payload) <= MAX_PAYLOAD_LENGTH:
        raise Nip44Error(
            f"invalid payload length: {len(payload)} characters, "
            f"not between {_MIN_PAYLOAD_LENGTH} and {MAX_PAYLOAD_LENGTH}"
        )
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:  # binascii.Error, or a character outside ASCII
        data = None
    # Only the one canonical base64 of the bytes (padding, no stray bits or characters).
    if data is None or base64.b64encode(data).decode("ascii") != payload:
        raise Nip44Error("invalid base64 in the payload")
    if len(data) < _MIN_DATA_LENGTH:
        raise Nip44Error(f"invalid data length: {len(data)} bytes, at least {_MIN_DATA_LENGTH}")
    if data[0] != VERSION:
        raise Nip44Error(f"unknown encryption version {data[0]} (this reads version {VERSION})")
    return data[1:33], data[33:-32], data[-32:]
