"""How a buzz-admin run fails: its exit code, its message (with --json, an object too), and
whether anything was changed.

Exit codes (docs/cli.md has the table of every outcome):

    0  done, or no change was needed
    1  bad input (including a request the community's state refuses as given, such as a
       banned pubkey's)
    2  not found (community, member, invite, owner, list, role, ban, join request)
    3  refused because the target is the owner
    4  role mismatch
    5  database or signing failure (and `verify` finding a wrong list)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
import psycopg

from ..errors import (
    BuzzError,
    CommunityArchived,
    CommunityNotFound,
    InvalidArgument,
    InviteQuotaExhausted,
)
from ..keys import InvalidKey
from ..signer import RefusedToSign
from .output import echo_json

if TYPE_CHECKING:
    from .state import State

OK = 0
BAD_INPUT = 1
NOT_FOUND = 2
IS_OWNER = 3
ROLE_MISMATCH = 4
FAILURE = 5

EXIT_CODES_HELP = """\b
Exit codes:
  0  done, or no change was needed
  1  bad input (also: archived community, host taken, owner limit
     reached, invite expired or exhausted, banned pubkey, no invites
     left)
  2  not found (community, member, invite code, owner, live list,
     role, ban, join request)
  3  refused because the target is the owner
  4  role mismatch (--if-role, --expected-owner)
  5  database or signing failure; `verify` found a wrong list or
     role event"""

class Failure(Exception):
    """A run that ends with a message on stderr (and with --json an object on stdout) and a
    non-zero exit code. show_failure adds whether anything was changed."""

    def __init__(
        self,
        message: str,
        code: int,
        *,
        hint: str | None = None,
        sqlstate: str | None = None,
        outcome: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint
        self.sqlstate = sqlstate
        self.outcome = outcome


class CommitUnknown(Exception):
    """The connection was lost while COMMIT was under way: the write may or may not be kept."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def exit_code_for(exc: BaseException) -> int:
    """The exit code of an exception raised by the membership layer."""
    if isinstance(exc, InvalidArgument | InvalidKey):
        return BAD_INPUT
    if isinstance(exc, CommunityNotFound):
        return NOT_FOUND
    if isinstance(exc, CommunityArchived | InviteQuotaExhausted):
        return BAD_INPUT
    return FAILURE


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# The failure of a run, from what was raised


def failure_from(exc: BaseException, state: State) -> Failure:
    """The Failure (message, hint, exit code) for an exception a command let through."""
    if isinstance(exc, Failure):
        return exc
    if isinstance(exc, CommitUnknown):
        return Failure(
            f"the connection was lost during COMMIT ({first_line(exc.cause)}): the change "
            "may or may not have been kept",
            FAILURE,
            hint="run `buzz-admin show-list` or `buzz-admin verify` to see what is live",
            outcome="unknown",
        )
    if isinstance(exc, BuzzError):
        hint = exc.hint
        if isinstance(exc, CommunityArchived):
            hint = "`buzz-admin community unarchive` first, if the community should change"
        return Failure(str(exc), exit_code_for(exc), hint=hint, sqlstate=exc.sqlstate)
    if isinstance(exc, RefusedToSign):
        return Failure(f"refused to sign: {exc}", FAILURE)
    if isinstance(exc, InvalidKey):
        return Failure(f"relay key: {exc}", BAD_INPUT)
    if isinstance(exc, psycopg.Error):
        return Failure(
            f"database error: {first_line(exc)}",
            FAILURE,
            sqlstate=getattr(exc, "sqlstate", None),
        )
    raise exc


def show_failure(failure: Failure, state: State) -> None:
    """stderr: the message, hint and SQLSTATE, and whether anything was kept; with --json the
    same as an object on stdout."""
    unknown = failure.outcome == "unknown"
    changed: Any = "n/a"
    if unknown:
        changed = "unknown"
    elif state.writing or state.write_command:
        changed = False
    lines = [f"buzz-admin: error: {failure.message}"]
    if failure.sqlstate:
        lines[0] += f" [{failure.sqlstate}]"
    if failure.hint:
        lines.append(f"  hint: {failure.hint}")
    if changed is False and state.kept:
        changed = "partly"
        lines.append(f"the failing transaction was rolled back; {state.kept}")
    elif changed is False and state.committed and not state.writing:
        changed = True  # the write committed; what failed came after it
        lines.append("the write itself was committed: `buzz-admin show-list` shows the list")
    elif changed is False and state.writing:
        lines.append("nothing was changed (the transaction was rolled back)")
    elif changed is False and "nothing was changed" not in failure.message:
        lines.append("nothing was changed")
    click.echo("\n".join(lines), err=True)
    if state.json:
        echo_json(
            {
                "outcome": failure.outcome,
                "snapshot": None,
                "error": {
                    "message": failure.message,
                    "hint": failure.hint,
                    "sqlstate": failure.sqlstate,
                },
                "exit_code": failure.code,
                "changed": changed,
                **({"kept": state.kept} if state.kept else {}),
            }
        )
