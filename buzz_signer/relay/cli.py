"""buzz-relay: the relay front that Nostr clients talk to for membership (docs/relay.md).

The database comes from --database-url or DATABASE_URL, or with --local (BUZZ_LOCAL=1) from
the local cluster, as for buzz-admin; with neither it exits 2 and starts nothing. The relay
key comes from BUZZ_RELAY_SECRET_KEY or --key-file, never from an argument value. Every flag
may also come from BUZZ_RELAY_<FLAG> (`--max-joins` from BUZZ_RELAY_MAX_JOINS), the flag
winning.
"""

from __future__ import annotations

import errno
import logging
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from ..cli.config import database_url as choose_database
from ..cli.config import database_url_option, load_key, wants_local
from ..cli.failures import BAD_INPUT, Failure
from ..keys import InvalidKey
from .limits import DEFAULT_LIMITS, Limits
from .logs import configure as configure_logs
from .moderation import IPNetwork, parse_network
from .nip86_params import MAX_INVITE_USES, TTL_SECONDS
from .server import RelayConfig, run
from .urls import RelayUrl, public_urls
from .workers import address_in_use, raise_open_files, supervise

__all__ = ["main"]

# The most a window counted in the database may hold (buzz.take_rate's p_limit).
SHARED_WINDOW_MAX = 1000


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:7447)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _contact(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > 500 or not value.isprintable():
        raise click.BadParameter("a contact is 1 to 500 printable characters (a URL or address)")
    return value


def _trusted_proxies(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[IPNetwork, ...]:
    """Each --trusted-proxy value: addresses or networks, separated by commas or spaces."""
    proxies = []
    for value in values:
        for item in value.replace(",", " ").split():
            try:
                proxies.append(parse_network(item))
            except ValueError:
                raise click.BadParameter(
                    f"{item!r} is not an IPv4 or IPv6 address, or a network in CIDR notation"
                    " (e.g. 10.0.0.0/8) with no bit set beyond its mask"
                ) from None
    return tuple(proxies)


def _public_urls(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[RelayUrl, ...]:
    """Each --public-url value: URLs separated by commas or spaces (as BUZZ_RELAY_PUBLIC_URL)."""
    try:
        return public_urls(item for value in values for item in value.replace(",", " ").split())
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _limit_option(name: str, help_text: str, maximum: int | None = None):
    default = getattr(DEFAULT_LIMITS, name)
    return click.option(
        "--" + name.replace("_", "-"),
        name,
        type=click.IntRange(min=1, max=maximum),
        default=default,
        show_default=True,
        help=help_text,
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--listen", default="127.0.0.1:7447", show_default=True, metavar="HOST:PORT")
@click.option(
    "--community",
    metavar="ID|HOST",
    help="Serve this one community whatever the Host header says (default: by Host).",
)
@click.option(
    "--public-url",
    "public",
    multiple=True,
    metavar="URL",
    envvar="BUZZ_RELAY_PUBLIC_URL",
    callback=_public_urls,
    help="The URL clients use (wss://relay.example.org; repeat, or separate by commas): AUTH"
    " and NIP-98 must name one of these. Without it, the Host header names the relay, and"
    " with --community only that community's host does.",
)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File holding the relay's secret key (default: BUZZ_RELAY_SECRET_KEY).",
)
@click.option(
    "--database-url",
    metavar="URL",
    callback=lambda ctx, param, value: database_url_option(
        value, from_argv=ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE
    ),
    help="The database (default: DATABASE_URL); one with a password is refused here.",
)
@click.option(
    "--local",
    is_flag=True,
    help="Use a PostgreSQL of buzz's own under ./.buzz/ (started if need be; BUZZ_LOCAL=1).",
)
@click.option(
    "--pool-size",
    type=click.IntRange(min=1, max=1000),
    default=10,
    show_default=True,
    help="Database connections for requests (one more listens).",
)
@_limit_option("max_message_bytes", "Largest client message answered; larger gets NOTICE.")
@_limit_option("max_subscriptions", "Open subscriptions per connection.")
@_limit_option("max_filters", "Filters per REQ.")
@_limit_option("max_limit", "Most stored events answered per filter.")
@_limit_option("max_connections_per_ip", "Websocket connections from one address.")
@_limit_option("auth_per_minute", "AUTH messages per connection per minute.")
@_limit_option("invites_per_hour", "Invites minted per pubkey per hour.", SHARED_WINDOW_MAX)
@_limit_option(
    "max_failed_claims",
    "Failed claims per address and per pubkey in 10 minutes; then claims are refused.",
    SHARED_WINDOW_MAX,
)
@_limit_option(
    "max_joins",
    "Joins and join requests that succeed, per address in 10 minutes, across processes.",
    SHARED_WINDOW_MAX,
)
@_limit_option("max_joins_per_pubkey", "... and per pubkey.", SHARED_WINDOW_MAX)
@_limit_option("max_queued_messages", "Messages queued for a slow client before closing it.")
@_limit_option(
    "max_queued_bytes",
    "Bytes a client has been sent and not read (held by this process) before closing it.",
)
@click.option(
    "--upstream",
    metavar="ws://HOST:PORT",
    help="Make that relay members-only: pass it every message that is not NIP-42/43.",
)
@click.option(
    "--read",
    type=click.Choice(["members", "anyone"]),
    default="members",
    show_default=True,
    help="With --upstream: who may read the upstream's events.",
)
@click.option(
    "--contact",
    metavar="URL",
    callback=_contact,
    help="NIP-11 contact: how to reach a human (mailto:, https:, ...).",
)
@click.option(
    "--claim-max-uses",
    type=click.IntRange(1, MAX_INVITE_USES),
    default=100,
    show_default=True,
    help="Uses of a NIP-86 createclaim invite when the call gives none.",
)
@click.option(
    "--claim-ttl",
    type=click.IntRange(*TTL_SECONDS),
    default=30 * 24 * 3600,
    show_default=True,
    metavar="SECONDS",
    help="Lifetime of a NIP-86 createclaim invite when the call gives none.",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    metavar="ADDR",
    callback=_trusted_proxies,
    help="A reverse proxy (address or CIDR network; repeat, or separate by commas) whose"
    " X-Forwarded-For names the client: blocks and per-address bounds apply to that.",
)
@click.option(
    "--no-profiles",
    is_flag=True,
    help="Keep and serve no member's own profile (kind 0): for a community whose members'"
    " names are private.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes sharing the port (SO_REUSEPORT), kept running by this one;"
    " 1: this process serves.",
)
@click.option(
    "--reuse-port",
    is_flag=True,
    help="Share the port with other buzz-relay processes started with it (a rolling"
    " restart); without it, a port in use is an error.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
    help="info: a line per HTTP request, websocket connection and membership write.",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one object a line (time, level, logger, message, and fields such as the"
    " client's address and a SQLSTATE).",
)
@click.version_option(package_name="buzz-membership", prog_name="buzz-relay")
def main(
    listen: str,
    community: str | None,
    public: tuple[RelayUrl, ...],
    key_file: Path | None,
    database_url: str | None,
    local: bool,
    pool_size: int,
    upstream: str | None,
    read: str,
    contact: str | None,
    claim_max_uses: int,
    claim_ttl: int,
    trusted_proxies: tuple[IPNetwork, ...],
    no_profiles: bool,
    workers: int,
    reuse_port: bool,
    log_level: str,
    log_format: str,
    **limits: int,
) -> None:
    """Serve NIP-01/11/42/43/70 for every community of the database (SPEC section 7).

    \b
    Example:
      DATABASE_URL=postgresql://buzz@db/buzz BUZZ_RELAY_SECRET_KEY=... \\
        buzz-relay --listen 0.0.0.0:7447
      buzz-relay --community relay.example.org --key-file /etc/buzz/relay.key
      buzz-relay --upstream ws://127.0.0.1:7777     # a members-only strfry/khatru
      buzz-relay --workers 4                        # four processes on one port

    SIGTERM closes every connection cleanly (NOTICE, CLOSED, close 1001) after the writes
    under way have answered, and exits 0 within 15 s.
    """
    host, port = _listen(listen)
    if upstream is not None and not upstream.startswith(("ws://", "wss://")):
        click.echo("buzz-relay: --upstream must be a ws:// or wss:// URL", err=True)
        sys.exit(2)
    configure_logs(log_level, log_format)
    try:
        url = choose_database(database_url, wants_local(local))
        key = load_key(key_file)
    except (InvalidKey, Failure) as exc:
        click.echo(f"buzz-relay: {exc}", err=True)
        # Usage errors exit 2, as click's own do.
        sys.exit(2 if isinstance(exc, Failure) and exc.code == BAD_INPUT else 1)
    config = RelayConfig(
        database_url=url,
        key=key,
        key_file=key_file,
        community=community,
        public_urls=public,
        limits=Limits(**limits),
        pool_size=pool_size,
        upstream=upstream,
        read_anyone=read == "anyone",
        contact=contact,
        claim_max_uses=claim_max_uses,
        claim_ttl_seconds=claim_ttl,
        trusted_proxies=trusted_proxies,
        profiles=not no_profiles,
    )
    log = logging.getLogger("buzz_relay")
    raise_open_files(pool_size, limits["max_connections_per_ip"])
    log.info("buzz-relay %s listening on %s:%d", key.npub, host, port)
    in_use = f"buzz-relay: {host}:{port} is in use (--reuse-port shares it on purpose)"
    if workers == 1:
        try:
            run(config, host, port, reuse_port=reuse_port)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            click.echo(in_use, err=True)
            sys.exit(1)
        return
    if not reuse_port and address_in_use(host, port):
        click.echo(in_use, err=True)
        sys.exit(1)
    sys.exit(supervise(workers, lambda n: run(config, host, port, reuse_port=True, worker=n)))


def _every_flag_from_the_environment(command: click.Command) -> None:
    """BUZZ_RELAY_<FLAG> for every flag that names no variable of its own (SPEC section 10):
    --max-joins from BUZZ_RELAY_MAX_JOINS; the flag wins, as click has it."""
    for param in command.params:
        if isinstance(param, click.Option) and param.envvar is None:
            flag = max(param.opts, key=len).lstrip("-")
            param.envvar = "BUZZ_RELAY_" + flag.upper().replace("-", "_")
        if isinstance(param, click.Option):
            param.show_envvar = True


_every_flag_from_the_environment(main)
