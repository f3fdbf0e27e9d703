"""buzz-admin ban, unban, bans: who may not come back to a community (SPEC section 3,
amended 2026-12-02)."""

from __future__ import annotations

import click

from .failures import IS_OWNER, NOT_FOUND, OK
from .output import actor, echo_json, iso, npub, table
from .params import PUBKEY
from .state import community_command, get_state, write_command
from .writes import OPERATOR, Outcome, report, run_write

BAN = {
    "banned": Outcome(OK, "banned {who}{removed}"),
    "already_banned": Outcome(OK, "{who} is already banned (no change)"),
    "is_owner": Outcome(
        IS_OWNER,
        "{who} is the owner and cannot be banned: hand the community over first "
        "(transfer-ownership)",
    ),
}
UNBAN = {
    "unbanned": Outcome(
        OK, "unbanned {who}: they may join again (they are not a member until then)"
    ),
    "not_banned": Outcome(NOT_FOUND, "{who} is not banned"),
}


def register(main: click.Group) -> None:
    for command in (ban, unban, bans):
        main.add_command(command)


@click.command("ban")
@click.argument("pubkey", type=PUBKEY)
@click.option("--reason", metavar="TEXT", help="Why, kept with the ban (shown by `bans`).")
@click.option(
    "--banned-by",
    metavar="LABEL",
    default=OPERATOR,
    show_default=True,
    help="Who banned them: a pubkey or a short label.",
)
@write_command
def ban(pubkey: str, reason: str | None, banned_by: str) -> None:
    """Ban PUBKEY: a member is removed (a new list), and no invite, claim or join request
    lets them back. The owner cannot be banned (exit 3). `add-member` lifts a ban.

    \b
    Example:
      buzz-admin -c relay.example.org ban npub1... --reason "spam"
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.ban_pubkey(target.id, pubkey, reason, banned_by))
    # A member was removed exactly when the ban wrote a new list.
    removed = write.snapshot is not None
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=BAN,
        words={
            "who": npub(pubkey),
            "removed": " and removed them from the members" if removed else "",
        },
        extra={"pubkey": pubkey, "reason": reason, "removed": removed},
    )


@click.command("unban")
@click.argument("pubkey", type=PUBKEY)
@write_command
def unban(pubkey: str) -> None:
    """Lift the ban on PUBKEY. It does not make them a member: they may join again with an
    invite or a request, or be added with add-member.

    \b
    Example:
      buzz-admin unban npub1...
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.unban_pubkey(target.id, pubkey))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=UNBAN,
        words={"who": npub(pubkey)},
        extra={"pubkey": pubkey},
    )


@click.command("bans")
@click.option("--hex", "as_hex", is_flag=True, help="Show pubkeys as hex instead of npub.")
@community_command
def bans(as_hex: bool) -> None:
    """The community's banned pubkeys, by pubkey: who banned them, when and why.

    \b
    Example:
      buzz-admin -c relay.example.org bans
      buzz-admin bans --json | jq -r '.bans[].npub'
    """
    state = get_state()
    target = state.resolve()
    rows = state.reader().banned_pubkeys(target.id)
    if state.json:
        echo_json(
            {
                "community": target.as_json(),
                "bans": [
                    {
                        "pubkey": b.pubkey,
                        "npub": npub(b.pubkey),
                        "reason": b.reason,
                        "banned_by": b.banned_by,
                        "banned_at": iso(b.banned_at),
                    }
                    for b in rows
                ],
            }
        )
        return
    shown = [
        [
            b.pubkey if as_hex else npub(b.pubkey),
            actor(b.banned_by),
            iso(b.banned_at) or "-",
            b.reason or "-",
        ]
        for b in rows
    ]
    if shown:
        for line in table(shown, ["PUBKEY", "BANNED BY", "BANNED", "REASON"]):
            click.echo(line)
    click.echo(f"{len(rows)} banned pubkey{'s' if len(rows) != 1 else ''} in {target.label}")
