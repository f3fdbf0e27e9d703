-- buzz.republish_member_list(p_community uuid) -> void
-- Marks a community for a new list rebuilt from the stored members: one 13534 and no
-- 8000/8001, and every role definition re-signed (a 33534 each, from the stored definitions,
-- no kind 5), a new created_at, the commit guard until published, the repair of a list or a
-- definition made stale with triggers off, archived communities (it works there), BZNCM, and
-- who may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(47);

SELECT pg_temp.community() AS c \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'a member added');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT buzz.member_list(:'c') AS before \gset

SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish returns void');
SELECT ok(pg_temp.marked(), '... the community now owes a list');
SELECT is(pg_temp.guard(), 'BZUNS', '... and cannot commit without it');
SELECT results_eq($$SELECT p.community_id, p.kind, p.serialized::jsonb #>> '{4,1,1}' FROM pg_temp.prepared() p$$,
                  format($$VALUES (%1$L::uuid, 13534, %2$L), (%1$L, 33534, 'admin'), (%1$L, 33534, 'member'),
                                  (%1$L, 33534, 'owner')$$, :'c', pg_temp.pk(0)),
                  '... prepare returns its list (no 8000, no 8001), then every definition by role id');
CREATE TEMP TABLE once AS SELECT * FROM pg_temp.prepared();
SELECT is((SELECT p.serialized FROM once p WHERE p.kind = 13534),
          format('[0,"%s",%s,13534,%s,""]', pg_temp.relay_pubkey(),
                 (SELECT p.created_at FROM once p WHERE p.kind = 13534), pg_temp.expected_tags(:'c')),
          '... naming the stored members');
SELECT is((SELECT array_agg(p.serialized ORDER BY p.id) FROM once p WHERE p.kind = 33534),
          (SELECT array_agg(format('[0,"%s",%s,33534,%s,""]', pg_temp.relay_pubkey(), o.created_at, t) ORDER BY o.id)
           FROM once o JOIN (VALUES ('admin', pg_temp.role_tags('admin', 'Admin', NULL, NULL, 1)),
                                    ('member', pg_temp.role_tags('member', 'Member', NULL, NULL, 2)),
                                    ('owner', pg_temp.role_tags('owner', 'Owner', NULL, NULL, 0))) AS r (role, t)
                ON o.serialized::jsonb #>> '{4,1,1}' = r.role
           WHERE o.kind = 33534),
          '... the definitions as stored, with the list''s created_at');
SELECT cmp_ok((SELECT p.created_at FROM once p LIMIT 1), '>',
              (:'before'::jsonb ->> 'created_at')::bigint, '... later than the live list');
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republished twice');
SELECT is(pg_temp.flush(), 4, '... still one list, and one 33534 per role');
SELECT isnt(buzz.member_list(:'c') ->> 'id', :'before'::jsonb ->> 'id', '... a new live list');
SELECT is((buzz.member_list(:'c') -> 'tags')::text, (:'before'::json -> 'tags')::text, '... with the same members (the same tag bytes)');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L, %s)', :'c',
                       buzz.member_list(:'c') ->> 'created_at'),
                '... and no 8000 nor 8001 was written');

-- With a member change in the same transaction
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2)), 'added', 'a member added');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... and a republish in the same transaction');
SELECT results_eq($$SELECT p.kind FROM pg_temp.prepared() p$$, $$VALUES (13534), (8000), (33534), (33534), (33534)$$,
                  '... one list, the 8000 of the change and the definitions');
SELECT is(pg_temp.flush(), 5, '... published');

-- The repair: members changed with triggers off
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(3), 'admin');
DELETE FROM buzz_private.relay_members WHERE community_id = :'c' AND pubkey = pg_temp.pk(1);
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'),
                  $$VALUES ('members_differ')$$, 'members restored with triggers off: the list is stale');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... republish');
SELECT is(pg_temp.flush(), 4, '... one list, no 8000 nor 8001 for what changed unseen (and the definitions)');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... the list names the stored members again');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... no drift left');

-- The repair of definitions changed with triggers off; a deleted role is not re-signed
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', 'gone', 'Gone'), 'defineddefined',
          'two roles defined');
SELECT is(buzz.assign_role(:'c', pg_temp.pk(2), 'mod'), 'assigned', '... one assigned');
SELECT is(buzz.delete_role(:'c', 'gone'), 'deleted', '... the other deleted');
SELECT is(pg_temp.flush(), 2, '... published: the list and one 33534 (defined and deleted in one go: no 33534, no kind 5)');
SELECT is(buzz.define_role(:'c', 'gone', 'Gone'), 'defined', 'defined again');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.delete_role(:'c', 'gone'), 'deleted', '... deleted again');
SELECT is(pg_temp.flush(), 1, '... its kind 5 published');
SET LOCAL session_replication_role = replica;
UPDATE buzz_private.roles SET label = 'Mod', color = 7 WHERE community_id = :'c' AND role_id = 'mod';
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'),
                  $$VALUES ('role_differs')$$, 'a definition changed with triggers off: role_differs');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... republish');
SELECT results_eq($$SELECT p.kind, CASE WHEN p.kind = 33534 THEN p.serialized::jsonb #>> '{4,1,1}' END
                    FROM pg_temp.prepared() p$$,
                  $$VALUES (13534, NULL), (33534, 'admin'), (33534, 'member'), (33534, 'mod'), (33534, 'owner')$$,
                  '... the list and every definition, none for the deleted role');
SELECT is(pg_temp.flush(), 5, '... published');
SELECT is((SELECT d -> 'tags' FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'mod')::text,
          pg_temp.role_tags('mod', 'Mod', NULL, 7), '... the definition re-signed as stored');
SELECT results_eq(format('SELECT * FROM pg_temp.role_events(%L)', :'c'),
                  $$VALUES ('admin', 33534), ('gone', 5), ('member', 33534), ('mod', 33534), ('owner', 33534)$$,
                  '... the deletion stays live');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... no drift left');

-- Archived
SELECT is(buzz.archive_community(:'c'), 'archived', 'archived');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... republish still works');
SELECT is(pg_temp.flush(), 5, '... and publishes its list and definitions');

-- Unknown community, privileges
SELECT throws_ok(format('SELECT buzz.republish_member_list(%L)', gen_random_uuid()), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok('SELECT buzz.republish_member_list(NULL)', 'BZNCM', NULL, 'a NULL community: BZNCM');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.republish_member_list(%L)', :'c'), '42501', NULL,
                 'buzz_reader may not republish');
SET LOCAL ROLE buzz_writer;
SELECT lives_ok(format('SELECT buzz.republish_member_list(%L)', :'c'), 'buzz_writer may');
RESET ROLE;
SELECT is(pg_temp.flush(), 5, '... published');

SELECT * FROM finish();
ROLLBACK;
