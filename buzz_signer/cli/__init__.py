"""buzz-admin: the operator's command line (docs/cli.md).

The database comes from --database-url or DATABASE_URL, or with --local (BUZZ_LOCAL=1) from
the project's local cluster (database 'buzz'), which the tool then starts itself; with
neither, nothing is started and the command is a usage error. The community comes from --community (id or host) or from
RELAY_URL's host. The relay key comes from BUZZ_RELAY_SECRET_KEY or --key-file, never from an
argument value, and is never printed unless asked (keygen --show-secret).
"""

from __future__ import annotations

import errno
import sys
import traceback
from pathlib import Path
from typing import Any

import click
import psycopg

from ..errors import BuzzError
from ..keys import InvalidKey
from ..signer import RefusedToSign
from . import (
    bans,
    communities,
    invites,
    join_requests,
    local,
    members,
    profile,
    quotas,
    republish,
    roles,
    rotate,
    show,
    verify,
    watch,
)
from .failures import (
    BAD_INPUT,
    EXIT_CODES_HELP,
    FAILURE,
    CommitUnknown,
    Failure,
    failure_from,
    show_failure,
)
from .state import State, set_shared

__all__ = ["main"]


class AdminGroup(click.Group):
    """The buzz-admin group: maps every failure to its exit code and message.

    Usage errors exit 1 (bad input), not click's 2, which buzz-admin reserves for "not found".
    """

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        state = State()
        extra.setdefault("obj", state)
        code = 0
        try:
            rv = super().main(args, prog_name or "buzz-admin", complete_var, False, **extra)
            code = rv if isinstance(rv, int) else 0
        except click.exceptions.UsageError as exc:
            exc.exit_code = BAD_INPUT
            exc.show()
            code = BAD_INPUT
        except click.ClickException as exc:
            exc.show()
            code = exc.exit_code
        except click.exceptions.Abort:
            failure = Failure("interrupted", BAD_INPUT)
            show_failure(failure, state)
            code = failure.code
        except (Failure, CommitUnknown, BuzzError, RefusedToSign, InvalidKey, psycopg.Error) as exc:
            failure = failure_from(exc, state)
            show_failure(failure, state)
            code = failure.code
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                _internal_error(exc, state)
                code = FAILURE
            else:
                code = 0  # a reader such as `head` went away: nothing more to say
        except Exception as exc:  # noqa: BLE001 -- a bug: show it, claim nothing about the data
            _internal_error(exc, state)
            code = FAILURE
        finally:
            state.close()
        if standalone_mode:
            sys.exit(code)
        return code


def _internal_error(exc: BaseException, state: State) -> None:
    traceback.print_exception(exc)
    state.writing = False
    show_failure(
        Failure(
            f"internal error ({type(exc).__name__}); if a write was under way, check its result "
            "with `buzz-admin show-list`",
            FAILURE,
        ),
        state,
    )


@click.group(
    cls=AdminGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.option(
    "--community",
    "-c",
    metavar="ID|HOST",
    expose_value=False,
    callback=set_shared,
    help="The community, by id or host (default: RELAY_URL's host, port kept).",
)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    expose_value=False,
    callback=set_shared,
    help="File holding the relay's secret key (default: BUZZ_RELAY_SECRET_KEY).",
)
@click.option(
    "--json",
    "json",
    is_flag=True,
    expose_value=False,
    callback=set_shared,
    help="Print JSON instead of words.",
)
@click.option(
    "--database-url",
    metavar="URL",
    expose_value=False,
    callback=set_shared,
    help="The database (default: DATABASE_URL); one with a password is refused here.",
)
@click.option(
    "--local",
    is_flag=True,
    expose_value=False,
    callback=set_shared,
    help="Use a PostgreSQL of buzz's own under ./.buzz/ (started if need be; BUZZ_LOCAL=1).",
)
@click.version_option(package_name="buzz-membership", prog_name="buzz-admin")
def main() -> None:
    """Operate buzz membership: NIP-43 relay membership lists kept by PostgreSQL.

    \b
    Environment:
      DATABASE_URL           the database (or --database-url; --local: one under
                             ./.buzz/ that the tool starts itself)
      BUZZ_LOCAL=1           as --local
      RELAY_URL              the relay's URL; its host (port kept) names the community
                             when --community is not given
      BUZZ_RELAY_SECRET_KEY  the relay's secret key (hex or nsec), unless --key-file

    \b
    --community, --key-file and --json go before or after the command:
      buzz-admin -c relay.example.org members
      buzz-admin members -c relay.example.org      (the same)

    \b
    Example:
      export DATABASE_URL=postgresql://admin@db/buzz RELAY_URL=wss://relay.example.org
      buzz-admin add-member npub1... --role admin
    """


for module in (
    communities,
    members,
    roles,
    invites,
    quotas,
    bans,
    join_requests,
    profile,
    show,
    republish,
    verify,
    watch,
    rotate,
    local,
):
    module.register(main)


def _add_epilog(group: click.Group) -> None:
    """Every command's --help ends with the exit codes."""
    for command in group.commands.values():
        if command.epilog is None:
            command.epilog = EXIT_CODES_HELP
        if isinstance(command, click.Group):
            _add_epilog(command)


_add_epilog(main)
