"""A buzz-admin write: one transaction with its list, its outcome in words or JSON and its
exit code, and the confirmation asked first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click
import psycopg

from ..errors import (
    BuzzError,
)
from ..membership import Membership, MembershipTransaction, MembershipWrite
from .config import Community
from .failures import BAD_INPUT, OK, CommitUnknown, Failure
from .output import echo_json, list_line
from .state import State

# Who an operator's write names as its actor (an invite's creator, a ban's or an approval's
# author) unless told otherwise: a label, as SPEC section 3 allows for p_created_by.
OPERATOR = "buzz-admin"


@dataclass(frozen=True)
class Outcome:
    """How a word answered by the database is reported: exit code and message template."""

    code: int
    text: str


def run_write(
    state: State, call: Callable[[MembershipTransaction], Any], membership: Membership | None = None
) -> MembershipWrite:
    """One whole transaction: the write, its signed list, COMMIT (as Membership does).

    Tells a COMMIT whose connection was lost (outcome unknown: CommitUnknown) from every other
    failure (the transaction rolled back: nothing was kept).
    """
    state.write_command = True
    m = membership or state.membership()
    state.writing = True
    holder: list[MembershipTransaction] = []
    try:
        with m.transaction() as tx:
            holder.append(tx)
            answer = call(tx)
    except (BuzzError, psycopg.Error, KeyboardInterrupt) as exc:
        # Membership.transaction() sets tx.published once the lists are signed and inserted,
        # just before COMMIT: it tells a failing COMMIT from an earlier failure.
        at_commit = bool(holder) and holder[0].published is not None
        lost = m.conn.broken or m.conn.closed or isinstance(exc, KeyboardInterrupt)
        if at_commit and lost:
            raise CommitUnknown(exc) from exc
        raise
    state.writing = False
    state.committed += 1
    return MembershipWrite.of(answer, holder[0].published)


def report(
    state: State,
    community: Community | None,
    write: MembershipWrite | None,
    *,
    outcome: Any,
    table_: dict[Any, Outcome] | None = None,
    words: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    message: str | None = None,
    code: int | None = None,
) -> None:
    """Print a write's outcome in words (or JSON) and exit with its code."""
    if table_ is not None:
        spec = table_.get(outcome)
        if spec is None:  # a word this version does not know (it committed): say it as it is
            spec = Outcome(OK, f"outcome: {outcome}")
        code = spec.code if code is None else code
        message = spec.text.format(**(words or {}), outcome=outcome)
    code = OK if code is None else code
    snapshot = write.snapshot if write else None
    if state.json:
        obj: dict[str, Any] = {"outcome": outcome, "snapshot": snapshot}
        if community is not None:
            obj["community"] = community.as_json()
        if write is not None:
            obj.update({k: v for k, v in write.details.items() if k not in obj})
        obj.update(extra or {})
        obj["list_id"] = snapshot["id"] if snapshot else None
        obj["exit_code"] = code
        if code != OK:
            obj["changed"] = False
        echo_json(obj)
    elif code == OK:
        click.echo(message)
        if snapshot is not None:
            click.echo(list_line(snapshot))
    else:
        click.echo(f"buzz-admin: {message}; nothing was changed", err=True)
    if code != OK:
        raise click.exceptions.Exit(code)


def confirm(state: State, question: str, yes: bool) -> None:
    """Ask before something that cannot be undone; --yes answers for the operator."""
    if yes:
        return
    try:
        confirmed = click.confirm(question, default=False, err=True)
    except click.exceptions.Abort:  # no answer (stdin closed) or Ctrl-C
        confirmed = False
        click.echo(err=True)
    if not confirmed:
        raise Failure(
            "not confirmed, so nothing was changed (give --yes to skip the question)", BAD_INPUT
        )
