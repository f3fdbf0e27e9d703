-- Members' own profiles (SPEC sections 7 and 8):
--   buzz.set_member_profile(p_community uuid, p_event text) -> text
--   buzz.member_profiles(p_community uuid, p_authors text[], p_since bigint, p_until bigint,
--                        p_limit integer, p_ids text[]) -> SETOF text
-- A member's kind 0 is stored compact, replaceable (newest created_at, then lowest id); a
-- stranger's is not; a removal takes it (a ban or a leave deletes the member's row alike); the
-- shape, size, id and signature refused with
-- 22023 and BZSIG and nothing stored; the reads' filters; who may call them. The NIP-01
-- escaping of text against an id computed elsewhere, and the NOTIFY, are pytest's
-- (test_member_profiles.py).
BEGIN;
\ir lib/fixtures.sql

-- The test keys of secrets 4 and 5 (fixtures.sql's test_secret).
CREATE FUNCTION pg_temp.k4() RETURNS text LANGUAGE sql IMMUTABLE
RETURN 'e493dbf1c10d80f3581e4904930b1404cc6c13900ee0758474fa94abe8c4cd13';
CREATE FUNCTION pg_temp.k5() RETURNS text LANGUAGE sql IMMUTABLE
RETURN '2f8bde4d1a07209355b4a7250a5c5128e88b84bddc619ab7cba8d569b240efe4';
-- A kind 0 event by a test key, signed, as JSON text (with json_build_object's spaces).
CREATE FUNCTION pg_temp.kind0(p_pubkey text, p_created_at bigint, p_content text,
                              p_tags text DEFAULT '[]', p_kind integer DEFAULT 0)
RETURNS text LANGUAGE sql AS $$
    SELECT json_build_object('id', i.id, 'pubkey', p_pubkey, 'created_at', p_created_at,
                             'kind', p_kind, 'tags', p_tags::json, 'content', p_content,
                             'sig', (pg_temp.signatures(ARRAY[i.id], p_pubkey))[1])::text
    FROM (SELECT encode(sha256(convert_to(concat('[0,', to_json(p_pubkey), ',', p_created_at, ',',
                                                 p_kind, ',', p_tags, ',', to_json(p_content), ']'),
                                          'UTF8')), 'hex') AS id) i
$$;
-- The stored profiles, as the read answers them.
CREATE FUNCTION pg_temp.profiles(p_community uuid) RETURNS SETOF json LANGUAGE sql
BEGIN ATOMIC
    SELECT p::json FROM buzz.member_profiles(p_community) p;
END;
CREATE FUNCTION pg_temp.refused(p_event text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.set_member_profile(%L, %L)',
                        current_setting('test.community'), p_event), p_code, NULL, p_description);

SELECT plan(40);

SELECT function_returns('buzz', 'set_member_profile', ARRAY['uuid', 'text'], 'text',
                        'set_member_profile returns text');
SELECT function_returns('buzz', 'member_profiles',
                        ARRAY['uuid', 'text[]', 'bigint', 'bigint', 'integer', 'text[]'],
                        'setof text', 'member_profiles returns setof text');

SELECT pg_temp.community() AS c \gset
SELECT set_config('test.community', :'c', true) AS setup_config \gset
SELECT buzz.add_relay_member(:'c', pg_temp.k4()) AS setup_k4 \gset
SELECT pg_temp.flush() AS setup_published \gset

-- Stored, compact, for a member only
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k5(), 100, '{"name":"five"}')),
          'not_member', 'a stranger''s profile: not_member');
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 100, '{"name":"four"}', '[["alt","x"]]')),
          'stored', 'a member''s profile: stored');
SELECT is((SELECT count(*)::integer FROM pg_temp.profiles(:'c')), 1, '... one profile kept');
SELECT is((SELECT p ->> 'content' FROM pg_temp.profiles(:'c') p), '{"name":"four"}', '... its content');
SELECT ok((SELECT p::text !~ ' ' FROM buzz.member_profiles(:'c') p), '... stored compact');
SELECT is((SELECT p -> 'tags' ->> 0 FROM pg_temp.profiles(:'c') p), '["alt","x"]', '... with its tags');
SELECT ok(NOT pg_temp.marked(), '... and no list owed: not a membership write');

-- Replaceable
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 99, '{"name":"old"}')),
          'older', 'an older profile: older');
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 100, '{"name":"four"}', '[["alt","x"]]')),
          'older', 'the same profile again: older');
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 101, '{"name":"newer"}')),
          'stored', 'a newer profile: stored');
SELECT is((SELECT p ->> 'content' FROM pg_temp.profiles(:'c') p), '{"name":"newer"}', '... replacing the older');
SELECT (CASE WHEN (pg_temp.kind0(pg_temp.k4(), 102, 'a')::json ->> 'id') < (pg_temp.kind0(pg_temp.k4(), 102, 'b')::json ->> 'id')
             THEN 'a' ELSE 'b' END) AS low, (CASE WHEN (pg_temp.kind0(pg_temp.k4(), 102, 'a')::json ->> 'id') < (pg_temp.kind0(pg_temp.k4(), 102, 'b')::json ->> 'id')
             THEN 'b' ELSE 'a' END) AS high \gset
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 102, :'high')), 'stored',
          'at one second, the first: stored');
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 102, :'low')), 'stored',
          '... then the one of the lower id: stored');
SELECT is(buzz.set_member_profile(:'c', pg_temp.kind0(pg_temp.k4(), 102, :'high')), 'older',
          '... and the higher id again: older');
SELECT is((SELECT p ->> 'content' FROM pg_temp.profiles(:'c') p), :'low', '... the lower id kept');

-- Refused, nothing changed
SELECT pg_temp.kind0(pg_temp.k4(), 200, '{"name":"x"}') AS good \gset
SELECT pg_temp.refused(NULL, '22023', 'NULL: 22023');
SELECT pg_temp.refused('not json', '22023', 'not JSON: 22023');
SELECT pg_temp.refused('[1,2]', '22023', 'not an object: 22023');
SELECT pg_temp.refused(pg_temp.kind0(pg_temp.k4(), 200, 'x', '[]', 1), '22023', 'kind 1: 22023');
SELECT pg_temp.refused(replace(:'good', '"kind" : 0', '"kind" : "0"'), '22023', 'kind "0": 22023');
SELECT pg_temp.refused(replace(:'good', '"created_at" : 200', '"created_at" : 200.0'), '22023',
                       'created_at 200.0: 22023');
SELECT pg_temp.refused(replace(:'good', '{\"name\":\"x\"}', '{\"name\":\"y\"}'), '22023',
                       'content changed after signing (the id does not match): 22023');
SELECT pg_temp.refused(regexp_replace(:'good', '"sig" : "(.)', '"sig" : "\1f'), '22023',
                       'a sig of 129 characters: 22023');
SELECT pg_temp.refused(regexp_replace(:'good', '"sig" : "[0-9a-f]{8}', '"sig" : "00000000'), 'BZSIG',
                       'a signature that does not verify: BZSIG');
SELECT pg_temp.refused(pg_temp.kind0(pg_temp.k4(), 200, repeat('x', 16400)), '22023',
                       'over 16384 bytes: 22023');
SELECT pg_temp.refused(pg_temp.kind0(pg_temp.k4(), 200, 'bell' || chr(7)), '22023',
                       'a control character NIP-01 and JSON write differently: 22023');
SELECT pg_temp.refused(pg_temp.kind0(pg_temp.k4(), 200, 'x', '[["a", 1]]'), '22023',
                       'a tag with a number: 22023');
SELECT is((SELECT p ->> 'content' FROM pg_temp.profiles(:'c') p), :'low', 'the refused calls changed nothing');

-- The reads' filters
SELECT is((SELECT count(*)::integer FROM buzz.member_profiles(:'c', ARRAY[pg_temp.k5()])), 0,
          'by author: none of a stranger');
SELECT is((SELECT count(*)::integer FROM buzz.member_profiles(:'c', NULL, 103)), 0,
          'since after it: none');
SELECT is((SELECT count(*)::integer FROM buzz.member_profiles(:'c', ARRAY[pg_temp.k4()], 102, 102, 1)), 1,
          'by author, at its second, limit 1: it');
SELECT throws_ok(format('SELECT * FROM buzz.member_profiles(%L, NULL, NULL, NULL, -1)', :'c'), '22023', NULL,
                 'a negative limit: 22023');
SELECT is((SELECT p::json ->> 'content' FROM buzz.member_profiles(:'c', p_ids => ARRAY[
              (SELECT p ->> 'id' FROM pg_temp.profiles(:'c') p)]) p), :'low',
          'by id: it');
SELECT is((SELECT count(*)::integer FROM buzz.member_profiles(:'c', p_ids => ARRAY[repeat('0', 64)])), 0,
          'by an id not stored: none');
SELECT is((SELECT count(*)::integer FROM buzz.member_profiles(:'c', ARRAY[pg_temp.k5()], p_ids => ARRAY[
              (SELECT p ->> 'id' FROM pg_temp.profiles(:'c') p)])), 0,
          'by its id and another author: none');
SELECT throws_ok(format('SELECT * FROM buzz.member_profiles(%L, p_ids => array_fill(%L::text, ARRAY[1001]))',
                        :'c', repeat('0', 64)), '22023', NULL,
                 'over 1,000 ids: 22023');

-- Gone with the membership, in its transaction
SELECT is(buzz.remove_relay_member(:'c', pg_temp.k4()), 'removed', 'the member is removed ...');
SELECT is((SELECT count(*)::integer FROM pg_temp.profiles(:'c')), 0, '... and their profile with them');
SELECT pg_temp.flush() AS setup_removed \gset

SELECT * FROM finish();
ROLLBACK;
