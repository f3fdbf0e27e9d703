-- buzz.relay_member(p_community uuid, p_pubkey text)
--   -> TABLE(pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
-- One member as relay_members gives it, the pubkey in any case; no row for a non-member, a
-- member of another community or a NULL community; BZIPK for a malformed pubkey; read by the
-- primary key (one row, however many members); who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.rows_read() RETURNS bigint LANGUAGE sql
RETURN (SELECT coalesce(t.seq_tup_read, 0) + coalesce(t.idx_tup_fetch, 0)
        FROM pg_catalog.pg_stat_xact_user_tables t
        WHERE t.relid = 'buzz_private.relay_members'::regclass);

SELECT plan(9);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1), 'admin', 'admin-ui'), 'added', 'setup: an admin');
SELECT is(buzz.add_relay_member(:'other', pg_temp.pk(2)), 'added', 'setup: a member of another community');
SELECT is(pg_temp.flush(), 4, '... published');

SELECT results_eq(format('SELECT m.pubkey, m.role, m.added_by, m.roles FROM buzz.relay_member(%L, %L) m',
                         :'c', upper(pg_temp.pk(1))),
                  format('SELECT m.pubkey, m.role, m.added_by, m.roles FROM buzz.relay_members(%L) m WHERE m.pubkey = %L',
                         :'c', pg_temp.pk(1)),
                  'a member, named in uppercase: as relay_members gives it');
SELECT is_empty(format('SELECT * FROM buzz.relay_member(%L, %L)', :'c', pg_temp.pk(2)),
                'a member of another community: no row');
SELECT throws_ok(format('SELECT * FROM buzz.relay_member(%L, %L)', :'c', 'not a pubkey'), 'BZIPK', NULL,
                 'a malformed pubkey: BZIPK');
SELECT is_empty(format('SELECT * FROM buzz.relay_member(NULL, %L)', pg_temp.pk(1)), 'a NULL community: no row');

-- 3,000 members more: the look-up still reads one row.
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.relay_members (community_id, pubkey, role)
SELECT :'c', pg_temp.pk(i), 'member' FROM generate_series(100, 3099) i;
SET LOCAL session_replication_role = origin;
ANALYZE buzz_private.relay_members;
SELECT pg_temp.rows_read() AS before \gset
SELECT count(*) FROM buzz.relay_member(:'c', pg_temp.pk(2000));
SELECT cmp_ok(pg_temp.rows_read() - :before, '<=', 1::bigint, 'one row read of 3,000 members');

SET LOCAL ROLE buzz_reader;
SELECT is((SELECT m.role FROM buzz.relay_member(:'c', pg_temp.pk(0)) m), 'owner', 'buzz_reader may read it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
