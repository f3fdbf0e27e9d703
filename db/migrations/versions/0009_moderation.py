"""Moderation behind the gate (SPEC §7, NIP-86): banned events, kind rules, blocked addresses
and the methods assigned to members, per community.

Each is a table of its own, sharded with the members on a cluster (distribution column
community_id), read by the relay into memory and reloaded when a change commits (NOTIFY
buzz_moderation, sent by the function files' writes). Every table is bounded, by its CHECKs
or by the writes that fill it (docs/design.md):

- banned_events: event ids the gate drops from the upstream's answers and refuses when
  published; at most 10,000 per community (ban_event).
- kind_rules: a kind is allowed (allowed true), disallowed (false) or neither (no row); kinds
  are NIP-01's 0..65535, so at most 65,536 rows per community.
- blocked_ips: an address or a network (cidr: IPv4 or IPv6, never an IPv4-mapped IPv6 one,
  which is stored as its IPv4 address); at most 1,000 per community (block_ip).
- method_assignments: a NIP-86 method a member may call besides what their role allows; at
  most 1,000 per community (assign_method). Which methods may be assigned is the function's
  to say (assign_method): the table checks only the name's shape.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from buzz_signer.migrate import run_statements

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements(r"""
CREATE TABLE buzz_private.banned_events (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    event_id buzz_private.hex_key NOT NULL,
    reason buzz_private.note_text CHECK (pg_catalog.char_length(reason) <= 1000),
    banned_by text CHECK (pg_catalog.length(banned_by) BETWEEN 1 AND 64),
    banned_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, event_id)
);

CREATE TABLE buzz_private.kind_rules (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    kind integer NOT NULL CHECK (kind BETWEEN 0 AND 65535),
    allowed boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, kind)
);

CREATE TABLE buzz_private.blocked_ips (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    address cidr NOT NULL
        CHECK (pg_catalog.family(address) = 4 OR NOT address <<= '::ffff:0.0.0.0/96'::cidr),
    reason buzz_private.note_text CHECK (pg_catalog.char_length(reason) <= 1000),
    blocked_by text CHECK (pg_catalog.length(blocked_by) BETWEEN 1 AND 64),
    blocked_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, address)
);

CREATE TABLE buzz_private.method_assignments (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    pubkey buzz_private.hex_key NOT NULL,
    method text COLLATE "C" NOT NULL CHECK (method ~ '^[a-z]{1,64}$'),
    assigned_by text CHECK (pg_catalog.length(assigned_by) BETWEEN 1 AND 64),
    assigned_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, pubkey, method)
);

ALTER TABLE buzz_private.banned_events OWNER TO buzz_owner;
ALTER TABLE buzz_private.kind_rules OWNER TO buzz_owner;
ALTER TABLE buzz_private.blocked_ips OWNER TO buzz_owner;
ALTER TABLE buzz_private.method_assignments OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.banned_events FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.kind_rules FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.blocked_ips FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.method_assignments FROM PUBLIC;
""")


def downgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.ban_event(uuid, text, text, text);
DROP FUNCTION IF EXISTS buzz.unban_event(uuid, text);
DROP FUNCTION IF EXISTS buzz.banned_events(uuid);
DROP FUNCTION IF EXISTS buzz.allow_kind(uuid, integer);
DROP FUNCTION IF EXISTS buzz.disallow_kind(uuid, integer);
DROP FUNCTION IF EXISTS buzz.clear_kind_rule(uuid, integer);
DROP FUNCTION IF EXISTS buzz.kind_rules(uuid);
DROP FUNCTION IF EXISTS buzz.block_ip(uuid, inet, text, text);
DROP FUNCTION IF EXISTS buzz.unblock_ip(uuid, inet);
DROP FUNCTION IF EXISTS buzz.blocked_ips(uuid);
DROP FUNCTION IF EXISTS buzz.assign_method(uuid, text, text, text);
DROP FUNCTION IF EXISTS buzz.unassign_method(uuid, text, text);
DROP FUNCTION IF EXISTS buzz.method_assignees(uuid);
DROP FUNCTION IF EXISTS buzz.moderation_rules(uuid);
DROP FUNCTION IF EXISTS buzz_private.lock_moderation(uuid);
DROP FUNCTION IF EXISTS buzz_private.set_kind_rule(uuid, integer, boolean);
DROP FUNCTION IF EXISTS buzz_private.normalize_address(inet);
DROP FUNCTION IF EXISTS buzz_private.announce_moderation(uuid);
DROP FUNCTION IF EXISTS buzz_private.delegable_method(text);
DROP TABLE buzz_private.method_assignments, buzz_private.blocked_ips,
           buzz_private.kind_rules, buzz_private.banned_events;
""")
