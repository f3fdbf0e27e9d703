"""buzz-admin show-list, republish-members, verify, watch, rotate-key."""

from __future__ import annotations

import itertools
import json
import time
import uuid
from typing import Any

import click
import psycopg

from ..errors import BuzzError
from ..nostr import KIND_MEMBERSHIP_LIST, compute_id, verify_event, verify_signature
from ..signer import RefusedToSign
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
ROLES = frozenset(("owner", "admin", "member"))


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
    """The community's live signed membership list (kind 13534).

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
        click.echo(f"  {role:<7} {pk if as_hex else npub(pk)}")


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


def check_list(
    event: Any, stored: list[tuple[str, str]], relay_pubkey: str | None
) -> list[tuple[str, str]]:
    """What is wrong with a live list, judged in Python: (problem, detail) pairs.

    stored: the members as relay_members holds them. Trusts nothing the database says about
    the list: the id is recomputed, the signature checked, every tag compared.
    """
    if event is None:
        return [("missing", "no live membership list")]
    problems: list[tuple[str, str]] = []
    if not isinstance(event, dict) or not {
        "id",
        "pubkey",
        "created_at",
        "kind",
        "tags",
        "content",
        "sig",
    } <= set(event):
        return [("malformed", "the live list is not a NIP-01 event")]
    list_id = event["id"]
    if event["kind"] != KIND_MEMBERSHIP_LIST:
        problems.append(("malformed", f"kind {event['kind']}, not {KIND_MEMBERSHIP_LIST}"))
    if event["content"] != "":
        problems.append(("malformed", "content is not empty"))
    tags = event["tags"] if isinstance(event["tags"], list) else []
    if not tags or tags[0] != ["-"]:
        problems.append(("malformed", 'the first tag is not ["-"]'))
    listed: list[tuple[str, str]] = []
    for i, tag in enumerate(tags[1:], 2):
        if (
            isinstance(tag, list)
            and len(tag) == 3
            and tag[0] == "member"
            and isinstance(tag[1], str)
            and tag[2] in ROLES
        ):
            listed.append((tag[1], tag[2]))
        else:
            problems.append(("malformed", f'tag {i} is not ["member", pubkey, role]'))
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
    pubkeys = [pk for pk, _ in listed]
    if any(a >= b for a, b in itertools.pairwise(pubkeys)):
        problems.append(("unordered", "the member tags are not in strictly increasing order"))
    listed_roles = dict(listed)
    stored_roles = dict(stored)
    differences = []
    for pk in sorted(set(stored_roles) - set(listed_roles)):
        differences.append(f"{npub(pk)} ({stored_roles[pk]}) is a member but not in the list")
    for pk in sorted(set(listed_roles) - set(stored_roles)):
        differences.append(f"{npub(pk)} ({listed_roles[pk]}) is in the list but not a member")
    for pk in sorted(set(listed_roles) & set(stored_roles)):
        if listed_roles[pk] != stored_roles[pk]:
            differences.append(
                f"{npub(pk)} is {stored_roles[pk]} but the list says {listed_roles[pk]}"
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


def _snapshot(conn: psycopg.Connection[Any], cid: Any) -> tuple[Any, list[tuple[str, str]]]:
    """The live list and the stored members, read in one snapshot (REPEATABLE READ), so that
    a write committing between the two reads cannot look like a disagreement."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        event = live_list(conn, cid)
        stored = conn.execute("SELECT pubkey, role FROM buzz.relay_members(%s)", (cid,)).fetchall()
    return event, [(pk, role) for pk, role in stored]


@click.command("verify")
@click.option("--all", "all_", is_flag=True, help="Every community, even when RELAY_URL is set.")
@click.option(
    "--relay-pubkey",
    type=PUBKEY,
    help="Check that lists are signed by this key (default: the configured relay key, if any).",
)
@community_command
def verify(all_: bool, relay_pubkey: str | None) -> None:
    """Check every live list (or one community's) from outside the database: recompute its
    id, check its signature and that it names exactly the stored members and roles.

    Read-only, and independent of the database's own drift check. Without --community or
    RELAY_URL, or with --all, checks every community (which needs a superuser or a member of
    buzz_owner). Exits 5 and names each community and problem when anything disagrees; repair
    with republish-members.

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
    for c in targets:
        event, stored = _snapshot(conn, c.id)
        problems = check_list(event, stored, relay_pubkey)
        results.append(
            {
                "community": c.as_json(),
                "list_id": event.get("id") if isinstance(event, dict) else None,
                "members": len(stored),
                "ok": not problems,
                "problems": [{"problem": p, "detail": d} for p, d in problems],
            }
        )
        if state.json:
            continue
        if not problems:
            click.echo(f"ok    {c.label}: list {event['id']}, {len(stored)} members")
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
                f"{len(bad)} of {len(results)} communities have a wrong list; repair with "
                "`buzz-admin republish-members` (--all --drifted for all of them)"
            )
        else:
            click.echo(f"all {len(results)} lists verified")
    if code:
        raise click.exceptions.Exit(code)


# --------------------------------------------------------------------------- watch


class _Watcher:
    """LISTEN buzz_membership and print each list as it commits; reconnect on loss."""

    def __init__(self, target: Community | None, as_json: bool) -> None:
        self.target = target
        self.as_json = as_json
        self.hosts: dict[str, str | None] = {}
        if target is not None:
            self.hosts[str(target.id)] = target.host
        self.last_id: str | None = None
        self.printed = 0

    def host(self, conn: psycopg.Connection[Any], cid: str) -> str | None:
        if cid not in self.hosts:
            try:
                row = community_row(conn, uuid.UUID(cid))
            except psycopg.errors.InsufficientPrivilege:
                row = None
            self.hosts[cid] = row[0] if row else None
        return self.hosts[cid]

    def show(
        self,
        conn: psycopg.Connection[Any],
        cid: str,
        list_id: str,
        created_at: int,
        *,
        after_reconnect: bool = False,
    ) -> None:
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

    def notified(self, conn: psycopg.Connection[Any], payload: str) -> bool:
        """Handle one notification; True when it was printed."""
        try:
            data = json.loads(payload)
            cid, list_id, created_at = data["community_id"], data["id"], data["created_at"]
        except (ValueError, KeyError, TypeError):
            click.echo(f"buzz-admin: ignoring a malformed notification: {payload[:200]}", err=True)
            return False
        if self.target is not None and cid != str(self.target.id):
            return False
        if self.target is not None and list_id == self.last_id:
            return False  # already printed by catch_up after a reconnect
        self.show(conn, cid, list_id, created_at)
        return True

    def catch_up(self, conn: psycopg.Connection[Any]) -> None:
        """After a reconnect: print the target's list if it changed while disconnected."""
        if self.target is None:
            click.echo(
                "buzz-admin: lists committed while disconnected were not printed; "
                "`buzz-admin verify` or `show-list` shows the live ones",
                err=True,
            )
            return
        event = live_list(conn, self.target.id)
        if event is not None and event.get("id") != self.last_id:
            self.show(
                conn, str(self.target.id), event["id"], event["created_at"], after_reconnect=True
            )


@click.command("watch")
@click.option("--count", type=click.IntRange(min=1), help="Stop after printing N lists.")
@click.option(
    "--timeout", type=click.FloatRange(min=0), metavar="SECONDS", help="Stop after SECONDS."
)
@click.option("--all", "all_", is_flag=True, help="Every community, even when RELAY_URL is set.")
@community_command
def watch(count: int | None, timeout: float | None, all_: bool) -> None:
    """Print each membership list as it commits (from NOTIFY buzz_membership): community,
    list id, created_at, member count; with --json one JSON object per line.

    Watches the community of --community or RELAY_URL, else (or with --all) every community.
    Reconnects with backoff when the connection drops, then prints the watched community's
    list if it changed meanwhile. Stops on Ctrl-C, after --count lists or --timeout seconds.
    Says "listening" on stderr each time it (re)starts listening.

    \b
    Example:
      buzz-admin -c relay.example.org watch
      buzz-admin watch --all --json | jq -c .
    """
    state = get_state()
    if all_ and state.community:
        raise Failure("give --community or --all, not both", BAD_INPUT)
    deadline = None if timeout is None else time.monotonic() + timeout
    conn = state.connect("buzz-admin watch")  # the first connection fails fast
    target = None
    if not all_ and state.selection() is not None:
        target = find_community(conn, state.selection(), from_relay_url=not state.community)
    watcher = _Watcher(target, state.json)
    backoff = 0.5
    reconnecting = False
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                if conn is None:
                    conn = state.connect("buzz-admin watch")
                if target is not None and not reconnecting and not watcher.printed:
                    # Before LISTEN: the list live now is not news. (catch_up compares with it.)
                    event = live_list(conn, target.id)
                    watcher.last_id = event.get("id") if isinstance(event, dict) else None
                conn.execute(f"LISTEN {CHANNEL}")
                if reconnecting:  # listening again first, so that nothing falls in between
                    watcher.catch_up(conn)
                    reconnecting = False
                    if count and watcher.printed >= count:
                        return
                what = target.label if target else "every community"
                click.echo(f"buzz-admin: listening for lists of {what}", err=True)
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
                        printed = watcher.notified(conn, note.payload)
                        if printed and count and watcher.printed >= count:
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
