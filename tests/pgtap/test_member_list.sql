-- buzz.member_list(p_community uuid) -> json
-- The live signed kind 13534 list as the compact NIP-01 object: its fields, tags (["-"] first,
-- then every member by pubkey with its role and the defined roles it holds), its text byte for byte the object built
-- independently from the list's fields (keys in NIP-01's order, no whitespace), an id that is
-- the sha256 of the serialization of exactly those tag bytes, the committed list until a new
-- one is inserted, archived communities, NULL for an unknown or NULL community or one without
-- a list, built from the stored header and pieces every time (no kept copy), and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The compact NIP-01 text the live list of a community must be, built from its stored header
-- (id, pubkey, created_at, sig) and the tags of its stored members.
CREATE FUNCTION pg_temp.expected_list(p_community uuid) RETURNS text LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT pg_temp.nip01_object(l.id, l.pubkey, l.created_at, 13534,
                                pg_temp.expected_tags(p_community), l.sig)
    FROM buzz_private.member_lists l WHERE l.community_id = p_community;
END;

SELECT plan(42);

SELECT pg_temp.community() AS c \gset
SELECT buzz.member_list(:'c') AS first \gset

SELECT is(pg_typeof(buzz.member_list(:'c'))::text, 'json', 'member_list returns json');
SELECT is((SELECT array_agg(k) FROM json_object_keys(:'first'::json) k),
          ARRAY['id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig'],
          'a NIP-01 event: id, pubkey, created_at, kind, tags, content, sig, in that order');
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
SELECT is(:'first'::text, pg_temp.expected_list(:'c'),
          '... its text is byte for byte the compact object built from its fields');

-- After changes
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2), pg_temp.pk(3)]), 3, 'members added');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated', '... one made admin');
SELECT is(buzz.member_list(:'c')::text, :'first', 'before its list is written the live list is the committed one');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  $$SELECT v.pubkey, v.role FROM (VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'),
                         (pg_temp.pk(2), 'admin'), (pg_temp.pk(3), 'member')) v (pubkey, role)
                    ORDER BY v.pubkey COLLATE "C"$$,
                  'the new list names every member with its role, by pubkey');
SELECT is(buzz.member_list(:'c')::jsonb -> 'tags' -> 0, '["-"]'::jsonb, '... ["-"] first');
SELECT ok(pg_temp.id_ok(buzz.member_list(:'c')), '... its id hashes its content');
SELECT cmp_ok((buzz.member_list(:'c')::jsonb ->> 'created_at')::bigint, '>', (:'first'::jsonb ->> 'created_at')::bigint,
              '... a later created_at');
SELECT is(buzz.member_list(:'c')::text, pg_temp.expected_list(:'c'),
          '... its text is byte for byte the compact object built from its fields');
SELECT is(buzz.member_list(:'c')::jsonb ->> 'id',
          pg_temp.nip01_id(pg_temp.relay_pubkey(), (buzz.member_list(:'c')::jsonb ->> 'created_at')::bigint,
                           13534, pg_temp.expected_tags(:'c')),
          '... whose id is the sha256 of [0,pubkey,created_at,kind,tags,content] with those tag bytes');
SELECT ok(buzz_private.bip340_verify(decode(buzz.member_list(:'c')::jsonb ->> 'sig', 'hex'),
                                     decode(buzz.member_list(:'c')::jsonb ->> 'id', 'hex'),
                                     decode(pg_temp.relay_pubkey(), 'hex')),
          '... and whose signature verifies for that id and the relay key');

-- With defined roles held: after the base role, ascending
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', '-x', 'X')
          || buzz.assign_role(:'c', pg_temp.pk(1), 'mod') || buzz.assign_role(:'c', pg_temp.pk(1), '-x'),
          'defineddefinedassignedassigned', 'two roles defined, both held by pk(1)');
SELECT pg_temp.flush() AS n \gset
SELECT is((SELECT t::text FROM json_array_elements(buzz.member_list(:'c') -> 'tags') AS e (t) WHERE t ->> 1 = pg_temp.pk(1)),
          format('["member","%s","member","-x","mod"]', pg_temp.pk(1)),
          'a member''s tag names its base role, then its defined roles ascending');
SELECT is(buzz.member_list(:'c')::text, pg_temp.expected_list(:'c'),
          '... the list byte for byte the compact object built from its fields');
SELECT ok(pg_temp.id_ok(buzz.member_list(:'c')), '... its id hashes its content');

-- Archived, unknown, NULL, without a list
SELECT buzz.member_list(:'c') AS live \gset
SELECT is(buzz.archive_community(:'c'), 'archived', 'archived');
SELECT is(buzz.member_list(:'c')::text, :'live', '... the list is still served, the same bytes');
SELECT ok(buzz.member_list(gen_random_uuid()) IS NULL, 'an unknown community: NULL');
SELECT ok(buzz.member_list(NULL) IS NULL, 'a NULL community: NULL');
SELECT pg_temp.community('other.example.org') AS other \gset
DELETE FROM buzz_private.member_lists WHERE community_id = :'other';
SELECT ok(buzz.member_list(:'other') IS NULL, 'a community whose list was deleted: NULL');

-- Built from the stored header and pieces every time: nothing else is kept to serve instead
UPDATE buzz_private.member_lists SET sig = repeat('ab', 64) WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c')::text, replace(:'live', :'live'::jsonb ->> 'sig', repeat('ab', 64)),
          'a changed stored signature is served at once: the text is built from the header');
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'), $$VALUES ('bad_signature')$$,
                  '... and member_list_drift reports it');
UPDATE buzz_private.member_lists SET sig = :'live'::jsonb ->> 'sig' WHERE community_id = :'c';
UPDATE buzz_private.member_list_pieces SET tags = replace(tags, '"admin"', '"member"')
WHERE community_id = :'c' AND tags LIKE '%"admin"%';
SELECT is(buzz.member_list(:'c')::text, replace(:'live', '"admin"', '"member"'),
          'a changed stored piece is served at once: the tags are the stored pieces');
SELECT set_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'),
              $$VALUES ('members_differ'), ('id_mismatch')$$,
              '... and member_list_drift reports it');
UPDATE buzz_private.member_list_pieces SET tags = replace(tags, format('"%s","member"', pg_temp.pk(2)),
                                                          format('"%s","admin"', pg_temp.pk(2)))
WHERE community_id = :'c';
SELECT is(buzz.member_list(:'c')::text, :'live', 'the pieces put back: the same bytes as before');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... and no drift');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchived');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4)), 'added', '... a member added');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.member_list(:'c')::text, pg_temp.expected_list(:'c'),
          'the next list is again the compact object built from its fields');
SELECT buzz.member_list(:'c') AS live \gset

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is(buzz.member_list(:'c')::text, :'live', 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.member_list(:'c')::text, :'live', 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
