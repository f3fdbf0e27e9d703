-- buzz.republish_member_list(p_community uuid) -> void
-- Marks a community for a new list rebuilt from the stored members: one 13534 and no
-- 8000/8001, a new created_at, the commit guard until published, the repair of a list made
-- stale with triggers off, archived communities (it works there), BZNCM, and who may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(31);

SELECT pg_temp.community() AS c \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'a member added');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT buzz.member_list(:'c') AS before \gset

SELECT is(buzz.republish_member_list(:'c')::text, '', 'republish returns void');
SELECT ok(pg_temp.marked(), '... the community now owes a list');
SELECT is(pg_temp.guard(), 'BZUNS', '... and cannot commit without it');
SELECT results_eq($$SELECT p.community_id, p.kind FROM pg_temp.prepared() p$$,
                  format($$VALUES (%L::uuid, 13534)$$, :'c'),
                  '... prepare returns its list alone: no 8000, no 8001');
SELECT is((SELECT p.serialized FROM pg_temp.prepared() p),
          format('[0,"%s",%s,13534,%s,""]', pg_temp.relay_pubkey(),
                 (SELECT p.created_at FROM pg_temp.prepared() p), pg_temp.expected_tags(:'c')),
          '... naming the stored members');
SELECT cmp_ok((SELECT p.created_at FROM pg_temp.prepared() p), '>',
              (:'before'::jsonb ->> 'created_at')::bigint, '... later than the live list');
SELECT is(buzz.republish_member_list(:'c')::text, '', 'republished twice');
SELECT is(pg_temp.flush(), 1, '... still one list');
SELECT isnt(buzz.member_list(:'c') ->> 'id', :'before'::jsonb ->> 'id', '... a new live list');
SELECT is((buzz.member_list(:'c') -> 'tags')::text, (:'before'::json -> 'tags')::text, '... with the same members (the same tag bytes)');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT is_empty(format('SELECT * FROM buzz.membership_events(%L, %s)', :'c',
                       buzz.member_list(:'c') ->> 'created_at'),
                '... and no 8000 nor 8001 was written');

-- With a member change in the same transaction
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2)), 'added', 'a member added');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... and a republish in the same transaction');
SELECT results_eq($$SELECT p.kind FROM pg_temp.prepared() p$$, $$VALUES (13534), (8000)$$,
                  '... one list and the 8000 of the change');
SELECT is(pg_temp.flush(), 2, '... published');

-- The repair: members changed with triggers off
SET LOCAL session_replication_role = replica;
INSERT INTO buzz_private.relay_members (community_id, pubkey, role) VALUES (:'c', pg_temp.pk(3), 'admin');
DELETE FROM buzz_private.relay_members WHERE community_id = :'c' AND pubkey = pg_temp.pk(1);
SET LOCAL session_replication_role = origin;
SELECT results_eq(format('SELECT problem FROM buzz.member_list_drift(%L)', :'c'),
                  $$VALUES ('members_differ')$$, 'members restored with triggers off: the list is stale');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... republish');
SELECT is(pg_temp.flush(), 1, '... one list, no 8000 nor 8001 for what changed unseen');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... the list names the stored members again');
SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), '... no drift left');

-- Archived
SELECT is(buzz.archive_community(:'c'), 'archived', 'archived');
SELECT is(buzz.republish_member_list(:'c')::text, '', '... republish still works');
SELECT is(pg_temp.flush(), 1, '... and publishes its list');

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
SELECT is(pg_temp.flush(), 1, '... published');

SELECT * FROM finish();
ROLLBACK;
