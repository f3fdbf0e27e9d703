"""buzz-admin watch: each list and role event printed as it commits (NOTIFY buzz_membership)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import click
import psycopg

from ..membership import Membership
from ..nostr import (
    KIND_DELETION,
    KIND_MEMBERSHIP_LIST,
    KIND_ROLE,
)
from ._live import live_list, role_of
from .config import Community, community_row, find_community
from .failures import BAD_INPUT, Failure
from .output import echo_json, member_count, when
from .state import community_command, get_state

CHANNEL = "buzz_membership"


def register(main: click.Group) -> None:
    main.add_command(watch)


def _label_of(event: dict[str, Any]) -> str | None:
    for tag in event.get("tags") or ():
        if isinstance(tag, list) and len(tag) >= 2 and tag[0] == "label":
            return str(tag[1])
    return None


def live_role_events(conn: psycopg.Connection[Any], cid: Any) -> dict[str, dict[str, Any]]:
    """The community's live role events by role id: its definition, else its deletion."""
    events: dict[str, dict[str, Any]] = {}
    api = Membership(conn, None)
    for event in [*api.role_deletions(cid), *api.role_definitions(cid)]:
        role = role_of(event)
        if role is not None:
            events[role] = event
    return events


def live_role_event(
    conn: psycopg.Connection[Any], cid: Any, kind: int, event_id: str
) -> dict[str, Any] | None:
    """The live 33534 (or kind 5) of the community with this id; None if it is not live."""
    read = "role_definitions" if kind == KIND_ROLE else "role_deletions"
    row = conn.execute(
        f"SELECT e FROM buzz.{read}(%s) AS e WHERE e::jsonb ->> 'id' = %s", (cid, event_id)
    ).fetchone()
    return row[0] if row else None


class _Watcher:
    """LISTEN buzz_membership and print each list (and role event) as it commits; reconnect
    on loss."""

    def __init__(
        self,
        target: Community | None,
        as_json: bool,
        *,
        lists_only: bool = False,
        limit: int | None = None,
    ) -> None:
        self.target = target
        self.as_json = as_json
        self.lists_only = lists_only
        self.limit = limit
        self.hosts: dict[str, str | None] = {}
        if target is not None:
            self.hosts[str(target.id)] = target.host
        self.last_id: str | None = None
        # The watched community's role events known live (printed, or live when it started):
        # role id -> event id.
        self.role_ids: dict[str, str] = {}
        self.printed = 0

    @property
    def done(self) -> bool:
        return self.limit is not None and self.printed >= self.limit

    def host(self, conn: psycopg.Connection[Any], cid: str) -> str | None:
        if cid not in self.hosts:
            try:
                row = community_row(conn, uuid.UUID(cid))
            except psycopg.errors.InsufficientPrivilege:
                row = None
            self.hosts[cid] = row[0] if row else None
        return self.hosts[cid]

    def remember(self, conn: psycopg.Connection[Any]) -> None:
        """Before LISTEN: what is live now is not news (catch_up compares with it)."""
        assert self.target is not None
        event = live_list(conn, self.target.id)
        self.last_id = event.get("id") if isinstance(event, dict) else None
        if not self.lists_only:
            live = live_role_events(conn, self.target.id)
            self.role_ids = {role: ev["id"] for role, ev in live.items()}

    def show(
        self,
        conn: psycopg.Connection[Any],
        cid: str,
        list_id: str,
        created_at: int,
        *,
        after_reconnect: bool = False,
    ) -> None:
        if self.done:
            return
        event = live_list(conn, cid)
        host = self.host(conn, cid)
        current = event is not None and event.get("id") == list_id
        self.last_id = list_id
        self.printed += 1
        if self.as_json:
            echo_json(
                {
                    "community": {"id": cid, "host": host},
                    "id": list_id,
                    "kind": KIND_MEMBERSHIP_LIST,
                    "created_at": created_at,
                    "members": member_count(event) if current else None,
                    "event": event if current else None,
                    "after_reconnect": after_reconnect,
                }
            )
            return
        if current:
            size = f"{member_count(event)} members"
        elif event is None:
            size = "(community deleted since)"
        else:
            size = f"(replaced since by {event['id']})"
        note = " (committed while reconnecting)" if after_reconnect else ""
        click.echo(f"{host or cid} list {list_id} created_at {when(created_at)} {size}{note}")

    def show_role(
        self,
        conn: psycopg.Connection[Any],
        cid: str,
        kind: int,
        event_id: str,
        created_at: int,
        *,
        event: dict[str, Any] | None = None,
        after_reconnect: bool = False,
    ) -> None:
        """A role definition (33534) or deletion (kind 5): the role, and the event while it
        is live (None once a newer event of the role replaced it)."""
        if self.done:
            return
        if event is None:
            event = live_role_event(conn, cid, kind, event_id)
        host = self.host(conn, cid)
        role = role_of(event) if event is not None else None
        if self.target is not None and role is not None:
            self.role_ids[role] = event_id
        self.printed += 1
        if self.as_json:
            echo_json(
                {
                    "community": {"id": cid, "host": host},
                    "id": event_id,
                    "kind": kind,
                    "created_at": created_at,
                    "role": role,
                    "event": event,
                    "after_reconnect": after_reconnect,
                }
            )
            return
        what = "definition" if kind == KIND_ROLE else "deletion"
        line = f"{host or cid} role {role or '?'} {what} {event_id} created_at {when(created_at)}"
        if event is None:
            line += " (no longer live)"
        elif kind == KIND_ROLE:
            line += f" label {json.dumps(_label_of(event), ensure_ascii=False)}"
        if after_reconnect:
            line += " (committed while reconnecting)"
        click.echo(line)

    def notified(self, conn: psycopg.Connection[Any], payload: str) -> bool:
        """Handle one notification; True when it was printed."""
        try:
            data = json.loads(payload)
            cid, event_id, created_at = data["community_id"], data["id"], data["created_at"]
            kind = data.get("kind", KIND_MEMBERSHIP_LIST)
        except (ValueError, KeyError, TypeError, AttributeError):
            click.echo(f"buzz-admin: ignoring a malformed notification: {payload[:200]}", err=True)
            return False
        if self.target is not None and cid != str(self.target.id):
            return False
        if kind == KIND_MEMBERSHIP_LIST:
            if self.target is not None and event_id == self.last_id:
                return False  # already printed by catch_up after a reconnect
            self.show(conn, cid, event_id, created_at)
            return True
        if kind in (KIND_ROLE, KIND_DELETION):
            if self.lists_only:
                return False
            if self.target is not None and event_id in self.role_ids.values():
                return False  # already printed by catch_up after a reconnect
            self.show_role(conn, cid, kind, event_id, created_at)
            return True
        click.echo(f"buzz-admin: ignoring a notification of kind {kind}: {payload[:200]}", err=True)
        return False

    def catch_up(self, conn: psycopg.Connection[Any]) -> None:
        """After a reconnect: print the target's list, and its role events, if they changed
        while disconnected."""
        if self.target is None:
            click.echo(
                "buzz-admin: lists and role events committed while disconnected were not "
                "printed; `buzz-admin verify` or `show-list` shows the live ones",
                err=True,
            )
            return
        cid = str(self.target.id)
        event = live_list(conn, self.target.id)
        if event is not None and event.get("id") != self.last_id:
            self.show(conn, cid, event["id"], event["created_at"], after_reconnect=True)
        if self.lists_only:
            return
        for role, ev in sorted(live_role_events(conn, self.target.id).items()):
            if self.role_ids.get(role) != ev["id"]:
                self.show_role(
                    conn,
                    cid,
                    ev["kind"],
                    ev["id"],
                    ev["created_at"],
                    event=ev,
                    after_reconnect=True,
                )


@click.command("watch")
@click.option(
    "--count",
    type=click.IntRange(min=1),
    help="Stop after printing N events (lists, and role events unless --lists-only).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0), metavar="SECONDS", help="Stop after SECONDS."
)
@click.option("--all", "all_", is_flag=True, help="Every community, even when RELAY_URL is set.")
@click.option(
    "--lists-only",
    is_flag=True,
    help="Print membership lists only, not role definitions or deletions.",
)
@community_command
def watch(count: int | None, timeout: float | None, all_: bool, lists_only: bool) -> None:
    """Print each membership list as it commits (from NOTIFY buzz_membership): community,
    list id, created_at, member count; and each role definition (kind 33534: role, event id,
    created_at, label) and role deletion (kind 5). With --json one JSON object per line,
    whose "kind" tells them apart.

    Watches the community of --community or RELAY_URL, else (or with --all) every community.
    Reconnects with backoff when the connection drops, then prints the watched community's
    list and role events if they changed meanwhile. Stops on Ctrl-C, after --count events or
    --timeout seconds. Says "listening" on stderr each time it (re)starts listening.

    \b
    Example:
      buzz-admin -c relay.example.org watch
      buzz-admin watch --all --json | jq -c 'select(.kind == 13534)'
    """
    state = get_state()
    if all_ and state.community:
        raise Failure("give --community or --all, not both", BAD_INPUT)
    deadline = None if timeout is None else time.monotonic() + timeout
    conn = state.connect("buzz-admin watch")  # the first connection fails fast
    target = None
    if not all_ and state.selection() is not None:
        target = find_community(conn, state.selection(), from_relay_url=not state.community)
    watcher = _Watcher(target, state.json, lists_only=lists_only, limit=count)
    backoff = 0.5
    reconnecting = False
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                if conn is None:
                    conn = state.connect("buzz-admin watch")
                if target is not None and not reconnecting and not watcher.printed:
                    watcher.remember(conn)
                conn.execute(f"LISTEN {CHANNEL}")
                if reconnecting:  # listening again first, so that nothing falls in between
                    watcher.catch_up(conn)
                    reconnecting = False
                    if watcher.done:
                        return
                what = target.label if target else "every community"
                events = "lists" if lists_only else "lists and role events"
                click.echo(f"buzz-admin: listening for {events} of {what}", err=True)
                backoff = 0.5
                last_ping = time.monotonic()
                while deadline is None or time.monotonic() < deadline:
                    wait = (
                        1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
                    )
                    # Collect first, then query: the generator holds the connection's lock
                    # until it ends, so a query inside the loop would wait for itself.
                    batch = list(conn.notifies(timeout=wait, stop_after=1))
                    for note in batch:
                        watcher.notified(conn, note.payload)
                        if watcher.done:
                            return
                    if time.monotonic() - last_ping > 15:  # notice a silently dead connection
                        conn.execute("SELECT 1")
                        last_ping = time.monotonic()
                return
            except (psycopg.OperationalError, psycopg.InterfaceError, Failure) as exc:
                if conn is not None:
                    conn.close()
                conn = None
                reconnecting = True
                message = exc.message if isinstance(exc, Failure) else str(exc).strip()
                click.echo(
                    f"buzz-admin: connection lost ({message.splitlines()[0] if message else 'closed'});"
                    f" reconnecting in {backoff:g}s",
                    err=True,
                )
                pause = backoff if deadline is None else min(backoff, deadline - time.monotonic())
                time.sleep(max(0.0, pause))
                backoff = min(backoff * 2, 30.0)
    except KeyboardInterrupt:
        pass
    finally:
        if conn is not None:
            conn.close()
