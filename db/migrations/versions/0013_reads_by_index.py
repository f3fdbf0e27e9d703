"""Reads cost what they answer (SPEC section 10): a REQ filter on the 8000/8001 events is
answered in the database (buzz.membership_events_newest) by an index for each way in: back in
time (the primary key, as before), by event id, and by the member named in the `p` tag. A member's role is read by its primary key (buzz.relay_member).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from buzz_signer.migrate import run_statements

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements("""
CREATE INDEX membership_events_by_id ON buzz_private.membership_events (community_id, id);
CREATE INDEX membership_events_by_member
    ON buzz_private.membership_events (community_id, member_pubkey, created_at);
""")


def downgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.membership_events_newest(uuid, integer[], text[], text[], bigint,
                                                      bigint, integer);
DROP FUNCTION IF EXISTS buzz.relay_member(uuid, text);
DROP INDEX buzz_private.membership_events_by_member;
DROP INDEX buzz_private.membership_events_by_id;
""")
