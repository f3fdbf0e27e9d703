-- buzz.ban_pubkey(p_community uuid, p_pubkey text, p_reason text DEFAULT NULL,
--                 p_banned_by text DEFAULT NULL, p_spare_admins boolean DEFAULT false) -> text
-- (p_spare_admins: test_delegates_spare_admins)
-- Outcomes banned (a member is removed: an 8001 and a new list; a non-member is banned
-- without a list), already_banned (the first reason and banner kept), is_owner (nothing
-- changes); a pending join request dropped; the ban keeping the pubkey out of every path
-- that joins by itself; add_relay_member lifting it, whatever its outcome; p_reason (at most
-- 1000 characters, line breaks allowed, no other control character) and p_banned_by bounds;
-- BZIPK, 22023, BZNCM, BZARC with nothing changed; and who may call it. BZISO is covered by
-- pytest: this suite runs in one READ COMMITTED transaction.
BEGIN;
\ir lib/fixtures.sql

-- The bans of a community as (pubkey, reason, banned_by).
CREATE FUNCTION pg_temp.bans(p_community uuid) RETURNS TABLE (pubkey text, reason text, banned_by text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT b.pubkey, b.reason, b.banned_by FROM buzz.banned_pubkeys(p_community) b;
END;
CREATE FUNCTION pg_temp.bans_are(p_community uuid, p_expected text, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN set_eq(format('SELECT * FROM pg_temp.bans(%L)', p_community), p_expected,
                          p_description); END $$;
CREATE FUNCTION pg_temp.is_banned(p_community uuid, p_pubkey text) RETURNS boolean LANGUAGE sql
RETURN EXISTS (SELECT FROM buzz.banned_pubkeys(p_community) b WHERE b.pubkey = p_pubkey);
CREATE FUNCTION pg_temp.ban_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.ban_pubkey(%s)', p_args), p_code, NULL, p_description);

SELECT plan(78);

SELECT function_returns('buzz', 'ban_pubkey', ARRAY['uuid', 'text', 'text', 'text', 'boolean'], 'text',
                        'ban_pubkey returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(3)) AS setup_3 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_4 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- banned: a member is removed
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(1), E'Spam,\nmore spam', pg_temp.pk(0)), 'banned',
          'a member banned: banned');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(2), 'admin'), (pg_temp.pk(3), 'member')$$,
    '... and is no longer a member');
SELECT ok(pg_temp.marked(), '... the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(1))$$,
                          '... one list and an 8001 for the banned member');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');
SELECT pg_temp.bans_are(:'c', $$VALUES (pg_temp.pk(1), E'Spam,\nmore spam', pg_temp.pk(0))$$,
                        '... the ban is kept with its reason (line break included) and who banned');
SELECT ok((SELECT b.banned_at = now() FROM buzz.banned_pubkeys(:'c') b WHERE b.pubkey = pg_temp.pk(1)),
          '... and when');

SELECT is(buzz.ban_pubkey(:'c', upper(pg_temp.pk(2)), NULL, 'moderation-bot'), 'banned',
          'an admin banned, named in uppercase');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8001, pg_temp.pk(2))$$,
                          '... one list and an 8001 naming the lowercased pubkey');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names exactly the members');
SELECT ok(pg_temp.is_banned(:'c', pg_temp.pk(2)), '... banned under the lowercased pubkey');

-- banned: a stranger, without a list
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(4)), 'banned', 'a stranger banned: banned');
SELECT ok(NOT pg_temp.marked(), '... no member changed: no list owed');
SELECT pg_temp.bans_are(:'c',
    $$VALUES (pg_temp.pk(1), E'Spam,\nmore spam', pg_temp.pk(0)), (pg_temp.pk(2), NULL, 'moderation-bot'),
             (pg_temp.pk(4), NULL, NULL)$$,
    '... kept without reason or banner');

-- already_banned keeps the first
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(1), 'another reason', 'someone-else'), 'already_banned',
          'banning again: already_banned');
SELECT is(buzz.ban_pubkey(:'c', upper(pg_temp.pk(4)), 'now with a reason'), 'already_banned',
          '... also in uppercase');
SELECT pg_temp.bans_are(:'c',
    $$VALUES (pg_temp.pk(1), E'Spam,\nmore spam', pg_temp.pk(0)), (pg_temp.pk(2), NULL, 'moderation-bot'),
             (pg_temp.pk(4), NULL, NULL)$$,
    '... the first reason and banner are kept');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- is_owner
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(0), 'mutiny'), 'is_owner', 'banning the owner: is_owner');
SELECT is(buzz.ban_pubkey(:'c', upper(pg_temp.pk(0))), 'is_owner', '... also in uppercase');
SELECT ok(NOT pg_temp.is_banned(:'c', pg_temp.pk(0)), '... the owner is not banned');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(3), 'member')$$,
                           '... and stays owner');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- A pending join request is dropped
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'the community takes requests');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(5), repeat('a', 64), 'let me in'), 'requested',
          'a stranger asks to join');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(5)), 'banned', '... and is banned');
SELECT is_empty(format('SELECT * FROM buzz.join_requests(%L)', :'c'), '... the request is gone');
SELECT is(buzz.approve_join_request(:'c', repeat('a', 64), pg_temp.pk(0)), 'not_found',
          '... so it cannot be approved');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- A banned pubkey cannot come back by itself
SELECT code AS code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 5) \gset
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', :'code', pg_temp.pk(1)) x), 'banned',
          'a banned pubkey claiming an invite: banned');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(1)), 'banned', '... claiming a membership: banned');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), repeat('b', 64)), 'banned', '... asking to join: banned');
SELECT is(buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2)]), 0, '... a batch skips them');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(3), 'member')$$,
                           '... nobody came back');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- add_relay_member lifts a ban
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1), 'member', pg_temp.pk(0)), 'added',
          'an explicit add of a banned pubkey: added');
SELECT ok(NOT pg_temp.is_banned(:'c', pg_temp.pk(1)), '... and the ban is lifted');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1))$$, '... a list and an 8000');
SELECT is(pg_temp.flush(), 2, '... published');
-- A member who is banned only by direct SQL (bootstrap and transfer ignore bans).
INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey) VALUES (:'c', pg_temp.pk(3));
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'already_member',
          'an explicit add of a banned member: already_member');
SELECT ok(NOT pg_temp.is_banned(:'c', pg_temp.pk(3)), '... lifts the ban too');
SELECT throws_ok(format('SELECT buzz.add_relay_member(%L, %L, %L)', :'c', pg_temp.pk(4), 'owner'),
                 'BZIRL', NULL, 'a refused add (role owner) ...');
SELECT ok(pg_temp.is_banned(:'c', pg_temp.pk(4)), '... lifts nothing');

-- Added and banned in one transaction: nothing to announce
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(6)), 'added', 'a pubkey added ...');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(6)), 'banned', '... and banned before prepare');
SELECT is((SELECT count(*)::integer FROM pg_temp.events() e WHERE e.kind <> 13534), 0,
          '... gets neither 8000 nor 8001');
SELECT is(pg_temp.flush(), 1, '... the list is written again');
SELECT pg_temp.list_is_members(:'c', '... and names exactly the members');

-- p_reason and p_banned_by
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(7), repeat('r', 1000), repeat('b', 64)), 'banned',
          'a reason of 1000 characters and a banner of 64');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(8), '', upper(pg_temp.pk(0))), 'banned',
          'an empty reason, a banner pubkey in uppercase');
SELECT results_eq(format('SELECT b.reason, b.banned_by FROM buzz.banned_pubkeys(%L) b WHERE b.pubkey = %L',
                         :'c', pg_temp.pk(8)),
                  format('VALUES (NULL::text, %L)', pg_temp.pk(0)),
                  '... stored as no reason and the lowercased pubkey');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(9), $$'; DELETE FROM buzz_private.banned_pubkeys; --$$,
                          'Robert''); --'),
          'banned', 'a reason and a banner shaped like SQL');
SELECT results_eq(format('SELECT b.reason, b.banned_by FROM buzz.banned_pubkeys(%L) b WHERE b.pubkey = %L',
                         :'c', pg_temp.pk(9)),
                  $$VALUES ($x$'; DELETE FROM buzz_private.banned_pubkeys; --$x$, $x$Robert'); --$x$)$$,
                  '... are data, stored verbatim');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.pk(10), repeat('r', 1001)), '22023',
                          'a reason of 1001 characters: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.pk(10), E'bell\x07'), '22023',
                          'a reason with a control character: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.pk(10), U&'nel\0085'), '22023',
                          'a reason with a C1 control: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, NULL, %L', :'c', pg_temp.pk(10), repeat('b', 65)), '22023',
                          'a banner of 65 characters: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, NULL, %L', :'c', pg_temp.pk(10), ''), '22023',
                          'an empty banner: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, NULL, %L', :'c', pg_temp.pk(10), E'a\nb'), '22023',
                          'a banner with a line break: 22023');
SELECT pg_temp.ban_throws(format('%L, %L, %L', :'c', pg_temp.pk(3), repeat('r', 1001)), '22023',
                          '... also for a member, who stays');

-- p_pubkey and the community
SELECT pg_temp.ban_throws(format('%L, NULL', :'c'), 'BZIPK', 'a NULL pubkey: BZIPK');
SELECT pg_temp.ban_throws(format('%L, %L', :'c', left(pg_temp.pk(10), 63)), 'BZIPK', 'a pubkey of 63 characters: BZIPK');
SELECT pg_temp.ban_throws(format('%L, %L', :'c', 'npub1' || repeat('q', 58)), 'BZIPK', 'an npub: BZIPK');
SELECT pg_temp.ban_throws(format('%L, %L', gen_random_uuid(), pg_temp.pk(10)), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.ban_throws(format('NULL, %L', pg_temp.pk(10)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.ban_throws(format('%L, %L', :'archived', pg_temp.pk(1)), 'BZARC', 'an archived community: BZARC');
SELECT pg_temp.members_are(:'archived', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           '... whose member stays');
SELECT ok(NOT pg_temp.is_banned(:'c', pg_temp.pk(10)) AND NOT pg_temp.is_banned(:'archived', pg_temp.pk(1))
          AND pg_temp.is_banned(:'c', pg_temp.pk(4)) AND NOT pg_temp.marked()
          AND EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(3)),
          'the refused calls banned and removed nobody and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.ban_pubkey(uuid, text, text, text, boolean)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'ban_pubkey calls buzz_private.require_read_committed (BZISO)');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(3)), 'banned', 'buzz_writer may ban a member');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.ban_throws(format('%L, %L', :'c', pg_temp.pk(1)), '42501', 'buzz_reader may not ban');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_ban_pubkey NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_ban_pubkey;
SET LOCAL ROLE buzz_pgtap_nobody_ban_pubkey;
SELECT pg_temp.ban_throws(format('%L, %L', :'c', pg_temp.pk(1)), '42501', 'a role without grants may not ban');
RESET ROLE;
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member')$$,
                           'in the end the member refused to the others is still there');
SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
