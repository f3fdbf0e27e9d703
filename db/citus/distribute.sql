-- Shards the schema by community on a Citus cluster (buzz_signer.citus.distribute, after the
-- migrations; docs/scale-out.md). Idempotent: tables already in Citus's metadata are skipped.
--
-- Reference tables (a copy on every node): what every write reads and no community owns:
-- communities (its host is unique across communities, which a table sharded by community_id
-- cannot enforce), settings and the relay key.
-- Distributed by community_id, all co-located: every table a community's writes touch, so
-- that one community's rows, and every statement of its write paths, are on one worker.
-- Not here: the tx_* scratch tables. They stay local tables, one set on every node, since
-- a transaction's bookkeeping is the business of the node it runs on
-- (buzz_signer.citus.copy_scratch_tables copies their definitions to the workers).

-- A column dropped by an earlier migration (membership_events.event_seq, 0006) makes Citus
-- generate invalid DDL for the table: rebuild it first, without the dropped column.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
               WHERE a.attrelid = 'buzz_private.membership_events'::regclass AND a.attisdropped)
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p
                       WHERE p.logicalrelid = 'buzz_private.membership_events'::regclass) THEN
        -- Its function records the table; the function files create it again.
        DROP FUNCTION IF EXISTS buzz.membership_events(uuid, bigint);
        CREATE TABLE buzz_private.membership_events_rebuilt
            (LIKE buzz_private.membership_events INCLUDING ALL);
        INSERT INTO buzz_private.membership_events_rebuilt
            SELECT * FROM buzz_private.membership_events;
        DROP TABLE buzz_private.membership_events;
        ALTER TABLE buzz_private.membership_events_rebuilt RENAME TO membership_events;
        ALTER INDEX buzz_private.membership_events_rebuilt_pkey RENAME TO membership_events_pkey;
        ALTER TABLE buzz_private.membership_events OWNER TO buzz_owner;
        ALTER TABLE buzz_private.membership_events
            ADD CONSTRAINT membership_events_community_id_fkey FOREIGN KEY (community_id)
            REFERENCES buzz_private.communities ON DELETE CASCADE;
    END IF;
END
$$;

SELECT create_reference_table(t)
FROM unnest(ARRAY['buzz_private.communities', 'buzz_private.settings',
                  'buzz_private.relay_key']::regclass[]) AS t
WHERE NOT EXISTS (SELECT FROM citus_tables c
                  WHERE c.table_name = t AND c.citus_table_type = 'reference');

SELECT create_distributed_table(t, 'community_id',
                                colocate_with => CASE WHEN t = 'buzz_private.relay_members'::regclass
                                                      THEN 'none' ELSE 'buzz_private.relay_members' END)
FROM unnest(ARRAY['buzz_private.relay_members', 'buzz_private.member_lists',
                  'buzz_private.member_list_pieces', 'buzz_private.membership_events',
                  'buzz_private.policy_acceptances', 'buzz_private.relay_allowlist',
                  'buzz_private.relay_invites', 'buzz_private.roles',
                  'buzz_private.role_events', 'buzz_private.community_profiles',
                  'buzz_private.banned_pubkeys', 'buzz_private.join_requests',
                  'buzz_private.invite_quotas', 'buzz_private.banned_events',
                  'buzz_private.kind_rules', 'buzz_private.blocked_ips',
                  'buzz_private.method_assignments',
                  'buzz_private.member_profiles']::regclass[]) WITH ORDINALITY AS d (t, n)
WHERE NOT EXISTS (SELECT FROM citus_tables c
                  WHERE c.table_name = d.t AND c.citus_table_type = 'distributed')
ORDER BY d.n;

-- The functions run as buzz_owner (SECURITY DEFINER), and Citus reaches the other nodes as the
-- current user: on a cluster buzz_owner logs in, from the nodes only (pg_hba.conf and
-- pg_dist_authinfo, docs/scale-out.md).
ALTER ROLE buzz_owner LOGIN;

-- The one-server implementations of the write paths that run on a community's worker, and
-- the functions each worker runs for the coordinator (buzz_signer.citus).
CREATE SCHEMA IF NOT EXISTS buzz_node AUTHORIZATION buzz_owner;
REVOKE ALL ON SCHEMA buzz_node FROM PUBLIC;

-- The coordinator's record of the events this transaction made live on the workers, which it
-- announces when it commits (buzz_private.announce_routed): a worker cannot NOTIFY, since a
-- transaction that did cannot be prepared for two-phase commit.
CREATE UNLOGGED TABLE IF NOT EXISTS buzz_private.tx_announcements (
    xid xid8 NOT NULL,
    community_id uuid NOT NULL,
    address text COLLATE "C" NOT NULL,  -- '' for the list, else the role id
    id text COLLATE "C" NOT NULL,
    kind integer NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (xid, community_id, address)
);
ALTER TABLE buzz_private.tx_announcements OWNER TO buzz_owner;
