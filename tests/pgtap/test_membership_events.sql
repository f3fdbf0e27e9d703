-- buzz.membership_events(p_community uuid, p_since bigint DEFAULT 0) -> SETOF json
-- The signed 8000/8001 events of a community, oldest first (a write's events in prepare's
-- order), with created_at >= p_since; their fields and ids; each one's text byte for byte the
-- compact NIP-01 object built from its stored fields, its id the sha256 of the serialization
-- of exactly those tag bytes; none for role changes, republish
-- or a net no-op; no rows for an unknown, NULL or deleted community; and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The events as (kind, member, created_at), in the order returned.
CREATE FUNCTION pg_temp.signed_member_events(p_community uuid, p_since bigint DEFAULT 0)
RETURNS TABLE (kind integer, member text, created_at bigint) LANGUAGE sql
BEGIN ATOMIC
    SELECT (e ->> 'kind')::integer, e #>> '{tags,1,1}', (e ->> 'created_at')::bigint
    FROM buzz.membership_events(p_community, p_since) WITH ORDINALITY AS x (e, o)
    ORDER BY x.o;
END;

SELECT plan(26);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT (buzz.member_list(:'c') ->> 'created_at')::bigint AS t0 \gset
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(2), pg_temp.pk(1)]), 2, 'two members added');
SELECT is(pg_temp.flush(), 3, '... published');
SELECT (buzz.member_list(:'c') ->> 'created_at')::bigint AS t1 \gset
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'one removed');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT (buzz.member_list(:'c') ->> 'created_at')::bigint AS t2 \gset

SELECT results_eq(format('SELECT * FROM pg_temp.signed_member_events(%L)', :'c'),
                  format($$VALUES (8000, %L, %s::bigint), (8000, %L, %s), (8000, %L, %s), (8001, %L, %s)$$,
                         pg_temp.pk(0), :t0,
                         least(pg_temp.pk(1) COLLATE "C", pg_temp.pk(2)), :t1,
                         greatest(pg_temp.pk(1) COLLATE "C", pg_temp.pk(2)), :t1,
                         pg_temp.pk(1), :t2),
                  'every 8000 and 8001, oldest first, each write''s in pubkey order, with its list''s created_at');
SELECT ok((SELECT bool_and(pg_temp.id_ok(e)) FROM buzz.membership_events(:'c') e), '... each id hashes its event');
SELECT ok((SELECT bool_and(e ->> 'pubkey' = pg_temp.relay_pubkey() AND e ->> 'content' = ''
                           AND e ->> 'sig' ~ '^[0-9a-f]{128}$'
                           AND (e -> 'tags')::jsonb = jsonb_build_array(jsonb_build_array('-'),
                                                                        jsonb_build_array('p', e #>> '{tags,1,1}')))
           FROM buzz.membership_events(:'c') e),
          '... by the relay key, tags [["-"],["p",pubkey]], empty content, signed');
SELECT is((SELECT array_agg(DISTINCT k ORDER BY k) FROM buzz.membership_events(:'c') e, json_object_keys(e) k),
          ARRAY['content', 'created_at', 'id', 'kind', 'pubkey', 'sig', 'tags'], '... NIP-01 objects');
SELECT is((SELECT pg_typeof(e)::text FROM buzz.membership_events(:'c') e LIMIT 1), 'json',
          '... returned as json');
-- Byte identity: the text of each, in order, is the compact object built from its stored fields.
SELECT results_eq(format('SELECT e::text FROM buzz.membership_events(%L) e', :'c'),
                  format($$SELECT pg_temp.nip01_object(s.id, s.pubkey, s.created_at, s.kind,
                                                        pg_temp.member_event_tags(s.member_pubkey), s.sig) COLLATE "default"
                           FROM buzz_private.membership_events s WHERE s.community_id = %L
                           ORDER BY s.created_at, s.kind, s.member_pubkey$$, :'c'),
                  '... each one''s text is byte for byte the compact NIP-01 object of its fields');
SELECT is_empty(format($$SELECT e::text FROM buzz.membership_events(%L) e
                         WHERE e ->> 'id' IS DISTINCT FROM
                               pg_temp.nip01_id(pg_temp.relay_pubkey(), (e ->> 'created_at')::bigint,
                                                (e ->> 'kind')::integer,
                                                pg_temp.member_event_tags(e #>> '{tags,1,1}'))$$, :'c'),
                '... each id is the sha256 of [0,pubkey,created_at,kind,tags,content] with those tag bytes');

-- p_since
SELECT results_eq(format('SELECT kind, member FROM pg_temp.signed_member_events(%L, %s)', :'c', :t2),
                  format($$VALUES (8001, %L)$$, pg_temp.pk(1)), 'p_since: created_at >= p_since');
SELECT is((SELECT count(*) FROM buzz.membership_events(:'c', :t1)), 3::bigint, '... inclusive');
SELECT is((SELECT count(*) FROM buzz.membership_events(:'c', NULL)), 4::bigint, 'p_since NULL: every event');
SELECT is((SELECT count(*) FROM buzz.membership_events(:'c')), 4::bigint, 'p_since omitted: every event');
SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L, %s)', :'c', :t2 + 1), 'p_since in the future: no rows');

-- No events
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated', 'a role changed');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', '... a member added and ...');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(3)), 'removed', '... removed again');
SELECT is(pg_temp.flush(), 1, '... published: the list alone');
SELECT is((SELECT count(*) FROM buzz.membership_events(:'c')), 4::bigint, '... no new event');

SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L)', gen_random_uuid()), 'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.membership_events(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*) FROM buzz.membership_events(:'other')), 1::bigint, 'buzz_reader may');
RESET ROLE;
SELECT is(buzz.delete_community(:'other'), 'deleted', 'a community deleted');
SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L)', :'other'), '... its events are gone');

SELECT * FROM finish();
ROLLBACK;
