"""The click types of buzz-admin's arguments: pubkeys (hex or npub) and durations."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import click

from ..nip19 import pubkey_to_hex


class PubkeyType(click.ParamType):
    """A public key given as 64 hex characters (any case) or an npub; becomes lowercase hex."""

    name = "PUBKEY"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return pubkey_to_hex(value)
        except (ValueError, TypeError) as exc:
            # The message never echoes the value: it might be a secret key pasted by mistake.
            self.fail(str(exc), param, ctx)


PUBKEY = PubkeyType()

_DURATION = re.compile(r"(\d+)\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class DurationType(click.ParamType):
    """72h, 30m, 7d, 1h30m, or a number of seconds."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, dt.timedelta):
            return value
        text = str(value).strip().lower()
        if text.isdigit():
            return dt.timedelta(seconds=int(text))
        if not text or _DURATION.sub("", text).strip():
            self.fail(f"{value!r} is not a duration like 72h, 30m, 7d or 1h30m", param, ctx)
        seconds = sum(int(n) * _UNITS[u] for n, u in _DURATION.findall(text))
        return dt.timedelta(seconds=seconds)


DURATION = DurationType()
