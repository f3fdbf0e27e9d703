"""The schema sharded by community on a Citus cluster (docs/scale-out.md).

`buzz-admin migrate` (or `alembic upgrade head`) on a coordinator's database, one with the
citus extension, runs the migrations as anywhere, then `distribute` instead of only applying
the function files, and after that transaction `copy_scratch_tables`. Both are idempotent
and run on every upgrade.

How a write runs on the cluster:

- db/citus/distribute.sql makes communities, settings and the relay key reference tables
  and distributes every other table by community_id, co-located, so that one community's
  rows are on one worker.
- Each write path of one community (WORKER_WRITES) runs on that worker: its one-server
  implementation moves to the schema buzz_node and is delegated there (Citus's
  create_distributed_function, force_delegation); the function of the same name in buzz
  becomes a routing wrapper. The wrapper calls it (so the worker runs it in this
  transaction, with the worker's row and advisory locks and triggers) and then marks the
  community on the coordinator (buzz_private.mark_routed), a mark that prepare, or else the
  coordinator's commit guard, settles with the worker. A transaction writes one community
  (buzz_private.route_to).
- create_community, archive, unarchive, delete and the relay key's rotation run on the
  coordinator, which alone may write the reference tables, and so does transfer_ownership,
  which counts the new owner's communities on every worker; Citus sends their statements on
  distributed tables to the shards.
- prepare_membership_events and insert_signed_events on the coordinator (db/citus/functions)
  forward each marked community's phase to its worker. The coordinator's own commit guard
  refuses a COMMIT whose marked communities are unsigned, with BZUNS, before Citus commits
  the workers (whose guards refuse it too).
- The tx_* scratch tables are local on every node: a transaction's bookkeeping stays where its
  writes run, and no statement reads both them and a distributed table.
- lock_community takes no row lock on communities, a reference table (db/citus/functions
  says why), and the SQL functions that read distributed tables become PL/pgSQL
  (READ_FUNCTIONS).

Every call reaches the workers as the functions' owner (they are SECURITY DEFINER, and the
wrappers call the workers from inside), as Citus requires of one transaction's accesses to a
shard.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from .sqlfiles import CITUS_DIR, apply_function_files, split_statements

__all__ = ["WORKER_WRITES", "copy_scratch_tables", "distribute"]

# The write paths of one community (their first argument, p_community), run on its worker.
WORKER_WRITES = (
    "add_relay_member",
    "add_relay_members",
    "allowlist_add",
    "approve_join_request",
    "assign_role",
    "backfill_from_allowlist",
    "ban_pubkey",
    "bootstrap_owner",
    "claim_relay_invite",
    "claim_relay_membership",
    "create_relay_invite",
    "define_role",
    "delete_role",
    "reject_join_request",
    "remove_relay_member",
    "remove_relay_member_if_role",
    "republish_member_list",
    "request_membership",
    "revoke_relay_invite",
    "set_community_profile",
    "set_invite_quota",
    "set_join_policy",
    "unassign_role",
    "unban_pubkey",
    "update_relay_member_role",
)
# Locks are taken in one order across nodes, so that no cycle of waits forms:
# 1. on the community's worker, its locks, as a write there takes them: the ownership lock
#    (a transfer; bootstrap_owner takes it there), then the community lock
#    (buzz_node.hold_community);
# 2. on the coordinator, the relay-key lock shared, taken by every path run there before it
#    changes the reference table communities: Citus locks such a change as a change of the
#    whole table, which a rotation, holding the relay-key lock exclusive, would wait for;
# 3. the owner-limit lock (create_community, transfer_ownership);
# 4. at prepare, each community's list lock on the coordinator, then on its worker.
# A write of one community takes the relay-key lock at prepare, after its community lock. A
# path run on the coordinator that writes a community's rows (a deletion, a transfer) takes its
# community lock exclusive, so that it waits for that community's writes under way before it
# holds the relay-key lock: holding it, it would wait for their rows, their prepares would
# queue behind a rotation waiting for it, and no one would move. A rotation takes no worker's
# community or ownership lock.
#
# Write paths of one community that also count across communities (an owner's), which a
# worker cannot: they run on the coordinator, behind the same wrapper as WORKER_WRITES.
COORDINATOR_WRITES = ("transfer_ownership",)
# Run on the coordinator behind a wrapper of db/citus/functions of the same name.
COORDINATOR_WRAPPED = ("create_community",)
# The moderation writes (ban_event, allow_kind, block_ip, assign_method, their inverses) are
# not routed: they run on the coordinator as the function files make them, their statements
# on one community's shards sent to its worker by Citus, since each NOTIFYs buzz_moderation,
# which a worker cannot (see tx_announcements) and listeners hear on the coordinator. They
# change no member and owe no list, so nothing is marked for prepare; their moderation lock
# (advisory, class 6) is taken on the coordinator, where all of them run.
# Changes of the reference table communities, run on the coordinator behind a wrapper that
# takes the locks above first. (SELECT * FROM: Citus delegates no call that PL/pgSQL runs as
# a simple expression. Never with a NULL community, whose delegated call crashes Citus 13.2's
# server process: a NULL community is not found, as on one server.)
COORDINATOR_CHANGES = {
    "archive_community": "PERFORM buzz_private.lock_relay_key(false);",
    "unarchive_community": "PERFORM buzz_private.lock_relay_key(false);",
    "delete_community": "IF p_community IS NOT NULL THEN"
    " EXECUTE 'SELECT * FROM buzz_node.hold_community($1, true)' USING p_community; END IF;"
    " PERFORM buzz_private.lock_relay_key(false);",
}
# The functions each worker runs for the coordinator, by the argument that routes them.
NODE_FUNCTIONS = {
    "buzz_node.prepare_events(text, uuid, boolean)": "p_community",
    "buzz_node.insert_events(text[], text[], uuid)": "p_community",
    "buzz_node.owes_list(uuid)": "p_community",
    "buzz_node.hold_community(uuid, boolean)": "p_community",
    "buzz_node.lock_ownership(uuid)": "p_community",
}
# The SQL functions that read distributed tables: Citus cannot plan a query of an SQL
# function's body whose parameters have no values yet, so on a cluster each is the same
# query in PL/pgSQL, whose parameters reach Citus's planner with their values.
READ_FUNCTIONS = (
    "buzz.banned_events(uuid)",
    "buzz.banned_pubkeys(uuid)",
    "buzz.blocked_ips(uuid)",
    "buzz.community_id(text)",
    "buzz.community_profile(uuid)",
    "buzz.invite_quotas(uuid)",
    "buzz.join_requests(uuid)",
    "buzz.kind_rules(uuid)",
    "buzz.member_list(uuid)",
    "buzz.membership_events(uuid, bigint)",
    "buzz.method_assignees(uuid)",
    "buzz.moderation_rules(uuid)",
    "buzz.relay_invites(uuid)",
    "buzz.relay_member(uuid, text)",
    "buzz.relay_members(uuid)",
    "buzz.role_definitions(uuid)",
    "buzz.role_deletions(uuid)",
)
# The per-transaction scratch tables, local on each node.
SCRATCH_TABLES = (
    "buzz_private.tx_pending_lists",
    "buzz_private.tx_member_changes",
    "buzz_private.tx_role_changes",
    "buzz_private.tx_prepared_events",
    "buzz_private.tx_published_events",
)
COLOCATE_WITH = "buzz_private.relay_members"


def _run_file(conn: psycopg.Connection, path) -> None:
    # One statement at a time: Citus sends a function's DDL to the workers as the command it
    # came in, and a worker refuses several commands in one.
    for statement in split_statements(path.read_text(encoding="utf-8")):
        conn.execute(statement)


def distribute(conn: psycopg.Connection) -> None:
    """Shard the schema by community, in the open transaction (the migration's).

    The tables first, then the function files (distributing a table drops the SQL-standard
    functions that name it, and Citus sends the workers a function once its tables are
    distributed), then the cluster's own functions and the routing of the write paths.
    """
    _run_file(conn, CITUS_DIR / "distribute.sql")
    apply_function_files(conn, one_statement_at_a_time=True)
    # The coordinator announces what the workers made live (announce_routed): a worker that
    # ran NOTIFY could not take part in a two-phase commit.
    for table in ("member_lists", "role_events"):
        conn.execute(f"DROP TRIGGER {table}_announce_at_commit ON buzz_private.{table}")
    for signature in READ_FUNCTIONS:
        _as_plpgsql(conn, signature)
    for name in (*WORKER_WRITES, *COORDINATOR_WRITES, *COORDINATOR_WRAPPED, *COORDINATOR_CHANGES):
        _move_to_node(conn, name)
    conn.execute("SET LOCAL check_function_bodies = off")
    for path in sorted((CITUS_DIR / "functions").glob("*.sql")):
        _run_file(conn, path)
    conn.execute("RESET check_function_bodies")
    for name in WORKER_WRITES:
        _wrap(conn, name, _BEFORE, _MARK)
    for name in COORDINATOR_WRITES:
        _wrap(conn, name, _BEFORE + _COORDINATOR_LOCKS, _MARK)
    for name, before in COORDINATOR_CHANGES.items():
        _wrap(conn, name, sql.SQL(before), sql.SQL(""))
    for name in WORKER_WRITES:
        _delegate(conn, _function(conn, "buzz_node", name)["signature"], "p_community")
    for signature, argument in NODE_FUNCTIONS.items():
        _delegate(conn, signature, argument)
    # A role deleted takes itself from its holders in the trigger on roles, which fires on the
    # shard, during the statement: Citus refuses a statement on a distributed table there
    # unless allowed. Its statements name the triggering rows' community, whose shards are
    # co-located on that worker, so Citus runs them there, in the same transaction.
    conn.execute(
        "ALTER FUNCTION buzz_private.track_role_changes()"
        " SET citus.allow_nested_distributed_execution = on"
    )
    # Each counts the owner's communities across the shards. create_community then adds to
    # the reference table communities, which the distributed tables reference, and a transfer
    # may be followed in its transaction by an archive or a deletion, which change it: Citus
    # allows that only after a count over one connection per worker.
    for signature in ("create_community(text, text)", "transfer_ownership(uuid, text, text)"):
        conn.execute(
            f"ALTER FUNCTION buzz_node.{signature} SET citus.multi_shard_modify_mode = 'sequential'"
        )


def _function(conn: psycopg.Connection, schema: str, name: str) -> dict:
    row = conn.execute(
        """
        SELECT p.oid::regprocedure::text AS signature,
               pg_catalog.pg_get_function_identity_arguments(p.oid) AS identity,
               pg_catalog.pg_get_function_arguments(p.oid) AS arguments,
               pg_catalog.pg_get_function_result(p.oid) AS result,
               p.proargnames[1:p.pronargs] AS argument_names,
               pg_catalog.obj_description(p.oid, 'pg_proc') AS comment,
               ARRAY(SELECT a.grantee::regrole::text
                     FROM pg_catalog.aclexplode(p.proacl) AS a
                     WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner
                       AND a.grantee <> 0) AS grantees
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = %s::regnamespace AND p.proname = %s
        """,
        (schema, name),
    ).fetchall()
    if len(row) != 1:
        raise RuntimeError(f"expected one function {schema}.{name}, found {len(row)}")
    columns = ("signature", "identity", "arguments", "result", "argument_names", "comment", "grantees")
    return dict(zip(columns, row[0], strict=True))


def _as_plpgsql(conn: psycopg.Connection, signature: str) -> None:
    """Replace the SQL function `signature` with the same query in PL/pgSQL (its arguments,
    result, volatility, security, settings, grants and comment are kept)."""
    definition, body, returns_set, result_types = conn.execute(
        """
        SELECT pg_catalog.pg_get_functiondef(p.oid), p.prosrc, p.proretset,
               ARRAY(SELECT pg_catalog.format_type(t.type, NULL)
                     FROM ROWS FROM (
                              pg_catalog.unnest(coalesce(p.proallargtypes, ARRAY[p.prorettype])),
                              pg_catalog.unnest(coalesce(p.proargmodes, ARRAY['o']::"char"[])))
                              AS t (type, mode)
                     WHERE t.mode IN ('o', 't'))
        FROM pg_catalog.pg_proc p WHERE p.oid = %s::regprocedure
        """,
        (signature,),
    ).fetchone()
    head, sep, sql_body = definition.partition("\nBEGIN ATOMIC\n")
    if sep:  # BEGIN ATOMIC <query>; END
        query = sql_body.rstrip().removesuffix("END").rstrip().removesuffix(";")
    elif "\nRETURN " in definition:  # RETURN <expression>
        head, _, expression = definition.partition("\nRETURN ")
        query = "SELECT " + expression.strip()
    else:  # AS $$ <query> $$
        head = definition[: definition.index("\nAS ")]
        query = body.strip().removesuffix(";")
    head = head.replace(" LANGUAGE sql\n", " LANGUAGE plpgsql\n")
    if returns_set:
        # RETURN QUERY wants the result's own types, where SQL took a domain for its base.
        columns = [f"c{i}" for i in range(len(result_types))]
        casts = ", ".join(f"q.{c}::{t}" for c, t in zip(columns, result_types, strict=True))
        statement = f"RETURN QUERY SELECT {casts} FROM ({query}) AS q ({', '.join(columns)});"
    else:
        statement = f"RETURN ({query});"
    conn.execute(
        sql.SQL("{} AS {}").format(
            sql.SQL(head),
            sql.Literal(f"#variable_conflict use_column\nBEGIN\n{statement}\nEND"),
        )
    )


def _move_to_node(conn: psycopg.Connection, name: str) -> None:
    """buzz.NAME, as the function files just made it, becomes buzz_node.NAME (replacing the
    one an earlier upgrade moved there)."""
    f = _function(conn, "buzz", name)
    conn.execute(f"DROP FUNCTION IF EXISTS buzz_node.{name}({f['identity']})")
    conn.execute(f"ALTER FUNCTION buzz.{name}({f['identity']}) SET SCHEMA buzz_node")


def _wrap(conn: psycopg.Connection, name: str, before: sql.SQL, after: sql.SQL) -> None:
    """buzz.NAME: the same arguments, result, grants and comment as buzz_node.NAME, which it
    calls (on the community's worker, when delegated) between the statements `before` and
    `after`."""
    f = _function(conn, "buzz_node", name)
    names = f["argument_names"]
    call = sql.Literal(
        f"SELECT * FROM buzz_node.{name}(" + ", ".join(f"${i + 1}" for i in range(len(names))) + ")"
    )
    using = sql.SQL(", ").join(sql.Identifier(n) for n in names)
    result = f["result"]
    if result.startswith(("TABLE", "SETOF")):
        body = sql.SQL("BEGIN {} RETURN QUERY EXECUTE {} USING {}; {} END").format(
            before, call, using, after
        )
    elif result == "void":
        body = sql.SQL("BEGIN {} EXECUTE {} USING {}; {} END").format(
            before, call, using, after
        )
    else:
        body = sql.SQL(
            "DECLARE v_answer {}; BEGIN {} EXECUTE {} INTO v_answer USING {}; {}"
            " RETURN v_answer; END"
        ).format(sql.SQL(result), before, call, using, after)
    conn.execute(
        sql.SQL(
            "CREATE FUNCTION buzz.{}({}) RETURNS {} LANGUAGE plpgsql VOLATILE SECURITY DEFINER"
            " SET search_path = pg_catalog, pg_temp AS {}"
        ).format(sql.Identifier(name), sql.SQL(f["arguments"]), sql.SQL(result),
                 sql.Literal(body.as_string(conn)))
    )  # fmt: skip
    signature = sql.SQL(f"buzz.{name}({f['identity']})")
    conn.execute(sql.SQL("ALTER FUNCTION {} OWNER TO buzz_owner").format(signature))
    conn.execute(sql.SQL("REVOKE ALL ON FUNCTION {} FROM PUBLIC").format(signature))
    for grantee in f["grantees"]:
        conn.execute(
            sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(signature, sql.Identifier(grantee))
        )
    conn.execute(sql.SQL("COMMENT ON FUNCTION {} IS {}").format(signature, sql.Literal(f["comment"])))


_MARK = sql.SQL("PERFORM buzz_private.mark_routed(p_community);")
# One community per transaction; and the write's bounds on waits and idleness in the client's
# own session too, as on one server (the worker's session gets them from the write itself).
_BEFORE = sql.SQL("PERFORM buzz_private.route_to(p_community); PERFORM buzz_private.bound_waits();")
_COORDINATOR_LOCKS = sql.SQL(
    " PERFORM buzz_private.lock_ownership(p_community);"
    " EXECUTE 'SELECT * FROM buzz_node.hold_community($1, true)' USING p_community;"
    " PERFORM buzz_private.lock_relay_key(false);"
)


def _delegate(conn: psycopg.Connection, signature: str, argument: str) -> None:
    """Citus runs `signature` (a function's regprocedure text) on the worker of `argument`."""
    conn.execute(
        "SELECT create_distributed_function(%s, %s, colocate_with => %s, force_delegation => true)",
        (signature, argument, COLOCATE_WITH),
    )


def connect_to_node(conn: psycopg.Connection, host: str, port: int, **kwargs) -> psycopg.Connection:
    """A new connection to the node at `host`:`port` (as pg_dist_node names it) with the rest of
    `conn`'s parameters: the same database, user and password."""
    params = {**conn.info.get_parameters(), "host": host, "port": str(port)}
    if conn.info.password:
        params["password"] = conn.info.password
    return psycopg.connect(**params, **kwargs)


def copy_scratch_tables(conn: psycopg.Connection) -> None:
    """Give every worker the coordinator's scratch tables, as they are defined now.

    Run after the transaction that migrated, over a connection of its own to each worker
    (pg_dist_node's host and port, the rest of the coordinator connection's parameters): a
    worker's trigger on them needs the functions that transaction sent. The tables are empty
    outside a transaction, so replacing them loses nothing.
    """
    ddl = [f"DROP TABLE IF EXISTS {t}" for t in SCRATCH_TABLES]
    for table in SCRATCH_TABLES:
        ddl += [r[0] for r in conn.execute("SELECT master_get_table_ddl_events(%s)", (table,))]
    workers = conn.execute(
        "SELECT nodename, nodeport FROM pg_catalog.pg_dist_node"
        " WHERE noderole = 'primary' AND groupid <> 0 AND isactive ORDER BY nodeid"
    ).fetchall()
    for host, port in workers:
        with connect_to_node(conn, host, port) as worker, worker.transaction():
            # Local tables of the worker's own, which Citus must not send anywhere.
            worker.execute("SET LOCAL citus.enable_ddl_propagation = off")
            for statement in ddl:
                worker.execute(statement)
