"""What every buzz-admin command shares: the options given before or after the command,
and what a run has opened (its connection, the relay key, the community)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
import psycopg

from ..keys import RelayKey
from ..membership import Membership
from .config import (
    APPLICATION_NAME,
    Community,
    database_url,
    database_url_option,
    find_community,
    host_from_relay_url,
    load_key,
    wants_local,
)
from .failures import BAD_INPUT, FAILURE, Failure, first_line

T = TypeVar("T")

@dataclass
class State:
    """Options shared by every command, and what they have opened."""

    community: str | None = None
    key_file: Path | None = None
    json: bool = False
    database_url: str | None = None  # --database-url
    local: bool = False  # --local
    # Set by commands that write: failures then say that nothing was kept...
    write_command: bool = False
    # ...and by run_write once a transaction is under way: it was rolled back.
    writing: bool = False
    # Transactions this run committed; and, for commands of several transactions that fail
    # part way, what of their work was kept.
    committed: int = 0
    kept: str | None = None
    _conn: psycopg.Connection[Any] | None = None
    _key: RelayKey | None = None
    _resolved: Community | None = None

    # The connection ------------------------------------------------------------

    def connect(self, application_name: str = APPLICATION_NAME) -> psycopg.Connection[Any]:
        """A new autocommit connection to the database (not shared)."""
        url = database_url(self.database_url, wants_local(self.local))
        try:
            return psycopg.connect(url, autocommit=True, application_name=application_name)
        except psycopg.Error as exc:
            raise Failure(
                f"could not connect to the database: {first_line(exc)}",
                FAILURE,
                hint="check DATABASE_URL (or --database-url, or --local)",
            ) from None

    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            self._conn = self.connect()
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # The relay key ---------------------------------------------------------------

    def key(self) -> RelayKey:
        """The relay key: --key-file, else BUZZ_RELAY_SECRET_KEY. Never from an argument value."""
        if self._key is None:
            self._key = load_key(self.key_file)
        return self._key

    def optional_key(self) -> RelayKey | None:
        """The relay key when one is configured, else None (for reads that can use it)."""
        if self.key_file is None and not os.environ.get("BUZZ_RELAY_SECRET_KEY", "").strip():
            return None
        return self.key()

    def membership(self) -> Membership:
        key = self.key()
        return Membership(self.conn, key)

    def reader(self) -> Membership:
        """The API for reads, which need no relay key (none is read)."""
        return Membership(self.conn, None)

    # The community --------------------------------------------------------------

    def selection(self) -> str | None:
        """What names the community: --community, else RELAY_URL's host; None when neither."""
        if self.community:
            return self.community
        relay_url = os.environ.get("RELAY_URL", "").strip()
        if relay_url:
            return host_from_relay_url(relay_url)
        return None

    def resolve(self) -> Community:
        """The community the command acts on (from --community or RELAY_URL), checked to exist."""
        if self._resolved is None:
            chosen = self.selection()
            if chosen is None:
                raise Failure(
                    "which community? Give --community ID|HOST, or set RELAY_URL "
                    "(e.g. wss://relay.example.org)",
                    BAD_INPUT,
                )
            self._resolved = find_community(self.conn, chosen, from_relay_url=not self.community)
        return self._resolved


def get_state() -> State:
    return click.get_current_context().ensure_object(State)


def set_shared(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of the options accepted both before and after the subcommand."""
    if value is None or value is False:
        return value
    state = ctx.ensure_object(State)
    name = param.name
    if name in ("json", "local"):
        setattr(state, name, True)
        return value
    if name == "database_url":
        value = database_url_option(value)
    current = getattr(state, name)
    if current is not None and current != value:
        raise click.BadParameter(
            f"given twice with different values ({current} and {value})", ctx, param
        )
    setattr(state, name, value)
    return value


def community_option(f: Callable[..., T]) -> Callable[..., T]:
    return click.option(
        "--community",
        "-c",
        metavar="ID|HOST",
        expose_value=False,
        callback=set_shared,
        help="The community, by id or host (default: RELAY_URL's host).",
    )(f)


def json_option(f: Callable[..., T]) -> Callable[..., T]:
    return click.option(
        "--json",
        "json",
        is_flag=True,
        expose_value=False,
        callback=set_shared,
        help="Print a JSON object instead of words.",
    )(f)


def key_option(f: Callable[..., T]) -> Callable[..., T]:
    return click.option(
        "--key-file",
        type=click.Path(dir_okay=False, path_type=Path),
        expose_value=False,
        callback=set_shared,
        help="File holding the relay's secret key (default: BUZZ_RELAY_SECRET_KEY).",
    )(f)


def community_command(f: Callable[..., T]) -> Callable[..., T]:
    """--community, --json and --key-file (unused by most reads: accepted so that the shared
    options work after every command), for commands that read one community."""
    return community_option(json_option(key_option(f)))


def marks_write(f: Callable[..., T]) -> Callable[..., T]:
    """The command writes: its failures say whether anything was changed."""

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> T:
        get_state().write_command = True
        return f(*args, **kwargs)

    return run


def write_command(f: Callable[..., T]) -> Callable[..., T]:
    """--community, --json and --key-file, for commands that write and sign."""
    return community_option(json_option(key_option(marks_write(f))))
