-- buzz.revoke_relay_invite(p_community uuid, p_invite_id uuid) -> text
-- Outcomes revoked / not_found, the revoked code turning invalid, invites of another
-- community, archived communities (revoking works there), BZNCM, no membership change, and
-- who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(20);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT invite_id AS inv, code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 3) \gset
SELECT invite_id AS inv_other, code AS code_other FROM buzz.create_relay_invite(:'other', pg_temp.pk(0)) \gset

SELECT is((SELECT c.outcome FROM buzz.claim_relay_invite(:'c', :'code', pg_temp.pk(1)) c), 'joined',
          'the code works before it is revoked');
SELECT is(pg_temp.flush(), 2, '... the join is published');
SELECT is(buzz.revoke_relay_invite(:'c', :'inv'), 'revoked', 'revoke: revoked');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_invites i WHERE i.invite_id = :'inv'),
          '... the invite is gone');
SELECT results_eq(format('SELECT * FROM buzz.claim_relay_invite(%L, %L, %L)', :'c', :'code', pg_temp.pk(2)),
                  $$VALUES ('invalid', NULL::integer, NULL::integer)$$,
                  '... its code is invalid from then on');
SELECT ok(EXISTS (SELECT FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(1)),
          '... whoever joined with it stays a member');
SELECT ok(NOT pg_temp.marked(), '... revoking is not a membership write: no list owed');
SELECT is(buzz.revoke_relay_invite(:'c', :'inv'), 'not_found', 'revoked twice: not_found');
SELECT is(buzz.revoke_relay_invite(:'c', gen_random_uuid()), 'not_found', 'an unknown invite: not_found');
SELECT is(buzz.revoke_relay_invite(:'c', NULL), 'not_found', 'a NULL invite: not_found');
SELECT is(buzz.revoke_relay_invite(:'c', :'inv_other'), 'not_found',
          'the invite of another community: not_found');
SELECT results_eq(format('SELECT c.outcome FROM buzz.claim_relay_invite(%L, %L, %L) c',
                         :'other', :'code_other', pg_temp.pk(2)),
                  $$VALUES ('joined')$$, '... and it still works there');
SELECT is(pg_temp.flush(), 2, '... published');

-- Archived
SELECT invite_id AS inv2 FROM buzz.create_relay_invite(:'other', pg_temp.pk(0)) \gset
SELECT is(buzz.archive_community(:'other'), 'archived', 'the other community is archived');
SELECT is(buzz.revoke_relay_invite(:'other', :'inv2'), 'revoked', '... revoking works on an archived community');

-- The community
SELECT throws_ok(format('SELECT buzz.revoke_relay_invite(%L, %L)', gen_random_uuid(), :'inv'),
                 'BZNCM', NULL, 'an unknown community: BZNCM');
SELECT throws_ok(format('SELECT buzz.revoke_relay_invite(NULL, %L)', :'inv'),
                 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT is(pg_temp.guard(), NULL, 'the commit guard passes');

-- Who may call it
SELECT invite_id AS inv3 FROM buzz.create_relay_invite(:'c', pg_temp.pk(0)) \gset
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.revoke_relay_invite(%L, %L)', :'c', :'inv3'),
                 '42501', NULL, 'buzz_reader may not revoke');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.revoke_relay_invite(:'c', :'inv3'), 'revoked', 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
