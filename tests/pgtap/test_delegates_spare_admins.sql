-- A delegate's limits (SPEC section 10): p_spare_admins of
--   buzz.remove_relay_member(p_community, p_pubkey, p_with_branch, p_spare_admins) and
--   buzz.ban_pubkey(p_community, p_pubkey, p_reason, p_banned_by, p_spare_admins),
-- the removal or ban a member makes by a method assigned to it. It reaches members and
-- strangers as without it; an admin, or a branch with an admin in it, answers 'admin_spared'
-- and nothing changes (no member, no ban, no list owed); the owner answers 'is_owner' as
-- always; NULL is 22023. A promotion racing the removal is pytest's
-- (test_relay_nip86_delegates.py: two sessions, one blocked on the other).
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.is_banned(p_community uuid, p_pubkey text) RETURNS boolean LANGUAGE sql
RETURN EXISTS (SELECT FROM buzz.banned_pubkeys(p_community) b WHERE b.pubkey = p_pubkey);

SELECT plan(28);

SELECT pg_temp.community() AS c \gset
-- owner 0 -> 1 -> 2 (admin) -> 3; 0 -> 4 -> 5; 6 (admin); 7
SELECT pg_temp.brought(:'c', 1, pg_temp.pk(0)) + pg_temp.brought(:'c', 2, pg_temp.pk(1))
       + pg_temp.brought(:'c', 3, pg_temp.pk(2)) + pg_temp.brought(:'c', 4, pg_temp.pk(0))
       + pg_temp.brought(:'c', 5, pg_temp.pk(4)) + pg_temp.brought(:'c', 6, pg_temp.pk(0))
       + pg_temp.brought(:'c', 7, pg_temp.pk(0)) AS setup \gset
SELECT buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.update_relay_member_role(:'c', pg_temp.pk(6), 'admin') AS setup_6 \gset
SELECT is(pg_temp.flush(), 1, 'setup: two admins, one list');

-- Spared: nothing changes
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(6), false, true), 'admin_spared',
          'a delegate''s removal of an admin: admin_spared');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(6), true, true), 'admin_spared',
          '... with the branch too');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1), true, true), 'admin_spared',
          'a delegate''s removal of a branch with an admin below: admin_spared');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(6), 'spam', pg_temp.pk(7), true), 'admin_spared',
          'a delegate''s ban of an admin: admin_spared');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(0), false, true), 'is_owner',
          'a delegate''s removal of the owner: is_owner');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(0), true, true), 'is_owner',
          '... with the branch too');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(0), NULL, NULL, true), 'is_owner',
          'a delegate''s ban of the owner: is_owner');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'admin'),
             (pg_temp.pk(3), 'member'), (pg_temp.pk(4), 'member'), (pg_temp.pk(5), 'member'),
             (pg_temp.pk(6), 'admin'), (pg_temp.pk(7), 'member')$$,
    'the spared calls removed nobody');
SELECT ok(NOT pg_temp.is_banned(:'c', pg_temp.pk(6)) AND NOT pg_temp.is_banned(:'c', pg_temp.pk(0)),
          '... and banned nobody');
SELECT ok(NOT pg_temp.marked(), '... and owe no list');

-- Without p_spare_admins, as before
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1), true, false), 'removed',
          'the same branch without p_spare_admins is removed, its admin with it');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(1)), (8001, pg_temp.pk(2)),
                                   (8001, pg_temp.pk(3))$$,
                          '... one list and an 8001 each');
SELECT is(pg_temp.flush(), 4, '... published');

-- Members and strangers: as without it
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(4), false, true), 'removed',
          'a delegate removes a member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(5), 'member'), (pg_temp.pk(6), 'admin'),
             (pg_temp.pk(7), 'member')$$,
    '... whose invitee stays');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(5), true, true), 'removed',
          'a delegate removes a branch of members');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(7), 'spam', pg_temp.pk(7), true), 'banned',
          'a delegate bans a member');
SELECT ok(pg_temp.is_banned(:'c', pg_temp.pk(7)), '... who is banned');
SELECT is(pg_temp.flush(), 2, '... and removed, published');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(9), NULL, NULL, true), 'banned',
          'a delegate bans a stranger');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(9), false, true), 'not_member',
          'a delegate''s removal of a stranger: not_member');

-- NULL
SELECT throws_ok(format('SELECT buzz.remove_relay_member(%L, %L, false, NULL)', :'c', pg_temp.pk(6)),
                 '22023', 'p_spare_admins must be true or false', 'remove_relay_member: p_spare_admins NULL is 22023');
SELECT throws_ok(format('SELECT buzz.ban_pubkey(%L, %L, NULL, NULL, NULL)', :'c', pg_temp.pk(6)),
                 '22023', 'p_spare_admins must be true or false', 'ban_pubkey: p_spare_admins NULL is 22023');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(6), 'admin')$$,
                           'in the end: the owner and the admin no delegate could reach');
SELECT pg_temp.list_is_members(:'c', '... and the live list names exactly them');

SELECT * FROM finish();
ROLLBACK;
