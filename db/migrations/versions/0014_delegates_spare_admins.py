"""A delegate's limits in the database (SPEC section 10): a member removing or banning someone
by a method assigned to it may not reach the owner or an admin. remove_relay_member and
ban_pubkey take p_spare_admins and decide it on the rows as they lock them, so a promotion
committed meanwhile counts; until now the relay checked it in a read before the write.

The function files make the new signatures; the old ones go here. The downgrade drops the new
ones: the function files of the release it goes back to make the old ones again.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from buzz_signer.migrate import run_statements

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # buzz_node holds the one-server bodies on a Citus coordinator (buzz_signer.citus).
    run_statements("""
DROP FUNCTION IF EXISTS buzz.remove_relay_member(uuid, text, boolean);
DROP FUNCTION IF EXISTS buzz_node.remove_relay_member(uuid, text, boolean);
DROP FUNCTION IF EXISTS buzz.ban_pubkey(uuid, text, text, text);
DROP FUNCTION IF EXISTS buzz_node.ban_pubkey(uuid, text, text, text);
""")


def downgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.remove_relay_member(uuid, text, boolean, boolean);
DROP FUNCTION IF EXISTS buzz_node.remove_relay_member(uuid, text, boolean, boolean);
DROP FUNCTION IF EXISTS buzz.ban_pubkey(uuid, text, text, text, boolean);
DROP FUNCTION IF EXISTS buzz_node.ban_pubkey(uuid, text, text, text, boolean);
""")
