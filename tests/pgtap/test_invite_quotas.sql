-- Invite quotas (SPEC section 3, amended 2026-12-02):
--   buzz.set_invite_quota(p_community uuid, p_role text, p_quota integer) -> text
--   buzz.invites_left(p_community uuid, p_pubkey text) -> integer
--   buzz.invite_quotas(p_community uuid) -> TABLE(role text, quota integer)
-- and create_relay_invite's BZQTA. The defaults (admin no limit, member 0, the owner never
-- limited); updated / unchanged; what invites_left counts (members brought in who are still
-- members, uses left on live invites; not expired, used-up or revoked invites, nor members
-- who left; an unlimited live invite takes everything; never below 0; a non-member 0); BZQTA
-- for no invites left, for more uses than left and for unlimited uses, never for a label;
-- argument errors first (BZIRL, 22023, BZIPK, BZINV, BZNCM, BZARC); no list; who may call them.
-- The quota lock under concurrency is pytest's (tests/python/test_quota_concurrency.py).
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.invite(p_created_by text, p_max_uses integer DEFAULT 1) RETURNS text
LANGUAGE sql
BEGIN ATOMIC
    SELECT i.code FROM buzz.create_relay_invite(
        (SELECT c.community_id FROM buzz_private.communities c WHERE c.host = 'relay.example.org'),
        p_created_by, p_max_uses) i;
END;
CREATE FUNCTION pg_temp.quotas(p_community uuid) RETURNS TABLE (role text, quota integer)
LANGUAGE sql
BEGIN ATOMIC
    SELECT q.role, q.quota FROM buzz.invite_quotas(p_community) q;
END;

SELECT plan(82);

SELECT function_returns('buzz', 'set_invite_quota', ARRAY['uuid', 'text', 'integer'], 'text',
                        'set_invite_quota returns text');
SELECT function_returns('buzz', 'invites_left', ARRAY['uuid', 'text'], 'integer',
                        'invites_left returns integer');
SELECT function_returns('buzz', 'invite_quotas', ARRAY['uuid'], 'setof record',
                        'invite_quotas returns a table');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2)) AS setup_2 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(3), 'admin') AS setup_3 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- The defaults
SELECT results_eq(format('SELECT * FROM pg_temp.quotas(%L)', :'c'),
                  $$VALUES ('admin', NULL::integer), ('member', 0)$$,
                  'by default admins have no limit and members no invites');
SELECT is_empty(format('SELECT * FROM buzz.invite_quotas(%L)', gen_random_uuid()),
                '... no rows for an unknown community');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(0)), NULL, 'the owner: no limit (NULL)');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(3)), NULL, 'an admin: no limit by default');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 0, 'a member: none by default');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(9)), 0, 'a non-member: 0');
SELECT is(buzz.invites_left(gen_random_uuid(), pg_temp.pk(0)), 0, '... and in an unknown community');
SELECT is(buzz.invites_left(NULL, pg_temp.pk(0)), 0, '... and with a NULL community');
SELECT throws_ok(format('SELECT buzz.invites_left(%L, %L)', :'c', 'nope'), 'BZIPK', NULL,
                 'invites_left of a malformed pubkey: BZIPK');
SELECT is(buzz.invites_left(:'c', NULL), 0, 'a NULL pubkey names nobody: 0');

-- create_relay_invite by a member without invites
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(1)),
                 'BZQTA', 'p_created_by has no invites left in this community',
                 'a member with no invites left: BZQTA');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(9)),
                 'BZQTA', 'p_created_by is not a member of this community, so it has no invites',
                 'a pubkey that is no member: BZQTA');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, NULL)', :'c', 'buzz-admin'),
                'a label (an operator''s invite) has no quota, unlimited uses included');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, NULL)', :'c', upper(pg_temp.pk(0))),
                'nor has the owner (named in uppercase)');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, 10000)', :'c', pg_temp.pk(3)),
                'nor, by default, an admin');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(0)), NULL, '... and they stay unlimited');

-- set_invite_quota: updated / unchanged
SELECT is(buzz.set_invite_quota(:'c', 'member', 0), 'unchanged', 'member 0 is the default: unchanged');
SELECT is(buzz.set_invite_quota(:'c', 'member', 3), 'updated', 'member 3: updated');
SELECT is(buzz.set_invite_quota(:'c', 'member', 3), 'unchanged', '... again: unchanged');
SELECT is(buzz.set_invite_quota(:'c', 'admin', NULL), 'unchanged', 'admin NULL is the default: unchanged');
SELECT is(buzz.set_invite_quota(:'c', 'admin', 1), 'updated', 'admin 1: updated');
SELECT results_eq(format('SELECT * FROM pg_temp.quotas(%L)', :'c'),
                  $$VALUES ('admin', 1), ('member', 3)$$, 'invite_quotas shows them');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(3)), 0,
          'the admin''s live invite of 10000 uses is more than its quota now: 0, never below');
SELECT is(buzz.set_invite_quota(:'c', 'admin', NULL), 'updated', 'admin back to no limit: updated');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(3)), NULL, '... unlimited again');
SELECT results_eq(format('SELECT * FROM pg_temp.quotas(%L)', :'c'),
                  $$VALUES ('admin', NULL::integer), ('member', 3)$$, '... as invite_quotas shows');
SELECT ok(NOT pg_temp.marked(), 'quotas and invites are no membership write: no list owed');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 3, 'a member with quota 3 and nothing used: 3');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(0)), NULL, 'the owner has no quota whatever is set');

-- What invites_left counts
SELECT pg_temp.invite(pg_temp.pk(1)) AS one_use \gset
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 2, 'an invite of one use takes one');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, 3)', :'c', pg_temp.pk(1)),
                 'BZQTA', 'p_created_by has 2 invites left in this community; p_max_uses asks for 3',
                 'asking for more uses than left: BZQTA, with how many are left');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, NULL)', :'c', pg_temp.pk(1)),
                 'BZQTA', 'p_created_by has 2 invites left in this community; p_max_uses asks for unlimited uses',
                 'asking for unlimited uses with a quota: BZQTA');
SELECT pg_temp.invite(pg_temp.pk(1), 2) AS two_uses \gset
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 0, 'an invite of the two uses left takes them');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'c', pg_temp.pk(1)),
                 'BZQTA', NULL, '... and one more is refused');
SELECT is((SELECT count(*)::integer FROM buzz.relay_invites(:'c') i WHERE i.created_by = pg_temp.pk(1)), 2,
          '... which made no invite');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', :'two_uses', pg_temp.pk(10)) x), 'joined',
          'a claim of its invite ...');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 0,
          '... turns a use left into a member brought in: still 0');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', :'two_uses', pg_temp.pk(11)) x), 'joined',
          'the other use claimed too: the invite is used up');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(11)), 'removed', 'a member it brought in leaves ...');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 1, '... and no longer counts: 1');
SELECT is(buzz.revoke_relay_invite(:'c', (SELECT i.invite_id FROM buzz.relay_invites(:'c') i
                                          WHERE i.created_by = pg_temp.pk(1) AND i.use_count = 0)),
          'revoked', 'its one-use invite revoked ...');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 2, '... gives its use back: 2');
SELECT pg_temp.invite(pg_temp.pk(1)) AS later \gset
UPDATE buzz_private.relay_invites i SET expires_at = now() - interval '1 second'
WHERE i.community_id = :'c' AND i.code_sha256 = sha256(convert_to(:'later', 'UTF8'));
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 2, 'an expired invite counts no use');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(12), 'member', upper(pg_temp.pk(1))), 'added',
          'a member added by an admin naming it as added_by ...');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 1, '... is a member it brought in: 1');
SELECT is(buzz.invites_left(:'c', upper(pg_temp.pk(1))), 1, 'the pubkey may be given in uppercase');
SELECT is(buzz.set_invite_quota(:'c', 'member', 1), 'updated', 'the quota lowered to 1 ...');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 0, '... leaves it none (two brought in): 0, never below');
SELECT is(buzz.set_invite_quota(:'c', 'member', NULL), 'updated', 'members unlimited: updated');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(2)), NULL, '... invites_left is NULL for a member');
SELECT lives_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, NULL)', :'c', pg_temp.pk(2)),
                '... who may make an unlimited invite');
SELECT is(buzz.set_invite_quota(:'c', 'member', 5), 'updated', 'members back to 5 ...');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(2)), 0, '... a live unlimited invite takes them all');
SELECT is(buzz.update_relay_member_role(:'c', pg_temp.pk(2), 'admin'), 'updated', 'made an admin ...');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(2)), NULL, '... its quota is the admins'': no limit');

-- Argument errors, before any outcome and before BZQTA
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', :'c', 'owner'), 'BZIRL', NULL,
                 'the owner has no quota to set: BZIRL');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', :'c', 'Member'), 'BZIRL', NULL,
                 'Member (not a base role as spelled): BZIRL');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, NULL, 1)', :'c'), 'BZIRL', NULL,
                 'a NULL role: BZIRL');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', :'c', 'moderator'), 'BZIRL', NULL,
                 'a defined role has no quota: BZIRL');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, -1)', :'c', 'member'), '22023', NULL,
                 'a negative quota: 22023');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, -1)', gen_random_uuid(), 'owner'), 'BZIRL', NULL,
                 'the role is checked first, whatever the community');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', gen_random_uuid(), 'member'), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(NULL, %L, 1)', 'member'), 'BZNCM', NULL,
                 'a NULL community: BZNCM');
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', :'archived', 'member'), 'BZARC', NULL,
                 'an archived community: BZARC');
SELECT is(buzz.set_invite_quota(:'c', 'member', 0), 'updated', 'members back to none');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L, 0)', :'c', pg_temp.pk(1)), 'BZINV', NULL,
                 'uses out of range by a member without invites: BZINV first');
SELECT throws_ok(format('SELECT * FROM buzz.create_relay_invite(%L, %L)', :'archived', pg_temp.pk(1)), 'BZARC', NULL,
                 'a member of an archived community: BZARC first');
SELECT results_eq(format('SELECT * FROM pg_temp.quotas(%L)', :'c'),
                  $$VALUES ('admin', NULL::integer), ('member', 0)$$,
                  'the refused calls changed nothing');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.set_invite_quota(:'c', 'member', 2), 'updated', 'buzz_writer may set a quota');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(1)), 0, '... and read what is left');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT buzz.set_invite_quota(%L, %L, 1)', :'c', 'member'), '42501', NULL,
                 'buzz_reader may not set a quota');
SELECT is(buzz.invites_left(:'c', pg_temp.pk(0)), NULL, '... but may read what is left');
SELECT results_eq(format('SELECT * FROM pg_temp.quotas(%L)', :'c'),
                  $$VALUES ('admin', NULL::integer), ('member', 2)$$, '... and the quotas');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_quotas NOLOGIN;
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_quotas;
SET LOCAL ROLE buzz_pgtap_nobody_quotas;
SELECT throws_ok(format('SELECT buzz.invites_left(%L, %L)', :'c', pg_temp.pk(0)), '42501', NULL,
                 'a role without grants may not read invites_left');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
