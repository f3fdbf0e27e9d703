-- buzz.membership_events_newest(p_community uuid, p_kinds integer[], p_ids text[],
--     p_members text[], p_since bigint, p_until bigint, p_limit integer) -> SETOF json
-- A REQ filter answered in the database: each condition (kinds, ids, members named by the
-- p tag, since, until) and the limit, newest first, another community's events never;
-- the newest event of 2,000 read as one row (pg_stat_xact_user_tables), by id and by member
-- a few; bad input (22023); who may call it.
BEGIN;
\ir lib/fixtures.sql

-- Rows of membership_events this transaction has read so far (by index or by scan).
CREATE FUNCTION pg_temp.rows_read() RETURNS bigint LANGUAGE sql
RETURN (SELECT coalesce(t.seq_tup_read, 0) + coalesce(t.idx_tup_fetch, 0)
        FROM pg_catalog.pg_stat_xact_user_tables t
        WHERE t.relid = 'buzz_private.membership_events'::regclass);
-- What a call answers, as 'kind:created_at' strings in its order.
CREATE FUNCTION pg_temp.got(p_sql text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v_got text[];
BEGIN
    EXECUTE format('SELECT coalesce(array_agg((e->>''kind'') || '':'' || (e->>''created_at'')), ''{}'')'
                   ' FROM (%s) x (e)', p_sql) INTO v_got;
    RETURN v_got;
END
$$;

SELECT plan(16);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
-- 2,000 events stored as a restore would store them (no trigger runs in replica mode): the
-- odd created_at an 8000, the even an 8001, each of its own member; and one of another
-- community, newer than all.
SET LOCAL session_replication_role = replica;
DELETE FROM buzz_private.membership_events;  -- the owners' 8000s, of today
INSERT INTO buzz_private.membership_events (community_id, id, pubkey, created_at, kind, member_pubkey, sig)
SELECT :'c', encode(sha256(convert_to('event ' || i, 'UTF8')), 'hex'), pg_temp.relay_pubkey(),
       1000 + i, CASE WHEN i % 2 = 1 THEN 8000 ELSE 8001 END, pg_temp.pk(i), repeat('ab', 64)
FROM generate_series(1, 2000) i;
INSERT INTO buzz_private.membership_events (community_id, id, pubkey, created_at, kind, member_pubkey, sig)
VALUES (:'other', repeat('cd', 32), pg_temp.relay_pubkey(), 9999, 8000, pg_temp.pk(1), repeat('ab', 64));
SET LOCAL session_replication_role = origin;
ANALYZE buzz_private.membership_events;

SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_limit => 3)', :'c')),
          ARRAY['8001:3000', '8000:2999', '8001:2998'], 'newest first, the limit applied, another community''s never');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, ARRAY[8000], p_limit => 2)', :'c')),
          ARRAY['8000:2999', '8000:2997'], 'p_kinds');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_until => 1500, p_limit => 2)', :'c')),
          ARRAY['8001:1500', '8000:1499'], 'p_until, inclusive');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_since => 2999)', :'c')),
          ARRAY['8001:3000', '8000:2999'], 'p_since, inclusive');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_since => 1200, p_until => 1100)', :'c')),
          '{}'::text[], 'p_since after p_until: nothing');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_ids => ARRAY[%L, %L, %L])', :'c',
                             encode(sha256(convert_to('event 7', 'UTF8')), 'hex'),
                             encode(sha256(convert_to('event 1999', 'UTF8')), 'hex'), repeat('cd', 32))),
          ARRAY['8000:2999', '8000:1007'], 'p_ids (another community''s id finds nothing)');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_members => ARRAY[%L, %L], p_kinds => ARRAY[8001])',
                             :'c', pg_temp.pk(10), pg_temp.pk(11))),
          ARRAY['8001:1010'], 'p_members: the p tag, with p_kinds');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_limit => 0)', :'c')),
          '{}'::text[], 'p_limit 0: nothing');
SELECT is(pg_temp.got(format('SELECT * FROM buzz.membership_events_newest(%L, p_ids => ''{}'')', :'c')),
          '{}'::text[], 'no ids: nothing');
SELECT is((SELECT e::jsonb -> 'tags' FROM buzz.membership_events_newest(:'c', p_limit => 1) e),
          jsonb_build_array(jsonb_build_array('-'), jsonb_build_array('p', pg_temp.pk(2000))),
          'an event as membership_events gives it');

-- What a filter reads: the rows it answers, however many are stored.
SELECT pg_temp.rows_read() AS before \gset
SELECT count(*) FROM buzz.membership_events_newest(:'c', p_limit => 1);
SELECT cmp_ok(pg_temp.rows_read() - :before, '<=', 2::bigint, 'the newest of 2,000 reads one row (or two)');
SELECT pg_temp.rows_read() AS before \gset
SELECT count(*) FROM buzz.membership_events_newest(:'c', ARRAY[8001], p_until => 2500, p_limit => 10);
SELECT cmp_ok(pg_temp.rows_read() - :before, '<=', 22::bigint, 'ten 8001s back from a time read about twenty');
SELECT pg_temp.rows_read() AS before \gset
SELECT count(*) FROM buzz.membership_events_newest(:'c', p_members => ARRAY[pg_temp.pk(5)]);
SELECT cmp_ok(pg_temp.rows_read() - :before, '<=', 2::bigint, 'a member''s events: by the member''s index');

-- Bad input
SELECT throws_ok(format('SELECT * FROM buzz.membership_events_newest(%L, p_limit => -1)', :'c'),
                 '22023', NULL, 'a negative limit: 22023');
SELECT throws_ok(format('SELECT * FROM buzz.membership_events_newest(%L, p_ids => array_fill(''x''::text, ARRAY[1001]))', :'c'),
                 '22023', NULL, '1,001 ids: 22023');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*)::integer FROM buzz.membership_events_newest(:'c', p_limit => 5)), 5, 'buzz_reader may read');
RESET ROLE;
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
