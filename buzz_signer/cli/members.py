"""buzz-admin add-member, remove-member, set-role, bootstrap-owner, transfer-ownership,
claim-membership, members."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import click

from ..membership import Member, Membership
from ..nostr import KIND_REMOVE_USER
from .config import Community
from .failures import BAD_INPUT, IS_OWNER, NOT_FOUND, OK, ROLE_MISMATCH, Failure
from .output import actor, echo_json, is_pubkey, iso, npub, table
from .params import PUBKEY
from .state import State, community_command, get_state, write_command
from .writes import Outcome, confirm, report, run_write

ROLES = ("owner", "admin", "member")
ROLE_RANK = {role: i for i, role in enumerate(ROLES)}

ADD = {
    "added": Outcome(OK, "added {who} as {role}"),
    "already_member": Outcome(OK, "{who} is already a member, as {current} (no change)"),
}
REMOVE = {
    "removed": Outcome(OK, "removed {who}{with_branch}"),
    "not_member": Outcome(NOT_FOUND, "{who} is not a member"),
    "is_owner": Outcome(
        IS_OWNER, "{who} is the owner: hand the community over first (transfer-ownership)"
    ),
    "role_mismatch": Outcome(ROLE_MISMATCH, "{who} is {current}, not {wanted}"),
}
SET_ROLE = {
    "updated": Outcome(OK, "{who} is now {role}"),
    "unchanged": Outcome(OK, "{who} is already {role} (no change)"),
    "not_member": Outcome(NOT_FOUND, "{who} is not a member"),
    "is_owner": Outcome(IS_OWNER, "{who} is the owner: use transfer-ownership to change the owner"),
}
BOOTSTRAP = {
    "provisioned": Outcome(OK, "made {who} the owner (any other owner is now an admin)"),
    "unchanged": Outcome(OK, "{who} is already the owner (no change)"),
}
TRANSFER = {
    "transferred": Outcome(
        OK, "transferred ownership to {who}; the previous owner is now a member"
    ),
    "already_owner": Outcome(OK, "{who} is already the owner (no change)"),
    "no_owner": Outcome(NOT_FOUND, "{host} has no owner to hand over from: use bootstrap-owner"),
    "owner_conflict": Outcome(ROLE_MISMATCH, "the owner of {host} is not {expected}"),
    "limit_reached": Outcome(
        BAD_INPUT, "{who} already owns the most communities allowed (max_communities_per_owner)"
    ),
}
CLAIM = {
    "joined": Outcome(OK, "{who} joined as member"),
    "already_member": Outcome(OK, "{who} is already a member, as {current} (no change)"),
    "banned": Outcome(BAD_INPUT, "{who} is banned from {host}"),
}


def register(main: click.Group) -> None:
    for command in (
        add_member,
        remove_member,
        set_role,
        bootstrap_owner,
        transfer_ownership,
        claim_membership,
        members,
    ):
        main.add_command(command)


def article(role: str | None) -> str:
    """'an admin', 'a member', 'the owner'."""
    return {"owner": "the owner", "admin": "an admin", "member": "a member"}.get(role or "", "?")


def current_role(conn: Any, cid: Any, pubkey: str) -> str | None:
    member = Membership(conn, None).relay_member(cid, pubkey)
    return member.role if member is not None else None


@click.command("add-member")
@click.argument("pubkeys", metavar="PUBKEY...", nargs=-1, required=True, type=PUBKEY)
@click.option(
    "--role",
    type=click.Choice(ROLES),
    default="member",
    show_default=True,
    help="The role to add with (owner is refused: see bootstrap-owner, transfer-ownership).",
)
@click.option("--added-by", metavar="LABEL", help="Who added them: a pubkey or a short label.")
@write_command
def add_member(pubkeys: tuple[str, ...], role: str, added_by: str | None) -> None:
    """Add one member, or several in one transaction with one list.

    A pubkey that is already a member keeps its role ("already a member", exit 0).

    \b
    Example:
      buzz-admin -c relay.example.org add-member npub1... --role admin
      buzz-admin add-member 3bf0c63f...e459d npub1...     # both, one list
    """
    state = get_state()
    target = state.resolve()
    if len(pubkeys) == 1:
        pk = pubkeys[0]
        write = run_write(state, lambda tx: tx.add_relay_member(target.id, pk, role, added_by))
        current = None
        if write.outcome == "already_member":
            current = current_role(state.conn, target.id, pk)
        report(
            state,
            target,
            write,
            outcome=write.outcome,
            table_=ADD,
            words={"who": npub(pk), "role": role, "current": current},
            extra={"pubkey": pk, "role": role, "current_role": current or role},
        )
        return
    unique = list(dict.fromkeys(pubkeys))
    write = run_write(state, lambda tx: tx.add_relay_members(target.id, unique, role, added_by))
    added = write.outcome
    message = f"added {added} of {len(unique)} pubkeys as {role}"
    if added < len(unique):
        message += f"; {len(unique) - added} already members (no change for them)"
    report(
        state,
        target,
        write,
        outcome=added,
        message=message,
        extra={"added": added, "already_members": len(unique) - added, "role": role},
    )


@click.command("remove-member")
@click.argument("pubkey", type=PUBKEY)
@click.option(
    "--if-role",
    type=click.Choice(ROLES),
    help="Remove only if the member has this role (else exit 4, nothing changed).",
)
@click.option(
    "--branch",
    is_flag=True,
    help="Remove everyone the member brought in too, at any depth (never the owner). Asks "
    "first, naming how many go.",
)
@click.option("--yes", "-y", is_flag=True, help="With --branch: do not ask for confirmation.")
@write_command
def remove_member(pubkey: str, if_role: str | None, branch: bool, yes: bool) -> None:
    """Remove a member. The owner cannot be removed (exit 3): transfer ownership first.

    The members they brought in stay, and now hang from whoever brought the removed member
    in; with --branch they go too, in one transaction (one list, one 8001 each). Either
    way the removed members' invites stop working.

    \b
    Example:
      buzz-admin remove-member npub1...
      buzz-admin remove-member npub1... --if-role member   # never an admin
      buzz-admin remove-member npub1... --branch           # and everyone below them
    """
    if branch and if_role is not None:
        raise Failure("give --branch or --if-role, not both", BAD_INPUT)
    state = get_state()
    target = state.resolve()
    gone: list[str] = []
    if branch:
        below = branch_below(state, target, pubkey)
        if below is not None:
            _confirm_branch(state, pubkey, below, yes)
        write = run_write(state, lambda tx: tx.remove_relay_member(target.id, pubkey, True))
        gone = [ev["tags"][1][1] for ev in write.events if ev["kind"] == KIND_REMOVE_USER]
    elif if_role is None:
        write = run_write(state, lambda tx: tx.remove_relay_member(target.id, pubkey))
    else:
        write = run_write(
            state, lambda tx: tx.remove_relay_member_if_role(target.id, pubkey, if_role)
        )
    current = None
    if write.outcome == "role_mismatch":
        current = current_role(state.conn, target.id, pubkey)
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=REMOVE,
        words={
            "who": npub(pubkey),
            "wanted": article(if_role),
            "current": article(current) if current else "no longer a member",
            "with_branch": _and_below(len(gone) - 1) if branch else "",
        },
        extra={"pubkey": pubkey, "current_role": current}
        | ({"removed": sorted(gone)} if branch else {}),
    )


def branch_below(state: State, target: Community, pubkey: str) -> list[str] | None:
    """The members `pubkey` brought in, at any depth, as remove_relay_member's branch takes
    them (buzz.invite_branch); None when `pubkey` is no member or is the owner (the database
    then answers, changing nothing)."""
    branch = [pk for pk, _ in state.reader().invite_branch(target.id, pubkey)]
    return [pk for pk in branch if pk != pubkey] if branch else None


def _confirm_branch(state: State, pubkey: str, below: list[str], yes: bool) -> None:
    """--branch asks first, at a terminal; elsewhere it needs --yes."""
    going = f"{npub(pubkey)}{_and_below(len(below))} ({len(below) + 1} in all)"
    if not yes and not sys.stdin.isatty():
        raise Failure(
            f"--branch would remove {going}; not at a terminal, so not asked",
            BAD_INPUT,
            hint="give --yes to remove them without asking",
        )
    confirm(state, f"Remove {going}?", yes)


def _and_below(count: int) -> str:
    """' and the 3 members they brought in' (at any depth); '' for none."""
    if count <= 0:
        return " (they brought in nobody)"
    return f" and the {count} member{'s' if count != 1 else ''} they brought in"


@click.command("set-role")
@click.argument("pubkey", type=PUBKEY)
@click.argument("role", type=click.Choice(ROLES))
@write_command
def set_role(pubkey: str, role: str) -> None:
    """Make a member an admin or a member. The owner's role is changed by transfer-ownership.

    \b
    Example:
      buzz-admin set-role npub1... admin
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.update_relay_member_role(target.id, pubkey, role))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=SET_ROLE,
        words={"who": npub(pubkey), "role": role},
        extra={"pubkey": pubkey, "role": role},
    )


@click.command("bootstrap-owner")
@click.argument("pubkey", type=PUBKEY)
@write_command
def bootstrap_owner(pubkey: str) -> None:
    """Provision the owner: PUBKEY becomes the owner (joining if needed); any other owner
    becomes an admin. For setting up or repairing a community; to hand a community over,
    use transfer-ownership.

    \b
    Example:
      buzz-admin -c relay.example.org bootstrap-owner npub1...
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.bootstrap_owner(target.id, pubkey))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=BOOTSTRAP,
        words={"who": npub(pubkey)},
        extra={"pubkey": pubkey},
    )


@click.command("transfer-ownership")
@click.argument("pubkey", type=PUBKEY)
@click.option(
    "--expected-owner",
    type=PUBKEY,
    help="Transfer only if this is the current owner (else exit 4, nothing changed).",
)
@write_command
def transfer_ownership(pubkey: str, expected_owner: str | None) -> None:
    """Hand the community over to PUBKEY (who joins if not a member); the previous owner
    stays as a member.

    \b
    Example:
      buzz-admin transfer-ownership npub1new... --expected-owner npub1old...
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.transfer_ownership(target.id, pubkey, expected_owner))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=TRANSFER,
        words={
            "who": npub(pubkey),
            "host": target.label,
            "expected": npub(expected_owner) if expected_owner else None,
        },
        extra={"pubkey": pubkey, "expected_owner": expected_owner},
    )


@click.command("claim-membership")
@click.argument("pubkey", type=PUBKEY)
@click.option("--policy-version", metavar="V", help="Record that PUBKEY accepted this policy.")
@write_command
def claim_membership(pubkey: str, policy_version: str | None) -> None:
    """Let PUBKEY join as a member by its own request (claim_relay_membership), recording
    the policy version it accepted.

    \b
    Example:
      buzz-admin claim-membership npub1... --policy-version 2026-01
    """
    state = get_state()
    target = state.resolve()
    write = run_write(
        state, lambda tx: tx.claim_relay_membership(target.id, pubkey, policy_version)
    )
    current = None
    if write.outcome == "already_member":
        current = current_role(state.conn, target.id, pubkey)
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=CLAIM,
        words={"who": npub(pubkey), "current": current, "host": target.label},
        extra={"pubkey": pubkey},
    )


@click.command("members")
@click.option("--hex", "as_hex", is_flag=True, help="Show pubkeys as hex instead of npub.")
@click.option(
    "--role",
    metavar="ROLE",
    help="Only members with this role: owner, admin, member, or a defined role (role list).",
)
@click.option(
    "--tree",
    is_flag=True,
    help="Draw the invite tree: each member under the member who brought them in.",
)
@click.option(
    "--invites",
    is_flag=True,
    help="Show how many more members each may bring in by invites (INVITES LEFT; --json "
    "always has it).",
)
@community_command
def members(as_hex: bool, role: str | None, tree: bool, invites: bool) -> None:
    """The community's members as stored: owner first, then admins, then members; the
    last column, ROLES, names the defined roles each holds (comma-separated, "-" for none).
    With --invites, the column before it says how many more members each may bring in by
    invites ("no limit" for the owner and, unless a quota is set, admins; see `quota`).

    With --tree, the invite tree: a member whose added_by is another member hangs under
    that member; everyone else at the top, grouped by what their added_by says (the
    operator's label such as buzz-admin, invite, or a pubkey that is not a member), with
    how many each brought in.

    \b
    Example:
      buzz-admin -c relay.example.org members
      buzz-admin members --role moderator --hex
      buzz-admin members --tree
      buzz-admin members --invites
      buzz-admin members --json | jq -r '.members[].npub'
    """
    if tree and role is not None:
        raise Failure("--tree draws every member: give --tree or --role, not both", BAD_INPUT)
    state = get_state()
    target = state.resolve()
    # invites_left per member costs a few index reads each: only when it is shown.
    with_left = invites or state.json
    api = state.reader()
    rows = [tuple(m) for m in api.relay_members(target.id)]
    rows.sort(key=lambda r: (ROLE_RANK.get(r[1], 9), r[0]))
    left: dict[str, int | None] = {}
    if with_left:
        left = {pk: n for pk, _, _, n in api.members_with_invites_left(target.id)}
    if tree:
        _show_tree(state, target, [Member(*r) for r in rows], as_hex, left if with_left else None)
        return
    if role in ROLES:
        rows = [r for r in rows if r[1] == role]
    elif role is not None:
        defined = any(d["tags"][1] == ["d", role] for d in api.role_definitions(target.id))
        rows = [r for r in rows if role in (r[4] or ())]
        if not defined and not rows:
            raise Failure(
                f"{target.label} has no role {role}",
                NOT_FOUND,
                hint="`buzz-admin role list` shows the defined roles",
            )
    if state.json:
        echo_json(
            {
                "community": target.as_json(),
                "members": [
                    {
                        "pubkey": pk,
                        "npub": npub(pk),
                        "role": r,
                        "roles": list(held or ()),
                        "added_by": by,
                        "joined_at": iso(at),
                        "invites_left": left.get(pk),
                    }
                    for pk, r, by, at, held in rows
                ],
            }
        )
        return
    shown = [
        [r, pk if as_hex else npub(pk), by or "-", iso(at) or "-", ",".join(held or ()) or "-"]
        for pk, r, by, at, held in rows
    ]
    headers = ["ROLE", "PUBKEY", "ADDED BY", "JOINED", "ROLES"]
    if invites:  # before ROLES, which stays the last column
        headers.insert(4, "INVITES LEFT")
        for line, (pk, *_) in zip(shown, rows, strict=True):
            line.insert(4, _left_words(left.get(pk)))
    for line in table(shown, headers):
        click.echo(line)
    summary = _summary(target, [r[1] for r in rows])
    if role is not None and role not in ROLES:
        summary += f" (holding {role})"
    click.echo(summary)


def _summary(target: Community, roles_held: list[str]) -> str:
    """'3 members of HOST: 1 owner, 1 admin, 1 member'."""
    counts = {r: roles_held.count(r) for r in ROLES}
    roles = ", ".join(f"{counts[r]} {r}{'s' if counts[r] != 1 else ''}" for r in ROLES)
    n = len(roles_held)
    return f"{n} member{'s' if n != 1 else ''} of {target.label}: {roles}"


@dataclass
class _Node:
    member: Member
    children: list[_Node] = field(default_factory=list)
    in_all: int = 0  # everyone below, at any depth


def invite_tree(rows: list[Member]) -> list[tuple[str | None, list[_Node]]]:
    """The members as the tree of who brought in whom: (added_by, top-level members) groups.

    A member hangs under the member its added_by names; the others are at the top, grouped
    by their added_by. rows come sorted as members shows them, and so do the children. A
    loop of added_by (possible only by direct add-member --added-by) is cut at its first
    member, which then goes to the top.
    """
    nodes = {m.pubkey: _Node(m) for m in rows}
    tops: list[_Node] = []
    for node in nodes.values():
        parent = nodes.get(node.member.added_by or "")
        if parent is None or parent is node:
            tops.append(node)
        else:
            parent.children.append(node)
    order: list[_Node] = []  # every reached node, parents before their children
    reached: set[str] = set()

    def reach(start: list[_Node]) -> None:
        stack = list(reversed(start))
        while stack:
            node = stack.pop()
            reached.add(node.member.pubkey)
            order.append(node)
            stack.extend(reversed(node.children))

    reach(tops)
    for node in nodes.values():
        if node.member.pubkey not in reached:  # in a loop: cut it here
            nodes[node.member.added_by or ""].children.remove(node)
            tops.append(node)
            reach([node])
    for node in reversed(order):
        node.in_all = sum(1 + child.in_all for child in node.children)
    groups: dict[str | None, list[_Node]] = {}
    for node in tops:
        groups.setdefault(node.member.added_by, []).append(node)
    # The owner's group first; nobody recorded last.
    return sorted(
        groups.items(),
        key=lambda g: (min(ROLE_RANK.get(n.member.role, 9) for n in g[1]), g[0] is None, g[0]),
    )


def _left_words(left: int | None) -> str:
    return "no limit" if left is None else str(left)


def _show_tree(
    state: State,
    target: Community,
    rows: list[Member],
    as_hex: bool,
    left: dict[str, int | None] | None,
) -> None:
    """`left`: each member's invites left, shown after its line (None: not shown)."""
    groups = invite_tree(rows)
    member_pubkeys = {m.pubkey for m in rows}

    def as_json(node: _Node) -> dict[str, Any]:
        m = node.member
        return {
            "pubkey": m.pubkey,
            "npub": npub(m.pubkey),
            "role": m.role,
            "roles": list(m.roles or ()),
            "added_by": m.added_by,
            "joined_at": iso(m.joined_at),
            "brought_in": len(node.children),
            "in_all": node.in_all,
            "invites_left": left.get(m.pubkey) if left is not None else None,
            "children": [as_json(child) for child in node.children],
        }

    if state.json:
        echo_json(
            {
                "community": target.as_json(),
                "tree": [
                    {
                        "added_by": label,
                        "members": sum(1 + n.in_all for n in tops),
                        "children": [as_json(n) for n in tops],
                    }
                    for label, tops in groups
                ],
            }
        )
        return
    for label, tops in groups:
        if label is None:
            header = "added by nobody recorded"
        elif label in member_pubkeys:
            header = f"added by {actor(label, as_hex=as_hex)} (a loop of added_by)"
        elif is_pubkey(label):
            header = f"added by {actor(label, as_hex=as_hex)} (not a member)"
        else:
            header = f"added by {label}"
        total = sum(1 + n.in_all for n in tops)
        click.echo(f"{header}: {total} member{'s' if total != 1 else ''}")
        stack = [(n, 1) for n in reversed(tops)]
        while stack:
            node, depth = stack.pop()
            m = node.member
            held = f" {','.join(m.roles)}" if m.roles else ""
            count = ""
            if node.children:
                count = f"  brought in {len(node.children)}"
                if node.in_all != len(node.children):
                    count += f", {node.in_all} in all"
            pk = m.pubkey if as_hex else npub(m.pubkey)
            if left is not None:
                count += f"  invites left: {_left_words(left.get(m.pubkey))}"
            click.echo(f"{'  ' * depth}{m.role:<7} {pk}{held}{count}")
            stack.extend((child, depth + 1) for child in reversed(node.children))
    click.echo(_summary(target, [m.role for m in rows]))
