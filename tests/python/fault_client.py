"""A membership client that stops half way through a write, for test_faults.py.

    BUZZ_RELAY_SECRET_KEY=<hex> python fault_client.py URL COMMUNITY PUBKEY STAGE

In one transaction it adds PUBKEY to COMMUNITY through buzz_signer, then
  STAGE=prepared: runs prepare (the database takes the community's list lock) and stops
                  before signing;
  STAGE=inserted: also signs and inserts the signatures, and stops before COMMIT.
It then prints one JSON line on stdout (its backend pid, the prepared ids, the session's
timeouts before the write and inside the transaction) and hangs: it sleeps without sending
anything more, until it is killed or its parent (the test) goes away.

The secret key comes from the environment only; nothing here prints it.
"""

from __future__ import annotations

import json
import os
import sys
import time

import psycopg

from buzz_signer.keys import RelayKey
from buzz_signer.membership import MembershipTransaction
from buzz_signer.signer import PreparedEvent, Signer


def main(url: str, community: str, pubkey: str, stage: str) -> None:
    if stage not in ("prepared", "inserted"):
        raise SystemExit(f"unknown stage {stage!r}")
    key = RelayKey.from_env()
    parent = os.getppid()
    conn = psycopg.connect(url, autocommit=False)
    # A client with no timeouts of its own, whatever the server's configuration: any bound
    # on its transaction comes from the project.
    conn.execute("SET idle_in_transaction_session_timeout = 0")
    conn.execute("SET lock_timeout = 0")
    conn.commit()
    before = conn.execute(
        "SELECT current_setting('idle_in_transaction_session_timeout'),"
        " current_setting('lock_timeout')"
    ).fetchone()
    conn.rollback()

    outcome = MembershipTransaction(conn).add_relay_member(community, pubkey)
    rows = conn.execute(
        "SELECT community_id, id, kind, created_at, serialized"
        " FROM buzz.prepare_membership_events(%s)",
        (key.pubkey,),
    ).fetchall()
    prepared = [PreparedEvent(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]
    if stage == "inserted":
        sigs = Signer(key).sign_all(prepared)
        conn.execute(
            "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
            ([p.id for p in prepared], sigs),
        ).fetchall()
    inside = conn.execute(
        "SELECT current_setting('idle_in_transaction_session_timeout'),"
        " current_setting('lock_timeout')"
    ).fetchone()
    print(
        json.dumps(
            {
                "backend_pid": conn.info.backend_pid,
                "outcome": outcome,
                "stage": stage,
                "prepared": [[p.kind, p.id, p.created_at] for p in prepared],
                "session_timeouts_before": list(before),
                "timeouts_in_transaction": list(inside),
            }
        ),
        flush=True,
    )
    # Hang: hold the open transaction and send nothing more.
    while os.getppid() == parent:
        time.sleep(0.2)


if __name__ == "__main__":
    main(*sys.argv[1:])
