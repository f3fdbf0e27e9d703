"""buzz-admin rotate-key: make a new relay key and re-sign every list with it."""

from __future__ import annotations

import click
from psycopg import sql

from ..errors import BuzzError
from .failures import FAILURE, OK, Failure
from .output import echo_json
from .state import get_state, json_option, key_option, marks_write
from .writes import confirm, run_write


def register(main: click.Group) -> None:
    main.add_command(rotate_key)


@click.command("rotate-key")
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Communities re-signed per transaction.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@key_option
@marks_write
def rotate_key(batch: int, yes: bool) -> None:
    """Make the configured key (--key-file or BUZZ_RELAY_SECRET_KEY: the NEW key) the relay
    key, and re-sign every community's list with it, --batch communities per transaction.

    From the first commit on, the old key can no longer publish lists. Safe to run again if
    interrupted: it continues where it stopped.

    \b
    Example:
      buzz-admin --key-file /etc/buzz/relay-new.key rotate-key
    """
    state = get_state()
    key = state.key()
    confirm(
        state,
        f"Make {key.npub} the relay key and re-sign every list with it? "
        "The old key will no longer be accepted",
        yes,
    )
    total = 0
    rounds = 0
    m = state.membership()
    while True:
        try:
            write = run_write(state, lambda tx: tx.rotate_relay_key(key.pubkey, batch), m)
        except BuzzError as exc:
            if exc.sqlstate != "42501":
                raise
            raise Failure(
                "this login may not rotate the relay key: rotate_relay_key needs the role "
                "buzz_key_admin",
                FAILURE,
                hint="as a superuser: GRANT buzz_key_admin TO "
                + sql.Identifier(m.conn.info.user).as_string(m.conn),
                sqlstate=exc.sqlstate,
            ) from None
        rounds += 1
        if rounds == 1:
            state.kept = f"the relay key {key.npub} was recorded"
        if not write.outcome:
            break
        total += write.outcome
        state.kept = (
            f"the relay key {key.npub} was recorded and {total} lists re-signed; run "
            "rotate-key again to finish"
        )
        if not state.json:
            click.echo(f"re-signed {total} lists so far", err=True)
    state.kept = None
    if state.json:
        echo_json(
            {
                "outcome": "rotated",
                "snapshot": None,
                "relay_pubkey": key.pubkey,
                "re_signed": total,
                "exit_code": OK,
            }
        )
    else:
        click.echo(f"the relay key is {key.npub}; re-signed {total} lists")
