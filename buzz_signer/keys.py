"""The relay's signing key.

The secret lives only in this process: it is never sent to the database, and nothing
here prints, logs, pickles or puts it into an exception message.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import NoReturn

from coincurve import PrivateKey
from coincurve._libsecp256k1 import ffi, lib

from . import nip19, nip44

__all__ = ["DEFAULT_ENV_VAR", "InsecureKeyFileWarning", "InvalidKey", "RelayKey"]

DEFAULT_ENV_VAR = "BUZZ_RELAY_SECRET_KEY"

# secp256k1 group order: a secret must be in [1, n-1].
_CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_HEX = frozenset("0123456789abcdefABCDEF")
_CONSTRUCT = object()  # only the classmethods below hold this token


class InvalidKey(ValueError):
    """The given text is not a usable secret key. The message never contains the input."""


class InsecureKeyFileWarning(UserWarning):
    """A key file can be read by users other than its owner."""


def _parse_secret(text: str) -> bytes:
    """Return the 32-byte secret from 64 hex (any case) or an nsec, or raise InvalidKey."""
    if not isinstance(text, str):
        raise InvalidKey("a secret key must be given as text (64 hex characters or an nsec)")
    text = text.strip()
    if not text:
        raise InvalidKey("the secret key is empty")
    if len(text) == 64 and _HEX.issuperset(text):
        secret = bytes.fromhex(text)
    elif text[:5].lower() in ("nsec1", "npub1"):
        try:
            hrp, hex_secret = nip19.decode(text)
        except ValueError as exc:
            # nip19 messages never echo their input, so passing the reason on is safe;
            # `from None` keeps the original exception (and its frames) out of tracebacks.
            raise InvalidKey(f"the secret key is not a valid nsec: {exc}") from None
        if hrp != "nsec":
            raise InvalidKey("that is a public key (npub); the relay needs its secret key (nsec)")
        secret = bytes.fromhex(hex_secret)
    else:
        raise InvalidKey("a secret key must be 64 hexadecimal characters or an nsec")
    if not 0 < int.from_bytes(secret, "big") < _CURVE_ORDER:
        raise InvalidKey("the secret key is out of range for secp256k1 (zero or >= the order)")
    return secret


class RelayKey:
    """The relay's secp256k1 key pair; signs event ids with BIP-340 Schnorr.

    Build it with `from_secret`, `from_env`, `from_file` or `generate`. Its repr and str
    show only the public key, and it refuses to be pickled or copied.
    """

    __slots__ = ("_ctx", "_keypair", "_npub", "_private", "_pubkey", "_seal_key", "_xonly")

    def __init__(self, secret: bytes, *, _token: object = None) -> None:
        if _token is not _CONSTRUCT:
            raise TypeError("use RelayKey.from_secret/from_env/from_file/generate")
        self._private = PrivateKey(secret)
        self._xonly = self._private.public_key_xonly
        self._pubkey = self._xonly.format().hex()
        self._npub = nip19.encode_npub(self._pubkey)
        # coincurve's sign_schnorr derives the keypair (an EC multiplication) on every call;
        # derive it once. The cdata's repr shows only its type and size, never its bytes.
        self._ctx = self._private.context.ctx
        self._keypair = ffi.new("secp256k1_keypair *")
        if not lib.secp256k1_keypair_create(self._ctx, self._keypair, self._private.secret):
            raise InvalidKey("the secret key is out of range for secp256k1")
        # The NIP-44 conversation key of this key with itself, for seal/unseal: derived once,
        # since it costs an EC multiplication. It opens every sealed text: as secret as the key.
        self._seal_key = nip44.conversation_key(self._private.secret, self._pubkey)

    @classmethod
    def from_secret(cls, text: str) -> RelayKey:
        """Load from 64 hex (any case) or an `nsec1...`; surrounding whitespace is ignored."""
        return cls(_parse_secret(text), _token=_CONSTRUCT)

    @classmethod
    def from_env(cls, var: str = DEFAULT_ENV_VAR) -> RelayKey:
        """Load from an environment variable (default BUZZ_RELAY_SECRET_KEY)."""
        value = os.environ.get(var)
        if value is None or not value.strip():
            raise InvalidKey(
                f"set {var} to the relay's secret key (64 hex characters or an nsec), "
                "or give a key file"
            )
        try:
            return cls.from_secret(value)
        except InvalidKey as exc:
            raise InvalidKey(f"{var}: {exc}") from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> RelayKey:
        """Load from a file holding the key (hex or nsec); warn if others can read it."""
        path = Path(path)
        mode = path.stat().st_mode
        if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
            warnings.warn(
                f"key file {path} is readable by group or others (mode {stat.S_IMODE(mode):o}); "
                f"run: chmod 600 {path}",
                InsecureKeyFileWarning,
                stacklevel=2,
            )
        text = path.read_text(encoding="utf-8", errors="strict")
        try:
            return cls.from_secret(text)
        except InvalidKey as exc:
            raise InvalidKey(f"key file {path}: {exc}") from None

    @classmethod
    def generate(cls) -> RelayKey:
        """Make a new random key (from the OS's CSPRNG)."""
        return cls(PrivateKey().secret, _token=_CONSTRUCT)

    @property
    def pubkey(self) -> str:
        """The x-only public key, 64 lowercase hex (the relay's NIP-11 `self`)."""
        return self._pubkey

    @property
    def npub(self) -> str:
        """The public key as NIP-19 `npub1...`."""
        return self._npub

    def sign(self, id_hex: str, *, aux_rand32: bytes | None = None, verify: bool = True) -> str:
        """Sign a 32-byte event id (64 hex) with BIP-340; return the 64-byte sig as 128 hex.

        `aux_rand32` exists for the BIP-340 test vectors; leave it out so that every
        signature gets fresh auxiliary randomness, as BIP-340 recommends.

        The signature is verified before it is returned (as coincurve's sign_schnorr does)
        and ValueError raised if it does not verify. `verify=False` is only for a caller whose
        signatures are verified where they are used, as Signer's are by insert_signed_events.
        """
        if not isinstance(id_hex, str) or len(id_hex) != 64 or not _HEX.issuperset(id_hex):
            raise ValueError("an event id must be 64 hexadecimal characters")
        if aux_rand32 is None:
            aux = os.urandom(32)
        elif isinstance(aux_rand32, bytes | bytearray) and len(aux_rand32) == 32:
            aux = bytes(aux_rand32)
        else:
            raise ValueError("aux_rand32 must be 32 bytes")
        msg = bytes.fromhex(id_hex)
        sig = ffi.new("unsigned char[64]")
        if not lib.secp256k1_schnorrsig_sign32(self._ctx, sig, msg, self._keypair, aux):
            raise ValueError("signing failed")
        if verify and not lib.secp256k1_schnorrsig_verify(
            self._ctx, sig, msg, 32, self._xonly.public_key
        ):
            raise ValueError("the new signature did not verify; not returned")
        return ffi.buffer(sig)[:].hex()

    def seal(self, text: str) -> str:
        """Encrypt `text` (NIP-44 v2) to this key's own public key: only this key opens it.

        Each call uses a fresh random nonce, so sealing one text twice gives two payloads.
        """
        return nip44.encrypt(text, self._seal_key)

    def unseal(self, payload: str) -> str:
        """The text that `seal` sealed.

        Raises nip44.Nip44Error when the payload does not open with this key: sealed by
        another key (one since rotated), altered, or not a NIP-44 v2 payload.
        """
        return nip44.decrypt(payload, self._seal_key)

    def secret_hex(self) -> str:
        """The secret as 64 lowercase hex. Only for `buzz-admin keygen` to show a new key once."""
        return self._private.secret.hex()

    def nsec(self) -> str:
        """The secret as `nsec1...`. Only for `buzz-admin keygen` to show a new key once."""
        return nip19.encode_nsec(self._private.secret.hex())

    def __repr__(self) -> str:
        return f"RelayKey(pubkey={self._pubkey!r})"

    __str__ = __repr__

    def _refuse(self, *args: object) -> NoReturn:
        raise TypeError("RelayKey cannot be pickled or copied: the secret stays in this process")

    __reduce__ = _refuse
    __reduce_ex__ = _refuse
    __getstate__ = _refuse
