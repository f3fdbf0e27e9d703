"""What the sync and async classes share: a transaction's published events, the connection
and the signer, and how a pipelined write begins."""

from __future__ import annotations

from typing import Any, TypeVar

import psycopg

from ..keys import RelayKey
from ..signer import RefusedToSign, Signer
from .results import Published

R = TypeVar("R")


class TransactionBase:
    """What a transaction published, once it has (just before its COMMIT)."""

    published: Published | None

    @property
    def events(self) -> tuple[dict[str, Any], ...]:
        """Every signed event of the transaction, once published."""
        return self.published.events if self.published else ()

    @property
    def lists(self) -> dict[str, dict[str, Any]]:
        """The signed list of each community that changed, once published."""
        return self.published.lists if self.published else {}


class MembershipBase:
    """What Membership and AsyncMembership share: the connection and the signer.

    Each binds the statements of `Writes` and `Reads` to its executors: `_write` runs a
    write path in a transaction that publishes, `_alone` one that does not, `_read` a read.
    """

    def __init__(self, conn: Any, key: RelayKey | None) -> None:
        """`key` None: a reader's (buzz-admin's reads, a buzz_reader role), whose every
        write that would publish is refused before it prepares."""
        self.conn = conn
        self._signer = Signer(key) if key is not None else None

    @property
    def signer(self) -> Signer:
        if self._signer is None:
            raise RefusedToSign("this Membership was made without a relay key: it only reads")
        return self._signer

    @signer.setter
    def signer(self, signer: Signer) -> None:
        """Sign with another key from the next write on (a rotation's new key)."""
        self._signer = signer


def begin_statement(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> str:
    """BEGIN with the connection's transaction characteristics, as psycopg's own would be."""
    words = ["BEGIN"]
    if conn.isolation_level is not None:
        words.append("ISOLATION LEVEL " + conn.isolation_level.name.replace("_", " "))
    if conn.read_only is not None:
        words.append("READ ONLY" if conn.read_only else "READ WRITE")
    if conn.deferrable is not None:
        words.append("DEFERRABLE" if conn.deferrable else "NOT DEFERRABLE")
    return " ".join(words)


# The statuses of a connection whose transaction is open (a failed one too).
IN_TRANSACTION = (psycopg.pq.TransactionStatus.INTRANS, psycopg.pq.TransactionStatus.INERROR)


def one_row(row: R | None) -> R:
    """The row a statement of the API answers: every one answers exactly one."""
    if row is None:
        raise psycopg.InterfaceError("the statement answered no row")
    return row
