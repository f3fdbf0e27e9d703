"""Delegations end with membership (SPEC section 10): methods assigned to a member are taken
back when the member leaves, is removed or is banned (buzz_private.release_departed, from this
revision's functions on). Until now they stayed, and were in force again when the person came
back; this revision deletes the assignments of everyone who is not a member now.

The downgrade keeps what is there: the deleted assignments are not restored (they named people
who had left), and the functions it goes back to leave assignments in place again.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06
"""

from buzz_signer.migrate import run_statements

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # On Citus, one shard after the other: a parallel multi-shard DELETE would forbid the
    # function files applied later in this transaction (a placeholder setting on one server).
    run_statements("""
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
DELETE FROM buzz_private.method_assignments a
WHERE NOT EXISTS (SELECT FROM buzz_private.relay_members m
                  WHERE m.community_id = a.community_id AND m.pubkey = a.pubkey);
""")


def downgrade() -> None:
    pass
