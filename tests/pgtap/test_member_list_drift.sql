-- buzz.member_list_drift(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, problem text, detail text)
-- Empty when every list agrees; 'members_differ' after members changed with triggers off
-- (session_replication_role = replica), 'id_mismatch' after the stored id changed (and then
-- 'bad_signature': the signature was over the old id), 'bad_signature' alone after the stored
-- signature changed, 'missing' without a live list; of roles: 'role_missing' (a 33534 row
-- deleted, a role defined with triggers off), 'role_differs' (a definition changed or deleted
-- with triggers off), 'role_id_mismatch' and 'role_bad_signature' (of a 33534 and of a kind 5);
-- all communities or one; the repair (republish_member_list and a publish); no rows for an
-- unknown community; and who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The drift of the suite's communities (the database may hold others).
CREATE TEMP TABLE mine (community_id uuid PRIMARY KEY);
CREATE FUNCTION pg_temp.drift() RETURNS TABLE (community_id uuid, problem text) LANGUAGE sql
BEGIN ATOMIC
    SELECT d.community_id, d.problem FROM buzz.member_list_drift() d
    WHERE d.community_id IN (SELECT m.community_id FROM mine m);
END;

SELECT plan(63);

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
          format('list %s names 3 members; relay_members holds 4 (members or their roles differ)',
                 buzz.member_list(:'a') ->> 'id'),
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

-- A defined role held with triggers off: the list names the member without it
SELECT pg_temp.community('r.example.org') AS r \gset
INSERT INTO mine VALUES (:'r');
SELECT is(buzz.define_role(:'r', 'mod', 'Moderator'), 'defined', 'a role defined');
SELECT is(pg_temp.flush(), 1, '... published');
SET LOCAL session_replication_role = replica;
UPDATE buzz_private.relay_members SET roles = '{mod}' WHERE community_id = :'r';
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'r'), $$VALUES ('members_differ')$$,
                  '... assigned with triggers off: members_differ (the roles a member holds differ)');

-- Role problems
-- role_missing: a defined role without a live 33534
SELECT pg_temp.community('f.example.org') AS f \gset
INSERT INTO mine VALUES (:'f');
DELETE FROM buzz_private.role_events WHERE community_id = :'f' AND role_id = 'admin';
SELECT results_eq(format('SELECT problem, detail FROM buzz.member_list_drift(%L)', :'f'),
                  $$VALUES ('role_missing', 'role admin has no live 33534 definition')$$,
                  'a 33534 row deleted: role_missing, the detail names the role');
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.roles (community_id, role_id, label) VALUES (:'f', 'mod', 'Moderator');
SET LOCAL session_replication_role = origin;
SELECT ok(NOT pg_temp.marked(), 'a role defined with triggers off owes nothing');
SELECT results_eq(format('SELECT problem, detail FROM buzz.member_list_drift(%L)', :'f'),
                  $$VALUES ('role_missing', 'role admin has no live 33534 definition'),
                           ('role_missing', 'role mod has no live 33534 definition')$$,
                  '... it is role_missing too, one row per role');

-- role_differs: the stored definition changed with triggers off, or gone
SELECT pg_temp.community('g.example.org') AS g \gset
INSERT INTO mine VALUES (:'g');
SET LOCAL session_replication_role = replica;
UPDATE buzz_private.roles SET label = 'Boss' WHERE community_id = :'g' AND role_id = 'owner';
SET LOCAL session_replication_role = origin;
SELECT ok(NOT pg_temp.marked(), 'a label changed with triggers off owes nothing');
SELECT results_eq(format('SELECT problem, detail FROM buzz.member_list_drift(%L)', :'g'),
                  format($$VALUES ('role_differs', %L)$$,
                         format('the 33534 of role owner has tags %s; the definition is %s',
                                pg_temp.role_tags('owner', 'Owner', NULL, NULL, 0),
                                pg_temp.role_tags('owner', 'Boss', NULL, NULL, 0))),
                  '... role_differs, the detail names the role, the live tags and the definition''s');
SELECT pg_temp.community('k.example.org') AS k \gset
INSERT INTO mine VALUES (:'k');
SELECT is(buzz.define_role(:'k', 'mod', 'Moderator'), 'defined', 'a role defined');
SELECT is(pg_temp.flush(), 1, '... published');
SET LOCAL session_replication_role = replica;
DELETE FROM buzz_private.roles WHERE community_id = :'k' AND role_id = 'mod';
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem, detail FROM buzz.member_list_drift(%L)', :'k'),
                  format($$VALUES ('role_differs', %L)$$,
                         format('role mod is not defined, yet its 33534 %s is live',
                                (SELECT d ->> 'id' FROM buzz.role_definitions(:'k') d
                                 WHERE d #>> '{tags,1,1}' = 'mod'))),
                  '... deleted with triggers off: role_differs, its 33534 still live');

-- role_id_mismatch and role_bad_signature, of a 33534 and of a kind 5
SELECT pg_temp.community('h.example.org') AS h \gset
INSERT INTO mine VALUES (:'h');
SELECT created_at AS h_member_at FROM buzz_private.role_events WHERE community_id = :'h' AND role_id = 'member' \gset
UPDATE buzz_private.role_events SET id = repeat('0', 64) WHERE community_id = :'h' AND role_id = 'member';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'h'),
                  $$VALUES ('role_bad_signature'), ('role_id_mismatch')$$,
                  'a 33534''s stored id changed: role_id_mismatch, and its signature no longer verifies');
SELECT is((SELECT d.detail FROM buzz.member_list_drift(:'h') d WHERE d.problem = 'role_id_mismatch'),
          format('event %s of role member hashes to %s', repeat('0', 64),
                 pg_temp.nip01_id(pg_temp.relay_pubkey(), :h_member_at, 33534,
                                  pg_temp.role_tags('member', 'Member', NULL, NULL, 2))),
          '... the detail names the stored id, the role and the right id');
UPDATE buzz_private.role_events SET sig = repeat('5', 128) WHERE community_id = :'h' AND role_id = 'owner';
SELECT is((SELECT d.detail FROM buzz.member_list_drift(:'h') d
           WHERE d.problem = 'role_bad_signature' AND d.detail LIKE '% role owner %'),
          format('the signature of event %s of role owner does not verify for %s',
                 (SELECT d ->> 'id' FROM buzz.role_definitions(:'h') d WHERE d #>> '{tags,1,1}' = 'owner'),
                 pg_temp.relay_pubkey()),
          'a 33534''s signature replaced: role_bad_signature, the detail names the event, the role and the key');
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'h'),
                  $$VALUES ('role_bad_signature'), ('role_bad_signature'), ('role_id_mismatch')$$,
                  '... one row per problem and role, ordered');
SELECT pg_temp.community('j.example.org') AS j \gset
INSERT INTO mine VALUES (:'j');
SELECT is(buzz.define_role(:'j', 'tmp', 'Temporary'), 'defined', 'a role defined ...');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.delete_role(:'j', 'tmp'), 'deleted', '... deleted');
SELECT is(pg_temp.flush(), 1, '... its kind 5 published');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'j'), '... no drift: a deleted role is not missing');
SELECT id AS j_id, sig AS j_sig FROM buzz_private.role_events WHERE community_id = :'j' AND role_id = 'tmp' \gset
UPDATE buzz_private.role_events SET id = repeat('0', 64) WHERE community_id = :'j' AND role_id = 'tmp';
SELECT results_eq(format('SELECT problem, detail FROM buzz.member_list_drift(%L) WHERE problem = %L', :'j', 'role_id_mismatch'),
                  format($$VALUES ('role_id_mismatch', %L)$$,
                         format('event %s of role tmp hashes to %s', repeat('0', 64), :'j_id')),
                  'a kind 5''s stored id changed: role_id_mismatch');
UPDATE buzz_private.role_events SET id = :'j_id', sig = repeat('5', 128) WHERE community_id = :'j' AND role_id = 'tmp';
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'j'), $$VALUES ('role_bad_signature')$$,
                  'a kind 5''s signature replaced: role_bad_signature');
-- republish_member_list does not re-sign deletions: put the signature back.
UPDATE buzz_private.role_events SET sig = :'j_sig' WHERE community_id = :'j' AND role_id = 'tmp';
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'j'), '... restored: no drift');

-- The repair
SELECT is(buzz.republish_member_list(:'a')::text, '', 'republish the stale list');
SELECT is(buzz.republish_member_list(:'b')::text, '', 'republish the list with the wrong id');
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish the missing list');
SELECT is(buzz.republish_member_list(:'d')::text, '', 'republish the list of the community without members');
SELECT is(buzz.republish_member_list(:'e')::text, '', 'republish the list with the wrong signature');
SELECT is(buzz.republish_member_list(:'r')::text, '', 'republish the list without the held role');
SELECT is(buzz.republish_member_list(:'f')::text, '', 'republish the missing definitions');
SELECT is(buzz.republish_member_list(:'g')::text, '', 'republish the stale definition');
SELECT is(buzz.republish_member_list(:'h')::text, '', 'republish the definitions with the wrong id and signature');
SELECT is(pg_temp.flush(), 9 + 3 * 7 + 4 * 2, '... nine lists published, each with every definition (four in r and f, three elsewhere)');
SELECT results_eq(format('SELECT * FROM pg_temp.role_events(%L)', :'f'),
                  $$VALUES ('admin', 33534), ('member', 33534), ('mod', 33534), ('owner', 33534)$$,
                  '... the missing definitions are live');
SELECT is((SELECT d -> 'tags' ->> 2 FROM buzz.role_definitions(:'g') d WHERE d #>> '{tags,1,1}' = 'owner'),
          '["label","Boss"]', '... the stale definition is re-signed with the stored label');
SELECT ok((SELECT bool_and(pg_temp.id_ok(d)) FROM buzz.role_definitions(:'h') d), '... every repaired id hashes its content');
SELECT is_empty(format('SELECT * FROM pg_temp.drift() WHERE community_id <> %L', :'k'), '... no drift left');
SELECT is(buzz.republish_member_list(:'k')::text, '', 'republish the community with a live 33534 of a role no longer defined');
SELECT is(pg_temp.flush(), 5, '... its list, its three definitions and the orphan''s kind 5');
SELECT is_empty('SELECT * FROM pg_temp.drift()', '... no drift left: the 33534 of the undefined role is deleted (kind 5)');
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
