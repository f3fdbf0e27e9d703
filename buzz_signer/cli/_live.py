"""The live signed events of a community as the database serves them: read by show-list,
verify and watch."""

from __future__ import annotations

from typing import Any

import psycopg

from ..membership import Membership
from ..nostr import KIND_DELETION, KIND_ROLE


def live_list(conn: psycopg.Connection[Any], cid: Any) -> dict[str, Any] | None:
    return Membership(conn, None).member_list(cid)


def role_of(event: dict[str, Any]) -> str | None:
    """The role id of a 33534 (its d tag) or of a kind 5 deletion (its a tag's last part)."""
    tags = event.get("tags")
    for tag in tags if isinstance(tags, list) else ():
        if not isinstance(tag, list) or len(tag) < 2 or not isinstance(tag[1], str):
            continue
        if event.get("kind") == KIND_ROLE and tag[0] == "d":
            return tag[1]
        if event.get("kind") == KIND_DELETION and tag[0] == "a" and tag[1].count(":") >= 2:
            return tag[1].split(":", 2)[2]
    return None
