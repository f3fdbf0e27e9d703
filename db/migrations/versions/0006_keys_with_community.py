"""Every key of a per-community table includes its community_id.

A table sharded by community (Citus, distributing by community_id) can enforce only unique
keys that include the distribution column, and none of its tables may have an identity
column. On one server the same keys are as good, and two are better:

- membership_events: its global sequence (event_seq) goes. The primary key is (community_id,
  created_at, member_pubkey): a community's events at one created_at are one transaction's,
  which names each pubkey once (an 8000 or an 8001, by net effect), and the events are served
  in prepare's order, kind then pubkey. The key is also the index membership_events(since)
  reads, so the separate time index goes with the sequence.
- relay_invites: the primary key is (community_id, invite_id), and a code's hash is unique per
  community (a claim names its community; codes carry 128 random bits). The index on
  community_id alone is the key's prefix now.
- tx_prepared_events: (xid, community_id, position).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from buzz_signer.migrate import run_sql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql("""
-- Its body names event_seq (an SQL-standard body records the column); the file creates it again.
DROP FUNCTION IF EXISTS buzz.membership_events(uuid, bigint);
ALTER TABLE buzz_private.membership_events DROP CONSTRAINT membership_events_pkey;
DROP INDEX buzz_private.membership_events_by_time;
ALTER TABLE buzz_private.membership_events DROP COLUMN event_seq;
ALTER TABLE buzz_private.membership_events
    ADD PRIMARY KEY (community_id, created_at, member_pubkey);

ALTER TABLE buzz_private.relay_invites DROP CONSTRAINT relay_invites_pkey;
ALTER TABLE buzz_private.relay_invites DROP CONSTRAINT relay_invites_code_sha256_key;
DROP INDEX buzz_private.relay_invites_community;
ALTER TABLE buzz_private.relay_invites ADD PRIMARY KEY (community_id, invite_id);
ALTER TABLE buzz_private.relay_invites ADD UNIQUE (community_id, code_sha256);

ALTER TABLE buzz_private.tx_prepared_events DROP CONSTRAINT tx_prepared_events_pkey;
ALTER TABLE buzz_private.tx_prepared_events ADD PRIMARY KEY (xid, community_id, position);
""")


def downgrade() -> None:
    run_sql("""
DROP FUNCTION IF EXISTS buzz.membership_events(uuid, bigint);
ALTER TABLE buzz_private.tx_prepared_events DROP CONSTRAINT tx_prepared_events_pkey;
ALTER TABLE buzz_private.tx_prepared_events ADD PRIMARY KEY (xid, position);

ALTER TABLE buzz_private.relay_invites DROP CONSTRAINT relay_invites_pkey;
ALTER TABLE buzz_private.relay_invites DROP CONSTRAINT relay_invites_community_id_code_sha256_key;
ALTER TABLE buzz_private.relay_invites ADD PRIMARY KEY (invite_id);
ALTER TABLE buzz_private.relay_invites ADD UNIQUE (code_sha256);
CREATE INDEX relay_invites_community ON buzz_private.relay_invites (community_id);

ALTER TABLE buzz_private.membership_events DROP CONSTRAINT membership_events_pkey;
ALTER TABLE buzz_private.membership_events
    ADD COLUMN event_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
CREATE INDEX membership_events_by_time
    ON buzz_private.membership_events (community_id, created_at, event_seq);
""")
