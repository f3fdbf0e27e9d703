"""buzz-admin role define|delete|assign|unassign|list: the roles clients can discover
(SPEC section 6, kind 33534)."""

from __future__ import annotations

from typing import Any

import click

from ..errors import InvalidRole
from ..membership import MembershipWrite
from ..nostr import KIND_DELETION, KIND_ROLE
from ..signer import BASE_ROLES, is_role_id
from .config import Community
from .failures import BAD_INPUT, NOT_FOUND, OK, Failure
from .output import echo_json, npub, table, when
from .params import PUBKEY
from .state import State, community_command, get_state, write_command
from .writes import Outcome, report, run_write

FIELDS = ("label", "description", "color", "order")

DEFINE = {
    "defined": Outcome(OK, "defined role {role} of {host}"),
    "updated": Outcome(OK, "updated role {role} of {host}"),
    "unchanged": Outcome(OK, "role {role} of {host} already has this definition (no change)"),
}
DELETE = {
    "deleted": Outcome(OK, "deleted role {role} of {host}{taken}"),
    "not_found": Outcome(NOT_FOUND, "{host} has no role {role}"),
}
ASSIGN = {
    "assigned": Outcome(OK, "gave {who} the role {role}"),
    "already_assigned": Outcome(OK, "{who} already has the role {role} (no change)"),
    "not_member": Outcome(NOT_FOUND, "{who} is not a member"),
}
UNASSIGN = {
    "unassigned": Outcome(OK, "took the role {role} from {who}"),
    "not_assigned": Outcome(OK, "{who} does not have the role {role} (no change)"),
    "not_member": Outcome(NOT_FOUND, "{who} is not a member"),
}


def register(main: click.Group) -> None:
    main.add_command(role)


# --------------------------------------------------------------------------- helpers


def tag_value(event: dict[str, Any], name: str) -> str | None:
    """The value of the event's first tag named `name`, None when it has none."""
    for tag in event.get("tags") or ():
        if isinstance(tag, list) and len(tag) >= 2 and tag[0] == name:
            return tag[1] if isinstance(tag[1], str) else None
    return None


def _int_or_text(value: str | None) -> int | str | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return value  # not what the SPEC allows; `verify` says so, here it is shown as it is


def definition(event: dict[str, Any]) -> dict[str, Any]:
    """The fields of a signed 33534 role definition: id, label, description, color, order."""
    return {
        "id": tag_value(event, "d"),
        "label": tag_value(event, "label"),
        "description": tag_value(event, "description"),
        "color": _int_or_text(tag_value(event, "color")),
        "order": _int_or_text(tag_value(event, "order")),
    }


def deleted_role(event: dict[str, Any]) -> str | None:
    """The role id a kind 5 deletion addresses (its a tag is 33534:<pubkey>:<role id>)."""
    address = tag_value(event, "a")
    if address is None or address.count(":") < 2:
        return None
    return address.split(":", 2)[2]


def role_events(write: MembershipWrite, kind: int, role: str) -> dict[str, Any] | None:
    """The signed 33534 (or kind 5) of `role` that the write published, if it published one."""
    for event in write.events:
        if event.get("kind") != kind:
            continue
        named = tag_value(event, "d") if kind == KIND_ROLE else deleted_role(event)
        if named == role:
            return event
    return None


def event_line(event: dict[str, Any]) -> str:
    what = "role definition" if event["kind"] == KIND_ROLE else "role deletion"
    return f"{what} {event['id']} published (created_at {when(event['created_at'])})"


def _held_by(state: State, target: Community, role: str | None = None) -> dict[str, int]:
    """How many members hold each role (or only `role`): a base role as their `role`, a
    defined one in their `roles`."""
    held: dict[str, int] = {}
    for m in state.reader().relay_members(target.id):
        for r in (*(m.roles or ()), m.role):
            if role is None or r == role:
                held[r] = held.get(r, 0) + 1
    return held


def _role_failure(exc: InvalidRole, role: str) -> Failure:
    """BZIRL from assign_role / unassign_role, with a hint in buzz-admin's terms: a
    well-formed role that is not defined (assign only) names the command that defines it; a
    base role, the commands that give base roles."""
    hint = exc.hint
    if is_role_id(role) and role not in BASE_ROLES:
        hint = (
            f"`buzz-admin role define {role} --label LABEL` defines it; `buzz-admin role list` "
            "shows the defined roles"
        )
    elif role in BASE_ROLES:
        hint = "base roles are given with add-member --role and set-role"
    return Failure(str(exc), BAD_INPUT, hint=hint, sqlstate=exc.sqlstate)


def _report_role_write(
    state: State,
    target: Community,
    write: MembershipWrite,
    table_: dict[str, Outcome],
    words: dict[str, Any],
    extra: dict[str, Any],
    event: dict[str, Any] | None,
) -> None:
    """report(), with the role event the write published on its own line (in words) or as
    `event` / `event_id` (JSON)."""
    spec = table_.get(write.outcome, Outcome(OK, "outcome: {outcome}"))
    message = spec.text.format(**words, outcome=write.outcome)
    if event is not None and spec.code == OK and not state.json:
        message += "\n" + event_line(event)
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        message=message,
        code=spec.code,
        extra={**extra, "event": event, "event_id": event["id"] if event else None},
    )


# --------------------------------------------------------------------------- commands


@click.group()
def role() -> None:
    """Define, delete, assign, unassign and list the community's roles (kind 33534)."""


@role.command("define")
@click.argument("role_id", metavar="ROLE")
@click.option("--label", required=True, help="The name clients show: 1-64 characters.")
@click.option("--description", metavar="TEXT", help="At most 500 characters.")
@click.option("--color", type=int, metavar="HUE", help="A hue, 0-360.")
@click.option("--order", type=int, metavar="N", help="Where clients list the role (any integer).")
@write_command
def role_define(
    role_id: str, label: str, description: str | None, color: int | None, order: int | None
) -> None:
    """Define ROLE (1-64 of a-z 0-9 _ -), or change its definition; its signed kind 33534
    is published. No member changes, so no list is written.

    Redefining an existing role replaces its whole definition: give every option again
    (--label, and --description, --color, --order if it should keep them); an option left
    out is cleared. `buzz-admin role list` shows the current definitions. The base roles
    owner, admin and member may be redefined too. The same definition again is "no change"
    (exit 0).

    \b
    Example:
      buzz-admin -c relay.example.org role define moderator --label Moderator --color 210 --order 5
      buzz-admin role define member --label Member --order 2 --description "Everyone here"
    """
    state = get_state()
    target = state.resolve()
    write = run_write(
        state, lambda tx: tx.define_role(target.id, role_id, label, description, color, order)
    )
    _report_role_write(
        state,
        target,
        write,
        DEFINE,
        words={"role": role_id, "host": target.label},
        extra={
            "role": role_id,
            "label": label,
            "description": description,
            "color": color,
            "order": order,
        },
        event=role_events(write, KIND_ROLE, role_id),
    )


@role.command("delete")
@click.argument("role_id", metavar="ROLE")
@write_command
def role_delete(role_id: str) -> None:
    """Delete a defined role: it is taken from every member holding it (the list is
    rewritten when anyone held it) and a kind 5 deletion of its 33534 is published.
    Base roles (owner, admin, member) cannot be deleted (exit 1).

    \b
    Example:
      buzz-admin -c relay.example.org role delete moderator
    """
    state = get_state()
    target = state.resolve()
    holders: list[int] = []

    def call(tx: Any) -> str:
        # Counted in the write's transaction, just before it: for the words only.
        holders.append(_held_by(state, target, role_id).get(role_id, 0))
        return tx.delete_role(target.id, role_id)

    write = run_write(state, call)
    taken = holders[0] if holders and write.outcome == "deleted" else 0
    _report_role_write(
        state,
        target,
        write,
        DELETE,
        words={
            "role": role_id,
            "host": target.label,
            "taken": f", taken from {taken} member{'s' if taken != 1 else ''}" if taken else "",
        },
        extra={"role": role_id, "taken_from": taken},
        event=role_events(write, KIND_DELETION, role_id),
    )


def _assignment(role_id: str, pubkey: str, assign: bool) -> None:
    state = get_state()
    target = state.resolve()
    try:
        if assign:
            write = run_write(state, lambda tx: tx.assign_role(target.id, pubkey, role_id))
        else:
            write = run_write(state, lambda tx: tx.unassign_role(target.id, pubkey, role_id))
    except InvalidRole as exc:
        raise _role_failure(exc, role_id) from None
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=ASSIGN if assign else UNASSIGN,
        words={"who": npub(pubkey), "role": role_id},
        extra={"pubkey": pubkey, "role": role_id},
    )


@role.command("assign")
@click.argument("pubkey", type=PUBKEY)
@click.argument("role_id", metavar="ROLE")
@write_command
def role_assign(pubkey: str, role_id: str) -> None:
    """Give a member a defined role (the list, whose member tags name it, is rewritten).

    The role must be defined first (role define); base roles are given with add-member
    --role and set-role. A pubkey that is not a member: exit 2.

    \b
    Example:
      buzz-admin -c relay.example.org role assign npub1... moderator
    """
    _assignment(role_id, pubkey, assign=True)


@role.command("unassign")
@click.argument("pubkey", type=PUBKEY)
@click.argument("role_id", metavar="ROLE")
@write_command
def role_unassign(pubkey: str, role_id: str) -> None:
    """Take a defined role from a member (the list is rewritten). A role the member does
    not hold, or that is not defined, is "no change" (exit 0); not a member: exit 2.

    \b
    Example:
      buzz-admin -c relay.example.org role unassign npub1... moderator
    """
    _assignment(role_id, pubkey, assign=False)


def _shown(value: Any) -> str:
    return "-" if value is None else str(value)


@role.command("list")
@community_command
def role_list() -> None:
    """The community's roles as its live signed definitions (kind 33534) say: id, label,
    order, color, how many members hold it, description; in the order clients show them
    (by --order, unset last, then by id).

    With --json: {"community", "roles": [{"id", "label", "description", "color", "order",
    "members", "event"}], "deletions"}, "event" being the signed 33534 and "deletions" the
    signed kind 5 events of deleted roles.

    \b
    Example:
      buzz-admin -c relay.example.org role list
      buzz-admin role list --json | jq -c '.roles[].event'
    """
    state = get_state()
    target = state.resolve()
    conn = state.conn
    with conn.transaction():  # definitions and holders from one snapshot
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        events = state.reader().role_definitions(target.id)
        deletions = state.reader().role_deletions(target.id)
        held = _held_by(state, target)
    roles = []
    for event in events:
        fields = definition(event)
        roles.append({**fields, "members": held.get(fields["id"] or "", 0), "event": event})
    roles.sort(
        key=lambda r: (
            not isinstance(r["order"], int),
            r["order"] if isinstance(r["order"], int) else 0,
            r["id"] or "",
        )
    )
    if state.json:
        echo_json({"community": target.as_json(), "roles": roles, "deletions": deletions})
        return
    rows = [
        [
            _shown(r["id"]),
            _shown(r["label"]),
            _shown(r["order"]),
            _shown(r["color"]),
            str(r["members"]),
            _shown(r["description"]),
        ]
        for r in roles
    ]
    for line in table(rows, ["ROLE", "LABEL", "ORDER", "COLOR", "MEMBERS", "DESCRIPTION"]):
        click.echo(line)
    click.echo(f"{len(roles)} role{'s' if len(roles) != 1 else ''} of {target.label}")
