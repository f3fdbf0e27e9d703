-- buzz.remove_relay_member_if_role(p_community uuid, p_pubkey text, p_role text) -> text
-- Outcomes removed / not_member / role_mismatch / is_owner (the owner answers is_owner
-- whatever p_role says), the members and the live list after each, argument errors (BZIPK,
-- BZIRL, BZNCM, BZARC) and who may call it. BZISO is covered by pytest: this suite runs in one
-- READ COMMITTED transaction, whose isolation level can no longer change once the fixtures ran.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(42);

SELECT function_returns('buzz', 'remove_relay_member_if_role', ARRAY['uuid', 'text', 'text'],
                        'text', 'remove_relay_member_if_role returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(3)) AS setup_3 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(4), 'admin') AS setup_4 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_5 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- removed
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(1), 'member'), 'removed',
          'a member is removed when its role is member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(2), 'admin'), (pg_temp.pk(3), 'member'),
             (pg_temp.pk(4), 'admin')$$,
    '... and is no longer a member');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(1))$$,
                          '... one list and one 8001 for the removed member');
SELECT is(pg_temp.flush(), 2, 'publishing writes those two events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

SELECT is(buzz.remove_relay_member_if_role(:'c', upper(pg_temp.pk(2)), 'admin'), 'removed',
          'an admin named in uppercase is removed when its role is admin');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(2))$$,
                          '... one list and one 8001 naming the lowercased pubkey');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');

-- role_mismatch, not_member, is_owner: no change
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(3), 'admin'), 'role_mismatch',
          'a member named as admin answers role_mismatch');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(4), 'member'), 'role_mismatch',
          'an admin named as member answers role_mismatch');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(3), 'owner'), 'role_mismatch',
          'a member named as owner answers role_mismatch');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(1), 'member'), 'not_member',
          'a removed member answers not_member');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(9), 'owner'), 'not_member',
          'a stranger named as owner answers not_member');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(0), 'owner'), 'is_owner',
          'the owner named as owner answers is_owner');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(0), 'admin'), 'is_owner',
          'the owner named as admin answers is_owner');
SELECT is(buzz.remove_relay_member_if_role(:'c', upper(pg_temp.pk(0)), 'member'), 'is_owner',
          'the owner named in uppercase as member answers is_owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(3), 'member'), (pg_temp.pk(4), 'admin')$$,
    '... nobody was removed and no role changed');
SELECT ok(NOT pg_temp.marked(), 'role_mismatch, not_member and is_owner owe no list');

-- argument errors, also where the call would otherwise answer an outcome
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, NULL, %L)', :'c', 'member'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', left(pg_temp.pk(3), 63), 'member'),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', repeat('-', 64), 'member'),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, NULL)', :'c', pg_temp.pk(3)),
                 'BZIRL', NULL, 'a NULL role raises BZIRL');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', pg_temp.pk(3), 'guest'),
                 'BZIRL', NULL, 'an unknown role raises BZIRL (before role_mismatch)');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', pg_temp.pk(0), 'guest'),
                 'BZIRL', NULL, '... and for the owner (before is_owner)');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', pg_temp.pk(9), ''),
                 'BZIRL', NULL, '... and an empty role for a stranger (before not_member)');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(NULL, %L, %L)', pg_temp.pk(3), 'member'),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        gen_random_uuid(), pg_temp.pk(3), 'member'),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'archived', pg_temp.pk(1), 'member'),
                 'BZARC', NULL, 'removing from an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'archived', pg_temp.pk(0), 'owner'),
                 'BZARC', NULL, '... also for its owner (before is_owner)');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           'the archived community keeps its members');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.remove_relay_member_if_role(uuid, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'remove_relay_member_if_role calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(3), 'member'), 'removed',
          'buzz_writer may remove a member');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', pg_temp.pk(4), 'admin'),
                 '42501', NULL, 'buzz_reader may not remove a member');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_remove_relay_member_if_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_remove_relay_member_if_role;
SET LOCAL ROLE buzz_pgtap_nobody_remove_relay_member_if_role;
SELECT throws_ok(format('SELECT buzz.remove_relay_member_if_role(%L, %L, %L)',
                        :'c', pg_temp.pk(4), 'admin'),
                 '42501', NULL, 'a role without grants may not remove a member');
RESET ROLE;

SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(4), 'admin')$$,
                           'in the end the admin refused to the others is still there');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
