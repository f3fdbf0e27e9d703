"""buzz-admin show-list, republish-members, verify, watch, rotate-key."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, NamedTuple

import click
import psycopg

from ..errors import BuzzError
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
from ._core import (
    BAD_INPUT,
    FAILURE,
    NOT_FOUND,
    OK,
    PUBKEY,
    CommitUnknown,
    Community,
    Failure,
    all_communities,
    community_command,
    community_row,
    confirm,
    echo_json,
    failure_from,
    find_community,
    get_state,
    json_option,
    key_option,
    list_line,
    marks_write,
    member_count,
    npub,
    progress,
    report,
    run_write,
    when,
    write_command,
)

CHANNEL = "buzz_membership"
EVENT_KEYS = frozenset(("id", "pubkey", "created_at", "kind", "tags", "content", "sig"))


def register(main: click.Group) -> None:
    for command in (show_list, republish_members, verify, watch, rotate_key):
        main.add_command(command)


def live_list(conn: psycopg.Connection[Any], cid: Any) -> dict[str, Any] | None:
    return conn.execute("SELECT buzz.member_list(%s)", (cid,)).fetchone()[0]


# --------------------------------------------------------------------------- show-list


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


# --------------------------------------------------------------------------- republish


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
        named = {r[0] for r in conn.execute("SELECT community_id FROM buzz.member_list_drift()")}
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


# --------------------------------------------------------------------------- verify

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
    role = _role_of(event)
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
        stored = conn.execute(
            "SELECT pubkey, role, roles FROM buzz.relay_members(%s)", (cid,)
        ).fetchall()
        definitions = [r[0] for r in conn.execute("SELECT buzz.role_definitions(%s)", (cid,))]
        deletions = [r[0] for r in conn.execute("SELECT buzz.role_deletions(%s)", (cid,))]
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


# --------------------------------------------------------------------------- watch


def _role_of(event: dict[str, Any]) -> str | None:
    """The role id of a 33534 (its d tag) or of a kind 5 deletion (its a tag's last part)."""
    tags = event.get("tags")
    for tag in tags if isinstance(tags, list) else ():
        if not isinstance(tag, list) or len(tag) < 2 or not isinstance(tag[1], str):
            continue
        if event.get("kind") == KIND_ROLE and tag[0] == "d":
            return tag[1]
        if event.get("kind") == KIND_DELETION and tag[0] == "a" and tag[1].count(":") >= 2:
            return tag[1].split(":", 2)[2]
    return None


def _label_of(event: dict[str, Any]) -> str | None:
    for tag in event.get("tags") or ():
        if isinstance(tag, list) and len(tag) >= 2 and tag[0] == "label":
            return str(tag[1])
    return None


def live_role_events(conn: psycopg.Connection[Any], cid: Any) -> dict[str, dict[str, Any]]:
    """The community's live role events by role id: its definition, else its deletion."""
    events: dict[str, dict[str, Any]] = {}
    for sql in ("SELECT buzz.role_deletions(%s)", "SELECT buzz.role_definitions(%s)"):
        for (event,) in conn.execute(sql, (cid,)):
            role = _role_of(event)
            if role is not None:
                events[role] = event
    return events


def live_role_event(
    conn: psycopg.Connection[Any], cid: Any, kind: int, event_id: str
) -> dict[str, Any] | None:
    """The live 33534 (or kind 5) of the community with this id; None if it is not live."""
    read = "role_definitions" if kind == KIND_ROLE else "role_deletions"
    row = conn.execute(
        f"SELECT e FROM buzz.{read}(%s) AS e WHERE e::jsonb ->> 'id' = %s", (cid, event_id)
    ).fetchone()
    return row[0] if row else None


class _Watcher:
    """LISTEN buzz_membership and print each list (and role event) as it commits; reconnect
    on loss."""

    def __init__(
        self,
        target: Community | None,
        as_json: bool,
        *,
        lists_only: bool = False,
        limit: int | None = None,
    ) -> None:
        self.target = target
        self.as_json = as_json
        self.lists_only = lists_only
        self.limit = limit
        self.hosts: dict[str, str | None] = {}
        if target is not None:
            self.hosts[str(target.id)] = target.host
        self.last_id: str | None = None
        # The watched community's role events known live (printed, or live when it started):
        # role id -> event id.
        self.role_ids: dict[str, str] = {}
        self.printed = 0

    @property
    def done(self) -> bool:
        return self.limit is not None and self.printed >= self.limit

    def host(self, conn: psycopg.Connection[Any], cid: str) -> str | None:
        if cid not in self.hosts:
            try:
                row = community_row(conn, uuid.UUID(cid))
            except psycopg.errors.InsufficientPrivilege:
                row = None
            self.hosts[cid] = row[0] if row else None
        return self.hosts[cid]

    def remember(self, conn: psycopg.Connection[Any]) -> None:
        """Before LISTEN: what is live now is not news (catch_up compares with it)."""
        assert self.target is not None
        event = live_list(conn, self.target.id)
        self.last_id = event.get("id") if isinstance(event, dict) else None
        if not self.lists_only:
            live = live_role_events(conn, self.target.id)
            self.role_ids = {role: ev["id"] for role, ev in live.items()}

    def show(
        self,
        conn: psycopg.Connection[Any],
        cid: str,
        list_id: str,
        created_at: int,
        *,
        after_reconnect: bool = False,
    ) -> None:
        if self.done:
            return
        event = live_list(conn, cid)
        host = self.host(conn, cid)
        current = event is not None and event.get("id") == list_id
        self.last_id = list_id
        self.printed += 1
        if self.as_json:
            echo_json(
                {
                    "community": {"id": cid, "host": host},
                    "id": list_id,
                    "kind": KIND_MEMBERSHIP_LIST,
                    "created_at": created_at,
                    "members": member_count(event) if current else None,
                    "event": event if current else None,
                    "after_reconnect": after_reconnect,
                }
            )
            return
        if current:
            size = f"{member_count(event)} members"
        elif event is None:
            size = "(community deleted since)"
        else:
            size = f"(replaced since by {event['id']})"
        note = " (committed while reconnecting)" if after_reconnect else ""
        click.echo(f"{host or cid} list {list_id} created_at {when(created_at)} {size}{note}")

    def show_role(
        self,
        conn: psycopg.Connection[Any],
        cid: str,
        kind: int,
        event_id: str,
        created_at: int,
        *,
        event: dict[str, Any] | None = None,
        after_reconnect: bool = False,
    ) -> None:
        """A role definition (33534) or deletion (kind 5): the role, and the event while it
        is live (None once a newer event of the role replaced it)."""
        if self.done:
            return
        if event is None:
            event = live_role_event(conn, cid, kind, event_id)
        host = self.host(conn, cid)
        role = _role_of(event) if event is not None else None
        if self.target is not None and role is not None:
            self.role_ids[role] = event_id
        self.printed += 1
        if self.as_json:
            echo_json(
                {
                    "community": {"id": cid, "host": host},
                    "id": event_id,
                    "kind": kind,
                    "created_at": created_at,
                    "role": role,
                    "event": event,
                    "after_reconnect": after_reconnect,
                }
            )
            return
        what = "definition" if kind == KIND_ROLE else "deletion"
        line = f"{host or cid} role {role or '?'} {what} {event_id} created_at {when(created_at)}"
        if event is None:
            line += " (no longer live)"
        elif kind == KIND_ROLE:
            line += f" label {json.dumps(_label_of(event), ensure_ascii=False)}"
        if after_reconnect:
            line += " (committed while reconnecting)"
        click.echo(line)

    def notified(self, conn: psycopg.Connection[Any], payload: str) -> bool:
        """Handle one notification; True when it was printed."""
        try:
            data = json.loads(payload)
            cid, event_id, created_at = data["community_id"], data["id"], data["created_at"]
            kind = data.get("kind", KIND_MEMBERSHIP_LIST)
        except (ValueError, KeyError, TypeError, AttributeError):
            click.echo(f"buzz-admin: ignoring a malformed notification: {payload[:200]}", err=True)
            return False
        if self.target is not None and cid != str(self.target.id):
            return False
        if kind == KIND_MEMBERSHIP_LIST:
            if self.target is not None and event_id == self.last_id:
                return False  # already printed by catch_up after a reconnect
            self.show(conn, cid, event_id, created_at)
            return True
        if kind in (KIND_ROLE, KIND_DELETION):
            if self.lists_only:
                return False
            if self.target is not None and event_id in self.role_ids.values():
                return False  # already printed by catch_up after a reconnect
            self.show_role(conn, cid, kind, event_id, created_at)
            return True
        click.echo(f"buzz-admin: ignoring a notification of kind {kind}: {payload[:200]}", err=True)
        return False

    def catch_up(self, conn: psycopg.Connection[Any]) -> None:
        """After a reconnect: print the target's list, and its role events, if they changed
        while disconnected."""
        if self.target is None:
            click.echo(
                "buzz-admin: lists and role events committed while disconnected were not "
                "printed; `buzz-admin verify` or `show-list` shows the live ones",
                err=True,
            )
            return
        cid = str(self.target.id)
        event = live_list(conn, self.target.id)
        if event is not None and event.get("id") != self.last_id:
            self.show(conn, cid, event["id"], event["created_at"], after_reconnect=True)
        if self.lists_only:
            return
        for role, ev in sorted(live_role_events(conn, self.target.id).items()):
            if self.role_ids.get(role) != ev["id"]:
                self.show_role(
                    conn,
                    cid,
                    ev["kind"],
                    ev["id"],
                    ev["created_at"],
                    event=ev,
                    after_reconnect=True,
                )


@click.command("watch")
@click.option(
    "--count",
    type=click.IntRange(min=1),
    help="Stop after printing N events (lists, and role events unless --lists-only).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0), metavar="SECONDS", help="Stop after SECONDS."
)
@click.option("--all", "all_", is_flag=True, help="Every community, even when RELAY_URL is set.")
@click.option(
    "--lists-only",
    is_flag=True,
    help="Print membership lists only, not role definitions or deletions.",
)
@community_command
def watch(count: int | None, timeout: float | None, all_: bool, lists_only: bool) -> None:
    """Print each membership list as it commits (from NOTIFY buzz_membership): community,
    list id, created_at, member count; and each role definition (kind 33534: role, event id,
    created_at, label) and role deletion (kind 5). With --json one JSON object per line,
    whose "kind" tells them apart.

    Watches the community of --community or RELAY_URL, else (or with --all) every community.
    Reconnects with backoff when the connection drops, then prints the watched community's
    list and role events if they changed meanwhile. Stops on Ctrl-C, after --count events or
    --timeout seconds. Says "listening" on stderr each time it (re)starts listening.

    \b
    Example:
      buzz-admin -c relay.example.org watch
      buzz-admin watch --all --json | jq -c 'select(.kind == 13534)'
    """
    state = get_state()
    if all_ and state.community:
        raise Failure("give --community or --all, not both", BAD_INPUT)
    deadline = None if timeout is None else time.monotonic() + timeout
    conn = state.connect("buzz-admin watch")  # the first connection fails fast
    target = None
    if not all_ and state.selection() is not None:
        target = find_community(conn, state.selection(), from_relay_url=not state.community)
    watcher = _Watcher(target, state.json, lists_only=lists_only, limit=count)
    backoff = 0.5
    reconnecting = False
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                if conn is None:
                    conn = state.connect("buzz-admin watch")
                if target is not None and not reconnecting and not watcher.printed:
                    watcher.remember(conn)
                conn.execute(f"LISTEN {CHANNEL}")
                if reconnecting:  # listening again first, so that nothing falls in between
                    watcher.catch_up(conn)
                    reconnecting = False
                    if watcher.done:
                        return
                what = target.label if target else "every community"
                events = "lists" if lists_only else "lists and role events"
                click.echo(f"buzz-admin: listening for {events} of {what}", err=True)
                backoff = 0.5
                last_ping = time.monotonic()
                while deadline is None or time.monotonic() < deadline:
                    wait = (
                        1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
                    )
                    # Collect first, then query: the generator holds the connection's lock
                    # until it ends, so a query inside the loop would wait for itself.
                    batch = list(conn.notifies(timeout=wait, stop_after=1))
                    for note in batch:
                        watcher.notified(conn, note.payload)
                        if watcher.done:
                            return
                    if time.monotonic() - last_ping > 15:  # notice a silently dead connection
                        conn.execute("SELECT 1")
                        last_ping = time.monotonic()
                return
            except (psycopg.OperationalError, psycopg.InterfaceError, Failure) as exc:
                if conn is not None:
                    conn.close()
                conn = None
                reconnecting = True
                message = exc.message if isinstance(exc, Failure) else str(exc).strip()
                click.echo(
                    f"buzz-admin: connection lost ({message.splitlines()[0] if message else 'closed'});"
                    f" reconnecting in {backoff:g}s",
                    err=True,
                )
                pause = backoff if deadline is None else min(backoff, deadline - time.monotonic())
                time.sleep(max(0.0, pause))
                backoff = min(backoff * 2, 30.0)
    except KeyboardInterrupt:
        pass
    finally:
        if conn is not None:
            conn.close()


# --------------------------------------------------------------------------- rotate-key


@click.command("rotate-key")
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Communities re-signed per transaction.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@key_option
@marks_write
def rotate_key(batch: int, yes: bool) -> None:
    """Make the configured key (--key-file or BUZZ_RELAY_SECRET_KEY: the NEW key) the relay
    key, and re-sign every community's list with it, --batch communities per transaction.

    From the first commit on, the old key can no longer publish lists. Safe to run again if
    interrupted: it continues where it stopped.

    \b
    Example:
      buzz-admin --key-file /etc/buzz/relay-new.key rotate-key
    """
    state = get_state()
    key = state.key()
    confirm(
        state,
        f"Make {key.npub} the relay key and re-sign every list with it? "
        "The old key will no longer be accepted",
        yes,
    )
    total = 0
    rounds = 0
    m = state.membership()
    while True:
        write = run_write(state, lambda tx: tx.rotate_relay_key(key.pubkey, batch), m)
        rounds += 1
        if rounds == 1:
            state.kept = f"the relay key {key.npub} was recorded"
        if not write.outcome:
            break
        total += write.outcome
        state.kept = (
            f"the relay key {key.npub} was recorded and {total} lists re-signed; run "
            "rotate-key again to finish"
        )
        if not state.json:
            click.echo(f"re-signed {total} lists so far", err=True)
    state.kept = None
    if state.json:
        echo_json(
            {
                "outcome": "rotated",
                "snapshot": None,
                "relay_pubkey": key.pubkey,
                "re_signed": total,
                "exit_code": OK,
            }
        )
    else:
        click.echo(f"the relay key is {key.npub}; re-signed {total} lists")
