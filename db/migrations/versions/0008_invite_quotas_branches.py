"""Invitations as a pyramid runs them: invite quotas and branches (SPEC §3, amended
2026-12-02), and the role that alone may rotate the relay key (SPEC §4).

- buzz_key_admin: a NOLOGIN role, the only one granted rotate_relay_key; the grant moves here
  from buzz_writer, so that a service that writes members cannot re-point the relay's
  identity. A rotation publishes lists, so the role is a writer too (buzz_writer is granted
  to it, as buzz_reader is to buzz_writer).
- invite_quotas: how many members a holder of base role admin or member may bring in, per
  community. No row means the default (admin: no limit, member: 0); a row with a NULL quota
  means no limit. A table of its own, sharded with the members on a cluster: an invite's
  creation reads it in the worker transaction that counts the creator's invites.
- relay_members (community_id, added_by): who a member brought in, read by every departure
  (its invitees are re-attached) and by a branch removal (walked down, a generation a
  statement), and counted by invites_left.
- relay_invites (community_id, created_by): a creator's invites, counted by invites_left and
  revoked when the creator stops being a member.
- remove_relay_member gains p_with_branch boolean DEFAULT false: the two-argument function is
  dropped (a call with two arguments reaches the new one). On a cluster the function a
  worker runs (buzz_node) goes too; buzz_signer.citus.distribute makes the new one.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from buzz_signer.migrate import run_statements

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements(r"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'buzz_key_admin') THEN
        CREATE ROLE buzz_key_admin NOLOGIN;
    END IF;
END
$$;
GRANT buzz_writer TO buzz_key_admin;
-- On a new database the function files make rotate_relay_key after this, granted to
-- buzz_key_admin alone; an existing one moves its grant here.
DO $$
BEGIN
    IF to_regprocedure('buzz.rotate_relay_key(text, integer)') IS NOT NULL THEN
        REVOKE EXECUTE ON FUNCTION buzz.rotate_relay_key(text, integer) FROM buzz_writer;
        GRANT EXECUTE ON FUNCTION buzz.rotate_relay_key(text, integer) TO buzz_key_admin;
    END IF;
END
$$;

DROP FUNCTION IF EXISTS buzz.remove_relay_member(uuid, text);
DROP FUNCTION IF EXISTS buzz_node.remove_relay_member(uuid, text);

CREATE TABLE buzz_private.invite_quotas (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    role text COLLATE "C" NOT NULL CHECK (role IN ('admin', 'member')),
    quota integer CHECK (quota >= 0),   -- NULL: no limit
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, role)
);
ALTER TABLE buzz_private.invite_quotas OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.invite_quotas FROM PUBLIC;

CREATE INDEX relay_members_added_by ON buzz_private.relay_members (community_id, added_by);
CREATE INDEX relay_invites_created_by ON buzz_private.relay_invites (community_id, created_by);
""")


def downgrade() -> None:
    # Revision 0007's function files create remove_relay_member(uuid, text) and the functions
    # changed here as they were. buzz_key_admin stays, as every role does (roles are shared by
    # the databases of the cluster): only this database's grants to it go.
    run_statements("""
DO $$
BEGIN
    IF to_regprocedure('buzz.rotate_relay_key(text, integer)') IS NOT NULL THEN
        GRANT EXECUTE ON FUNCTION buzz.rotate_relay_key(text, integer) TO buzz_writer;
        REVOKE EXECUTE ON FUNCTION buzz.rotate_relay_key(text, integer) FROM buzz_key_admin;
    END IF;
END
$$;
DROP FUNCTION IF EXISTS buzz.remove_relay_member(uuid, text, boolean);
DROP FUNCTION IF EXISTS buzz_node.remove_relay_member(uuid, text, boolean);
DROP FUNCTION IF EXISTS buzz.set_invite_quota(uuid, text, integer);
DROP FUNCTION IF EXISTS buzz.invites_left(uuid, text);
DROP FUNCTION IF EXISTS buzz.invite_quotas(uuid);
DROP FUNCTION IF EXISTS buzz_node.set_invite_quota(uuid, text, integer);
DROP FUNCTION IF EXISTS buzz_private.invites_left(uuid, text);
DROP FUNCTION IF EXISTS buzz_private.invite_quota(uuid, text);
DROP FUNCTION IF EXISTS buzz_private.release_departed(uuid, text[], text[]);
DROP FUNCTION IF EXISTS buzz_private.remove_member(uuid, text, text);
DROP INDEX buzz_private.relay_invites_created_by;
DROP INDEX buzz_private.relay_members_added_by;
DROP TABLE buzz_private.invite_quotas;
""")
