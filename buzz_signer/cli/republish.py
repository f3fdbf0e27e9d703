"""buzz-admin republish-members: rewrite and re-sign live lists from the stored members."""

from __future__ import annotations

from typing import Any

import click
import psycopg

from ..errors import BuzzError
from ..signer import (
    RefusedToSign,
)
from .config import all_communities
from .failures import BAD_INPUT, FAILURE, OK, CommitUnknown, Failure, failure_from
from .output import echo_json, list_line, progress
from .state import get_state, write_command
from .writes import report, run_write


def register(main: click.Group) -> None:
    main.add_command(republish_members)


@click.command("republish-members")
@click.option("--all", "all_", is_flag=True, help="Every community, one transaction each.")
@click.option(
    "--drifted",
    is_flag=True,
    help="With --all: only the communities buzz.member_list_drift() names.",
)
@write_command
def republish_members(all_: bool, drifted: bool) -> None:
    """Rewrite and re-sign the live list from the stored members (the repair for a list made
    stale outside the API, e.g. by a restore). Works on archived communities.

    \b
    Example:
      buzz-admin -c relay.example.org republish-members
      buzz-admin republish-members --all --drifted
    """
    state = get_state()
    if drifted and not all_:
        raise Failure("--drifted goes with --all", BAD_INPUT)
    if all_ and state.community:
        raise Failure("give --community or --all, not both", BAD_INPUT)
    if not all_:
        target = state.resolve()
        write = run_write(state, lambda tx: tx.republish_member_list(target.id))
        report(
            state,
            target,
            write,
            outcome="republished",
            message=f"republished the list of {target.label}",
        )
        return
    conn = state.conn
    targets = all_communities(conn)
    if drifted:
        named = {d.community_id for d in state.reader().member_list_drift()}
        targets = [c for c in targets if c.id in named]
    m = state.membership()
    done: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    with progress(targets, len(targets), "republishing") as bar:
        for c in bar:
            try:
                write = run_write(state, lambda tx, c=c: tx.republish_member_list(c.id), m)
            except (BuzzError, RefusedToSign, CommitUnknown, psycopg.Error) as exc:
                # one failing community does not stop the others
                failure = failure_from(exc, state)
                unknown = isinstance(exc, CommitUnknown)
                failed.append(
                    {
                        "community": c.as_json(),
                        "error": failure.message,
                        "changed": "unknown" if unknown else False,
                    }
                )
                what = "its outcome is unknown" if unknown else "nothing of it was changed"
                click.echo(f"buzz-admin: error: {c.label}: {failure.message}; {what}", err=True)
                if m.conn.closed or m.conn.broken:
                    break
                continue
            snap = write.snapshot
            done.append({"community": c.as_json(), "list_id": snap["id"] if snap else None})
            if not state.json:
                click.echo(f"republished {c.label}: " + (list_line(snap) if snap else "no list"))
    code = FAILURE if failed else OK
    if state.json:
        echo_json(
            {
                "outcome": "republished",
                "snapshot": None,
                "republished": done,
                "failed": failed,
                "exit_code": code,
            }
        )
    else:
        click.echo(
            f"republished {len(done)} of {len(targets)} communities"
            + (f"; {len(failed)} failed (their lists are unchanged)" if failed else "")
        )
    if code:
        raise click.exceptions.Exit(code)
