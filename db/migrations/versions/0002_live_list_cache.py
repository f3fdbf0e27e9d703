"""The live list of each community, kept as the jsonb member_list serves.

Building a 10,000-member list as jsonb from its stored pieces costs more than reading it back:
insert_signed_events builds it once (it returns it anyway) and keeps it here. A copy, never the
record: UNLOGGED, so it costs no WAL (~900 kB a write at 10,000 members), a crash empties it and
a standby has none; member_list then builds the event from the pieces, as before. A row is
served only while the stored header (id, pubkey, created_at, sig) is the one it was
built from.

Functions follow the code (db/functions): downgrading below this revision needs the function
files of that revision too.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from buzz_signer.migrate import run_sql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql("""
CREATE UNLOGGED TABLE buzz_private.live_list_cache (
    community_id uuid PRIMARY KEY REFERENCES buzz_private.communities ON DELETE CASCADE,
    -- The header of the list the copy is of: it is served while the stored header is the same.
    id text COLLATE "C" NOT NULL,
    pubkey text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    sig text COLLATE "C" NOT NULL,
    event jsonb NOT NULL
);
-- lz4 rather than the default pglz: ~10x cheaper to compress 900 kB, and faster to read.
ALTER TABLE buzz_private.live_list_cache ALTER COLUMN event SET COMPRESSION lz4;
ALTER TABLE buzz_private.live_list_cache OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.live_list_cache FROM PUBLIC;
""")


def downgrade() -> None:
    run_sql("DROP TABLE buzz_private.live_list_cache;")
