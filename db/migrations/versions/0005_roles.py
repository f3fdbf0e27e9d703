"""Roles clients can discover (SPEC §6): role definitions, the defined roles a member holds,
and the signed kind 33534 events (and their kind 5 deletions).

- roles: a community's role definitions, base roles included (owner, admin, member get one
  each, here for existing communities and by create_community for new ones).
- relay_members.roles: the defined roles a member holds, ascending (COLLATE "C", as the list
  orders them). An array on the member row, not a table of its own: assigning a role is then
  an update of that row, which the member triggers already track, and building the list reads
  no second table (a 10,000-member list is rebuilt in one index range scan).
- role_events: the live signed event of each role address, a 33534 definition or, once the
  role is deleted, the kind 5 deletion of it; its tags are the signed bytes.
- tx_role_changes: the roles a transaction changed, for prepare (like tx_member_changes).
- tx_prepared_events gains the role id and the tags of a prepared role event.

Existing communities get base role definitions without signed events: member_list_drift
reports them ('role_missing') until `buzz-admin republish-members` (republish_member_list)
signs them, as it does after a restore.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from buzz_signer.migrate import run_sql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql(r"""
-- Its result gains the roles column (CREATE OR REPLACE cannot change a result type).
DROP FUNCTION IF EXISTS buzz.relay_members(uuid);

CREATE DOMAIN buzz_private.role_id AS text COLLATE "C"
    CHECK (VALUE ~ '^[a-z0-9_-]{1,64}$');

CREATE TABLE buzz_private.roles (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    role_id buzz_private.role_id NOT NULL,
    -- Printable: no C0 or C1 control character (PostgreSQL text holds no NUL).
    label text NOT NULL
        CHECK (pg_catalog.char_length(label) BETWEEN 1 AND 64 AND label !~ '[\x01-\x1f\x7f-\x9f]'),
    description text
        CHECK (pg_catalog.char_length(description) <= 500
               AND description !~ '[\x01-\x1f\x7f-\x9f]'),
    color integer CHECK (color BETWEEN 0 AND 360),
    sort_order integer,
    PRIMARY KEY (community_id, role_id)
);
INSERT INTO buzz_private.roles (community_id, role_id, label, sort_order)
SELECT c.community_id, b.role_id, b.label, b.sort_order
FROM buzz_private.communities c
CROSS JOIN (VALUES ('owner', 'Owner', 0), ('admin', 'Admin', 1), ('member', 'Member', 2))
    AS b (role_id, label, sort_order);

-- Defined roles only (a base role is the role column), each a role id, ascending, no NULLs.
ALTER TABLE buzz_private.relay_members
    ADD COLUMN roles text[] COLLATE "C" NOT NULL DEFAULT '{}'
        CHECK (pg_catalog.array_ndims(roles) IS NULL
               OR (pg_catalog.array_ndims(roles) = 1
                   AND pg_catalog.array_position(roles, NULL) IS NULL
                   AND pg_catalog.array_to_string(roles, ' ') ~ '^([a-z0-9_-]{1,64}( |$))+$'
                   AND NOT roles && ARRAY['owner', 'admin', 'member']::text[]));

CREATE TABLE buzz_private.role_events (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    role_id buzz_private.role_id NOT NULL,
    kind integer NOT NULL CHECK (kind IN (33534, 5)),
    id buzz_private.hex_key NOT NULL,
    pubkey buzz_private.hex_key NOT NULL,
    created_at bigint NOT NULL,
    tags text COLLATE "C" NOT NULL,
    sig buzz_private.hex_sig NOT NULL,
    PRIMARY KEY (community_id, role_id)
);

CREATE UNLOGGED TABLE buzz_private.tx_role_changes (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    role_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (xid, community_id, role_id)
);

ALTER TABLE buzz_private.tx_prepared_events
    ADD COLUMN role_id text COLLATE "C",   -- 33534 / 5
    ADD COLUMN tags text COLLATE "C";      -- 33534 / 5: the tags as signed

ALTER DOMAIN buzz_private.role_id OWNER TO buzz_owner;
ALTER TABLE buzz_private.roles OWNER TO buzz_owner;
ALTER TABLE buzz_private.role_events OWNER TO buzz_owner;
ALTER TABLE buzz_private.tx_role_changes OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.roles FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.role_events FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.tx_role_changes FROM PUBLIC;
""")


def downgrade() -> None:
    # Revision 0004's function files create relay_members without roles, and the functions
    # that read the dropped tables, again.
    run_sql("""
DROP FUNCTION IF EXISTS buzz.relay_members(uuid);
DROP FUNCTION IF EXISTS buzz.member_list_drift(uuid);
DROP FUNCTION IF EXISTS buzz_private.role_event_tags(text, text, text, integer, integer);
DROP FUNCTION IF EXISTS buzz_private.role_deletion_tags(text, text);
DROP FUNCTION IF EXISTS buzz_private.normalize_role_id(text, boolean);
DROP FUNCTION IF EXISTS buzz.define_role(uuid, text, text, text, integer, integer);
DROP FUNCTION IF EXISTS buzz.delete_role(uuid, text);
DROP FUNCTION IF EXISTS buzz.assign_role(uuid, text, text);
DROP FUNCTION IF EXISTS buzz.unassign_role(uuid, text, text);
DROP FUNCTION IF EXISTS buzz.role_definitions(uuid);
DROP FUNCTION IF EXISTS buzz.role_deletions(uuid);
DROP TABLE buzz_private.tx_role_changes, buzz_private.role_events, buzz_private.roles;
DROP FUNCTION IF EXISTS buzz_private.track_role_changes();
DROP FUNCTION IF EXISTS buzz_private.announce_role_event();
ALTER TABLE buzz_private.tx_prepared_events DROP COLUMN role_id, DROP COLUMN tags;
ALTER TABLE buzz_private.relay_members DROP COLUMN roles;
DROP DOMAIN buzz_private.role_id;
""")
