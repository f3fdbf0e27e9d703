"""A REQ filter on members' profiles by event id (NIP-01 `ids`), answered in the database by
an index as the other ways in are (SPEC section 10, "Reads cost what they answer"):
buzz.member_profiles gains p_ids, last, and its old signature goes (the function file
creates the new one).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from buzz_signer.migrate import run_statements

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.member_profiles(uuid, text[], bigint, bigint, integer);
CREATE INDEX member_profiles_by_id ON buzz_private.member_profiles (community_id, id);
""")


def downgrade() -> None:
    # Revision 0015's function file creates member_profiles as it was.
    run_statements("""
DROP FUNCTION IF EXISTS buzz.member_profiles(uuid, text[], bigint, bigint, integer, text[]);
DROP INDEX buzz_private.member_profiles_by_id;
""")
