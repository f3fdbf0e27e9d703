-- buzz.member_list_drift(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, problem text, detail text)
-- Empty when every list agrees; 'members_differ' after members changed with triggers off
-- (session_replication_role = replica), 'id_mismatch' after the stored id changed (and then
-- 'bad_signature': the signature was over the old id), 'bad_signature' alone after the stored
-- signature changed, 'missing' without a live list; all communities or one; the repair (republish_member_list and a
-- publish); no rows for an unknown community; and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The drift of the suite's communities (the database may hold others).
CREATE TEMP TABLE mine (community_id uuid PRIMARY KEY);
CREATE FUNCTION pg_temp.drift() RETURNS TABLE (community_id uuid, problem text) LANGUAGE sql
BEGIN ATOMIC
    SELECT d.community_id, d.problem FROM buzz.member_list_drift() d
    WHERE d.community_id IN (SELECT m.community_id FROM mine m);
END;

SELECT plan(30);

SELECT pg_temp.community('a.example.org') AS a \gset
SELECT pg_temp.community('b.example.org') AS b \gset
SELECT pg_temp.community('c.example.org') AS c \gset
INSERT INTO mine VALUES (:'a'), (:'b'), (:'c');
SELECT is(buzz.add_relay_members(:'a', ARRAY[pg_temp.pk(1), pg_temp.pk(2)]), 2, 'members added');
SELECT is(pg_temp.flush(), 3, '... published');

SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'a'), 'every list agrees: no rows');
SELECT is_empty('SELECT * FROM pg_temp.drift()', '... for all communities either');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', gen_random_uuid()), 'an unknown community: no rows');

-- members_differ: changed with triggers off
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'a', pg_temp.pk(3), 'member');
SET LOCAL session_replication_role = origin;
SELECT ok(NOT pg_temp.marked(), 'a member inserted with triggers off owes no list');
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'a'), $$VALUES ('members_differ')$$,
                  '... the list is members_differ');
SELECT is((SELECT d.detail FROM buzz.member_list_drift(:'a') d),
          format('list %s names 3 members; relay_members holds 4', buzz.member_list(:'a') ->> 'id'),
          '... the detail names the list and both counts');
SET LOCAL session_replication_role = replica;
DELETE FROM buzz_private.relay_members WHERE community_id = :'a' AND pubkey = pg_temp.pk(3);
UPDATE buzz_private.relay_members SET role = 'admin' WHERE community_id = :'a' AND pubkey = pg_temp.pk(1);
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'a'), $$VALUES ('members_differ')$$,
                  'a role changed with triggers off: members_differ');

-- id_mismatch
UPDATE buzz_private.member_lists SET id = repeat('0', 64) WHERE community_id = :'b';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'b'),
                  $$VALUES ('bad_signature'), ('id_mismatch')$$,
                  'the stored id changed: id_mismatch, and its signature no longer verifies');
SELECT is((SELECT d.detail FROM buzz.member_list_drift(:'b') d WHERE d.problem = 'id_mismatch'),
          format('list %s hashes to %s', repeat('0', 64),
                 encode(sha256(convert_to(format('[0,"%s",%s,13534,%s,""]', pg_temp.relay_pubkey(),
                                                 buzz.member_list(:'b') ->> 'created_at',
                                                 pg_temp.expected_tags(:'b')), 'UTF8')), 'hex')),
          '... the detail names the stored id and the right one');

-- bad_signature: a superuser replaced the signature (well-formed, but not the relay's)
SELECT pg_temp.community('e.example.org') AS e \gset
INSERT INTO mine VALUES (:'e');
UPDATE buzz_private.member_lists SET sig = repeat('5', 128) WHERE community_id = :'e';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'e'), $$VALUES ('bad_signature')$$,
                  'the stored signature changed: bad_signature');
SELECT is((SELECT d.detail FROM buzz.member_list_drift(:'e') d),
          format('the signature of list %s does not verify for %s',
                 buzz.member_list(:'e') ->> 'id', pg_temp.relay_pubkey()),
          '... the detail names the list and the key');

-- missing
DELETE FROM buzz_private.member_lists WHERE community_id = :'c';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'), $$VALUES ('missing')$$,
                  'no live list: missing');

-- All communities at once
SELECT set_eq('SELECT * FROM pg_temp.drift()',
              format($$VALUES (%L::uuid, 'members_differ'), (%L::uuid, 'bad_signature'),
                              (%L::uuid, 'id_mismatch'), (%L::uuid, 'missing'), (%L::uuid, 'bad_signature')$$,
                     :'a', :'b', :'b', :'c', :'e'),
              'without an argument: one row per community with a problem');
SELECT is((SELECT array_agg(d.community_id) FROM pg_temp.drift() d),
          (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY[:'a', :'b', :'b', :'c', :'e']::uuid[]) x),
          '... ordered by community');
SELECT pg_temp.community('d.example.org') AS d \gset
INSERT INTO mine VALUES (:'d');
SET LOCAL session_replication_role = replica;
DELETE FROM buzz_private.relay_members WHERE community_id = :'d';
SET LOCAL session_replication_role = origin;
UPDATE buzz_private.member_lists SET id = repeat('0', 64) WHERE community_id = :'d';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'d'),
                  $$VALUES ('bad_signature'), ('id_mismatch'), ('members_differ')$$,
                  'members gone and id changed: both problems, ordered by problem');

-- The repair
SELECT is(buzz.republish_member_list(:'a')::text, '', 'republish the stale list');
SELECT is(buzz.republish_member_list(:'b')::text, '', 'republish the list with the wrong id');
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish the missing list');
SELECT is(buzz.republish_member_list(:'d')::text, '', 'republish the list of the community without members');
SELECT is(buzz.republish_member_list(:'e')::text, '', 'republish the list with the wrong signature');
SELECT is(pg_temp.flush(), 5, '... five lists published');
SELECT is_empty('SELECT * FROM pg_temp.drift()', '... no drift left');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'a'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'a'),
                  '... the repaired list names the stored members');
SELECT ok(pg_temp.id_ok(buzz.member_list(:'b')), '... the repaired id hashes its content');
SELECT ok(buzz.member_list(:'c') IS NOT NULL, '... the missing list is back');
SELECT is((buzz.member_list(:'d') -> 'tags')::text, '[["-"]]', '... a list without members names none');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'a'), 'buzz_reader may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
