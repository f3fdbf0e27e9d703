"""Membership schema: roles, the API and private schemas, tables, privileges.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from buzz_signer.migrate import run_sql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def advisory_locks(*statements: str) -> str:
    """A DO block running each statement (with %s for the function) on every advisory-lock
    function of pg_catalog: pg_advisory_lock, pg_try_advisory_xact_lock_shared, ..."""
    body = "\n".join(f"        EXECUTE format('{st}', v_fn);" for st in statements)
    return f"""
DO $$
DECLARE
    v_fn regprocedure;
BEGIN
    FOR v_fn IN
        SELECT p.oid::regprocedure
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND p.proname ~ '^pg_(try_)?advisory_(xact_)?lock(_shared)?$'
    LOOP
{body}
    END LOOP;
END
$$;
"""


def upgrade() -> None:
    run_sql(r"""
-- Roles are cluster-wide: create them once, whichever database is migrated first.
DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['buzz_owner', 'buzz_writer', 'buzz_reader'] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
        END IF;
    END LOOP;
END
$$;
-- A writer may call every read function too.
GRANT buzz_reader TO buzz_writer;

-- The callable API lives alone in "buzz"; tables and helpers in "buzz_private", which callers
-- cannot even look into.
CREATE SCHEMA buzz AUTHORIZATION buzz_owner;
CREATE SCHEMA buzz_private AUTHORIZATION buzz_owner;
REVOKE ALL ON SCHEMA buzz, buzz_private FROM PUBLIC;
GRANT USAGE ON SCHEMA buzz TO buzz_reader, buzz_writer;
-- Functions are granted one by one next to their definitions (db/functions); nothing is
-- executable by PUBLIC unless granted.
ALTER DEFAULT PRIVILEGES FOR ROLE buzz_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
""")
    # Any role may take any advisory lock by default, so a stranger could hold a community's
    # list lock and stall its writers. In this database only the owner of the membership
    # objects may.
    run_sql(
        advisory_locks(
            "REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC",
            "GRANT EXECUTE ON FUNCTION %s TO buzz_owner",
        )
    )
    run_sql(r"""
-- Pubkeys and event ids (64 lowercase hex characters) and signatures (128), in the "C"
-- collation so that index order is byte order. A length and one character class rather than
-- a bounded repetition such as {64}: PostgreSQL's regex engine runs that about 10 to 25 times
-- slower, on every row of a 10,000-member batch.
CREATE DOMAIN buzz_private.hex_key AS text COLLATE "C"
    CHECK (pg_catalog.length(VALUE) = 64 AND VALUE !~ '[^0-9a-f]');
CREATE DOMAIN buzz_private.hex_sig AS text COLLATE "C"
    CHECK (pg_catalog.length(VALUE) = 128 AND VALUE !~ '[^0-9a-f]');
ALTER DOMAIN buzz_private.hex_key OWNER TO buzz_owner;
ALTER DOMAIN buzz_private.hex_sig OWNER TO buzz_owner;

-- Per-database settings, one row. Change with UPDATE as buzz_owner (see docs/operations.md).
CREATE TABLE buzz_private.settings (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    -- How far ahead of the clock a list's created_at may run before prepare raises BZLAG.
    max_list_lead_seconds integer NOT NULL DEFAULT 300 CHECK (max_list_lead_seconds >= 0),
    max_communities_per_owner integer NOT NULL DEFAULT 50 CHECK (max_communities_per_owner > 0),
    -- A membership write holds row locks and, from prepare to COMMIT, the community's list
    -- lock. A client that hangs there is cut off after this long idle in its transaction...
    idle_timeout_ms integer NOT NULL DEFAULT 10000 CHECK (idle_timeout_ms > 0),
    -- ...and no membership write waits longer than this for a lock.
    lock_timeout_ms integer NOT NULL DEFAULT 30000 CHECK (lock_timeout_ms > 0)
);
INSERT INTO buzz_private.settings DEFAULT VALUES;

-- The relay's public key, recorded by the first prepare and changed only by rotate_relay_key.
CREATE TABLE buzz_private.relay_key (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    pubkey buzz_private.hex_key NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

CREATE TABLE buzz_private.communities (
    community_id uuid PRIMARY KEY DEFAULT pg_catalog.gen_random_uuid(),
    host text COLLATE "C" NOT NULL UNIQUE CHECK (host = pg_catalog.lower(host)),
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    archived_at timestamptz
);

-- The members are the live list's content: the list event is served from these rows and the
-- stored header (member_lists), so a change writes one member row, not a copy of the list.
-- pubkey in "C" collation: the primary key's order is the list's tag order.
CREATE TABLE buzz_private.relay_members (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    pubkey buzz_private.hex_key NOT NULL,
    role text COLLATE "C" NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    added_by text CHECK (pg_catalog.length(added_by) BETWEEN 1 AND 64),
    joined_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- INCLUDE role: member_list and prepare read the whole list by an index-only scan.
    PRIMARY KEY (community_id, pubkey) INCLUDE (role)
);
CREATE UNIQUE INDEX relay_members_one_owner ON buzz_private.relay_members (community_id)
    WHERE role = 'owner';
-- The per-owner community limit counts these.
CREATE INDEX relay_members_owned ON buzz_private.relay_members (pubkey) WHERE role = 'owner';

-- The header of each community's live kind 13534 list. Its tags are the members above; the
-- row is replaced in place, and created_at only grows, so it also holds the newest created_at
-- of every list the community ever had.
CREATE TABLE buzz_private.member_lists (
    community_id uuid PRIMARY KEY REFERENCES buzz_private.communities ON DELETE CASCADE,
    id buzz_private.hex_key NOT NULL,
    pubkey buzz_private.hex_key NOT NULL,
    created_at bigint NOT NULL,
    sig buzz_private.hex_sig NOT NULL
);

-- The live list's tags, stored in pieces: the member tags of one pubkey prefix (two hex
-- digits, so at most 256 pieces) as the exact JSON text of the signed event. A change rewrites
-- only the pieces of the pubkeys it touched (at prepare, in the writer's transaction), so a
-- list write at 10,000 members puts a few kB into the WAL instead of the whole list, and
-- prepare concatenates pieces instead of re-serializing every member. member_list serves exactly these bytes, so the served event
-- always matches its signature; member_list_drift compares them with relay_members.
CREATE TABLE buzz_private.member_list_pieces (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    prefix text COLLATE "C" NOT NULL
        CHECK (pg_catalog.length(prefix) = 2 AND prefix !~ '[^0-9a-f]'),
    member_count integer NOT NULL CHECK (member_count > 0),
    tags text COLLATE "C" NOT NULL,   -- ',["member","<pubkey>","<role>"]' repeated, in order
    PRIMARY KEY (community_id, prefix)
);
ALTER TABLE buzz_private.member_list_pieces ALTER COLUMN tags SET COMPRESSION lz4;

-- Signed kind 8000 (added) and 8001 (removed) events; each names one member.
CREATE TABLE buzz_private.membership_events (
    event_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    id buzz_private.hex_key NOT NULL,
    pubkey buzz_private.hex_key NOT NULL,
    created_at bigint NOT NULL,
    kind integer NOT NULL CHECK (kind IN (8000, 8001)),
    member_pubkey buzz_private.hex_key NOT NULL,
    sig buzz_private.hex_sig NOT NULL
);
CREATE INDEX membership_events_by_time
    ON buzz_private.membership_events (community_id, created_at, event_seq);

-- Invite codes are shown once; only their sha256 is kept.
CREATE TABLE buzz_private.relay_invites (
    invite_id uuid PRIMARY KEY DEFAULT pg_catalog.gen_random_uuid(),
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    code_sha256 bytea NOT NULL UNIQUE CHECK (pg_catalog.length(code_sha256) = 32),
    created_by text NOT NULL CHECK (pg_catalog.length(created_by) BETWEEN 1 AND 64),
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    expires_at timestamptz NOT NULL,
    max_uses integer CHECK (max_uses BETWEEN 1 AND 10000),  -- NULL: unlimited
    use_count integer NOT NULL DEFAULT 0
        CHECK (use_count >= 0 AND (max_uses IS NULL OR use_count <= max_uses))
);
CREATE INDEX relay_invites_community ON buzz_private.relay_invites (community_id);

CREATE TABLE buzz_private.relay_allowlist (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    pubkey buzz_private.hex_key NOT NULL,
    note text CHECK (pg_catalog.length(note) <= 1000),
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, pubkey)
);

CREATE TABLE buzz_private.policy_acceptances (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    pubkey buzz_private.hex_key NOT NULL,
    policy_version text NOT NULL CHECK (pg_catalog.length(policy_version) BETWEEN 1 AND 64),
    accepted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, pubkey, policy_version)
);

-- Transaction scratch: what the current transaction changed, prepared and published. A row
-- lives only inside its own transaction (visible to no other, removed by the time it commits), so
-- these tables are UNLOGGED: they cost no WAL and a crash loses nothing that matters. xid
-- leads every key, so concurrent transactions never wait on each other's entries.
CREATE UNLOGGED TABLE buzz_private.tx_pending_lists (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    -- republish and key rotation: rebuild every piece from relay_members
    rebuild boolean NOT NULL DEFAULT false,
    PRIMARY KEY (xid, community_id)
);
-- First touch of each pubkey in the transaction: was it a member before the transaction? Net
-- effect decides the 8000/8001 events at prepare. Kept until COMMIT (the commit guard clears
-- it), so a transaction that publishes twice still counts from its start.
CREATE UNLOGGED TABLE buzz_private.tx_member_changes (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    pubkey text COLLATE "C" NOT NULL,
    was_member boolean NOT NULL,
    PRIMARY KEY (xid, community_id, pubkey)
);
-- The unsigned events the last prepare returned, in its order (position).
CREATE UNLOGGED TABLE buzz_private.tx_prepared_events (
    xid xid8 NOT NULL,
    position integer NOT NULL,
    community_id uuid NOT NULL,
    id text COLLATE "C" NOT NULL,
    pubkey text COLLATE "C" NOT NULL,
    kind integer NOT NULL,
    created_at bigint NOT NULL,
    member_pubkey text COLLATE "C",   -- 8000/8001
    PRIMARY KEY (xid, position)
);
-- The 8000/8001 events this transaction stored: a later publish in the same transaction
-- replaces them, so a transaction leaves one set of events per community, by net effect.
CREATE UNLOGGED TABLE buzz_private.tx_published_events (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    event_seq bigint NOT NULL,
    PRIMARY KEY (xid, community_id, event_seq)
);

DO $$
DECLARE
    v_table regclass;
BEGIN
    FOR v_table IN
        SELECT c.oid::regclass FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'buzz_private'::regnamespace AND c.relkind = 'r'
    LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO buzz_owner', v_table);
        EXECUTE format('REVOKE ALL ON TABLE %s FROM PUBLIC', v_table);
    END LOOP;
END
$$;
""")


def downgrade() -> None:
    run_sql("""
DROP SCHEMA buzz CASCADE;
DROP SCHEMA buzz_private CASCADE;
ALTER DEFAULT PRIVILEGES FOR ROLE buzz_owner GRANT EXECUTE ON FUNCTIONS TO PUBLIC;
-- Roles are shared by every database of the cluster and are left in place.
""")
    run_sql(
        advisory_locks(
            "GRANT EXECUTE ON FUNCTION %s TO PUBLIC",
            "REVOKE EXECUTE ON FUNCTION %s FROM buzz_owner",
        )
    )
