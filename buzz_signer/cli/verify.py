"""buzz-admin verify: every live list and role event judged from outside the database."""

from __future__ import annotations

from typing import Any, NamedTuple

import click
import psycopg

from ..membership import Membership
from ..nostr import (
    KIND_DELETION,
    KIND_MEMBERSHIP_LIST,
    KIND_ROLE,
    compute_id,
    event_id,
    serialize_event,
    verify_event,
    verify_signature,
)
from ..signer import (
    BASE_ROLES,
    EventShapes,
    MembersOutOfOrder,
    PreparedEvent,
    RefusedToSign,
    is_role_id,
)
from ._live import live_list, role_of
from .config import all_communities
from .failures import BAD_INPUT, FAILURE, OK, Failure
from .output import echo_json, npub
from .params import PUBKEY
from .state import community_command, get_state

EVENT_KEYS = frozenset(("id", "pubkey", "created_at", "kind", "tags", "content", "sig"))


def register(main: click.Group) -> None:
    main.add_command(verify)


Member = tuple[str, str, tuple[str, ...]]  # pubkey, base role, defined roles held (ascending)


def _refusal(event: dict[str, Any], kind: int, what: str) -> RefusedToSign | None:
    """Why the Signer's shapes (SPEC sections 2 and 6, signer.EventShapes) refuse a live event
    of `kind`, by its own key (which key signed is a problem of its own); None if well-formed.

    The event is checked as the Signer checks what it signs: as the canonical NIP-01 text of
    its fields, with the sha256 of that text as id (whether the id is right is id_mismatch).
    """
    if type(event["kind"]) is not int or event["kind"] != kind:
        return RefusedToSign(f"{what}: kind {event['kind']}, not {kind}")
    pubkey, created_at = event["pubkey"], event["created_at"]
    try:
        shapes = EventShapes(pubkey, author="its own key")
    except ValueError as exc:
        return RefusedToSign(f"{what}: {exc}")
    serialized = serialize_event(pubkey, created_at, kind, event["tags"], event["content"])
    try:
        digest = event_id(serialized)
    except UnicodeEncodeError:
        digest = ""  # check says why
    try:
        shapes.check(PreparedEvent("", digest, kind, created_at, serialized), what=what)
    except RefusedToSign as exc:
        return exc
    return None


def _role_id(event: dict[str, Any]) -> str | None:
    """The role a live 33534 or kind 5 is about, if its d or a tag names a role id."""
    role = role_of(event)
    return role if is_role_id(role) else None


def _held(role: str, roles: tuple[str, ...]) -> str:
    """'admin', or 'admin with moderator,vip'."""
    return f"{role} with {','.join(roles)}" if roles else role


def check_list(event: Any, stored: list[Member], relay_pubkey: str | None) -> list[tuple[str, str]]:
    """What is wrong with a live list, judged in Python: (problem, detail) pairs.

    stored: the members as relay_members holds them (pubkey, role, defined roles). Trusts
    nothing the database says about the list: the id is recomputed, the signature checked,
    every tag compared.
    """
    if event is None:
        return [("missing", "no live membership list")]
    problems: list[tuple[str, str]] = []
    if not isinstance(event, dict) or not EVENT_KEYS <= set(event):
        return [("malformed", "the live list is not a NIP-01 event")]
    list_id = event["id"]
    refusal = _refusal(event, KIND_MEMBERSHIP_LIST, f"list {list_id}")
    if refusal is not None:
        unordered = isinstance(refusal, MembersOutOfOrder)
        problems.append(("unordered" if unordered else "malformed", str(refusal)))
    # What the member tags say, as far as they can be read (for members_differ).
    tags = event["tags"] if isinstance(event["tags"], list) else []
    listed: list[Member] = [
        (tag[1], str(tag[2]), tuple(str(r) for r in tag[3:]))
        for tag in tags[1:]
        if isinstance(tag, list) and len(tag) >= 3 and tag[0] == "member" and type(tag[1]) is str
    ]
    try:
        recomputed = compute_id(event)
    except (TypeError, ValueError) as exc:
        recomputed = f"(cannot be computed: {exc})"
    if recomputed != list_id:
        problems.append(("id_mismatch", f"list {list_id} hashes to {recomputed}"))
    elif not verify_signature(event["pubkey"], event["sig"], list_id) or not verify_event(event):
        problems.append(
            ("bad_signature", f"the signature of list {list_id} does not verify for its pubkey")
        )
    if relay_pubkey is not None and event["pubkey"] != relay_pubkey:
        problems.append(
            (
                "wrong_key",
                (
                    f"list {list_id} is signed by {npub(str(event['pubkey']))}, not by the "
                    f"relay key {npub(relay_pubkey)}"
                ),
            )
        )
    listed_roles = {pk: (role, roles) for pk, role, roles in listed}
    stored_roles = {pk: (role, roles) for pk, role, roles in stored}
    differences = []
    for pk in sorted(set(stored_roles) - set(listed_roles)):
        differences.append(
            f"{npub(pk)} ({_held(*stored_roles[pk])}) is a member but not in the list"
        )
    for pk in sorted(set(listed_roles) - set(stored_roles)):
        differences.append(
            f"{npub(pk)} ({_held(*listed_roles[pk])}) is in the list but not a member"
        )
    for pk in sorted(set(listed_roles) & set(stored_roles)):
        if listed_roles[pk] != stored_roles[pk]:
            differences.append(
                f"{npub(pk)} is {_held(*stored_roles[pk])} but the list says "
                f"{_held(*listed_roles[pk])}"
            )
    if differences:
        shown = differences[:10]
        if len(differences) > 10:
            shown.append(f"and {len(differences) - 10} more")
        problems.append(
            (
                "members_differ",
                f"list {list_id} names {len(listed)} members, {len(stored)} are stored: "
                + "; ".join(shown),
            )
        )
    return problems


def _role_event_signature(
    event: dict[str, Any], what: str, relay_pubkey: str | None
) -> list[tuple[str, str]]:
    """id recomputed, signature checked, and (for definitions) the key that signed."""
    problems = []
    try:
        recomputed = compute_id(event)
    except (TypeError, ValueError) as exc:
        recomputed = f"(cannot be computed: {exc})"
    if recomputed != event["id"]:
        problems.append(("role_id_mismatch", f"{what} hashes to {recomputed}"))
    elif not verify_event(event):
        problems.append(
            ("role_bad_signature", f"the signature of {what} does not verify for its pubkey")
        )
    if relay_pubkey is not None and event["pubkey"] != relay_pubkey:
        problems.append(
            (
                "role_wrong_key",
                (
                    f"{what} is signed by {npub(str(event['pubkey']))}, not by the relay key "
                    f"{npub(relay_pubkey)}"
                ),
            )
        )
    return problems


def _judged(ev: Any, kind: int, problems: list[tuple[str, str]]) -> tuple[str | None, str] | None:
    """A live 33534 definition's or kind 5 deletion's role id (None if it names none) and its
    name in details, its shape judged (role_malformed added to problems); None if it is not
    a NIP-01 event at all."""
    name = "definition" if kind == KIND_ROLE else "deletion"
    if not isinstance(ev, dict) or not EVENT_KEYS <= set(ev):
        problems.append(("role_malformed", f"a role {name} is not a NIP-01 event"))
        return None
    role = _role_id(ev)
    what = f"{name} {ev['id']} of role {role or '?'}"
    refusal = _refusal(ev, kind, what)
    if refusal is not None:
        problems.append(("role_malformed", str(refusal)))
    elif kind == KIND_ROLE and not any(tag[0] == "label" for tag in ev["tags"][2:]):
        # verify's own rule: SPEC section 6 and the Signer allow a definition without a
        # label, but the database always writes one (roles.label is NOT NULL).
        problems.append(("role_malformed", f"{what}: it has no label"))
    return role, what


def check_roles(
    definitions: list[Any],
    deletions: list[Any],
    stored: list[Member],
    event: Any,
    relay_pubkey: str | None,
) -> list[tuple[str, str]]:
    """What is wrong with a community's live role events, judged in Python.

    Each 33534 definition (role_definitions) and kind 5 deletion (role_deletions): its
    shape, its id recomputed, its signature checked, the key that signed a definition; every
    base role, and every defined role a member holds (stored, or named by the live list's
    tags), has a live definition. Whether a definition says what the database stores cannot
    be told from outside (no read gives the stored definitions): member_list_drift checks that
    ('role_differs').
    """
    problems: list[tuple[str, str]] = []
    defined: dict[str, dict[str, Any]] = {}
    for ev in definitions:
        judged = _judged(ev, KIND_ROLE, problems)
        if judged is None:
            continue
        role, what = judged
        if role is not None:
            if role in defined:
                problems.append(
                    (
                        "role_malformed",
                        (
                            f"role {role} has two live definitions: {defined[role]['id']} "
                            f"and {ev['id']}"
                        ),
                    )
                )
            defined[role] = ev
        problems.extend(_role_event_signature(ev, what, relay_pubkey))
    for ev in deletions:
        judged = _judged(ev, KIND_DELETION, problems)
        if judged is None:
            continue
        role, what = judged
        # Deletions are not re-signed when the relay key rotates: any key of ours may sign one.
        problems.extend(_role_event_signature(ev, what, None))
        live = defined.get(role or "")
        if live is not None and live["pubkey"] == ev["pubkey"]:
            problems.append(
                (
                    "role_deleted",
                    f"{what} deletes the live definition {live['id']} of the same key",
                )
            )
    for base in sorted(BASE_ROLES - set(defined)):
        problems.append(("role_missing", f"base role {base} has no live 33534 definition"))
    holders: dict[str, int] = {}
    for _, _, roles in stored:
        for r in roles:
            holders[r] = holders.get(r, 0) + 1
    if isinstance(event, dict) and isinstance(event.get("tags"), list):
        for tag in event["tags"][1:]:
            if isinstance(tag, list):
                for r in tag[3:]:
                    holders.setdefault(str(r), 0)
    for r in sorted(set(holders) - set(defined) - BASE_ROLES):
        n = holders[r]
        where = f"held by {n} member{'s' if n != 1 else ''}" if n else "named in the list"
        problems.append(("role_missing", f"role {r} is {where} but has no live 33534 definition"))
    return problems


class _Read(NamedTuple):
    event: Any
    stored: list[Member]
    definitions: list[Any]
    deletions: list[Any]


def _snapshot(conn: psycopg.Connection[Any], cid: Any) -> _Read:
    """The live list, the stored members and the live role events, read in one snapshot
    (REPEATABLE READ), so that a write committing between the reads cannot look like a
    disagreement."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        event = live_list(conn, cid)
        api = Membership(conn, None)
        stored = [(m.pubkey, m.role, m.roles) for m in api.relay_members(cid)]
        definitions = api.role_definitions(cid)
        deletions = api.role_deletions(cid)
    return _Read(
        event,
        [(pk, role, tuple(roles or ())) for pk, role, roles in stored],
        definitions,
        deletions,
    )


@click.command("verify")
@click.option("--all", "all_", is_flag=True, help="Every community, even when RELAY_URL is set.")
@click.option(
    "--relay-pubkey",
    type=PUBKEY,
    help="Check that lists and role definitions are signed by this key (default: the "
    "configured relay key, if any).",
)
@community_command
def verify(all_: bool, relay_pubkey: str | None) -> None:
    """Check every live list (or one community's) from outside the database: recompute its
    id, check its signature and that it names exactly the stored members and roles; and the
    same for the community's role definitions (kind 33534) and deletions (kind 5): their
    shape, ids and signatures, and that every base role and every role a member holds has
    a live definition.

    Read-only, and independent of the database's own drift check (which alone can compare
    a definition with the stored one). Without --community or RELAY_URL, or with --all,
    checks every community (which needs a superuser or a member of buzz_owner). Exits 5 and
    names each community and problem when anything disagrees; repair with
    republish-members (it re-signs the list and every role definition).

    \b
    Example:
      buzz-admin verify --all
      buzz-admin -c relay.example.org verify --json
    """
    state = get_state()
    if all_ and state.community:
        raise Failure("give --community or --all, not both", BAD_INPUT)
    if relay_pubkey is None:
        key = state.optional_key()
        relay_pubkey = key.pubkey if key else None
    conn = state.conn
    if not all_ and state.selection() is not None:
        targets = [state.resolve()]
    else:
        targets = all_communities(conn)
    results: list[dict[str, Any]] = []
    roles_seen = 0
    for c in targets:
        read = _snapshot(conn, c.id)
        event = read.event
        problems = check_list(event, read.stored, relay_pubkey)
        problems += check_roles(read.definitions, read.deletions, read.stored, event, relay_pubkey)
        roles_seen += len(read.definitions)
        results.append(
            {
                "community": c.as_json(),
                "list_id": event.get("id") if isinstance(event, dict) else None,
                "members": len(read.stored),
                "roles": len(read.definitions),
                "role_deletions": len(read.deletions),
                "ok": not problems,
                "problems": [{"problem": p, "detail": d} for p, d in problems],
            }
        )
        if state.json:
            continue
        if not problems:
            n = len(read.definitions)
            click.echo(
                f"ok    {c.label}: list {event['id']}, {len(read.stored)} members, "
                f"{n} role{'s' if n != 1 else ''}"
            )
        for problem, detail in problems:
            click.echo(f"FAIL  {c.label} ({c.id}): {problem}: {detail}")
    bad = [r for r in results if not r["ok"]]
    code = FAILURE if bad else OK
    if state.json:
        echo_json(
            {
                "ok": not bad,
                "relay_pubkey": relay_pubkey,
                "communities": results,
                "exit_code": code,
            }
        )
    else:
        if relay_pubkey is None:
            click.echo(
                "note: no relay key configured: not checked which key signed the lists "
                "(give --relay-pubkey)",
                err=True,
            )
        if not results:
            click.echo("no communities to verify")
        elif bad:
            click.echo(
                f"{len(bad)} of {len(results)} communities have a wrong list or role event; "
                "repair with `buzz-admin republish-members` (--all --drifted for all of them)"
            )
            deletion_problems = any("deletion " in p["detail"] for r in bad for p in r["problems"])
            if deletion_problems:
                click.echo(
                    "a wrong deletion (kind 5) is not re-signed by republish-members: define "
                    "the role again and delete it (`buzz-admin role define`, `role delete`)"
                )
        else:
            click.echo(f"all {len(results)} lists verified, with {roles_seen} role definitions")
    if code:
        raise click.exceptions.Exit(code)
