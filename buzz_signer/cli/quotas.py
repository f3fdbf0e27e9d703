"""buzz-admin quota show|set: how many members admins and members may bring in by invites
(SPEC section 3, amended 2026-12-02)."""

from __future__ import annotations

import click

from .failures import BAD_INPUT, OK, Failure
from .output import echo_json
from .state import community_command, get_state, write_command
from .writes import Outcome, report, run_write

QUOTA_ROLES = ("admin", "member")
NO_LIMIT = ("none", "unlimited")
SET_QUOTA = {
    "updated": Outcome(OK, "{role}s of {host} may now bring in {quota}"),
    "unchanged": Outcome(OK, "{role}s of {host} may already bring in {quota} (no change)"),
}


def register(main: click.Group) -> None:
    main.add_command(quota)


def quota_words(quota: int | None) -> str:
    """'3 members each', 'nobody', 'any number of members'."""
    if quota is None:
        return "any number of members"
    if quota == 0:
        return "nobody"
    return f"{quota} member{'s' if quota != 1 else ''} each"


@click.group()
def quota() -> None:
    """How many members admins and members may bring in by their invites. The owner has no
    limit; by default admins have none either and members may invite nobody. An invite by a
    member with no invites left is refused (BZQTA, exit 1); `members --invites` shows what
    each has left."""


@quota.command("show")
@community_command
def quota_show() -> None:
    """The invite quota of admins and of members.

    \b
    Example:
      buzz-admin -c relay.example.org quota show
    """
    state = get_state()
    target = state.resolve()
    quotas = state.reader().invite_quotas(target.id)
    if state.json:
        echo_json({"community": target.as_json(), "quotas": quotas})
        return
    click.echo(f"invite quotas of {target.label}: how many members each may bring in")
    click.echo(f"  {'owner':<7} {quota_words(None)}")
    for role in QUOTA_ROLES:
        click.echo(f"  {role:<7} {quota_words(quotas.get(role))}")


@quota.command("set")
@click.argument("role", type=click.Choice(QUOTA_ROLES))
@click.argument("n", metavar="N|none")
@write_command
def quota_set(role: str, n: str) -> None:
    """Let each admin or member bring in at most N members (those they brought in who are
    still members, and the uses left on their live invites, count); `none` for no limit.
    Lowering it revokes no invite and removes nobody: those over it have no invites left.

    \b
    Example:
      buzz-admin quota set member 3
      buzz-admin quota set admin none
    """
    if n.lower() in NO_LIMIT:
        value = None
    else:
        try:
            value = int(n)
        except ValueError:
            raise Failure("N must be a number of members (0 or more) or none", BAD_INPUT) from None
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.set_invite_quota(target.id, role, value))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=SET_QUOTA,
        words={"role": role, "host": target.label, "quota": quota_words(value)},
        extra={"role": role, "quota": value},
    )
