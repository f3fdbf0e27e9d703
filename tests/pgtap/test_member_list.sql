-- buzz.member_list(p_community uuid) -> jsonb
-- The live signed kind 13534 list as a NIP-01 object: its fields, tags (["-"] first, then
-- every member by pubkey with its role), an id that hashes its content, the committed list
-- until a new one is inserted, archived communities, NULL for an unknown or NULL community or
-- one without a list, the copy insert_signed_events keeps (served while its id is the live
-- list's, else the list is built from its pieces), and who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(35);

SELECT pg_temp.community() AS c \gset
SELECT buzz.member_list(:'c') AS first \gset

SELECT is((SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(:'first'::jsonb) k),
          ARRAY['content', 'created_at', 'id', 'kind', 'pubkey', 'sig', 'tags'],
          'a NIP-01 event: id, pubkey, created_at, kind, tags, content, sig');
SELECT is(:'first'::jsonb -> 'kind', '13534'::jsonb, '... of kind 13534');
SELECT is(:'first'::jsonb ->> 'pubkey', pg_temp.relay_pubkey(), '... by the relay key');
SELECT is(:'first'::jsonb -> 'content', '""'::jsonb, '... with empty content');
SELECT is(jsonb_typeof(:'first'::jsonb -> 'created_at'), 'number', '... created_at a number');
SELECT ok(:'first'::jsonb ->> 'sig' ~ '^[0-9a-f]{128}$' AND :'first'::jsonb ->> 'id' ~ '^[0-9a-f]{64}$',
          '... id and sig in lowercase hex');
SELECT is(:'first'::jsonb -> 'tags', jsonb_build_array(jsonb_build_array('-'),
                                                       jsonb_build_array('member', pg_temp.pk(0), 'owner')),
          '... tags: ["-"], then the owner');
SELECT is(:'first'::jsonb ->> 'id',
          encode(sha256(convert_to(format('[0,"%s",%s,13534,%s,""]', pg_temp.relay_pubkey(),
                                          :'first'::jsonb ->> 'created_at', pg_temp.expected_tags(:'c')),
                                   'UTF8')), 'hex'),
          '... its id is the sha256 of its NIP-01 serialization');

-- After changes
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2), pg_temp.pk(3)]), 3, 'members added');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated', '... one made admin');
SELECT is(buzz.member_list(:'c'), :'first'::jsonb, 'before its list is written the live list is the committed one');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  $$SELECT v.pubkey, v.role FROM (VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'),
                         (pg_temp.pk(2), 'admin'), (pg_temp.pk(3), 'member')) v (pubkey, role)
                    ORDER BY v.pubkey COLLATE "C"$$,
                  'the new list names every member with its role, by pubkey');
SELECT is(buzz.member_list(:'c') -> 'tags' -> 0, '["-"]'::jsonb, '... ["-"] first');
SELECT ok(pg_temp.id_ok(buzz.member_list(:'c')), '... its id hashes its content');
SELECT cmp_ok((buzz.member_list(:'c') ->> 'created_at')::bigint, '>', (:'first'::jsonb ->> 'created_at')::bigint,
              '... a later created_at');

-- Archived, unknown, NULL, without a list
SELECT buzz.member_list(:'c') AS live \gset
SELECT is(buzz.archive_community(:'c'), 'archived', 'archived');
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, '... the list is still served');
SELECT ok(buzz.member_list(gen_random_uuid()) IS NULL, 'an unknown community: NULL');
SELECT ok(buzz.member_list(NULL) IS NULL, 'a NULL community: NULL');
SELECT pg_temp.community('other.example.org') AS other \gset
DELETE FROM buzz_private.member_lists WHERE community_id = :'other';
SELECT ok(buzz.member_list(:'other') IS NULL, 'a community whose list was deleted: NULL');

-- The copy kept by insert_signed_events (live_list_cache)
SELECT is((SELECT k.id FROM buzz_private.live_list_cache k WHERE k.community_id = :'c'),
          :'live'::jsonb ->> 'id', 'insert_signed_events kept a copy of the live list');
SELECT is((SELECT k.event FROM buzz_private.live_list_cache k WHERE k.community_id = :'c'),
          buzz_private.list_event(:'c'), '... equal to the list built from its header and pieces');
UPDATE buzz_private.live_list_cache SET event = event || '{"content": "changed"}' WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c') ->> 'content', 'changed', 'member_list serves the copy');
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'), $$VALUES ('cache_differs')$$,
                  '... and member_list_drift tells when it differs from the list');
UPDATE buzz_private.live_list_cache SET sig = repeat('ab', 64) WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, 'a copy whose sig is not the stored one is not served');
UPDATE buzz_private.live_list_cache SET sig = :'live'::jsonb ->> 'sig', id = repeat('0', 64) WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, 'a copy of another list is not served: built from the pieces');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... nor reported');
DELETE FROM buzz_private.live_list_cache WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, 'no copy (emptied by a crash): built from the pieces');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4)), 'added', '... a member added');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is((SELECT k.event FROM buzz_private.live_list_cache k WHERE k.community_id = :'c'),
          buzz_private.list_event(:'c'), 'the next list is kept again');
SELECT buzz.member_list(:'c') AS live \gset

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.member_list(:'c'), :'live'::jsonb, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
