-- buzz.unarchive_community(p_community uuid) -> text
-- Outcomes unarchived / unchanged, membership writes allowed again afterwards, the live list
-- kept through the archive, no list owed for unarchiving, BZNCM, and who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(17);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT buzz.member_list(:'c') AS list \gset

SELECT is(buzz.unarchive_community(:'c'), 'unchanged', 'a community that is not archived: unchanged');
SELECT is(buzz.archive_community(:'c'), 'archived', 'archived');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L)', :'c', pg_temp.pk(1)), 'BZARC', NULL,
                 '... writes raise BZARC');
SELECT is(buzz.unarchive_community(:'c'), 'unarchived', 'unarchive: unarchived');
SELECT ok((SELECT c.archived_at IS NULL FROM buzz_private.communities c WHERE c.community_id = :'c'),
          '... the community is no longer marked archived');
SELECT is(buzz.unarchive_community(:'c'), 'unchanged', 'unarchived again: unchanged');
SELECT ok(NOT pg_temp.marked(), 'archiving and unarchiving owe no list');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT is(buzz.member_list(:'c')::text, :'list', '... the live list is the same, byte for byte');

-- Writes work again
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'membership writes work again');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(0)),
                '... invites too');
SELECT is(pg_temp.flush(), 2, '... and the change publishes');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... the list names the members');

-- Unknown community, privileges
SELECT throws_ok(format('SELECT buzz.unarchive_community(%L)', gen_random_uuid()), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok('SELECT buzz.unarchive_community(NULL)', 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT buzz.archive_community(:'other') AS archive_outcome \gset
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.unarchive_community(%L)', :'other'), '42501', NULL,
                 'buzz_reader may not unarchive');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.unarchive_community(:'other'), 'unarchived', 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
