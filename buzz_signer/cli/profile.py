"""buzz-admin profile [set], join-policy: what a community shows to people, and how someone
without an invite may join (SPEC section 3, amended 2026-12-02)."""

from __future__ import annotations

import uuid

import click

from ..membership import CommunityProfile
from .config import Community
from .failures import BAD_INPUT, OK, Failure
from .output import echo_json
from .state import State, community_command, get_state, write_command
from .writes import Outcome, report, run_write

FIELDS = ("name", "description", "icon")
POLICIES = ("invite", "request", "open")
POLICY_MEANS = {
    "invite": "joining needs an invite code",
    "request": "anyone may ask to join; an owner or admin approves (buzz-admin requests)",
    "open": "anyone who asks joins at once",
}

SET_FIELD = {
    "updated": Outcome(OK, "{done} the {field} of {host}"),
    "unchanged": Outcome(OK, "the {field} of {host} is already {what} (no change)"),
}
SET_POLICY = {
    "updated": Outcome(OK, "the join policy of {host} is now {policy}: {means}"),
    "unchanged": Outcome(OK, "the join policy of {host} is already {policy} (no change)"),
}


def register(main: click.Group) -> None:
    main.add_command(profile)
    main.add_command(join_policy)


def profile_of(state: State, community: uuid.UUID) -> CommunityProfile:
    """The community's profile (every field None and policy 'invite' when never set)."""
    profile = state.reader().community_profile(community)
    return profile or CommunityProfile(None, None, None, "invite")


def join_policy_of(state: State, community: uuid.UUID) -> str:
    return profile_of(state, community).join_policy


def _profile_json(target: Community, shown: CommunityProfile) -> dict[str, object]:
    return {"community": target.as_json(), **shown._asdict()}


@click.group("profile", invoke_without_command=True)
@community_command
@click.pass_context
def profile(ctx: click.Context) -> None:
    """The community's profile as clients show it (NIP-11 and the community's page): name,
    description, icon, and its join policy. Without a subcommand: shows it.

    \b
    Example:
      buzz-admin -c relay.example.org profile
      buzz-admin profile set name "Example Relay"
    """
    if ctx.invoked_subcommand is not None:
        return
    state = get_state()
    target = state.resolve()
    shown = profile_of(state, target.id)
    if state.json:
        echo_json(_profile_json(target, shown))
        return
    click.echo(f"community   {target.label} ({target.id})")
    click.echo(
        f"name        {shown.name if shown.name is not None else '- (clients show the host)'}"
    )
    click.echo(f"description {shown.description if shown.description is not None else '-'}")
    click.echo(f"icon        {shown.icon if shown.icon is not None else '-'}")
    click.echo(f"join policy {shown.join_policy}: {POLICY_MEANS.get(shown.join_policy, '?')}")


@profile.command("set")
@click.argument("field", type=click.Choice(FIELDS))
@click.argument("value", required=False)
@click.option("--clear", is_flag=True, help="Remove the field instead of setting it.")
@write_command
def profile_set(field: str, value: str | None, clear: bool) -> None:
    """Set one field of the profile: name (1-64 printable characters), description (at most
    2000) or icon (an https:// URL, at most 500); --clear removes it. A value out of range
    is exit 1, with nothing changed.

    \b
    Example:
      buzz-admin -c relay.example.org profile set name "Example Relay"
      buzz-admin profile set icon https://relay.example.org/icon.png
      buzz-admin profile set description --clear
    """
    if clear and value is not None:
        raise Failure(f"give a value for {field} or --clear, not both", BAD_INPUT)
    if not clear and value is None:
        raise Failure(f"give a value for {field}, or --clear to remove it", BAD_INPUT)
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.set_community_profile(target.id, field, value))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=SET_FIELD,
        words={
            "field": field,
            "host": target.label,
            "done": "cleared" if clear else "set",
            "what": "unset" if clear else "that",
        },
        extra={"field": field, "value": value},
    )


@click.command("join-policy")
@click.argument("policy", type=click.Choice(POLICIES), required=False)
@community_command
def join_policy(policy: str | None) -> None:
    """Show or set how someone without an invite may join: invite (the default: an invite
    code is needed), request (they may ask; an owner or admin approves with `requests
    approve`) or open (anyone who asks joins at once). Without POLICY: shows it.

    \b
    Example:
      buzz-admin -c relay.example.org join-policy
      buzz-admin join-policy request
    """
    state = get_state()
    if policy is None:
        target = state.resolve()
        current = join_policy_of(state, target.id)
        if state.json:
            echo_json({"community": target.as_json(), "join_policy": current})
        else:
            click.echo(f"{current}: {POLICY_MEANS.get(current, '?')}")
        return
    state.write_command = True  # from here on a failure says that nothing was changed
    target = state.resolve()
    write = run_write(state, lambda tx: tx.set_join_policy(target.id, policy))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=SET_POLICY,
        words={"host": target.label, "policy": policy, "means": POLICY_MEANS[policy]},
        extra={"join_policy": policy},
    )
