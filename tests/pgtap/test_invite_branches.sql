-- Branches of the invite tree (SPEC section 3, amended 2026-12-02):
--   buzz.remove_relay_member(p_community uuid, p_pubkey text, p_with_branch boolean DEFAULT false,
--                            p_spare_admins boolean DEFAULT false)
-- With the branch, everyone the member brought in, recursively (by added_by), goes too, in
-- one list with one 8001 each; the owner is never taken (nor those below it); a loop of
-- added_by ends; net effect within a transaction. Re-attachment on every departure path
-- (remove_relay_member without the branch, remove_relay_member_if_role, ban_pubkey, and
-- whoever stays while a branch goes): the members a departed member brought in get its
-- added_by (a label too; NULL rather than themselves), and its invites are revoked. A branch
-- removal takes the ban lock exclusive, a plain one does not. Outcomes, argument errors and
-- who may call it. A branch removal racing a join is pytest's (test_quota_concurrency.py).
BEGIN;
\ir lib/fixtures.sql

-- Who brought in whom: (pubkey, added_by) of every member.
CREATE FUNCTION pg_temp.parents(p_community uuid) RETURNS TABLE (pubkey text, added_by text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT m.pubkey, m.added_by FROM buzz.relay_members(p_community) m;
END;
CREATE FUNCTION pg_temp.parents_are(p_community uuid, p_expected text, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN set_eq(format('SELECT * FROM pg_temp.parents(%L)', p_community), p_expected,
                  p_description); END $$;
-- The invites a pubkey created.
CREATE FUNCTION pg_temp.invites_of(p_community uuid, p_pubkey text) RETURNS integer LANGUAGE sql
RETURN (SELECT count(*)::integer FROM buzz.relay_invites(p_community) i WHERE i.created_by = p_pubkey);
-- Whether this transaction holds the community's ban lock (lock_bans) exclusively.
CREATE FUNCTION pg_temp.holds_ban_lock_exclusive(p_community uuid) RETURNS boolean LANGUAGE sql
RETURN EXISTS (SELECT FROM pg_locks l
               WHERE l.pid = pg_backend_pid() AND l.locktype = 'advisory' AND l.objsubid = 2
                 AND l.classid = 5 AND l.mode = 'ExclusiveLock' AND l.granted
                 AND l.objid::bigint = (hashtext(p_community::text)::bigint & 4294967295));

SELECT plan(66);

SELECT function_returns('buzz', 'remove_relay_member', ARRAY['uuid', 'text', 'boolean', 'boolean'],
                        'text', 'remove_relay_member takes p_with_branch and returns text');
SELECT is((SELECT pg_get_function_arguments('buzz.remove_relay_member(uuid, text, boolean, boolean)'::regprocedure)),
          'p_community uuid, p_pubkey text, p_with_branch boolean DEFAULT false, p_spare_admins boolean DEFAULT false',
          '... false by default, so two arguments still call it');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT buzz.set_invite_quota(:'c', 'member', 5) AS quota_outcome \gset
-- owner 0 -> 1 -> 2 -> 3 -> 8, 2 -> 5, 1 -> 4; buzz-admin -> 6 -> 7
SELECT pg_temp.brought(:'c', 1, pg_temp.pk(0)) + pg_temp.brought(:'c', 2, pg_temp.pk(1))
       + pg_temp.brought(:'c', 3, pg_temp.pk(2)) + pg_temp.brought(:'c', 4, pg_temp.pk(1))
       + pg_temp.brought(:'c', 5, pg_temp.pk(2)) + pg_temp.brought(:'c', 6, 'buzz-admin')
       + pg_temp.brought(:'c', 7, pg_temp.pk(6)) + pg_temp.brought(:'c', 8, pg_temp.pk(3)) AS setup \gset
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'create'), (pg_temp.pk(1), pg_temp.pk(0)), (pg_temp.pk(2), pg_temp.pk(1)),
             (pg_temp.pk(3), pg_temp.pk(2)), (pg_temp.pk(4), pg_temp.pk(1)), (pg_temp.pk(5), pg_temp.pk(2)),
             (pg_temp.pk(6), 'buzz-admin'), (pg_temp.pk(7), pg_temp.pk(6)), (pg_temp.pk(8), pg_temp.pk(3))$$,
    'setup: the invite tree');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(2)),
                'setup: 2 made an invite');

-- remove_relay_member without the branch: re-attachment
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(2)), 'removed', 'a member who brought in two is removed');
SELECT ok(NOT pg_temp.holds_ban_lock_exclusive(:'c'), '... without the ban lock exclusive');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(2))$$,
                          '... one list and one 8001: the two it brought in stay');
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'create'), (pg_temp.pk(1), pg_temp.pk(0)),
             (pg_temp.pk(3), pg_temp.pk(1)), (pg_temp.pk(4), pg_temp.pk(1)), (pg_temp.pk(5), pg_temp.pk(1)),
             (pg_temp.pk(6), 'buzz-admin'), (pg_temp.pk(7), pg_temp.pk(6)), (pg_temp.pk(8), pg_temp.pk(3))$$,
    '... re-attached to its inviter');
SELECT is(pg_temp.invites_of(:'c', pg_temp.pk(2)), 0, '... its invite is revoked');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');

-- remove_relay_member_if_role: re-attachment
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(3), 'admin'), 'role_mismatch',
          'remove_relay_member_if_role with the wrong role ...');
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'create'), (pg_temp.pk(1), pg_temp.pk(0)),
             (pg_temp.pk(3), pg_temp.pk(1)), (pg_temp.pk(4), pg_temp.pk(1)), (pg_temp.pk(5), pg_temp.pk(1)),
             (pg_temp.pk(6), 'buzz-admin'), (pg_temp.pk(7), pg_temp.pk(6)), (pg_temp.pk(8), pg_temp.pk(3))$$,
    '... re-attaches nobody');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(3), 'member'), 'removed',
          'remove_relay_member_if_role removes a member who brought one in ...');
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'create'), (pg_temp.pk(1), pg_temp.pk(0)),
             (pg_temp.pk(4), pg_temp.pk(1)), (pg_temp.pk(5), pg_temp.pk(1)),
             (pg_temp.pk(6), 'buzz-admin'), (pg_temp.pk(7), pg_temp.pk(6)), (pg_temp.pk(8), pg_temp.pk(1))$$,
    '... who is re-attached to its inviter');
SELECT is(pg_temp.flush(), 2, '... published');

-- ban_pubkey: re-attachment, to a label
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(6)),
                'setup: 6 made an invite');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(6), 'spam'), 'banned', 'a ban removes a member who brought one in ...');
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'create'), (pg_temp.pk(1), pg_temp.pk(0)),
             (pg_temp.pk(4), pg_temp.pk(1)), (pg_temp.pk(5), pg_temp.pk(1)),
             (pg_temp.pk(7), 'buzz-admin'), (pg_temp.pk(8), pg_temp.pk(1))$$,
    '... who is re-attached to its inviter, a label');
SELECT is(pg_temp.invites_of(:'c', pg_temp.pk(6)), 0, '... and its invite is revoked');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(6))$$,
                          '... one list and one 8001');
SELECT is(pg_temp.flush(), 2, '... published');

-- The branch
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(4)),
                'setup: 4, in the branch of 1, made an invite');
SELECT is(pg_temp.brought(:'c', 9, pg_temp.pk(8)), 1, 'setup: 8 brought in 9');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1), true), 'removed',
          'a member is removed with its branch');
SELECT ok(pg_temp.holds_ban_lock_exclusive(:'c'), '... holding the ban lock exclusive');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(1)), (8001, pg_temp.pk(4)),
                                   (8001, pg_temp.pk(5)), (8001, pg_temp.pk(8)), (8001, pg_temp.pk(9))$$,
                          '... one list, one 8001 for it and each member below it, at any depth');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(7), 'member')$$,
                           '... the owner and the other branch stay');
SELECT is(pg_temp.invites_of(:'c', pg_temp.pk(4)), 0, '... the invites of the branch are revoked');
SELECT is(pg_temp.flush(), 6, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');

-- The owner is never taken: it stays (re-attached), and so do those it brought in
SELECT pg_temp.brought(:'c', 10, 'someone') + pg_temp.brought(:'c', 11, pg_temp.pk(0))
       + pg_temp.brought(:'c', 12, pg_temp.pk(10)) AS setup_owner \gset
UPDATE buzz_private.relay_members m SET added_by = pg_temp.pk(10)
WHERE m.community_id = :'c' AND m.pubkey = pg_temp.pk(0);
SELECT is(pg_temp.flush(), 1, 'setup: the owner hangs from 10 (as after a transfer), published');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(10), true), 'removed',
          'a branch above the owner is removed ...');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(10)), (8001, pg_temp.pk(12))$$,
                          '... without the owner and those it brought in');
SELECT pg_temp.parents_are(:'c',
    $$VALUES (pg_temp.pk(0), 'someone'), (pg_temp.pk(7), 'buzz-admin'), (pg_temp.pk(11), pg_temp.pk(0))$$,
    '... the owner is re-attached to the removed member''s inviter');
SELECT is(pg_temp.flush(), 3, '... published');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(0), true), 'is_owner', 'the owner with its branch: is_owner');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(0)), 'is_owner', '... and without');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(10), true), 'not_member', 'a former member: not_member');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(99), true), 'not_member', 'a stranger: not_member');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- A loop of added_by (made by explicit adds) ends where it comes back
SELECT pg_temp.brought(:'c', 13, pg_temp.pk(14)) + pg_temp.brought(:'c', 14, pg_temp.pk(13))
       + pg_temp.brought(:'c', 15, pg_temp.pk(14)) AS setup_loop \gset
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(13), true), 'removed', 'a branch with a loop ...');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(13)), (8001, pg_temp.pk(14)),
                                   (8001, pg_temp.pk(15))$$,
                          '... goes whole, each once');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT pg_temp.brought(:'c', 16, pg_temp.pk(17)) + pg_temp.brought(:'c', 17, pg_temp.pk(16)) AS setup_pair \gset
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(17)), 'removed', 'one of two who brought in each other leaves ...');
SELECT is((SELECT p.added_by FROM pg_temp.parents(:'c') p WHERE p.pubkey = pg_temp.pk(16)), NULL,
          '... the other would hang from itself: nobody recorded (NULL)');
SELECT is(pg_temp.flush(), 2, '... published');

-- Net effect within one transaction
SELECT is(pg_temp.brought(:'c', 18, pg_temp.pk(11)), 1, 'setup: 11 brought in 18');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(19), 'member', pg_temp.pk(18)), 'added',
          'a member brought in by 18 ...');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(11), true), 'removed', '... and 11 removed with its branch before prepare');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(11)), (8001, pg_temp.pk(18))$$,
                          '... the member added and removed in the transaction gets neither 8000 nor 8001');
SELECT is(pg_temp.flush(), 3, '... published');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(7), 'member'),
                                          (pg_temp.pk(16), 'member')$$,
                           'the members left');
SELECT pg_temp.list_is_members(:'c', '... and the live list names exactly them');

-- Argument errors
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, NULL)', :'c', pg_temp.pk(7)), '22023', NULL,
                 'p_with_branch NULL: 22023');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, NULL, true)', :'c'), 'BZIPK', NULL,
                 'a NULL pubkey with the branch: BZIPK');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, true)', gen_random_uuid(), pg_temp.pk(7)), 'BZNCM', NULL,
                 'an unknown community with the branch: BZNCM');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, true)', :'archived', pg_temp.pk(0)), 'BZARC', NULL,
                 'an archived community with the branch: BZARC (before is_owner)');
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, NULL)', gen_random_uuid(), 'nope'), 'BZIPK', NULL,
                 'the pubkey is checked first');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(7), 'member'),
                                          (pg_temp.pk(16), 'member')$$,
                           'the refused calls changed nothing');
SELECT ok(NOT pg_temp.marked(), '... and owe no list');

-- Who may call it
SELECT is(pg_temp.brought(:'c', 20, pg_temp.pk(7)), 1, 'setup: 7 brought in 20');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, true)', :'c', pg_temp.pk(7)), '42501', NULL,
                 'buzz_reader may not remove a branch');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(7), true), 'removed', 'buzz_writer may remove a branch');
SELECT is(pg_temp.flush(), 3, '... and publish its list and two 8001');
RESET ROLE;
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
