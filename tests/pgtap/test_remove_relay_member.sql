-- buzz.remove_relay_member(p_community uuid, p_pubkey text, p_with_branch boolean DEFAULT false,
--                          p_spare_admins boolean DEFAULT false) -> text, called here with two
-- arguments (the branch: test_invite_branches; p_spare_admins: test_delegates_spare_admins)
-- Outcomes removed / not_member / is_owner, the members and the live list after each, the
-- 8001 a removal owes (none for a pubkey added and removed in one transaction), argument
-- errors (BZIPK, BZNCM, BZARC) and who may call it. BZISO is covered by pytest: this suite
-- runs in one READ COMMITTED transaction, whose isolation level can no longer change once the
-- fixtures have run.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(49);

SELECT function_returns('buzz', 'remove_relay_member', ARRAY['uuid', 'text', 'boolean', 'boolean'],
                        'text', 'remove_relay_member returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(3)) AS setup_3 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_4 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'admin'),
             (pg_temp.pk(3), 'member')$$,
    'setup: an owner, two members and an admin, published');

-- removed
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'a member is removed');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(2), 'admin'), (pg_temp.pk(3), 'member')$$,
    '... and is no longer a member');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(1))$$,
                          '... one list and one 8001 for the removed member');
SELECT is(pg_temp.flush(), 2, 'publishing writes those two events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

SELECT is(buzz.remove_relay_member(:'c', upper(pg_temp.pk(2))), 'removed',
          'an admin is removed, named in uppercase');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(3), 'member')$$,
                           '... and is no longer a member');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(2))$$,
                          '... one list and one 8001 naming the lowercased pubkey');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');

-- not_member and is_owner: no change
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'not_member',
          'removing a removed member answers not_member');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(9)), 'not_member',
          'removing a stranger answers not_member');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(0)), 'is_owner',
          'removing the owner answers is_owner');
SELECT is(buzz.remove_relay_member(:'c', upper(pg_temp.pk(0))), 'is_owner',
          '... also named in uppercase');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(3), 'member')$$,
                           '... the owner stays, nothing changed');
SELECT ok(NOT pg_temp.marked(), 'not_member and is_owner owe no list');

-- net effect within one transaction
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4)), 'added', 'a pubkey added ...');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(4)), 'removed', '... and removed before prepare');
SELECT is((SELECT count(*)::integer FROM pg_temp.events() e WHERE e.kind <> 13534), 0,
          '... gets neither 8000 nor 8001');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(3)), 'removed', 'a member removed ...');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', '... and added again before prepare');
SELECT is((SELECT count(*)::integer FROM pg_temp.events() e WHERE e.kind <> 13534), 0,
          '... gets neither 8001 nor 8000');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(3)), 'removed', 'removing it once more ...');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(3))$$,
                          '... nets to one 8001 and one list');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names only the owner');

-- argument errors
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', left(pg_temp.pk(1), 63)),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', pg_temp.pk(1) || '0'),
                 'BZIPK', NULL, 'a pubkey of 65 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', repeat('x', 64)),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', gen_random_uuid(), 'nope'),
                 'BZIPK', NULL, 'a malformed pubkey raises BZIPK whatever the community');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(NULL, %L)', pg_temp.pk(1)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', gen_random_uuid(), pg_temp.pk(1)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'archived', pg_temp.pk(1)),
                 'BZARC', NULL, 'removing from an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'archived', pg_temp.pk(9)),
                 'BZARC', NULL, '... also for a stranger (before not_member)');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'archived', pg_temp.pk(0)),
                 'BZARC', NULL, '... and for its owner (before is_owner)');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           'the archived community keeps its members');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.remove_relay_member(uuid, text, boolean, boolean)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'remove_relay_member calls buzz_private.require_read_committed (BZISO)');

-- privileges
SELECT buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(5), pg_temp.pk(6)]) AS setup_5 \gset
SELECT pg_temp.flush() AS setup_published \gset
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(5)), 'removed',
          'buzz_writer may remove a member');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'buzz_reader may not remove a member');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_remove_relay_member NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_remove_relay_member;
SET LOCAL ROLE buzz_pgtap_nobody_remove_relay_member;
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'a role without grants may not remove a member');
RESET ROLE;

SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(6), 'member')$$,
                           'in the end the member refused to the others is still there');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
