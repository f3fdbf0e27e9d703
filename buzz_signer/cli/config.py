"""Where buzz-admin (and buzz-relay) find the database and the relay key, and which
community a command acts on (--community, RELAY_URL)."""

from __future__ import annotations

import os
import uuid
import warnings
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import click
import psycopg

from ..errors import (
    BuzzError,
)
from ..keys import InvalidKey, RelayKey
from ..localdb import LocalCluster, LocalClusterError
from ..membership import Membership
from ..relay.urls import normalize_host
from .failures import BAD_INPUT, FAILURE, NOT_FOUND, Failure, first_line

LOCAL_DATABASE = "buzz"
APPLICATION_NAME = "buzz-admin"
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
    """RELAY_URL's host as the relay names it (relay/urls.py's normalize_host, the one rule):
    lower-cased, with its port unless it is the scheme's default, which a client's Host header
    leaves out. wss://Relay.Example.org:443/path -> relay.example.org; wss://h:8443 -> h:8443;
    a bare relay.example.org:7447 is taken as a host, its port kept."""
    text = relay_url.strip()
    parts = urlsplit(text if "://" in text else "//" + text)
    try:
        _ = parts.port
    except ValueError:
        raise Failure("RELAY_URL has an invalid port", BAD_INPUT) from None
    host = normalize_host(text)
    if host is None:
        raise Failure("RELAY_URL has no host; set it like wss://relay.example.org", BAD_INPUT)
    return host


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
        raise Failure(f"could not look up the community: {first_line(exc)}", FAILURE) from None
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
        raise Failure(f"could not look up the community: {first_line(exc)}", FAILURE) from None
    return Community(found, row[0] if row else chosen.lower(), row[1] if row else None)


def all_communities(conn: psycopg.Connection[Any]) -> list[Community]:
    """Every community, by host."""
    try:
        rows = Membership(conn, None).communities()
    except BuzzError as exc:
        raise Failure(f"could not list the communities: {first_line(exc)}", FAILURE) from None
    return [Community(c.community_id, c.host, c.archived_at is not None) for c in rows]
