-- buzz.claim_relay_membership(p_community uuid, p_pubkey text,
--                             p_policy_version text DEFAULT NULL) -> text
-- Outcomes joined / already_member / banned (before already_member, recording nothing), the
-- policy acceptance recorded in the first two, the members and the live list after each,
-- argument errors (BZIPK, 22023, BZNCM, BZARC) and who may call it.
-- BZISO is covered by pytest: this suite runs in one READ COMMITTED transaction, whose
-- isolation level can no longer change once the fixtures have run.
BEGIN;
\ir lib/fixtures.sql

-- The policy versions a pubkey accepted in a community.
CREATE FUNCTION pg_temp.accepted(p_community uuid, p_pubkey text) RETURNS text[]
LANGUAGE sql
RETURN (SELECT coalesce(array_agg(a.policy_version ORDER BY a.policy_version), '{}')
        FROM buzz_private.policy_acceptances a
        WHERE a.community_id = p_community AND a.pubkey = p_pubkey);

SELECT plan(55);

SELECT function_returns('buzz', 'claim_relay_membership', ARRAY['uuid', 'text', 'text'],
                        'text', 'claim_relay_membership returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- joined, without a policy version
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(1)), 'joined', 'a new pubkey joins');
SELECT results_eq(
    format($$SELECT m.role, m.added_by FROM buzz.relay_members(%L) m
             WHERE m.pubkey = pg_temp.pk(1)$$, :'c'),
    $$VALUES ('member', 'claim')$$, '... as member, added_by claim');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(1)), '{}'::text[],
          '... no policy acceptance is recorded without a version');
SELECT ok(pg_temp.marked(), '... and the community owes a new list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1))$$,
                          '... one list and one 8000 for the new member');
SELECT is(pg_temp.flush(), 2, 'publishing writes those two events');
SELECT pg_temp.list_is_members(:'c', 'the live list names exactly the members');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- joined, uppercase, with a policy version
SELECT is(buzz.claim_relay_membership(:'c', upper(pg_temp.pk(2)), 'v1'), 'joined',
          'an uppercase pubkey joins with a policy version');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member')$$,
    '... stored lowercased');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(2)), ARRAY['v1'],
          '... its acceptance of v1 is recorded under the lowercased pubkey');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(2))$$,
                          '... one list and one 8000');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT pg_temp.list_is_members(:'c', '... the live list names it');

-- already_member: no member change, the acceptance is still recorded
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(2), 'v2'), 'already_member',
          'a member claiming again answers already_member');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(2)), ARRAY['v1', 'v2'],
          '... and its acceptance of v2 is recorded too');
SELECT is(buzz.claim_relay_membership(:'c', upper(pg_temp.pk(2)), 'v2'), 'already_member',
          'the same acceptance again answers already_member');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(2)), ARRAY['v1', 'v2'],
          '... and is kept once');
SELECT lives_ok(format('SELECT buzz.add_relay_member(%L, %L, %L)', :'c', pg_temp.pk(3), 'admin'),
                'an admin is added (setup)');
SELECT is(pg_temp.flush(), 2, '... published (setup)');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(3), repeat('v', 64)), 'already_member',
          'an admin claiming answers already_member');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(0)), 'already_member',
          'the owner claiming answers already_member');
SELECT pg_temp.members_are(:'c',
    $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'), (pg_temp.pk(2), 'member'),
             (pg_temp.pk(3), 'admin')$$,
    '... the admin and the owner keep their roles');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(3)), ARRAY[repeat('v', 64)],
          'a policy version of 64 characters is recorded');
SELECT ok(NOT pg_temp.marked(), 'already_member owes no list, acceptance or not');

-- banned: no member, no acceptance, no list
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(7), 'spam'), 'banned', 'a stranger banned');
SELECT is(buzz.claim_relay_membership(:'c', upper(pg_temp.pk(7)), 'v1'), 'banned',
          'the banned pubkey (in uppercase) claims: banned');
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(7)),
          '... and did not join');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(7)), '{}'::text[], '... no acceptance is recorded');
-- A member who is banned only by direct SQL (bootstrap and transfer ignore bans).
INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey) VALUES (:'c', pg_temp.pk(1));
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(1), 'v3'), 'banned',
          'a banned member claims: banned comes before already_member');
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(1)), '{}'::text[], '... no acceptance is recorded');
DELETE FROM buzz_private.banned_pubkeys WHERE community_id = :'c' AND pubkey = pg_temp.pk(1);
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(7)), 'unbanned', 'the stranger unbanned');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(7)), 'joined', '... claims: joined');
SELECT is(pg_temp.flush(), 2, '... published');

-- argument errors, also where the call would otherwise answer already_member
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, NULL)', :'c'),
                 'BZIPK', NULL, 'a NULL pubkey raises BZIPK');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L)', :'c', left(pg_temp.pk(4), 63)),
                 'BZIPK', NULL, 'a pubkey of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L)', :'c', repeat('z', 64)),
                 'BZIPK', NULL, 'a pubkey with non-hex characters raises BZIPK');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)', :'c', pg_temp.pk(4), ''),
                 '22023', NULL, 'an empty policy version raises 22023');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)',
                        :'c', pg_temp.pk(4), repeat('v', 65)),
                 '22023', NULL, 'a policy version of 65 characters raises 22023');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)',
                        :'c', pg_temp.pk(4), E'v1\n'),
                 '22023', NULL, 'a policy version with a control character raises 22023');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)',
                        :'c', pg_temp.pk(1), repeat('v', 65)),
                 '22023', NULL, '... also for a member (before already_member)');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(NULL, %L)', pg_temp.pk(4)),
                 'BZNCM', NULL, 'a NULL community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L)', gen_random_uuid(), pg_temp.pk(4)),
                 'BZNCM', NULL, 'an unknown community raises BZNCM');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)',
                        :'archived', pg_temp.pk(4), 'v1'),
                 'BZARC', NULL, 'claiming in an archived community raises BZARC');
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L, %L)',
                        :'archived', pg_temp.pk(0), 'v1'),
                 'BZARC', NULL, '... even for its member (before already_member)');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(4))
          AND pg_temp.accepted(:'c', pg_temp.pk(4)) = '{}'
          AND pg_temp.accepted(:'archived', pg_temp.pk(0)) = '{}'
          AND pg_temp.accepted(:'c', pg_temp.pk(1)) = '{}'
          AND NOT pg_temp.marked(),
          'the failed calls added nobody, recorded no acceptance and owe no list');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.claim_relay_membership(uuid, text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'claim_relay_membership calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(5), 'v1'), 'joined',
          'buzz_writer may claim a membership');
SELECT is(pg_temp.flush(), 2, '... and publish its list');
RESET ROLE;
SELECT is(pg_temp.accepted(:'c', pg_temp.pk(5)), ARRAY['v1'], '... with its acceptance');
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'buzz_reader may not claim a membership');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_claim_relay_membership NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_claim_relay_membership;
SET LOCAL ROLE buzz_pgtap_nobody_claim_relay_membership;
SELECT throws_ok(format('SELECT buzz.claim_relay_membership(%L, %L)', :'c', pg_temp.pk(6)),
                 '42501', NULL, 'a role without grants may not claim a membership');
RESET ROLE;

SELECT pg_temp.list_is_members(:'c', 'in the end the live list names exactly the members');

SELECT * FROM finish();
ROLLBACK;
