"""buzz-admin community create|list|archive|unarchive|delete."""

from __future__ import annotations

from typing import Any

import click

from .config import Community, all_communities, find_community
from .failures import BAD_INPUT, NOT_FOUND, OK, Failure
from .output import echo_json, npub, table, when
from .params import PUBKEY
from .state import State, get_state, json_option, key_option, marks_write, write_command
from .writes import Outcome, confirm, report, run_write

CREATE = {
    "created": Outcome(OK, "created community {host} ({id}) owned by {owner}"),
    "exists": Outcome(OK, "community {host} ({id}) already exists with this owner (no change)"),
    "host_taken": Outcome(BAD_INPUT, "host {host} belongs to a community of another owner"),
    "limit_reached": Outcome(
        BAD_INPUT,
        "{owner} already owns the most communities allowed (max_communities_per_owner)",
    ),
}
ARCHIVE = {
    "archived": Outcome(OK, "archived {host}: no membership write until it is unarchived"),
    "unchanged": Outcome(OK, "{host} is already archived (no change)"),
}
UNARCHIVE = {
    "unarchived": Outcome(OK, "unarchived {host}: membership writes work again"),
    "unchanged": Outcome(OK, "{host} is not archived (no change)"),
}
DELETE = {
    "deleted": Outcome(OK, "deleted {host} with its members, list, events, invites and allowlist"),
    "not_found": Outcome(NOT_FOUND, "no community {host}"),
}


def register(main: click.Group) -> None:
    main.add_command(community)


@click.group()
def community() -> None:
    """Create, list, archive, unarchive and delete communities."""


@community.command("create")
@click.argument("host")
@click.option("--owner", type=PUBKEY, required=True, help="The owner's pubkey (hex or npub).")
@json_option
@key_option
@marks_write
def create(host: str, owner: str) -> None:
    """Create the community of HOST (a DNS name, optional :port) with its owner.

    Retrying with the same host and owner is a no-op ("exists", exit 0).

    \b
    Example:
      buzz-admin community create relay.example.org --owner npub1...
    """
    state = get_state()
    write = run_write(state, lambda tx: tx.create_community(host, owner))
    cid = write.details.get("community_id")
    shown = Community(cid, host.lower()) if cid else None
    report(
        state,
        shown,
        write,
        outcome=write.outcome,
        table_=CREATE,
        words={"host": host.lower(), "id": cid, "owner": npub(owner)},
        extra={"community_id": str(cid) if cid else None},
    )


@community.command("list")
@json_option
def list_communities() -> None:
    """List every community: host, id, owner, members, live list, archived or not.

    Reads the communities table: connect as a superuser or a member of buzz_owner.

    \b
    Example:
      buzz-admin community list --json
    """
    state = get_state()
    conn = state.conn
    rows: list[dict[str, Any]] = []
    api = state.reader()
    for c in all_communities(conn):
        members = api.relay_members(c.id)
        live = api.member_list(c.id) or {}
        rows.append(
            {
                "id": str(c.id),
                "host": c.host,
                "archived": c.archived,
                "owner": next((m.pubkey for m in members if m.role == "owner"), None),
                "members": len(members),
                "list_id": live.get("id"),
                "list_created_at": live.get("created_at"),
            }
        )
    if state.json:
        echo_json({"communities": rows})
        return
    if not rows:
        click.echo("no communities (create one: buzz-admin community create HOST --owner PUBKEY)")
        return
    shown = [
        [
            r["host"],
            r["id"],
            "archived" if r["archived"] else "active",
            str(r["members"]),
            npub(r["owner"]) if r["owner"] else "(no owner)",
            (r["list_id"] or "(no list)")[:16],
            when(r["list_created_at"]),
        ]
        for r in rows
    ]
    for line in table(shown, ["HOST", "ID", "STATE", "MEMBERS", "OWNER", "LIST", "LIST TIME"]):
        click.echo(line)


def _target(state: State, community_arg: str | None) -> Community:
    """The community named by the argument, else by --community / RELAY_URL."""
    if community_arg is not None:
        if state.community is not None and state.community != community_arg:
            raise Failure(
                f"two communities named: {community_arg} and --community {state.community}",
                BAD_INPUT,
            )
        return find_community(state.conn, community_arg, from_relay_url=False)
    return state.resolve()


def _archive_command(name: str, outcomes: dict[str, Outcome], doc: str) -> click.Command:
    @click.argument("community_arg", metavar="[ID|HOST]", required=False)
    @write_command
    def command(community_arg: str | None) -> None:
        state = get_state()
        target = _target(state, community_arg)
        if name == "archive":
            write = run_write(state, lambda tx: tx.archive_community(target.id))
        else:
            write = run_write(state, lambda tx: tx.unarchive_community(target.id))
        report(
            state,
            target,
            write,
            outcome=write.outcome,
            table_=outcomes,
            words={"host": target.label},
        )

    command.__doc__ = doc
    return community.command(name)(command)


_archive_command(
    "archive",
    ARCHIVE,
    """Archive a community: its list stays live, every membership write is refused (BZARC).

    The community is the argument, else --community, else RELAY_URL's host.

    \b
    Example:
      buzz-admin community archive relay.example.org
    """,
)
_archive_command(
    "unarchive",
    UNARCHIVE,
    """Unarchive a community: membership writes work again.

    \b
    Example:
      buzz-admin community unarchive relay.example.org
    """,
)


@community.command("delete")
@click.argument("community_arg", metavar="[ID|HOST]", required=False)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@write_command
def delete(community_arg: str | None, yes: bool) -> None:
    """Delete a community with its members, list, events, invites and allowlist.

    No list and no 8001 events are written. Asks for confirmation unless --yes.

    \b
    Example:
      buzz-admin community delete old.example.org --yes
    """
    state = get_state()
    target = _target(state, community_arg)
    count = len(state.reader().relay_members(target.id))
    confirm(
        state,
        f"Delete community {target.label} ({target.id}) and its {count} members? "
        "This cannot be undone",
        yes,
    )
    write = run_write(state, lambda tx: tx.delete_community(target.id))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=DELETE,
        words={"host": target.label},
        extra={"members_deleted": count if write.outcome == "deleted" else 0},
    )
