"""What several relay processes share (SPEC §9): the NIP-98 events accepted, and the counts
behind the rate limits (invites minted, failed claims), so that each holds across every
buzz-relay process of one database.

- accepted_auth_events: a NIP-98 authorization, by event id, kept until it could no longer be
  fresh (buzz.accept_auth_event); a change accepts it once in all the processes.
- rate_windows: per scope and key (a pubkey, an address), the times of its hits within the
  window, at most the limit of them (buzz.take_rate, buzz.rate_reached). UNLOGGED: counts
  are not data. After a crash of the database server they start over, as they did when a
  relay process restarted; a standby has none, and needs none.

Both are bounded without a sweep: each call that adds a row deletes up to two expired ones
(oldest first, by the expires_at index), so rows never outnumber those live within the
window, plus what the last quiet spell left. Neither references a community: they live where
the relay connects, and on a Citus cluster they stay local tables of the coordinator.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from buzz_signer.migrate import run_statements

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_statements(r"""
CREATE TABLE buzz_private.accepted_auth_events (
    event_id buzz_private.hex_key PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX accepted_auth_events_expires_at ON buzz_private.accepted_auth_events (expires_at);

CREATE UNLOGGED TABLE buzz_private.rate_windows (
    scope text COLLATE "C" NOT NULL CHECK (scope ~ '^[a-z_]{1,32}$'),
    key text COLLATE "C" NOT NULL CHECK (pg_catalog.length(key) BETWEEN 1 AND 200),
    hits timestamptz[] NOT NULL CHECK (pg_catalog.cardinality(hits) <= 1000),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX rate_windows_expires_at ON buzz_private.rate_windows (expires_at);

ALTER TABLE buzz_private.accepted_auth_events OWNER TO buzz_owner;
ALTER TABLE buzz_private.rate_windows OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.accepted_auth_events FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.rate_windows FROM PUBLIC;
""")


def downgrade() -> None:
    run_statements("""
DROP FUNCTION IF EXISTS buzz.accept_auth_event(text, timestamptz);
DROP FUNCTION IF EXISTS buzz.take_rate(text, text[], integer, integer);
DROP FUNCTION IF EXISTS buzz.rate_reached(text, text[], integer, integer);
DROP FUNCTION IF EXISTS buzz_private.rate_keys(text, text[], integer, integer);
DROP TABLE buzz_private.rate_windows, buzz_private.accepted_auth_events;
""")
