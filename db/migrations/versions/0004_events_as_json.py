"""Events as json: the compact NIP-01 text, built once and never parsed; no kept copy.

SPEC §3 returns events as json, the text a relay sends. member_list then serves a list by
concatenating its stored header and pieces (what was signed), so the kept jsonb copy of each
live list (live_list_cache, revision 0002) goes: it cost a 900 kB row version per write at
10,000 members, dead until vacuum. The functions whose return type changes are dropped here
(CREATE OR REPLACE cannot change it), with those whose SQL bodies depend on them; the function
files create them again.

buzz_bip340 1.1 adds nip01_json(text) -> json, which types the text the functions built as
json without lexing it again (4-5 ms at 10,000 members), and keep_list_tags / kept_list_tags,
which keep the tags prepare built for insert_signed_events to return. Where the extension is
not installed (a DBA provided bip340_verify; db/extension/README.md), SQL stands in: a
nip01_json that parses, and a keep that keeps nothing.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from buzz_signer.migrate import run_sql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# Dependents first: SQL-standard bodies record what they call.
CHANGED_FUNCTIONS = (
    "buzz.member_list_drift(uuid)",
    "buzz.membership_events(uuid, bigint)",
    "buzz.member_list(uuid)",
    "buzz.insert_signed_events(text[], text[])",
    "buzz_private.list_event(uuid)",
    "buzz_private.event_json(text, text, bigint, integer, text, text)",
)


def drop_changed_functions() -> str:
    return "\n".join(f"DROP FUNCTION IF EXISTS {f};" for f in CHANGED_FUNCTIONS)


def upgrade() -> None:
    run_sql(f"""
{drop_changed_functions()}
DROP FUNCTION IF EXISTS buzz_private.cached_list(uuid);
DROP TABLE buzz_private.live_list_cache;
-- The pieces stay in the table's own pages, uncompressed, up to a row of nearly a page (about
-- 25,000 members in a community): reading a 10,000-member list is then 256 rows, not 256 more
-- lookups in the TOAST table and as many decompressions.
ALTER TABLE buzz_private.member_list_pieces SET (toast_tuple_target = 8160);
-- What a transaction published, to replace if it publishes again: one row per community (the
-- list's created_at names its events), not one per event (10,000 rows for a batch).
DROP TABLE buzz_private.tx_published_events;
CREATE UNLOGGED TABLE buzz_private.tx_published_events (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (xid, community_id)
);
ALTER TABLE buzz_private.tx_published_events OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.tx_published_events FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'buzz_bip340') THEN
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_available_extension_versions
                       WHERE name = 'buzz_bip340' AND version = '1.1') THEN
            RAISE EXCEPTION 'this server has buzz_bip340 1.0 only; version 1.1 is needed'
                USING ERRCODE = '58P01',
                      HINT = 'Build and install it again: make -C db/extension install.';
        END IF;
        ALTER EXTENSION buzz_bip340 UPDATE TO '1.1';
    ELSIF pg_catalog.to_regprocedure('buzz_private.nip01_json(text)') IS NULL THEN
        -- Correct, only slower than the extension's: parses what it is given, keeps nothing
        -- (insert_signed_events then concatenates the pieces again).
        CREATE FUNCTION buzz_private.nip01_json(event text) RETURNS json
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN event::json;
        CREATE FUNCTION buzz_private.keep_list_tags(id text, tags text) RETURNS void
        LANGUAGE sql VOLATILE STRICT
        RETURN NULL;
        CREATE FUNCTION buzz_private.kept_list_tags(id text) RETURNS text
        LANGUAGE sql VOLATILE STRICT
        RETURN NULL;
        ALTER FUNCTION buzz_private.nip01_json(text) OWNER TO buzz_owner;
        ALTER FUNCTION buzz_private.keep_list_tags(text, text) OWNER TO buzz_owner;
        ALTER FUNCTION buzz_private.kept_list_tags(text) OWNER TO buzz_owner;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION buzz_private.nip01_json(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz_private.nip01_json(text) TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.keep_list_tags(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz_private.keep_list_tags(text, text) TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.kept_list_tags(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz_private.kept_list_tags(text) TO buzz_owner;
""")


def downgrade() -> None:
    # Revision 0003's function files create the jsonb versions again (see 0002).
    run_sql(f"""
{drop_changed_functions()}
ALTER TABLE buzz_private.member_list_pieces RESET (toast_tuple_target);
DROP TABLE buzz_private.tx_published_events;
CREATE UNLOGGED TABLE buzz_private.tx_published_events (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    event_seq bigint NOT NULL,
    PRIMARY KEY (xid, community_id, event_seq)
);
ALTER TABLE buzz_private.tx_published_events OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.tx_published_events FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'buzz_bip340') THEN
        ALTER EXTENSION buzz_bip340 UPDATE TO '1.0';
    ELSE
        DROP FUNCTION IF EXISTS buzz_private.nip01_json(text);
        DROP FUNCTION IF EXISTS buzz_private.keep_list_tags(text, text);
        DROP FUNCTION IF EXISTS buzz_private.kept_list_tags(text);
    END IF;
END
$$;
CREATE UNLOGGED TABLE buzz_private.live_list_cache (
    community_id uuid PRIMARY KEY REFERENCES buzz_private.communities ON DELETE CASCADE,
    id text COLLATE "C" NOT NULL,
    pubkey text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    sig text COLLATE "C" NOT NULL,
    event jsonb NOT NULL
);
ALTER TABLE buzz_private.live_list_cache ALTER COLUMN event SET COMPRESSION lz4;
ALTER TABLE buzz_private.live_list_cache OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.live_list_cache FROM PUBLIC;
""")
