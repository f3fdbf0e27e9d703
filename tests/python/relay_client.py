"""Helpers for the relay tests: signed client events, and a RelaySession on a real database.

`session_on(db_url, key, community)` gives a RelaySession over the real DatabaseBackend (a
pool of AsyncConnections to the test database): the protocol module exactly as buzz-relay
runs it, minus the websocket.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from coincurve import PrivateKey
from psycopg_pool import AsyncConnectionPool

from buzz_signer.keys import RelayKey
from buzz_signer.nostr import event_id, serialize_event
from buzz_signer.relay.backend import DatabaseBackend
from buzz_signer.relay.limits import DEFAULT_LIMITS, Limits
from buzz_signer.relay.protocol import Community, RelaySession
from buzz_signer.signer import PreparedEvent, Signer, signed_event


def signed(
    secret: str,
    kind: int,
    tags: list[list[str]] | None = None,
    content: str = "",
    created_at: int | None = None,
) -> dict[str, Any]:
    """A NIP-01 event signed by `secret` (hex)."""
    sk = PrivateKey(bytes.fromhex(secret))
    pubkey = sk.public_key_xonly.format().hex()
    created_at = int(time.time()) if created_at is None else created_at
    serialized = serialize_event(pubkey, created_at, kind, tags or [], content)
    ev = PreparedEvent("", event_id(serialized), kind, created_at, serialized)
    return signed_event(ev, sk.sign_schnorr(bytes.fromhex(ev.id)).hex())


def auth_event(secret: str, challenge: str, relay_url: str, **kw: Any) -> dict[str, Any]:
    return signed(secret, 22242, [["relay", relay_url], ["challenge", challenge]], **kw)


def nip98_header(
    secret: str,
    body: bytes,
    url: str,
    method: str = "POST",
    kind: int = 27235,
    created_at: int | None = None,
) -> str:
    """An Authorization header proving `secret`'s owner sends `body` to `url` (NIP-98)."""
    tags = [["u", url], ["method", method], ["payload", hashlib.sha256(body).hexdigest()]]
    event = signed(secret, kind, tags, created_at=created_at)
    return "Nostr " + base64.b64encode(json.dumps(event).encode()).decode()


# Client messages that are not messages, each answered by a NOTICE on a connection that stays
# usable (SPEC section 10): ids that are not strings, and strings that are not Unicode text.
MALFORMED = [
    '["CLOSE",["x"]]',
    '["CLOSE",{"a":1}]',
    '["CLOSE"]',
    '["CLOSE","\\ud800"]',
    '["REQ","\\ud800",{"kinds":[13534]}]',
    '["REQ","\\udfff x",{"kinds":[1]}]',
    '["COUNT","\\ud800",{"kinds":[1]}]',
    '["EVENT",{"id":"\\ud800","kind":1}]',
    '["AUTH",{"id":"\\ud800"}]',
    '["\\ud800","x"]',
]


class SessionClient:
    """Sends client messages to a RelaySession and returns its answers, parsed."""

    def __init__(self, session: RelaySession) -> None:
        self.session = session

    async def send(self, *message: Any) -> list[list[Any]]:
        return [json.loads(m) for m in await self.session.handle(json.dumps(list(message)))]

    async def raw(self, text: str) -> list[list[Any]]:
        return [json.loads(m) for m in await self.session.handle(text)]

    async def auth(self, secret: str, relay_url: str = "ws://relay.test") -> list[list[Any]]:
        return await self.send("AUTH", auth_event(secret, self.session.challenge, relay_url))


@asynccontextmanager
async def backend_on(db_url: str, key: RelayKey) -> AsyncIterator[DatabaseBackend]:
    async with AsyncConnectionPool(
        db_url, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
    ) as pool:
        yield DatabaseBackend(pool, key)


def session(
    backend: DatabaseBackend,
    key: RelayKey,
    cid: Any,
    host: str,
    *,
    limits: Limits = DEFAULT_LIMITS,
    **kw: Any,
) -> SessionClient:
    return SessionClient(
        RelaySession(Community(cid, host), backend, Signer(key), limits=limits, **kw)
    )
