"""buzz-admin invite create|list|claim|revoke, allowlist add|import, backfill."""

from __future__ import annotations

import datetime as dt
import sys
import uuid
from typing import Any

import click

from ..nip19 import pubkey_to_hex
from ..nip44 import Nip44Error
from .failures import BAD_INPUT, NOT_FOUND, OK, Failure
from .output import actor, echo_json, iso, npub, progress, table
from .params import DURATION, PUBKEY
from .state import community_command, get_state, write_command
from .writes import OPERATOR, Outcome, report, run_write

CLAIM = {
    "joined": Outcome(OK, "{who} joined with invite ({uses})"),
    "already_member": Outcome(OK, "{who} is already a member (no change; no use consumed)"),
    "expired": Outcome(BAD_INPUT, "the invite has expired"),
    "exhausted": Outcome(BAD_INPUT, "the invite has no use left ({uses})"),
    "invalid": Outcome(NOT_FOUND, "no invite of {host} has this code"),
    "banned": Outcome(BAD_INPUT, "{who} is banned from {host} (no use consumed)"),
}
REVOKE = {
    "revoked": Outcome(OK, "revoked invite {id}: its code no longer works"),
    "not_found": Outcome(NOT_FOUND, "{host} has no invite {id}"),
}
ALLOWLIST = {
    "added": Outcome(OK, "allowlisted {who}"),
    "already_listed": Outcome(OK, "{who} is already allowlisted (no change)"),
}
IMPORT_CHUNK = 1000


def register(main: click.Group) -> None:
    main.add_command(invite)
    main.add_command(allowlist)
    main.add_command(backfill)


@click.group()
def invite() -> None:
    """Mint, list, claim and revoke invite codes."""


@invite.command("create")
@click.option(
    "--max-uses",
    type=int,
    default=None,
    metavar="N",
    help="How many pubkeys may join with the code (1-10000; default 1).",
)
@click.option("--unlimited", is_flag=True, help="No limit on uses (until it expires).")
@click.option(
    "--ttl",
    type=DURATION,
    default="72h",
    show_default=True,
    help="How long the code works: 60s to 30d, e.g. 72h, 7d, 1h30m.",
)
@click.option(
    "--created-by",
    metavar="LABEL",
    default=OPERATOR,
    show_default=True,
    help="Who minted it: a pubkey or a short label.",
)
@click.option(
    "--code",
    "chosen",
    metavar="CODE",
    help="A code you choose (8-128 characters of A-Za-z0-9_-), for a shared link: it is "
    "also kept sealed to the relay key, so that `invite list --codes` and the relay's "
    "NIP-86 listclaims can show it. `--code -` reads it from stdin (out of the shell's history).",
)
@write_command
def invite_create(
    max_uses: int | None, unlimited: bool, ttl: dt.timedelta, created_by: str, chosen: str | None
) -> None:
    """Mint an invite code. A drawn code is printed this once: only its hash is stored. A
    code chosen with --code (a shared link) is kept sealed to the relay key as well.

    \b
    Example:
      buzz-admin -c relay.example.org invite create --max-uses 10 --ttl 7d
      buzz-admin invite create --code summer-team-2027 --max-uses 100 --ttl 30d
    """
    if unlimited and max_uses is not None:
        raise Failure("give --max-uses N or --unlimited, not both", BAD_INPUT)
    uses = None if unlimited else (1 if max_uses is None else max_uses)
    if chosen == "-":
        chosen = sys.stdin.readline().strip()
        if not chosen:
            raise Failure("--code - read no code from stdin", BAD_INPUT)
    state = get_state()
    target = state.resolve()
    # Sealed to the relay's own key: the database keeps only text that key alone opens.
    sealed = state.key().seal(chosen) if chosen is not None else None
    write = run_write(
        state,
        lambda tx: tx.create_relay_invite(
            target.id, created_by, uses, ttl, code=chosen, sealed=sealed
        )._asdict(),
    )
    # create_relay_invite answers (invite_id, code, expires_at): no outcome word of its own.
    invite_id, code, expires_at = (
        write.details.get("invite_id"),
        write.details.get("code"),
        write.details.get("expires_at"),
    )
    if state.json:
        echo_json(
            {
                "outcome": "created",
                "snapshot": None,
                "community": target.as_json(),
                "invite_id": str(invite_id),
                "code": code,
                "expires_at": iso(expires_at),
                "max_uses": uses,
                "sealed": sealed is not None,
                "exit_code": OK,
            }
        )
        return
    click.echo(f"invite {invite_id} for {target.label}")
    click.echo(f"code    {code}")
    click.echo(f"expires {iso(expires_at)}, uses {'unlimited' if uses is None else uses}")
    if sealed is None:
        click.echo("the code is shown this once: only its hash is stored", err=True)
    else:
        click.echo(
            "the code is kept sealed to the relay key: `buzz-admin invite list --codes` "
            "shows it again",
            err=True,
        )


@invite.command("list")
@click.option(
    "--codes",
    is_flag=True,
    help="Also show the code of each shared link (invite create --code), opened with the "
    "relay key. Codes go to stdout only.",
)
@community_command
def invite_list(codes: bool) -> None:
    """The community's invites, oldest first, expired and used-up ones included: id, who
    made it, when, expiry, uses, state, and whether its code is kept sealed (a shared link).
    Codes are not shown unless asked with --codes, which needs the relay key; a code sealed
    to an earlier relay key shows as "(sealed to another key)".

    \b
    Example:
      buzz-admin -c relay.example.org invite list
      buzz-admin invite list --codes --json | jq -r '.invites[].code // empty'
    """
    state = get_state()
    target = state.resolve()
    key = state.key() if codes else None
    rows = state.reader().relay_invites(target.id)
    now = dt.datetime.now(dt.UTC)
    invites: list[dict[str, Any]] = []
    for invite_id, created_by, created_at, expires_at, max_uses, use_count, sealed in rows:
        if expires_at <= now:
            condition = "expired"
        elif max_uses is not None and use_count >= max_uses:
            condition = "used up"
        else:
            condition = "live"
        item: dict[str, Any] = {
            "invite_id": str(invite_id),
            "created_by": created_by,
            "created_at": iso(created_at),
            "expires_at": iso(expires_at),
            "max_uses": max_uses,
            "use_count": use_count,
            "state": condition,
            "sealed": sealed is not None,
        }
        if key is not None:
            item["code"] = None
            if sealed is not None:
                try:
                    item["code"] = key.unseal(sealed)
                except Nip44Error:  # sealed before the relay key was rotated
                    item["sealed_to_another_key"] = True
        invites.append(item)
    if state.json:
        echo_json({"community": target.as_json(), "invites": invites})
        return

    def code_column(item: dict[str, Any]) -> str:
        if not item["sealed"]:
            return "-"  # only its hash is stored
        if key is None:
            return "sealed"
        return item["code"] or "(sealed to another key)"

    shown = [
        [
            item["invite_id"],
            actor(item["created_by"]),
            item["created_at"],
            item["expires_at"],
            f"{item['use_count']}/{'unlimited' if item['max_uses'] is None else item['max_uses']}",
            item["state"],
            code_column(item),
        ]
        for item in invites
    ]
    if shown:
        headers = ["ID", "CREATED BY", "CREATED", "EXPIRES", "USES", "STATE", "CODE"]
        for line in table(shown, headers):
            click.echo(line)
    live = sum(1 for item in invites if item["state"] == "live")
    click.echo(
        f"{len(invites)} invite{'s' if len(invites) != 1 else ''} of {target.label}, {live} live"
    )


@invite.command("claim")
@click.argument("code")
@click.argument("pubkey", type=PUBKEY)
@click.option("--policy-version", metavar="V", help="Record that PUBKEY accepted this policy.")
@write_command
def invite_claim(code: str, pubkey: str, policy_version: str | None) -> None:
    """PUBKEY joins as a member with an invite CODE (consuming one use).

    \b
    Example:
      buzz-admin invite claim 9f2c...e1 npub1...
    """
    state = get_state()
    target = state.resolve()
    write = run_write(
        state, lambda tx: tx.claim_relay_invite(target.id, code, pubkey, policy_version)
    )
    used = write.details.get("use_count")
    remaining = write.details.get("uses_remaining")
    if used is None:
        uses = ""
    elif remaining is None:
        uses = f"used {used} time{'s' if used != 1 else ''}, unlimited"
    else:
        uses = f"used {used} of {used + remaining}"
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=CLAIM,
        words={"who": npub(pubkey), "uses": uses, "host": target.label},
        extra={"pubkey": pubkey},
    )


@invite.command("revoke")
@click.argument("invite_id", metavar="ID")
@write_command
def invite_revoke(invite_id: str) -> None:
    """Revoke an invite by its id (printed by `invite create`): its code stops working.

    \b
    Example:
      buzz-admin invite revoke 1b4e28ba-2fa1-11d2-883f-0016d3cca427
    """
    try:
        iid = uuid.UUID(invite_id)
    except ValueError:
        raise Failure("an invite id is a UUID, as `invite create` printed it", BAD_INPUT) from None
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.revoke_relay_invite(target.id, iid))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=REVOKE,
        words={"id": iid, "host": target.label},
        extra={"invite_id": str(iid)},
    )


@click.group()
def allowlist() -> None:
    """The allowlist that `backfill` copies into a community's first members."""


@allowlist.command("add")
@click.argument("pubkey", type=PUBKEY)
@click.option("--note", help="A note kept with the entry (up to 1000 characters).")
@write_command
def allowlist_add(pubkey: str, note: str | None) -> None:
    """Put PUBKEY on the community's allowlist (not a membership change: no list).

    \b
    Example:
      buzz-admin allowlist add npub1... --note "early supporter"
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.allowlist_add(target.id, pubkey, note))
    report(
        state,
        target,
        write,
        outcome=write.outcome,
        table_=ALLOWLIST,
        words={"who": npub(pubkey)},
        extra={"pubkey": pubkey},
    )


def _parse_lines(lines: list[str]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(line number, hex pubkey) of every valid line; (line number, reason) of every other.

    Blank lines and lines starting with # are skipped.
    """
    valid: list[tuple[int, str]] = []
    invalid: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            valid.append((number, pubkey_to_hex(text)))
        except ValueError as exc:
            invalid.append((number, str(exc)))
    return valid, invalid


@allowlist.command("import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--note", help="A note kept with every entry added.")
@write_command
def allowlist_import(file: Any, note: str | None) -> None:
    """Allowlist every pubkey of FILE: one pubkey (hex or npub) per line; blank lines and
    lines starting with # are skipped. FILE - reads stdin.

    Valid lines are imported in transactions of 1000 lines; invalid lines are reported with
    their line numbers and make the exit code 1, after the valid ones are imported (fix the
    file and run it again: lines already listed change nothing).

    \b
    Example:
      buzz-admin -c relay.example.org allowlist import early-supporters.txt
    """
    state = get_state()
    lines = file.read().splitlines()
    valid, invalid = _parse_lines(lines)
    for number, reason in invalid:
        click.echo(f"buzz-admin: {file.name}:{number}: {reason}", err=True)
    target = state.resolve()
    counts = {"added": 0, "already_listed": 0}
    chunks = [valid[i : i + IMPORT_CHUNK] for i in range(0, len(valid), IMPORT_CHUNK)]
    done = 0
    m = state.membership() if chunks else None
    with progress(chunks, len(chunks), f"allowlisting {len(valid)} pubkeys") as bar:
        for chunk in bar:
            try:
                outcomes = run_write(
                    state,
                    lambda tx, chunk=chunk: tx.allowlist_add_many(
                        target.id, [pk for _, pk in chunk], note
                    ),
                    m,
                ).outcome
            except Exception as exc:
                _chunk_failed(exc, chunk, done, counts)
                raise
            for outcome in outcomes:
                counts[outcome] = counts.get(outcome, 0) + 1
            done += len(chunk)
    result = {
        "outcome": "imported",
        "snapshot": None,
        "community": target.as_json(),
        "added": counts["added"],
        "already_listed": counts["already_listed"],
        "invalid": [{"line": n, "reason": r} for n, r in invalid],
        "exit_code": BAD_INPUT if invalid else OK,
    }
    if state.json:
        echo_json(result)
    else:
        click.echo(
            f"allowlisted {counts['added']} pubkeys; {counts['already_listed']} already "
            f"listed (no change); {len(invalid)} invalid line{'s' if len(invalid) != 1 else ''}"
        )
    if invalid:
        if not state.json:
            click.echo(
                f"buzz-admin: {len(invalid)} invalid line(s) skipped "
                f"(line {', '.join(str(n) for n, _ in invalid[:20])}"
                f"{', ...' if len(invalid) > 20 else ''}); the valid lines were imported",
                err=True,
            )
        raise click.exceptions.Exit(BAD_INPUT)


def _chunk_failed(
    exc: BaseException, chunk: list[tuple[int, str]], done: int, counts: dict[str, int]
) -> None:
    """Say which lines were kept before a chunk failed (its own lines were rolled back)."""
    if done:
        get_state().kept = (
            f"the first {done} valid lines were imported and committed before the failure "
            f"({counts['added']} added, {counts['already_listed']} already listed); "
            f"nothing from line {chunk[0][0]} on was imported"
        )


@click.command("backfill")
@write_command
def backfill() -> None:
    """Copy the allowlist into the members (role member), when the community has no member
    but its owner: one list for all of them. 0 added means no change.

    \b
    Example:
      buzz-admin -c relay.example.org backfill
    """
    state = get_state()
    target = state.resolve()
    write = run_write(state, lambda tx: tx.backfill_from_allowlist(target.id))
    added = write.outcome
    message = (
        f"backfilled {added} member{'s' if added != 1 else ''} from the allowlist"
        if added
        else "backfilled nobody (no change): the community has members besides its owner, "
        "or its allowlist adds nobody"
    )
    report(state, target, write, outcome=added, message=message, extra={"added": added})
