"""buzz-admin requests [list|approve|reject]: the pending requests to join a community whose
join policy is `request` (SPEC section 3, amended 2026-12-02)."""

from __future__ import annotations

import uuid
from typing import Any

import click

from .failures import BAD_INPUT, NOT_FOUND, OK
from .output import echo_json, iso, npub, table
from .profile import join_policy_of
from .state import State, community_command, get_state, write_command
from .writes import OPERATOR, Outcome, report, run_write

APPROVE = {
    "joined": Outcome(OK, "approved request {id}: {who} joined as member"),
    "already_member": Outcome(
        OK, "{who} is already a member: request {id} is closed, members unchanged"
    ),
    "not_found": Outcome(NOT_FOUND, "{host} has no pending join request {id}"),
    "banned": Outcome(BAD_INPUT, "{who} is banned: `buzz-admin unban` first, if they may join"),
}
REJECT = {
    "rejected": Outcome(OK, "rejected request {id} of {who}"),
    "not_found": Outcome(NOT_FOUND, "{host} has no pending join request {id}"),
}


def register(main: click.Group) -> None:
    main.add_command(requests)


def _hex_option(f: Any) -> Any:
    return click.option(
        "--hex", "as_hex", is_flag=True, help="Show pubkeys as hex instead of npub."
    )(f)


@click.group("requests", invoke_without_command=True)
@_hex_option
@community_command
@click.pass_context
def requests(ctx: click.Context, as_hex: bool) -> None:
    """The pending requests to join (oldest first); approve or reject them. Without a
    subcommand: `requests list`.

    People ask to join (kind 28934 without an invite code) when the join policy is `request`
    (see join-policy); each request is known by the id of that event.

    \b
    Example:
      buzz-admin -c relay.example.org requests
      buzz-admin requests approve 5c83...e1
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(requests_list, as_hex=as_hex)


@requests.command("list")
@_hex_option
@community_command
def requests_list(as_hex: bool) -> None:
    """The pending requests to join, oldest first: request id, pubkey, when, note.

    \b
    Example:
      buzz-admin -c relay.example.org requests list
      buzz-admin requests list --json | jq -r '.requests[].request_id'
    """
    state = get_state()
    target = state.resolve()
    rows = state.reader().join_requests(target.id)
    policy = join_policy_of(state, target.id)
    if state.json:
        echo_json(
            {
                "community": target.as_json(),
                "join_policy": policy,
                "requests": [
                    {
                        "request_id": r.request_id,
                        "pubkey": r.pubkey,
                        "npub": npub(r.pubkey),
                        "note": r.note,
                        "requested_at": iso(r.requested_at),
                    }
                    for r in rows
                ],
            }
        )
        return
    shown = [
        [
            r.request_id,
            r.pubkey if as_hex else npub(r.pubkey),
            iso(r.requested_at) or "-",
            r.note or "-",
        ]
        for r in rows
    ]
    if shown:
        for line in table(shown, ["REQUEST ID", "PUBKEY", "REQUESTED", "NOTE"]):
            click.echo(line)
    n = len(rows)
    click.echo(
        f"{n} pending join request{'s' if n != 1 else ''} to {target.label} (join policy: {policy})"
    )


def _requester(state: State, community: uuid.UUID, request_id: str) -> str | None:
    """The pubkey of a pending request, None when there is none with this id."""
    pending = state.reader().join_requests(community)
    return next((r.pubkey for r in pending if r.request_id == request_id), None)


@requests.command("approve")
@click.argument("request_id")
@click.option(
    "--approved-by",
    metavar="LABEL",
    default=OPERATOR,
    show_default=True,
    help="Who approved it (the new member's added_by): a pubkey or a short label.",
)
@write_command
def requests_approve(request_id: str, approved_by: str) -> None:
    """Approve a pending request: its author becomes a member (a new list). A banned
    author is refused (exit 1); an unknown request id is exit 2.

    \b
    Example:
      buzz-admin -c relay.example.org requests approve 5c83...e1
    """
    _decide(
        request_id, APPROVE, lambda tx, cid: tx.approve_join_request(cid, request_id, approved_by)
    )


@requests.command("reject")
@click.argument("request_id")
@click.option("--reason", metavar="TEXT", help="Why, kept with the rejection.")
@write_command
def requests_reject(request_id: str, reason: str | None) -> None:
    """Reject a pending request. Its author may ask again after 24 hours; `ban` keeps them
    out for good.

    \b
    Example:
      buzz-admin requests reject 5c83...e1 --reason "not from our team"
    """
    _decide(request_id, REJECT, lambda tx, cid: tx.reject_join_request(cid, request_id, reason))


def _decide(request_id: str, outcomes: dict[str, Any], decide: Any) -> None:
    """Approve or reject (`decide(tx, community id)`), and report it naming the requester."""
    state = get_state()
    target = state.resolve()

    def decision(tx: Any) -> dict[str, Any]:
        # Read in the same transaction as the decision, to name who it concerns.
        who = _requester(state, target.id, request_id)
        return {"outcome": decide(tx, target.id), "pubkey": who}

    write = run_write(state, decision)
    who = write.details.get("pubkey")
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=outcomes,
        words={"id": request_id, "who": npub(who) if who else "?", "host": target.label},
        extra={"request_id": request_id},
    )
