"""buzz-admin show-list: the live signed membership list, as clients receive it."""

from __future__ import annotations

import json

import click

from ..nostr import (
    verify_event,
)
from ._live import live_list
from .failures import NOT_FOUND, Failure
from .output import npub, when
from .state import community_command, get_state


def register(main: click.Group) -> None:
    main.add_command(show_list)


@click.command("show-list")
@click.option("--hex", "as_hex", is_flag=True, help="Show member pubkeys as hex, not npub.")
@community_command
def show_list(as_hex: bool) -> None:
    """The community's live signed membership list (kind 13534): each member's base role,
    pubkey, and the defined roles its tag names (comma-separated).

    With --json, the raw signed event as clients receive it.

    \b
    Example:
      buzz-admin -c relay.example.org show-list
      buzz-admin show-list --json | nak verify
    """
    state = get_state()
    target = state.resolve()
    event = live_list(state.conn, target.id)
    if event is None:
        raise Failure(
            f"{target.label} has no live membership list",
            NOT_FOUND,
            hint="`buzz-admin republish-members` writes one from the stored members",
        )
    if state.json:
        click.echo(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        return
    valid = verify_event(event)
    click.echo(f"community  {target.label} ({target.id})")
    click.echo(f"list       {event['id']}")
    click.echo(f"created_at {when(event['created_at'])} ({event['created_at']})")
    click.echo(f"signed by  {npub(event['pubkey'])}")
    click.echo(f"signature  {'valid' if valid else 'INVALID (run buzz-admin verify)'}")
    tags = [t for t in event["tags"] if t and t[0] == "member"]
    click.echo(f"members    {len(tags)}")
    for tag in tags:
        pk, role = tag[1], tag[2] if len(tag) > 2 else "?"
        held = f" {','.join(str(r) for r in tag[3:])}" if len(tag) > 3 else ""
        click.echo(f"  {role:<7} {pk if as_hex else npub(pk)}{held}")
