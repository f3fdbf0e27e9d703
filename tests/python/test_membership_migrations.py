"""Building the database the way operators do: `alembic upgrade head` and `buzz-admin migrate`
as subprocesses, on empty databases. The result is complete, a second run is a no-op that
re-applies the functions, and upgrading one revision at a time gives the same catalog."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fixtures_membership import new_pubkey
from psycopg import sql

from buzz_signer.citus import SCRATCH_TABLES
from buzz_signer.keys import RelayKey
from buzz_signer.localdb import url_with_dbname
from buzz_signer.membership import Membership
from buzz_signer.migrate import head_revision

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = REPO / "db" / "functions"
ALEMBIC = REPO / ".venv" / "bin" / "alembic"
BUZZ_ADMIN = REPO / ".venv" / "bin" / "buzz-admin"
SCHEMAS = ("buzz", "buzz_private")
READ_FUNCTIONS = {
    "community_id",
    "relay_key",
    "invite_branch",
    "relay_member",
    "membership_events_newest",
    "relay_members",
    "member_list",
    "membership_events",
    "member_list_drift",
    "communities",
    "role_definitions",
    "role_deletions",
    "community_profile",
    "banned_pubkeys",
    "join_requests",
    "invites_left",
    "invite_quotas",
    "banned_events",
    "kind_rules",
    "blocked_ips",
    "method_assignees",
    "moderation_rules",
    "member_profiles",
}
# Executable by buzz_key_admin alone (SPEC section 4), not by buzz_writer.
KEY_ADMIN_FUNCTIONS = {"rotate_relay_key"}

# What must come out the same whichever way the database was built.
CATALOG = {
    "schemas": """
        SELECT nspname, pg_get_userbyid(nspowner), nspacl::text FROM pg_namespace
        WHERE nspname IN ('buzz', 'buzz_private') ORDER BY 1""",
    "functions": """
        SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid),
               pg_get_functiondef(p.oid), pg_get_userbyid(p.proowner), p.prosecdef,
               p.proconfig::text, p.proacl::text, obj_description(p.oid, 'pg_proc')
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname IN ('buzz', 'buzz_private') ORDER BY 1, 2, 3""",
    "tables": """
        SELECT n.nspname, c.relname, c.relkind, c.relpersistence, pg_get_userbyid(c.relowner),
               c.relacl::text
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('buzz', 'buzz_private') ORDER BY 1, 2""",
    "columns": """
        SELECT table_schema, table_name, ordinal_position, column_name, data_type, is_nullable,
               column_default, collation_name, is_identity
        FROM information_schema.columns
        WHERE table_schema IN ('buzz', 'buzz_private') ORDER BY 1, 2, 3""",
    "compression": """
        SELECT a.attrelid::regclass::text, a.attname, a.attcompression::text
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = 'buzz_private'::regnamespace AND a.attnum > 0
          AND NOT a.attisdropped ORDER BY 1, 2""",
    "indexes": """
        SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname IN ('buzz', 'buzz_private') ORDER BY 1, 2, 3""",
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE connamespace IN ('buzz'::regnamespace, 'buzz_private'::regnamespace)
        ORDER BY 1, 2""",
    "triggers": """
        SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid), tgenabled::text
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2""",
    "advisory_lock_acl": """
        SELECT p.oid::regprocedure::text, p.proacl::text FROM pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND p.proname ~ '^pg_(try_)?advisory' ORDER BY 1""",
    "default_acl": """
        SELECT pg_get_userbyid(defaclrole), defaclobjtype::text, defaclacl::text
        FROM pg_default_acl ORDER BY 1, 2""",
    "settings": "SELECT * FROM buzz_private.settings",
    "alembic_version": "SELECT version_num FROM public.alembic_version",
}


def catalog(url: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(url) as c:
        return {name: c.execute(query).fetchall() for name, query in CATALOG.items()}


def run(url: str, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url}
    done = subprocess.run(
        [str(a) for a in argv],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done


def alembic(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run(url, ALEMBIC, *args)


def revisions_in_order(url: str) -> list[str]:
    """Every revision from the first to head, from `alembic history`."""
    out = alembic(url, "history").stdout
    parent: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\S+) -> (\w+)\b", line)
        if m:
            parent[m.group(2)] = m.group(1)
    assert parent, out
    children = {down: rev for rev, down in parent.items()}
    assert len(children) == len(parent), f"branches in the history: {out}"
    order, at = [], "<base>"
    while at in children:
        at = children[at]
        order.append(at)
    assert len(order) == len(parent), out
    return order


@pytest.fixture(scope="module")
def new_database(admin_url: str) -> Iterator[Any]:
    """Makes empty databases (no template of ours); drops them after the module."""
    names: list[str] = []

    def make() -> str:
        name = f"buzz_mig_{os.getpid()}_{secrets.token_hex(3)}"
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        names.append(name)
        return url_with_dbname(admin_url, name)

    yield make
    with psycopg.connect(admin_url, autocommit=True) as c:
        for name in names:
            c.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="module")
def head(new_database: Any) -> tuple[str, dict[str, list[tuple[Any, ...]]]]:
    """A database built by `alembic upgrade head`, and its catalog right after."""
    url = new_database()
    alembic(url, "upgrade", "head")
    return url, catalog(url)


# Functions of the project's files only: buzz_private.bip340_verify is the buzz_bip340 extension's.
NOT_IN_EXTENSION = (
    " AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass"
    " AND d.objid = p.oid AND d.deptype = 'e')"
)


def function_files() -> set[tuple[str, str]]:
    return {(schema, f.stem) for schema in SCHEMAS for f in (FUNCTIONS / schema).glob("*.sql")}


def triggers_in_files() -> set[tuple[str, str]]:
    found = set()
    pattern = re.compile(
        r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+(\w+)\s+.*?\bON\s+([\w.]+)",
        re.IGNORECASE | re.DOTALL,
    )
    for f in FUNCTIONS.glob("*/*.sql"):
        for name, table in pattern.findall(f.read_text(encoding="utf-8")):
            found.add((table, name))
    return found


def test_alembic_upgrade_head_builds_a_complete_database(head):
    url, cat = head
    with psycopg.connect(url) as c:
        schemas = {
            r[0]
            for r in c.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname IN ('buzz', 'buzz_private')"
            )
        }
        assert schemas == set(SCHEMAS)
        roles = dict(
            c.execute(
                "SELECT rolname, rolcanlogin FROM pg_roles"
                " WHERE rolname IN ('buzz_owner', 'buzz_writer', 'buzz_reader', 'buzz_key_admin')"
            ).fetchall()
        )
        assert roles == {
            "buzz_owner": False,
            "buzz_writer": False,
            "buzz_reader": False,
            "buzz_key_admin": False,
        }

        # Every function file, and nothing else, is a function of its schema.
        procs = set(
            c.execute(
                "SELECT n.nspname, p.proname FROM pg_proc p"
                " JOIN pg_namespace n ON n.oid = p.pronamespace"
                " WHERE n.nspname IN ('buzz', 'buzz_private')" + NOT_IN_EXTENSION
            ).fetchall()
        )
        assert procs == function_files()
        # Every trigger the files create exists (and is enabled).
        triggers = set(
            c.execute(
                "SELECT tgrelid::regclass::text, tgname FROM pg_trigger"
                " WHERE NOT tgisinternal AND tgenabled = 'O'"
            ).fetchall()
        )
        assert triggers_in_files() <= triggers
        assert len(triggers_in_files()) >= 5

        # The API: SECURITY DEFINER, owned by buzz_owner, search_path pinned empty, no PUBLIC.
        api = c.execute(
            "SELECT p.proname, p.oid::regprocedure::text, p.prosecdef,"
            " pg_get_userbyid(p.proowner), p.proconfig,"
            " has_function_privilege('public', p.oid, 'EXECUTE'),"
            " has_function_privilege('buzz_writer', p.oid, 'EXECUTE'),"
            " has_function_privilege('buzz_reader', p.oid, 'EXECUTE'),"
            " has_function_privilege('buzz_key_admin', p.oid, 'EXECUTE')"
            " FROM pg_proc p WHERE p.pronamespace = 'buzz'::regnamespace"
        ).fetchall()
        assert {r[0] for r in api} == {
            name for schema, name in function_files() if schema == "buzz"
        }
        for name, sig, secdef, owner, config, public, writer, reader, key_admin in api:
            assert secdef and owner == "buzz_owner", sig
            assert config == ["search_path=pg_catalog, pg_temp"], sig
            assert not public, sig
            assert writer == (name not in KEY_ADMIN_FUNCTIONS), sig
            assert key_admin, sig  # a writer too: a rotation publishes lists
            assert reader == (name in READ_FUNCTIONS), sig
        # Callers get no privilege on the tables.
        assert (
            c.execute(
                "SELECT count(*) FROM pg_class c, unnest(ARRAY['buzz_writer', 'buzz_reader']) r"
                " WHERE c.relnamespace = 'buzz_private'::regnamespace AND c.relkind = 'r'"
                " AND (has_table_privilege(r, c.oid, 'SELECT') OR"
                "      has_table_privilege(r, c.oid, 'INSERT') OR"
                "      has_table_privilege(r, c.oid, 'UPDATE') OR"
                "      has_table_privilege(r, c.oid, 'DELETE'))"
            ).fetchone()[0]
            == 0
        )
        head_rev = revisions_in_order(url)[-1]
        assert cat["alembic_version"] == [(head_rev,)]

    # And it works: a write publishes its list.
    with Membership.connect(url, RelayKey.generate()) as m:
        w = m.create_community("migrated.example.org", RelayKey.generate().pubkey)
        assert w.outcome == "created" and w.snapshot is not None


def test_upgrade_again_is_a_noop_that_reapplies_functions(head):
    url, cat = head
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("COMMENT ON FUNCTION buzz.community_id(text) IS 'tampered'")
        c.execute(
            "CREATE OR REPLACE FUNCTION buzz_private.normalize_host(p_host text)"
            " RETURNS text LANGUAGE sql AS 'SELECT p_host'"
        )
        procs = dict(
            c.execute(
                "SELECT p.oid::regprocedure::text, p.xmin::text FROM pg_proc p"
                " WHERE p.pronamespace IN ('buzz'::regnamespace, 'buzz_private'::regnamespace)"
                + NOT_IN_EXTENSION
            ).fetchall()
        )
        communities = c.execute("SELECT count(*) FROM buzz_private.communities").fetchone()
    assert catalog(url) != cat
    out = alembic(url, "upgrade", "head")
    assert "Traceback" not in out.stderr
    assert catalog(url) == cat
    with psycopg.connect(url) as c:
        again = dict(
            c.execute(
                "SELECT p.oid::regprocedure::text, p.xmin::text FROM pg_proc p"
                " WHERE p.pronamespace IN ('buzz'::regnamespace, 'buzz_private'::regnamespace)"
                + NOT_IN_EXTENSION
            ).fetchall()
        )
        # Every function was written again, by one transaction; data is kept.
        assert again.keys() == procs.keys()
        assert all(again[f] != procs[f] for f in procs)
        assert len(set(again.values())) == 1
        assert c.execute("SELECT count(*) FROM buzz_private.communities").fetchone() == communities
    assert alembic(url, "current").stdout.split()[0] == cat["alembic_version"][0][0]


def test_buzz_admin_migrate_builds_the_same_database(new_database, head):
    url = new_database()
    out = run(url, BUZZ_ADMIN, "migrate")
    newest = head_revision()
    assert out.stdout.strip() == f"empty -> {newest}", out.stdout
    first = catalog(url)
    assert first == head[1]
    again = run(url, BUZZ_ADMIN, "migrate")
    assert again.stdout.strip() == f"at {newest}, nothing to do", again.stdout
    assert catalog(url) == first


def test_one_revision_at_a_time_gives_the_same_catalog(new_database, head):
    url = new_database()
    revisions = revisions_in_order(url)
    for rev in revisions:
        alembic(url, "upgrade", rev)
        with psycopg.connect(url) as c:
            assert c.execute("SELECT version_num FROM alembic_version").fetchall() == [(rev,)]
    alembic(url, "upgrade", "head")
    assert catalog(url) == head[1]


def test_downgrade_to_base_and_up_again(new_database, head):
    url = new_database()
    alembic(url, "upgrade", "head")
    alembic(url, "downgrade", "base")
    with psycopg.connect(url) as c:
        assert c.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname IN ('buzz', 'buzz_private')"
        ).fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM alembic_version").fetchone() == (0,)
        # The advisory-lock functions are everybody's again.
        assert c.execute(
            "SELECT bool_and(has_function_privilege('public', p.oid, 'EXECUTE'))"
            " FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace"
            " AND p.proname ~ '^pg_(try_)?advisory_(xact_)?lock(_shared)?$'"
        ).fetchone() == (True,)
    alembic(url, "upgrade", "head")
    assert catalog(url) == head[1]


def test_upgrading_to_roles_defines_the_base_roles_of_existing_communities(new_database):
    """Revision 0005 gives a community that existed before it the three base role
    definitions, unsigned (a migration cannot sign): drift says so, and a republish signs them
    and the list. Before 0005 no function file is applied, so the community is made with SQL."""
    url = new_database()
    alembic(url, "upgrade", "0004")
    owner, member = sorted(new_pubkey() for _ in range(2))
    with psycopg.connect(url, autocommit=True) as c:
        (cid,) = c.execute(
            "INSERT INTO buzz_private.communities (host) VALUES ('old.example.org')"
            " RETURNING community_id"
        ).fetchone()
        c.execute(
            "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
            " VALUES (%s, %s, 'owner'), (%s, %s, 'member')",
            (cid, owner, cid, member),
        )
    alembic(url, "upgrade", "head")
    key = RelayKey.generate()
    with Membership.connect(url, key) as m:
        assert [(mb.pubkey, mb.role, mb.roles) for mb in m.relay_members(cid)] == [
            (owner, "owner", []),
            (member, "member", []),
        ]
        assert sorted((d.problem, d.detail) for d in m.member_list_drift(cid)) == [
            ("missing", "no live membership list"),
            ("role_missing", "role admin has no live 33534 definition"),
            ("role_missing", "role member has no live 33534 definition"),
            ("role_missing", "role owner has no live 33534 definition"),
        ]
        w = m.republish_member_list(cid)
        assert [ev["kind"] for ev in w.events] == [13534, 33534, 33534, 33534]
        assert m.member_list_drift() == []
        assert [ev["tags"][1:] for ev in m.role_definitions(cid)] == [
            [["d", "admin"], ["label", "Admin"], ["order", "1"]],
            [["d", "member"], ["label", "Member"], ["order", "2"]],
            [["d", "owner"], ["label", "Owner"], ["order", "0"]],
        ]


# Revision 0009, moderation behind the gate: what it adds, and nothing else.
MODERATION_TABLES = {"banned_events", "kind_rules", "blocked_ips", "method_assignments"}
MODERATION_FUNCTIONS = {
    ("buzz", f)
    for f in (
        "ban_event", "unban_event", "banned_events", "allow_kind", "disallow_kind",
        "clear_kind_rule", "kind_rules", "block_ip", "unblock_ip", "blocked_ips",
        "assign_method", "unassign_method", "method_assignees", "moderation_rules",
    )
} | {
    ("buzz_private", f)
    for f in (
        "lock_moderation", "announce_moderation", "normalize_address", "delegable_method",
        "set_kind_rule",
    )
}  # fmt: skip


# Revision 0010, what several relay processes share.
SHARED_TABLES = {"accepted_auth_events", "rate_windows"}
SHARED_FUNCTIONS = {
    ("buzz", "accept_auth_event"), ("buzz", "take_rate"), ("buzz", "rate_reached"),
    ("buzz_private", "rate_keys"),
}  # fmt: skip


# What the revisions after 0011 add (0013: reads by an index; 0014: remove_relay_member and
# ban_pubkey spare admins; 0015: members' profiles; 0016: profiles by id): a downgrade below
# them drops it.
LATER_INDEXES = {"membership_events_by_id", "membership_events_by_member", "member_profiles"}
LATER_FUNCTIONS = {
    ("buzz", "membership_events_newest"), ("buzz", "relay_member"),
    ("buzz", "remove_relay_member"), ("buzz", "ban_pubkey"),
    ("buzz", "set_member_profile"), ("buzz", "member_profiles"),
}  # fmt: skip


def assert_downgrade_undoes(
    url: str,
    head: tuple[str, dict[str, list[tuple[Any, ...]]]],
    to: str,
    tables: set[str],
    functions: set[tuple[str, str]],
) -> None:
    """Down from head to `to`: `tables` (and indexes named there) and `functions` go,
    everything else stays as it was (its data too); up again: the head catalog."""
    at_head = catalog(url)
    alembic(url, "downgrade", to)
    down = catalog(url)
    assert down["alembic_version"] == [(to,)]

    def dropped(relation: str) -> bool:
        """One of `tables`, or one of its indexes (banned_events_pkey)."""
        relation = relation.removeprefix("buzz_private.")
        return any(relation == t or relation.startswith(t + "_") for t in tables)

    def without(name: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        if name == "functions":
            return [r for r in rows if (r[0], r[1]) not in functions]
        if name == "indexes":  # (schema, table, index, definition): one named, or its table's
            return [r for r in rows if not dropped(r[1]) and r[2] not in tables]
        if name in ("tables", "columns"):  # (schema, relation, ...)
            return [r for r in rows if not dropped(r[1])]
        if name in ("constraints", "compression"):  # (qualified relation, ...)
            return [r for r in rows if not dropped(r[0])]
        return rows

    for name, rows in at_head.items():
        if name != "alembic_version":
            assert down[name] == without(name, rows), name
    assert {(r[0], r[1]) for r in down["functions"]} & functions == set()
    assert {r[1] for r in down["tables"]} & tables == set()
    alembic(url, "upgrade", "head")
    assert catalog(url) == head[1]


def test_downgrading_0009_undoes_exactly_it_and_what_came_after(new_database, head):
    url = new_database()
    alembic(url, "upgrade", "head")
    assert {"0009", "0010"} <= set(revisions_in_order(url))
    with psycopg.connect(url, autocommit=True) as c:
        # A rule in every table, so that the downgrade drops rows too.
        cid = c.execute(
            "INSERT INTO buzz_private.communities (host) VALUES ('down.example.org')"
            " RETURNING community_id"
        ).fetchone()[0]
        c.execute("SELECT buzz.ban_event(%s, repeat('a', 64))", (cid,))
        c.execute("SELECT buzz.allow_kind(%s, 1)", (cid,))
        c.execute("SELECT buzz.block_ip(%s, '192.0.2.1')", (cid,))
    assert_downgrade_undoes(
        url,
        head,
        "0008",
        MODERATION_TABLES | SHARED_TABLES | LATER_INDEXES,
        MODERATION_FUNCTIONS | SHARED_FUNCTIONS | LATER_FUNCTIONS,
    )
    with psycopg.connect(url) as c:
        assert c.execute(
            "SELECT host FROM buzz_private.communities WHERE community_id = %s", (cid,)
        ).fetchall() == [("down.example.org",)]


def test_downgrading_0010_undoes_exactly_it(new_database, head):
    url = new_database()
    alembic(url, "upgrade", "head")
    assert "0010" in revisions_in_order(url)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SELECT buzz.accept_auth_event(repeat('a', 64), now())")
        c.execute("SELECT buzz.take_rate('invite', '{k}', 1, 60)")
    assert_downgrade_undoes(
        url, head, "0009", SHARED_TABLES | LATER_INDEXES, SHARED_FUNCTIONS | LATER_FUNCTIONS
    )


def scratch_tables(url: str) -> list[tuple[Any, ...]]:
    """Each scratch table: its storage options, its pages, its rows."""
    with psycopg.connect(url, autocommit=True) as c:
        return [
            c.execute(
                sql.SQL(
                    "SELECT c.reloptions, pg_relation_size(c.oid) / current_setting('block_size')::int,"
                    " (SELECT count(*) FROM {})"
                    " FROM pg_class c WHERE c.oid = {}::regclass"
                ).format(sql.Identifier(*t.split(".")), sql.Literal(t))
            ).fetchone()
            for t in SCRATCH_TABLES
        ]


def test_0011_gives_the_scratch_tables_pages_to_keep(new_database, head):
    """Revision 0011: every scratch table has 16 pages or more, no row, and VACUUM keeps its
    pages; the commit guard is on. Downgraded: the option is gone, the catalog as before (but
    what later revisions add)."""
    url = new_database()
    alembic(url, "upgrade", "head")
    assert "0011" in revisions_in_order(url)
    for options, pages, rows in scratch_tables(url):
        assert options == ["vacuum_truncate=off"] and pages >= 16 and rows == 0
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("VACUUM " + ", ".join(SCRATCH_TABLES))
        assert c.execute(
            "SELECT tgenabled FROM pg_trigger"
            " WHERE tgrelid = 'buzz_private.tx_pending_lists'::regclass AND NOT tgisinternal"
        ).fetchall() == [("O",)]
    assert all(pages >= 16 for _, pages, _ in scratch_tables(url))
    assert_downgrade_undoes(url, head, "0010", LATER_INDEXES, LATER_FUNCTIONS)
    assert all(options == ["vacuum_truncate=off"] for options, _, _ in scratch_tables(url))
    alembic(url, "downgrade", "0010")
    assert all(options is None for options, _, _ in scratch_tables(url))


def test_0012_takes_back_the_methods_of_people_who_are_not_members(new_database, head):
    """Revision 0012: an assignment whose holder left before it (kept until now) is deleted;
    a member's stays. Downgraded: the catalog as before, the assignments as they are."""
    url = new_database()
    alembic(url, "upgrade", "0011")
    owner, stays, left = (new_pubkey() for _ in range(3))
    with psycopg.connect(url, autocommit=True) as c:
        (cid,) = c.execute(
            "INSERT INTO buzz_private.communities (host) VALUES ('old.example.org')"
            " RETURNING community_id"
        ).fetchone()
        c.execute(
            "INSERT INTO buzz_private.relay_members (community_id, pubkey, role)"
            " VALUES (%s, %s, 'owner'), (%s, %s, 'member')",
            (cid, owner, cid, stays),
        )
        c.execute(
            "INSERT INTO buzz_private.method_assignments (community_id, pubkey, method)"
            " VALUES (%s, %s, 'banpubkey'), (%s, %s, 'banpubkey'), (%s, %s, 'listbannedpubkeys')",
            (cid, stays, cid, left, cid, left),
        )
    alembic(url, "upgrade", "head")
    query = "SELECT pubkey, method FROM buzz_private.method_assignments ORDER BY 1, 2"
    with psycopg.connect(url, autocommit=True) as c:
        assert c.execute(query).fetchall() == [(stays, "banpubkey")]
    alembic(url, "downgrade", "0011")
    with psycopg.connect(url, autocommit=True) as c:
        assert c.execute(query).fetchall() == [(stays, "banpubkey")]
    alembic(url, "upgrade", "head")
    assert catalog(url) == head[1]
