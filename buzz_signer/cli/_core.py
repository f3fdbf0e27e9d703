"""What every buzz-admin command shares: options, exit codes, the community, the database,
the relay key, running a write as one transaction, and printing words or JSON.

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

import datetime as dt
import functools
import json
import os
import re
import sys
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import urlsplit

import click
import psycopg

from ..errors import (
    BuzzError,
    CommunityArchived,
    CommunityNotFound,
    InvalidArgument,
    InviteQuotaExhausted,
)
from ..keys import InvalidKey, RelayKey
from ..localdb import LocalCluster, LocalClusterError
from ..membership import Membership, MembershipTransaction, MembershipWrite
from ..nip19 import encode_npub, pubkey_to_hex
from ..signer import RefusedToSign

T = TypeVar("T")

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

LOCAL_DATABASE = "buzz"
APPLICATION_NAME = "buzz-admin"
# Who an operator's write names as its actor (an invite's creator, a ban's or an approval's
# author) unless told otherwise: a label, as SPEC section 3 allows for p_created_by.
OPERATOR = "buzz-admin"


# --------------------------------------------------------------------------- failures


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


# --------------------------------------------------------------------------- state


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
                f"could not connect to the database: {_first_line(exc)}",
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- configuration


LOCAL_ENV = "BUZZ_LOCAL"
NO_DATABASE = (
    "which database? Set DATABASE_URL (e.g. postgresql://buzz@db.example.org/buzz), or pass"
    " --local (or BUZZ_LOCAL=1) for a PostgreSQL of buzz's own under ./.buzz/"
)


def wants_local(flag: bool = False) -> bool:
    """--local, or BUZZ_LOCAL set to 1/true/yes."""
    return flag or os.environ.get(LOCAL_ENV, "").strip().lower() in ("1", "true", "yes")


def database_url(given: str | None = None, local: bool = False) -> str:
    """The database: `given` (--database-url), else DATABASE_URL; or, asked for with --local
    or BUZZ_LOCAL=1, the local cluster's 'buzz' database (started and created if need be).
    Never a database nobody asked for (SPEC section 5): neither is a usage error."""
    url = given or os.environ.get("DATABASE_URL", "").strip() or None
    if url is not None and local:
        raise Failure(
            "--local and a database URL both given; choose one (unset DATABASE_URL for"
            " --local)",
            BAD_INPUT,
        )
    if url is not None:
        return url
    if not local:
        raise Failure(NO_DATABASE, BAD_INPUT)
    try:
        cluster = LocalCluster().start()
        if not cluster.database_exists(LOCAL_DATABASE):
            cluster.create_database(LOCAL_DATABASE)
        return cluster.url(LOCAL_DATABASE)
    except LocalClusterError as exc:
        raise Failure(f"the local database did not start: {exc}", FAILURE) from None


def database_url_option(value: str | None, from_argv: bool = True) -> str | None:
    """--database-url, refused if it carries a password on the command line: an argv is
    visible to every user of the machine (ps); a password goes in DATABASE_URL or ~/.pgpass."""
    if value is None or not from_argv:
        return value
    try:
        has_password = psycopg.conninfo.conninfo_to_dict(value).get("password") is not None
    except psycopg.ProgrammingError as exc:
        raise click.BadParameter(f"not a PostgreSQL URL: {str(exc).splitlines()[0]}") from None
    if has_password:
        raise click.BadParameter(
            "holds a password, which every user of this machine could read in the process"
            " list; put the URL in DATABASE_URL, or the password in ~/.pgpass"
        )
    return value


def load_key(key_file: Path | None) -> RelayKey:
    """The relay key from a key file, else BUZZ_RELAY_SECRET_KEY; InvalidKey says what is wrong."""
    if key_file is None:
        return RelayKey.from_env()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            key = RelayKey.from_file(key_file)
        except OSError as exc:
            raise InvalidKey(f"cannot read key file {key_file}: {exc.strerror}") from None
    for w in caught:
        click.echo(f"buzz-admin: warning: {w.message}", err=True)
    return key


def host_from_relay_url(relay_url: str) -> str:
    """RELAY_URL's host as communities are keyed: lower-cased, with its port when it has one.

    wss://Relay.Example.org:443/path -> relay.example.org:443; wss://relay.example.org ->
    relay.example.org; a bare relay.example.org:7447 is taken as a host.
    """
    text = relay_url.strip()
    parts = urlsplit(text if "://" in text else "//" + text)
    host = parts.hostname
    try:
        port = parts.port
    except ValueError:
        raise Failure("RELAY_URL has an invalid port", BAD_INPUT) from None
    if not host:
        raise Failure(
            "RELAY_URL has no host; set it like wss://relay.example.org", BAD_INPUT
        ) from None
    return f"{host.lower()}:{port}" if port is not None else host.lower()


class Community(NamedTuple):
    id: uuid.UUID
    host: str | None
    archived: bool | None = None

    @property
    def label(self) -> str:
        return self.host or str(self.id)

    def as_json(self) -> dict[str, Any]:
        return {"id": str(self.id), "host": self.host}


def community_row(conn: psycopg.Connection[Any], cid: uuid.UUID) -> tuple[str, bool] | None:
    """(host, archived) of a community, None if there is none."""
    for c in Membership(conn, None).communities():
        if c.community_id == cid:
            return c.host, c.archived_at is not None
    return None


def find_community(
    conn: psycopg.Connection[Any], chosen: str, *, from_relay_url: bool
) -> Community:
    """The community named by an id or a host; Failure(2) when there is none."""
    try:
        cid = uuid.UUID(chosen)
    except ValueError:
        cid = None
    try:
        if cid is not None:
            row = community_row(conn, cid)
            if row is None:
                raise Failure(f"no community has id {cid}", NOT_FOUND)
            return Community(cid, row[0], row[1])
        found = Membership(conn, None).community_id(chosen)
    except BuzzError as exc:
        raise Failure(f"could not look up the community: {_first_line(exc)}", FAILURE) from None
    if found is None:
        where = f"RELAY_URL's host {chosen}" if from_relay_url else f"host {chosen}"
        raise Failure(
            f"no community is mapped to {where}",
            NOT_FOUND,
            hint="`buzz-admin community list` shows the communities; "
            "`buzz-admin community create HOST --owner PUBKEY` makes one",
        )
    try:
        row = community_row(conn, found)
    except BuzzError as exc:
        raise Failure(f"could not look up the community: {_first_line(exc)}", FAILURE) from None
    return Community(found, row[0] if row else chosen.lower(), row[1] if row else None)


def all_communities(conn: psycopg.Connection[Any]) -> list[Community]:
    """Every community, by host."""
    try:
        rows = Membership(conn, None).communities()
    except BuzzError as exc:
        raise Failure(f"could not list the communities: {_first_line(exc)}", FAILURE) from None
    return [Community(c.community_id, c.host, c.archived_at is not None) for c in rows]


# --------------------------------------------------------------------------- parameters


class PubkeyType(click.ParamType):
    """A public key given as 64 hex characters (any case) or an npub; becomes lowercase hex."""

    name = "PUBKEY"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return pubkey_to_hex(value)
        except (ValueError, TypeError) as exc:
            # The message never echoes the value: it might be a secret key pasted by mistake.
            self.fail(str(exc), param, ctx)


PUBKEY = PubkeyType()

_DURATION = re.compile(r"(\d+)\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class DurationType(click.ParamType):
    """72h, 30m, 7d, 1h30m, or a number of seconds."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, dt.timedelta):
            return value
        text = str(value).strip().lower()
        if text.isdigit():
            return dt.timedelta(seconds=int(text))
        if not text or _DURATION.sub("", text).strip():
            self.fail(f"{value!r} is not a duration like 72h, 30m, 7d or 1h30m", param, ctx)
        seconds = sum(int(n) * _UNITS[u] for n, u in _DURATION.findall(text))
        return dt.timedelta(seconds=seconds)


DURATION = DurationType()


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


# --------------------------------------------------------------------------- output


def npub(pubkey: str) -> str:
    try:
        return encode_npub(pubkey)
    except ValueError:
        return pubkey


def is_pubkey(text: str) -> bool:
    """64 lowercase hex characters: a pubkey as the database stores it."""
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def actor(label: str | None, *, as_hex: bool = False) -> str:
    """Who did something (an added_by, created_by, banned_by): a pubkey as its npub (or hex),
    a label such as 'buzz-admin' or 'invite' as it is."""
    if label is None:
        return "-"
    return npub(label) if is_pubkey(label) and not as_hex else label


def when(created_at: int | None) -> str:
    if created_at is None:
        return "-"
    return dt.datetime.fromtimestamp(created_at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso(ts: dt.datetime | None) -> str | None:
    if ts is None:
        return None
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def member_count(event: dict[str, Any]) -> int:
    return sum(1 for t in event.get("tags", ()) if t and t[0] == "member")


def list_line(event: dict[str, Any]) -> str:
    n = member_count(event)
    return (
        f"list {event['id']} published (created_at {when(event['created_at'])}, "
        f"{n} member{'s' if n != 1 else ''})"
    )


def _default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return iso(value)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(obj: Any, *, indent: int | None = None) -> str:
    return json.dumps(obj, default=_default, ensure_ascii=False, indent=indent)


def echo_json(obj: Any) -> None:
    click.echo(dumps(obj))


def table(rows: list[list[str]], headers: list[str]) -> Iterator[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=False)]
    for row in [headers, *rows]:
        yield "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()


def progress(items: Iterable[T], length: int, label: str) -> Any:
    """A progress bar on stderr when stderr is a terminal; else the items as they are."""
    if sys.stderr.isatty():
        return click.progressbar(items, length=length, label=label, file=sys.stderr)
    return _NoBar(items)


class _NoBar:
    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items

    def __enter__(self) -> Iterable[Any]:
        return self._items

    def __exit__(self, *exc: object) -> None:
        return None


# --------------------------------------------------------------------------- writing


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


# --------------------------------------------------------------------------- errors


def failure_from(exc: BaseException, state: State) -> Failure:
    """The Failure (message, hint, exit code) for an exception a command let through."""
    if isinstance(exc, Failure):
        return exc
    if isinstance(exc, CommitUnknown):
        return Failure(
            f"the connection was lost during COMMIT ({_first_line(exc.cause)}): the change "
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
            f"database error: {_first_line(exc)}",
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
