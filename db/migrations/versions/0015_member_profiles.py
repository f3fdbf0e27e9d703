"""Members' own profiles (SPEC sections 7 and 8, People, not keys): the kind 0 each current
member publishes, one a member, kept by buzz.set_member_profile and read by
buzz.member_profiles. A member's departure deletes it in its transaction
(buzz_private.release_departed, as it takes back their assigned methods); the community's
deletion, by the foreign key.

The downgrade drops the table and its two functions: the profiles are lost (members send
theirs again, as clients do on joining).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from buzz_signer.migrate import run_statements

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements("""
CREATE TABLE buzz_private.member_profiles (
    community_id uuid NOT NULL,
    pubkey buzz_private.hex_key NOT NULL,
    id text COLLATE "C" NOT NULL CHECK (id ~ '^[0-9a-f]{64}$'),
    created_at bigint NOT NULL CHECK (created_at >= 0),
    -- The event as NIP-01 JSON, compact, as the relay serves it; checked and verified by
    -- set_member_profile before it is stored.
    event text NOT NULL CHECK (pg_catalog.octet_length(event) <= 16384),
    PRIMARY KEY (community_id, pubkey),
    FOREIGN KEY (community_id) REFERENCES buzz_private.communities ON DELETE CASCADE
);
ALTER TABLE buzz_private.member_profiles OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.member_profiles FROM PUBLIC;
-- A REQ's newest first, however many are stored.
CREATE INDEX member_profiles_newest ON buzz_private.member_profiles (community_id, created_at);
""")


def downgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.set_member_profile(uuid, text);
DROP FUNCTION IF EXISTS buzz.member_profiles(uuid, text[], bigint, bigint, integer);
DROP TABLE buzz_private.member_profiles;
""")
