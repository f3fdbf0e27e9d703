"""NIP-19 bech32 keys: just `npub` and `nsec`.

Bech32 as in BIP-173 (checksum constant 1), not bech32m. Error messages never echo
the input or any part of it: the text may be a secret key, and before the checksum is
verified we cannot even trust the prefix to tell us whether it is one.
"""

from __future__ import annotations

__all__ = ["decode", "encode_npub", "encode_nsec", "pubkey_to_hex"]

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_CHARSET_REV = {c: i for i, c in enumerate(_CHARSET)}
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
_BECH32_CONST = 1  # bech32m would be 0x2BC830A3; NIP-19 uses plain bech32
_MAX_LEN = 90  # BIP-173 limit on the whole string
_HRPS = ("npub", "nsec")
_HEX = frozenset("0123456789abcdefABCDEF")


def _polymod(values: list[int]) -> int:
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _GENERATOR[i]
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convertbits(data: bytes | list[int], frombits: int, tobits: int, pad: bool) -> list[int]:
    """Regroup bits; without `pad`, leftover bits must be fewer than `frombits` and zero."""
    acc = 0
    bits = 0
    out: list[int] = []
    maxv = (1 << tobits) - 1
    for value in data:
        acc = (acc << frombits) | value
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (tobits - bits)) & maxv)
    elif bits >= frombits or ((acc << (tobits - bits)) & maxv):
        raise ValueError("invalid padding in bech32 data")
    return out


def _encode(hrp: str, data32: bytes) -> str:
    values = _convertbits(data32, 8, 5, pad=True)
    polymod = _polymod(_hrp_expand(hrp) + values + [0] * 6) ^ _BECH32_CONST
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[d] for d in values + checksum)


def _hex32(hex_key: str, what: str) -> bytes:
    if not isinstance(hex_key, str) or len(hex_key) != 64 or not _HEX.issuperset(hex_key):
        raise ValueError(f"{what} must be 64 hexadecimal characters")
    return bytes.fromhex(hex_key)


def encode_npub(hex_pubkey: str) -> str:
    """Encode a 64-hex x-only public key as `npub1...`."""
    return _encode("npub", _hex32(hex_pubkey, "a public key"))


def encode_nsec(hex_secret: str) -> str:
    """Encode a 64-hex secret key as `nsec1...`."""
    return _encode("nsec", _hex32(hex_secret, "a secret key"))


def decode(bech: str) -> tuple[str, str]:
    """Decode an `npub`/`nsec` string into (hrp, 64-char lowercase hex).

    Raises ValueError for anything else: mixed case, bad characters, bad checksum
    (including bech32m), another prefix, or a payload that is not 32 bytes.
    """
    if not isinstance(bech, str):
        raise TypeError("a NIP-19 key must be a string")
    if len(bech) > _MAX_LEN:
        raise ValueError("not a NIP-19 key: too long for bech32")
    if any(ord(c) < 33 or ord(c) > 126 for c in bech):
        raise ValueError("not a NIP-19 key: contains spaces or non-ASCII characters")
    if bech.lower() != bech and bech.upper() != bech:
        raise ValueError("not a NIP-19 key: mixes upper and lower case")
    bech = bech.lower()
    pos = bech.rfind("1")
    if pos < 1 or pos + 7 > len(bech):
        raise ValueError("not a NIP-19 key: no bech32 separator '1' followed by data")
    hrp, rest = bech[:pos], bech[pos + 1 :]
    try:
        values = [_CHARSET_REV[c] for c in rest]
    except KeyError:
        raise ValueError("not a NIP-19 key: character outside the bech32 alphabet") from None
    if _polymod(_hrp_expand(hrp) + values) != _BECH32_CONST:
        raise ValueError("not a NIP-19 key: bad bech32 checksum (mistyped or truncated?)")
    if hrp not in _HRPS:
        raise ValueError("not an npub or nsec: wrong NIP-19 prefix")
    data = bytes(_convertbits(values[:-6], 5, 8, pad=False))
    if len(data) != 32:
        raise ValueError(f"{hrp} must hold 32 bytes, this one holds {len(data)}")
    return hrp, data.hex()


def pubkey_to_hex(s: str) -> str:
    """Normalize a public key given as 64 hex (any case) or `npub1...` to lowercase hex."""
    if not isinstance(s, str):
        raise TypeError("a public key must be a string")
    s = s.strip()
    if len(s) == 64 and _HEX.issuperset(s):
        return s.lower()
    if s[:5].lower() == "nsec1":
        # Refuse loudly: someone is about to paste a secret where a public key belongs.
        raise ValueError("that is a secret key (nsec), not a public key: use the npub or hex")
    if s[:5].lower() != "npub1":
        raise ValueError("a public key must be 64 hexadecimal characters or an npub")
    return decode(s)[1]
