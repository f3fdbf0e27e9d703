"""buzz-admin: the operator's command line.

The database comes from DATABASE_URL, else the project's local cluster (database 'buzz'),
which the tool starts itself. The relay key comes from BUZZ_RELAY_SECRET_KEY or --key-file,
never from an argument value, and is never printed unless asked (keygen --show-secret).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import migrate as migrations
from .keys import RelayKey
from .localdb import LocalCluster, LocalClusterError

LOCAL_DATABASE = "buzz"


def database_url() -> str:
    """DATABASE_URL, or the local cluster's 'buzz' database (started and created if needed)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    try:
        cluster = LocalCluster().start()
        if not cluster.database_exists(LOCAL_DATABASE):
            cluster.create_database(LOCAL_DATABASE)
        return cluster.url(LOCAL_DATABASE)
    except LocalClusterError as exc:
        raise click.ClickException(f"the local database did not start: {exc}") from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Operate buzz membership: NIP-43 relay membership lists kept by PostgreSQL."""


@main.command()
def migrate() -> None:
    """Build or upgrade the database: migrations, then every function.

    Example: DATABASE_URL=postgresql://postgres@localhost/buzz buzz-admin migrate
    """
    migrations.upgrade(database_url())
    click.echo("database is at the newest revision")


@main.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--show-secret", is_flag=True, help="Also print the secret key (hex and nsec).")
def keygen(path: Path, show_secret: bool) -> None:
    """Create a new relay key in PATH (mode 0600) and print its public key.

    Example: buzz-admin keygen /etc/buzz/relay.key
    """
    key = RelayKey.generate()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise click.ClickException(f"{path} exists; not overwriting a key") from None
    with os.fdopen(fd, "w") as f:
        f.write(key.secret_hex() + "\n")
    click.echo(f"pubkey {key.pubkey}")
    click.echo(f"npub   {key.npub}")
    if show_secret:
        click.echo(f"secret {key.secret_hex()}")
        click.echo(f"nsec   {key.nsec()}")


@main.group()
def db() -> None:
    """The local PostgreSQL cluster under .buzz/ (used when DATABASE_URL is not set)."""


@db.command("start")
def db_start() -> None:
    """Start the local cluster (created on first use) and print its URL."""
    click.echo(LocalCluster().start().url(LOCAL_DATABASE))


@db.command("stop")
def db_stop() -> None:
    """Stop the local cluster."""
    LocalCluster().stop()


@db.command("status")
def db_status() -> None:
    """Say whether the local cluster runs; exit 1 when it does not."""
    cluster = LocalCluster()
    click.echo(cluster.status())
    sys.exit(0 if cluster.is_running() else 1)


if __name__ == "__main__":
    main()
