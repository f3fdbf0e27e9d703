"""Security (SPEC section 4, docs/design.md "Security", docs/operations.md), over real
connections of real LOGIN roles, not SET ROLE inside a superuser's transaction:

- a LOGIN role in ``buzz_writer`` calls the API and touches no table, function or sequence of
  the project's schemas; one in ``buzz_reader`` reads and cannot write;
- a hostile caller's search_path (a schema first with functions, aggregates and operators that
  shadow pg_catalog's) changes nothing the API does, and nothing of it is ever called;
- a stranger cannot take a community's advisory locks (they are revoked from PUBLIC), so it
  cannot stall a write; the lock table and query of docs/operations.md are what the server shows;
- ``buzz-admin keygen`` and ``RelayKey.from_env`` keep the secret to themselves.

The catalog-level privilege checks are in tests/pgtap/test_privileges.sql. That the relay secret
reaches no server log, exception text or table for a whole run is watched by secret_watch.py
(loaded by conftest.py, with log_statement = all); test_membership_secrets.py follows one key
through every write path.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from db_roles import as_role
from fixtures_membership import (
    Community,
    assert_list_event,
    new_host,
    new_pubkey,
    verify_both,
)
from psycopg import sql
from psycopg.conninfo import make_conninfo
from sessions import ListLockHolder, list_lock_holders

from buzz_signer.errors import BuzzError
from buzz_signer.keys import InvalidKey, RelayKey
from buzz_signer.membership import Membership, MembershipWrite

pytest_plugins = ("fixtures_membership", "db_roles")

REPO = Path(__file__).resolve().parents[2]
READ_FUNCTIONS = frozenset(
    {
        "community_id", "relay_members", "member_list", "membership_events", "member_list_drift",
        "role_definitions", "role_deletions", "community_profile", "banned_pubkeys",
        "join_requests", "relay_member", "membership_events_newest", "relay_key",
        "invite_branch", "member_profiles",
    }
)  # fmt: skip
# Reads granted to buzz_writer only: who invited whom is not for readers, nor the relay's
# rate windows (rate_reached).
WRITER_ONLY_READS = frozenset({"relay_invites", "rate_reached"})
WRITE_FUNCTIONS = frozenset(
    {
        "add_relay_member", "add_relay_members", "allowlist_add", "archive_community",
        "backfill_from_allowlist", "bootstrap_owner", "claim_relay_invite",
        "claim_relay_membership", "create_community", "create_relay_invite", "delete_community",
        "insert_signed_events", "prepare_membership_events", "remove_relay_member",
        "remove_relay_member_if_role", "republish_member_list", "revoke_relay_invite",
        "rotate_relay_key", "transfer_ownership", "unarchive_community",
        "update_relay_member_role", "define_role", "delete_role", "assign_role", "unassign_role",
        "set_community_profile", "ban_pubkey", "unban_pubkey", "set_join_policy",
        "request_membership", "approve_join_request", "reject_join_request",
        "set_member_profile",
    }
)  # fmt: skip
ADVISORY_LOCK_FUNCTIONS = r"^pg_(try_)?advisory_(xact_)?lock(_shared)?$"
# docs/operations.md, "Locks an operator may meet": who holds a community's list.
DOCS_LIST_HOLDER_QUERY = """
SELECT pid, granted FROM pg_locks
WHERE locktype = 'advisory' AND objsubid = 1
  AND ((classid::bigint << 32) | objid::bigint) = buzz_private.list_lock_key(%s::uuid)"""


# ----------------------------------------------------------------------------- helpers


def sqlstate(call: Callable[[], Any]) -> str | None:
    """The SQLSTATE `call` failed with (None if it did not fail)."""
    try:
        call()
    except psycopg.Error as exc:
        return exc.sqlstate
    except BuzzError as exc:
        return exc.sqlstate
    return None


def run_sql(conn: psycopg.Connection, stmt: Any, params: Any = None) -> Callable[[], Any]:
    def call() -> Any:
        with conn.cursor() as cur:
            cur.execute(stmt, params)
            return cur.fetchall() if cur.description else None

    return call


def project_relations(su: psycopg.Connection) -> list[tuple[str, str, str, str]]:
    """(schema, name, relkind, first column) of every relation in a schema buzz_owner owns."""
    return su.execute(
        """SELECT n.nspname, c.relname, c.relkind::text,
                  (SELECT a.attname FROM pg_attribute a
                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                   ORDER BY a.attnum LIMIT 1)
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspowner = 'buzz_owner'::regrole AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
           ORDER BY 1, 2"""
    ).fetchall()


def project_functions(su: psycopg.Connection) -> list[tuple[str, str, str, bool]]:
    """(schema, name, a call with NULL arguments, volatile?) of every function in the project's
    schemas."""
    rows = su.execute(
        """SELECT n.nspname, p.proname,
                  array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) t),
                  p.provolatile = 'v'
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspowner = 'buzz_owner'::regrole AND p.prokind = 'f'
           ORDER BY 1, 2"""
    ).fetchall()
    out = []
    for schema, name, argtypes, volatile in rows:
        args = ", ".join(f"NULL::{t}" for t in argtypes)
        out.append((schema, name, f"SELECT * FROM {schema}.{name}({args})", volatile))
    return out


def table_statements(schema: str, name: str, kind: str, column: str) -> list[tuple[str, str]]:
    """What a caller might try on a relation, each needing a privilege the roles lack."""
    rel = f"{schema}.{name}"
    if kind == "S":
        return [
            ("nextval", f"SELECT nextval('{rel}')"),
            ("setval", f"SELECT setval('{rel}', 1)"),
            ("SELECT", f"SELECT * FROM {rel}"),
        ]
    return [
        ("SELECT", f"SELECT * FROM {rel} LIMIT 1"),
        ("SELECT count", f"SELECT count(*) FROM {rel}"),
        ("INSERT", f"INSERT INTO {rel} DEFAULT VALUES"),
        ("UPDATE", f"UPDATE {rel} SET {column} = {column}"),
        ("DELETE", f"DELETE FROM {rel}"),
        ("TRUNCATE", f"TRUNCATE {rel}"),
        ("LOCK", f"LOCK TABLE {rel} IN ACCESS SHARE MODE"),
        ("COPY", f"COPY {rel} TO STDOUT"),
    ]


def assert_no_table_access(db_url: str, role: str, su: psycopg.Connection) -> int:
    """Every statement on every relation of the project's schemas fails with 42501 for `role`;
    so does every buzz_private function. Returns how many attempts were made."""
    rels = project_relations(su)
    assert {(s, n) for s, n, k, _ in rels if k == "r"} >= {
        ("buzz_private", "relay_members"),
        ("buzz_private", "member_lists"),
        ("buzz_private", "relay_invites"),
    }
    tried = 0
    with psycopg.connect(as_role(db_url, role), autocommit=True) as c:
        assert c.execute("SELECT current_user").fetchone() == (role,)
        for schema, name, kind, column in rels:
            for what, stmt in table_statements(schema, name, kind, column):

                def attempt(stmt: str = stmt) -> None:
                    with c.transaction(), c.cursor() as cur:
                        if stmt.startswith("COPY"):
                            with cur.copy(stmt) as copy:
                                for _ in copy:
                                    pass
                        else:
                            cur.execute(stmt)

                assert sqlstate(attempt) == "42501", f"{role}: {what} on {schema}.{name}"
                tried += 1
        for schema, name, call, _ in project_functions(su):
            if schema == "buzz":
                continue
            assert sqlstate(run_sql(c, call)) == "42501", f"{role}: {schema}.{name}"
            tried += 1
        # The catalog is readable as always (drivers and tools need it), tables included.
        names = {
            r[0]
            for r in c.execute(
                "SELECT c.relname FROM pg_catalog.pg_class c"
                " WHERE c.relnamespace = 'buzz_private'::regnamespace"
            )
        }
        assert "relay_members" in names
        assert c.execute("SELECT count(*) FROM pg_catalog.pg_proc").fetchone()[0] > 1000
    return tried


def reads(m: Membership, cid: Any, host: str) -> tuple[Any, ...]:
    """Everything the read functions answer about one community, the list as served text."""
    return (
        m.community_id(host),
        m.relay_members(cid),
        m.conn.execute("SELECT buzz.member_list(%s)::pg_catalog.text", (cid,)).fetchone()[0],
        m.membership_events(cid),
        m.member_list_drift(cid),
        m.member_list_drift(),
        m.role_definitions(cid),
        m.role_deletions(cid),
    )


def populated(mem: Membership) -> tuple[Community, dict[str, str]]:
    """A community with an admin and two members, made through `mem` (a superuser's)."""
    owner, admin, a, b = (new_pubkey() for _ in range(4))
    host = new_host()
    w = mem.create_community(host, owner)
    cid = w.details["community_id"]
    mem.add_relay_member(cid, admin, "admin", owner)
    mem.add_relay_members(cid, [a, b])
    mem.define_role(cid, "mod", "Moderator")
    mem.assign_role(cid, a, "mod")
    mem.define_role(cid, "gone", "Gone")
    mem.delete_role(cid, "gone")
    return Community(cid, host, owner), {"admin": admin, "a": a, "b": b}


# --------------------------------------------------------------------------- the roles


def test_writer_login_role_writes_through_the_api_and_touches_no_table(
    db_url, mem, reader, key, su, login_role
):
    """The write paths that commit no list, every answer that changes nothing, and the reads,
    as a LOGIN member of buzz_writer; then no table, sequence or private function for it.

    The writes that change members (and delete_community, rotate_relay_key) are not run
    here: on this code they fail at COMMIT for such a role (42501 from the commit-time
    triggers, which run as the caller); see the report that came with this file."""
    c, who = populated(mem)
    other = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    writer = login_role("buzz_writer")
    before_members = reader.relay_members(c.cid)

    with Membership.connect(as_role(db_url, writer), key) as w:
        assert w.conn.execute("SELECT current_user, session_user").fetchone() == (writer, writer)
        # Writes that change no member (they commit no list).
        inv = w.create_relay_invite(c.cid, c.owner, max_uses=2, ttl=dt.timedelta(hours=1))
        assert re.fullmatch(r"[0-9a-f]{32}", inv.code)
        assert w.revoke_relay_invite(c.cid, inv.invite_id) == "revoked"
        assert w.revoke_relay_invite(c.cid, inv.invite_id) == "not_found"
        frank = new_pubkey()
        assert w.allowlist_add(other, frank, "from the writer") == "added"
        assert w.allowlist_add(other, frank) == "already_listed"
        assert w.archive_community(other) == "archived"
        assert w.archive_community(other) == "unchanged"
        assert w.unarchive_community(other) == "unarchived"
        assert w.unarchive_community(other) == "unchanged"
        # Write paths whose answer is "nothing to change" commit too, and write no list.
        noops: list[MembershipWrite] = [
            w.add_relay_member(c.cid, who["a"]),
            w.add_relay_members(c.cid, [who["a"], who["b"].upper()]),
            w.claim_relay_membership(c.cid, who["b"]),
            w.claim_relay_invite(c.cid, "0" * 32, new_pubkey()),
            w.remove_relay_member(c.cid, new_pubkey()),
            w.remove_relay_member_if_role(c.cid, who["a"], "admin"),
            w.remove_relay_member_if_role(c.cid, c.owner, "owner"),
            w.update_relay_member_role(c.cid, who["admin"], "admin"),
            w.update_relay_member_role(c.cid, new_pubkey(), "admin"),
            w.bootstrap_owner(c.cid, c.owner),
            w.transfer_ownership(c.cid, c.owner),
            w.delete_community(uuid.uuid4()),
        ]
        assert [n.outcome for n in noops] == [
            "already_member",
            0,
            "already_member",
            "invalid",
            "not_member",
            "role_mismatch",
            "is_owner",
            "unchanged",
            "not_member",
            "unchanged",
            "already_owner",
            "not_found",
        ]
        assert all(n.snapshot is None and n.events == () for n in noops)
        # A writer reads too (buzz_reader is granted to buzz_writer).
        assert reads(w, c.cid, c.host) == reads(reader, c.cid, c.host)
        # Refusals are the API's own errors, not privilege errors.
        assert sqlstate(lambda: w.add_relay_member(c.cid, "nope")) == "BZIPK"
        assert sqlstate(lambda: w.add_relay_member(uuid.uuid4(), new_pubkey())) == "BZNCM"

    assert reader.relay_members(c.cid) == before_members
    # The writes were the writer's: the rows are there.
    assert su.execute(
        "SELECT note FROM buzz_private.relay_allowlist WHERE community_id = %s AND pubkey = %s",
        (other, frank),
    ).fetchone() == ("from the writer",)
    assert su.execute(
        "SELECT count(*) FROM buzz_private.relay_invites WHERE community_id = %s", (c.cid,)
    ).fetchone() == (0,)

    assert assert_no_table_access(db_url, writer, su) > 100


def test_reader_login_role_reads_and_cannot_write(db_url, mem, reader, key, su, login_role):
    c, who = populated(mem)
    mem.remove_relay_member(c.cid, who["b"])
    inv = mem.create_relay_invite(c.cid, c.owner)
    mem.allowlist_add(c.cid, new_pubkey())
    role = login_role("buzz_reader")
    committed = reads(reader, c.cid, c.host)
    state_sql = (
        "SELECT (SELECT json_agg(m ORDER BY m.pubkey) FROM buzz_private.relay_members m),"
        " (SELECT json_agg(l) FROM buzz_private.member_lists l),"
        " (SELECT count(*) FROM buzz_private.membership_events),"
        " (SELECT json_agg(i) FROM buzz_private.relay_invites i),"
        " (SELECT json_agg(a) FROM buzz_private.relay_allowlist a),"
        " (SELECT json_agg(c) FROM buzz_private.communities c),"
        " (SELECT json_agg(k) FROM buzz_private.relay_key k)"
    )
    before = su.execute(state_sql).fetchone()

    with Membership.connect(as_role(db_url, role), key) as r:
        assert r.conn.execute("SELECT current_user").fetchone() == (role,)
        # The read functions work, and answer what the superuser sees.
        assert reads(r, c.cid, c.host) == committed
        assert r.community_id(c.host.upper()) == c.cid
        assert r.member_list(uuid.uuid4()) is None

        # Every function of schema buzz that may change anything (VOLATILE) is refused, at the
        # call (42501), and so are the reads for writers only; every other one runs.
        api = [
            (n, call, volatile) for sch, n, call, volatile in project_functions(su) if sch == "buzz"
        ]
        writes = {n for n, _, volatile in api if volatile}
        assert writes >= WRITE_FUNCTIONS
        assert not writes & READ_FUNCTIONS
        for name, call, volatile in api:
            refused = volatile or name in WRITER_ONLY_READS
            assert sqlstate(run_sql(r.conn, call)) == ("42501" if refused else None), name
        assert (
            sqlstate(
                run_sql(
                    r.conn,
                    "SELECT * FROM buzz.prepare_membership_events(%s)",
                    (key.pubkey,),
                )
            )
            == "42501"
        )
        assert (
            sqlstate(
                run_sql(
                    r.conn,
                    "SELECT * FROM buzz.insert_signed_events(%s::text[], %s::text[])",
                    (["0" * 64], ["0" * 128]),
                )
            )
            == "42501"
        )

        # ... and so is every write path of the Python layer.
        new_key = RelayKey.generate()
        attempts: list[Callable[[], Any]] = [
            lambda: r.create_community(new_host(), new_pubkey()),
            lambda: r.add_relay_member(c.cid, new_pubkey()),
            lambda: r.add_relay_members(c.cid, [new_pubkey()]),
            lambda: r.claim_relay_membership(c.cid, new_pubkey()),
            lambda: r.claim_relay_invite(c.cid, inv.code, new_pubkey()),
            lambda: r.create_relay_invite(c.cid, c.owner),
            lambda: r.revoke_relay_invite(c.cid, inv.invite_id),
            lambda: r.remove_relay_member(c.cid, who["a"]),
            lambda: r.remove_relay_member_if_role(c.cid, who["a"], "member"),
            lambda: r.update_relay_member_role(c.cid, who["a"], "admin"),
            lambda: r.bootstrap_owner(c.cid, who["a"]),
            lambda: r.transfer_ownership(c.cid, who["a"]),
            lambda: r.allowlist_add(c.cid, new_pubkey()),
            lambda: r.backfill_from_allowlist(c.cid),
            lambda: r.republish_member_list(c.cid),
            lambda: r.archive_community(c.cid),
            lambda: r.unarchive_community(c.cid),
            lambda: r.rotate_relay_key(new_key.pubkey),
            lambda: r.delete_community(c.cid),
        ]
        for i, attempt in enumerate(attempts):
            assert sqlstate(attempt) == "42501", i

    assert su.execute(state_sql).fetchone() == before
    assert reads(reader, c.cid, c.host) == committed
    assert assert_no_table_access(db_url, role, su) > 100


def test_reads_ignore_a_callers_temporary_types(db_url, mem, reader, key, login_role):
    """Even under search_path = '', PostgreSQL looks types up in the caller's pg_temp before
    pg_catalog. The read functions have SQL-standard bodies, bound when they were created, so
    a reader's temporary types named like pg_catalog's never run inside them (as buzz_owner)."""
    c, _ = populated(mem)
    role = login_role("buzz_reader")
    with Membership.connect(as_role(db_url, role), key) as r:
        spied: list[str] = []
        r.conn.add_notice_handler(
            lambda d: (
                spied.append(d.message_primary or "")
                if (d.message_primary or "").startswith("SPY")
                else None
            )
        )
        r.conn.execute(
            "CREATE FUNCTION pg_temp.spy(v pg_catalog.text) RETURNS pg_catalog.bool"
            " LANGUAGE plpgsql AS $$ BEGIN RAISE WARNING 'SPY as %', current_user; RETURN true;"
            " END $$"
        )
        for t in ("text", "uuid", "bytea", "json", "jsonb", "name", "xid8", "timestamptz"):
            r.conn.execute(
                f"CREATE DOMAIN pg_temp.{t} AS pg_catalog.{t}"
                " CHECK (pg_temp.spy(VALUE::pg_catalog.text))"
            )
        r.conn.execute("SELECT 'x'::text")  # the shadows are live in this session
        assert spied == [f"SPY as {role}"]
        spied.clear()
        assert reads(r, c.cid, c.host) == reads(reader, c.cid, c.host)
        assert r.member_list(uuid.uuid4()) is None
        assert spied == []


# ------------------------------------------------------------------------ advisory locks


def list_lock_key(community_id: Any) -> int:
    """The list lock's key as docs/operations.md and list_lock_key.sql define it: the first 64
    bits of the community id, as a signed bigint."""
    return int.from_bytes(uuid.UUID(str(community_id)).bytes[:8], "big", signed=True)


def advisory_functions(su: psycopg.Connection) -> list[tuple[str, int]]:
    """(regprocedure, number of int arguments) of pg_catalog's 16 lock-taking functions."""
    rows = su.execute(
        "SELECT p.oid::regprocedure::text, p.pronargs FROM pg_proc p"
        " WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname ~ %s ORDER BY 1",
        (ADVISORY_LOCK_FUNCTIONS,),
    ).fetchall()
    assert len(rows) == 16
    return rows


def test_list_lock_key_computed_in_python_is_the_databases(su, community):
    ids = [
        community.cid,
        uuid.UUID("00000000-0000-4000-8000-000000000000"),
        uuid.UUID("7fffffff-ffff-4fff-bfff-ffffffffffff"),
        uuid.UUID("80000000-0000-4000-8000-000000000000"),
        uuid.UUID("ffffffff-ffff-4fff-bfff-ffffffffffff"),
        *(uuid.uuid4() for _ in range(50)),
    ]
    got = su.execute(
        "SELECT buzz_private.list_lock_key(u) FROM unnest(%s::uuid[]) WITH ORDINALITY AS t(u, n)"
        " ORDER BY n",
        (ids,),
    ).fetchall()
    assert [g[0] for g in got] == [list_lock_key(i) for i in ids]
    assert min(g[0] for g in got) < 0 < max(g[0] for g in got)


def test_no_role_but_the_owner_can_take_a_communitys_locks(
    db_url, admin_url, mem, key, su, community, login_role
):
    cid = community.cid
    key_ = list_lock_key(cid)
    owner_hash, pubkey_hash = su.execute(
        "SELECT hashtext(%s::uuid::text), hashtext(%s)", (cid, community.owner)
    ).fetchone()
    # bigint space: the list lock; two-int space: ownership, owner limit, relay key.
    args_by_arity = {1: [(key_,)], 2: [(1, owner_hash), (2, pubkey_hash), (3, 0)]}
    stranger = login_role()
    writer = login_role("buzz_writer")
    reader_role = login_role("buzz_reader")
    functions = advisory_functions(su)
    tried = 0
    for role in (stranger, writer, reader_role):
        with psycopg.connect(as_role(db_url, role), autocommit=True) as c:
            pid = c.info.backend_pid
            for fn, nargs in functions:
                name = fn.split("(")[0]
                for args in args_by_arity[nargs]:
                    stmt = sql.SQL("SELECT pg_catalog.{}({})").format(
                        sql.Identifier(name), sql.SQL(", ").join(sql.Literal(a) for a in args)
                    )
                    assert sqlstate(run_sql(c, stmt)) == "42501", (role, fn, args)
                    tried += 1
            # Nor can it compute the key, or reach the API's helpers, or the API (the stranger).
            assert sqlstate(run_sql(c, "SELECT buzz_private.list_lock_key(%s)", (cid,))) == "42501"
            assert sqlstate(run_sql(c, "SELECT buzz_private.lock_ownership(%s)", (cid,))) == "42501"
            if role == stranger:
                assert sqlstate(run_sql(c, "SELECT buzz.community_id('x.org')")) == "42501"
            assert (
                su.execute(
                    "SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype = 'advisory'",
                    (pid,),
                ).fetchone()[0]
                == 0
            )
    assert tried == 3 * (8 + 8 * 3)

    # A stranger that tried inside a transaction and sits there: the community is writable.
    mem.conn.execute("SET lock_timeout = '1s'")  # a stalled write fails instead of waiting
    with psycopg.connect(as_role(db_url, stranger)) as s:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            s.execute("SELECT pg_catalog.pg_advisory_xact_lock(%s)", (key_,))
        assert s.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        w = mem.add_relay_member(cid, new_pubkey())
        assert w.outcome == "added" and w.snapshot is not None
        assert mem.transfer_ownership(cid, new_pubkey()).outcome == "transferred"
        s.rollback()

    # The key is the right one: whoever may take it (a superuser here) does stall the write,
    # and the query of docs/operations.md names the holder.
    with psycopg.connect(admin_url) as holder_admin:  # another database: a different lock
        holder_admin.execute("SELECT pg_advisory_xact_lock(%s)", (key_,))
        assert mem.add_relay_member(cid, new_pubkey()).outcome == "added"
        holder_admin.rollback()
    with ListLockHolder(db_url, cid) as holder:
        assert list_lock_holders(su, cid) == [holder.pid]
        assert sqlstate(lambda: mem.add_relay_member(cid, new_pubkey())) == "55P03"
        holder.release()
    assert mem.add_relay_member(cid, new_pubkey()).outcome == "added"


@pytest.mark.parametrize(
    "community_id",
    ["00000000-0000-4000-8000-000000000001", "ffffffff-ffff-4fff-bfff-fffffffffffe"],
    ids=["positive-key", "negative-key"],
)
def test_docs_query_finds_the_holder_of_a_list_lock(db_url, su, community_id):
    """The query of docs/operations.md names the holder (granted) and a waiter (not granted),
    whatever the sign of the key."""
    key_ = list_lock_key(community_id)
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url) as waiter:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (key_,))
        waiter.execute("SET lock_timeout = '10s'")
        holder_pid, waiter_pid = holder.info.backend_pid, waiter.info.backend_pid
        waiting = threading.Thread(
            target=lambda: waiter.execute("SELECT pg_advisory_xact_lock(%s)", (key_,))
        )
        waiting.start()
        expected = sorted([(holder_pid, True), (waiter_pid, False)])
        deadline = time.monotonic() + 5
        while sorted(su.execute(DOCS_LIST_HOLDER_QUERY, (community_id,)).fetchall()) != expected:
            assert time.monotonic() < deadline, "the waiter never showed in pg_locks"
            time.sleep(0.01)
        holder.rollback()
        waiting.join(10)
        assert su.execute(DOCS_LIST_HOLDER_QUERY, (community_id,)).fetchall() == [
            (waiter_pid, True)
        ]
        waiter.rollback()
    assert su.execute(DOCS_LIST_HOLDER_QUERY, (community_id,)).fetchall() == []


def _advisory_locks(conn: psycopg.Connection) -> set[tuple[int, int, int, str]]:
    """(classid, objid, objsubid, mode) of the advisory locks this session holds."""
    return {
        tuple(r)
        for r in conn.execute(
            "SELECT classid::bigint, objid::bigint, objsubid::int, mode FROM pg_locks"
            " WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted"
        )
    }


def _as_oid(n: int) -> int:
    return n & 0xFFFFFFFF


@pytest.mark.single_server(
    "the locks of docs/operations.md, in the pg_locks of the client's own session (on a"
    " cluster a write takes them on its worker: docs/scale-out.md)"
)
def test_locks_are_those_docs_operations_lists(db_url, key, su, community):
    """docs/operations.md: ownership (1, hashtext(community_id::text)), owner limit
    (2, hashtext(pubkey)), relay key (3, 0) shared by prepare and exclusive by rotation, the ban
    lock (5, hashtext(community_id::text)) shared by joins and whatever locks a member's row and
    exclusive by a ban, the list lock
    in the bigint space; all transaction-scoped."""
    cid = community.cid
    new_owner = new_pubkey()
    list_key = list_lock_key(cid)
    hi, lo = (list_key >> 32) & 0xFFFFFFFF, list_key & 0xFFFFFFFF
    h_cid, h_new, h_creator = su.execute(
        "SELECT hashtext(%s::uuid::text), hashtext(%s), hashtext(%s)",
        (cid, new_owner, community.owner),
    ).fetchone()
    with psycopg.connect(db_url) as c:
        assert c.execute(
            "SELECT buzz.transfer_ownership(%s, %s, %s)", (cid, new_owner, community.owner)
        ).fetchone() == ("transferred",)
        assert _advisory_locks(c) == {
            (1, _as_oid(h_cid), 2, "ExclusiveLock"),
            (2, _as_oid(h_new), 2, "ExclusiveLock"),
            (5, _as_oid(h_cid), 2, "ShareLock"),  # it locks member rows: the ban lock first
        }
        c.execute("SELECT * FROM buzz.prepare_membership_events(%s)", (key.pubkey,)).fetchall()
        assert _advisory_locks(c) == {
            (1, _as_oid(h_cid), 2, "ExclusiveLock"),
            (2, _as_oid(h_new), 2, "ExclusiveLock"),
            (5, _as_oid(h_cid), 2, "ShareLock"),
            (3, 0, 2, "ShareLock"),
            (hi, lo, 1, "ExclusiveLock"),
        }
        c.rollback()
        assert _advisory_locks(c) == set()

        # create_community: the owner limit of its owner.
        c.execute("SELECT * FROM buzz.create_community(%s, %s)", (new_host(), community.owner))
        assert _advisory_locks(c) == {(2, _as_oid(h_creator), 2, "ExclusiveLock")}
        c.rollback()

        # bootstrap_owner: the ownership lock, and the ban lock before the owner's row.
        c.execute("SELECT buzz.bootstrap_owner(%s, %s)", (cid, new_owner))
        assert _advisory_locks(c) == {
            (1, _as_oid(h_cid), 2, "ExclusiveLock"),
            (5, _as_oid(h_cid), 2, "ShareLock"),
        }
        c.rollback()

        # rotate_relay_key: the relay-key lock, exclusive, first.
        c.execute("SELECT buzz.rotate_relay_key(%s)", (RelayKey.generate().pubkey,))
        assert (3, 0, 2, "ExclusiveLock") in _advisory_locks(c)
        c.rollback()

        # A write that makes a member holds the ban lock shared until prepare; a ban holds it
        # exclusive; a removal none.
        c.execute("SELECT buzz.add_relay_member(%s, %s)", (cid, new_pubkey()))
        assert _advisory_locks(c) == {(5, _as_oid(h_cid), 2, "ShareLock")}
        c.rollback()
        c.execute("SELECT buzz.ban_pubkey(%s, %s)", (cid, new_pubkey()))
        assert _advisory_locks(c) == {(5, _as_oid(h_cid), 2, "ExclusiveLock")}
        c.rollback()
        c.execute("SELECT buzz.remove_relay_member(%s, %s)", (cid, new_pubkey()))
        assert _advisory_locks(c) == set()
        c.rollback()

    # None outlives its transaction: a committed Membership write leaves the session none.
    with Membership.connect(db_url, key) as m:
        m.add_relay_member(cid, new_pubkey())
        assert _advisory_locks(m.conn) == set()


# ------------------------------------------------------------------ a hostile search_path

# The functions the brief names, and the operators to shadow; plus every pg_catalog function
# whose name is called anywhere in db/functions (found below).
SHADOWED_FUNCTIONS = frozenset(
    {
        "lower", "upper", "length", "sha256", "encode", "decode", "convert_to", "now",
        "clock_timestamp", "statement_timestamp", "gen_random_uuid", "to_json", "to_jsonb",
        "left", "right", "substr", "translate", "replace", "md5", "string_agg", "array_agg",
        "count", "max", "min", "hashtext", "pg_advisory_xact_lock", "set_config",
        "current_setting", "pg_notify", "array_length", "cardinality", "unnest", "trim", "btrim",
    }
)  # fmt: skip
SHADOWED_OPERATORS = (
    "=", "<>", "<", ">", "<=", ">=", "||", "+", "-", "*", "/", "%", "~", "!~", "~*", "~~",
    "!~~", "@>", "<@", "&&", "->", "->>", "#>", "#>>", "?", "<<", ">>", "|", "&",
)  # fmt: skip
# Pseudo-types an evil PL/pgSQL function can take or return; the rest ("any", internal, ...) it
# cannot, so those overloads are not shadowed.
USABLE_PSEUDO_TYPES = (
    "anyelement", "anyarray", "anynonarray", "anyenum", "anyrange", "anymultirange",
    "anycompatible", "anycompatiblearray", "anycompatiblenonarray", "anycompatiblerange",
    "anycompatiblemultirange", "void", "record",
)  # fmt: skip
SEARCH_PATHS = {
    "evil-first": "evil, pg_catalog, public",
    "pg_catalog-last": "evil, public, pg_catalog",
    "evil-only": "evil",
    "evil-first-odd-settings": "evil, pg_catalog, public",
}
# Other settings any caller may change, for the last case: none of them changes the API either.
ODD_SETTINGS = {
    "TimeZone": "Pacific/Chatham",
    "DateStyle": "ISO, DMY",
    "IntervalStyle": "iso_8601",
    "bytea_output": "escape",
    "extra_float_digits": "-15",
    "transform_null_equals": "on",
    "plpgsql.variable_conflict": "use_column",
    "lc_monetary": "C",
}

_SIGNATURE_FILTER = """
  AND NOT EXISTS (SELECT FROM unnest(%(types)s) t JOIN pg_type ty ON ty.oid = t
                  WHERE ty.typtype = 'p' AND ty.typname <> ALL (%(usable)s::name[]))"""


def names_called_by_the_api() -> set[str]:
    text = "\n".join(p.read_text() for p in sorted((REPO / "db" / "functions").rglob("*.sql")))
    text = re.sub(r"--[^\n]*", "", text).lower()
    return set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", text))


def build_evil_schema(evil: psycopg.Connection, su: psycopg.Connection) -> dict[str, int]:
    """Fill schema evil (owned by the role of `evil`) with a shadow of every pg_catalog function,
    aggregate and operator the API could reach by name. Each shadow bumps the sequence
    evil.calls and raises a WARNING, both outside any transaction's control, then answers like
    the original (so a call is seen however the caller's transaction ends); text = text answers
    true whatever the operands. Everyone may see and call them. Returns counts by kind."""
    names = sorted(names_called_by_the_api() | SHADOWED_FUNCTIONS)
    usable = list(USABLE_PSEUDO_TYPES)
    functions = su.execute(
        """SELECT p.proname, p.prokind::text, p.proretset, format_type(p.prorettype, NULL),
                  array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) t)
           FROM pg_proc p
           WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = ANY(%(names)s)
             AND p.prokind IN ('f', 'a') AND p.proallargtypes IS NULL AND p.provariadic = 0
             AND NOT EXISTS (SELECT FROM pg_aggregate a
                             WHERE a.aggfnoid = p.oid AND a.aggkind <> 'n')"""
        + _SIGNATURE_FILTER.replace("%(types)s", "p.proargtypes::oid[] || p.prorettype")
        + " ORDER BY 1, 5",
        {"names": names, "usable": usable},
    ).fetchall()
    operators = su.execute(
        """SELECT o.oprname, o.oprkind::text, format_type(o.oprleft, NULL),
                  format_type(o.oprright, NULL), format_type(o.oprresult, NULL),
                  o.oprcode::oid::regproc::text
           FROM pg_operator o
           WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oprname = ANY(%(names)s)
             AND o.oprkind IN ('b', 'l') AND o.oprcode <> 0"""
        + _SIGNATURE_FILTER.replace(
            "%(types)s", "array_remove(ARRAY[o.oprleft, o.oprright, o.oprresult], 0::oid)"
        )
        + " ORDER BY 1, 3, 4",
        {"names": list(SHADOWED_OPERATORS), "usable": usable},
    ).fetchall()

    def count_and_warn(what: str) -> str:
        return (
            "PERFORM pg_catalog.nextval('evil.calls'::pg_catalog.regclass); "
            f"RAISE WARNING 'EVIL CALLED: %%', {sql.quote(what)}; "
        )

    made = {"function": 0, "aggregate": 0, "operator": 0}
    evil.execute("CREATE SEQUENCE evil.calls")
    n = 0
    for name, kind, retset, ret, argtypes in functions:
        n += 1
        args = ", ".join(argtypes)
        ident = sql.Identifier(name).as_string(evil)
        dollar = ", ".join(f"${i + 1}" for i in range(len(argtypes)))
        if kind == "f":
            if retset:
                body = f"RETURN QUERY SELECT pg_catalog.{ident}({dollar});"
            elif ret == "void":
                body = f"PERFORM pg_catalog.{ident}({dollar});"
            else:
                body = f"RETURN pg_catalog.{ident}({dollar});"
            stmt = (
                f"CREATE FUNCTION evil.{ident}({args}) RETURNS {'SETOF ' if retset else ''}{ret}"
                f" LANGUAGE plpgsql AS $evil$ BEGIN {count_and_warn(name)}{body} END $evil$"
            )
        else:
            step = f"evil.agg_step_{n}"
            state_args = ", ".join([ret, *argtypes])
            stmt = (
                f"CREATE FUNCTION {step}({state_args}) RETURNS {ret} LANGUAGE plpgsql"
                f" AS $evil$ BEGIN {count_and_warn(name)}RETURN $1; END $evil$;"
                f" CREATE AGGREGATE evil.{ident}({args or '*'}) (SFUNC = {step}, STYPE = {ret})"
            )
        try:
            with evil.transaction():
                evil.execute(stmt.replace("%%", "%"))
            made["function" if kind == "f" else "aggregate"] += 1
        except psycopg.errors.Error:  # a polymorphic shape PL/pgSQL cannot take: not shadowed
            pass
    for name, kind, left, right, result, code in operators:
        n += 1
        fn = f"evil.op_{n}"
        text_eq = name == "=" and left == right == "text"
        operands = [t for t in (left if kind == "b" else None, right) if t]
        call = (
            "true"
            if text_eq
            else f"pg_catalog.{code}({', '.join(f'${i + 1}' for i in range(len(operands)))})"
        )
        stmt = (
            f"CREATE FUNCTION {fn}({', '.join(operands)}) RETURNS {result} LANGUAGE plpgsql"
            f" AS $evil$ BEGIN {count_and_warn(name)}RETURN {call}; END $evil$;"
            f" CREATE OPERATOR evil.{name} ("
            + (f"LEFTARG = {left}, " if kind == "b" else "")
            + f"RIGHTARG = {right}, FUNCTION = {fn})"
        )
        try:
            with evil.transaction():
                evil.execute(stmt.replace("%%", "%"))
            made["operator"] += 1
        except psycopg.errors.Error:
            pass
    evil.execute("GRANT USAGE ON SCHEMA evil TO PUBLIC")
    evil.execute("GRANT USAGE, SELECT, UPDATE ON SEQUENCE evil.calls TO PUBLIC")
    return made


def evil_calls(su: psycopg.Connection) -> int:
    last, called = su.execute("SELECT last_value, is_called FROM evil.calls").fetchone()
    return last if called else 0


def hostile(m: Membership, search_path: str, odd: bool = False) -> list[str]:
    """Give `m` the hostile search_path (and the odd settings); returns the list its EVIL
    warnings will land in."""
    heard: list[str] = []
    m.conn.add_notice_handler(
        lambda d: (
            heard.append(d.message_primary or "") if "EVIL" in (d.message_primary or "") else None
        )
    )
    m.conn.execute(sql.SQL("SET search_path = {}").format(sql.SQL(search_path)))
    m.conn.execute("SET client_min_messages = notice")
    for name, value in ODD_SETTINGS.items() if odd else ():
        m.conn.execute("SELECT pg_catalog.set_config(%s, %s, false)", (name, value))
        shown = m.conn.execute("SELECT pg_catalog.current_setting(%s)", (name,)).fetchone()
        assert shown == (value,), name
    return heard


class Flow:
    """One run through every write path, recording what a caller can observe, with community
    ids, invite codes, times, event ids and signatures left out (all events are verified)."""

    def __init__(self, m: Membership, clean: Membership, pk: dict[str, str], prefix: str):
        self.m, self.clean, self.pk, self.prefix = m, clean, pk, prefix
        self.labels: dict[str, str] = {}
        self.seen: list[Any] = []

    def label(self, value: Any) -> Any:
        if isinstance(value, uuid.UUID):
            return self.labels.get(str(value), "unknown community")
        return value

    def state(self, cid: Any) -> Any:
        members = self.clean.relay_members(cid)
        live = self.clean.member_list(cid)
        assert self.clean.member_list_drift(cid) == []
        if live is not None:
            assert live["pubkey"] == self.m.signer.pubkey
            assert live["tags"] == [["-"]] + [
                ["member", x.pubkey, x.role, *x.roles] for x in members
            ]
            verify_both(live)
        return (
            [(x.pubkey, x.role, x.added_by, x.roles) for x in members],
            live["tags"] if live else None,
            [ev["tags"] for ev in self.clean.role_definitions(cid)],
            [ev["tags"][1][1].rsplit(":", 1)[1] for ev in self.clean.role_deletions(cid)],
        )

    def step(self, what: str, call: Callable[[], Any], *cids: Any, any_order: bool = False) -> Any:
        """One call, and what it did; any_order: its events compared as a set (prepare orders
        communities by their lock keys, which differ from run to run)."""
        try:
            result = call()
        except BuzzError as exc:
            self.seen.append((what, "error", exc.sqlstate))
            return None
        if isinstance(result, MembershipWrite):
            for ev in result.events:
                verify_both(ev)
                assert ev["pubkey"] == self.m.signer.pubkey
            if result.snapshot is not None:
                assert all(
                    ev["created_at"] == result.snapshot["created_at"] for ev in result.events
                )
            events = [(ev["kind"], ev["tags"]) for ev in result.events]
            if any_order:
                events.sort(key=lambda e: (e[0], json.dumps(e[1])))
            observed = (
                self.label(result.outcome),
                {k: self.label(v) for k, v in result.details.items()},
                events,
            )
        elif isinstance(result, tuple) and hasattr(result, "code"):  # an Invite
            assert re.fullmatch(r"[0-9a-f]{32}", result.code)
            observed = "invite"
        else:
            observed = self.label(result)
        self.seen.append((what, observed, [self.state(cid) for cid in cids]))
        return result

    def community(self, name: str, host: str, owner: str) -> Any:
        w = self.step(f"create {name}", lambda: self.m.create_community(host, owner))
        cid = w.details["community_id"]
        self.labels[str(cid)] = name
        self.seen[-1] = (*self.seen[-1][:2], [self.state(cid)])
        return cid

    def run(self) -> list[Any]:
        m, pk, p = self.m, self.pk, self.prefix
        a = self.community("A", f"{p}a.example.org", pk["owner"])
        self.step("create A again", lambda: m.create_community(f"{p}A.example.org", pk["owner"]))
        self.step("host taken", lambda: m.create_community(f"{p}a.example.org", pk["bob"]))
        self.step("add", lambda: m.add_relay_member(a, pk["alice"], "admin", pk["owner"]), a)
        self.step("add again", lambda: m.add_relay_member(a, pk["alice"].upper()), a)
        self.step(
            "add batch",
            lambda: m.add_relay_members(a, [pk["bob"], pk["carol"], pk["alice"]], "member", "imp"),
            a,
        )
        self.step("claim", lambda: m.claim_relay_membership(a, pk["dave"], "v1"), a)
        inv = self.step(
            "invite", lambda: m.create_relay_invite(a, pk["owner"], 2, dt.timedelta(hours=1))
        )
        self.step("claim invite", lambda: m.claim_relay_invite(a, inv.code, pk["erin"], "v2"), a)
        self.step("claim invite again", lambda: m.claim_relay_invite(a, inv.code, pk["erin"]), a)
        self.step("claim bad code", lambda: m.claim_relay_invite(a, "f" * 32, pk["frank"]), a)
        self.step("revoke", lambda: m.revoke_relay_invite(a, inv.invite_id))
        self.step("claim revoked", lambda: m.claim_relay_invite(a, inv.code, pk["frank"]), a)
        self.step("remove", lambda: m.remove_relay_member(a, pk["bob"]), a)
        self.step("remove again", lambda: m.remove_relay_member(a, pk["bob"]), a)
        self.step(
            "remove if admin", lambda: m.remove_relay_member_if_role(a, pk["carol"], "admin"), a
        )
        self.step(
            "remove if member", lambda: m.remove_relay_member_if_role(a, pk["carol"], "member"), a
        )
        self.step("update role", lambda: m.update_relay_member_role(a, pk["dave"], "admin"), a)
        self.step("define role", lambda: m.define_role(a, "mod", 'Mod "x" é', "d", 10, -1), a)
        self.step("define role again", lambda: m.define_role(a, "mod", 'Mod "x" é', "d", 10, -1), a)
        self.step("redefine base role", lambda: m.define_role(a, "admin", "Admins", order=1), a)
        self.step("define bad role", lambda: m.define_role(a, "Mod", "Mod"), a)
        self.step("assign role", lambda: m.assign_role(a, pk["dave"], "mod"), a)
        self.step("assign role again", lambda: m.assign_role(a, pk["dave"].upper(), "mod"), a)
        self.step("assign undefined", lambda: m.assign_role(a, pk["dave"], "ghost"), a)
        self.step("define role 2", lambda: m.define_role(a, "vip", "VIP"), a)
        self.step("assign role 2", lambda: m.assign_role(a, pk["dave"], "vip"), a)
        self.step("unassign role", lambda: m.unassign_role(a, pk["dave"], "vip"), a)
        self.step("unassign role again", lambda: m.unassign_role(a, pk["dave"], "vip"), a)
        self.step("delete held role", lambda: m.delete_role(a, "mod"), a)
        self.step("delete base role", lambda: m.delete_role(a, "owner"), a)
        self.step("transfer", lambda: m.transfer_ownership(a, pk["alice"], pk["owner"]), a)
        self.step("transfer stale", lambda: m.transfer_ownership(a, pk["dave"], pk["owner"]), a)
        self.step("bootstrap", lambda: m.bootstrap_owner(a, pk["owner"]), a)
        b = self.community("B", f"{p}b.example.org", pk["owner2"])
        self.step("allowlist", lambda: m.allowlist_add(b, pk["frank"], "a note"), b)
        self.step("allowlist 2", lambda: m.allowlist_add(b, pk["gina"]), b)
        self.step("allowlist again", lambda: m.allowlist_add(b, pk["frank"]), b)
        self.step("backfill", lambda: m.backfill_from_allowlist(b), b)
        self.step("backfill again", lambda: m.backfill_from_allowlist(b), b)
        self.step("republish", lambda: m.republish_member_list(a), a)
        self.step("archive", lambda: m.archive_community(b), b)
        self.step("add to archived", lambda: m.add_relay_member(b, pk["hank"]), b)
        self.step("unarchive", lambda: m.unarchive_community(b), b)

        def both() -> MembershipWrite:
            with m.transaction() as tx:
                tx.add_relay_member(a, pk["hank"])
                tx.add_relay_member(b, pk["ivan"], "admin")
                tx.remove_relay_member(a, pk["dave"])
            assert set(tx.lists) == {str(a), str(b)}
            w = MembershipWrite.of(None, tx.published)
            assert w.snapshot is None  # two lists: no one snapshot
            assert w.events == tx.events and len(w.events) == 5
            return w

        self.step("one transaction, two communities", both, a, b, any_order=True)
        self.step("bad pubkey", lambda: m.add_relay_member(a, "nope"), a)
        self.step("bad host", lambda: m.create_community("bad host/", pk["judy"]))
        self.step("bad role", lambda: m.add_relay_member(a, pk["judy"], "owner"), a)
        self.step("no community", lambda: m.add_relay_member(uuid.uuid4(), pk["judy"]))
        self.step("look up", lambda: m.community_id(f"{p}A.EXAMPLE.ORG"))
        self.step("members", lambda: [(x.pubkey, x.role, x.added_by) for x in m.relay_members(a)])
        self.step("list", lambda: m.member_list(a)["tags"])
        self.step("events", lambda: [(e["kind"], e["tags"]) for e in m.membership_events(a)])
        self.step("delete", lambda: m.delete_community(b))
        self.step("delete again", lambda: m.delete_community(b))
        self.step("look up deleted", lambda: m.community_id(f"{p}b.example.org"))
        return self.seen


@pytest.mark.parametrize("case", list(SEARCH_PATHS))
def test_a_hostile_search_path_changes_nothing(db_url, key, su, reader, login_role, case):
    """A LOGIN writer owns schema evil and fills it with shadows of pg_catalog. The same flow of
    every write path runs in a clean session and in a session whose search_path puts evil
    first: same outcomes, same members and tags, every event verifies, and no shadow is ever
    called; then a key rotation, and the writer's and a reader's own calls, under that path.

    The hostile flow runs in a superuser's session, with the writer's evil schema: a LOGIN
    writer cannot commit a write that changes members on this code (see the writer test); the
    API's functions run as buzz_owner with their own search_path whoever calls them."""
    search_path, odd = SEARCH_PATHS[case], case.endswith("odd-settings")
    role = login_role("buzz_writer")
    su.execute(sql.SQL("CREATE SCHEMA evil AUTHORIZATION {}").format(sql.Identifier(role)))
    with psycopg.connect(as_role(db_url, role), autocommit=True) as evil:
        made = build_evil_schema(evil, su)
    assert made["function"] >= 40 and made["aggregate"] >= 3 and made["operator"] >= 100, made
    shadowed = {
        r[0]
        for r in su.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p"
            " WHERE p.pronamespace = 'evil'::regnamespace"
        )
    }
    for fn in (
        "lower(text)", "sha256(bytea)", "encode(bytea,text)", "now()", "clock_timestamp()",
        "length(text)", "gen_random_uuid()", "to_json(anyelement)", "convert_to(text,name)",
        "hashtext(text)", "pg_advisory_xact_lock(bigint)", "string_agg(text,text)",
    ):  # fmt: skip
        assert f"evil.{fn}" in shadowed, fn

    pk = {
        name: new_pubkey()
        for name in (
            "owner", "owner2", "alice", "bob", "carol", "dave", "erin", "frank", "gina",
            "hank", "ivan", "judy",
        )
    }  # fmt: skip
    clean = Flow(Membership(reader.conn, key), reader, pk, "clean-").run()

    with Membership.connect(db_url, key) as m:
        heard = hostile(m, search_path, odd)
        # The shadows work for whoever runs unqualified SQL under that path, the API's owner
        # too: without its pinned search_path, the API would call them.
        if search_path.startswith("evil, "):
            for role_sql in ("RESET ROLE", "SET ROLE buzz_owner"):
                m.conn.execute(role_sql)
                before = evil_calls(su)
                assert m.conn.execute(
                    "SELECT lower('X'), 'a'::text = 'b'::text, sha256('x'::bytea) IS NOT NULL"
                ).fetchone() == ("x", True, True)
                assert evil_calls(su) == before + 3, role_sql
            m.conn.execute("RESET ROLE")
            assert heard
            heard.clear()
        else:  # pg_catalog, searched first, hides every shadow of its own functions
            assert m.conn.execute("SELECT 'a'::text = 'b'::text").fetchone() == (False,)
        before = evil_calls(su)

        assert Flow(m, reader, pk, "evil-").run() == clean

        # A rotation, and writes after it with the new key and the old.
        new_key = RelayKey.generate()
        with Membership.connect(db_url, new_key) as m2:
            heard2 = hostile(m2, search_path, odd)
            rotated = []
            while (r := m2.rotate_relay_key(new_key.pubkey, limit=1)).outcome:
                rotated.append(r)
            lists = [ev for r in rotated for ev in r.events if ev["kind"] == 13534]
            assert len(lists) == len(rotated) == 2  # the live communities: clean-A and evil-A
            for ev in lists:
                assert ev["pubkey"] == new_key.pubkey
                verify_both(ev)
            a = m2.community_id("evil-a.example.org")
            w = m2.add_relay_member(a, new_pubkey())
            assert w.outcome == "added"
            assert_list_event(
                w.snapshot, new_key.pubkey, {x.pubkey: x.role for x in reader.relay_members(a)}
            )
            assert sqlstate(lambda: m.add_relay_member(a, new_pubkey())) == "BZKEY"
            assert heard2 == []
        assert reader.member_list_drift() == []

        # The reads of the writer and of a reader role under the same path: as a clean session's.
        reader_role = login_role("buzz_reader")
        for who in (role, reader_role):
            with Membership.connect(as_role(db_url, who), new_key) as r:
                heard_r = hostile(r, search_path, odd)
                if who == role:  # the writer's writes that commit no list
                    a = r.community_id("evil-a.example.org")
                    inv = r.create_relay_invite(a, pk["owner"])
                    assert re.fullmatch(r"[0-9a-f]{32}", inv.code)
                    assert r.claim_relay_invite(a, "e" * 32, pk["judy"]).outcome == "invalid"
                    assert r.revoke_relay_invite(a, inv.invite_id) == "revoked"
                    assert r.allowlist_add(a, pk["judy"]) == "added"
                    assert r.allowlist_add(a, pk["judy"].upper()) == "already_listed"
                    assert r.archive_community(a) == "archived"
                    assert sqlstate(lambda a=a: r.add_relay_member(a, pk["judy"])) == "BZARC"
                    assert r.unarchive_community(a) == "unarchived"
                    assert r.add_relay_member(a, pk["alice"]).outcome == "already_member"
                    assert sqlstate(lambda a=a: r.add_relay_member(a, "nope")) == "BZIPK"
                for host in ("clean-a.example.org", "evil-a.example.org"):
                    cid = reader.community_id(host)
                    assert reads(r, cid, host) == reads(reader, cid, host)
                assert heard_r == []
        assert evil_calls(su) == before
        assert heard == []


# ----------------------------------------------------------------------- the secret itself


def _secret_forms(key: RelayKey) -> list[str]:
    """Every way the secret could be written, and long pieces of it."""
    hexa, nsec = key.secret_hex(), key.nsec()
    forms = [hexa, hexa.upper(), nsec, nsec.upper(), nsec[5:-6]]
    forms += [hexa[i : i + 16] for i in range(0, 64, 8)]
    return forms


def _assert_secret_absent(text: str, key: RelayKey, where: str) -> None:
    for form in _secret_forms(key):
        assert form not in text and form.lower() not in text.lower(), where


def _buzz_admin(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "buzz_signer.cli", *map(str, args)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        umask=0,  # the file's mode must not depend on the caller's umask
    )


def test_keygen_writes_a_private_key_file_and_prints_no_secret(tmp_path):
    """A real `buzz-admin keygen` process, under umask 0: the key file is 0600 whatever the
    umask, a link is never written through, and no secret is printed unless --show-secret."""
    import secret_watch

    path = tmp_path / "relay.key"
    run = _buzz_admin("keygen", path)
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_uid == os.geteuid()
    assert re.fullmatch(r"[0-9a-f]{64}\n", path.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an InsecureKeyFileWarning would fail here
        key = RelayKey.from_file(path)  # the secret watch knows this key from here on
    assert f"pubkey {key.pubkey}" in run.stdout and key.npub in run.stdout
    _assert_secret_absent(run.stdout + run.stderr, key, "keygen output")
    assert secret_watch.leaks_in(run.stdout + run.stderr) == 0

    # --show-secret shows it, in both forms, and it is the file's.
    shown = tmp_path / "shown.key"
    run = _buzz_admin("keygen", shown, "--show-secret")
    assert run.returncode == 0, run.stderr
    shown_key = RelayKey.from_file(shown)
    assert f"secret {shown_key.secret_hex()}" in run.stdout.splitlines()
    assert f"nsec   {shown_key.nsec()}" in run.stdout.splitlines()
    secret_watch.watch(shown_key.secret_hex())  # already known, unless the watch is off
    secret_watch.watch(shown_key.nsec())
    assert secret_watch.leaks_in(run.stdout) == 2  # the watch would see both forms
    _assert_secret_absent(run.stderr, shown_key, "keygen --show-secret stderr")

    # An existing file, or a link (even a dangling one), is never written through.
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere.key")
    for target in (path, tmp_path / "link"):
        before = target.read_text() if target.exists() else None
        run = _buzz_admin("keygen", target)
        assert run.returncode != 0
        assert "not overwriting" in run.stderr
        assert (target.read_text() if target.exists() else None) == before
        _assert_secret_absent(run.stdout + run.stderr, key, "keygen refusal")
        assert not re.search(r"[0-9a-f]{64}|nsec1", run.stdout + run.stderr, re.IGNORECASE)
    assert not (tmp_path / "elsewhere.key").exists()
    assert RelayKey.from_file(path).pubkey == key.pubkey


def _near_misses(key: RelayKey) -> dict[str, str]:
    """Values an operator could put in the variable by mistake, each almost the secret."""
    hexa, nsec = key.secret_hex(), key.nsec()
    typo = hexa[:20] + ("0" if hexa[20] != "0" else "1") + hexa[21:]
    return {
        "hex with a letter off the alphabet": hexa[:-1] + "g",
        "hex one short": hexa[:-1],
        "hex one long": hexa + "0",
        "hex quoted": f'"{hexa}"',
        "hex with 0x": "0x" + hexa,
        "hex with an inner space": hexa[:32] + " " + hexa[32:],
        "export line": f"BUZZ_RELAY_SECRET_KEY={hexa}",
        "two keys": f"{hexa} {typo}",
        "nsec with a bad checksum": nsec[:-1] + ("q" if nsec[-1] != "q" else "p"),
        "nsec truncated": nsec[:-3],
        "nsec quoted": f"'{nsec}'",
        "nsec with a typo": nsec[:20] + ("q" if nsec[20] != "q" else "p") + nsec[21:],
    }


def test_from_env_never_shows_the_value_it_refuses(monkeypatch):
    key = RelayKey.generate()
    for var in ("BUZZ_RELAY_SECRET_KEY", "RELAY_KEY_FOR_TESTS"):
        for what, value in _near_misses(key).items():
            monkeypatch.setenv(var, value)
            with pytest.raises(InvalidKey) as info:
                RelayKey.from_env() if var == "BUZZ_RELAY_SECRET_KEY" else RelayKey.from_env(var)
            exc = info.value
            text = "".join(traceback.format_exception(exc)) + repr(exc) + repr(exc.args)
            assert var in str(exc), what
            _assert_secret_absent(text, key, what)
            for piece in (value, value.strip("'\""), value[:24], value[-24:]):
                assert piece not in text, what
            # Nothing chained: a traceback or a logger would print the cause.
            assert exc.__cause__ is None, what
            assert exc.__context__ is None or exc.__suppress_context__, what
            # ... and the frame locals of the traceback hold the value, so a "with locals"
            # formatter must not be what shows it: the exception itself carries nothing.
            assert not [a for a in exc.args if value in str(a)], what

    # The valid value works, and nothing made from it shows it.
    monkeypatch.setenv("BUZZ_RELAY_SECRET_KEY", f"  {key.nsec().upper()}\n")
    loaded = RelayKey.from_env()
    assert loaded.pubkey == key.pubkey
    _assert_secret_absent(repr(loaded) + str(loaded) + repr(vars(type(loaded))), key, "repr")


def test_buzz_admin_shows_nothing_of_the_key_variable(db_url):
    """buzz-admin reads BUZZ_RELAY_SECRET_KEY: its refusals of a near miss, and its failures
    with a good key, show neither the value nor the secret."""
    key = RelayKey.generate()
    misses = _near_misses(key)
    missing_db = make_conninfo(db_url, dbname=f"missing_{uuid.uuid4().hex}")
    cases = [
        *((misses[what], db_url) for what in ("hex one short", "export line", "nsec with a typo")),
        (key.secret_hex(), missing_db),
        (key.nsec(), missing_db),
    ]
    for value, url in cases:
        run = _buzz_admin("verify", env={"BUZZ_RELAY_SECRET_KEY": value, "DATABASE_URL": url})
        out = run.stdout + run.stderr
        assert run.returncode != 0, out
        _assert_secret_absent(out, key, f"buzz-admin verify, {value[:4]}...")
        assert value not in out and value[:24] not in out and value[-24:] not in out


PEOPLE = ("owner", "owner2", "alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank",
          "ivan", "judy")  # fmt: skip


def test_writer_login_role_commits_every_write_path(db_url, key, reader, login_role):
    """A LOGIN member of buzz_writer runs the whole flow of write paths to COMMIT, and sees
    what a superuser sees: the commit-time triggers run as the functions' owner, not as the
    committing role (which has no access to buzz_private)."""
    writer = login_role("buzz_writer")
    pk = {name: new_pubkey() for name in PEOPLE}
    as_superuser = Flow(Membership(reader.conn, key), reader, pk, "su-").run()
    with Membership.connect(as_role(db_url, writer), key) as w:
        assert w.conn.execute("SELECT current_user").fetchone() == (writer,)
        assert Flow(w, reader, pk, "writer-").run() == as_superuser
    assert reader.member_list_drift() == []


def test_a_callers_temporary_types_never_run_inside_the_api(db_url, mem, reader, login_role):
    """PostgreSQL looks types up in the caller's temporary schema first unless the path lists
    it: with an empty search_path a writer's pg_temp.text domain would run its CHECK as
    buzz_owner inside the API. The API pins pg_catalog, pg_temp: the trap never fires."""
    cid = mem.create_community(new_host(), new_pubkey()).details["community_id"]
    writer = login_role("buzz_writer")
    with psycopg.connect(as_role(db_url, writer), autocommit=True) as c:
        c.execute(
            "CREATE FUNCTION pg_temp.trap(v pg_catalog.text) RETURNS pg_catalog.bool"
            " LANGUAGE plpgsql AS $$ BEGIN"
            " RAISE EXCEPTION 'temporary code ran as %', pg_catalog.current_user(); END $$"
        )
        for t in ("text", "uuid", "int4", "bool", "jsonb", "bytea", "interval", "xid8"):
            c.execute(
                f"CREATE DOMAIN pg_temp.{t} AS pg_catalog.{t}"
                f" CHECK (pg_temp.trap(VALUE::pg_catalog.text))"
            )
        # Armed: the caller's own unqualified types are the traps.
        with pytest.raises(psycopg.Error, match="temporary code ran as"):
            c.execute("SELECT 'x'::text")
        member = new_pubkey()
        assert c.execute("SELECT buzz.allowlist_add(%s, %s, 'n')", (cid, member)).fetchone() == (
            "added",
        )
        assert c.execute("SELECT count(*) FROM buzz.relay_members(%s)", (cid,)).fetchone() == (1,)
        assert c.execute("SELECT buzz.member_list(%s) IS NOT NULL", (cid,)).fetchone() == (True,)
    assert reader.member_list_drift() == []


@pytest.mark.parametrize("host", ["a b.example.org", "a/b.example.org", "x_y.org", "a\\.b.org"])
def test_hosts_are_checked_whatever_the_callers_string_settings(conn, host):
    """With standard_conforming_strings off a backslash in a pattern literal means something
    else; the host check has none, so it refuses the same hosts either way."""
    conn.execute("SET standard_conforming_strings = off")
    with pytest.raises(psycopg.Error) as caught:
        conn.execute("SELECT * FROM buzz.create_community(%s, %s)", (host, new_pubkey()))
    assert caught.value.sqlstate == "BZHST"
    conn.rollback()
