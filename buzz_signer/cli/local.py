"""buzz-admin keygen, migrate, db start|stop|status."""

from __future__ import annotations

import os
from pathlib import Path

import click
import psycopg

from .. import migrate as migrations
from ..keys import RelayKey
from ..localdb import LocalCluster, LocalClusterError
from .config import LOCAL_DATABASE, database_url, wants_local
from .failures import BAD_INPUT, FAILURE, Failure
from .output import echo_json
from .state import get_state, json_option


def register(main: click.Group) -> None:
    main.add_command(keygen)
    main.add_command(migrate)
    main.add_command(db)


@click.command()
@json_option
def migrate() -> None:
    """Build or upgrade the database: migrations, then every function. Run as a superuser.

    \b
    Example:
      DATABASE_URL=postgresql://postgres@localhost/buzz buzz-admin migrate
    """
    state = get_state()
    url = database_url(state.database_url, wants_local(state.local))
    try:
        before, functions_before = migrations.current_revision(url)
    except psycopg.Error as exc:
        raise Failure(
            f"could not connect to the database: {str(exc).strip().splitlines()[0]}", FAILURE
        ) from None
    state.writing = True
    try:
        # At the newest revision too: the functions are applied again (a newer package may
        # have changed them without a migration).
        migrations.upgrade(url)
        after, functions_after = migrations.current_revision(url)
    except Exception as exc:  # noqa: BLE001 -- alembic raises SQLAlchemy's own classes
        raise Failure(_migration_failure(exc), FAILURE) from None
    if before != after:
        outcome, words = "migrated", f"{before or 'empty'} -> {after}"
    elif functions_before != functions_after:
        outcome, words = "functions_updated", f"at {after}, functions updated"
    else:
        outcome, words = "unchanged", f"at {after}, nothing to do"
    if state.json:
        echo_json({"outcome": outcome, "from": before, "to": after, "exit_code": 0})
    else:
        click.echo(words)


def _migration_failure(exc: Exception) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    sqlstate = getattr(getattr(exc, "orig", exc), "sqlstate", None)
    if sqlstate in ("42501", "42P17") or "must be superuser" in text or "permission denied" in text:
        return (
            f"migration failed: {first}; migrations need a superuser (they create roles):"
            " run buzz-admin migrate as one, e.g. DATABASE_URL=postgresql://postgres@host/db"
        )
    return f"migration failed: {first}"


@click.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--show-secret", is_flag=True, help="Also print the secret key (hex and nsec).")
@json_option
def keygen(path: Path, show_secret: bool) -> None:
    """Create a new relay key in PATH (mode 0600, never overwritten) and print its public key.

    The secret is written to the file only; --show-secret also prints it.

    \b
    Example:
      buzz-admin keygen /etc/buzz/relay.key
      BUZZ_RELAY_SECRET_KEY="$(cat /etc/buzz/relay.key)" buzz-admin ...
    """
    state = get_state()
    key = RelayKey.generate()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise Failure(f"{path} exists; not overwriting a key", BAD_INPUT) from None
    except OSError as exc:
        raise Failure(f"cannot create {path}: {exc.strerror}", BAD_INPUT) from None
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(key.secret_hex() + "\n")
    if state.json:
        obj = {"path": str(path), "pubkey": key.pubkey, "npub": key.npub}
        if show_secret:
            obj.update(secret=key.secret_hex(), nsec=key.nsec())
        echo_json(obj)
        return
    click.echo(f"pubkey {key.pubkey}")
    click.echo(f"npub   {key.npub}")
    if show_secret:
        click.echo(f"secret {key.secret_hex()}")
        click.echo(f"nsec   {key.nsec()}")
    click.echo(f"secret key written to {path} (mode 0600)", err=True)


@click.group()
def db() -> None:
    """The local PostgreSQL cluster under .buzz/ (what --local and BUZZ_LOCAL=1 use)."""


def _cluster_call(action):  # type: ignore[no-untyped-def]
    try:
        return action()
    except LocalClusterError as exc:
        raise Failure(f"local database: {exc}", FAILURE) from None


@db.command("start")
@json_option
def db_start() -> None:
    """Start the local cluster (created on first use) and print its URL.

    \b
    Example:
      buzz-admin db start
    """
    url = _cluster_call(lambda: LocalCluster().start().url(LOCAL_DATABASE))
    if get_state().json:
        echo_json({"running": True, "url": url})
    else:
        click.echo(url)


@db.command("stop")
@json_option
def db_stop() -> None:
    """Stop the local cluster.

    \b
    Example:
      buzz-admin db stop
    """
    cluster = LocalCluster()
    was_running = cluster.is_running()
    _cluster_call(cluster.stop)
    if get_state().json:
        echo_json({"running": False, "was_running": was_running})
    else:
        click.echo("local database stopped" if was_running else "local database was not running")


@db.command("status")
@json_option
def db_status() -> None:
    """Say whether the local cluster runs; exit 1 when it does not.

    \b
    Example:
      buzz-admin db status
    """
    cluster = LocalCluster()
    running = cluster.is_running()
    if get_state().json:
        echo_json(
            {"running": running, "url": cluster.url(LOCAL_DATABASE), "status": cluster.status()}
        )
    else:
        click.echo(cluster.status())
    if not running:
        raise click.exceptions.Exit(1)
