-- buzz.update_relay_member_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Outcomes updated / unchanged / not_member / is_owner, the members and the live list after
-- each (a role change is a list with no 8000/8001), argument errors (BZIPK, BZIRL with
-- 'owner', BZNCM, BZARC) and who may call it. BZISO is covered by pytest: this suite runs in
-- one READ COMMITTED transaction, whose isolation level can no longer change once the
-- fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(47);

SELECT function_returns('buzz', 'update_relay_member_role', ARRAY['uuid', 'text', 'text'],
                        'text', 'update_relay_member_role returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1), 'member', 'invite') AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_3 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- updated
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(1), 'admin'), 'updated',
          'a member is made an admin');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'admin')$$,
    '... its role is admin, nobody else changed');
SELECT is((SELECT m.added_by FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(1)),
          'invite', '... its added_by is kept');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$,
                          '... the list only: a role change is neither 8000 nor 8001');
SELECT is(pg_temp.flush(), 1, 'publishing writes the list');
SELECT pg_temp.list_is_members(:'c', 'the live list names the new role');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

SELECT is(buzz.update_relay_member_role(:'c', upper(pg_temp.pk(2)), 'member'), 'updated',
          'an admin named in uppercase is made a member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'member')$$,
    '... its role is member');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text)$$, '... the list only');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names the new role');

-- unchanged, not_member, is_owner: no change
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(1), 'admin'), 'unchanged',
          'an admin made an admin answers unchanged');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'member'), 'unchanged',
          'a member made a member answers unchanged');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(9), 'admin'), 'not_member',
          'a stranger answers not_member');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(0), 'admin'), 'is_owner',
          'the owner made an admin answers is_owner');
SELECT is(buzz.update_relay_member_role(:'c', upper(pg_temp.pk(0)), 'member'), 'is_owner',
          'the owner named in uppercase made a member answers is_owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'member')$$,
    '... no role changed, nobody joined');
SELECT ok(NOT pg_temp.marked(), 'unchanged, not_member and is_owner owe no list');

-- back and forth in one transaction
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated',
          'a member made an admin ...');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'member'), 'updated',
          '... and a member again before prepare');
SELECT is((SELECT count(*)::integer FROM pg_temp.events() e WHERE e.kind <> 13534), 0,
          '... owes no 8000 or 8001');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names it as member');

-- argument errors, also where the call would otherwise answer an outcome
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, NULL, %L)', :'c', 'admin'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)',
                        :'c', pg_temp.pk(2) || 'f', 'admin'),
                 'BZIPK', NULL, 'a pubkey of 65 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)',
                        :'c', 'npub1' || repeat('q', 59), 'admin'),
                 'BZIPK', NULL, 'an npub raises BZIPK');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(2), 'owner'),
                 'BZIRL', NULL, 'role owner raises BZIRL (ownership moves by transfer)');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(0), 'owner'),
                 'BZIRL', NULL, '... also for the owner (before is_owner)');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(2), 'guest'),
                 'BZIRL', NULL, 'an unknown role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, NULL)', :'c', pg_temp.pk(2)),
                 'BZIRL', NULL, 'a NULL role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(9), 'guest'),
                 'BZIRL', NULL, '... and an unknown role for a stranger (before not_member)');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(NULL, %L, %L)', pg_temp.pk(2), 'admin'),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)',
                        gen_random_uuid(), pg_temp.pk(2), 'admin'),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)',
                        :'archived', pg_temp.pk(1), 'admin'),
                 'BZARC', NULL, 'a role change in an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)',
                        :'archived', pg_temp.pk(1), 'member'),
                 'BZARC', NULL, '... also when it would be unchanged');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           'the archived community keeps its roles');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.update_relay_member_role(uuid, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'update_relay_member_role calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated',
          'buzz_writer may change a role');
SELECT is(pg_temp.flush(), 1, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(1), 'member'),
                 '42501', NULL, 'buzz_reader may not change a role');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_update_relay_member_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_update_relay_member_role;
SET LOCAL ROLE buzz_pgtap_nobody_update_relay_member_role;
SELECT throws_ok(format('SELECT buzz.update_relay_member_role(%L, %L, %L)', :'c', pg_temp.pk(1), 'member'),
                 '42501', NULL, 'a role without grants may not change a role');
RESET ROLE;

SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'admin'), (pg_temp.pk(2), 'admin')$$,
    'in the end only the writer''s change was made');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
