"""Database errors as Python exceptions: the one place that knows the SQLSTATEs.

Every SQLSTATE of the contract (docs/errors.md) has its class; callers catch the class, or
a family (`InvalidArgument`), never parse messages. The psycopg error stays attached as
`__cause__`, and the server's message, hint and SQLSTATE are kept on the exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg


class BuzzError(Exception):
    """An error raised by the membership database (or by this layer for it)."""

    sqlstate: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InvalidArgument(BuzzError):
    """An argument was refused before anything changed."""


class InvalidPubkey(InvalidArgument):
    sqlstate = "BZIPK"


class InvalidRole(InvalidArgument):
    sqlstate = "BZIRL"


class InvalidHost(InvalidArgument):
    sqlstate = "BZHST"


class InvalidInvite(InvalidArgument):
    sqlstate = "BZINV"


class InvalidParameter(InvalidArgument):
    """A label, policy version, note or limit out of range (PostgreSQL's 22023)."""

    sqlstate = "22023"


class TooManyValues(InvalidArgument):
    """More array elements than one call takes (54000)."""

    sqlstate = "54000"


class CommunityNotFound(BuzzError):
    sqlstate = "BZNCM"


class CommunityArchived(BuzzError):
    sqlstate = "BZARC"


class WrongIsolation(BuzzError):
    """Membership writes run under READ COMMITTED only."""

    sqlstate = "BZISO"


class ListTooFarAhead(BuzzError):
    """The list would run too far ahead of the clock: batch changes, or retry later."""

    sqlstate = "BZLAG"


class StaleSignatures(BuzzError):
    """The signatures do not match the events prepared last in the transaction."""

    sqlstate = "BZSTL"


class MalformedSignature(BuzzError):
    sqlstate = "BZSIG"


class UnsignedChange(BuzzError):
    """COMMIT refused: members changed without their signed list."""

    sqlstate = "BZUNS"


class RelayKeyMismatch(BuzzError):
    """The key is not the relay key the database has recorded."""

    sqlstate = "BZKEY"


class InviteQuotaExhausted(BuzzError):
    """The invite's creator has no invites left (or fewer than the uses it asked for)."""

    sqlstate = "BZQTA"


class DatabaseFailure(BuzzError):
    """Any other database error; nothing of the transaction was kept."""


class DatabaseUnreachable(DatabaseFailure):
    """The database could not be reached (no connection, or none in time): nothing was sent
    to it. A retry may succeed (`may_retry`)."""

    sqlstate = "08006"  # connection_failure


_BY_SQLSTATE: dict[str, type[BuzzError]] = {
    cls.sqlstate: cls
    for cls in (
        InvalidPubkey,
        InvalidRole,
        InvalidHost,
        InvalidInvite,
        InvalidParameter,
        TooManyValues,
        CommunityNotFound,
        CommunityArchived,
        WrongIsolation,
        ListTooFarAhead,
        StaleSignatures,
        MalformedSignature,
        UnsignedChange,
        RelayKeyMismatch,
        InviteQuotaExhausted,
    )
}


# Failures that a retry may cure: a lock or statement timeout, a serialization failure or a
# deadlock, a server shutting down, starting or out of connections (and class 08, below).
_RETRYABLE = frozenset(("55P03", "57014", "40001", "40P01", "57P01", "57P02", "57P03", "53300"))


def may_retry(exc: BuzzError) -> bool:
    """True for a refusal that a retry may cure (SPEC section 10): the lead bound (BZLAG), a
    lock timeout, the database unreachable. The caller answers 503 or `error: ...; try again`."""
    if isinstance(exc, ListTooFarAhead):
        return True
    if not isinstance(exc, DatabaseFailure):
        return False
    code = exc.sqlstate
    return code is None or code in _RETRYABLE or code.startswith("08")


def from_psycopg(exc: psycopg.Error) -> BuzzError:
    """The BuzzError for a psycopg error, keeping its SQLSTATE, message and hint."""
    diag = exc.diag
    cls = _BY_SQLSTATE.get(exc.sqlstate or "", DatabaseFailure)
    error = cls(diag.message_primary or str(exc), hint=diag.message_hint)
    error.sqlstate = exc.sqlstate
    return error


@contextmanager
def translated() -> Iterator[None]:
    """Raise psycopg errors inside the block as BuzzErrors, chained to the original."""
    try:
        yield
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc
