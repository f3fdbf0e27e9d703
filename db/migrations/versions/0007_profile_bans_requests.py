"""A community's profile and join policy, its bans and join requests, sealed invite codes
(SPEC §3, amended 2026-12-02).

- community_profiles: what a community shows to people (name, description, icon) and its join
  policy. One row per community, made by the first setter: no row means no profile and the
  policy 'invite'. A table of its own, sharded like the members, rather than columns of
  communities (a reference table on a cluster): a join request reads the policy in the same
  worker transaction that adds the member.
- banned_pubkeys: who may not come back by themselves.
- join_requests: a pubkey's request to join (a claimless kind 28934), pending, or rejected
  and kept for 24 hours so that the same pubkey cannot ask again at once. One row per pubkey:
  asking again after that replaces the row. Bounded by request_membership itself (30 days,
  1,000 pending per community), without a sweep.
- relay_invites.sealed: opaque text kept with an invite. The relay keeps there the code
  sealed to its own key (NIP-44), so that it can list the codes it made while the database
  holds none readable; claims use only the hash.
- create_relay_invite gains p_code and p_sealed, and relay_invites the sealed column: their
  old signatures go (the function files create the new ones).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from buzz_signer.migrate import run_sql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run_sql(r"""
DROP FUNCTION IF EXISTS buzz.create_relay_invite(uuid, text, integer, interval);
DROP FUNCTION IF EXISTS buzz.relay_invites(uuid);

-- Free text people wrote (a description, a reason, a note): no control character but tab and
-- line breaks.
CREATE DOMAIN buzz_private.note_text AS text
    CHECK (VALUE !~ '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]');

CREATE TABLE buzz_private.community_profiles (
    community_id uuid PRIMARY KEY REFERENCES buzz_private.communities ON DELETE CASCADE,
    name text CHECK (pg_catalog.char_length(name) BETWEEN 1 AND 64
                     AND name !~ '[\x01-\x1f\x7f-\x9f]'),
    description buzz_private.note_text
        CHECK (pg_catalog.char_length(description) BETWEEN 1 AND 2000),
    icon text CHECK (pg_catalog.char_length(icon) <= 500
                     AND icon ~ '^https://[^/?#[:space:][:cntrl:]"<>\\]+([/?#][^[:space:][:cntrl:]"<>\\]*)?$'),
    join_policy text COLLATE "C" NOT NULL DEFAULT 'invite'
        CHECK (join_policy IN ('invite', 'request', 'open')),
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

CREATE TABLE buzz_private.banned_pubkeys (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    pubkey buzz_private.hex_key NOT NULL,
    reason buzz_private.note_text CHECK (pg_catalog.char_length(reason) <= 1000),
    banned_by text CHECK (pg_catalog.length(banned_by) BETWEEN 1 AND 64),
    banned_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (community_id, pubkey)
);

CREATE TABLE buzz_private.join_requests (
    community_id uuid NOT NULL REFERENCES buzz_private.communities ON DELETE CASCADE,
    request_id buzz_private.hex_key NOT NULL,   -- the 28934 event's id
    pubkey buzz_private.hex_key NOT NULL,
    note buzz_private.note_text CHECK (pg_catalog.char_length(note) <= 1000),
    requested_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    rejected_at timestamptz,                      -- NULL: pending
    rejection_reason buzz_private.note_text CHECK (pg_catalog.char_length(rejection_reason) <= 1000),
    PRIMARY KEY (community_id, request_id)
);
CREATE UNIQUE INDEX join_requests_one_per_pubkey
    ON buzz_private.join_requests (community_id, pubkey);
-- The expiry and the 1,000 bound read the oldest first.
CREATE INDEX join_requests_by_age ON buzz_private.join_requests (community_id, requested_at);

ALTER TABLE buzz_private.relay_invites
    ADD COLUMN sealed text CHECK (pg_catalog.length(sealed) BETWEEN 1 AND 1000);

ALTER DOMAIN buzz_private.note_text OWNER TO buzz_owner;
ALTER TABLE buzz_private.community_profiles OWNER TO buzz_owner;
ALTER TABLE buzz_private.banned_pubkeys OWNER TO buzz_owner;
ALTER TABLE buzz_private.join_requests OWNER TO buzz_owner;
REVOKE ALL ON TABLE buzz_private.community_profiles FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.banned_pubkeys FROM PUBLIC;
REVOKE ALL ON TABLE buzz_private.join_requests FROM PUBLIC;
""")


def downgrade() -> None:
    # Revision 0006's function files create create_relay_invite and relay_invites as they were.
    run_sql("""
DROP FUNCTION IF EXISTS buzz.create_relay_invite(uuid, text, integer, interval, text, text);
DROP FUNCTION IF EXISTS buzz.relay_invites(uuid);
DROP FUNCTION IF EXISTS buzz.set_community_profile(uuid, text, text);
DROP FUNCTION IF EXISTS buzz.community_profile(uuid);
DROP FUNCTION IF EXISTS buzz.ban_pubkey(uuid, text, text, text);
DROP FUNCTION IF EXISTS buzz.unban_pubkey(uuid, text);
DROP FUNCTION IF EXISTS buzz.banned_pubkeys(uuid);
DROP FUNCTION IF EXISTS buzz.set_join_policy(uuid, text);
DROP FUNCTION IF EXISTS buzz.request_membership(uuid, text, text, text);
DROP FUNCTION IF EXISTS buzz.join_requests(uuid);
DROP FUNCTION IF EXISTS buzz.approve_join_request(uuid, text, text);
DROP FUNCTION IF EXISTS buzz.reject_join_request(uuid, text, text);
DROP FUNCTION IF EXISTS buzz_private.lock_bans(uuid, boolean);
DROP FUNCTION IF EXISTS buzz_private.normalize_note(text, text, integer);
DROP FUNCTION IF EXISTS buzz_private.normalize_event_id(text, text);
ALTER TABLE buzz_private.relay_invites DROP COLUMN sealed;
DROP TABLE buzz_private.join_requests, buzz_private.banned_pubkeys,
           buzz_private.community_profiles;
DROP DOMAIN buzz_private.note_text;
""")
